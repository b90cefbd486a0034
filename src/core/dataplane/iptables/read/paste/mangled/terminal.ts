// A paste copied off a terminal's screen as it was drawn: each row padded with blanks to the
// screen's width and the rows run together on one line, a line longer than the screen wrapped
// onto the next row. Read back row by row, a wrapped line joined again.

/** A blank run this long, then text, starts a new row: -L's own columns pad far less (20 at most),
 * and iptables-save's lines not at all. */
const ROW_GAP = 30;

/** What an `iptables -L` line starts with: a Chain line, a column header, or a rule's columns
 * (its number and counters, its target, its protocol and fragment column). */
const LIST_LINE =
  /^(?:Chain \S+ \(|(?:num +)?(?:pkts +bytes +)?target +prot +opt\b|(?:\d+[KMGT]? +){0,3}(?:\S+ +)?!?(?:all|tcp|udp|sctp|icmp|ipv6-icmp|\d+) +(?:--|-f|!f) )/;

/** The screen's width, where rows of the paste run together at it; undefined for any other. */
export function screenWidth(head: string): number | undefined {
  const lines = head.split('\n');
  const starts: number[] = [];
  for (const line of lines)
    for (const m of line.matchAll(new RegExp(`(?<= {${ROW_GAP}})\\S`, 'g'))) {
      // a row starts as -L starts a line (not at another tool's wide columns)
      if (LIST_LINE.test(line.slice(m.index))) starts.push(m.index!);
    }
  if (starts.length === 0) return undefined;
  // every row starts at a multiple of the width; the blanks that pad each line's last row may be
  // stripped (by an editor, or a page), so no line need be padded to the width itself
  const width = Math.min(...starts);
  return width >= 60 && starts.every((at) => at % width === 0) ? width : undefined;
}

/** The rows of the screen, one per line: blank rows kept empty, a wrapped line joined. */
export function screenRows(text: string, width: number): string {
  const rows: string[] = [];
  let wrapped = false; // the last row filled the screen's width: its line goes on in the next
  for (const line of text.split('\n')) {
    for (let at = 0; at === 0 || at < line.length; at += width) {
      const row = line.slice(at, at + width);
      if (wrapped) rows[rows.length - 1] += row.trimEnd();
      else rows.push(row.trimEnd());
      wrapped = row.length === width && !/\s$/.test(row);
    }
  }
  return rows.join('\n');
}
