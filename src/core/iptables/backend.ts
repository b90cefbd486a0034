// Which iptables backend holds kube-proxy's chains on a node (legacy, nft or both), and which
// proxy mode a node's rules show, read from the raw dumps in Facts. Pure: text in, findings out.
import type { NodeOutputs } from '../model.js';

export type IptablesBackend = 'legacy' | 'nft';

/** What the dumps of one node say about the two backends. */
export interface NodeBackends {
  /** kube-proxy's chains are in: one backend, both (one set is stale), none, or unknown (not read). */
  chains: IptablesBackend | 'both' | 'none' | 'unknown';
  /** Per backend: true when its dump has KUBE-SERVICES, false when read without, absent when not read. */
  kubeChains: Partial<Record<IptablesBackend, boolean>>;
  /** The stems this was read from, e.g. "iptables-legacy-save-nat". */
  sources: string[];
  /** iptables-nft-save said "iptables-legacy tables present" (its own warning line). */
  legacyTablesWarning: boolean;
}

/** kube-proxy's entry chain: in iptables and in ipvs mode it is declared in the nat table. */
const KUBE_SERVICES = /^:KUBE-SERVICES /m;
const LEGACY_WARNING = /^# Warning: iptables-legacy tables present/m;

export const hasKubeChains = (dump: string): boolean => KUBE_SERVICES.test(dump);

/** The stems a backend's dump may be stored under, nat-only first (that is where the chains are). */
const STEMS: Record<IptablesBackend, string[]> = {
  legacy: ['iptables-legacy-save-nat', 'iptables-legacy-save'],
  nft: ['iptables-nft-save-nat', 'iptables-nft-save'],
};

export function nodeBackends(outputs: NodeOutputs | undefined): NodeBackends {
  const kubeChains: NodeBackends['kubeChains'] = {};
  const sources: string[] = [];
  for (const backend of ['legacy', 'nft'] as const) {
    const read = STEMS[backend].filter((s) => outputs?.[s] !== undefined);
    if (read.length === 0) continue;
    kubeChains[backend] = read.some((s) => hasKubeChains(outputs![s]!));
    sources.push(...read);
  }
  const legacyTablesWarning = ['iptables-save', ...STEMS.nft].some((s) =>
    LEGACY_WARNING.test(outputs?.[s] ?? ''),
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
export function backendToRead(outputs: NodeOutputs | undefined): IptablesBackend | undefined {
  const auto = outputs?.['iptables-save'];
  if (auto !== undefined && hasKubeChains(auto)) return undefined;
  for (const backend of ['legacy', 'nft'] as const) {
    if (outputs?.[`iptables-${backend}-save`] !== undefined) continue;
    const nat = outputs?.[`iptables-${backend}-save-nat`];
    if (nat !== undefined && hasKubeChains(nat)) return backend;
  }
  return undefined;
}

export type RulesMode = 'iptables' | 'ipvs';

/**
 * The proxy mode a rules dump shows: IPVS mode matches ClusterIPs through the KUBE-CLUSTER-IP
 * ipset, iptables mode writes KUBE-SVC-* chains. nftables mode leaves nothing in iptables.
 */
export function modeFromRules(dump: string): RulesMode | undefined {
  if (/--match-set KUBE-CLUSTER-IP /.test(dump)) return 'ipvs';
  if (/^:KUBE-(SVC|SEP)-/m.test(dump)) return 'iptables';
  return undefined;
}
