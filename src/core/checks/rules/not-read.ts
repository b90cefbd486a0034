// Step 7's nodes not read: a failed read, a snapshot without their dump, a Windows node, a mode
// kept outside iptables whose state was not read, and on a large cluster the nodes not chosen.
import { computed, seen, unseen } from '../../findings/evidence.js';
import { reasonText } from '../../nodes/choice.js';
import { isWindows } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { byReason, namedFew } from '../../nodes/access.js';
import { rulesReadFailure } from '../../nodes/errors.js';
import { count, findingOf, otherWay, saveNodeOutput } from '../check.js';
import { kdebug, valid } from '../../findings/next-command.js';
import { modeTraits } from '../../dataplane/mode-traits.js';
import type { CheckContext } from '../context.js';
import { proxyModes } from '../kube-proxy/kube-proxy.js';
import { tableNode } from './table.js';
import { byCondition, coveringOf, type OnNode } from './nodes.js';
import { thousands } from '../../model.js';

const finding = findingOf('rules');

/** Nodes whose rules were not read: a live run that failed (with why), a snapshot without their
 * dump, a Windows node. The Service is unchecked there, and the step says so by name. */
export function notRead(ctx: CheckContext, read: string[]): Finding[] {
  const svc = ctx.service!;
  const windows = new Set(ctx.view.nodes.filter(isWindows).map((n) => n.name));
  // nodes whose read failed the same way are one finding: many nodes, one line
  const failed: { node: string; reason: string }[] = [];
  const tables: OnNode[] = [];
  // nodes with no dump, and nodes whose read was lost: one finding for each condition
  const missing: string[] = [];
  const lost: LostRead[] = [];
  // each node's mode, once: asked of every node not read (thousands, with --all-nodes)
  const modes = new Map(proxyModes(ctx).map((m) => [m.node, m.mode]));
  const wasRead = new Set(read);
  const out = ctx
    .nodeNames()
    .filter((n) => !wasRead.has(n))
    .flatMap((node) => {
      if (windows.has(node))
        return [
          finding('rules-not-linux', 'skip', `${node}: Windows node, not read`, {
            explanation: `${node} is a Windows node: kube-proxy runs there in kernelspace mode (HNS load balancers), with no iptables rules. kdebug reads Linux nodes only, so ${svc.namespace}/${svc.name} is not checked on it.`,
            evidence: [unseen(`${node}: a Windows node (kube-proxy kernelspace mode)`, node)],
            advice: `On ${node}, in PowerShell, hnsdiag list loadbalancers shows its load balancers.`,
            node,
          }),
        ];
      const failure = rulesReadFailure(ctx.analysis.nodeErrors, node);
      const error = failure?.error;
      // a node whose kube-proxy keeps its state outside iptables (nftables, IPVS) says how to
      // read that state, not its iptables dump; Cilium's agents are read with the other nodes
      const state = stateOf(modes.get(node));
      if (error === undefined && state?.perFamily && !ctx.waiting('nodes')) {
        tables.push(...tableNode(ctx, node, svc));
        return [];
      }
      if (error === undefined) {
        if (!ctx.waiting('nodes')) missing.push(node);
        return [];
      }
      // a read that began and was lost is the run's loss, said in its Partial list: not observed
      if (failure?.lost) {
        lost.push({ node, reason: error, command: failure.command });
        return [];
      }
      failed.push({ node, reason: error });
      return [];
    });
  out.push(...byCondition(tables, false, coveringOf(ctx)));
  if (missing.length > 0) out.push(notRecorded(ctx, missing, read.length > 0));
  for (const { nodes } of byReason(lost)) out.push(readLost(ctx, nodes, lost, read.length > 0));
  // the same failure on many nodes (no agent Pod there, say) is one finding
  const reasonOf = new Map(failed.map((f) => [f.node, f.reason]));
  for (const { nodes } of byReason(failed)) {
    const reads = nodes.map((node) => ({ node, reason: reasonOf.get(node)! }));
    const error = reads[0]!.reason;
    const one = nodes.length === 1;
    const where = one ? nodes[0]! : `${nodes.length} nodes (${namedFew(nodes, 5)})`;
    out.push(
      finding(
        'rules-not-read',
        'warn',
        one
          ? `${nodes[0]}: rules not read`
          : `rules not read on ${nodes.length} nodes: ${namedFew(nodes)}`,
        {
          explanation: `kdebug could not read the rules of ${where}, so ${svc.namespace}/${svc.name} is not checked there${read.length > 0 ? '; the other nodes are' : ''}. ${one ? error : `On ${nodes[0]}: ${error}`}${/[.!?]$/.test(error) ? '' : '.'}`,
          // the failed read itself is what was seen: a warning, not a verdict on the rules
          evidence: reads.map((r) =>
            seen(`${r.node}: the read failed: ${r.reason}`, { node: r.node }),
          ),
          ...otherWay(ctx, svc),
          ...(one ? { node: nodes[0]! } : { nodes }),
        },
      ),
    );
  }
  return out;
}

/** "w0001" or "370 nodes (w0001, w0002, w0003 and 367 more)": a title that stays one line. */
const nodesTitle = (nodes: string[]) =>
  nodes.length === 1 ? nodes[0]! : `${thousands(nodes.length)} nodes (${namedFew(nodes)})`;

