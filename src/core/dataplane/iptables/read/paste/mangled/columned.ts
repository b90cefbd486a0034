// `iptables -L … | column -t`: column re-aligns every field of every line, so the Chain line
// reads "Chain  KUBE-SERVICES  (2   references)" and a comment's words are spread apart
// ("/*  default/web  cluster  IP  */"). iptables never prints two blanks inside a Chain line, and
// column joins its own empty columns, so the listing is read with one space between its fields.

/** A Chain line as column -t spaces it: two or more blanks where iptables prints one. */
const COLUMNED_CHAIN =
  /^[ \t]*Chain(?:[ \t]{2,}\S+[ \t]+\(|[ \t]\S+(?:[ \t]{2,}\(|[ \t]\([^)]*[ \t]{2,}))(?:policy[ \t]+\w+[^)]*|\d+[ \t]+references)\)[ \t]*\r?$/m;

/** The first line of the paste that is a Chain line re-aligned by column -t, 1-based. */
export function columnedAt(head: string): number | undefined {
  const m = COLUMNED_CHAIN.exec(head);
  return m ? head.slice(0, m.index).split('\n').length : undefined;
}

/** A line of iptables-save or -S beside the listing, as iptables prints it (one space after its
 * -A: column -t would have put more): its quoted comments keep their blanks. */
const SAVE_LINE = /^[ \t]*(?:-[APNI] \S|:[A-Z]|\*[a-z]+\s*$|COMMIT\b|\[\d+:\d+\] -A \S)/;

/** Every -L line with its runs of blanks made one space, its indentation and line end kept. */
export function uncolumn(text: string): string {
  return text
    .split('\n')
    .map((l) =>
      SAVE_LINE.test(l) ? l : /^[ \t]*/.exec(l)![0] + l.trimStart().replace(/[ \t]{2,}/g, ' '),
    )
    .join('\n');
}

export const COLUMNED_NOTE =
  'an `iptables -L` listing re-aligned by `column -t` (blanks added between its fields and inside its comments): read with one space between fields';
