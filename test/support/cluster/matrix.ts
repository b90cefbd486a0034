// The Services the truth test creates through the API, one feature each (several at once in
// "kitchen"), over two Deployments: web (2 Pods, http 80 and 8443 named, dns-ish UDP 5353,
// SCTP 9000) and the Pods of a StatefulSet-like lone Pod per node (local).
import { deployment as app, manifest, namespace, service as svc } from './objects.js';

export const MATRIX_NAMESPACE = 'matrix';

const MATRIX_PORTS = [
  '{name: https, containerPort: 8443}',
  '{name: udp, containerPort: 5353, protocol: UDP}',
  '{name: sctp, containerPort: 9000, protocol: SCTP}',
];
const deployment = (name: string, replicas: number, node?: string) =>
  app(MATRIX_NAMESPACE, name, {
    replicas,
    node,
    ports: MATRIX_PORTS,
    grace: 600,
    readinessPort: 'http',
  });
const service = (name: string, spec: string) => svc(MATRIX_NAMESPACE, name, spec);

const web = 'selector: {app: web}';
const http = 'ports: [{name: http, port: 80, targetPort: http}]';

export const MATRIX_OBJECTS = manifest(
  namespace(MATRIX_NAMESPACE),
  deployment('web', 2),
  // one Pod, pinned to the first node: local endpoints there, none elsewhere
  deployment('solo', 1, 'node-a'),
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
);

/** LoadBalancer Services and the ingress IP the test writes on their status (no cloud here). */
export const LB_INGRESS: Record<string, string> = {
  lb: '198.51.100.20',
  'lb-local': '198.51.100.21',
  'lb-local-empty': '198.51.100.22',
  kitchen: '198.51.100.23',
};
