// The JSON value a paste holds, found among what surrounds it (a prompt, a shell's job line, a log
// line starting with a bracket), with the line it starts at.
import { closingBracket } from '../../brackets.js';

/** A line that opens a JSON value at its start: a "{" or "[" alone (as Go's MarshalIndent puts
 * it), or followed by what JSON puts there. */
const JSON_OPENER = /^[ \t]*(?:\{[ \t]*(?:"|\}|$)|\[[ \t]*(?:[{"\]\d-]|true|false|null|$))/gm;
const LONE_OPENER = /^[ \t]*[[{][ \t]*$/;

/** The JSON value the text holds that `fits` takes, with the line it starts at: tried from each
 * line that opens one, those where the bracket is alone on its line (as the CLI prints it) first,
 * so that a shell's "[1]+  Done" or a "[2024-...]" log line before it is not taken for it; where
 * none parses so, why the first such line does not. */
export function jsonValue(
  text: string,
  fits: (value: unknown) => boolean,
): { value: unknown; line: number } | { error: string; line: number } {
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  const openers = [...text.matchAll(JSON_OPENER)].map((m) => m.index + m[0].search(/[[{]/));
  const lone = (at: number) => {
    const end = text.indexOf('\n', at);
    return LONE_OPENER.test(text.slice(text.lastIndexOf('\n', at) + 1, end < 0 ? undefined : end));
  };
  const ordered = [...openers.filter(lone), ...openers.filter((at) => !lone(at))];
  let first: { error: string; line: number } | undefined;
  // the spans tried: a value inside one that does not parse (cut) is a part of it, not the listing
  const tried: [number, number][] = [];
  for (const start of ordered.length > 0 ? ordered : [0]) {
    if (tried.some(([from, to]) => start > from && start < to)) continue;
    const end = closingBracket(text, start);
    tried.push([start, end < 0 ? text.length : end]);
    try {
      const value: unknown = JSON.parse(end < 0 ? text.slice(start) : text.slice(start, end + 1));
      if (fits(value)) return { value, line: lineOf(start) };
      first ??= { error: 'not the JSON this listing prints', line: lineOf(start) };
    } catch (e) {
      first ??= { error: (e as Error).message, line: lineOf(start) };
    }
  }
  return first!;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
