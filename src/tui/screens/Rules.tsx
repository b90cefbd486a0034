// The Rules screen: a node's Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees, opened and closed in
// place, with effective shares, hairpin and masquerade marks, and the raw rule lines on demand.
import { percent } from '../../core/model.js';
import { ENTRY_KIND_TEXT } from '../../core/dataplane/trees.js';
import { Box } from 'ink';
import type { NodeData } from '../data.js';
import { Pane, innerLines } from '../components/pane.js';
import { S, T } from '../components/text.js';
import { useWindow } from '../components/window.js';
import { cursorOf, type State, type View } from '../state.js';
import { wrap } from '../wrap.js';
import {
  chainLines,
  endpointsUnseen,
  nftChainLines,
  listingRawLines,
  nftRawLines,
  rawLines,
  treeRows,
  type RawLine,
  type TreeRow,
} from './rules-rows.js';
import { hostPort } from '../../core/ipv6.js';
import { orphansUnproven } from '../../core/dataplane/orphans.js';
import {
  nftNoService,
  noServiceRules,
  unprovenText,
  type Held,
} from '../../output/rules/no-service.js';

export interface RulesModel {
  node: NodeData | undefined;
  nodeIndex: number;
  nodeCount: number;
  rows: TreeRow[];
  cursor: number;
  /** The raw pane: its title and wrapped lines, when shown. */
  raw?: { title: string; lines: { text: string; lead: boolean }[] };
  treeHeight: number;
  rawHeight: number;
  width: number;
  /** What the node's drift says of rows: stale endpoints by "service endpoint", Services whose
   * endpoints get uneven shares by name, each with its one-line reason. */
  marks: RowMarks;
}

export interface RowMarks {
  stale: Map<string, string>;
  uneven: Map<string, string>;
  /** Why the node's rules, read in part, prove no chain an orphan (rules.ts says it alike). */
  unproven?: string;
  /** What the node's rules were read from, as the rows name it. */
  held: Held;
}

/** The drift findings a row can carry, from the node's drift (none where it cannot be made). */
function rowMarks(node: NodeData | undefined): RowMarks {
  const read = node?.rs ?? node?.nft;
  const why = read && orphansUnproven(read);
  const held = node?.held ?? 'dump';
  const unproven = why && unprovenText(why, held);
  const marks: RowMarks = {
    held,
    stale: new Map(),
    uneven: new Map(),
    ...(unproven ? { unproven } : {}),
  };
  const drift = node?.drift();
  if (!drift || 'error' in drift) return marks;
  for (const f of drift.findings) {
    if (f.id === 'endpoint-stale' && f.service && f.drift.endpoint)
      marks.stale.set(`${f.service} ${f.drift.endpoint}`, 'not an endpoint now [endpoint-stale]');
    if (f.id === 'weights-uneven' && f.service) marks.uneven.set(f.service, f.title);
  }
  return marks;
}

export function rulesModel(
  s: State,
  nodes: NodeData[],
  focus: string | undefined,
  width: number,
  height: number,
): RulesModel {
  const nodeIndex = Math.min(s.node.rules, Math.max(0, nodes.length - 1));
  const node = nodes[nodeIndex];
  const rows = node?.trees ? treeRows(node.trees, { open: s.open, focus }) : [];
  const cursor = Math.min(cursorOf(s, 'rules', 0), Math.max(0, rows.length - 1));
  const treeHeight = s.raw ? Math.max(5, Math.floor(height / 2)) : height;
  const rawHeight = height - treeHeight;
  const m: RulesModel = {
    node,
    nodeIndex,
    nodeCount: nodes.length,
    rows,
    cursor,
    treeHeight,
    rawHeight,
    width,
    marks: rowMarks(node),
  };
  if (s.raw && (node?.rs || node?.nft || node?.ipvs || node?.ciliumLines)) {
    const row = rows[cursor];
    const { rs, nft, ipvs, ciliumLines } = node;
    // a listing read line by line (ipvsadm's, the Cilium agent's): a row's own lines
    const listing = ipvs
      ? { lines: ipvs, table: 'ipvs' }
      : ciliumLines && { lines: ciliumLines, table: 'cilium' };
    const lines: RawLine[] = listing
      ? row
        ? listingRawLines(listing.lines, row, listing.table)
        : []
      : nft
        ? s.rawChain
          ? nftChainLines(nft, s.rawChain.chain)
          : row
            ? nftRawLines(nft, row)
            : []
        : s.rawChain
          ? chainLines(rs!, s.rawChain.table, s.rawChain.chain)
          : row
            ? rawLines(rs!, row)
            : [];
    const title = s.rawChain
      ? `${s.rawChain.table} ${s.rawChain.chain}`
      : row
        ? (row.chain ?? row.tree.id)
        : '';
    m.raw = {
      title,
      lines: lines.flatMap((l) =>
        wrap(`${l.line}: ${l.text}`, width - 2, '    ').map((text, i) => ({ text, lead: i === 0 })),
      ),
    };
  }
  return m;
}

