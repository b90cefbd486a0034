// The `kdebug trace` presentations: every outcome of one packet with its probability, and the
// rules it matched in order, as text a person follows or as JSON.
import { shareText, type TraceOutcome, type TraceResult } from '../core/dataplane/trace/trace.js';
import { stopText, translatedBy, type TraceAnswer } from '../core/dataplane/trace/answer.js';
import { notInApiText } from '../core/dataplane/trace/stale-port.js';
import { jsonText } from '../core/sanitize.js';
import { wrap, wrapAfter, wrapCommand } from './wrap.js';
import { resolveNext, shellWords, type Invocation } from '../core/findings/next-command.js';
import { schemaId } from './schema-id.js';
import { hostPort } from '../core/ipv6.js';

export const TRACE_SCHEMA_VERSION = 2;

function packetText(r: TraceResult): string {
  const p = r.packet;
  const dst = p.protocol === 'icmp' ? p.dst : hostPort(p.dst, p.dport ?? 0);
  const from = p.fromHost
    ? `from a process on the node (enters ${r.enters})`
    : `from a Pod or the network (enters ${r.enters})`;
  return `${p.protocol} ${p.src} -> ${dst}, ${from}`;
}

function summary(o: TraceOutcome, i: number, a: TraceAnswer, apart: string[]): string {
  // the chains it passed through whose rules past the dump's cut may have come first: what the
  // rules read did is said, its fate past them is not known
  const partly = a.stop?.partly[i] ?? [];
  const met =
    a.stop?.reached?.[i] ??
    `it fell through ${partly.join(', ')}, which the dump holds only up to its cut`;
  if (partly.length > 0)
    return `not known: ${readPart(o)}, but ${met}: what the rules past there do with it was not read${apart[i] ?? ''}`;
  const cut = apart[i] ?? '';
  if (o.verdict === 'REJECT')
    return `REJECTED (the client gets "connection refused" / port unreachable)${cut}`;
  if (o.verdict === 'DROP') return `DROPPED (the client waits for a timeout)${cut}`;
  return `${routed(o, i, a)}${cut}`;
}

/** Per outcome alike another (the same end, masquerade and delivery), the chains it entered
 * that the others did not, or those it did not enter: why there are two. */
function passedApart(a: TraceAnswer): string[] {
  const groups = new Map<string, number[]>();
  a.result.outcomes.forEach((o, i) => {
    const key = JSON.stringify([
      o.verdict,
      o.destination,
      o.delivery,
      o.masquerade,
      a.stale.includes(i),
      a.stop?.partly[i] ?? [],
    ]);
    const is = groups.get(key);
    if (is) is.push(i);
    else groups.set(key, [i]);
  });
  const apart: string[] = [];
  const entered = (i: number) =>
    new Set(a.result.outcomes[i]!.rules.flatMap((m) => (m.into ? [m.into] : [])));
  for (const is of groups.values()) {
    if (is.length < 2) continue;
    const sets = is.map(entered);
    const every = [...sets[0]!].filter((c) => sets.every((s) => s.has(c)));
    const some = new Set(sets.flatMap((s) => [...s]).filter((c) => !every.includes(c)));
    is.forEach((i, k) => {
      const own = [...sets[k]!].filter((c) => some.has(c));
      const not = [...some].filter((c) => !sets[k]!.has(c));
      // a chain it entered and matched no rule in: it fell through it (a KUBE-SEP without DNAT)
      const o = a.result.outcomes[i]!;
      const named = own.map((c) =>
        o.rules.some((m) => m.chain === c) ? c : `${c}, where no rule matched it`,
      );
      if (own.length) apart[i] = ` (through ${named.join('; ')})`;
      else if (not.length) apart[i] = ` (not through ${not.join(', ')})`;
    });
  }
  return apart;
}

/** What the rules read did to an outcome whose walk went past a cut. */
function readPart(o: TraceOutcome): string {
  if (o.verdict === 'REJECT' || o.verdict === 'DROP') return `the rules read ${o.verdict} it`;
  return o.dnat
    ? `the rules read ${translatedBy(o) === 'DNAT to' ? 'DNAT' : 'translate'} it to ${o.dnat}`
    : 'no rule read changed the destination';
}

/** How IPVS sends a packet on without DNAT, by its real server's forwarding method. */
const SENT: Record<NonNullable<TraceOutcome['forward']>, string> = {
  route: 'sent by direct routing (only the MAC rewritten) to',
  tunnel: 'encapsulated in IP-in-IP to',
  local: "taken by the node's own real server",
};

/** An outcome the packet goes on in: where to, and whether masqueraded. */
function routed(o: TraceOutcome, i: number, a: TraceAnswer): string {
  const r = a.result;
  const gone = a.stale.includes(i)
    ? ` (no Pod has ${o.dnat!.replace(/:\d+$/, '')} now: a stale rule)`
    : '';
  const where = o.dnat
    ? `${translatedBy(o)} ${o.dnat}${gone}`
    : o.forward
      ? `${SENT[o.forward]} ${o.destination} (destination ${hostPort(r.packet.dst, r.packet.dport ?? 0)} kept)`
      : 'no rule changed the destination: routed unchanged';
  // a process on the node sends; only a packet that came in is forwarded
  const went =
    o.delivery === 'local'
      ? 'delivered to the node itself'
      : r.packet.fromHost
        ? 'sent out by the node'
        : 'forwarded';
  // its filter chains not read: what they let through is not observed
  const to = r.tablesNotRead?.includes('filter')
    ? `${went} unless filter drops it (the dump holds no filter table: not observed)`
    : went;
  return `${where}, ${to}, ${o.masquerade ? 'masqueraded (source NAT to the node)' : 'not masqueraded'}`;
}

