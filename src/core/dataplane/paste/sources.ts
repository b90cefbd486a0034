// A paste that holds several hosts' or files' output, each labelled by the tool that gathered
// it: ansible's "HOST | CHANGED | rc=0 >>" and pssh's "[1] 12:00:00 [SUCCESS] HOST" above each
// host's output, head's and tail's "==> FILE <==" above each file's, pdsh's and clush's "HOST: "
// and grep -H's "FILE:" before each line. Each node's rules are its own: read together, one
// node's endpoints would be taken for another's, so the first source is read and the others named.

import { namedFew } from '../../nodes/access.js';

/** How the paste labels its sources. */
export type SourcesForm = 'ansible' | 'pssh' | 'head' | 'prefix';

/** A paste of several sources, as read: only the first's lines kept. */
export interface PasteSources {
  form: SourcesForm;
  /** Every source's label, in the order the paste first shows it. */
  labels: string[];
  /** The 1-based lines of the source read (its header included). */
  lines: number[];
  /** The 1-based lines of the other sources, blank in `text`. */
  unread: number[];
  /** The paste with the other sources' lines blank and, in the prefix form, the read source's
   * label taken off each line: every line keeps its number. */
  text: string;
}

/** Header lines above one source's output, with the label each names. */
const HEADERS: { form: SourcesForm; header: RegExp }[] = [
  {
    form: 'ansible',
    header:
      /^(\S+) \| (?:CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?)(?: \| rc=-?\d+)? (?:>>|=> \{)\s*$/,
  },
  { form: 'pssh', header: /^\[\d+\] \d\d:\d\d:\d\d \[(?:SUCCESS|FAILURE)\] (\S+)/ },
  { form: 'head', header: /^==> (.+) <==\s*$/ },
];

/** A label before a line (pdsh's "HOST: ", grep -H's "FILE:"): a name, not a number (grep -n's). */
const PREFIX = /^(?!\d+:)([A-Za-z0-9][\w.@-]*): ?/;

/** What a rules line of the readers starts with (iptables-save or -S, ipvsadm, nft), after a
 * label and grep -n's line number. */
const RULE_LINE =
  /^(?:\d+[:-])?\s*(?:-[ANIP] \S|:[A-Z][\w-]* |\*(?:nat|filter|mangle|raw|security)\s*$|COMMIT\s*$|(?:TCP|UDP|SCTP|FWM) +\S+:?\S* +\w|-> \S|Prot LocalAddress|(?:table|chain|map|set) (?:ip6? |inet )?[\w-]+ \{|elements = \{|add (?:rule|element|chain|map) )/;

/** Whether a paste whose first 4 KiB is `head` may hold several sources: a header, or a label
 * before a rules line, in it (the first source's output starts there). */
export const mayHoldSources = (head: string): boolean =>
  head.split('\n').some((l) => HEADERS.some((h) => h.header.test(l)) || labelled(l) !== undefined);

/** The label before a rules line, and the bytes the label takes. */
function labelled(line: string): RegExpExecArray | undefined {
  const m = PREFIX.exec(line);
  return m && RULE_LINE.test(line.slice(m[0].length)) ? m : undefined;
}

/** The paste's sources where it holds several (two labels or more); undefined for one source. */
export function pasteSources(text: string): PasteSources | undefined {
  const lines = text.split('\n');
  return blockSources(lines) ?? prefixSources(lines);
}

/** Sources under header lines: each header's label owns the lines up to the next header. */
function blockSources(lines: string[]): PasteSources | undefined {
  for (const { form, header } of HEADERS) {
    const owner: (string | undefined)[] = [];
    let label: string | undefined;
    for (const line of lines) {
      const m = header.exec(line);
      if (m) label = m[1]!;
      owner.push(label);
    }
    const labels = [...new Set(owner.filter((l): l is string => l !== undefined))];
    if (labels.length < 2) continue;
    const read = labels[0]!;
    return {
      form,
      labels,
      lines: owner.flatMap((l, i) => (l === read ? [i + 1] : [])),
      unread: owner.flatMap((l, i) => (l !== undefined && l !== read ? [i + 1] : [])),
      text: lines.map((l, i) => (owner[i] === undefined || owner[i] === read ? l : '')).join('\n'),
    };
  }
  return undefined;
}

/** Sources named before each line: two labels or more, each before a rules line. */
function prefixSources(lines: string[]): PasteSources | undefined {
  const labels = [...new Set(lines.flatMap((l) => labelled(l)?.[1] ?? []))];
  if (labels.length < 2) return undefined;
  const read = labels[0]!;
  // the read source's lines without their label; another source's lines blank; others kept
  const kept = lines.map((l) => {
    const label = PREFIX.exec(l);
    if (!label || !labels.includes(label[1]!)) return { text: l };
    return label[1] === read
      ? { text: l.slice(label[0].length), read: true }
      : { text: '', unread: true };
  });
  return {
    form: 'prefix',
    labels,
    lines: kept.flatMap((k, i) => (k.read ? [i + 1] : [])),
    unread: kept.flatMap((k, i) => (k.unread ? [i + 1] : [])),
    text: kept.map((k) => k.text).join('\n'),
  };
}

/** Whose output a paste of each form holds, and what its labels name. */
const FORM_SAID: Record<SourcesForm, [string, string]> = {
  ansible: ["ansible's output", 'hosts'],
  pssh: ["pssh's output", 'hosts'],
  head: ["head's or tail's output", 'files'],
  prefix: ['lines labelled by', 'hosts or files'],
};

/** What `rules --file` says of a paste of several sources: which one it read, and that the
 * others are not read (one line). */
export function sourcesSaid(s: PasteSources): string {
  const [read, ...others] = s.labels;
  const [whose, what] = FORM_SAID[s.form];
  const where =
    s.form === 'prefix'
      ? `its ${s.lines.length} lines, the label taken off each`
      : `lines ${s.lines[0]}-${s.lines.at(-1)}`;
  return `this paste holds ${whose} of ${s.labels.length} ${what}: only the first, ${read}, is read (${where}); ${namedFew(others, 5)} not read, and nothing is said of ${others.length === 1 ? 'it' : 'them'}: each node's rules are its own, give each to kdebug rules --file on its own`;
}
