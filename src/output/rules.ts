// The `kdebug rules` presentations: Service trees as an indented tree a person reads, or JSON.
import type { SearchHit } from '../core/dataplane/search/search.js';
import { count } from '../core/checks/check.js';
import { sanitize, jsonText } from '../core/sanitize.js';
import type { ServiceTree, ServiceTrees, TreeEndpoint } from '../core/dataplane/trees.js';
import { schemaId } from './schema-id.js';
import { wrapIndented } from './wrap.js';
import {
  ciliumBackends,
  dropEntries,
  headline,
  isCilium,
  isIpvs,
  isNft,
  nftCounts,
  realServers,
  type RulesDump,
} from './rules/dump.js';
import { orphansUnproven } from '../core/dataplane/orphans.js';
import { nftNoService, noServiceRules, unprovenText, type Held } from './rules/no-service.js';
import { treeText } from './rules/tree-text.js';
import { dumpWarnings, warningLines, type RulesWarning } from './rules/warnings.js';

export type { RulesDump } from './rules/dump.js';

/** 2: Cilium's listings (mode cilium, form, frontends and backends counts, backendState). */
export const RULES_SCHEMA_VERSION = 2;
export const RULES_SEARCH_SCHEMA_VERSION = 1;

export interface RulesSource {
  /** "snapshot DIR node NODE", "file PATH", "ssh root@host" ... */
  label: string;
  node?: string;
  /** The file the warnings' lines count in: FILE:LINE in the text. */
  file?: string;
  /** A node's dump (recorded in a snapshot, read over ssh), not a paste: said "the dump". */
  held?: Held;
  /** What the command says of the paste as a whole (a paste of several hosts' output). */
  warnings?: RulesWarning[];
  /** The paste's lines not read (another host's output): the reader's warnings at them unsaid. */
  unread?: number[];
}

/** The warnings of the paste as a whole, then the reader's. */
const warningsOf = (dump: RulesDump, source: RulesSource): RulesWarning[] => {
  const unread = new Set(source.unread);
  return [
    ...(source.warnings ?? []),
    ...dumpWarnings(dump).filter((w) => w.line === null || !unread.has(w.line)),
  ];
};

/** The node's Service trees as text at `width` columns (none: unwrapped). */
export function rulesText(
  dump: RulesDump,
  trees: ServiceTrees,
  source: RulesSource,
  width = Infinity,
): string {
  const held = source.held ?? 'paste';
  const out = [headline(dump, source.label)];
  // an nft or ipvsadm paste's skipped lines are told on stderr as it is read
  const said = warningsOf(dump, source).filter(
    (w) => !(isNft(dump) || isIpvs(dump)) || w.kind !== 'skipped',
  );
  out.push(...warningLines(said, source.file));
  out.push('');
  if (trees.services.length === 0)
    out.push(
      isCilium(dump)
        ? dump.cut
          ? `no Service found in the ${held}: the listing is not whole (line ${dump.cut[0]!.line}: ${dump.cut[0]!.reason})`
          : 'no Service found (no frontend in the listing)'
        : isIpvs(dump)
          ? dump.noAddress
            ? `no Service found: the listing's virtual server lines hold no address (line ${dump.noAddress[0]})`
            : dump.cut !== undefined
              ? `no Service found: the ${held} is cut at line ${dump.cut}, before any virtual server line (what the node holds is not in it)`
              : dump.elided.length > 0
                ? `no Service found in the ${held}: the listing is not whole (line ${dump.elided[0]} elides part of it)`
                : 'no Service found (no virtual server in the listing)'
          : isNft(dump)
            ? nftNoService(dump, held)
            : noServiceRules(dump, held),
    );
  for (const t of trees.services) out.push(...treeText(t, held), '');
  const unproven = orphansOf(dump, held);
  const chains = trees.orphans
    .map(
      (o) =>
        `${o.chain} (${o.family ? `${o.family}, ` : ''}${o.partial ? `${count(o.rules, 'rule')} in the ${held}, ${o.partial}` : count(o.rules, 'rule')})`,
    )
    .join(', ');
  // a table read in part proves no chain unreached: they are named, not called orphans
  if (!isCilium(dump))
    out.push(
      trees.orphans.length === 0
        ? unproven
          ? `orphan chains: not known (${unproven})`
          : 'orphan chains: none'
        : unproven
          ? `chains no rule in the ${held} reaches, not called orphans (${unproven}): ${chains}`
          : `orphan chains (no entry point reaches them): ${chains}`,
    );
  const shown = new Set<ServiceTree>();
  for (const o of trees.orphans)
    if (o.tree && !shown.has(o.tree)) {
      shown.add(o.tree);
      // a chain declared alone: nothing of what it does is in the paste
      const ruled = trees.orphans.some((p) => p.tree === o.tree && p.rules > 0);
      out.push(
        '',
        `what ${o.tree.chains.svc ?? o.chain} would do if an entry point reached it${ruled ? '' : ` (it holds no rules in the ${held})`}:`,
      );
      out.push(...treeText(o.tree, held));
    }
  return wrapIndented(out, width).join('\n') + '\n'; // wrap sanitises
}

