// Step 7: per node, the Service's tree read back from the node's rules, and the drift from what
// kube-proxy should have written there. The node that differs from the others is named.
import { computed, seen, unseen } from '../../evidence.js';
import { reasonText } from '../../nodes/choice.js';
import { DriftInputError, judgedOnNode, type DriftFinding } from '../../dataplane/drift.js';
import { isWindows, type Service, type ServicePort } from '../../kube/objects.js';
import type { Evidence, Finding } from '../../model.js';
import { byReason, namedFew } from '../../nodes/access.js';
import { rulesReadFailure } from '../../nodes/errors.js';
import type { NodeAnalysis } from '../../analysis.js';
import { nodeDump } from '../../facts.js';
import { clusterTrafficEndpoints, type ServiceTree } from '../../dataplane/trees.js';
import {
  type Check,
  consequence,
  count,
  endpointSlicesOf,
  familyLabel,
  findingOf,
  list,
  listFew,
  noRulesFor,
  otherWay,
  pending,
  saveNodeOutput,
} from '../check.js';
import { kdebug, valid } from '../../next-command.js';
import { modeTraits } from '../../dataplane/dataplane.js';
import type { CheckContext } from '../context.js';
import {
  ciliumNodes,
  kubeProxyLogs,
  proxyModes,
  replacement,
  withSyncShown,
} from '../kube-proxy.js';
import { linesNotRead, tableNode, unreadable } from './table.js';
import { byCondition, type OnNode } from './nodes.js';
import { percent, thousands } from '../../model.js';
import { byName, readWhole } from './read-for-service.js';

const finding = findingOf('rules');

/** The tree of one Service port in a node's rules. */
export function treeOf(
  ctx: CheckContext,
  node: string,
  port: ServicePort,
): ServiceTree | undefined {
  const spn = ctx.servicePortName(port);
  const svc = ctx.service!;
  return ctx
    .rules(node)
    ?.trees?.services.find(
      (t) =>
        t.name === spn ||
        (t.clusterIP === svc.clusterIP &&
          t.port === port.port &&
          t.protocol === port.protocol.toLowerCase()),
    );
}

/** A rule line as evidence ("nodes/n/iptables-save.txt:42: -A ..."), by table and line. */
type LineReader = (table: string, line: number) => Evidence | undefined;

/** A tree as evidence seen on the node: entry rules, then each endpoint with its share and DNAT. */
function treeEvidence(node: string, tree: ServiceTree, line: LineReader): Evidence[] {
  const at = { node };
  const out: Evidence[] = [];
  for (const e of tree.entries)
    out.push(line('nat', e.line) ?? seen(`nat ${e.from} line ${e.line} -> ${e.chain}`, at));
  for (const ep of clusterTrafficEndpoints(tree))
    out.push(
      seen(
        `  ${percent(ep.probability)} -> ${ep.chain}: ${ep.chainMissing ? 'chain not in the dump' : `DNAT ${ep.address ?? ep.inferredIP ?? (ep.hostStart ? `${ep.hostStart}… (cut)` : '?')}`}`,
        at,
      ),
    );
  for (const v of tree.verdicts)
    out.push(line(v.table, v.line) ?? seen(`${v.table} ${v.chain} line ${v.line}: ${v.kind}`, at));
  return out;
}

/** What one node's rules do for the Service: "80/TCP -> 3 endpoints", with the rules. */
interface NodeSummary {
  node: string;
  ports: string;
  evidence: Evidence[];
}

/** Where a summary reads a node's trees and rule lines: the IPv4 rules the context holds, or
 * another family's. */
interface TreeSource {
  tree(port: ServicePort): ServiceTree | undefined;
  line: LineReader;
}

const ipv4Source = (ctx: CheckContext, node: string): TreeSource => ({
  tree: (port) => treeOf(ctx, node, port),
  line: (table, n) => ctx.lineEvidence(node, table, n),
});

