// A dump pasted inside a quoted string (a JSON field, kube-proxy's own log line `rules="*nat\n…"`):
// its line ends are the two characters `\n`, its quotes `\"`. Read it as the text it stands for.

/** A paste none of whose lines is a dump line, holding escaped line ends before dump lines. */
export function isEscapedDump(head: string): boolean {
  return (
    !/(?:^|\n)[ \t]*(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(head) &&
    /\\n(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(head)
  );
}

/** Where on a line the quoted string holding a dump opens: the quote before `*nat`, `:KUBE-…`,
 * `-A `, `# Generated`. */
const OPENS = /"(?=\*[a-z]+\\n|:[A-Z]|-A |# )/;

/** The text with each line's escaped dump read back (JSON's escapes, `\uXXXX` included); a
 * line without one is kept as it is. */
export function unescapeDump(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const at = OPENS.exec(line)?.index;
      if (at === undefined || !line.includes('\\n', at)) return line;
      const end = closingQuote(line, at);
      // a string the paste cuts before its closing quote: closed here
      const literal = end < line.length ? line.slice(at, end + 1) : `${line.slice(at)}"`;
      try {
        return JSON.parse(literal) as string;
      } catch {
        // not JSON's escapes (a log's own quoting): the common ones by hand
        return literal
          .slice(1, -1)
          .replace(/\\(["\\nt])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
      }
    })
    .join('\n');
}

/** The quote that closes the string opened at `at` (or the line's end). */
function closingQuote(line: string, at: number): number {
  for (let k = at + 1; k < line.length; k++) {
    if (line[k] === '\\') k++;
    else if (line[k] === '"') return k;
  }
  return line.length;
}
