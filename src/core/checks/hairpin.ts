// Step 10: a Pod reaching itself through its own Service. The DNAT makes source and destination
// the same Pod; unless the KUBE-SEP chain marks that packet for masquerade, the reply goes back
// inside the Pod from its own address and the client drops it. Checked on each endpoint's node.
import { seen, unseen } from '../evidence.js';
import type { Evidence, Finding } from '../model.js';
import { kubectl, valid, onNode, kdebug } from '../next-command.js';
import { consequence, count, finding, list, pending, type Check } from './check.js';
import type { CheckContext } from './context.js';
import { ipsetName, loopBackEntry } from '../dataplane/ipvs/expected.js';
import { kubeProxyPods, proxyModes, replacement } from './kube-proxy.js';
import { canonicalAddress, familyOf, hostPort } from '../ipv6.js';

const BRIDGE_NOTE =
  'The bridge must also send the packet back out of the port it came in on: kubelet --hairpin-mode (hairpin-veth or promiscuous-bridge) or the CNI plugin\'s "hairpinMode": true. If a Pod still cannot reach itself through the Service, read /sys/class/net/<bridge>/brif/*/hairpin_mode on its node (1 is on).';

/** The endpoints a hairpin check looked at: those it saw masqueraded (with the rules that do it),
 * and those it could not check on their node (with why). */
interface Looked {
  present: Evidence[];
  checked: number;
  unchecked: { who: string; node: string; why: string }[];
}

const looked = (): Looked => ({ present: [], checked: 0, unchecked: [] });

/** The endpoints that were masqueraded (`how`, with the rules that do it), and a finding that says
 * which ones were not checked: a pass speaks only for the endpoints it saw. */
function hairpinPresent(how: string, l: Looked): Finding[] {
  const all = l.checked + l.unchecked.length;
  const out: Finding[] = [];
  if (l.checked > 0)
    out.push(
      finding(
        'hairpin-masquerade-present',
        'pass',
        l.unchecked.length === 0
          ? 'a Pod reaching itself through the Service is masqueraded'
          : `${l.checked} of ${count(all, 'endpoint')}: a Pod reaching itself through the Service is masqueraded`,
        { explanation: `${how} ${BRIDGE_NOTE}`, evidence: l.present },
      ),
    );
  if (l.unchecked.length > 0)
    out.push(
      finding(
        'hairpin-not-observed',
        'skip',
        `hairpin of ${list(l.unchecked.map((u) => u.who))} not checked`,
        {
          explanation:
            "kdebug checks each ready endpoint's hairpin masquerade on the endpoint's own node; for these it could not (the Rules step says why), so nothing is said about them.",
          evidence: l.unchecked.map((u) => unseen(`${u.who} on ${u.node}: ${u.why}`, u.node)),
        },
      ),
    );
  return out;
}

function check(ctx: CheckContext): Finding[] {
  const svc = ctx.service!;
  const out: Finding[] = [];
  const l = looked();
  const cause = ctx.causedBy(
    'masquerade-missing',
    'endpoint-missing',
    'service-rules-missing',
    'service-chain-missing',
  );
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    for (const e of ctx.endpoints(port).filter((x) => x.ready && x.nodeName)) {
      const node = e.nodeName!;
      const family = familyOf(e.ip) ?? 'IPv4';
      const trees = ctx.analysis.node(node, undefined, family).trees(ctx.scope);
      const tree = trees?.services.find((t) => t.name === spn);
      const ep = [...(tree?.endpoints ?? []), ...(tree?.localEndpoints ?? [])].find(
        (x) => x.address === hostPort(canonicalAddress(e.ip), e.port) || x.inferredIP === e.ip,
      );
      const who = e.podName ?? hostPort(canonicalAddress(e.ip), e.port);
      if (!ep) {
        // no KUBE-SEP chain for it (or no rules of its family read): the Rules step says so
        const why = trees
          ? `no ${family} endpoint chain for it`
          : `its ${family} rules were not read`;
        l.unchecked.push({ who, node, why });
        continue;
      }
      l.checked++;
      const rules = ctx.chainEvidence(node, 'nat', ep.chain, family);
      if (ep.hairpinMasquerade) {
        l.present.push(...rules.filter((r) => r.text.includes('KUBE-MARK-MASQ')));
        continue;
      }
      const pod = kubeProxyPods(ctx).find((p) => p.nodeName === node);
      out.push(
        consequence(
          finding(
            'hairpin-masquerade-missing',
            'fail',
            `${e.podName ?? e.ip} cannot reach itself through the Service: ${ep.chain} on ${node} has no masquerade rule`,
            {
              explanation: `When ${e.podName ?? 'the Pod'} (${e.ip}) connects to the Service and is balanced to itself, the DNAT makes source and destination both ${e.ip}. kube-proxy writes "-s ${e.ip}/32 -j KUBE-MARK-MASQ" first in the endpoint's KUBE-SEP chain so the packet is masqueraded to the node's address; ${ep.chain} on ${node} lacks it, so the reply goes back inside the Pod from its own address and the connection hangs. The other Pods are not affected. kube-proxy rewrites every rule when it restarts: delete its Pod on ${node}. ${BRIDGE_NOTE}`,
              evidence: rules,
              next: pod
                ? kubectl('kube-system', 'delete', 'pod', valid.name(pod.name))
                : kdebug(['drift', '--node', valid.name(node)]),
              node,
              service: spn,
            },
          ),
          cause,
        ),
      );
    }
  }
  if (out.length > 0) return out;
  return hairpinPresent(
    "Each endpoint's KUBE-SEP chain on its own node marks hairpin traffic for masquerade.",
    l,
  );
}

