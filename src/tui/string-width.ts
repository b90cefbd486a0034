// string-width as Ink measures with it (the build puts this in its place): kdebug draws ASCII,
// colour codes and a few narrow marks, which take 50 µs a call through the grapheme segmenter
// and emoji expressions on a first frame; anything else still goes to string-width itself.
import stringWidth from 'string-width';

/** Marks kdebug draws and the corners and sides of Ink's border styles; each is one column
 * (the tests hold string-width to it). */
export const NARROW = new Set(
  Array.from('◐›…✗✓→—▏▾▸├┬┴┼×·⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏┌─┐│└┘╔═╗║╚╝╭╮╰╯┏━┓┃┗┛╓╖╙╜╒╕╘╛', (c) => c.charCodeAt(0)),
);

type Options = Parameters<typeof stringWidth>[1];

export default function width(text: string, options?: Options): number {
  if (
    typeof text !== 'string' ||
    options?.countAnsiEscapeCodes ||
    options?.ambiguousIsNarrow === false
  )
    return stringWidth(text, options);
  let w = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e) w++;
    else if (c === 0x1b && text.charCodeAt(i + 1) === 0x5b) {
      // a colour (SGR) code takes no column: ESC [ digits and ; then m
      i += 2;
      while (
        i < text.length &&
        ((text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) || text.charCodeAt(i) === 0x3b)
      )
        i++;
      if (text.charCodeAt(i) !== 0x6d) return stringWidth(text, options);
    } else if (NARROW.has(c)) w++;
    else return stringWidth(text, options);
  }
  return w;
}
