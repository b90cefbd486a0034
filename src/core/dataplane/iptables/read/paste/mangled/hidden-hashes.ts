// kube-proxy chain names whose hash a paste's author hid (KUBE-SVC-XXXXXXXXXXXXXXXX,
// KUBE-SEP-xxxx, KUBE-FW-<hash>, KUBE-EXT-***), often in one place and not another: a jump to
// KUBE-SVC-XXXX… and the chain KUBE-SVC-TCOU… it is would make two trees of one Service. kube-proxy
// names each chain after what it is for (../../../kube-proxy/chain-names.ts): a Service port and
// protocol, and for KUBE-SEP its endpoint too, which each line's comment, protocol and DNAT say.
// Each hidden name is read as the name kube-proxy gave that chain where its own line ties it to
// one chain; where its line does not, it is left as written and said, and its chain claims nothing.
import { endpointChain, hash16 } from '../../../../kube-proxy/chain-names.js';

const KINDS = ['SVC', 'SVL', 'EXT', 'FW', 'XLB', 'SEP'];

/** A hash as authors hide it: x's (any number), <hash>, stars, dots. (Other letters repeated,
 * KUBE-SVC-BBBBBBBB, are as likely a name cut at the paste's end.) */
const HIDDEN_TAIL = /^(?:[Xx]{3,}|<[\w.-]*>|\*+|\.{3,}|…+|#{2,}|\?{2,})$/;

/** A kube-proxy chain name anywhere in a line, its hash perhaps hidden (checked by hiddenKind). */
const NAME = /KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP)-(?:[\w*.…#?]+|<[\w.-]*>)/g;

/** The kind (SVC, SEP ...) of a chain name whose hash was hidden; undefined for any other name. */
export function hiddenKind(name: string): string | undefined {
  const m = /^KUBE-([A-Z]{2,3})-(.+)$/.exec(name);
  if (!m || !KINDS.includes(m[1]!)) return undefined;
  const tail = m[2]!;
  return HIDDEN_TAIL.test(tail) ? m[1] : undefined;
}

/** Whether the bytes [s, e) may be a kube-proxy chain name with its hash hidden: a cheap look
 * at a rule's target or a chain's name (most are kube-proxy's own), hiddenKind deciding. */
export function mayHideHash(b: Uint8Array, s: number, e: number): boolean {
  // "KUBE-" then SVC-, SVL-, EXT-, XLB-, SEP- or FW-
  if (e - s < 9 || b[s] !== 75 || b[s + 1] !== 85 || b[s + 4] !== 45) return false;
  const t = b[s + 7] === 45 ? s + 8 : b[s + 8] === 45 ? s + 9 : -1;
  if (t < 0 || !(b[s + 5] === 83 || b[s + 5] === 69 || b[s + 5] === 70 || b[s + 5] === 88))
    return false;
  // x's, or a first character not in kube-proxy's base32, may be a hidden hash
  const c = b[t]!;
  return ((c === 88 || c === 120) && b[t + 1] === c) || c < 48 || (c > 57 && c < 65) || c > 90;
}

/** What the restored text says: each hidden name read as a chain, and the lines it could not. */
export interface Restored {
  text: string;
  /** Hidden names read as kube-proxy's, with the lines each was read on. */
  read: { hidden: string; as: string; lines: number[] }[];
  /** Hidden names some line did not tie to one chain: left as written, and why. */
  unread: { hidden: string; lines: number[]; why: string }[];
}

interface Found {
  line: number;
  at: number;
  hidden: string;
  kind: string;
  /** Whether it names the rule's chain (-A) or its jump's target (-j, -g). */
  role?: 'chain' | 'target';
  as?: string;
}

/** A rule line's chain, and its jump's target. */
const CHAIN = /^\s*(?:\[\d+:\d+\] )?-A (\S+)/;
const TARGET = / -[jg] (\S+)/;

/** The ServicePortName ("ns/name:port", "ns/name") a kube-proxy comment names. */
const portName = (comment: string | undefined) =>
  comment === undefined
    ? undefined
    : /(?:^|\s)([a-z0-9][-a-z0-9.]*\/[a-z0-9][-a-z0-9.]*(?::[^\s]*)?)(?=\s|$)/.exec(comment)?.[1];

/** What a rule line says of the chains it names: its comment's Service port, its protocol, the
 * endpoint it names ("-> ip:port", a DNAT's) and the source address it matches. */
function facts(line: string) {
  const comment = /--comment (?:"((?:[^"\\]|\\.)*)"|(\S+))/.exec(line);
  const said = comment ? (comment[1] ?? comment[2]) : undefined;
  return {
    name: portName(said),
    protocol: /(?:^|\s)-p (tcp|udp|sctp)\b/.exec(line)?.[1],
    endpoint:
      / -> (\S+:\d+)$/.exec(said ?? '')?.[1] ?? /--to-destination (\S+:\d+)/.exec(line)?.[1],
    source: /(?:^|\s)-s ([\d.]+|[\da-f:]+)(?:\/(?:32|128))?(?=\s)/.exec(line)?.[1],
  };
}

