// A terminal's colour codes in a paste: `grep --color=always` (or an alias of grep that colours)
// wraps each match in SGR and erase-line sequences, "\e[01;31m\e[K" … "\e[m\e[K". Copied off a
// terminal, or through a page that dropped the escape byte, they stay in the text as "[01;31m[K"
// and "[m[K", inside chain names and addresses. The listing is the text without them.

/** The sequences: with their escape byte, or grep's pair without it (a page dropped it). */
// eslint-disable-next-line no-control-regex -- the escape byte is what is matched
const COLOUR = /\u001b\[[0-9;]*[mK]|\[(?:\d{1,3}(?:;\d{1,3})*)?m\[K/g;

/** Whether a text holds terminal colour codes. */
export const hasColours = (text: string): boolean => new RegExp(COLOUR.source).test(text);

/** The text without its terminal colour codes (line ends and every other byte kept). */
export const stripColours = (text: string): string =>
  // each code has the escape byte or grep's "m[K": a text without either is not scanned again
  text.includes('\u001b') || text.includes('m[K') ? text.replace(COLOUR, '') : text;

/** What a reader says of codes it removed. */
export const COLOURS_REMOVED =
  "terminal colour codes in the paste (grep --color's \\e[01;31m … \\e[m around each match) were removed before reading";
