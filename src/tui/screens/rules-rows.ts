// The Rules screen's tree as flat rows: Service -> entry points, masquerade, verdicts -> KUBE-SVC
// (and KUBE-SVL) -> endpoints. Opening and closing rows only changes which rows are listed; the
// raw rule lines behind a row are looked up in the parsed dump by line number.
import type { Ruleset } from '../../core/dataplane/iptables/read/parse.js';
import type { IPFamily } from '../../core/ipv6.js';
import type { NftTable } from '../../core/dataplane/nftables/read/listing.js';
import { ruleText } from '../../core/dataplane/nftables/render.js';
import {
  emptyTree,
  type EntryPoint,
  type MasqueradeRule,
  type OrphanChain,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
  type Verdict,
} from '../../core/dataplane/trees.js';
import { isPortOf, percent } from '../../core/model.js';

/** Whether a tree (or one of its chains) without endpoint rows may have some the paste does not
 * hold (a cut, a grep's window, a chain not pasted): then it is never said to have none. */
export const endpointsUnseen = (tree: ServiceTree, chain?: string): boolean =>
  tree.partial !== undefined ||
  (chain === undefined
    ? (tree.absentChains?.length ?? 0) > 0
    : (tree.absentChains?.includes(chain) ?? false));

export type RowKind =
  'service' | 'entry' | 'masquerade' | 'verdict' | 'chain' | 'endpoint' | 'note' | 'orphan';

export interface TreeRow {
  key: string;
  kind: RowKind;
  depth: number;
  tree: ServiceTree;
  /** Whether the row is open; undefined for rows without children. */
  open?: boolean;
  /** Index of the parent row. */
  parent?: number;
  chain?: string;
  entry?: EntryPoint;
  masquerade?: MasqueradeRule;
  verdict?: Verdict;
  endpoint?: TreeEndpoint;
  note?: string;
  /** A Service or endpoint chain no entry point reaches (left over). */
  orphan?: OrphanChain;
}

export const serviceKey = (t: ServiceTree) => `svc:${t.id}`;
export const chainKey = (t: ServiceTree, chain: string) => `chain:${t.id}:${chain}`;

/** Opens the target Service's tree by default and keeps the rest closed: the list stays short. */
export interface RowOptions {
  open: Record<string, boolean>;
  /** "ns/name": trees of this Service start open. */
  focus?: string;
}

const isFocus = (t: ServiceTree, focus: string | undefined) =>
  focus !== undefined && isPortOf(t.name, focus);

export function treeRows(trees: ServiceTrees, o: RowOptions): TreeRow[] {
  const rows: TreeRow[] = [];
  for (const tree of trees.services) {
    const key = serviceKey(tree);
    const open = o.open[key] ?? isFocus(tree, o.focus);
    const parent = rows.length;
    rows.push({ key, kind: 'service', depth: 0, tree, open });
    if (open) serviceChildren(rows, tree, parent, o);
  }
  // chains nothing reaches, after the Services: what a sync left behind, or a rule deleted by hand
  for (const orphan of trees.orphans)
    rows.push({
      key: `orphan:${orphan.chain}`,
      kind: 'orphan',
      depth: 0,
      tree: orphan.tree ?? emptyTree({ id: orphan.chain, protocol: '' }),
      chain: orphan.chain,
      orphan,
    });
  return rows;
}

