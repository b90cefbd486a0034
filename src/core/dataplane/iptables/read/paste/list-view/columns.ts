// An `iptables -L` listing's Chain lines and column headers: which columns the rows under a header
// hold (--line-numbers, -v), and a last line cut inside a Chain line or a header.

export interface Columns {
  num: boolean;
  counters: boolean;
  interfaces: boolean;
}

export const HEADER =
  /^[ \t]*(num +)?(pkts +bytes +)?target +prot +opt +(in +out +)?source +destination\s*$/;
export const CHAIN = /^[ \t]*Chain (\S+) \((?:policy (\w+)[^)]*|\d+ references)\)\s*$/;

/** A last line cut inside a Chain line ("Chain", "Chain KUBE-SEP-… (") or a column header, or
 * in its first word ("Cha": a Chain line, or a rule's target). */
export function cutHead(
  line: string,
): 'a Chain line' | 'a column header' | "a Chain line or a rule's target" | undefined {
  const t = line.trim();
  if (/^Chain(?: \S+(?: \([^)]*)?)?$/.test(t)) return 'a Chain line';
  if (/^C(?:h(?:ai?)?)?$/.test(t)) return "a Chain line or a rule's target";
  const words = t.split(/\s+/);
  // its last word may be cut too ("tar", "destin"): the words of one of the headers -L prints
  const cut =
    words.length > 1 &&
    HEADERS.some((header) =>
      words.every((w, k) => (k === words.length - 1 ? header[k]?.startsWith(w) : header[k] === w)),
    );
  return cut ? 'a column header' : undefined;
}

/** The column headers -L prints: with --line-numbers (num), -v (pkts bytes, in out), or neither. */
const HEADERS = [true, false].flatMap((num) =>
  [true, false].map((v) => [
    ...(num ? ['num'] : []),
    ...(v ? ['pkts', 'bytes'] : []),
    'target',
    'prot',
    'opt',
    ...(v ? ['in', 'out'] : []),
    'source',
    'destination',
  ]),
);

/** The columns a column header names; undefined where the line is none. */
export function headerColumns(line: string): Columns | undefined {
  const h = HEADER.exec(line);
  return h ? { num: !!h[1], counters: !!h[2], interfaces: !!h[3] } : undefined;
}