/** The IPv6 trees of a node, found by Service port name, with ip6tables-save's lines. */
function ipv6Source(ctx: CheckContext, node: string, na: NodeAnalysis): TreeSource {
  const read = na.rules();
  return {
    tree: (port) => na.trees(ctx.scope)?.services.find((t) => t.name === ctx.servicePortName(port)),
    line: (table, n) => {
      const t = read?.ruleset?.table(table);
      const id = t ? t.ruleAtLine(n) : -1;
      return t && id >= 0
        ? seen(`${read!.source}:${n}: ${t.text(id)}`, { node, source: read!.source, line: n })
        : undefined;
    },
  };
}

function summary(node: string, svc: Service, from: TreeSource): NodeSummary {
  const lines: Evidence[] = [];
  const parts: string[] = [];
  for (const port of svc.ports) {
    const tree = from.tree(port);
    if (!tree) {
      parts.push(`${port.port}/${port.protocol}: no rules`);
      continue;
    }
    lines.push(...treeEvidence(node, tree, from.line));
    const reject = tree.verdicts.find((v) => v.kind === 'reject');
    const eps = clusterTrafficEndpoints(tree);
    parts.push(
      eps.length > 0
        ? `${port.port}/${port.protocol} -> ${count(eps.length, 'endpoint')}`
        : reject
          ? `${port.port}/${port.protocol} -> REJECT (no endpoints)`
          : `${port.port}/${port.protocol} -> no endpoints`,
    );
  }
  return { node, ports: parts.join(', '), evidence: lines };
}

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
function drift(ctx: CheckContext, na: NodeAnalysis, svc: Service): OnNode[] {
  const node = na.name;
  const family = familyLabel(svc, na.family);
  const on = (finding: Finding, named = false): OnNode => ({ node, label: family, named, finding });
  const names = new Set(svc.ports.map((p) => ctx.servicePortName(p)));
  let found: DriftFinding[];
  let source: string;
  try {
    // notes explain what a correct dump does on purpose (e.g. no local endpoint: DROP)
    const d = na.drift(ctx.scope);
    found = [...d.findings, ...(d.notes ?? []), ...(d.notRead ?? [])];
    source = d.source;
  } catch (e) {
    if (!(e instanceof DriftInputError)) throw e;
    // rules not compared are not observed for this Service: the step cannot pass for them
    return [
      on(
        finding('rules-not-checked', 'skip', 'rules not compared', {
          explanation: e.message,
          evidence: [unseen(e.message, node)],
          node,
        }),
        true,
      ),
    ];
  }
  // lines of the dump skipped may hold any of the Service's rules: said, nothing of them judged
  const blind = (na.dataplane()?.notReadFor(names) ?? []).map((u) => unseen(u, node));
  const skipped = blind.length > 0 ? [on(dumpNotRead(ctx, na, svc, found, blind), true)] : [];
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
      const seen = withSyncShown(
        ctx,
        node,
        judgedOnNode(d, source, {
          holds: (l) => na.holds(l),
          expects: (l) => na.expects(l, ctx.scope),
        }),
      );
      return on(consequence(withCommand(seen, node, down !== undefined), down));
    })
    .concat(skipped);
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
function compared(found: OnNode[]): 'drifted' | 'partly' | 'clean' {
  if (found.some(({ finding: f }) => f.status === 'fail' || f.status === 'warn')) return 'drifted';
  return found.some(
    ({ finding: f }) => f.id === 'rules-not-checked' || f.id === 'rules-not-observed',
  )
    ? 'partly'
    : 'clean';
}

/** The Service's IPv6 half: on each node whose IPv4 rules were compared, its ip6tables rules are
 * compared the same way, every finding naming the family; nodes without an ip6tables dump say so. */