/**
 * In nftables mode (1.33 on) kube-proxy masquerades hairpin traffic through the `masquerading`
 * chain's `hairpin-connections` set, which holds "podIP . podIP . proto . port" for each of the
 * node's endpoints (1.29-1.32: `ip saddr podIP jump mark-for-masquerade` in the endpoint chain).
 * Checked on each ready endpoint's own node; undefined when no endpoint node's table was read.
 */
function nftablesHairpin(ctx: CheckContext): Finding[] | undefined {
  const svc = ctx.service!;
  const out: Finding[] = [];
  const l = looked();
  let read = false;
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    for (const e of ctx.endpoints(port).filter((x) => x.ready && x.nodeName)) {
      const node = e.nodeName!;
      const n = ctx.analysis.node(node);
      const nft = n.dataplane();
      if (nft?.mode !== 'nftables') continue;
      read = true;
      const tree = n.trees(ctx.scope)?.services.find((t) => t.name === spn);
      const ep = [...(tree?.endpoints ?? []), ...(tree?.localEndpoints ?? [])].find(
        (x) => x.address === hostPort(canonicalAddress(e.ip), e.port),
      );
      if (!ep) {
        // not in the table at all: the Rules step says so
        l.unchecked.push({
          who: e.podName ?? hostPort(canonicalAddress(e.ip), e.port),
          node,
          why: 'not in its table',
        });
        continue;
      }
      l.checked++;
      const element = `${e.ip} . ${e.ip} . ${port.protocol.toLowerCase()} . ${e.port}`;
      if (ep.hairpinMasquerade) {
        l.present.push(
          seen(
            `${nft.source}: ${ep.chain.startsWith('endpoint-') && !nft.table.set('hairpin-connections') ? `${ep.chain}: ip saddr ${e.ip} jump mark-for-masquerade` : `set hairpin-connections holds ${element}`}`,
            { node, source: nft.source },
          ),
        );
        continue;
      }
      out.push(
        finding(
          'hairpin-masquerade-missing',
          'fail',
          `${e.podName ?? e.ip} cannot reach itself through the Service: ${node}'s nftables table does not masquerade it`,
          {
            explanation: `When ${e.podName ?? 'the Pod'} (${e.ip}) connects to the Service and is balanced to itself, source and destination are both ${e.ip}; kube-proxy lists such connections in the hairpin-connections set (${element}) so the masquerading chain rewrites the source, and ${node}'s table lacks that element: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites its table when it restarts.`,
            evidence: [
              seen(`${nft.source}: no element ${element} in set hairpin-connections`, {
                node,
                source: nft.source,
              }),
            ],
            next: onNode(node, ['nft', 'list', 'set', 'ip', 'kube-proxy', 'hairpin-connections'], {
              hostBinaries: true,
            }),
            node,
            service: spn,
          },
        ),
      );
    }
  }
  if (!read) return undefined;
  if (out.length === 0 && l.checked + l.unchecked.length > 0)
    out.push(
      ...hairpinPresent(
        "On its own node each endpoint's hairpin connection is masqueraded by kube-proxy's nftables table.",
        l,
      ),
    );
  return out.length > 0
    ? out
    : [
        finding(
          'hairpin-not-checked',
          'skip',
          "no ready endpoint is in its node's nftables table",
          {
            explanation: 'There is nothing to check until the endpoints have rules (see Rules).',
          },
        ),
      ];
}

const LOOP_BACK_RULE = /--match-set KUBE-(6-)?LOOP-BACK dst,dst,src -j MASQUERADE/;

/**
 * In IPVS mode kube-proxy puts "podIP,proto:port,podIP" of each of the node's endpoints in the
 * KUBE-LOOP-BACK ipset, and KUBE-POSTROUTING masquerades what matches it. Checked on each ready
 * endpoint's own node where its ipsets were read; undefined when none was.
 */
