// Renders TUI pieces with ink-testing-library and types keys into them, one read per key.
import { render } from 'ink-testing-library';
import type { ReactNode } from 'react';
import { ThemeContext } from '../../src/tui/components/text.js';
import { theme } from '../../src/tui/theme.js';

export type Rendered = ReturnType<typeof render>;

/** Lets Ink read the input, React commit and Ink write the frame (esc waits for a following byte). */
export const settle = (ms = 15) => new Promise((r) => setTimeout(r, ms));

const KEYS: Record<string, string> = {
  enter: '\r',
  esc: '\x1b',
  tab: '\t',
  down: '\x1b[B',
  up: '\x1b[A',
  backspace: '\x7f',
  'ctrl+r': '\x12',
};

/** Waits for the next frame (a key that changes nothing draws none: give up after `ms`). */
export async function nextFrame(r: Rendered, before: number, ms = 300): Promise<void> {
  const until = Date.now() + ms;
  while (r.frames.length === before && Date.now() < until) await settle(5);
  await settle(5);
}

/** Waits until the frame matches (facts arriving, a slow machine); fails with the last frame. */
export async function waitFrame(r: Rendered, re: RegExp, ms = 3000): Promise<string> {
  const until = Date.now() + ms;
  while (!re.test(frame(r)) && Date.now() < until) await settle(10);
  const f = frame(r);
  if (!re.test(f)) throw new Error(`no frame matched ${re} in ${ms} ms; the last:\n${f}`);
  return f;
}

/** Waits for the diagnosis of facts in hand (the first frame shows the steps pending), then for
 * the frame after it, where the cursor has followed the first problem. */
export async function diagnosed(r: Rendered, ms = 3000): Promise<string> {
  await waitFrame(r, /^(?![\s\S]*diagnosing)/, ms);
  await settle(40);
  return frame(r);
}

/** Types keys: named ones ("enter", "esc", "down") or text, one write each, each drawn. */
export async function press(r: Rendered, ...keys: string[]): Promise<string> {
  for (const k of keys) {
    for (const chunk of KEYS[k] !== undefined ? [KEYS[k]!] : [...k]) {
      const before = r.frames.length;
      r.stdin.write(chunk);
      await nextFrame(r, before);
    }
  }
  return frame(r);
}

/** The last frame, trailing spaces trimmed per line (what a person reads). */
export const frame = (r: Rendered) =>
  (r.lastFrame() ?? '')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');

/** A screen component on its own, without colour. */
export function renderPlain(node: ReactNode): Rendered {
  return render(<ThemeContext.Provider value={theme(false)}>{node}</ThemeContext.Provider>);
}

export { render };
