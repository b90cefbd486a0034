// Step 7 on many nodes: nodes in the same condition for the Service are one finding ("4,996
// nodes (a, b, c and 4,993 more): 80/TCP -> 5 endpoints in nftables, as expected"), so the step
// grows with the conditions found, not with the nodes read.
import { isDeepStrictEqual } from 'node:util';
import { seen, unseen } from '../../findings/evidence.js';
import { kdebug, kubectl, valid, type NextCommand } from '../../findings/next-command.js';
import { kubeProxyPodOn } from '../../dataplane/iptables/drift/context.js';
import { isUnobserved, thousands, type Finding } from '../../model.js';
import { namedFew, ownNameAs } from '../../nodes/access.js';
import type { IPFamily } from '../../ipv6.js';
import type { CheckContext, RulesMatched } from '../context.js';
import {
  kubeProxyLogs,
  kubeProxyLogsAll,
  kubeProxyPods,
  kubeProxyPodsWide,
} from '../kube-proxy/pods.js';

/** One node's finding, its title not naming the node, about its rules of `family`; `label` says
 * that family ("IPv6: ") where the Service has both, and
 * `named` says whether a finding of this node alone names it in its title; `matched`: the rules
 * a passing rules-match of the node stands for. */
export interface OnNode {
  node: string;
  family: IPFamily;
  label: string;
  named: boolean;
  finding: Finding;
  matched?: RulesMatched[];
}

/** Two nodes are in the same condition when their findings say the same, their names aside: the
 * name standing alone or as its facts' folder (nodes/NODE/), never inside another word or name
 * (node "a" in "masquerade", node-1 in node-10). */
function conditionKey({ node, family, label, finding: f }: OnNode): string {
  const aside = (s = '') =>
    ownNameAs(s.split(`nodes/${node}/`).join('nodes/\0/'), node, '\0', false);
  return [family, label, f.id, f.status, f.service ?? '', f.title, aside(f.explanation)].join(
    '\x01',
  );
}

/** The findings, one per condition: a node alone keeps its own, named in its title when it asks
 * to be or when `several` nodes were read; nodes that share one are named (the first few in the
 * title, all in `nodes`), with the first node's explanation and evidence. */
export function byCondition(
  items: readonly OnNode[],
  several = false,
  cover?: Covering,
): Finding[] {
  const groups = new Map<string, OnNode[]>();
  for (const item of items) {
    const key = conditionKey(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!;
    const f = first.finding;
    if (group.length === 1)
      return {
        ...f,
        title: `${first.label}${first.named || several ? `${first.node}: ` : ''}${f.title}`,
        node: first.node,
        family: first.family,
      };
    const nodes = group.map((g) => g.node);
    const { node: _one, next: _next, advice: _advice, ...rest } = f;
    return {
      ...rest,
      title: `${first.label}${thousands(nodes.length)} nodes (${namedFew(nodes)}): ${f.title}`,
      explanation: `The same on ${thousands(nodes.length)} nodes. On ${first.node}: ${f.explanation}`,
      evidence: [
        ...f.evidence,
        // what the first node's evidence is, the others' is: a part not observed is not there
        ...nodes
          .slice(1)
          .map((n) =>
            isUnobserved(f)
              ? unseen(`${n}: the same as ${first.node}`, n)
              : seen(`${n}: the same as ${first.node}`, { node: n }),
          ),
      ],
      nodes,
      family: first.family,
      ...nextForNodes(f, nodes, cover),
    };
  });
}

/** A command that does for every node of a group what `next` does for the first, if there is one. */
export type Covering = (next: NextCommand, nodes: string[]) => NextCommand | undefined;

/** The Rules step's covering commands: kube-proxy's own (every Pod's log, a rolling restart, its
 * Pods) and kdebug's drift of every node, where the first node's is that one's. */
export const coveringOf =
  (ctx: CheckContext): Covering =>
  (next, nodes) => {
    const first = nodes[0]!;
    const pod = kubeProxyPods(ctx).find((p) => p.nodeName === first)?.name;
    const is = (c: NextCommand | undefined) => c !== undefined && isDeepStrictEqual(c, next);
    if (is(kubeProxyLogs(ctx, first))) return kubeProxyLogsAll(ctx);
    // deleting each node's Pod is what the DaemonSet's own rolling restart does
    if (pod !== undefined && is(kubectl('kube-system', 'delete', 'pod', valid.name(pod))))
      return kubectl('kube-system', 'rollout', 'restart', 'daemonset', 'kube-proxy');
    if (is(kubeProxyPodOn(first))) return kubeProxyPodsWide(ctx);
    if (is(kdebug(['drift', '--node', valid.name(first)]))) return kdebug(['drift', '--all-nodes']);
    return undefined;
  };

/** The Next of a finding that speaks for `nodes`, from the first node's: one that covers them
 * all where `cover` has one; else the first's, said in the advice to be that node's alone where
 * it runs on it or names it. */
function nextForNodes(
  f: Finding,
  nodes: string[],
  cover: Covering | undefined,
): Pick<Finding, 'next' | 'advice'> {
  const { next, advice } = f;
  const kept = advice ? { advice } : {};
  if (!next) return kept;
  const covering = cover?.(next, nodes);
  if (covering) return { next: covering, ...kept };
  const first = nodes[0]!;
  if (next.node !== first && !next.argv.includes(first)) return { next, ...kept };
  const label = `The command below is ${first}'s; run it for each of the ${thousands(nodes.length)} nodes.`;
  return { next, advice: advice ? `${advice} ${label}` : label };
}