/** An endpoint in the document `rules -o json` prints (schema/rules.vN.json), in its order. */
interface EndpointDoc {
  address: string | null;
  inferredIP?: string;
  chain: string;
  probability: number | null;
  shareUnknown?: string;
  addressFromComment?: boolean;
  addressFromName?: boolean;
  portUnknown?: TreeEndpoint['portUnknown'];
  hostStart?: TreeEndpoint['hostStart'];
  hairpinMasquerade: boolean | null;
  backendState?: string | null;
  preferred?: boolean;
  weight?: number;
  maglev?: { entries: number; of: number };
  affinity: boolean;
  chainMissing?: boolean;
  chainPartial?: string;
  quirk?: string;
  forward?: TreeEndpoint['forward'];
  line: number;
}

/** An endpoint without the optional fields of EndpointDoc (a Cilium backend's state aside). */
const plain = (ep: TreeEndpoint) =>
  !ep.inferredIP &&
  !ep.shareUnknown &&
  !ep.addressFromComment &&
  !ep.addressFromName &&
  !ep.portUnknown &&
  !ep.hostStart &&
  ep.cilium?.preferred === undefined &&
  ep.cilium?.weight === undefined &&
  ep.cilium?.maglev === undefined &&
  !ep.chainMissing &&
  !ep.chainPartial &&
  !ep.quirk &&
  !ep.forward;