function serviceChildren(rows: TreeRow[], tree: ServiceTree, parent: number, o: RowOptions) {
  const leaf = (r: Omit<TreeRow, 'tree' | 'parent' | 'depth'>, depth = 1, p = parent) =>
    rows.push({ ...r, tree, parent: p, depth });
  for (const e of tree.entries)
    leaf({ key: `entry:${tree.id}:${e.line}`, kind: 'entry', entry: e, chain: e.chain });
  for (const m of tree.masquerade)
    leaf({ key: `masq:${tree.id}:${m.line}`, kind: 'masquerade', masquerade: m, chain: m.chain });
  for (const v of tree.verdicts)
    leaf({
      key: `verdict:${tree.id}:${v.table}:${v.line}`,
      kind: 'verdict',
      verdict: v,
      chain: v.chain,
    });
  const lists: [string | undefined, TreeEndpoint[]][] = [
    [tree.chains.svc, tree.endpoints],
    [tree.chains.svl ?? tree.chains.xlb, tree.localEndpoints ?? []],
  ];
  for (const [chain, endpoints] of lists) {
    if (!chain) continue;
    const key = chainKey(tree, chain);
    const open = endpoints.length > 0 ? (o.open[key] ?? true) : undefined;
    const at = rows.length;
    leaf({ key, kind: 'chain', chain, open });
    if (open)
      for (const ep of endpoints)
        leaf(
          {
            // IPVS's real servers share their virtual server's name: the address tells them apart
            key: `ep:${tree.id}:${chain}:${ep.chain}:${ep.address ?? ep.hostStart ?? ''}`,
            kind: 'endpoint',
            chain: ep.chain,
            endpoint: ep,
          },
          2,
          at,
        );
  }
  // what a partial chain's rules leave is no claim: more of them may follow
  if (tree.fallThrough > 0 && !tree.partial)
    leaf({
      key: `note:${tree.id}:fall`,
      kind: 'note',
      note: `${percent(tree.fallThrough)} of new connections match none of the endpoint rules shown (the chain's last rule is not here)`,
    });
  if (tree.affinitySeconds !== undefined)
    leaf({
      key: `note:${tree.id}:affinity`,
      kind: 'note',
      note: `session affinity ClientIP, ${tree.affinitySeconds}s`,
    });
}

/** The row to put the cursor on for a chain of a tree (a search hit), opening what hides it. */
export function locate(
  trees: ServiceTrees,
  treeId: string | undefined,
  chain: string | undefined,
  o: RowOptions,
): { open: string[]; row: number } | undefined {
  const tree = trees.services.find((t) => t.id === treeId);
  if (!tree) return undefined;
  const open = [serviceKey(tree)];
  const endpointOf = (eps: TreeEndpoint[] | undefined) => eps?.some((e) => e.chain === chain);
  if (chain && endpointOf(tree.endpoints) && tree.chains.svc)
    open.push(chainKey(tree, tree.chains.svc));
  const local = tree.chains.svl ?? tree.chains.xlb;
  if (chain && endpointOf(tree.localEndpoints) && local) open.push(chainKey(tree, local));
  const opened = { ...o.open, ...Object.fromEntries(open.map((k) => [k, true])) };
  const rows = treeRows(trees, { ...o, open: opened });
  const service = rows.findIndex((r) => r.kind === 'service' && r.tree === tree);
  const exact = rows.findIndex(
    (r) => r.tree === tree && r.chain === chain && (r.kind === 'chain' || r.kind === 'endpoint'),
  );
  return { open, row: exact >= 0 ? exact : service };
}

export interface RawLine {
  table: string;
  chain: string;
  line: number;
  text: string;
}

const lineOf = (rs: Ruleset, line: number): RawLine[] => {
  const at = rs.ruleAt(line);
  return at
    ? [
        {
          table: at.table.name,
          chain: at.table.chainOf(at.id).name,
          line,
          text: at.table.text(at.id),
        },
      ]
    : [];
};

/** Every rule of one chain, in order: of the family's table where the dump holds both (kube-proxy
 * names a dual-stack Service port's chains alike in iptables' and ip6tables' tables). */
export function chainLines(
  rs: Ruleset,
  table: string,
  chain: string,
  family?: IPFamily,
): RawLine[] {
  const t = rs.table(table, family);
  const c = t?.chain(chain);
  if (!t || !c) return [];
  return c.ruleIds.map((id) => ({ table, chain, line: t.line(id), text: t.text(id) }));
}

/** The dump's own lines behind a row: what a person would grep for. */
export function rawLines(rs: Ruleset, row: TreeRow): RawLine[] {
  const t = row.tree;
  // its chains in its own family's nat table
  const nat = (chain: string) => chainLines(rs, 'nat', chain, row.orphan?.family ?? t.family);
  switch (row.kind) {
    case 'service':
      return [
        ...t.entries.flatMap((e) => lineOf(rs, e.line)),
        ...t.masquerade.flatMap((m) => lineOf(rs, m.line)),
        ...t.verdicts.flatMap((v) => lineOf(rs, v.line)),
      ];
    case 'entry':
      return [...lineOf(rs, row.entry!.line), ...nat(row.entry!.chain)];
    case 'masquerade':
      return lineOf(rs, row.masquerade!.line);
    case 'verdict':
      return lineOf(rs, row.verdict!.line);
    case 'chain':
      return nat(row.chain!);
    case 'endpoint':
      return [...lineOf(rs, row.endpoint!.line), ...nat(row.endpoint!.chain)];
    case 'note':
      return t.chains.svc ? nat(t.chains.svc) : [];
    case 'orphan':
      return nat(row.chain!);
  }
}

