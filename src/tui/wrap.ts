// A pane's text as lines at its width, so panes can scroll by line: paragraph by paragraph
// (wrapLine sanitises each), every line after the first indented, a word wider than the pane cut.
import { wrap as wrapLine } from '../output/wrap.js';

export function wrap(text: string, width: number, indent = ''): string[] {
  return text
    .split('\n')
    .flatMap((paragraph, i) => wrapLine(paragraph, width, i > 0 ? indent : '', indent, true));
}
