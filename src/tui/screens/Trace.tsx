// The Trace screen: pick a source and a destination, see the packet walk rule by rule, every
// branch with its probability, where it is DNATed and whether it is masqueraded.
import { Box } from 'ink';
import { shareText, type TraceResult } from '../../core/dataplane/trace/trace.js';
import { Pane, innerLines } from '../components/pane.js';
import { T } from '../components/text.js';
import { useWindow } from '../components/window.js';
import type { TuiData } from '../data.js';
import { cursorOf, type State, type View } from '../state.js';
import type { Tone } from '../../output/tones.js';
import { stopText, translatedBy } from '../../core/dataplane/trace/answer.js';
import { notInApiText } from '../../core/dataplane/trace/stale-port.js';
import { wrap } from '../wrap.js';
import {
  traceDestinations,
  traceSources,
  walk,
  type Walked,
  type TraceDestination,
  type TraceSource,
} from './trace-model.js';

export interface WalkLine {
  text: string;
  tone: Tone;
}

export interface TraceModel {
  sources: TraceSource[];
  dests: TraceDestination[];
  source: number;
  dest: number;
  lines: WalkLine[];
  top: number;
  width: number;
  pickHeight: number;
  walkHeight: number;
}

const FROM = {
  pod: 'from a Pod',
  node: 'from a process on the node',
  outside: 'from outside the cluster',
} as const;

function outcomeHead(
  o: TraceResult['outcomes'][number],
  many: boolean,
  fromHost: boolean,
  partly: string[],
): string {
  const share = many || o.probability < 1 ? shareText(o) : '';
  // past what the cut hid its fate is not known: only what the rules read did is said
  if (partly.length > 0)
    return [
      share,
      o.dnat ? `${translatedBy(o)} ${o.dnat},` : '',
      `not known past ${partly.join(', ')}`,
    ]
      .filter(Boolean)
      .join('  ');
  const to =
    o.destination === null
      ? 'no rule matched: routed unchanged'
      : o.destination === 'REJECT' || o.destination === 'DROP'
        ? o.destination
        : `${translatedBy(o)} ${o.destination}`;
  const masq = o.masquerade ? 'masqueraded' : 'not masqueraded';
  // the words text uses: a process on the node sends its packet out, only one that came in is forwarded
  const end =
    o.verdict === 'ACCEPT'
      ? o.delivery === 'local'
        ? 'delivered to the node itself'
        : fromHost
          ? 'sent out by the node'
          : 'forwarded'
      : '';
  return [share, to, masq, end].filter(Boolean).join('  ');
}

/** The walk as lines of `width` columns. */
export function walkLines(
  walked: Walked | { error: string } | undefined,
  source: TraceSource | undefined,
  dest: TraceDestination | undefined,
  width: number,
): WalkLine[] {
  if (!walked || !source || !dest)
    return [{ text: 'pick a source and a destination', tone: 'muted' }];
  const out: WalkLine[] = [];
  const add = (text: string, tone: Tone, lead = '', indent = lead) =>
    wrap(text, width - lead.length, indent.slice(lead.length)).forEach((t) =>
      out.push({ text: lead + t, tone }),
    );
  const port = dest.protocol === 'icmp' || dest.port === undefined ? '' : `:${dest.port}`;
  // where the walk enters is the node's mode's (nat PREROUTING, Cilium's socket hook ...)
  const enters = 'error' in walked ? '' : ` (${walked.result.enters})`;
  add(
    `${dest.protocol} ${source.ip} -> ${dest.ip}${port} on ${source.node}, ${FROM[source.kind]}${enters}`,
    'title',
  );
  if ('error' in walked) {
    add(walked.error, 'bad');
    return out;
  }
  const { result, stop } = walked;
  const many = result.outcomes.length > 1;
  const partly = (i: number) => stop?.partly[i] ?? [];
  const toneOf = (o: TraceResult['outcomes'][number], i: number): Tone =>
    partly(i).length > 0 || (o.verdict === 'ACCEPT' && o.destination === null)
      ? 'warn'
      : o.verdict !== 'ACCEPT'
        ? 'bad'
        : 'ok';
  const head = (o: TraceResult['outcomes'][number], i: number) =>
    outcomeHead(o, many, result.packet.fromHost, partly(i));
  // every branch at a glance, then each one rule by rule
  result.outcomes.forEach((o, i) => add(head(o, i), toneOf(o, i), '  ', '    '));
  // a node port the API took away: the node's rules beside the API's, as text says
  for (const x of walked.notInApi ?? []) add(notInApiText(x, source.node), 'bad');
  // the rules were not wholly read: the walk holds up to where the read stopped, as text says
  if (stop)
    add(
      `the rules were not wholly read (${stopText(stop)}): these outcomes hold for the rules read up to there`,
      'warn',
    );
  result.outcomes.forEach((o, i) => {
    out.push({ text: '', tone: 'text' });
    add(`${many ? `branch ${i + 1}: ` : ''}${head(o, i)}`, toneOf(o, i));
    const known = partly(i).length > 0 ? (stop?.known[i] ?? 0) : o.rules.length;
    o.rules.forEach((r, k) => {
      if (k === known)
        add('met only if the rules past the cut (not read) let it on unchanged:', 'warn', '  ');
      add(`${r.table} ${r.chain}:${r.line}  ${r.effect}`, 'accent', '  ', '    ');
      add(r.rule, 'muted', '    ', '      ');
    });
    const reached = partly(i).length > 0 ? stop?.reached?.[i] : undefined;
    if (reached) add(`stopped: ${reached}`, 'warn', '  ', '    ');
    for (const a of o.assumptions) add(`assumes: ${a}`, 'warn', '  ', '    ');
  });
  for (const n of result.notes) add(`note: ${n}`, 'warn');
  return out;
}