/** The walk as text at `width` columns (none: unwrapped); long rule lines wrap under themselves;
 * a next command carries the run's flags (`how`). */
export function traceText(a: TraceAnswer, width = Infinity, how: Invocation = {}): string {
  const r = a.result;
  const out = wrap(`packet walk on node ${a.node}: ${packetText(r)}`, width, '', '  ');
  if (a.destinationIs)
    out.push(...wrap(`${r.packet.dst} is ${a.destinationIs}`, width, '  ', '    '));
  if (r.selection)
    out.push(
      ...wrap(
        `backend selection: ${r.selection.algorithm} (${r.selection.source})`,
        width,
        '  ',
        '    ',
      ),
    );
  out.push('', `${r.outcomes.length} outcome${r.outcomes.length === 1 ? '' : 's'}:`);
  const apart = passedApart(a);
  r.outcomes.forEach((o, i) =>
    out.push(...wrapAfter(`  ${shareText(o).padStart(6)}  `, summary(o, i, a, apart), width)),
  );
  for (const x of a.notInApi ?? []) out.push('', ...wrap(notInApiText(x, a.node), width, '  '));
  if (a.unmatched) out.push('', ...wrap(a.unmatched, width, '  '));
  else if (a.stop)
    out.push(
      '',
      ...wrap(
        `The rules were not wholly read (${stopText(a.stop)}): these outcomes and their shares hold for the rules read up to there, and say nothing of the rules past it.`,
        width,
        '  ',
      ),
    );
  if (a.next)
    out.push(...wrapCommand(['next:', ...shellWords(resolveNext(a.next, how))], width, '  '));
  r.outcomes.forEach((o, i) => {
    out.push(
      '',
      ...wrap(`outcome ${i + 1}: ${shareText(o)}  ${summary(o, i, a, apart)}`, width, '', '  '),
    );
    const known = a.stop?.partly[i]?.length ? (a.stop.known[i] ?? 0) : o.rules.length;
    o.rules.forEach((m, k) => {
      if (k === known)
        out.push(
          ...wrap(
            'not matched as read: the packet meets these only if the rules past the cut (not read) let it on unchanged:',
            width,
            '  ',
            '    ',
          ),
        );
      const at = `${m.table} ${m.chain}${m.line ? ` (line ${m.line})` : ''}: ${m.effect}`;
      out.push(...wrapAfter(`  ${String(k + 1).padStart(2)}. `, at, width));
      out.push(...wrap(m.rule, width, '      ', '        '));
    });
    // a walk the cut stopped before any rule passed no chain to the end
    if (o.rules.length === 0)
      out.push(
        a.stop?.partly[i]?.length
          ? '  no rule read matched before the walk stopped'
          : '  no rule matched in any chain it passed',
      );
    for (const a of o.assumptions) out.push(...wrap(`assumes: ${a}`, width, '  ', '    '));
  });
  for (const n of r.notes) out.push('', ...wrap(`note: ${n}`, width, '', '  '));
  return out.join('\n') + '\n'; // wrap sanitises: rule lines and comments come from the node
}

/** The document `trace -o json` prints (schema/trace.vN.json). */
export function traceDoc(a: TraceAnswer) {
  const r = a.result;
  return {
    $schema: schemaId('trace', TRACE_SCHEMA_VERSION),
    schemaVersion: TRACE_SCHEMA_VERSION,
    node: a.node,
    packet: {
      src: r.packet.src,
      dst: r.packet.dst,
      dport: r.packet.protocol === 'icmp' ? null : (r.packet.dport ?? null),
      protocol: r.packet.protocol,
      from: r.packet.fromHost ? 'host' : 'network',
      enters: r.enters,
    },
    destinationIs: a.destinationIs ?? null,
    outcomes: r.outcomes.map((o, i) => {
      // past a chain the dump holds in part, what becomes of the packet was not read: null
      const unknown = Boolean(a.stop?.partly[i]?.length);
      return {
        // a share not known is null, never a 0 a script would read as "no connections"
        probability: o.shareUnknown ? null : o.probability,
        ...(o.shareUnknown ? { shareUnknown: o.shareUnknown } : {}),
        destination: o.destination,
        masquerade: unknown ? null : o.masquerade,
        verdict: unknown ? null : o.verdict,
        delivery: unknown ? null : o.delivery,
        ...(o.forward ? { forward: o.forward } : {}),
        ...(a.stale.includes(i) ? { noPodHasTarget: true } : {}),
        ...(unknown
          ? {
              partlyRead: a.stop!.partly[i]!,
              fateKnown: false as const,
              rulesKnown: a.stop!.known[i] ?? 0,
            }
          : {}),
        rules: o.rules,
        assumptions: o.assumptions,
      };
    }),
    ...(r.selection ? { selection: r.selection } : {}),
    notes: r.notes,
    ...(a.notInApi?.length ? { notInApi: a.notInApi } : {}),
    ...(r.tablesNotRead ? { tablesNotRead: r.tablesNotRead } : {}),
    ...(a.stop
      ? { readStopped: { file: a.stop.file, line: a.stop.line, reason: a.stop.why } }
      : {}),
  };
}

export const traceJson = (a: TraceAnswer): string => jsonText(traceDoc(a));
