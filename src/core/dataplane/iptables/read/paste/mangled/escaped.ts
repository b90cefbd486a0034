// A dump pasted inside a quoted string (a JSON field, kube-proxy's own log line `rules="*nat\n…"`):
// its line ends are the two characters `\n`, its quotes `\"`. Read it as the text it stands for.

/** A paste none of whose lines is a dump line, holding escaped line ends before dump lines. */
export function isEscapedDump(head: string): boolean {
  // a line that starts as a dump line counts as one unless it runs on past escaped line ends
  // (a string the paste starts inside, at a rule's start)
  const lines = head.split('\n');
  return (
    !lines.some(
      (l) =>
        /^[ \t]*(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(l) && !ESCAPED_LINES.test(l),
    ) && /\\n(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(head)
  );
}

/** Where on a line the quoted string holding a dump opens: the quote before `*nat`, `:KUBE-…`,
 * `-A `, `# Generated`. */
const OPENS = /"(?=\*[a-z]+\\n|:[A-Z]|-A |# )/;

/** Escaped line ends before dump lines: a line that is a dump's lines run into one. */
const ESCAPED_LINES = /\\n(?:-A |\*(?:nat|filter|mangle|raw)\\n|:KUBE-)/;

/** The text with each line's escaped dump read back (JSON's escapes, `\uXXXX` included); a
 * line without one is kept as it is. */
export function unescapeDump(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const at = OPENS.exec(line)?.index;
      let literal: string;
      if (at === undefined) {
        // a part of the string without its opening quote (the paste starts inside it, as a
        // page's excerpt may): the line up to the quote that closes it, if any
        // (a quote not escaped before its first line end opens a string of another kind: b'…' is
        // Python's)
        const first = line.indexOf('\\n');
        if (!ESCAPED_LINES.test(line) || /(?<!\\)["'`]/.test(line.slice(0, first))) return line;
        literal = `"${line.slice(0, closingQuote(line, -1))}"`;
      } else {
        if (!line.includes('\\n', at)) return line;
        const end = closingQuote(line, at);
        // a string the paste cuts before its closing quote: closed here
        literal = end < line.length ? line.slice(at, end + 1) : `${line.slice(at)}"`;
      }
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