function ipv6Rules(ctx: CheckContext, svc: Service, nodes: string[]): Finding[] {
  const v6 = svc.clusterIPs.filter((ip) => ip.includes(':'));
  if (v6.length === 0) return [];
  const items: OnNode[] = [];
  const clean: NodeSummary[] = [];
  const unread: string[] = [];
  for (const node of nodes) {
    const na = ctx.analysis.node(node, undefined, 'IPv6');
    const read = na.rules();
    if (!read) {
      unread.push(node);
      continue;
    }
    if (read.failure) {
      items.push({
        node,
        label: 'IPv6: ',
        named: true,
        finding: unreadable(
          'the ip6tables dump cannot be read',
          node,
          read.failure.headline,
          saveNodeOutput(node, ['ip6tables-save'], 'ip6tables-save'),
        ),
      });
      continue;
    }
    const found = drift(ctx, na, svc);
    if (compared(found) === 'clean') clean.push(summary(node, svc, ipv6Source(ctx, node, na)));
    items.push(...found);
  }
  const out = byCondition(items, nodes.length > 1);
  if (clean.length > 0) {
    const same = clean.every((n) => n.ports === clean[0]!.ports);
    const named = count(clean.length, 'node');
    out.unshift(
      finding(
        'rules-match',
        'pass',
        same ? `IPv6: ${named}: ${clean[0]!.ports}, as expected` : `IPv6: ${named}: as expected`,
        {
          explanation: `On ${listFew(clean.map((n) => n.node))} the ip6tables rules for ${svc.namespace}/${svc.name} (${v6.join(', ')}) are what kube-proxy's IPv6 proxier should have written for the current objects.`,
          evidence: clean.flatMap((n) => [seen(`${n.node}:`, { node: n.node }), ...n.evidence]),
        },
      ),
    );
  }
  if (unread.length > 0)
    out.push(
      finding(
        'rules-ipv6-not-observed',
        'skip',
        `IPv6: rules for ${v6.join(', ')} not read on ${list(unread)}`,
        {
          explanation: `The IPv6 cluster IP ${v6.join(', ')} is served by kube-proxy's ip6tables rules, and no ip6tables dump of ${list(unread)} was read (nodes/<node>/ip6tables-save.txt), so the IPv6 half of ${svc.namespace}/${svc.name} is not checked there.`,
          evidence: unread.map((n) => unseen(`nodes/${n}/ip6tables-save.txt: not in the facts`, n)),
          next: saveNodeOutput(unread[0]!, ['ip6tables-save'], 'ip6tables-save'),
        },
      ),
    );
  return out;
}

/** Nodes whose rules were not read: a live run that failed (with why), a snapshot without their
 * dump, a Windows node. The Service is unchecked there, and the step says so by name. */
function notRead(ctx: CheckContext, read: string[]): Finding[] {
  const svc = ctx.service!;
  const windows = new Set(ctx.view.nodes.filter(isWindows).map((n) => n.name));
  // nodes whose read failed the same way are one finding: many nodes, one line
  const failed: { node: string; reason: string }[] = [];
  const tables: OnNode[] = [];
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
      if (error === undefined)
        return ctx.waiting('nodes')
          ? []
          : [
              finding('rules-not-observed', 'skip', `${node}: rules not observed`, {
                explanation: `No rules dump of ${node} was read (nodes/${node}/iptables-save.txt is not in the facts), so ${svc.namespace}/${svc.name} is not checked there${read.length > 0 ? '; the other nodes are' : ''}.`,
                evidence: [unseen(`nodes/${node}/iptables-save.txt: not in the facts`, node)],
                next: saveNodeOutput(node, ['iptables-save'], 'iptables-save'),
                node,
              }),
            ];
      // a read that began and was lost is the run's loss, said in its Partial list: not observed
      if (failure?.lost)
        return [
          finding('rules-not-observed', 'skip', `${node}: rules not observed (the read was lost)`, {
            explanation: `The read of ${node}'s rules began and did not finish (${error}), so ${svc.namespace}/${svc.name} is not checked there${read.length > 0 ? '; the other nodes are' : ''}.`,
            evidence: [unseen(`${node}: ${failure.command} lost: ${error}`, node)],
            node,
          }),
        ];
      failed.push({ node, reason: error });
      return [];
    });
  out.push(...byCondition(tables));
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

