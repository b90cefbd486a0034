// Rules copied from a page's HTML source (a saved article, a feed's copy of a post): a syntax
// highlighter's tags around their words ("<span>-A</span> KUBE-SEP-X <span>-s</span> ..."), its
// characters as entities ("-&gt;"), the code block's closing tags. Read as the text the page
// showed, on the paste's own lines.

/** An HTML tag, opening or closing, with its attributes. */
const TAG = /<\/?[a-z][a-z0-9]*(?:\s[^<>]*)?>/gi;

/** What a rule line starts with once its tags are gone (iptables-save, -S, -c's counters). */
const RULE = /^[ \t]*(?:\[\d+:\d+\] )?-[AINP] \S/;

/** The entities a page writes for the characters rules hold. */
const ENTITIES: Record<string, string> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** The text a line of markup shows: its tags gone, its entities read. */
const shown = (line: string): string =>
  line
    .replace(TAG, '')
    .replace(
      /&(?:#(\d+)|#x([\da-f]+)|([a-z]+));/gi,
      (whole, dec?: string, hex?: string, name?: string) =>
        dec || hex
          ? String.fromCodePoint(parseInt((dec ?? hex)!, dec ? 10 : 16))
          : (ENTITIES[name!.toLowerCase()] ?? whole),
    );

/** The lines (1-based) of the head that are rule lines inside HTML tags. */
export function markupLines(head: string): number[] {
  const out: number[] = [];
  head.split('\n').forEach((l, i) => {
    if (!RULE.test(l) && RULE.test(shown(l))) out.push(i + 1);
  });
  return out;
}

/** The text with every line's tags and entities read as the page showed them. */
export const unmarkup = (text: string): string => text.split('\n').map(shown).join('\n');

export const markupNote = (lines: number[]): string =>
  `the rules are a page's HTML source (tags around their words from line ${lines[0]}, entities such as "&gt;"): read as the page showed them, without the tags`;
