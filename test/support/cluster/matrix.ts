// The Services the truth test creates through the API, one feature each (several at once in
// "kitchen"), over two Deployments: web (2 Pods, http 80 and 8443 named, dns-ish UDP 5353,
// SCTP 9000) and the Pods of a StatefulSet-like lone Pod per node (local).
export const MATRIX_NAMESPACE = 'matrix';

const deployment = (name: string, replicas: number, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${MATRIX_NAMESPACE}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 600
${extra}      containers:
      - name: app
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        ports:
        - {name: http, containerPort: 80}
        - {name: https, containerPort: 8443}
        - {name: udp, containerPort: 5353, protocol: UDP}
        - {name: sctp, containerPort: 9000, protocol: SCTP}
        readinessProbe:
          httpGet: {path: /, port: http}
`;

const service = (name: string, spec: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${MATRIX_NAMESPACE}}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;

const web = 'selector: {app: web}';
const http = 'ports: [{name: http, port: 80, targetPort: http}]';

export const MATRIX_OBJECTS = [
  `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${MATRIX_NAMESPACE}}\n`,
  deployment('web', 2),
  // one Pod, pinned to the first node: local endpoints there, none elsewhere
  deployment('solo', 1, '      nodeSelector: {kubernetes.io/hostname: node-a}\n'),
  service('cluster-ip', `${web}\n${http}`),
  service(
    'multi-port',
    `${web}\nports:\n- {name: http, port: 80, targetPort: 80}\n- {name: https, port: 443, targetPort: https}\n- {name: udp, port: 53, targetPort: 5353, protocol: UDP}\n- {name: sctp, port: 9000, protocol: SCTP}`,
  ),
  service('node-port', `type: NodePort\n${web}\n${http}`),
  service('external-ip', `${web}\n${http}\nexternalIPs: [203.0.113.10]`),
  service('affinity', `${web}\n${http}\nsessionAffinity: ClientIP`),
  service('lb', `type: LoadBalancer\n${web}\n${http}\nloadBalancerSourceRanges: [198.51.100.0/24]`),
  service(
    'lb-local',
    `type: LoadBalancer\nexternalTrafficPolicy: Local\nselector: {app: solo}\n${http}`,
  ),
  service(
    'np-local',
    `type: NodePort\nexternalTrafficPolicy: Local\nselector: {app: solo}\n${http}`,
  ),
  service('itp-local', `internalTrafficPolicy: Local\nselector: {app: solo}\n${http}`),
  service('no-endpoints', `type: NodePort\nselector: {app: nothing}\n${http}`),
  service(
    'lb-local-empty',
    `type: LoadBalancer\nexternalTrafficPolicy: Local\nselector: {app: nothing}\n${http}`,
  ),
  service(
    'kitchen',
    `type: LoadBalancer\nexternalTrafficPolicy: Local\nsessionAffinity: ClientIP\n${web}\nexternalIPs: [203.0.113.11]\nloadBalancerSourceRanges: [198.51.100.0/25, 192.0.2.0/24]\nports:\n- {name: http, port: 80, targetPort: http}\n- {name: udp, port: 53, targetPort: udp, protocol: UDP}`,
  ),
].join('---\n');

/** LoadBalancer Services and the ingress IP the test writes on their status (no cloud here). */
export const LB_INGRESS: Record<string, string> = {
  lb: '198.51.100.20',
  'lb-local': '198.51.100.21',
  'lb-local-empty': '198.51.100.22',
  kitchen: '198.51.100.23',
};
