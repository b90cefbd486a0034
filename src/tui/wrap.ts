// A pane's text as lines at its width, so panes can scroll by line: sanitised (the text came
// from the cluster), paragraph by paragraph, every line after the first indented.
import { sanitize } from '../core/sanitize.js';
import { wrap as wrapLine } from '../output/wrap.js';

export function wrap(text: string, width: number, indent = ''): string[] {
  return text
    .split('\n')
    .flatMap((paragraph, i) => wrapLine(sanitize(paragraph), width, i > 0 ? indent : '', indent));
}
