// Step 10: a Pod reaching itself through its own Service. The DNAT makes source and destination
// the same Pod; unless the KUBE-SEP chain marks that packet for masquerade, the reply goes back
// inside the Pod from its own address and the client drops it. Checked on each endpoint's node.
import type { Finding } from '../model.js';
import { kubectl, valid, onNode, kdebug } from '../next-command.js';
import { consequence, finding, pending, type Check } from './check.js';
import type { CheckContext } from './context.js';
import { ipsetName, loopBackEntry } from '../ipvs/expected.js';
import { kubeProxyPods, proxyModes, replacement } from './kube-proxy.js';
import { hostPort } from '../ipv6.js';

const BRIDGE_NOTE =
  'The bridge must also send the packet back out of the port it came in on: kubelet --hairpin-mode (hairpin-veth or promiscuous-bridge) or the CNI plugin\'s "hairpinMode": true. If a Pod still cannot reach itself through the Service, read /sys/class/net/<bridge>/brif/*/hairpin_mode on its node (1 is on).';

/** Every ready endpoint is masqueraded when it reaches itself: `how`, with the rules that do it. */
const hairpinPresent = (how: string, evidence: string[]): Finding =>
  finding(
    'hairpin-masquerade-present',
    'pass',
    'a Pod reaching itself through the Service is masqueraded',
    {
      explanation: `${how} ${BRIDGE_NOTE}`,
      evidence,
    },
  );

function check(ctx: CheckContext): Finding[] {
  const svc = ctx.service!;
  const out: Finding[] = [];
  const present: string[] = [];
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
      const tree = ctx.rules(node)?.trees?.services.find((t) => t.name === spn);
      const ep = [...(tree?.endpoints ?? []), ...(tree?.localEndpoints ?? [])].find(
        (x) => x.address === hostPort(e.ip, e.port) || x.inferredIP === e.ip,
      );
      if (!ep) continue; // no KUBE-SEP chain at all: the Rules step says so
      const rules = ctx.chainEvidence(node, 'nat', ep.chain);
      if (ep.hairpinMasquerade) {
        present.push(...rules.filter((r) => r.includes('KUBE-MARK-MASQ')));
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
  if (out.length === 0 && present.length > 0)
    out.push(
      hairpinPresent(
        "Every endpoint's KUBE-SEP chain on its own node marks hairpin traffic for masquerade.",
        present,
      ),
    );
  return out;
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
  const present: string[] = [];
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
        (x) => x.address === hostPort(e.ip, e.port),
      );
      if (!ep) continue; // not in the table at all: the Rules step says so
      const element = `${e.ip} . ${e.ip} . ${port.protocol.toLowerCase()} . ${e.port}`;
      if (ep.hairpinMasquerade) {
        present.push(
          `${nft.source}: ${ep.chain.startsWith('endpoint-') && !nft.table.set('hairpin-connections') ? `${ep.chain}: ip saddr ${e.ip} jump mark-for-masquerade` : `set hairpin-connections holds ${element}`}`,
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
            evidence: [nft.source],
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
  if (out.length === 0 && present.length > 0)
    out.push(
      hairpinPresent(
        "On its own node every endpoint's hairpin connection is masqueraded by kube-proxy's nftables table.",
        present,
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
  const present: string[] = [];
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    for (const e of ctx.endpoints(port).filter((x) => x.ready && x.nodeName)) {
      const node = e.nodeName!;
      const family = e.ip.includes(':') ? 'IPv6' : 'IPv4';
      const n = ctx.analysis.node(node, undefined, family);
      const read = n.mode() === 'ipvs' ? n.ipvs()?.read : undefined;
      if (!read?.ipsets) continue;
      const ep = n
        .trees(ctx.scope)
        ?.services.find((t) => t.name === spn)
        ?.endpoints.find((x) => x.address === hostPort(e.ip, e.port));
      // not a real server there at all: the Rules step says so
      if (!ep) continue;
      const set = ipsetName('KUBE-LOOP-BACK', family);
      const entry = loopBackEntry(e.ip, port.protocol.toLowerCase(), e.port);
      const nat = n.rules()?.ruleset?.table('nat');
      const rule = nat
        ?.chain('KUBE-POSTROUTING')
        ?.ruleIds.map((id) => nat.text(id))
        .find((text) => LOOP_BACK_RULE.test(text));
      const source = read.ipsetsSource ?? 'ipset';
      // the trees mark an endpoint in the node's KUBE-LOOP-BACK set
      if (ep.hairpinMasquerade && rule) {
        present.push(`${source}: ${set} holds ${entry}`, `${n.rules()!.source}: ${rule}`);
        continue;
      }
      out.push(
        finding(
          'hairpin-masquerade-missing',
          'fail',
          `${e.podName ?? e.ip} cannot reach itself through the Service: ${node} does not masquerade it (IPVS mode)`,
          {
            explanation: `When ${e.podName ?? 'the Pod'} (${e.ip}) connects to the Service and IPVS balances it to itself, source and destination are both ${e.ip}; kube-proxy lists such endpoints in the ${set} ipset (${entry}) and KUBE-POSTROUTING masquerades what matches it, and on ${node} ${rule ? `the set lacks that entry` : `the nat table has no such masquerade rule`}: the reply goes back inside the Pod from its own address and the connection hangs.`,
            evidence: [
              source,
              ...(rule
                ? []
                : [
                    `${n.rules()?.source ?? 'no nat table read'}: no KUBE-POSTROUTING rule matching ${set}`,
                  ]),
            ],
            next: onNode(node, ['ipset', 'list', set], { hostBinaries: true }),
            node,
            service: spn,
          },
        ),
      );
    }
  }
  if (out.length === 0 && present.length === 0) return undefined;
  return out.length > 0
    ? out
    : [
        hairpinPresent(
          "On its own node every endpoint is in kube-proxy's KUBE-LOOP-BACK ipset, which KUBE-POSTROUTING masquerades.",
          present,
        ),
      ];
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
    if (found.length === 0 && !ctx.endpointAddresses().some((e) => e.ready))
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