/**
 * The text with each hidden chain name that a line ties to one chain written as kube-proxy names
 * that chain; undefined where the text hides no hash. A line ties a name to its chain by its
 * comment's Service port, the protocol that port has in the paste, and for KUBE-SEP the endpoint;
 * a declaration takes one of the chains the other lines read that hidden name as; any other line
 * that does not tie it (a jump without a comment, or whose comment names no endpoint) none.
 */
export function restoreHiddenHashes(text: string): Restored | undefined {
  const lines = text.split('\n');
  const found: Found[] = [];
  const onLine = new Map<number, Found[]>(); // the hidden names of each line
  const said = new Map<number, ReturnType<typeof facts>>(); // what each such line says
  const protocols = new Map<string, Set<string>>(); // Service port -> protocols its lines say
  const endpoints = new Map<string, Set<string>>(); // "port ip" -> "ip:port" its DNATs say
  const shown = new Set<string>(); // kube-proxy names the paste shows whole
  const add = <T>(m: Map<string, Set<T>>, k: string, v: T) =>
    m.set(k, (m.get(k) ?? new Set<T>()).add(v));
  lines.forEach((l, i) => {
    const chain = CHAIN.exec(l);
    const target = TARGET.exec(l);
    const start = (m: RegExpExecArray | null) => (m ? m.index + m[0].length - m[1]!.length : -1);
    for (const m of l.matchAll(NAME)) {
      const kind = hiddenKind(m[0]);
      if (!kind) shown.add(m[0]);
      else {
        const role =
          m.index === start(chain) ? 'chain' : m.index === start(target) ? 'target' : undefined;
        const x: Found = {
          line: i + 1,
          at: m.index,
          hidden: m[0],
          kind,
          ...(role ? { role } : {}),
        };
        found.push(x);
        onLine.set(x.line, [...(onLine.get(x.line) ?? []), x]);
      }
    }
    const f = facts(l);
    if (onLine.has(i + 1)) said.set(i + 1, f);
    if (f.name && f.protocol) add(protocols, f.name, f.protocol);
    if (f.name && f.endpoint)
      add(
        endpoints,
        `${f.name} ${f.endpoint.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}`,
        f.endpoint,
      );
  });
  if (found.length === 0) return undefined;
  // each hidden name a line ties to one chain
  for (const x of found) {
    const f = said.get(x.line)!;
    if (!f.name) continue;
    const endpoint =
      x.kind !== 'SEP' ? '' : (f.endpoint ?? one(endpoints.get(`${f.name} ${f.source ?? ''}`)));
    if (endpoint === undefined) continue;
    // a port's protocol: its lines', else the one of tcp, udp, sctp whose name the paste shows
    const named = (p: string) =>
      x.kind === 'SEP'
        ? endpointChain(f.name!, p, endpoint)
        : `KUBE-${x.kind}-${hash16(f.name! + p)}`;
    const protocol =
      f.protocol ??
      one(protocols.get(f.name)) ??
      one(new Set(['tcp', 'udp', 'sctp'].filter((p) => shown.has(named(p)))));
    if (protocol) x.as = named(protocol);
  }
  // a jump between one Service port's own chains (EXT to SVC, FW to EXT ...) keeps their hash:
  // either end's name gives the other's
  for (let pass = 0; pass < 2; pass++)
    for (const x of found) {
      if (x.as || x.kind === 'SEP' || !x.role) continue;
      const l = lines[x.line - 1]!;
      const other = x.role === 'chain' ? TARGET.exec(l) : CHAIN.exec(l);
      const at = other ? other.index + other[0].length - other[1]!.length : -1;
      const hiddenToo = onLine.get(x.line)!.find((y) => y.at === at);
      const name = hiddenToo ? hiddenToo.as : other?.[1];
      const hash = name && /^KUBE-(?:SVC|SVL|EXT|FW|XLB)-([A-Z0-9]{16})$/.exec(name)?.[1];
      if (hash) x.as = `KUBE-${x.kind}-${hash}`;
    }
  // a declaration, which says nothing of its chain: one of the chains the others read its name
  // as, each declared once; a rule that does not tie it stays as written (the paste shows one
  // chain hidden so, not that the name stands for no other)
  const readAsSet = new Map<string, Set<string>>();
  for (const x of found) if (x.as) add(readAsSet, x.hidden, x.as);
  const readAs = new Map([...readAsSet].map(([k, v]) => [k, [...v]]));
  const declared = new Map<string, number>(); // declarations of each hidden name so far
  for (const x of found) {
    if (x.as || !DECLARATION.test(lines[x.line - 1]!)) continue;
    const k = declared.get(x.hidden) ?? 0;
    declared.set(x.hidden, k + 1);
    x.as = readAs.get(x.hidden)?.[k];
  }
  // each line's names written back, from its end so that offsets hold
  for (const x of [...found].reverse()) {
    if (!x.as) continue;
    const l = lines[x.line - 1]!;
    lines[x.line - 1] = l.slice(0, x.at) + x.as + l.slice(x.at + x.hidden.length);
  }
  const read = new Map<string, { hidden: string; as: string; lines: number[] }>();
  const unread = new Map<string, Restored['unread'][number]>();
  for (const x of found) {
    if (x.as) {
      const key = `${x.hidden} ${x.as}`;
      if (!read.has(key)) read.set(key, { hidden: x.hidden, as: x.as, lines: [] });
      read.get(key)!.lines.push(x.line);
      continue;
    }
    const as = readAs.get(x.hidden) ?? [];
    if (!unread.has(x.hidden))
      unread.set(x.hidden, {
        hidden: x.hidden,
        lines: [],
        why:
          as.length > 1
            ? `it stands for ${as.length} chains of the paste (${as.join(', ')}), and these lines do not say which`
            : as.length === 1
              ? `these lines do not say which chain it is: other lines read it as ${as[0]}, but a chain the paste does not hold may be hidden alike`
              : 'no line names the Service port (and endpoint) whose chain it is',
      });
    unread.get(x.hidden)!.lines.push(x.line);
  }
  return { text: lines.join('\n'), read: [...read.values()], unread: [...unread.values()] };
}

/** A chain's declaration: iptables-save's ":CHAIN", iptables -S's "-N CHAIN" (and -L's, read
 * as -S before this). */
const DECLARATION = /^\s*(?::|-N )KUBE-/;

/** The one value of a set; undefined for none or several. */
const one = <T>(s: Set<T> | undefined): T | undefined =>
  s?.size === 1 ? s.values().next().value : undefined;
