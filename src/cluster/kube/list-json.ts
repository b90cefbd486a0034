// A list's JSON parsed one item at a time: JSON.parse of a page holds the tree of every item
// at once (1,000 kube-proxy Pods, 4 MB of text: 48 MB of heap), where kdebug keeps a few fields
// of each. The result is JSON.parse's, its items mapped; invalid JSON throws JSON.parse's error.

/** `JSON.parse(text)` with each of its top-level `items` mapped by `each` as it is parsed (with
 * the rest of the page, parsed first), so no more than one item is held whole. */
export function parseList(text: string, each: (item: unknown, page: unknown) => unknown): unknown {
  const spans = itemSpans(text);
  if (spans) {
    try {
      const page = JSON.parse(
        `${text.slice(0, spans.open)}[]${text.slice(spans.close + 1)}`,
      ) as Record<string, unknown>;
      page['items'] = spans.items.map(([from, to]) => each(JSON.parse(text.slice(from, to)), page));
      return page;
    } catch (e) {
      // invalid somewhere: JSON.parse of the whole says where
      if (!(e instanceof SyntaxError)) throw e;
    }
  }
  const page = JSON.parse(text) as unknown;
  const items = (page as { items?: unknown } | null)?.items;
  if (Array.isArray(items)) (page as { items: unknown[] }).items = items.map((x) => each(x, page));
  return page;
}

/** The characters that open or close an object, an array or a string. */
const STRUCTURE = /[{}[\]"]/g;
/** What may stand between two items of the array, and around them (JSON's whitespace only). */
const BETWEEN = /^[ \t\n\r]*,[ \t\n\r]*$/;
const BLANK = /^[ \t\n\r]*$/;

/**
 * Where the top-level object's `items` array is (its brackets) and each of its objects (start,
 * end past it), found by matching brackets outside strings; undefined where anything is not as a
 * list of objects has it (the caller then parses the whole text).
 */
function itemSpans(
  text: string,
): { open: number; close: number; items: [number, number][] } | undefined {
  let depth = 0;
  let open = -1;
  let close = -1;
  let start = -1;
  const items: [number, number][] = [];
  STRUCTURE.lastIndex = 0;
  for (let m = STRUCTURE.exec(text); m; m = STRUCTURE.exec(text)) {
    const i = m.index;
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      // a key of the page itself: `"items":` then its array
      if (depth === 1 && text.startsWith('"items"', i) && end === i + 6) {
        const colon = skipBlank(text, end + 1);
        if (text[colon] === ':') {
          const value = skipBlank(text, colon + 1);
          if (text[value] !== '[' || open >= 0) return undefined;
          open = value;
        }
      }
      STRUCTURE.lastIndex = end + 1;
      continue;
    }
    const inItems = open >= 0 && close < 0;
    if (c === '{' || c === '[') {
      depth++;
      if (inItems && depth === 3) {
        if (c !== '{') return undefined;
        const gap = text.slice(items.length ? items.at(-1)![1] : open + 1, i);
        if (!(items.length ? BETWEEN : BLANK).test(gap)) return undefined;
        start = i;
      }
    } else {
      depth--;
      if (inItems && depth === 2) items.push([start, i + 1]);
      if (inItems && depth === 1) {
        const gap = text.slice(items.length ? items.at(-1)![1] : open + 1, i);
        if (!BLANK.test(gap)) return undefined;
        close = i;
      }
      if (depth < 0) return undefined;
    }
  }
  return open >= 0 && close > open && depth === 0 ? { open, close, items } : undefined;
}

/** The index of the quote that ends the string opened at `i`, or -1. */
function stringEnd(text: string, i: number): number {
  for (let j = text.indexOf('"', i + 1); j >= 0; j = text.indexOf('"', j + 1)) {
    let slashes = 0;
    while (text[j - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) return j;
  }
  return -1;
}

function skipBlank(text: string, i: number): number {
  while (i < text.length && BLANK.test(text[i]!)) i++;
  return i;
}
