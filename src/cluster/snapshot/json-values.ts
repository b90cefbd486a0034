// How much a JSON text becomes once parsed is its number of values, not its bytes: `{},` is 3
// bytes and ~32 bytes of heap, so 300 MiB of empty objects would take ~10 GB. objects.json is
// counted before JSON.parse sees it, and refused past a bound a real snapshot stays far below.

/**
 * The most values objects.json may hold. Measured on snapshots written by snapshot save: the
 * bench's 5,000 Nodes, their kube-proxy Pods and 10,000 Services with their EndpointSlices hold
 * 3.3 million (66 MB); with 50,000 application Pods besides, 18.1 million (388 MB). At most ~32
 * bytes of heap each (an empty object), the parse then stays under ~1 GiB whatever the text.
 */
export const MAX_JSON_VALUES = 32_000_000;

const [QUOTE, BACKSLASH] = [34, 92];
/** What each byte is outside a string: 1 counts ("{", "[", ":", ","), 2 opens a string. */
const KIND = new Uint8Array(256);
for (const c of '{[:,') KIND[c.charCodeAt(0)] = 1;
KIND[QUOTE] = 2;

/**
 * The values in a JSON text, counted as its object members, array elements and containers ("{",
 * "[", ":" and "," outside strings; UTF-8 keeps these bytes out of multi-byte characters);
 * stops counting past `most`. The text need not be valid: JSON.parse says what is wrong with it.
 */
export function jsonValues(bytes: Buffer, most = MAX_JSON_VALUES): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const kind = KIND[bytes[i]!];
    if (kind === 2) i = closingQuote(bytes, i);
    else if (kind === 1 && ++n > most) break;
  }
  return n;
}

/** Where the string opened at `open` ends (the end of the text when it does not): the first
 * quote after it not escaped, found with indexOf (a string's bytes are most of a snapshot's). */
function closingQuote(bytes: Buffer, open: number): number {
  for (let at = open; ;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return bytes.length;
    let b = at - 1;
    while (bytes[b] === BACKSLASH) b--;
    if ((at - 1 - b) % 2 === 0) return at;
  }
}

/**
 * The most members one JSON object may hold. The API server takes no request body over 3 MiB
 * and a member is 5 bytes at least (`"":0,`), so no object it stored holds more than ~630,000;
 * V8 parses an object of millions of keys in time that grows faster than its size.
 */
export const MAX_OBJECT_MEMBERS = 700_000;

const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COLON] = [123, 125, 91, 93, 58];

/** Whether some object in a JSON text holds more than `most` members (its ":" outside strings,
 * counted per nesting level); stops at the first. Invalid text is left to JSON.parse. */
export function objectWiderThan(bytes: Buffer, most = MAX_OBJECT_MEMBERS): boolean {
  const members: number[] = []; // per open container: members so far, -1 for an array
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) i = closingQuote(bytes, i);
    else if (b === OPEN_OBJECT) members.push(0);
    else if (b === OPEN_ARRAY) members.push(-1);
    else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) members.pop();
    else if (b === COLON && members.length > 0 && members[members.length - 1]! >= 0)
      if (++members[members.length - 1]! > most) return true;
  }
  return false;
}
