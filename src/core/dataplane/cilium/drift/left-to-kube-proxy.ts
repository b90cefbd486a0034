// A partial kube-proxy replacement's two sides on one node (agent.ts PartialReplacement): on a
// Cilium node (no kube-proxy Pod there, nor kube-proxy's answer observed) the Service kinds the
// agent leaves to kube-proxy have nothing known to serve them; on a kube-proxy node the kinds the
// agent serves need no rule of kube-proxy's, so a missing one is no drift.
import { read, seen } from '../../../findings/evidence.js';
import type { Evidence } from '../../../model.js';
import {
  servicePortName,
  type ClusterView,
  type Service,
  type ServicePort,
} from '../../../kube/objects.js';
import { hostPort } from '../../../ipv6.js';
import { driftFinding, type DriftFinding, type NodeDrift } from '../../drift.js';
import {
  CILIUM_STEMS,
  partialText,
  type CiliumAgent,
  type PartialReplacement,
} from '../agent/agent.js';
import type { ServiceKind } from '../agent/status.js';

/** What the replacement rests on: the agent's status (observed) or cilium-config (read). */
function replacementEvidence(r: PartialReplacement, node: string): Evidence {
  const text = `${partialText(r)} (${r.source})`;
  return r.from === 'status'
    ? seen(text, { node, source: `nodes/${node}/${CILIUM_STEMS.status}.txt` })
    : read(text, 'ConfigMap cilium-config');
}

/** The addresses of one port of `svc` of a kind, as clients reach them ("node port 30080/TCP",
 * "203.0.113.7:80/TCP"). */
function addressesOf(svc: Service, p: ServicePort, kind: ServiceKind): string[] {
  const at = (ip: string) => `${hostPort(ip, p.port)}/${p.protocol}`;
  switch (kind) {
    case 'NodePort':
      return (svc.type === 'NodePort' || svc.type === 'LoadBalancer') && p.nodePort
        ? [`node port ${p.nodePort}/${p.protocol}`]
        : [];
    case 'LoadBalancer':
      return svc.type === 'LoadBalancer' ? svc.loadBalancerIPs.map(at) : [];
    case 'externalIPs':
      return svc.externalIPs.map(at);
    default:
      // the ClusterIP is always the agent's; host ports are Pods', not a Service's
      return [];
  }
}

/** On a Cilium node: each Service port of `scope` (or all) with addresses of a kind the agent
 * leaves to kube-proxy, where no kube-proxy is known to run: a warning, as kube-proxy may run
 * outside the API (a static process) where nothing recorded shows it. */
export function leftToKubeProxy(
  view: ClusterView,
  agent: CiliumAgent,
  at: { node: string; source: string },
  scope?: readonly { namespace: string; name: string }[],
): DriftFinding[] {
  const r = agent.replacement;
  if (!r?.leaves?.length) return [];
  const wanted = scope && new Set(scope.map((s) => `${s.namespace}/${s.name}`));
  const out: DriftFinding[] = [];
  for (const svc of view.services) {
    if (wanted && !wanted.has(`${svc.namespace}/${svc.name}`)) continue;
    for (const p of svc.ports)
      for (const kind of r.leaves) {
        const addresses = addressesOf(svc, p, kind).join(', ');
        if (!addresses) continue;
        const service = servicePortName(svc, { name: p.name ?? '' });
        out.push(
          driftFinding(
            'cilium-left-to-kube-proxy',
            {
              service,
              title: `${service}'s ${kind} ${addresses} is left to kube-proxy, which does not run on ${at.node}`,
              message: `Cilium's agent on ${at.node} leaves ${kind} to kube-proxy (${partialText(r)}), and the API holds no kube-proxy Pod on ${at.node} (nor did kube-proxy answer there): nothing known serves ${addresses} of ${service} on this node, so connections to it there are not load-balanced to the Service's endpoints.`,
              advice:
                'Run kube-proxy on the node, or let Cilium serve the kind (kube-proxy-replacement: true, or from 1.14 to 1.18 enable-node-port: true, in cilium-config; then restart the agents).',
              evidence: [replacementEvidence(r, at.node), read(`no kube-proxy Pod on ${at.node}`)],
            },
            at,
          ),
        );
      }
  }
  return out;
}

/** On a kube-proxy node: kube-proxy's missing node port rules where the agent there serves node
 * ports, made notes (the agent's frontend is met first); `compared`: the agent's own table was
 * compared beside them (beside-kube-proxy.ts), else it was not read. */
export function servedByCilium(
  d: NodeDrift,
  r: PartialReplacement | undefined,
  compared = false,
): NodeDrift {
  if (!r?.handles?.includes('NodePort')) return d;
  const served = (f: DriftFinding) => f.id === 'nodeport-missing';
  const moved = d.findings.filter(served);
  if (moved.length === 0) return d;
  const findings = d.findings.filter((f) => !served(f));
  const table = compared
    ? "the agent's own table is compared beside them (its findings are Cilium's)"
    : "the agent's own table was not compared here";
  const note = (f: DriftFinding): DriftFinding => ({
    ...f,
    status: 'pass',
    info: true,
    explanation: `kube-proxy's rules on ${d.node} lack this (${f.title}), but Cilium's agent there serves node ports ahead of kube-proxy's rules (${partialText(r)}), so the node's node ports do not rest on it; ${table}.`,
    evidence: [...f.evidence, replacementEvidence(r, d.node)],
  });
  return {
    ...d,
    findings,
    notes: [...(d.notes ?? []), ...moved.map(note)],
    drifted: findings.some((f) => !f.info),
  };
}
