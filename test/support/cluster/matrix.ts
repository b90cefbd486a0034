// The Services the truth test creates through the API, one feature each (several at once in
// "kitchen"), over two Deployments: web (2 Pods, http 80 and 8443 named, dns-ish UDP 5353,
// SCTP 9000) and the Pods of a StatefulSet-like lone Pod per node (local).
import type { ClusterClient } from './client.js';
import { deployment as app, manifest, namespace, service as svc } from './objects.js';
import type { Families } from './topology.js';

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

/** Every matrix Service in both families (--families dual): RequireDualStack, and each
 * externalIP and source range with an IPv6 twin (2001:db8::/32, the documentation prefix). */
const dual = (spec: string) =>
  `ipFamilyPolicy: RequireDualStack\n${spec
    .replace(
      /externalIPs: \[([^\]]*)\]/,
      (_, ips: string) => `externalIPs: [${ips}, ${v6twin(ips)}]`,
    )
    .replace(
      /loadBalancerSourceRanges: \[([^\]]*)\]/,
      (_, r: string) => `loadBalancerSourceRanges: [${r}, 2001:db8:5::/64]`,
    )}`;
const v6twin = (ips: string) =>
  ips
    .split(', ')
    .map((ip) => `2001:db8::${ip.split('.').pop()}`)
    .join(', ');

const matrixObjects = (service: (name: string, spec: string) => string) =>
  manifest(
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
    service(
      'lb',
      `type: LoadBalancer\n${web}\n${http}\nloadBalancerSourceRanges: [198.51.100.0/24]`,
    ),
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

export const MATRIX_OBJECTS = matrixObjects(service);
export const DUAL_MATRIX_OBJECTS = matrixObjects((name, spec) => service(name, dual(spec)));

/** LoadBalancer Services and the ingress IP the test writes on their status (no cloud here). */
/** The IPv6 ingress IP of each, in dual-stack. */
export const LB_INGRESS_V6: Record<string, string> = {
  lb: '2001:db8:2::20',
  'lb-local': '2001:db8:2::21',
  'lb-local-empty': '2001:db8:2::22',
  kitchen: '2001:db8:2::23',
};

export const LB_INGRESS: Record<string, string> = {
  lb: '198.51.100.20',
  'lb-local': '198.51.100.21',
  'lb-local-empty': '198.51.100.22',
  kitchen: '198.51.100.23',
};

/** The matrix created on the lab cluster (in both families on a dual-stack one), its load
 * balancers given their addresses, once its three Pods are ready. */
export async function applyMatrix(c: ClusterClient, families: Families = 'ipv4'): Promise<void> {
  const dual = families === 'dual';
  c.kubectl(['apply', '-f', '-'], { input: dual ? DUAL_MATRIX_OBJECTS : MATRIX_OBJECTS });
  c.setIngress(
    MATRIX_NAMESPACE,
    Object.fromEntries(
      Object.entries(LB_INGRESS).map(([name, ip]) => [
        name,
        dual ? [ip, LB_INGRESS_V6[name]!] : [ip],
      ]),
    ),
  );
  await c.until(
    'the matrix Pods ready',
    () => c.readiness(MATRIX_NAMESPACE).filter((r) => r === 'True').length === 3,
    120_000,
  );
}
