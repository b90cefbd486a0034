// Reading Facts: which nodes were recorded and the rules dump of each. Pure lookups, no verdicts.
import { CILIUM_STEMS } from '../dataplane/cilium/agent/agent.js';
import { hasKubeChains } from '../dataplane/iptables/backend.js';
import type { IPFamily } from '../ipv6.js';
import { chainListings, listedBackend, listingText } from '../dataplane/iptables/service-chains.js';
import type { Facts, NodeOutputs } from '../model.js';
import { chainStemPrefix, commandStem } from '../nodes/commands.js';

/** The file stems a node's rules can be stored under, best first. */
export const DUMP_STEMS = ['iptables-save', 'iptables-nft-save', 'iptables-legacy-save'];

/** The same for each family's proxier: iptables for IPv4, ip6tables for IPv6. */
export const FAMILY_DUMP_STEMS = {
  IPv4: DUMP_STEMS,
  IPv6: ['ip6tables-save', 'ip6tables-nft-save', 'ip6tables-legacy-save'],
} as const;

export interface NodeDump {
  /** Where it came from, e.g. "nodes/vm-12-7-centos/iptables-save.txt". */
  source: string;
  /** The node command's stem, e.g. "iptables-save". */
  stem: string;
  text: string;
  /** One Service's nat chains read by name (`text`, in `iptables -S` form), with kube-proxy's
   * filter chains by name (`filter.read`) or the filter table whole (no `read`): nothing is known
   * of the chains not read. */
  chains?: {
    read: ReadonlySet<string>;
    filter?: { source: string; text: string; read?: ReadonlySet<string> };
  };
}

/** Nodes with at least one recorded output, sorted. */
export function recordedNodes(facts: Facts): string[] {
  return Object.keys(facts.nodes).sort();
}

/** The node's iptables-save output, if recorded: the first with kube-proxy's chains, else the first. */
export function nodeDump(
  facts: Facts,
  node: string,
  family: IPFamily = 'IPv4',
): NodeDump | undefined {
  const outputs = facts.nodes[node];
  if (!outputs) return undefined;
  const present = FAMILY_DUMP_STEMS[family].filter((stem) => stem in outputs);
  // the default iptables-save may read the backend kube-proxy does not write to
  const stem =
    present.length > 1
      ? (present.find((s) => hasKubeChains(outputs[s]!)) ?? present[0])
      : present[0];
  if (stem === undefined) return chainsDump(outputs, node, family);
  return {
    source: `nodes/${node}/${stem}.txt`,
    stem,
    text: outputs[stem]!,
  };
}

/** The nat chains one Service's answer read by name, where no whole dump was read. */
function chainsDump(outputs: NodeOutputs, node: string, family: IPFamily): NodeDump | undefined {
  const tool = family === 'IPv6' ? 'ip6tables' : 'iptables';
  const backend = listedBackend(outputs, tool);
  if (!backend) return undefined;
  const listings = chainListings(outputs, tool, backend);
  const stem = chainStemPrefix(tool, backend);
  const filters = chainListings(outputs, tool, backend, 'filter');
  const filter = commandStem({ kind: `${tool}-save`, backend, table: 'filter' });
  return {
    source: `nodes/${node}/${stem}*.txt`,
    stem,
    get text() {
      return listingText(listings);
    },
    chains: {
      read: new Set(listings.keys()),
      ...(filters.size > 0
        ? {
            filter: {
              source: `nodes/${node}/${chainStemPrefix(tool, backend, 'filter')}*.txt`,
              text: listingText(filters),
              read: new Set(filters.keys()),
            },
          }
        : filter in outputs
          ? { filter: { source: `nodes/${node}/${filter}.txt`, text: outputs[filter]! } }
          : {}),
    },
  };
}

/** Where a node's nftables table of one family is recorded: as JSON, else as its listing (an
 * nft without JSON). */
export function nftStems(family: IPFamily): { json: string; text: string } {
  const f = family === 'IPv6' ? 'ip6' : 'ip';
  return {
    json: commandStem({ kind: 'nft-list', family: f }),
    text: commandStem({ kind: 'nft-list', family: f, format: 'text' }),
  };
}

/** The family whose rules the node recorded, IPv4 first (a node may have recorded only its
 * ip6tables-save); undefined when it recorded none. */
export function recordedFamily(facts: Facts, node: string): IPFamily | undefined {
  return (['IPv4', 'IPv6'] as const).find((f) => hasRules(facts, node, f));
}

/** Why a node's rules of `family` cannot be read: none recorded, naming the dump that is not
 * there and, where the node recorded its other family's, that those are (the one to ask for).
 * `named`: the node named, for a message alone; else a reason said beside the node's name. */
export function familyNotRecorded(
  facts: Facts,
  node: string,
  family: IPFamily,
  named = true,
): string {
  const other: IPFamily = family === 'IPv6' ? 'IPv4' : 'IPv6';
  const dump = family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
  const has = hasRules(facts, node, other);
  return `no ${family} rules recorded${named ? ` for node "${node}"` : ''} (no nodes/${node}/${dump}.txt${has ? `; its ${other} rules are recorded` : ''})`;
}

/** The node recorded its rules of a family: an ip(6)tables dump, kube-proxy's nftables table,
 * or its Cilium agent's table (both families in one, counted as IPv4's). */
export function hasRules(facts: Facts, node: string, family: IPFamily = 'IPv4'): boolean {
  const outputs = facts.nodes[node];
  if (!outputs) return false;
  const { json, text } = nftStems(family);
  // `in`, not a read: a snapshot reads a node's output on first use
  return (
    nodeDump(facts, node, family) !== undefined ||
    json in outputs ||
    text in outputs ||
    (family === 'IPv4' && CILIUM_TABLES.some((stem) => stem in outputs))
  );
}

/** The agent listings that hold a Cilium node's frontends. */
const CILIUM_TABLES = [CILIUM_STEMS.frontends, CILIUM_STEMS.serviceList, CILIUM_STEMS.bpf];
