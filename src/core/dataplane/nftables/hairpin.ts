// Hairpin in nftables mode: from 1.36 the masquerading chain masquerades what its
// hairpin-connections set lists ("podIP . podIP . proto . port" of each of the node's endpoints);
// before, the endpoint chain writes `ip saddr podIP jump mark-for-masquerade` instead.
import { onNode } from '../../findings/next-command.js';
import { ipv4 } from '../../ipv4.js';
import { ipv6 } from '../../ipv6.js';
import { type Hairpin, type HairpinQuery } from '../hairpin.js';
import type { TraceProtocol } from '../trace/packet.js';
import { hookChains, throughChains } from './chain-walk.js';
import { masqueradeFaults } from './drift/masquerade-path.js';
import { missingSets, type NftTable } from './read/listing.js';
import { ruleText } from './render.js';

export const NFTABLES_HAIRPIN =
  "On its own node each endpoint's hairpin connection is masqueraded by kube-proxy's nftables table.";

export function nftablesHairpin(t: NftTable, source: string, q: HairpinQuery): Hairpin {
  const ep = q.endpoint;
  // not in the table at all: the Rules step says so
  if (!ep) return { kind: 'not-checked', why: 'not in its table' };
  const element = `${q.ip} . ${q.ip} . ${q.protocol.toLowerCase()} . ${q.port}`;
  if (ep.hairpinMasquerade)
    return (
      unmasqueraded(t, source, q) ?? {
        kind: 'masqueraded',
        lines: [
          {
            text: `${source}: ${ep.chain.startsWith('endpoint-') && !t.set('hairpin-connections') ? `${ep.chain}: ip saddr ${q.ip} jump mark-for-masquerade` : `set hairpin-connections holds ${element}`}`,
            source,
          },
        ],
      }
    );
  // the trees mark only what they saw masqueraded: a listing cut short may hold the rest
  if (t.cut || t.elided)
    return { kind: 'not-checked', why: 'its listing of the table is abridged' };
  // no set: before 1.33 the endpoint chain holds the rule, so only that chain, read, tells
  if (!t.set('hairpin-connections')) {
    if (missingSets(t).includes('hairpin-connections'))
      return { kind: 'not-checked', why: 'its listing leaves out the hairpin-connections set' };
    const noMarkChain = !t.chain('mark-for-masquerade');
    if (!t.chain(ep.chain))
      return {
        kind: 'not-checked',
        why: `its listing holds neither the hairpin-connections set nor ${ep.chain}`,
      };
    return {
      kind: 'missing',
      title: `${q.node}'s nftables table does not masquerade it`,
      explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and is balanced to itself, source and destination are both ${q.ip}; kube-proxy before 1.36 writes "ip saddr ${q.ip} jump mark-for-masquerade" in the endpoint's chain, and a chain mark-for-masquerade that marks the packet for masquerading, so the source is rewritten; ${ep.chain} on ${q.node} lacks the jump${noMarkChain ? ', and the table has no chain mark-for-masquerade' : ''}: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites its table when it restarts.`,
      lines: [
        {
          text: `${source}: ${ep.chain}: no rule ip saddr ${q.ip} jump mark-for-masquerade`,
          source,
        },
        ...(noMarkChain ? [{ text: `${source}: no chain mark-for-masquerade`, source }] : []),
      ],
      next: 'restart-kube-proxy',
      causes: [],
    };
  }
  return {
    kind: 'missing',
    title: `${q.node}'s nftables table does not masquerade it`,
    explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and is balanced to itself, source and destination are both ${q.ip}; kube-proxy lists such connections in the hairpin-connections set (${element}) so the masquerading chain rewrites the source, and ${q.node}'s table lacks that element: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites its table when it restarts.`,
    lines: [{ text: `${source}: no element ${element} in set hairpin-connections`, source }],
    next: onNode(
      q.node,
      [
        'nft',
        'list',
        'set',
        q.ip.includes(':') ? 'ip6' : 'ip',
        'kube-proxy',
        'hairpin-connections',
      ],
      {
        hostBinaries: true,
      },
    ),
    causes: [],
  };
}

/** The hairpin connection walked as the table takes it: its endpoint chain (the mark, before
 * 1.36) and DNAT, then the postrouting hook; where it leaves unmasqueraded, what breaks.
 * Undefined where it is masqueraded or the walk cannot say. */
function unmasqueraded(t: NftTable, source: string, q: HairpinQuery): Hairpin | undefined {
  const ep = q.endpoint!;
  const ip = ipv4(q.ip) ?? ipv6(q.ip);
  if (ip === undefined) return undefined;
  const chain = ep.chain.startsWith('endpoint-') ? t.chain(ep.chain) : undefined;
  const start = {
    src: ip,
    dst: ip,
    sport: 40000,
    dport: q.port,
    protocol: q.protocol.toLowerCase() as TraceProtocol,
    mark: 0,
    dnat: !chain,
    snat: false,
  };
  const dnatted = chain ? throughChains(t, [chain], start) : { pkt: start, end: 'ACCEPT' };
  if (!dnatted || dnatted.end !== 'ACCEPT') return undefined;
  const out = throughChains(t, hookChains(t, 'postrouting'), dnatted.pkt);
  if (!out || out.pkt.snat) return undefined;
  // before 1.36 the endpoint chain jumps to mark-for-masquerade: the mark it got says which
  // part of the path fails
  const mark = dnatted.pkt.mark;
  const viaMark = chain !== undefined && !t.set('hairpin-connections');
  const why = !viaMark
    ? 'nat-postrouting does not masquerade it'
    : mark === 0
      ? t.chain('mark-for-masquerade')
        ? 'mark-for-masquerade sets no mark'
        : 'there is no chain mark-for-masquerade'
      : (masqueradeFaults(t, mark, false) ?? []).join('; ') ||
        'nat-postrouting does not masquerade it';
  return {
    kind: 'missing',
    title: `${q.node}'s nftables table does not masquerade it`,
    explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and is balanced to itself, source and destination are both ${q.ip}; ${viaMark ? `${ep.chain} jumps to mark-for-masquerade` : 'kube-proxy lists it in hairpin-connections'}, but on ${q.node} ${why}: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites its table when it restarts.`,
    lines: ['mark-for-masquerade', 'masquerading'].flatMap((name) => {
      const c = t.chain(name);
      const text = !c
        ? `no chain ${name}`
        : `chain ${name}: ${c.rules.map((r) => ruleText(r)).join('; ') || 'no rules'}`;
      return [{ text: `${source}: ${text}`, source }];
    }),
    next: 'restart-kube-proxy',
    causes: ['masquerade-missing'],
  };
}
