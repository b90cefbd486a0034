// The objects the fault suite creates in namespace "faults", one broken Service each, beside a
// healthy one ("web"): every fault is made through the API or on a node, never in a snapshot.
export const FAULTS_NAMESPACE = 'faults';

const app = (
  name: string,
  o: { replicas?: number; readinessPort?: number; node?: string } = {},
) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${FAULTS_NAMESPACE}}
spec:
  replicas: ${o.replicas ?? 2}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
${o.node ? `      nodeSelector: {kubernetes.io/hostname: ${o.node}}\n` : ''}      containers:
      - name: app
        image: nginx:1.27
        ports: [{name: http, containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: ${o.readinessPort ?? 80}}}
`;

const service = (name: string, spec: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${FAULTS_NAMESPACE}}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;

export const FAULT_OBJECTS = [
  `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${FAULTS_NAMESPACE}}\n`,
  // a namespace whose Pod Security refuses kdebug's privileged debug Pod
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: locked\n  labels: {pod-security.kubernetes.io/enforce: restricted}\n`,
  app('web'),
  app('scaled'),
  // its readiness check asks a port nothing listens on
  app('unready', { replicas: 1, readinessPort: 81 }),
  app('solo', { replicas: 1, node: 'node-a' }),
  service('web', 'selector: {app: web}\nports: [{name: http, port: 80, targetPort: http}]'),
  service('typo', 'selector: {app: wbe}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service('wrong-port', 'selector: {app: web}\nports: [{name: http, port: 80, targetPort: 8081}]'),
  service('unready', 'selector: {app: unready}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service('scaled', 'selector: {app: scaled}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service(
    'local',
    'type: NodePort\nexternalTrafficPolicy: Local\nselector: {app: solo}\nports: [{name: http, port: 80, targetPort: 80}]',
  ),
].join('---\n');
