// The HostPort frontends Cilium's agent makes from the Pods on its node, modelled on its Pod
// reflector (pkg/loadbalancer/reflectors/k8s.go, upsertHostPort): one synthetic Service per Pod
// and host port, "ns/pod:host-port:PORT:UID", whose backends are the Pod's IPs.
import type { ClusterView, Pod } from '../../../kube/objects.js';
import { familyOf } from '../../../ipv6.js';
import { familyOn } from './families.js';
import type { CiliumExpectOptions, ExpectedBackend, ExpectedFrontend } from './expected.js';
import type { CiliumProtocol } from '../read/listing.js';
import { inNodePortRange } from '../agent/node-port-range.js';
import { DEFAULT_BACKEND_WEIGHT } from './backends.js';

const LOOPBACK = /^(?:127\.|::1$)/;
const UNSPECIFIED = new Set(['0.0.0.0', '::']);

export function hostPortFrontends(
  view: ClusterView,
  node: string,
  o: CiliumExpectOptions,
): ExpectedFrontend[] {
  const out: ExpectedFrontend[] = [];
  for (const pod of view.pods)
    // the reflector writes the Running Pods of its node, not host-network ones; one going keeps
    // what it had (the reflector skips its changes), assumed written before it began to go
    if (
      pod.nodeName === node &&
      pod.phase === 'Running' &&
      !pod.hostNetwork &&
      pod.uid !== undefined
    )
      out.push(...ofPod(pod, pod.uid, o));
  return out;
}

function ofPod(pod: Pod, uid: string, o: CiliumExpectOptions): ExpectedFrontend[] {
  const ips = pod.podIPs.filter((ip) => familyOn(o, ip));
  // one Service per host port: a TCP and a UDP port of one number share it, and its backends
  const byService = new Map<string, ExpectedFrontend[]>();
  const backends = new Map<string, ExpectedBackend[]>();
  // before 1.18.3 each port replaced its host port's Service whole: the last of a number stays
  const ports = o.hostPortLastProtocol
    ? pod.hostPorts.filter((p, i, all) => !all.slice(i + 1).some((q) => q.hostPort === p.hostPort))
    : pod.hostPorts;
  for (const p of ports) {
    // the range not known, each is expected (marked made only with kube-proxy replacement, which
    // is not known either: agent.ts notKnown)
    if (inNodePortRange(p.hostPort, o) === true) continue;
    const protocol = p.protocol.toLowerCase() as CiliumProtocol;
    const service = `${pod.namespace}/${pod.name}:host-port:${p.hostPort}:${uid}`;
    const bes = backends.get(service) ?? [];
    backends.set(service, bes);
    for (const ip of ips)
      bes.push({
        ip,
        port: p.containerPort,
        protocol,
        state: 'active',
        // reflectors/k8s.go gives a host port's backends the default weight
        weight: DEFAULT_BACKEND_WEIGHT,
        ...(pod.nodeName ? { nodeName: pod.nodeName } : {}),
        target: `Pod ${pod.namespace}/${pod.name}`,
      });
    // a hostIP opens that address only (a loopback one through the wildcard surrogate); none or
    // one that is no address, every address of the families its IPs have; an explicit 0.0.0.0
    // or :: none at all (as the code is, whatever its comment says)
    const at = p.hostIP !== undefined && familyOf(p.hostIP) ? p.hostIP : undefined;
    const addresses =
      at === undefined
        ? [...new Set(ips.map((ip) => (familyOf(ip) === 'IPv6' ? '::' : '0.0.0.0')))]
        : UNSPECIFIED.has(at)
          ? []
          : [LOOPBACK.test(at) ? (at.includes(':') ? '::' : '0.0.0.0') : at];
    const fes = byService.get(service) ?? [];
    byService.set(service, fes);
    for (const ip of addresses)
      fes.push({
        ip,
        port: p.hostPort,
        protocol,
        type: 'HostPort',
        service,
        portName: '',
        servicePort: p.hostPort,
        localOnly: false,
        backends: [],
      });
  }
  // each frontend selects its Service's backends of its protocol and family
  return [...byService].flatMap(([service, fes]) =>
    fes.map((fe) => ({
      ...fe,
      backends: (backends.get(service) ?? []).filter(
        (b) => b.protocol === fe.protocol && b.ip.includes(':') === fe.ip.includes(':'),
      ),
    })),
  );
}
