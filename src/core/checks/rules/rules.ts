// Step 7: per node, the Service's tree read back from the node's rules, and the drift from what
// kube-proxy should have written there. The node that differs from the others is named.
import { seen, unseen } from '../../findings/evidence.js';
import { DEFAULT_MODE, type Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { nodeDump } from '../../facts/facts.js';
import {
  type Check,
  count,
  endpointSlicesOf,
  familyLabel,
  findingOf,
  list,
  listFew,
  noRulesFor,
  pending,
  saveNodeOutput,
} from '../check.js';
import { modeTraits, stateIsIptablesDump } from '../../dataplane/mode-traits.js';
import type { CheckContext, RulesMatched } from '../context.js';
import {
  agentReadsFailed,
  ciliumNodes,
  kubeProxyLogs,
  proxyModes,
  replacement,
} from '../kube-proxy/kube-proxy.js';
import { tableNode, unreadable } from './table.js';
import { byCondition, coveringOf, type OnNode } from './nodes.js';
import { byName, readWhole } from './read-for-service.js';
import {
  heldText,
  ipv4Source,
  ipv6Source,
  sameHeld,
  summary,
  type NodeSummary,
} from './summary.js';
import { compared, drift } from './node-drift.js';
import { matchedOn } from './compared.js';
import { endpointSourceText } from '../../dataplane/kube-proxy/endpoint-source.js';
import { endpointsUnseen, notChosen, notRead, stateOf } from './not-read.js';

const finding = findingOf('rules');

/** The Service's IPv6 half: on each node whose IPv4 rules were compared, its ip6tables rules are
 * compared the same way, every finding naming the family; nodes without an ip6tables dump say so.
 * `matched`: the nodes its pass stands for. */
function ipv6Rules(
  ctx: CheckContext,
  svc: Service,
  nodes: string[],
): { findings: Finding[]; matched: RulesMatched[] } {
  const v6 = svc.clusterIPs.filter((ip) => ip.includes(':'));
  if (v6.length === 0) return { findings: [], matched: [] };
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
        family: 'IPv6',
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
  const out = byCondition(items, nodes.length > 1, coveringOf(ctx));
  let matched: RulesMatched[] = [];
  if (clean.length > 0) {
    const same = clean.every((n) => sameHeld(n.ports, clean[0]!.ports));
    const named = count(clean.length, 'node');
    const match = finding(
      'rules-match',
      'pass',
      same
        ? `IPv6: ${named}: ${heldText(clean[0]!.ports)}, as expected`
        : `IPv6: ${named}: as expected`,
      {
        explanation: `On ${listFew(clean.map((n) => n.node))} the ip6tables rules for ${svc.namespace}/${svc.name} (${v6.join(', ')}) are what kube-proxy's IPv6 proxier should have written for the current objects.`,
        evidence: clean.flatMap((n) => [seen(`${n.node}:`, { node: n.node }), ...n.evidence]),
      },
    );
    out.unshift(match);
    matched = matchedOn(
      svc,
      clean.map((n) => n.node),
      ['IPv6'],
      match,
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
  return { findings: out, matched };
}

/** A node whose ip6tables dump was read and its iptables one not: the IPv4 half of the Service
 * is not checked there (its IPv6 half is, as ipv6Rules says). */
const ipv4NotRecorded = (ctx: CheckContext, svc: Service, node: string): Finding =>
  finding('rules-not-observed', 'skip', 'rules not observed', {
    explanation: `No IPv4 rules dump of ${node} was read (nodes/${node}/iptables-save.txt is not in the facts; its ip6tables-save is), so the IPv4 half of ${svc.namespace}/${svc.name} (${svc.clusterIPs.filter((ip) => !ip.includes(':')).join(', ')}) is not checked there.`,
    evidence: [unseen(`nodes/${node}/iptables-save.txt: not in the facts`, node)],
    next: saveNodeOutput(node, ['iptables-save'], 'iptables-save'),
    node,
  });

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
    if (other?.unobserved && cilium.length === 0)
      return [replacementNotRead(ctx, other.name, other.unobserved)];
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
    const on = (node: string, finding: Finding): OnNode => ({
      node,
      family: 'IPv4',
      label,
      named: true,
      finding,
    });
    const modes = proxyModes(ctx);
    const clean: string[] = [];
    const drifted = new Set<string>();
    const notCompared = new Set<string>();
    for (const node of nodes) {
      const mode = modes.find((m) => m.node === node)?.mode ?? DEFAULT_MODE;
      // Cilium's agent reads the EndpointSlices itself: kube-proxy's objects are not its
      const blind =
        modeTraits(mode)?.programmedBy === 'cilium-agent' ? undefined : endpointsUnseen(ctx, node);
      if (blind) {
        items.push(on(node, blind));
        notCompared.add(node);
        continue;
      }
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
      if (!v4) continue;
      if (!r) {
        // here for its ip6tables dump alone: its IPv4 rules were not read, said, never clean
        items.push(on(node, ipv4NotRecorded(ctx, svc, node)));
        notCompared.add(node);
        continue;
      }
      if (r.failure) {
        items.push(
          on(
            node,
            unreadable(
              'the rules dump cannot be read',
              node,
              r.failure.headline,
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
    const out = byCondition(items, nodes.length > 1, coveringOf(ctx));
    const ok = clean.map((node) => summary(node, svc, ipv4Source(ctx, node)));
    const matched = items.flatMap((i) => i.matched ?? []);
    if (ok.length > 0) {
      // one line for all the nodes that agree with the expected rules
      const same = ok.every((n) => sameHeld(n.ports, ok[0]!.ports));
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
      const match = finding(
        'rules-match',
        'pass',
        same ? `${named}: ${heldText(ok[0]!.ports)}, as expected` : `${named}: as expected`,
        {
          explanation: `On ${listFew(clean)} the rules for ${svc.namespace}/${svc.name} are what kube-proxy should have written for the current objects.${readFrom(ctx, clean)}${byName(ctx, clean)}`,
          evidence: ok.flatMap((n) => [seen(`${n.node}:`, { node: n.node }), ...n.evidence]),
        },
      );
      out.unshift(match);
      matched.push(...matchedOn(svc, clean, ['IPv4'], match));
    }
    // a node that differs from those that match says so
    if (drifted.size > 0 && clean.length > 0)
      for (const f of out)
        if (f.status !== 'pass' && (f.nodes ?? [f.node]).every((n) => n && drifted.has(n)))
          f.title = `${f.title} (unlike ${listFew(clean, 3)})`;
    const iptablesNodes = nodes.filter((n) =>
      stateIsIptablesDump(modes.find((m) => m.node === n)?.mode ?? DEFAULT_MODE),
    );
    // the IPv6 half on nftables and IPVS nodes, compared as the IPv4 one
    const ipv6Tables = svc.clusterIPs.some((ip) => ip.includes(':'))
      ? nodes.flatMap((n) => {
          const mode = modes.find((m) => m.node === n)?.mode;
          return stateOf(mode)?.perFamily ? tableNode(ctx, n, svc, 'IPv6') : [];
        })
      : [];
    const ipv6 = ipv6Rules(ctx, svc, iptablesNodes);
    const findings = [
      ...out,
      ...ipv6.findings,
      ...byCondition(ipv6Tables, nodes.length > 1, coveringOf(ctx)),
      ...unread,
      ...notChosen(ctx),
      ...readWhole(ctx),
    ];
    // what later steps may rule out: recorded once the step's findings are all made
    ctx.rulesMatched.push(
      ...matched,
      ...ipv6.matched,
      ...ipv6Tables.flatMap((i) => i.matched ?? []),
    );
    return findings;
  },
};

/** Which objects the nodes' expected endpoints came from, where not simply the EndpointSlices. */
function readFrom(ctx: CheckContext, nodes: string[]): string {
  const said = endpointSourceText(
    nodes.map((n) => [n, ctx.analysis.node(n).expected(ctx.scope).endpointsFrom]),
  );
  return said ? ` ${said}` : '';
}

/** A kube-proxy replacement no node was seen running: its Service table was not read, so nothing
 * is said of the Service there; the agents' reads that failed say why. */
function replacementNotRead(ctx: CheckContext, name: string, why: string): Finding {
  const failed = agentReadsFailed(ctx);
  return finding('rules-not-observed', 'skip', `${name}'s Service table not read on any node`, {
    explanation: `${name} handles Services here in place of kube-proxy, and kdebug read its agent's Service table on no node (${why}), so whether ${ctx.service!.namespace}/${ctx.service!.name} is programmed there is not observed.`,
    evidence: failed.length > 0 ? failed : [unseen(`no node's agent table in the facts (${why})`)],
  });
}
