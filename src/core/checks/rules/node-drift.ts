// Step 7 on one node in iptables mode: its drift from what kube-proxy should have written for
// the Service, the lines of its dump not read, and whether it matches, differs or was compared
// in part.
import { seen, unseen } from '../../findings/evidence.js';
import {
  DriftInputError,
  judgedOnNode,
  type DriftFinding,
  type NodeDrift,
} from '../../dataplane/drift.js';
import type { Service } from '../../kube/objects.js';
import type { Evidence, Finding } from '../../model.js';
import type { NodeAnalysis } from '../../nodes/node-analysis.js';
import { consequence, familyLabel, findingOf } from '../check.js';
import { kdebug, valid } from '../../findings/next-command.js';
import type { CheckContext } from '../context.js';
import { withSyncShown } from '../kube-proxy/kube-proxy.js';
import { linesNotRead } from './table.js';
import type { OnNode } from './nodes.js';
import { byName } from './read-for-service.js';

const finding = findingOf('rules');

/** Drift's advice joins the explanation (unless a cause found earlier already says it); its
 * command, else the node's whole drift, is the next one. */
function withCommand(f: Finding, node: string, explained: boolean): Finding {
  const { advice, ...rest } = f;
  return {
    ...rest,
    explanation: advice && !explained ? `${f.explanation} ${advice}` : f.explanation,
    next: f.next ?? kdebug(['drift', '--node', valid.name(node)]),
  };
}

/** The node's drift for this Service's ports (and node-wide drift that affects every Service);
 * the IPv6 proxier's findings say "IPv6:" first. */
export function drift(ctx: CheckContext, na: NodeAnalysis, svc: Service): OnNode[] {
  const node = na.name;
  const family = familyLabel(svc, na.family);
  const on = (finding: Finding, named = false): OnNode => ({
    node,
    family: na.family,
    label: family,
    named,
    finding,
  });
  const names = new Set(svc.ports.map((p) => ctx.servicePortName(p)));
  let found: DriftFinding[];
  let source: string;
  let releaseDisagrees: NodeDrift['releaseDisagrees'];
  let uncompared: string | undefined;
  try {
    // notes explain what a correct dump does on purpose (e.g. no local endpoint: DROP)
    const d = na.driftOnNode(ctx.scope);
    found = [...d.findings, ...(d.notes ?? []), ...(d.notRead ?? [])];
    source = d.source;
    releaseDisagrees = d.releaseDisagrees;
    uncompared = na.dataplane()?.notCompared(d);
  } catch (e) {
    if (!(e instanceof DriftInputError)) throw e;
    // rules not compared are not observed for this Service: the step cannot pass for them
    return [
      on(
        finding('rules-not-checked', 'skip', `rules not compared${e.why ? `: ${e.why}` : ''}`, {
          explanation: e.message,
          evidence: [unseen(e.message, node)],
          node,
        }),
        true,
      ),
    ];
  }
  const disagrees = releaseDisagrees
    ? [on(disagreement(ctx, na, svc, source, releaseDisagrees), true)]
    : [];
  // lines of the dump skipped may hold any of the Service's rules: said, nothing of them judged
  const blind = (na.dataplane()?.notReadFor(names) ?? []).map((u) => unseen(u, node));
  const skipped = blind.length > 0 ? [on(dumpNotRead(ctx, na, svc, found, blind), true)] : [];
  // a part of the node's state not compared (an agent beside kube-proxy, not read): no match
  const partly = uncompared
    ? [
        on(
          finding('rules-not-observed', 'skip', "part of the node's state not compared", {
            explanation: `On ${node}, ${uncompared}: what that part holds for ${svc.namespace}/${svc.name} is not observed.`,
            evidence: [unseen(`${node}: ${uncompared}`, node)],
            node,
          }),
          true,
        ),
      ]
    : [];
  // a kube-proxy that is not running explains whatever its node's rules got wrong since
  const down = ctx.earlier.find(
    (c) =>
      c.finding.id === 'kube-proxy-not-running' &&
      (c.finding.node === node || c.finding.nodes?.includes(node)),
  );
  return found
    .filter((d) =>
      d.service ? names.has(d.service) : d.id !== 'orphan-chain' && d.id !== 'rule-text-differs',
    )
    .filter((d) => d.id !== 'rule-text-differs') // spelling only: the trees already show what the rules do
    .map((d) => {
      const seen = withSyncShown(ctx, node, judgedOnNode(d, source));
      return on(consequence(withCommand(seen, node, down !== undefined), down));
    })
    .concat(disagrees, skipped, partly);
}

/** The release read for the node and the one its rules are spelled by disagree: said once, with
 * both sources, as a sign that the running kube-proxy is not what wrote them. */
export function disagreement(
  ctx: CheckContext,
  na: NodeAnalysis,
  svc: Service,
  source: string,
  d: NonNullable<NodeDrift['releaseDisagrees']>,
): Finding {
  const node = na.name;
  const version = ctx.analysis.state(node).version;
  return finding(
    'rules-release-disagrees',
    'warn',
    `kube-proxy ${version?.value.text ?? d.read} read, rules spelled as ${d.upTo} or earlier writes them`,
    {
      explanation: `kube-proxy on ${node} is ${version?.value.text ?? d.read} by what was read for it, yet its rules carry signs of a kube-proxy ${d.upTo} or earlier (${source}). A kube-proxy of that release rewrites them on its first sync, so these were written by another: a stale kube-proxy still running there, its rules never rewritten, or a fork that spells them its own way. Where the rules route ${svc.namespace}/${svc.name} is compared ${d.comparedAs ? `with what ${d.comparedAs} writes` : 'by behaviour'} all the same.`,
      evidence: [
        ...(version ? [version.evidence] : []),
        seen(`${source}: ${na.drift(ctx.scope).writtenBy ?? ''}`, { node, source }),
      ],
      next: kdebug(['drift', '--node', valid.name(node)]),
      node,
    },
  );
}

/** Lines of a node's dump skipped: the comparison rests on the rest, and says so. */
function dumpNotRead(
  ctx: CheckContext,
  na: NodeAnalysis,
  svc: Service,
  found: DriftFinding[],
  blind: Evidence[],
): Finding {
  const clean = !found.some((d) => d.status === 'fail' || d.status === 'warn');
  return linesNotRead(
    'rules-not-observed',
    'the rules dump',
    'iptables-save does not write there',
    {
      source: na.rules()!.source,
      node: na.name,
      svc,
      blind,
      before: clean
        ? `The rules read on ${na.name} for ${svc.namespace}/${svc.name} are what kube-proxy should have written for the current objects${byName(ctx, [na.name])}; `
        : '',
    },
  );
}

/** Whether a node's findings show its rules differ, were compared only in part (lines not read)
 * or not at all, or match. */
export function compared(found: OnNode[]): 'drifted' | 'partly' | 'clean' {
  // who wrote the rules is no drift: where they route is compared all the same
  if (
    found.some(
      ({ finding: f }) =>
        (f.status === 'fail' || f.status === 'warn') && f.id !== 'rules-release-disagrees',
    )
  )
    return 'drifted';
  return found.some(
    ({ finding: f }) => f.id === 'rules-not-checked' || f.id === 'rules-not-observed',
  )
    ? 'partly'
    : 'clean';
}
