// The API objects the cluster suites create, as YAML for `kubectl apply -f -`: a Namespace, a
// Deployment of lab Pods (each answers HTTP with its name on its TCP ports), a Service.
export const namespace = (name: string, labels = '') =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n${labels ? `  labels: ${labels}\n` : ''}`;

export interface AppOptions {
  replicas?: number;
  /** The readiness check's port (default 80; a port nothing listens on never gets ready). */
  readinessPort?: number | string;
  /** Pin the Pods to one node. */
  node?: string;
  /** Container ports beyond http 80, as YAML flow mappings. */
  ports?: string[];
  /** Seconds a deleted Pod keeps serving (its endpoints terminating meanwhile). */
  grace?: number;
}

export function deployment(ns: string, name: string, o: AppOptions = {}): string {
  const ports = ['{name: http, containerPort: 80}', ...(o.ports ?? [])];
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: ${o.replicas ?? 2}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
${o.grace !== undefined ? `      terminationGracePeriodSeconds: ${o.grace}\n` : ''}${o.node ? `      nodeSelector: {kubernetes.io/hostname: ${o.node}}\n` : ''}      containers:
      - name: app
        image: nginx:1.27
        ports:
${ports.map((p) => `        - ${p}`).join('\n')}
        readinessProbe: {httpGet: {path: /, port: ${o.readinessPort ?? 80}}}
`;
}

/** A Service whose spec is given as YAML lines (indented here). */
export const service = (ns: string, name: string, spec: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;

export const manifest = (...docs: string[]) => docs.join('---\n');
