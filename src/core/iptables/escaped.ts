// A dump pasted inside a quoted string (a JSON field, a log line, a program's output): its line
// ends are the two characters `\n` and its quotes `\"`. Read it as the text it stands for.

/** A paste none of whose lines is a dump line, holding escaped line ends before dump lines. */
export function isEscapedDump(head: string): boolean {
  return (
    !/(?:^|\n)[ \t]*(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(head) &&
    /\\n(?:-A |\*(?:nat|filter|mangle|raw)\b|:KUBE-)/.test(head)
  );
}

/** The text with each escaped string's `\n`, `\t`, `\"` and `\\` read back, and the quotes that
 * held it taken off. */
export function unescapeDump(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      /\\n/.test(line)
        ? line
            .replace(/^[^"]*"(?=\*|:|-A |#)/, '')
            .replace(/"[,}\]\s]*$/, '')
            .replace(/\\(["\\nt])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c))
        : line,
    )
    .join('\n');
}
