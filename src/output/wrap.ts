// Word wrapping to a width, for text output and the TUI's panes alike: breaks at spaces. A word
// longer than a line stays whole on a line of its own, past the width, so a copied path or name
// still works; a pane cuts it instead (its lines must fit). What is wrapped is sanitised here: it
// came from the cluster or a node.
import { hasUnsafe, sanitize } from '../core/sanitize.js';

/**
 * The lines of `text` at `width` columns: the first starts with `indent`, the others with
 * `hanging` (dropped when wider than half the width). Only a word longer than a line goes past
 * `width`, unless `cut`: then it fills the line and carries on in the next.
 */
export function wrap(
  raw: string,
  width: number,
  indent = '',
  hanging = indent,
  cut = false,
): string[] {
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
      // a break where two spaces were leaves none at the end of the line
      out.push(line.trimEnd());
      line = pad + word;
      start = pad;
    } else if (!cut) {
      if (line !== start) out.push(line.trimEnd());
      line = line === start ? joined : pad + word;
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

/** `text` wrapped after `prefix` on its first line ("  100%  ", " 3. "), the other lines under
 * the text's start; under a prefix wider than half the line. */
export function wrapAfter(prefix: string, text: string, width: number): string[] {
  if (prefix.length * 2 > width) return [prefix.trimEnd(), ...wrap(text, width, '    ')];
  const pad = ' '.repeat(prefix.length);
  const lines = wrap(text, width, pad, pad);
  lines[0] = prefix + lines[0]!.slice(prefix.length);
  return lines;
}

/** Lines as printed at `width`: each wraps `more` under its own indent, a tree's branch going
 * on as │. */
export function wrapIndented(lines: string[], width: number, more = '    '): string[] {
  return lines.flatMap((l) => {
    if (l === '') return [''];
    const lead = /^[ │├└─]*/.exec(l)![0];
    const under = lead.replace(/├/g, '│').replace(/[└─]/g, ' ');
    return wrap(l.slice(lead.length), width, lead, `${under}${more}`);
  });
}

/** A command's shell words on lines a terminal copy gives back as one command: each broken line
 * ends in " \\". */
export function wrapCommand(shell: string[], width: number, indent: string): string[] {
  const words = shell.map(sanitize);
  const out: string[] = [];
  let line = indent;
  for (const w of words) {
    if (line.trim() !== '' && line.length + 1 + w.length + 2 > width) {
      out.push(`${line} \\`);
      line = `${indent}  ${w}`;
    } else line = line.trim() === '' ? line + w : `${line} ${w}`;
  }
  out.push(line);
  return out;
}

/** A document's own `#` comment lines wrapped at the width, each piece a comment still: what a
 * program reads (YAML, rules) is never cut. */
export function wrapComments(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((l) => {
      const m = /^(\s*#+ )(.*)$/.exec(l);
      if (m && l.length > width) return wrap(m[2]!, width, m[1], m[1]);
      // a line with names in it (a rule's comment) shows its controls escaped, its tabs (nft's
      // indent) kept; a clean one is left whole, however long
      return [hasUnsafe(l.replace(/\t/g, '')) ? l.split('\t').map(sanitize).join('\t') : l];
    })
    .join('\n');
}
