// The `/` overlay: fuzzy search over every chain, comment, IP and port of the loaded rules, the
// matched characters highlighted, results updated on every keystroke.
import { Box } from 'ink';
import { searchNodes, type NodeData, type NodeHit } from '../data.js';
import { Pane, innerLines } from '../components/pane.js';
import { S, T } from '../components/text.js';
import { useWindow } from '../components/window.js';
import { sanitizeMarked } from '../../core/sanitize.js';
import type { State, View } from '../state.js';

export interface SearchModel {
  query: string;
  hits: NodeHit[];
  cursor: number;
  nodes: NodeData[];
  current: number;
  width: number;
  height: number;
}

export function searchModel(
  s: State,
  nodes: NodeData[],
  width: number,
  height: number,
): SearchModel {
  const current = Math.min(s.node.rules, Math.max(0, nodes.length - 1));
  const hits = s.query.trim() ? searchNodes(nodes, s.query, current) : [];
  const cursor = Math.min(s.cursor['search'] ?? 0, Math.max(0, hits.length - 1));
  return { query: s.query, hits, cursor, nodes, current, width, height };
}

export function searchView(m: SearchModel): View {
  return { lists: [m.hits.length], page: innerLines(m.height) - 1, hits: m.hits.length };
}

/** `text` cut into plain and matched pieces by inclusive [start, end] ranges, sanitized. */
export function highlight(
  text: string,
  ranges: [number, number][],
): { text: string; match: boolean }[] {
  const inRange = (i: number) => ranges.some(([s, e]) => i >= s && i <= e);
  return sanitizeMarked(text, inRange).map((p) => ({ text: p.text, match: p.marked }));
}

function where(h: NodeHit, m: SearchModel): string {
  const parts: string[] = [];
  if (h.kind === 'rule' && h.table && h.chain) parts.push(`${h.table} ${h.chain}:${h.line ?? '?'}`);
  else if (h.kind === 'endpoint' && h.chain) parts.push(h.chain);
  if (h.service && !h.text.includes(h.service)) parts.push(h.service);
  if (h.node !== m.current && m.nodes.length > 1) parts.push(`on ${m.nodes[h.node]?.label}`);
  return parts.join('  ');
}

export function Search({ model: m }: { model: SearchModel }) {
  const page = innerLines(m.height) - 1;
  const start = useWindow(m.cursor, m.hits.length, page);
  const info = m.query.trim()
    ? `${m.hits.length === 50 ? '50+' : m.hits.length} matches, enter jumps, esc closes`
    : 'chains, comments, IPs, ports';
  return (
    <Box flexDirection="column" width={m.width}>
      <Pane title="Search" info={info} focused height={m.height} width={m.width}>
        <T>
          <S tone="key">/</S>
          {m.query}
          <S tone="accent">▏</S>
        </T>
        {m.query.trim() && m.hits.length === 0 ? <T tone="muted">no match</T> : null}
        {m.hits.slice(start, start + page).map((h, i) => {
          const selected = start + i === m.cursor;
          return (
            <T key={`${h.node}:${h.kind}:${h.text}:${h.chain}:${h.line}`} selected={selected}>
              {selected ? '›' : ' '}
              <S tone="muted">{h.kind.padEnd(9)}</S>
              {highlight(h.text, h.ranges).map((p, k) =>
                p.match ? (
                  <S key={k} tone="match">
                    {p.text}
                  </S>
                ) : (
                  p.text
                ),
              )}
              <S tone="muted">{`  ${where(h, m)}`}</S>
            </T>
          );
        })}
      </Pane>
    </Box>
  );
}
