// kube-proxy's release on each Linux node, and the nodes where nothing said it.
import { unseen } from '../../evidence.js';
import type { Finding } from '../../model.js';
import { namedFew } from '../../nodes/access.js';
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
  const byRelease = new Map<string, string[]>();
  for (const s of known)
    byRelease.set(s.version!.value.text, [...(byRelease.get(s.version!.value.text) ?? []), s.node]);
  const said = [...byRelease].map(([v, nodes]) =>
    byRelease.size === 1 ? `${v} on ${count(nodes.length, 'node')}` : `${v} on ${namedFew(nodes)}`,
  );
  const out: Finding[] = [];
  if (known.length > 0)
    out.push(
      finding('kube-proxy-version', 'pass', `kube-proxy ${said.join(', ')}`, {
        explanation: `kube-proxy writes its rules differently from release to release: ${compared([...byRelease.keys()])} The version comes from kube-proxy's /metrics (kubernetes_build_info), else the image tag of its Pod, else the Node's status.nodeInfo.kubeProxyVersion.`,
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
            "Nothing said kube-proxy's release there: no /metrics build info, no image tag on its Pod, no status.nodeInfo.kubeProxyVersion. kdebug models the newest release it knows on those nodes and says so where it matters.",
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

/** What drift compares the nodes of these releases with: a modelled release's own rules, an
 * unmodelled one's behaviour against the nearest modelled release (releases.ts). */
function compared(releases: string[]): string {
  const unmodelled = releases.flatMap((text) => {
    const asked = parseRelease(text);
    const modelled = asked && modelledRelease(asked);
    return modelled?.note
      ? [
          `${text} is not modelled: its nodes are compared with what v1.${modelled.release.minor} writes, by behaviour (the same packets walked through both: where they go counts, not how the rules read).`,
        ]
      : [];
  });
  return [
    `kdebug models ${releaseRange()} and compares a node on one of them with what its own release writes.`,
    ...unmodelled,
  ].join(' ');
}
