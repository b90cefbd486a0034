// One Service's nat chains, read by name (`iptables -t nat -S CHAIN`) where its answer does not
// need the node's whole table: the entry chains kube-proxy always writes, the chains its hash
// names for the Service, and every KUBE- chain those jump to, until none is left. The bytes read
// grow with the Service, not with the cluster. Pure: the cluster layer runs what this asks for.
import { kubeProxyChain, type ServiceChainPrefix } from '../kube-proxy/chain-names.js';
import { IptablesParseError, parseIptables, type Table } from './read/parse.js';
import {
  findService,
  servicePortName,
  type ClusterView,
  type Service,
} from '../../kube/objects.js';
import type { NodeOutputs } from '../../model.js';
import { chainStemPrefix, type Backend, type NodeCommand } from '../../nodes/commands.js';

export type IptablesTool = 'iptables' | 'ip6tables';

/** The nat chains every Service's packets pass or kube-proxy's masquerading needs. */
export const ENTRY_CHAINS = [
  'PREROUTING',
  'OUTPUT',
  'POSTROUTING',
  'KUBE-SERVICES',
  'KUBE-NODEPORTS',
  'KUBE-POSTROUTING',
  'KUBE-MARK-MASQ',
  'KUBE-MARK-DROP',
] as const;

/** The filter chains kube-proxy writes, and the built-in ones that jump to them. */
export const FILTER_CHAINS = [
  'INPUT',
  'FORWARD',
  'OUTPUT',
  'KUBE-SERVICES',
  'KUBE-EXTERNAL-SERVICES',
  'KUBE-FORWARD',
  'KUBE-NODEPORTS',
  'KUBE-PROXY-FIREWALL',
  'KUBE-FIREWALL',
] as const;

/** A Service whose chains are more than this is read whole: its own chains are most of it. */
export const MOST_CHAINS = 400;

const PREFIXES: ServiceChainPrefix[] = ['KUBE-SVC', 'KUBE-SVL', 'KUBE-EXT', 'KUBE-FW', 'KUBE-XLB'];

/** The chain listings of one tool, backend and table a node recorded: chain -> its `-S` output
 * ('' for a chain the node does not have). */
export function chainListings(
  outputs: NodeOutputs | undefined,
  tool: IptablesTool,
  backend: Backend,
  table: 'nat' | 'filter' = 'nat',
): Map<string, string> {
  const prefix = chainStemPrefix(tool, backend, table);
  const found = new Map<string, string>();
  for (const stem of Object.keys(outputs ?? {}).sort())
    if (stem.startsWith(prefix)) found.set(stem.slice(prefix.length), outputs![stem]!);
  return found;
}

/** The backend whose chains were read for a Service: the one that has KUBE-SERVICES. */
export function listedBackend(
  outputs: NodeOutputs | undefined,
  tool: IptablesTool,
): Backend | undefined {
  const has = (b: Backend) => chainListings(outputs, tool, b).get('KUBE-SERVICES');
  return (['auto', 'legacy', 'nft'] as const).find((b) => has(b));
}

/** The listings as one table's `iptables -S` text: the policies, the chains, then the rules
 * chain by chain in name order, as iptables lists a whole table (one listing, not several). */
export function listingText(listings: Map<string, string>): string {
  const rank = (line: string) => (line.startsWith('-P ') ? 0 : line.startsWith('-N ') ? 1 : 2);
  const lines = [...listings.values()]
    .flatMap((t) => t.split('\n'))
    .filter((l) => l !== '')
    .sort((a, b) => rank(a) - rank(b));
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/**
 * The chains still to read for `target`'s answer on a node, given what it recorded: none when
 * every chain the Service's rules reach was read; 'whole' when they are too many to read by name.
 */
export function serviceChainReads(
  view: ClusterView,
  target: { namespace: string; name: string },
  outputs: NodeOutputs | undefined,
  tool: IptablesTool,
  backend: Backend,
): NodeCommand[] | 'whole' {
  const svc = findService(view, target.namespace, target.name);
  const listings = chainListings(outputs, tool, backend);
  const wanted = new Set<string>(ENTRY_CHAINS);
  for (const p of svc?.ports ?? [])
    for (const prefix of PREFIXES)
      wanted.add(kubeProxyChain(prefix, servicePortName(svc!, p), p.protocol));
  if (svc) for (const chain of reachedChains(listings, 'nat', svc)) wanted.add(chain);
  // kube-proxy's filter chains: its REJECT and DROP rules, and the jumps to them
  const filters = chainListings(outputs, tool, backend, 'filter');
  const wantedFilter = new Set<string>(FILTER_CHAINS);
  for (const chain of reachedChains(filters, 'filter')) wantedFilter.add(chain);
  if (wanted.size + wantedFilter.size > MOST_CHAINS) return 'whole';
  return [
    ...[...wanted]
      .filter((chain) => !listings.has(chain))
      .map((chain): NodeCommand => ({ kind: 'iptables-chain', tool, backend, chain })),
    ...[...wantedFilter]
      .filter((chain) => !filters.has(chain))
      .map((chain): NodeCommand => ({
        kind: 'iptables-chain',
        tool,
        backend,
        chain,
        table: 'filter',
      })),
  ];
}

/** The Services' entry chains: a rule per Service port (per node port) of the cluster. */
export const FAN_OUT: readonly string[] = ['KUBE-SERVICES', 'KUBE-NODEPORTS'];

/** kube-proxy's rule for some Service port in an entry chain: its comment names the Service
 * ("ns/name:port ...") and it jumps to that port's chains (or marks its traffic). */
const SERVICE_RULE =
  /^-A KUBE-(?:SERVICES|NODEPORTS) .*--comment "?[a-z0-9][-a-z0-9]*\/[a-z0-9][-a-z0-9.]*[: "].* -j (KUBE-(?:SVC|SVL|EXT|FW|XLB|MARK-MASQ))\b/;