function ipvsHairpin(ctx: CheckContext): Finding[] | undefined {
  const svc = ctx.service!;
  const out: Finding[] = [];
  const l = looked();
  const cause = ctx.causedBy('ipset-entry-missing', 'endpoint-missing');
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    for (const e of ctx.endpoints(port).filter((x) => x.ready && x.nodeName)) {
      const node = e.nodeName!;
      const family = e.ip.includes(':') ? 'IPv6' : 'IPv4';
      const n = ctx.analysis.node(node, undefined, family);
      if (n.mode() !== 'ipvs') continue;
      const read = n.ipvs()?.read;
      const who = e.podName ?? hostPort(canonicalAddress(e.ip), e.port);
      if (!read?.ipsets) {
        l.unchecked.push({ who, node, why: 'its ipsets were not read' });
        continue;
      }
      l.checked++;
      // the set itself, not the real servers: an endpoint IPVS lacks still needs its entry
      const set = ipsetName('KUBE-LOOP-BACK', family);
      const entry = loopBackEntry(canonicalAddress(e.ip), port.protocol.toLowerCase(), e.port);
      const held = read.ipsets.get(set)?.entries.has(entry) === true;
      const nat = n.rules()?.ruleset?.table('nat');
      const rule = nat
        ?.chain('KUBE-POSTROUTING')
        ?.ruleIds.map((id) => nat.text(id))
        .find((text) => LOOP_BACK_RULE.test(text));
      const source = read.ipsetsSource ?? 'ipset';
      const at = { node, source };
      if (held && rule) {
        l.present.push(
          seen(`${source}: ${set} holds ${entry}`, at),
          seen(`${n.rules()!.source}: ${rule}`, { node, source: n.rules()!.source }),
        );
        continue;
      }
      out.push(
        consequence(
          finding(
            'hairpin-masquerade-missing',
            'fail',
            `${who} cannot reach itself through the Service: ${node} does not masquerade it (IPVS mode)`,
            {
              explanation: `When ${e.podName ?? 'the Pod'} (${e.ip}) connects to the Service and IPVS balances it to itself, source and destination are both ${e.ip}; kube-proxy lists such endpoints in the ${set} ipset (${entry}) and KUBE-POSTROUTING masquerades what matches it, and on ${node} ${rule ? `the set lacks that entry` : `the nat table has no such masquerade rule`}: the reply goes back inside the Pod from its own address and the connection hangs.`,
              evidence: [
                held
                  ? seen(`${source}: ${set} holds ${entry}`, at)
                  : seen(`${source}: ${set} lacks ${entry}`, at),
                ...(rule
                  ? []
                  : [
                      seen(
                        `${n.rules()?.source ?? 'no nat table read'}: no KUBE-POSTROUTING rule matching ${set}`,
                        { node },
                      ),
                    ]),
              ],
              next: onNode(node, ['ipset', 'list', set], { hostBinaries: true }),
              node,
              service: spn,
            },
          ),
          cause,
        ),
      );
    }
  }
  if (out.length === 0 && l.checked + l.unchecked.length === 0) return undefined;
  return out.length > 0
    ? out
    : hairpinPresent(
        "On its own node each endpoint is in kube-proxy's KUBE-LOOP-BACK ipset, which KUBE-POSTROUTING masquerades.",
        l,
      );
}

export const hairpinCheck: Check = {
  id: 'hairpin',
  title: 'Hairpin',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'hairpin-not-used',
    title: 'no virtual IP: a Pod connects to itself directly',
    explanation:
      'Hairpin masquerade is only needed when a Service address is translated to the Pod that sent the packet.',
  },
  run(ctx) {
    if (replacement(ctx))
      return [
        finding('hairpin-not-checked', 'skip', 'no kube-proxy rules to read', {
          explanation: 'The Service proxy is not kube-proxy (see kube-proxy above).',
        }),
      ];
    // nftables mode: the node's table lists its own hairpin connections
    const table = nftablesHairpin(ctx) ?? ipvsHairpin(ctx);
    if (table) return table;
    const nodes = ctx.nodesWithRules();
    if (nodes.length === 0) {
      if (ctx.waiting('nodes')) return pending('waiting for the node rules');
      return [
        finding('hairpin-not-checked', 'skip', 'no node rules recorded', {
          explanation:
            "The hairpin rule lives in each node's nat table; no rules dump was recorded.",
        }),
      ];
    }
    const modes = proxyModes(ctx).filter((m) => nodes.includes(m.node) && m.mode !== 'iptables');
    if (modes.length === nodes.length)
      return [
        finding(
          'hairpin-not-checked',
          'skip',
          `${modes[0]!.mode} mode: hairpin is handled outside the iptables chains`,
          {
            explanation:
              "In IPVS mode the KUBE-LOOP-BACK ipset masquerades hairpin traffic; in nftables mode kube-proxy's table does, and it was not read (nft -j list table ip kube-proxy).",
          },
        ),
      ];
    const found = check(ctx);
    if (!ctx.endpointAddresses().some((e) => e.ready))
      return [
        finding('hairpin-not-checked', 'skip', 'no ready endpoints: no Pod can be sent to itself', {
          explanation: 'Hairpin traffic needs an endpoint that is also the client.',
        }),
      ];
    if (found.length === 0)
      return [
        finding(
          'hairpin-not-checked',
          'skip',
          'no ready endpoint has a KUBE-SEP chain on its node',
          { explanation: 'There is nothing to check until the endpoints have rules (see Rules).' },
        ),
      ];
    return found;
  },
};