/** One node, or every node listed whole as data (JSON's `nodes`), the text naming a few. */
const where = (nodes: string[]) => (nodes.length === 1 ? { node: nodes[0]! } : { nodes });

/** Nodes with no rules dump in the facts: one finding, one next command (the first node's). */
function notRecorded(ctx: CheckContext, nodes: string[], othersRead: boolean): Finding {
  const svc = ctx.service!;
  const one = nodes.length === 1;
  const first = nodes[0]!;
  return finding('rules-not-observed', 'skip', `${nodesTitle(nodes)}: rules not observed`, {
    explanation: one
      ? `No rules dump of ${first} was read (nodes/${first}/iptables-save.txt is not in the facts), so ${svc.namespace}/${svc.name} is not checked there${othersRead ? '; the other nodes are' : ''}.`
      : `No rules dump of these ${thousands(nodes.length)} nodes was read (nodes/<node>/iptables-save.txt is not in the facts for any of them), so ${svc.namespace}/${svc.name} is not checked there${othersRead ? '; the other nodes are' : ''}.`,
    evidence: one
      ? [unseen(`nodes/${first}/iptables-save.txt: not in the facts`, first)]
      : [unseen(`nodes/<node>/iptables-save.txt: not in the facts for ${namedFew(nodes, 5)}`)],
    next: saveNodeOutput(first, ['iptables-save'], 'iptables-save'),
    ...(one
      ? {}
      : {
          advice: `The command saves ${first}'s dump; run it on each of the other ${thousands(nodes.length - 1)} nodes with that node's name in place of ${first} (JSON's nodes lists them all).`,
        }),
    ...where(nodes),
  });
}

/** A node's rules read that began and did not finish. */
interface LostRead {
  node: string;
  reason: string;
  command: string;
}

/** Nodes whose rules read began and was lost the same way: the run's loss, one finding. */
function readLost(
  ctx: CheckContext,
  nodes: string[],
  lost: LostRead[],
  othersRead: boolean,
): Finding {
  const svc = ctx.service!;
  const readOf = new Map(lost.map((l) => [l.node, l]));
  const first = nodes[0]!;
  const why = readOf.get(first)!.reason;
  return finding(
    'rules-not-observed',
    'skip',
    `${nodesTitle(nodes)}: rules not observed (the read was lost)`,
    {
      explanation: `The read of ${nodes.length === 1 ? `${first}'s rules` : `the rules of ${thousands(nodes.length)} nodes`} began and did not finish (${nodes.length === 1 ? why : `on ${first}: ${why}`}), so ${svc.namespace}/${svc.name} is not checked there${othersRead ? '; the other nodes are' : ''}.`,
      evidence: [
        ...nodes.slice(0, 5).map((n) => {
          const r = readOf.get(n)!;
          return unseen(`${n}: ${r.command} lost: ${r.reason}`, n);
        }),
        ...(nodes.length > 5 ? [unseen(`and ${thousands(nodes.length - 5)} more nodes`)] : []),
      ],
      ...where(nodes),
    },
  );
}

/** The node's kube-proxy takes the endpoints from objects the capture did not read (the
 * Endpoints, RBAC refused): what its rules should hold for the Service is not known. */
export function endpointsUnseen(ctx: CheckContext, node: string): Finding | undefined {
  const from = ctx.analysis.node(node).expected(ctx.scope).endpointsFrom;
  if (!from.notRead) return undefined;
  const svc = ctx.service!;
  return finding('rules-not-checked', 'skip', `rules not compared: ${from.reads} not captured`, {
    explanation: `kube-proxy on ${node} takes the Service's endpoints from the ${from.reads}, and ${from.notRead}: which endpoints its rules for ${svc.namespace}/${svc.name} should send to is not observed, so they are not compared there.`,
    evidence: [unseen(`${from.reads}: ${from.notRead}`, node)],
    node,
  });
}

export const stateOf = (mode: string | undefined) => modeTraits(mode)?.state;

/** A large cluster: the nodes the capture chose for this Service, why, and how many it did not
 * read (about which nothing is said). */
export function notChosen(ctx: CheckContext): Finding[] {
  const left = ctx.notChosen();
  const choice = ctx.choice;
  if (!choice || left.length === 0) return [];
  const read = choice.chosen.length;
  return [
    finding(
      'rules-nodes-not-read',
      'skip',
      `${thousands(left.length)} of ${thousands(choice.total)} nodes not read: --all-nodes reads them`,
      {
        explanation: `${
          choice.policy === 'asked'
            ? `kdebug read the ${count(read, 'node')} asked for (--nodes)`
            : `On a cluster this large kdebug reads at most ${choice.max} nodes (--max-nodes): those of the client and of the Service's endpoints, those whose kube-proxy or Cilium agent looks unhealthy from the API, and a few others at random`
        }.${choice.clientNotFound ? ` The client ${choice.clientNotFound} (--from) was not found, so no node was read for it.` : ''} Nothing here is said about the ${thousands(left.length)} nodes it did not read.`,
        evidence: [
          ...choice.chosen.map((c) => computed(`read ${c.node}: ${reasonText(c)}`)),
          unseen(`not read: ${namedFew(left, 5)}`),
        ],
        next: kdebug(
          [
            'svc',
            valid.name(ctx.target.service),
            '-n',
            valid.namespace(ctx.target.namespace),
            '--all-nodes',
          ],
          { live: true },
        ),
      },
    ),
  ];
}