/** What the reducer needs to know about the Rules screen. */
export function rulesView(m: RulesModel): View {
  const row = m.rows[m.cursor];
  const rawLines = m.raw?.lines.length ?? 0;
  const rawPage = innerLines(m.rawHeight);
  return {
    lists: m.raw ? [m.rows.length, Math.max(1, rawLines - rawPage + 1)] : [m.rows.length],
    page: innerLines(m.treeHeight),
    nodes: m.nodeCount,
    row: row ? { key: row.key, open: row.open, parent: row.parent } : undefined,
  };
}

function RowLine({ row, marks }: { row: TreeRow; marks: RowMarks }) {
  const t = row.tree;
  const fold = row.open === undefined ? '  ' : row.open ? '▾ ' : '▸ ';
  switch (row.kind) {
    case 'service': {
      const addr = t.clusterIP
        ? `${hostPort(t.clusterIP, t.port ?? '?')}/${t.protocol}`
        : t.protocol;
      const eps = t.endpoints.length;
      return (
        <>
          {fold}
          <S tone="title">{t.id}</S> <S tone="accent">{t.name ? addr : ''}</S>
          {t.nodePorts.length > 0 ? <S tone="accent"> np {t.nodePorts.join(',')}</S> : null}
          {eps === 0 && t.l7Proxy ? (
            <S tone="muted"> to the L7 proxy</S>
          ) : eps === 0 && endpointsUnseen(t) ? (
            <S tone="warn"> endpoints not in the {marks.held}</S>
          ) : eps === 0 ? (
            <S tone={t.verdicts.length > 0 ? 'warn' : 'bad'}> no endpoints</S>
          ) : (
            <S tone="muted">
              {' '}
              {eps} endpoint{eps === 1 ? '' : 's'}
            </S>
          )}
          {t.name && marks.uneven.has(t.name) ? (
            <>
              {' '}
              <S tone="warn">! mis-weighted</S> <S tone="muted">{marks.uneven.get(t.name)}</S>
            </>
          ) : null}
        </>
      );
    }
    case 'entry': {
      const e = row.entry!;
      const where = e.kind === 'node-port' ? `${e.port}` : hostPort(e.address ?? '', e.port ?? '');
      return (
        <>
          <S tone="muted">{e.label ?? ENTRY_KIND_TEXT[e.kind]}</S> {where}/{e.protocol}{' '}
          <S tone="muted">→</S> {e.chain}
        </>
      );
    }
    case 'masquerade':
      return (
        <>
          <S tone="accent">masq</S> {row.masquerade!.condition}{' '}
          <S tone="muted">({row.masquerade!.chain})</S>
        </>
      );
    case 'verdict': {
      const v = row.verdict!;
      return (
        <>
          <S tone="bad">{v.kind.toUpperCase()}</S> {v.comment ?? ''}{' '}
          <S tone="muted">
            ({v.table} {v.chain})
          </S>
        </>
      );
    }
    case 'chain': {
      const eps = row.chain === t.chains.svc ? t.endpoints : (t.localEndpoints ?? []);
      return (
        <>
          {fold}
          {row.chain}
          {row.open !== undefined ? null : endpointsUnseen(t, row.chain) ? (
            <S tone="warn"> endpoints not in the {marks.held}</S>
          ) : (
            <S tone="bad"> no endpoints</S>
          )}
          {row.chain !== t.chains.svc ? <S tone="muted"> local only</S> : null}
          {eps.length > 0 ? <S tone="muted"> ({eps.length})</S> : null}
        </>
      );
    }
    case 'endpoint': {
      const ep = row.endpoint!;
      const share = ep.shareUnknown
        ? '?'
        : ep.affinity && ep.probability === 0
          ? 'affin.'
          : percent(ep.probability);
      const to =
        ep.address ??
        (ep.inferredIP ? `${ep.inferredIP}:?` : ep.hostStart ? `${ep.hostStart}… (cut):?` : '?');
      return (
        <>
          <S tone={ep.probability > 0 || ep.shareUnknown ? 'text' : 'warn'}>{share.padStart(6)}</S>{' '}
          {!ep.chainMissing ? (
            <S tone="accent">{to}</S>
          ) : marks.held === 'paste' ? (
            <S tone="warn">not in paste</S>
          ) : (
            <S tone="warn">not in dump</S>
          )}{' '}
          {ep.cilium ? (
            // a Cilium backend: its state, no chain and no hairpin rule of kube-proxy's
            <S tone={ep.probability > 0 ? 'muted' : 'warn'}>
              {ep.cilium.state ?? 'state not listed'}
              {ep.cilium.preferred === undefined
                ? ''
                : ep.cilium.preferred
                  ? ', preferred'
                  : ', not preferred'}
              {ep.cilium.weight === undefined ? '' : `, weight ${ep.cilium.weight}`}
              {ep.cilium.maglev
                ? `, ${ep.cilium.maglev.entries} of ${ep.cilium.maglev.of} Maglev entries`
                : ''}
              {ep.probability === 0 ? ': no new connections' : ''}
            </S>
          ) : (
            <>
              <S tone="muted">{ep.chain}</S>{' '}
            </>
          )}
          {ep.cilium ? null : ep.hairpinMasquerade === null ? (
            <S tone="muted">hairpin?</S>
          ) : ep.hairpinMasquerade ? (
            <S tone="ok">hairpin✓</S>
          ) : (
            <S tone="warn">hairpin✗</S>
          )}
          {ep.affinity ? <S tone="muted"> affinity</S> : null}
          {t.name && ep.address && marks.stale.has(`${t.name} ${ep.address}`) ? (
            <>
              {' '}
              <S tone="warn">! stale</S>{' '}
              <S tone="muted">{marks.stale.get(`${t.name} ${ep.address}`)}</S>
            </>
          ) : null}
        </>
      );
    }
    case 'note':
      return <S tone="muted">{row.note}</S>;
    case 'orphan': {
      const o = row.orphan!;
      return (
        <>
          <S tone="warn">{marks.unproven ? '! unreached' : '! orphan'}</S> {o.chain}{' '}
          <S tone="muted">
            {o.rules} rule{o.rules === 1 ? '' : 's'}
            {o.partial ? ` in the ${marks.held} (${o.partial})` : ''}
            {marks.unproven
              ? `: no rule in the ${marks.held} reaches it, not called an orphan (${marks.unproven})`
              : ': no entry point reaches it'}
          </S>
        </>
      );
    }
  }
}

