// Word wrapping to a width, for text output and the TUI's panes alike: breaks at spaces; a word
// longer than a line fills the line and carries on in the next (a rule's long tokens stay whole
// as far as they fit). What is wrapped is sanitised here: it came from the cluster or a node.
import { sanitize } from '../core/sanitize.js';

/**
 * The lines of `text` at `width` columns: the first starts with `indent`, the others with
 * `hanging`. Never returns a line wider than `width` (a hanging indent wider than half the width
 * is dropped).
 */
export function wrap(raw: string, width: number, indent = '', hanging = indent): string[] {
  const text = sanitize(raw);
  const w = Math.max(1, width);
  const pad = hanging.length * 2 > w ? '' : hanging;
  const first = indent.length * 2 > w ? '' : indent;
  const out: string[] = [];
  let line = first;
  let start = first;
  for (const word of text.split(' ')) {
    const joined = line === start ? line + word : `${line} ${word}`;
    if (joined.length <= w) {
      line = joined;
    } else if (pad.length + word.length <= w) {
      out.push(line);
      line = pad + word;
      start = pad;
    } else {
      let rest = joined;
      while (rest.length > w) {
        out.push(rest.slice(0, w));
        rest = pad + rest.slice(w);
      }
      line = rest;
      start = pad;
    }
  }
  out.push(line);
  return out;
}
