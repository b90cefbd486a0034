// A markdown code fence typed on the listing's own line: "```-A KUBE-SVC-..." opening the block,
// "... -j KUBE-SEP-X```" closing it. The fence is markdown's, not the listing's: read off, the
// line keeps its number. CommonMark takes an opening fence's text for its info string (GitHub
// shows no such line); a closing fence must stand alone, so the author's "...```" is text there.

/** A fence at a line's start, up to 3 blanks before it, and what follows it. */
const OPENING = /^([ \t]{0,3})(`{3,}|~{3,})[ \t]*(.*)$/;

/** A fence run at a line's end, blanks after it. */
const CLOSING = /(`{3,}|~{3,})[ \t]*$/;

/** A line a fence is glued to: at its start (the block it opens) or its end (the block it closes). */
export interface GluedFence {
  line: number;
  at: 'start' | 'end';
}

/** The text with each fence glued to a listing's line read off, and those lines (1-based);
 * `listing` tells a line some reader reads from prose. A closing fence is read off where a block
 * is open, or where no fence opened one above (the paste starting inside the block). */
export function unfence(
  text: string,
  listing: (line: string) => boolean,
): { text: string; glued: GluedFence[] } {
  const glued: GluedFence[] = [];
  let open: string | undefined; // the fence run that opened the block the line is in
  let opened = false; // a fence above the line
  const out = text.split('\n').map((raw, i) => {
    const cr = raw.endsWith('\r') ? '\r' : '';
    let line = cr ? raw.slice(0, -1) : raw;
    const head = OPENING.exec(line);
    if (head && open === undefined && listing(head[3]!)) {
      glued.push({ line: i + 1, at: 'start' });
      line = head[1]! + head[3]!;
      open = head[2]!;
      opened = true;
    } else if (head) {
      // a fence on its own, its info string perhaps: it opens a block, or closes the open one
      const closes = open !== undefined && head[2]![0] === open[0] && head[3] === '';
      open = closes ? undefined : open === undefined ? head[2]! : open;
      opened = true;
      return raw;
    }
    const tail = CLOSING.exec(line);
    const before = tail ? line.slice(0, tail.index) : '';
    if (
      tail &&
      (open === undefined ? !opened : tail[1]![0] === open[0] && tail[1]!.length >= open.length) &&
      before.trim() !== '' &&
      listing(before.trim())
    ) {
      glued.push({ line: i + 1, at: 'end' });
      line = before.trimEnd();
      open = undefined;
      opened = true;
    }
    return line + cr;
  });
  return glued.length > 0 ? { text: out.join('\n'), glued } : { text, glued };
}

/** What a reader says of the fences it read off, one clause. */
export function fencesNote(glued: GluedFence[]): string {
  const at = (where: GluedFence['at']) => glued.filter((g) => g.at === where).map((g) => g.line);
  const opens = at('start');
  const closes = at('end');
  const parts = [
    ...(opens.length > 0
      ? [
          `a markdown fence is glued to the start of line${lines(opens)} ("\`\`\`" then the listing: GitHub takes that text for the fence's language and shows no such line)`,
        ]
      : []),
    ...(closes.length > 0
      ? [
          `${opens.length > 0 ? 'its closing fence' : 'a closing markdown fence'} to the end of line${lines(closes)}`,
        ]
      : []),
  ];
  return `${parts.join(', ')}: read without the fence${glued.length === 1 ? '' : 's'}, as the listing was printed`;
}

const lines = (ns: number[]): string => `${ns.length === 1 ? '' : 's'} ${ns.join(', ')}`;
