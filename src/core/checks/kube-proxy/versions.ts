// kube-proxy's release on each Linux node, and the nodes where nothing said it.
import { unseen } from '../../findings/evidence.js';
import type { Finding } from '../../model.js';
import { namedFew } from '../../nodes/access.js';
import type { NodeState } from '../../nodes/state.js';
import { count, findingOf } from '../check.js';
import type { CheckContext } from '../context.js';
import {
  modelledRelease,
  parseRelease,
  releaseRange,
} from '../../dataplane/kube-proxy/releases.js';

const finding = findingOf('kube-proxy');

/** kube-proxy's release on each Linux node, with where it was read (nodes/state.ts); the nodes
 * where nothing said it are named, never guessed. */
export function versions(ctx: CheckContext): Finding[] {
  const states = ctx
    .nodeNames()
    .map((n) => ctx.analysis.state(n))
    .filter((s) => !s.windows);
  if (states.length === 0) return [];
  const known = states.filter((s) => s.version);
  const unknown = states.filter((s) => !s.version).map((s) => s.node);
  const byRelease = new Map<string, NodeState[]>();
  for (const s of known)
    byRelease.set(s.version!.value.text, [...(byRelease.get(s.version!.value.text) ?? []), s]);
  const said = [...byRelease].map(([v, nodes]) =>
    byRelease.size === 1
      ? `${v} on ${count(nodes.length, 'node')}`
      : `${v} on ${namedFew(nodes.map((s) => s.node))}`,
  );
  const out: Finding[] = [];
  if (known.length > 0)
    out.push(
      finding('kube-proxy-version', 'pass', `kube-proxy ${said.join(', ')}`, {
        explanation: `kube-proxy writes its rules differently from release to release: ${compared(byRelease)} The version comes from kube-proxy's /metrics (kubernetes_build_info), else the image tag of its Pod, else the Node's status.nodeInfo.kubeProxyVersion.`,
        evidence: known.map((s) => s.version!.evidence),
        info: true,
        folded: true,
      }),
    );
  if (unknown.length > 0)
    out.push(
      finding(
        'kube-proxy-version-not-observed',
        'skip',
        `kube-proxy's version not observed on ${count(unknown.length, 'node')}: ${namedFew(unknown)}`,
        {
          explanation:
            "Nothing said kube-proxy's release there: no /metrics build info, no image tag on its Pod, no status.nodeInfo.kubeProxyVersion. kdebug models the newest release it knows on those nodes (on an nftables node, the release its table reads as written by) and says so where it matters.",
          evidence: unknown.map((n) =>
            unseen(`${n}: no /metrics build info, image tag or nodeInfo`, n),
          ),
          info: true,
          folded: true,
        },
      ),
    );
  return out;
}

/** How drift compares a node of an unmodelled release with the nearest modelled one, by mode:
 * only iptables drift walks packets (iptables/drift/text.ts foldByBehaviour); nftables takes the
 * modelled release its table reads as written by (nftables/drift/written-by.ts), IPVS drift
 * compares what IPVS, its ipsets and iptables hold (ipvs/drift.ts). */
const UNMODELLED_BY_MODE: Record<string, string> = {
  iptables:
    'on iptables nodes by behaviour (the same packets walked through both: where they go counts, not how the rules read)',
  nftables:
    'except on nftables nodes, compared with the modelled release their table reads as written by (drift names it and what in the table says so)',
  ipvs: 'on IPVS nodes by what they hold: virtual and real servers, kube-ipvs0 addresses, ipset entries, and each iptables rule kube-proxy writes in its chain, so one that release writes otherwise reads as missing (no packet is walked)',
};

/** What drift compares the nodes of these releases with: a modelled release's own rules, an
 * unmodelled one's against the nearest modelled release, as each node's mode compares them. */
function compared(byRelease: Map<string, NodeState[]>): string {
  const unmodelled = [...byRelease].flatMap(([text, states]) => {
    const asked = parseRelease(text);
    const modelled = asked && modelledRelease(asked);
    if (!modelled?.note) return [];
    const how = [...new Set(states.map((s) => s.mode.value))].flatMap(
      (mode) => UNMODELLED_BY_MODE[mode] ?? [],
    );
    return [
      `${text} is not modelled: its nodes are compared with what v1.${modelled.release.minor} writes${how.length > 0 ? `, ${how.join('; ')}` : ''}.`,
    ];
  });
  return [
    `kdebug models ${releaseRange()} and compares a node on one of them with what its own release writes.`,
    ...unmodelled,
  ].join(' ');
}
