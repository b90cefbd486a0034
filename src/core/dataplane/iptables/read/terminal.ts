// A paste copied off a terminal's screen as it was drawn: each row padded with blanks to the
// screen's width and the rows run together on one line, a line longer than the screen wrapped
// onto the next row. Read back row by row, a wrapped line joined again.

/** A blank run this long, then text, starts a new row: -L's own columns pad far less. */
const ROW_GAP = 30;

/** The screen's width, where rows of the paste run together at it; undefined for any other. */
export function screenWidth(head: string): number | undefined {
  const lines = head.split('\n');
  const starts: number[] = [];
  for (const line of lines)
    for (const m of line.matchAll(new RegExp(`(?<= {${ROW_GAP}})\\S`, 'g'))) starts.push(m.index!);
  if (starts.length === 0) return undefined;
  const width = Math.min(...starts);
  // and a row padded with blanks to the very width: the screen's, not a wide gap in a line
  const padded = lines.some((l) => l.length > 0 && l.length % width === 0 && l.endsWith(' '));
  return width >= 60 && padded && starts.every((at) => at % width === 0) ? width : undefined;
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