export function traceModel(s: State, data: TuiData, width: number, height: number): TraceModel {
  const sources = traceSources(data);
  const source = Math.min(cursorOf(s, 'trace', 0), Math.max(0, sources.length - 1));
  const dests = traceDestinations(data, sources[source]);
  const dest = Math.min(cursorOf(s, 'trace', 1), Math.max(0, dests.length - 1));
  const src = sources[source];
  const dst = dests[dest];
  const walked = src && dst ? walk(data, src, dst) : undefined;
  const lines = walkLines(walked, src, dst, width - 2);
  const pickHeight = Math.max(5, Math.floor(height * 0.4));
  const walkHeight = height - pickHeight;
  const page = innerLines(walkHeight);
  const top = Math.min(cursorOf(s, 'trace', 2), Math.max(0, lines.length - page));
  return { sources, dests, source, dest, lines, top, width, pickHeight, walkHeight };
}

export function traceView(m: TraceModel): View {
  const page = innerLines(m.walkHeight);
  return {
    lists: [m.sources.length, m.dests.length, Math.max(1, m.lines.length - page + 1)],
    page: innerLines(m.pickHeight),
  };
}

function Picker(props: {
  title: string;
  items: string[];
  cursor: number;
  focused: boolean;
  width: number;
  height: number;
  empty: string;
}) {
  const page = innerLines(props.height);
  const start = useWindow(props.cursor, props.items.length, page);
  return (
    <Pane
      title={props.title}
      info={props.items.length > 0 ? `${props.cursor + 1}/${props.items.length}` : ''}
      focused={props.focused}
      width={props.width}
      height={props.height}
    >
      {props.items.length === 0 ? <T tone="muted">{props.empty}</T> : null}
      {props.items.slice(start, start + page).map((label, i) => {
        const selected = start + i === props.cursor;
        return (
          <T key={start + i} selected={selected && props.focused}>
            {selected ? '›' : ' '}
            {label}
          </T>
        );
      })}
    </Pane>
  );
}

export function Trace({ model: m, state }: { model: TraceModel; state: State }) {
  const focus = state.pane.trace;
  const left = Math.floor(m.width / 2);
  const page = innerLines(m.walkHeight);
  return (
    <Box flexDirection="column" width={m.width}>
      <Box>
        <Picker
          title="Source"
          items={m.sources.map((s) => s.label)}
          cursor={m.source}
          focused={focus === 0}
          width={left}
          height={m.pickHeight}
          empty="no Pods or nodes with rules"
        />
        <Picker
          title="Destination"
          items={m.dests.map((d) => d.label)}
          cursor={m.dest}
          focused={focus === 1}
          width={m.width - left}
          height={m.pickHeight}
          empty="no Service rules on this node"
        />
      </Box>
      <Pane
        title="Packet walk"
        info={
          m.lines.length > page
            ? `${m.top + 1}-${Math.min(m.top + page, m.lines.length)}/${m.lines.length}`
            : ''
        }
        focused={focus === 2}
        width={m.width}
        height={m.walkHeight}
      >
        {m.lines.slice(m.top, m.top + page).map((l, i) => (
          <T key={m.top + i} tone={l.tone}>
            {l.text || ' '}
          </T>
        ))}
      </Pane>
    </Box>
  );
}