/** A listing read line by line (ipvsadm's, the Cilium agent's): the lines behind a row, its
 * frontend or virtual server and its backends. */
export function listingRawLines(lines: string[], row: TreeRow, table: string): RawLine[] {
  const all = rowLines(lines, row, table);
  // a Cilium frontend lists its backends on its own line: each line once
  return all.filter((l, i) => all.findIndex((x) => x.line === l.line) === i);
}

function rowLines(lines: string[], row: TreeRow, table: string): RawLine[] {
  const t = row.tree;
  const at = (line: number | undefined, chain: string): RawLine[] =>
    line && lines[line - 1] !== undefined ? [{ table, chain, line, text: lines[line - 1]! }] : [];
  const servers = (chain: string) =>
    [...t.endpoints, ...(t.localEndpoints ?? [])]
      .filter((e) => e.chain === chain)
      .flatMap((e) => at(e.line, chain));
  switch (row.kind) {
    case 'service':
      return t.entries.flatMap((e) => [...at(e.line, e.chain), ...servers(e.chain)]);
    case 'entry':
      return [...at(row.entry!.line, row.entry!.chain), ...servers(row.entry!.chain)];
    case 'endpoint':
      return at(row.endpoint!.line, row.endpoint!.chain);
    case 'chain':
      return t.entries.filter((e) => e.chain === row.chain).flatMap((e) => at(e.line, e.chain));
    default:
      return [];
  }
}

/** kube-proxy's nftables table behind a row: the map elements and chains it comes from. */
export function nftRawLines(t: NftTable, row: TreeRow): RawLine[] {
  const tree = row.tree;
  const chains = (...names: (string | undefined)[]) =>
    names.flatMap((n) => (n ? nftChainLines(t, n) : []));
  switch (row.kind) {
    case 'service':
      return [
        ...tree.entries.flatMap((e) => elementLines(t, e.from, e.chain)),
        ...tree.verdicts.flatMap((v) => elementLines(t, v.chain, undefined, v.comment)),
        ...chains(tree.chains.svc, tree.chains.svl, tree.chains.ext, tree.chains.fw),
      ];
    case 'entry':
      return [...elementLines(t, row.entry!.from, row.entry!.chain), ...chains(row.entry!.chain)];
    case 'masquerade':
      return chains(row.masquerade!.chain);
    case 'verdict':
      return elementLines(t, row.verdict!.chain, undefined, row.verdict!.comment);
    case 'chain':
      return chains(row.chain);
    case 'endpoint':
      return chains(row.endpoint!.chain);
    case 'note':
      return chains(tree.chains.svc);
    case 'orphan':
      return chains(row.chain);
  }
}

/** Every rule of one chain of the table, in nft's words, after its chain's name. */
export function nftChainLines(t: NftTable, chain: string): RawLine[] {
  const table = `${t.family} ${t.name}`;
  return (t.chain(chain)?.rules ?? []).map((r, k) => ({
    table,
    chain,
    line: k + 1,
    text: `${chain}: ${ruleText(r)}`,
  }));
}

/** The elements of a map that go to `target` (or carry `comment`), as nft writes them. */
function elementLines(t: NftTable, map: string, target?: string, comment?: string): RawLine[] {
  const set = t.set(map);
  const table = `${t.family} ${t.name}`;
  return (set?.elements ?? []).flatMap((e, k) =>
    (target && e.verdict?.target === target) || (comment && e.comment === comment)
      ? [
          {
            table,
            chain: map,
            line: k + 1,
            text: `${map} { ${e.key.join(' . ')}${e.comment ? ` comment "${e.comment}"` : ''} : ${e.verdict?.kind ?? ''}${e.verdict?.target ? ` ${e.verdict.target}` : ''} }`,
          },
        ]
      : [],
  );
}
