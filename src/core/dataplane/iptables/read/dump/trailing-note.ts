// An author's note typed after a rule on its line ("-A X ... -j RETURN  # why it matches"): the
// shell's comment mark, which iptables never prints unquoted at a word's start (it quotes every
// comment and log prefix), so the rule before it is read whole and the note is not.

const SP = 32;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;

/** Where a note after the rule in [s, e) starts (the blank before its "#"), or -1: a "#" after a
 * blank, outside quotes, with a rule before it. */
export function trailingNote(b: Uint8Array, s: number, e: number): number {
  let quoted = false;
  for (let k = s; k < e; k++) {
    const c = b[k];
    if (quoted) {
      if (c === BACKSLASH) k++;
      else if (c === QUOTE) quoted = false;
    } else if (c === QUOTE) quoted = true;
    else if (c === HASH && k > s && (b[k - 1] === SP || b[k - 1] === TAB)) {
      let end = k;
      while (end > s && (b[end - 1] === SP || b[end - 1] === TAB)) end--;
      return end > s ? end : -1;
    }
  }
  return -1;
}
