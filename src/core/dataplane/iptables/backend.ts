// Which iptables backend holds kube-proxy's chains on a node (legacy, nft or both), and which
// proxy mode a node's rules show: from a dump's parsed rules where there are, else its text.
import type { Ruleset } from './read/parse.js';
import type { NodeOutputs } from '../../model.js';
import { commandStem } from '../../nodes/commands.js';

export type IptablesBackend = 'legacy' | 'nft';

/** What the dumps of one node say about the two backends. */
export interface NodeBackends {
  /** kube-proxy's chains are in: one backend, both (one set is stale), none, or unknown (not read). */
  chains: IptablesBackend | 'both' | 'none' | 'unknown';
  /** Per backend: true when its dump has KUBE-SERVICES, false when read without, absent when not read. */
  kubeChains: Partial<Record<IptablesBackend, boolean>>;
  /** The stems this was read from, e.g. "iptables-legacy-save-nat", or "ip_tables_names" where
   * that list shows the legacy nat table does not exist (and so holds no chain). */
  sources: string[];
  /** iptables-nft-save said "iptables-legacy tables present" (its own warning line). */
  legacyTablesWarning: boolean;
}

/** kube-proxy's entry chain: in iptables and in ipvs mode it is declared in the nat table; a
 * chain listing (`iptables -t nat -S`) declares it, or the small KUBE-POSTROUTING kube-proxy
 * writes with it, with -N. */
const KUBE_SERVICES = /^(?::KUBE-SERVICES |-N KUBE-(?:SERVICES|POSTROUTING)$)/m;
const LEGACY_WARNING = /^# Warning: iptables-legacy tables present/m;
const IPVS_MATCH = '--match-set KUBE-CLUSTER-IP ';

export const hasKubeChains = (dump: string): boolean => KUBE_SERVICES.test(dump);

export type RulesMode = 'iptables' | 'ipvs';

/** What one iptables dump shows of kube-proxy. */
export interface DumpSigns {
  /** kube-proxy's entry chain, KUBE-SERVICES, is declared in it. */
  kubeChains: boolean;
  /** iptables-nft-save's "iptables-legacy tables present" line. */
  legacyTablesWarning: boolean;
  mode: RulesMode | undefined;
  /** The names, one a line, where the text is the kernel's list of the legacy tables that exist
   * (/proc/net/ip_tables_names); undefined for a dump. */
  tableNames?: string[];
}

/** A list of table names: nothing but lower-case names, one a line (a dump's lines start with
 * `#`, `*`, `:`, `-` or are COMMIT). */
const TABLE_NAMES = /^(?:[a-z0-9_]+\n)*[a-z0-9_]*$/;

/** The signs read from a dump's text (one that was not parsed). */
export const textSigns = (dump: string): DumpSigns => ({
  kubeChains: hasKubeChains(dump),
  legacyTablesWarning: LEGACY_WARNING.test(dump),
  mode: modeFromRules(dump),
  ...(TABLE_NAMES.test(dump) ? { tableNames: dump.split('\n').filter(Boolean) } : {}),
});

/** The same signs read from a parsed dump: no second pass over its text. */
export function rulesetSigns(rs: Ruleset): DumpSigns {
  // each family's nat table: a dual-stack dump's first may be a part without KUBE-SERVICES
  const nats = rs.tables.filter((t) => t.name === 'nat');
  // IPVS mode matches every ClusterIP through one ipset rule in KUBE-SERVICES
  // (the flag first: a set match is an "other" match; 10,000 Service rules decode no text)
  const ipvs = nats.some((nat) =>
    nat
      .chain('KUBE-SERVICES')
      ?.ruleIds.some(
        (id) =>
          nat.hasOtherMatches(id) &&
          nat.targetChain(id)?.kind === undefined &&
          nat.text(id).includes(IPVS_MATCH),
      ),
  );
  const iptables = nats.some((nat) => nat.hasChainOfKind('KUBE-SVC', 'KUBE-SEP'));
  return {
    kubeChains: nats.some((nat) => nat.chain('KUBE-SERVICES')?.declared === true),
    legacyTablesWarning: rs.legacyWarning !== undefined,
    mode: ipvs ? 'ipvs' : iptables ? 'iptables' : undefined,
  };
}

/** The stems a backend's dump may be stored under, nat-only first (that is where the chains
 * are): iptables' for the IPv4 rules, ip6tables' for the IPv6 ones. */