/** How the node's mode keeps its state, where that is outside iptables (nftables, IPVS, Cilium). */
const stateOf = (mode: string | undefined) => modeTraits(mode)?.state;

export const rulesCheck: Check<'rules'> = {
  id: 'rules',
  title: 'Rules',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'rules-not-used',
    title: noRulesFor,
    explanation: 'There is no virtual IP to translate.',
  },
  run(ctx) {
    const svc = ctx.service!;
    const other = replacement(ctx);
    // Cilium's nodes are read from its agent's table; another replacement has nothing to read
    const cilium = ciliumNodes(ctx);
    if (other && cilium.length === 0)
      return [
        finding(
          'rules-not-kube-proxy',
          'skip',
          `Services are handled by ${other.name}, not by iptables rules`,
          {
            explanation: "The rules step reads kube-proxy's iptables rules; this cluster has none.",
            next: other.next,
          },
        ),
      ];
    // without the EndpointSlices the expected rules would be those of a Service without endpoints
    const slicesUnseen = ctx.slices().length === 0 ? ctx.slicesNotCaptured(svc) : undefined;
    if (slicesUnseen)
      return [
        ...notRead(ctx, ctx.nodesWithRules()),
        finding('rules-not-checked', 'skip', 'rules not compared: EndpointSlices not captured', {
          explanation: `kdebug compares each node's rules with what kube-proxy writes for the Service's endpoints, and it did not see them (${slicesUnseen}).`,
          next: endpointSlicesOf(svc),
        }),
      ];
    // nodes with an iptables dump, and nodes in nftables mode with their table
    // an IPv6-only Service has no IPv4 rules to compare, and its nodes may hold ip6tables only
    const v4 = svc.clusterIPs.some((ip) => !ip.includes(':'));
    const v6 = svc.clusterIPs.some((ip) => ip.includes(':'));
    const nodes = [
      ...new Set([
        ...ctx.nodesWithRules(),
        ...ctx.nodeNames().filter((n) => ctx.analysis.node(n).stateRead()),
        ...cilium,
        ...(v6 ? ctx.nodeNames().filter((n) => nodeDump(ctx.facts, n, 'IPv6')) : []),
      ]),
    ].sort();
    const unread = notRead(ctx, nodes);
    if (nodes.length === 0) {
      if (ctx.waiting('nodes')) return pending('waiting for the node rules');
      // no node read at all: one finding says so, with the nodes that failed or cannot be read
      const said = unread.filter((f) => f.id !== 'rules-not-observed');
      if (said.length > 0) return [...said, ...notChosen(ctx)];
      return [
        finding('rules-not-recorded', 'skip', 'no node rules recorded', {
          explanation: `kdebug compares each node's rules with what kube-proxy should have written, but no rules dump was read${ctx.nodeNames().length > 0 ? ` from ${list(ctx.nodeNames())}` : ''}. Give kdebug access to the nodes, or add nodes/<node>/iptables-save.txt to the snapshot.`,
          evidence: [unseen('no node rules in the facts')],
          ...(ctx.nodeNames()[0] !== undefined
            ? {
                advice: "Save each node's iptables-save as nodes/NODE/iptables-save.txt.",
                next: saveNodeOutput(ctx.nodeNames()[0]!, ['iptables-save'], 'iptables-save'),
              }
            : {}),
        }),
      ];
    }
    const items: OnNode[] = [];
    const label = familyLabel(svc, 'IPv4');
    const on = (node: string, finding: Finding): OnNode => ({ node, label, named: true, finding });
    const modes = proxyModes(ctx);
    const clean: string[] = [];
    const drifted = new Set<string>();
    const notCompared = new Set<string>();
    for (const node of nodes) {
      const mode = modes.find((m) => m.node === node)?.mode ?? 'iptables';
      if (stateOf(mode)) {
        const found = tableNode(ctx, node, svc);
        if (found.some(({ finding: f }) => f.status === 'fail' || f.status === 'warn'))
          drifted.add(node);
        items.push(...found);
        continue;
      }
      // a mode kdebug does not read writes no iptables rules: an empty dump there is expected
      if (!modeTraits(mode)) {
        items.push(
          on(
            node,
            finding('rules-other-mode', 'skip', `${mode} mode, kdebug reads iptables-mode rules`, {
              explanation: `kube-proxy runs in ${mode} mode, whose rules kdebug does not read.`,
              next: kubeProxyLogs(ctx, node),
              node,
            }),
          ),
        );
        continue;
      }
      const r = ctx.rules(node);
      if (!v4 || !r) continue;
      if (r.error) {
        items.push(
          on(
            node,
            unreadable(
              'the rules dump cannot be read',
              node,
              r.error,
              saveNodeOutput(node, ['iptables-save'], 'iptables-save'),
            ),
          ),
        );
        notCompared.add(node);
        continue;
      }
      const found = drift(ctx, ctx.analysis.node(node), svc);
      // rules not compared (a dump cut short, say), or in part (lines skipped), match nothing:
      // not among the clean
      const was = compared(found);
      if (was === 'partly') notCompared.add(node);
      else if (was === 'drifted') drifted.add(node);
      else clean.push(node);
      items.push(...found);
    }
    // a node alone names itself once the step read more than one node; nodes alike are one finding
    const out = byCondition(items, nodes.length > 1);
    const ok = clean.map((node) => summary(node, svc, ipv4Source(ctx, node)));
    if (ok.length > 0) {
      // one line for all the nodes that agree with the expected rules
      const same = ok.every((n) => n.ports === ok[0]!.ports);
      // a node whose rules were not read is not among those that match: "1 of 2 nodes"
      const blind = new Set([
        ...unread.flatMap((f) => f.nodes ?? (f.node !== undefined ? [f.node] : [])),
        ...notCompared,
      ]);
      const all = clean.length + blind.size;
      const nodesText =
        clean.length < all
          ? `${clean.length} of ${count(all, 'node')}`
          : count(clean.length, 'node');
      const named = `${label}${drifted.size > 0 ? listFew(clean, 3) : nodesText}`;
      out.unshift(
        finding(
          'rules-match',
          'pass',
          same ? `${named}: ${ok[0]!.ports}, as expected` : `${named}: as expected`,
          {
            explanation: `On ${listFew(clean)} the rules for ${svc.namespace}/${svc.name} are what kube-proxy should have written for the current objects.${byName(ctx, clean)}`,
            evidence: ok.flatMap((n) => [seen(`${n.node}:`, { node: n.node }), ...n.evidence]),
          },
        ),
      );
    }
    // a node that differs from those that match says so
    if (drifted.size > 0 && clean.length > 0)
      for (const f of out)
        if (f.status !== 'pass' && (f.nodes ?? [f.node]).every((n) => n && drifted.has(n)))
          f.title = `${f.title} (unlike ${listFew(clean, 3)})`;
    const iptablesNodes = nodes.filter(
      (n) => (modes.find((m) => m.node === n)?.mode ?? 'iptables') === 'iptables',
    );
    // the IPv6 half on nftables and IPVS nodes, compared as the IPv4 one
    const ipv6Tables = svc.clusterIPs.some((ip) => ip.includes(':'))
      ? byCondition(
          nodes.flatMap((n) => {
            const mode = modes.find((m) => m.node === n)?.mode;
            return stateOf(mode)?.perFamily ? tableNode(ctx, n, svc, 'IPv6') : [];
          }),
          nodes.length > 1,
        )
      : [];
    return [
      ...out,
      ...ipv6Rules(ctx, svc, iptablesNodes),
      ...ipv6Tables,
      ...unread,
      ...notChosen(ctx),
      ...readWhole(ctx),
    ];
  },
};

/** A large cluster: the nodes the capture chose for this Service, why, and how many it did not
 * read (about which nothing is said). */
function notChosen(ctx: CheckContext): Finding[] {
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
