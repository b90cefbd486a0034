// Text from the cluster, a node or a pasted file reaches the terminal only through here: a Service
// name, a rule comment or a pasted line could carry escape sequences that move the cursor, retitle
// the window or hide text.

// C0 and C1 controls (an escape sequence's ESC among them) and the bidirectional overrides and
// isolates that reorder what is shown ("Trojan Source")
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g; // eslint-disable-line no-control-regex

/** Whether the text holds a character sanitize would escape. */
export const hasUnsafe = (s: string) => s.search(UNSAFE) >= 0;

/** One unsafe character as the reader can see it: `\x1b`, `\u202e` (always four hex digits). */
const escaped = (ch: string) => {
  const c = ch.charCodeAt(0);
  return c < 0x100
    ? `\\x${c.toString(16).padStart(2, '0')}`
    : `\\u${c.toString(16).padStart(4, '0')}`;
};

/** The most of one string a screen or a text report shows: a 1 MB label is data, not a page. */
export const MAX_SHOWN = 4096;

/** What sanitize shows of one unsafe character: a tab or newline as a space, any other escaped. */
const shown = (ch: string) => (ch === '\t' || ch === '\n' ? ' ' : escaped(ch));

/** One line of display text: tabs and newlines as spaces, every other control or BIDI character
 * shown escaped (`\x1b[2J`: the value the input holds, none of it obeyed), at most MAX_SHOWN
 * characters of that text (the rest counted, not shown; an escape shown whole or not at all).
 * Backslashes are kept as they are: the text may hold excerpts escaped already (escapeControls),
 * which a second escape would garble. */
export function sanitize(s: string): string {
  // the length shown: each unsafe character's escape in place of it
  let length = s.length;
  for (const m of s.matchAll(UNSAFE)) length += shown(m[0]).length - 1;
  if (length <= MAX_SHOWN) return s.replace(UNSAFE, shown);
  // the note fits in MAX_SHOWN: sanitising the result again changes nothing
  const room = MAX_SHOWN - 40;
  let out = '';
  let from = 0; // the input's characters before it are shown
  for (const m of s.matchAll(UNSAFE)) {
    if (out.length + (m.index - from) >= room) break; // the text up to it fills the room
    out += s.slice(from, m.index);
    from = m.index;
    const escape = shown(m[0]);
    if (out.length + escape.length > room)
      return `${out}… (${length - out.length} more characters)`;
    out += escape;
    from++;
  }
  out += s.slice(from, from + room - out.length);
  return `${out}… (${length - out.length} more characters)`;
}

// what JSON.stringify leaves raw but a terminal may obey or reorder: C1 controls, BIDI, line separators
const JSON_UNSAFE = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/** JSON text with what a terminal would obey escaped (each such character stands alone: the text
 * may be escaped in pieces). */
const inert = (json: string) =>
  json.replace(JSON_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A document as JSON text that is exact (it parses back to the same strings) and inert on a terminal. */
export function jsonText(doc: unknown): string {
  // the newline joined first: the text is made flat once, by the replace, not again when written
  return inert(JSON.stringify(doc, null, 2) + '\n');
}

/** The elements of a document's big array JSON-encoded at once by jsonPieces. */
const CHUNK = 1000;

/** jsonText(doc) handed to `out` in pieces: the first top-level array of more than CHUNK elements
 * CHUNK elements at a time, so that a big document (plain data) is never one string: V8 builds
 * the JSON of 100,000 endpoints in parts it then copies whole, each copy a collection's work. */
export function jsonPieces(doc: object, out: (text: string) => void): void {
  const record = doc as Record<string, unknown>;
  const key = Object.keys(record).find((k) => {
    const v = record[k];
    return Array.isArray(v) && v.length > CHUNK;
  });
  if (key === undefined || 'toJSON' in record) return out(jsonText(doc));
  const array = record[key] as unknown[];
  // the document with that array empty: its text up to the array's "[", and from its "]"
  const name = `\n  ${JSON.stringify(key)}: [`;
  const around = JSON.stringify({ ...record, [key]: [] }, null, 2);
  const at = around.indexOf(`${name}]`) + name.length;
  out(inert(around.slice(0, at)));
  // each chunk as the only array of an object: its elements indented as the document's are
  const open = `{${name}\n`.length;
  const close = '\n  ]\n}'.length;
  for (let i = 0; i < array.length; i += CHUNK) {
    const text = JSON.stringify({ [key]: array.slice(i, i + CHUNK) }, null, 2);
    // apart, not joined: joining made a copy of each chunk's megabytes before its write
    out(i === 0 ? '\n' : ',\n');
    out(inert(text.slice(open, -close)));
  }
  out(inert(`\n  ${around.slice(at)}\n`));
}

/**
 * sanitize(), cutting the result into pieces by a mark on the original characters (the matched
 * ones of a search hit): an escaped character carries its own mark, whole.
 */
export function sanitizeMarked(
  s: string,
  marked: (index: number) => boolean,
): { text: string; marked: boolean }[] {
  const parts: { text: string; marked: boolean }[] = [];
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const shown = ch === '\t' || ch === '\n' ? ' ' : ch.replace(UNSAFE, escaped);
    const m = marked(i);
    const last = parts[parts.length - 1];
    if (last && last.marked === m) last.text += shown;
    else parts.push({ text: shown, marked: m });
  }
  return parts;
}

/** An excerpt of input quoted in a message: every control or BIDI character shown escaped
 * (`\x1b`, `\u202e`), so the reader sees what the input holds and the terminal obeys none of it;
 * a backslash of the input before x or u doubled (`\\x41` is the input's four characters `\x41`),
 * so that no escape can be mistaken for the input's own text. */
export const escapeControls = (s: string): string =>
  s.replace(/\\+(?=[xu])/g, (run) => run + run).replace(UNSAFE, escaped);

/** A short, escaped excerpt of one input line. */
export function excerpt(s: string, max = 80): string {
  const cut = s.length > max ? s.slice(0, max) + '...' : s;
  return escapeControls(cut);
}
