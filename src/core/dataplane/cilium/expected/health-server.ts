// The health server's frontends Cilium's agent makes (1.18 on), modelled on its health server
// (pkg/loadbalancer/healthserver/healthserver.go, controlLoop): for a Service with
// externalTrafficPolicy Local and a healthCheckNodePort it answers load balancers' health checks
// on that port of the node, and with enable-health-check-loadbalancer-ip also on the Service's
// LoadBalancer IP, through a Service of its own ("ns/name:healthserver") whose one backend is the
// node's NodePort address at that port.
import type { Service } from '../../../kube/objects.js';
import { familyOf, ipv6 } from '../../../ipv6.js';
import { ipv4 } from '../../../ipv4.js';
import type { CiliumExpectOptions, CiliumNode, ExpectedFrontend } from './expected.js';
import { nodePortConflict } from '../agent/node-port-range.js';
import { knows } from '../agent/agent.js';

/** The health server's own Service is its Service's name with this after it (1.18 on). */
const SUFFIX = ':healthserver';
/** Before 1.18 (pkg/service) it was "ns/name-healthCheck", a name no Kubernetes object can have. */
const OLD_SUFFIX = '-healthCheck';

/** The Service ("ns/name") whose health checks a frontend of the agent's own answers, or
 * undefined where the frontend is no health server's. */
export function healthServerOf(service: string | undefined): string | undefined {
  for (const s of [SUFFIX, OLD_SUFFIX])
    if (service?.endsWith(s) && service.includes('/')) return service.slice(0, -s.length);
  return undefined;
}

/** Kubernetes gives it a health check node port, which the agent answers on (without the
 * LoadBalancer IPs, on its node addresses only: no frontend of its own). */
export const healthChecked = (svc: Service) =>
  svc.type === 'LoadBalancer' && svc.externalTrafficPolicy === 'Local' && !!svc.healthCheckNodePort;

/** The health server's frontends of `svc`, from the LoadBalancer frontends the agent holds for it
 * (`loadBalancers`); none where the node's NodePort addresses are not known (its backend is one). */
export function healthServerFrontends(
  svc: Service,
  loadBalancers: readonly Pick<ExpectedFrontend, 'ip' | 'type' | 'internal'>[],
  node: CiliumNode,
  o: CiliumExpectOptions,
): ExpectedFrontend[] {
  // its options not known (a refused cilium-config), none is expected (comparable.ts says why)
  if (!knows(o, 'healthCheckNodePort') || !knows(o, 'healthCheckLoadBalancerIP')) return [];
  if (!o.kubeProxyReplacement || !o.healthCheckNodePort || !o.healthCheckLoadBalancerIP) return [];
  if (!healthChecked(svc) || node.nodePortAddresses === undefined) return [];
  const port = svc.healthCheckNodePort!;
  // the in-cluster scope's frontends are skipped: clients inside need no health check
  const seen = [
    ...new Set(
      loadBalancers.filter((f) => f.type === 'LoadBalancer' && !f.internal).map((f) => f.ip),
    ),
  ];
  // 1.20 drops one on a NodePort address, and with it the one it replaces: seen last, it leaves none
  const ips = seen.filter((ip) => !nodePortConflict({ ip, port, type: 'LoadBalancer' }, node, o));
  const orNone = ips.length < seen.length;
  return ips.map((ip) => ({
    ip,
    port,
    protocol: 'tcp',
    type: 'LoadBalancer',
    service: `${svc.namespace}/${svc.name}${SUFFIX}`,
    portName: '',
    servicePort: port,
    // its Service's policies are both Local, and its backend is this node's
    localOnly: true,
    // the agent writes one frontend a Service, each LoadBalancer IP it sees replacing the last
    ...(seen.length > 1 ? { oneOf: true } : {}),
    ...(orNone ? { orNone: true } : {}),
    backends: [
      {
        ip: nodePortAddress(ip, node.nodePortAddresses!),
        port,
        protocol: 'tcp',
        state: 'active',
        // healthserver.go sets no weight on its backend (v1.20.2): 0, which Maglev reads as even
        weight: 0,
        nodeName: node.name,
      },
    ],
  }));
}

/** The lowest NodePort address of the frontend's family (the node-addresses table's order), else
 * the family's unspecified address. */
function nodePortAddress(frontend: string, addresses: readonly string[]): string {
  const family = familyOf(frontend);
  const value = (ip: string) => (family === 'IPv6' ? ipv6(ip)! : BigInt(ipv4(ip)!));
  const own = addresses.filter((a) => familyOf(a) === family);
  own.sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0));
  return own[0] ?? (family === 'IPv6' ? '::' : '0.0.0.0');
}
