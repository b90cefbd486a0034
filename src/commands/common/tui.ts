// The TUI, imported only now: text and JSON runs never load Ink and React.
import type { TuiExit } from '../../tui/App.js';
import type { TuiInput } from '../../tui/input.js';
import type * as TuiRun from '../../tui/run.js';
import { colorEnabled } from '../../tui/theme.js';
import { EXIT, type GlobalOptions } from './io.js';

type TuiModule = typeof TuiRun;
let loading: Promise<TuiModule> | undefined;

/** Starts loading the TUI (Ink, React, yoga): a command calls it early, so the load overlaps
 * reading the facts; once per process. */
export function loadTui(): Promise<TuiModule> {
  if (loading) return loading;
  // Ink draws only a last frame when CI is set (read as it loads); on a terminal, draw them all
  const ci = {
    CI: process.env['CI'],
    CONTINUOUS_INTEGRATION: process.env['CONTINUOUS_INTEGRATION'],
  };
  delete process.env['CI'];
  delete process.env['CONTINUOUS_INTEGRATION'];
  // Ink's layout engine (yoga) loads its wasm with fetch() where there is one: 40 ms of starting
  // undici for a data: URL it can as well decode itself
  const fetch = globalThis.fetch;
  (globalThis as { fetch?: unknown }).fetch = undefined;
  return (loading = import('../../tui/run.js').finally(() => {
    for (const [k, v] of Object.entries(ci)) if (v !== undefined) process.env[k] = v;
    globalThis.fetch = fetch;
  }));
}

export async function interactive(input: TuiInput, g: GlobalOptions): Promise<number> {
  const { runTui } = await loadTui();
  const color = colorEnabled(g.color, process.env);
  const { stdin, stdout, stderr } = process;
  return exitCode(await runTui({ ...input, color, stdin, stdout, stderr }));
}

/** The answer's own code once it is on screen; before it, ctrl+c is an interrupt (130) and q
 * leaves with nothing checked (2), as does a read that failed as a whole. */
function exitCode(e: TuiExit): number {
  if (e.ended === 'answered') return e.report?.exitCode ?? EXIT.ok;
  return e.ended === 'interrupted' ? EXIT.interrupted : EXIT.failed;
}
