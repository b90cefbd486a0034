// Brackets as they nest in JSON (and in nft's text, whose sets and maps are braced): the one
// scanner the readers find a value's end, an item's bounds or a top-level comma with.

/**
 * Walks `text` from `from`: `visit` sees each character outside a string (its quotes and what it
 * holds skipped; inside one a backslash escapes the next character, unless `escapes` is false, as
 * in nft's text), with the depth of brackets ("{", "[") open after it; a `false` from `visit`
 * stops the walk there. Returns where the walk stopped (the text's length at its end) and whether
 * that is inside a string.
 */
export function walkBrackets(
  text: string,
  from: number,
  visit: (ch: string, at: number, depth: number) => boolean | void,
  escapes = true,
): { end: number; quoted: boolean } {
  let depth = 0;
  let quoted = false;
  for (let k = from; k < text.length; k++) {
    const ch = text[k]!;
    if (quoted) {
      if (escapes && ch === '\\') k++;
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      continue;
    }
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    if (visit(ch, k, depth) === false) return { end: k, quoted: false };
  }
  return { end: text.length, quoted };
}

/** Where the bracket opened at `start` closes (its index), strings skipped; -1 where none does. */
export function closingBracket(text: string, start: number): number {
  const closes = (ch: string) => ch === '}' || ch === ']';
  const { end } = walkBrackets(text, start, (ch, _at, depth) => !(closes(ch) && depth <= 0));
  return end < text.length ? end : -1;
}
