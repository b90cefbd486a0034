// Word wrapping to a width, done here rather than by Ink so panes can scroll by line.
import { sanitize } from '../core/sanitize.js';

/**
 * The lines of `text` at `width` columns, every line after the first starting with `indent`:
 * breaks at spaces; a word longer than a line fills the line and carries on in the next.
 */
export function wrap(text: string, width: number, indent = ''): string[] {
  const w = Math.max(1, width);
  const pad = indent.length * 2 > w ? '' : indent;
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    const start = out.length > 0 ? pad : '';
    let line = start;
    for (const word of sanitize(paragraph).split(' ')) {
      const joined = line === start ? line + word : `${line} ${word}`;
      if (joined.length <= w) {
        line = joined;
      } else if (pad.length + word.length <= w) {
        out.push(line);
        line = pad + word;
      } else {
        let rest = joined;
        while (rest.length > w) {
          out.push(rest.slice(0, w));
          rest = pad + rest.slice(w);
        }
        line = rest;
      }
    }
    out.push(line);
  }
  return out;
}