/**
 * An entry chain's listing with the rules of other Services left out, and how many: the rules
 * kube-proxy writes for a Service port that match none of `svc`'s addresses, node ports or name
 * can never take its packets, and on a large cluster they are most of the bytes kept per node.
 * Every other line stays (the node ports jump, a rule made by hand), in order.
 */
export function keepServiceRules(text: string, svc: Service): { text: string; dropped: number } {
  const { addresses, nodePorts, own } = serviceMarks(svc);
  const marks = [own, ...addresses, ...[...nodePorts].map((p) => `--dport ${p} `)];
  // in KUBE-NODEPORTS its ports too: an external IP on a node address comes there by its port
  const portMarks = svc.ports.map((p) => `--dport ${p.port} `);
  const ours = (l: string) =>
    marks.some((m) => l.includes(m)) ||
    (l.startsWith('-A KUBE-NODEPORTS ') && portMarks.some((m) => l.includes(m)));
  // one rule of each kind is kept all the same: the signs of kube-proxy's mode and release
  const signs = new Set<string>();
  let dropped = 0;
  const kept = text.split('\n').filter((l) => {
    const kind = SERVICE_RULE.exec(l)?.[1]; // the kind of chain it jumps to
    if (kind === undefined || ours(l)) return true;
    if (!signs.has(kind)) return (signs.add(kind), true);
    dropped++;
    return false;
  });
  return { text: kept.join('\n'), dropped };
}

/** What tells a rule of the Services' entry chains as the Service's: its addresses as iptables
 * prints a destination, its node ports, and the "NS/NAME" its comments begin with. */
function serviceMarks(svc: Service) {
  const addresses = new Set(
    [...svc.clusterIPs, ...svc.externalIPs, ...svc.loadBalancerIPs].map((ip) =>
      ip.includes(':') ? `${ip}/128` : `${ip}/32`,
    ),
  );
  const nodePorts = new Set(svc.ports.flatMap((p) => (p.nodePort ? [`${p.nodePort}`] : [])));
  return { addresses, nodePorts, own: `${svc.namespace}/${svc.name}` };
}

/** The listings with the Services' entry chains cut to the rules that can be this Service's (a
 * line without its address, node port or name cannot be): on a large cluster those chains hold a
 * rule per Service, and parsing them whole each round costs more than reading them. */
function ofServiceOnly(
  listings: Map<string, string>,
  { addresses, nodePorts, own }: ReturnType<typeof serviceMarks>,
): Map<string, string> {
  const marks = [own, ...addresses, ...nodePorts];
  const cut = new Map(listings);
  for (const chain of FAN_OUT) {
    const text = listings.get(chain);
    if (text === undefined) continue;
    const kept = text
      .split('\n')
      .filter((l) => l !== '' && (!l.startsWith('-A ') || marks.some((m) => l.includes(m))));
    cut.set(chain, kept.length > 0 ? `${kept.join('\n')}\n` : '');
  }
  return cut;
}

/** The chains the Service's packets can reach, in the chains of one table read so far; without
 * a Service (the filter table), every target of every chain read. */
function reachedChains(
  listings: Map<string, string>,
  table: 'nat' | 'filter',
  svc?: Service,
): Set<string> {
  const reached = new Set<string>();
  const marks = svc && serviceMarks(svc);
  const text = listingText(marks ? ofServiceOnly(listings, marks) : listings);
  if (text === '') return reached;
  let read: Table | undefined;
  try {
    read = parseIptables(text, { table }).table(table);
  } catch (e) {
    if (e instanceof IptablesParseError) return reached; // read as it is: the steps say why
    throw e;
  }
  if (!read) return reached;
  const jumps = (chain: string, only?: (id: number) => boolean) => {
    for (const id of read!.chain(chain)?.ruleIds ?? []) {
      if (only && !only(id)) continue;
      // a jump or goto to a chain, not an extension such as DNAT or MASQUERADE
      const target = read!.rule(id).target;
      if (target?.kind === 'chain') reached.add(target.name);
    }
  };
  if (!marks) {
    for (const chain of listings.keys()) jumps(chain);
    return reached;
  }
  const { addresses, nodePorts, own } = marks;
  const ofService = (id: number) => {
    const comment = read!.comment(id);
    const d = read!.destination(id);
    const port = read!.dport(id);
    return (
      (d !== undefined && addresses.has(d)) ||
      (port !== undefined && nodePorts.has(port) && read!.destination(id) === undefined) ||
      (comment !== undefined && (comment.startsWith(`${own}:`) || comment.startsWith(`${own} `)))
    );
  };
  // the Services' entry chains fan out to every Service: only this one's rules are followed
  for (const chain of FAN_OUT) jumps(chain, ofService);
  // every other chain read lies on this Service's path (the built-in chains and what they jump
  // to first, a CNI's or one made by hand included): every target is read
  for (const chain of listings.keys()) if (!FAN_OUT.includes(chain)) jumps(chain);
  return reached;
}