export function Rules({
  model: m,
  state,
  reading,
}: {
  model: RulesModel;
  state: State;
  /** The rules may still be on their way: none yet is not "none recorded". */
  reading?: boolean;
}) {
  const page = innerLines(m.treeHeight);
  const start = useWindow(m.cursor, m.rows.length, page);
  const focus = state.pane.rules;
  const rawStart = cursorOf(state, 'rules', 1);
  const nodeInfo =
    m.nodeCount > 1
      ? `${m.node?.label} (${m.nodeIndex + 1}/${m.nodeCount}, n/p)`
      : (m.node?.label ?? '');
  const body = !m.node ? (
    <T tone="muted">{reading ? 'reading the rules…' : 'no rules recorded'}</T>
  ) : m.node.error ? (
    <T tone="bad" wrap="wrap">
      {m.node.error}
    </T>
  ) : m.rows.length === 0 ? (
    <T tone="muted" wrap="wrap">
      {m.node.rs
        ? noServiceRules(m.node.rs, m.marks.held)
        : m.node.nft
          ? nftNoService(m.node.nft, m.marks.held)
          : 'no Service rules found'}
    </T>
  ) : (
    m.rows.slice(start, start + page).map((row, i) => {
      const selected = start + i === m.cursor;
      const marks = m.marks;
      return (
        <T key={row.key} selected={selected && focus === 0}>
          {selected ? '›' : ' '}
          {'  '.repeat(row.depth)}
          <RowLine row={row} marks={marks} />
        </T>
      );
    })
  );
  const rawPage = innerLines(m.rawHeight);
  return (
    <Box flexDirection="column" width={m.width}>
      <Pane
        title="Rules"
        info={nodeInfo}
        scroll={{ top: start, shown: page, total: m.rows.length }}
        focused={focus === 0}
        height={m.treeHeight}
        width={m.width}
      >
        {body}
      </Pane>
      {m.raw ? (
        <Pane
          title={`Raw rules ${m.raw.title}`}
          info={`${m.raw.lines.filter((l) => l.lead).length} lines, r closes`}
          scroll={{ top: rawStart, shown: rawPage, total: m.raw.lines.length }}
          focused={focus === 1}
          height={m.rawHeight}
          width={m.width}
        >
          {m.raw.lines.length === 0 ? (
            <T tone="muted">no rule lines for this row</T>
          ) : (
            m.raw.lines.slice(rawStart, rawStart + rawPage).map((l, i) => (
              <T key={i} tone={l.lead ? 'text' : 'muted'}>
                {l.text}
              </T>
            ))
          )}
        </Pane>
      ) : null}
    </Box>
  );
}
