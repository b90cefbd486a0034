// Hairpin in nftables mode: from 1.33 the masquerading chain masquerades what its
// hairpin-connections set lists ("podIP . podIP . proto . port" of each of the node's endpoints);
// 1.29-1.32 write `ip saddr podIP jump mark-for-masquerade` in the endpoint chain instead.
import { onNode } from '../../findings/next-command.js';
import { type Hairpin, type HairpinQuery } from '../hairpin.js';
import { missingSets, type NftTable } from './read/listing.js';

export const NFTABLES_HAIRPIN =
  "On its own node each endpoint's hairpin connection is masqueraded by kube-proxy's nftables table.";

export function nftablesHairpin(t: NftTable, source: string, q: HairpinQuery): Hairpin {
  const ep = q.endpoint;
  // not in the table at all: the Rules step says so
  if (!ep) return { kind: 'not-checked', why: 'not in its table' };
  const element = `${q.ip} . ${q.ip} . ${q.protocol.toLowerCase()} . ${q.port}`;
  if (ep.hairpinMasquerade)
    return {
      kind: 'masqueraded',
      lines: [
        {
          text: `${source}: ${ep.chain.startsWith('endpoint-') && !t.set('hairpin-connections') ? `${ep.chain}: ip saddr ${q.ip} jump mark-for-masquerade` : `set hairpin-connections holds ${element}`}`,
          source,
        },
      ],
    };
  // the trees mark only what they saw masqueraded: a listing cut short may hold the rest
  if (t.cut || t.elided)
    return { kind: 'not-checked', why: 'its listing of the table is abridged' };
  // no set: before 1.33 the endpoint chain holds the rule, so only that chain, read, tells
  if (!t.set('hairpin-connections')) {
    if (missingSets(t).includes('hairpin-connections'))
      return { kind: 'not-checked', why: 'its listing leaves out the hairpin-connections set' };
    if (!t.chain(ep.chain))
      return {
        kind: 'not-checked',
        why: `its listing holds neither the hairpin-connections set nor ${ep.chain}`,
      };
    return {
      kind: 'missing',
      title: `${q.node}'s nftables table does not masquerade it`,
      explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and is balanced to itself, source and destination are both ${q.ip}; kube-proxy before 1.33 writes "ip saddr ${q.ip} jump mark-for-masquerade" in the endpoint's chain so the source is rewritten, and ${ep.chain} on ${q.node} lacks it: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites its table when it restarts.`,
      lines: [
        {
          text: `${source}: ${ep.chain}: no rule ip saddr ${q.ip} jump mark-for-masquerade`,
          source,
        },
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
