// The kernel's connection tracking table as `conntrack -L` prints it, and its counters as
// `conntrack -S` prints them. A UDP "connection" to a Service lives on in conntrack after its
// endpoint is gone, and keeps going to the old Pod: the entries are evidence, read only.
import { familyOf } from '../ipv6.js';

/** One direction of a tracked connection. */
export interface ConntrackTuple {
  src: string;
  dst: string;
  sport?: number;
  dport?: number;
}

export interface ConntrackEntry {
  protocol: string;
  /** TCP's state (ESTABLISHED, TIME_WAIT ...); UDP has none. */
  state?: string;
  /** As the client sent it: to the Service address. */
  orig: ConntrackTuple;
  /** As the answer comes back: from the endpoint the connection was DNATed to. */
  reply: ConntrackTuple;
  /** No answer seen yet. */
  unreplied: boolean;
  /** The line as conntrack printed it. */
  text: string;
}

/** `udp 17 29 src=A dst=B sport=P dport=Q [UNREPLIED] src=C dst=D sport=R dport=S mark=0 use=1`
 * lines; anything else (the "N flow entries have been shown" summary) is left out, and an entry
 * line whose addresses are no IP addresses (conntrack prints nothing else there) is `unread`. */
export function parseConntrack(text: string): { entries: ConntrackEntry[]; unread: string[] } {
  const out: ConntrackEntry[] = [];
  const unread: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const head = /^(tcp|udp|sctp|icmp|icmpv6|\w+)\s+\d+\s+\d+\s+(?:([A-Z_]+)\s+)?src=/.exec(line);
    if (!head) continue;
    const tuples: ConntrackTuple[] = [];
    for (const m of line.matchAll(/src=(\S+) dst=(\S+)(?: sport=(\d+) dport=(\d+))?/g))
      tuples.push({
        src: m[1]!,
        dst: m[2]!,
        ...(m[3] ? { sport: Number(m[3]), dport: Number(m[4]) } : {}),
      });
    if (tuples.length < 2) continue;
    if (tuples.some((t) => familyOf(t.src) === undefined || familyOf(t.dst) === undefined)) {
      unread.push(line);
      continue;
    }
    out.push({
      protocol: head[1]!,
      ...(head[2] ? { state: head[2] } : {}),
      orig: tuples[0]!,
      reply: tuples[1]!,
      unreplied: line.includes('[UNREPLIED]'),
      text: line,
    });
  }
  return { entries: out, unread };
}

export interface ConntrackStats {
  /** Entries the kernel could not insert: two connections raced for one tuple (the SNAT race). */
  insertFailed: number;
  drop: number;
  cpus: number;
}

/** `cpu=0 found=0 invalid=0 insert=0 insert_failed=0 drop=0 ...` per CPU, summed. */
export function parseConntrackStats(text: string): ConntrackStats | undefined {
  const rows = text.split('\n').filter((l) => /^cpu=\d+\s/.test(l.trim()));
  if (rows.length === 0) return undefined;
  const sum = (key: string) =>
    rows.reduce((n, r) => n + Number(new RegExp(`\\b${key}=(\\d+)`).exec(r)?.[1] ?? 0), 0);
  return { insertFailed: sum('insert_failed'), drop: sum('drop'), cpus: rows.length };
}