/** The document `rules -o json` prints (schema/rules.vN.json). */
export function rulesDoc(dump: RulesDump, trees: ServiceTrees, source: RulesSource) {
  const unproven = orphansOf(dump, source.held ?? 'paste');
  const endpoint = (ep: TreeEndpoint): EndpointDoc => {
    // most endpoints carry no optional field but a Cilium backend's state: one literal, all its
    // fields in the object (built field by field, each went on in a property array of its own)
    if (plain(ep))
      return ep.cilium
        ? {
            address: ep.address ?? null,
            chain: ep.chain,
            probability: ep.probability,
            hairpinMasquerade: ep.hairpinMasquerade,
            backendState: ep.cilium.state ?? null,
            affinity: ep.affinity,
            line: ep.line,
          }
        : {
            address: ep.address ?? null,
            chain: ep.chain,
            probability: ep.probability,
            hairpinMasquerade: ep.hairpinMasquerade,
            affinity: ep.affinity,
            line: ep.line,
          };
    // field by field, in the document's order: a spread per optional field made a big listing's
    // endpoints cost as much as their JSON
    const out: EndpointDoc = { address: ep.address ?? null } as EndpointDoc;
    if (ep.inferredIP) out.inferredIP = ep.inferredIP;
    out.chain = ep.chain;
    out.probability = ep.shareUnknown ? null : ep.probability;
    if (ep.shareUnknown) out.shareUnknown = ep.shareUnknown;
    if (ep.addressFromComment) out.addressFromComment = true;
    if (ep.addressFromName) out.addressFromName = true;
    if (ep.portUnknown) out.portUnknown = ep.portUnknown;
    if (ep.hostStart) out.hostStart = ep.hostStart;
    out.hairpinMasquerade = ep.hairpinMasquerade;
    if (ep.cilium) out.backendState = ep.cilium.state ?? null;
    if (ep.cilium?.preferred !== undefined) out.preferred = ep.cilium.preferred;
    if (ep.cilium?.weight !== undefined) out.weight = ep.cilium.weight;
    if (ep.cilium?.maglev) out.maglev = ep.cilium.maglev;
    out.affinity = ep.affinity;
    if (ep.chainMissing) out.chainMissing = true;
    if (ep.chainPartial) out.chainPartial = ep.chainPartial;
    if (ep.quirk) out.quirk = ep.quirk;
    if (ep.forward) out.forward = ep.forward;
    out.line = ep.line;
    return out;
  };
  const tree = (t: ServiceTree) => ({
    name: t.name ?? null,
    id: t.id,
    protocol: t.protocol,
    clusterIP: t.clusterIP ?? null,
    port: t.port ?? null,
    nodePort: t.nodePorts[0] ?? null,
    externalIPs: t.externalIPs,
    loadBalancerIPs: t.loadBalancerIPs,
    chains: t.chains,
    ...(t.absentChains ? { absentChains: t.absentChains } : {}),
    ...(t.entryAbsent ? { entryAbsent: true } : {}),
    ...(t.partial ? { partial: t.partial } : {}),
    entries: t.entries.map((e) => ({ ...e, port: e.port ?? null })),
    masquerade: t.masquerade,
    endpoints: t.endpoints.map(endpoint),
    ...(t.localEndpoints ? { localEndpoints: t.localEndpoints.map(endpoint) } : {}),
    fallThrough: t.partial ? null : t.fallThrough,
    ...(t.affinitySeconds !== undefined ? { affinitySeconds: t.affinitySeconds } : {}),
    verdicts: t.verdicts,
    ...(t.family ? { family: t.family } : {}),
  });
  return {
    $schema: schemaId('rules', RULES_SCHEMA_VERSION),
    schemaVersion: RULES_SCHEMA_VERSION,
    source: source.label,
    node: source.node ?? null,
    ...(isCilium(dump)
      ? {
          mode: 'cilium',
          form: dump.form,
          counts: {
            frontends: dump.frontends.length - dropEntries(dump),
            backends: ciliumBackends(dump),
            ...(dropEntries(dump) > 0 ? { dropEntries: dropEntries(dump) } : {}),
          },
          warnings: warningsOf(dump, source),
        }
      : isIpvs(dump)
        ? {
            mode: 'ipvs',
            view: dump.view,
            counts: { virtualServers: dump.services.length, realServers: realServers(dump) },
            warnings: warningsOf(dump, source),
          }
        : isNft(dump)
          ? {
              mode: 'nftables',
              counts: nftCounts(dump),
              warnings: warningsOf(dump, source),
            }
          : {
              mode: 'iptables',
              counts: {
                tables: dump.tables.length,
                chains: dump.chainCount,
                rules: dump.ruleCount,
              },
              warnings: warningsOf(dump, source),
              ...(dump.foreign.length > 0 ? { foreign: dump.foreign } : {}),
              tables: dump.tables.map((t) => ({
                name: t.name,
                family: t.family,
                line: t.startLine ?? null,
              })),
            }),
    services: trees.services.map(tree),
    orphans: trees.orphans.map((o) => ({
      chain: o.chain,
      ...(o.family ? { family: o.family } : {}),
      rules: o.rules,
      ...(o.partial ? { partial: o.partial } : {}),
      ...(unproven ? { reachUnknown: unproven } : {}),
      ...(o.tree ? { tree: tree(o.tree) } : {}),
    })),
  };
}

export const rulesJson = (dump: RulesDump, trees: ServiceTrees, source: RulesSource): string =>
  jsonText(rulesDoc(dump, trees, source));

export function searchText(query: string, hits: SearchHit[], width = Infinity): string {
  if (hits.length === 0) return `no match for "${sanitize(query)}"\n`;
  const out = [`${hits.length} matches for "${query}", best first:`]; // sanitised with the rest
  for (const h of hits) {
    const where = [
      h.table && h.chain && h.kind === 'rule'
        ? `${h.table} ${h.chain}${h.line ? ` line ${h.line}` : ''}`
        : '',
      h.service && h.service !== h.text ? `Service ${h.service}` : '',
    ]
      .filter(Boolean)
      .join('  ');
    out.push(`  ${h.kind.padEnd(8)} ${h.text}${where ? `   ${where}` : ''}`);
  }
  return wrapIndented(out, width).join('\n') + '\n';
}

/** The document `rules --search -o json` prints (schema/rules-search.vN.json). */
export const searchDoc = (query: string, hits: SearchHit[]) => ({
  $schema: schemaId('rules-search', RULES_SEARCH_SCHEMA_VERSION),
  schemaVersion: RULES_SEARCH_SCHEMA_VERSION,
  query,
  hits,
});

export const searchJson = (query: string, hits: SearchHit[]): string =>
  jsonText(searchDoc(query, hits));

/** Why the dump proves no chain an orphan, in words (IPVS and Cilium have none to prove). */
function orphansOf(d: RulesDump, held: Held): string | undefined {
  const unproven = isCilium(d) || isIpvs(d) ? undefined : orphansUnproven(d);
  return unproven && unprovenText(unproven, held);
}