const stemsOf = (tool: 'iptables' | 'ip6tables'): Record<IptablesBackend, string[]> => ({
  legacy: [`${tool}-legacy-save-nat`, `${tool}-legacy-save`, probeStem(tool, 'legacy')],
  nft: [`${tool}-nft-save-nat`, `${tool}-nft-save`, probeStem(tool, 'nft')],
});

/** Where one Service's answer asked a backend whether kube-proxy's chains are there. */
export const probeStem = (tool: 'iptables' | 'ip6tables', backend: IptablesBackend) =>
  commandStem({ kind: 'iptables-chain', tool, backend, chain: 'KUBE-POSTROUTING' });

/** The kernel's list of the legacy tables that exist, for each tool. */
const LEGACY_TABLES_STEM = {
  iptables: commandStem({ kind: 'proc-net', file: 'ip_tables_names' }),
  ip6tables: commandStem({ kind: 'proc-net', file: 'ip6_tables_names' }),
};

/**
 * A legacy nat table the kernel's list does not name does not exist: it holds no chain. kdebug
 * reads that list first and the table only where it is named (reading it by name would create
 * it), so the list stands for the dump it made unnecessary. Older captures have no list.
 */
function legacyNatAbsent(
  stems: readonly string[],
  signs: (stem: string) => DumpSigns | undefined,
  tool: 'iptables' | 'ip6tables',
): boolean {
  const list = LEGACY_TABLES_STEM[tool];
  const names = stems.includes(list) ? signs(list)?.tableNames : undefined;
  return names !== undefined && !names.includes('nat');
}

/** The backends of a node whose dumps are `stems`, each read through `signs`. */
export function nodeBackends(
  stems: readonly string[],
  signs: (stem: string) => DumpSigns | undefined,
  tool: 'iptables' | 'ip6tables' = 'iptables',
): NodeBackends {
  const STEMS = stemsOf(tool);
  const kubeChains: NodeBackends['kubeChains'] = {};
  const sources: string[] = [];
  for (const backend of ['legacy', 'nft'] as const) {
    const read = STEMS[backend].filter((s) => stems.includes(s));
    if (read.length > 0) {
      kubeChains[backend] = read.some((s) => signs(s)?.kubeChains);
      sources.push(...read);
    } else if (backend === 'legacy' && legacyNatAbsent(stems, signs, tool)) {
      kubeChains.legacy = false;
      sources.push(LEGACY_TABLES_STEM[tool]);
    }
  }
  const legacyTablesWarning = [`${tool}-save`, `${tool}-nft-save-filter`, ...STEMS.nft].some(
    (s) => stems.includes(s) && signs(s)?.legacyTablesWarning,
  );
  const { legacy, nft } = kubeChains;
  const chains =
    legacy && nft
      ? 'both'
      : legacy
        ? 'legacy'
        : nft
          ? 'nft'
          : legacy === false && nft === false
            ? 'none'
            : 'unknown';
  return { chains, kubeChains, sources, legacyTablesWarning };
}

/**
 * When the default `iptables-save` shows no kube-proxy chain but one backend's nat table has
 * them, that backend's whole dump is the one to read (the default binary reads the other one).
 */
export function backendToRead(
  outputs: NodeOutputs | undefined,
  tool: 'iptables' | 'ip6tables' = 'iptables',
): IptablesBackend | undefined {
  const auto = outputs?.[`${tool}-save`];
  if (auto !== undefined && hasKubeChains(auto)) return undefined;
  // one Service's chains were read by name there: nothing to read whole
  if (
    commandStem({ kind: 'iptables-chain', tool, backend: 'nft', chain: 'KUBE-SERVICES' }) in
    (outputs ?? {})
  )
    return undefined;
  for (const backend of ['legacy', 'nft'] as const) {
    if (outputs?.[`${tool}-${backend}-save`] !== undefined) continue;
    // its nat table, or the probe of one Service's read (its KUBE-POSTROUTING by name)
    const nat = [`${tool}-${backend}-save-nat`, probeStem(tool, backend)].map((s) => outputs?.[s]);
    if (nat.some((t) => t !== undefined && hasKubeChains(t))) return backend;
  }
  return undefined;
}

/**
 * The proxy mode a rules dump shows: IPVS mode matches ClusterIPs through the KUBE-CLUSTER-IP
 * ipset, iptables mode writes KUBE-SVC-* chains. nftables mode leaves nothing in iptables.
 */
export function modeFromRules(dump: string): RulesMode | undefined {
  if (dump.includes(IPVS_MATCH)) return 'ipvs';
  if (/^:KUBE-(SVC|SEP)-/m.test(dump)) return 'iptables';
  return undefined;
}
