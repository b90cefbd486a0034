// The TUI, imported only now: text and JSON runs never load Ink and React.
import type { TuiInput } from '../tui/App.js';
import { colorEnabled } from '../tui/theme.js';
import { EXIT, type GlobalOptions } from './io.js';

export async function interactive(input: TuiInput, g: GlobalOptions): Promise<number> {
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
  const { runTui } = await import('../tui/run.js').finally(() => {
    for (const [k, v] of Object.entries(ci)) if (v !== undefined) process.env[k] = v;
    globalThis.fetch = fetch;
  });
  const color = colorEnabled(g.color, process.env);
  const r = await runTui({ ...input, color, stdin: process.stdin, stdout: process.stdout });
  if (r.failed) return EXIT.failed;
  return r.report ? r.report.exitCode : EXIT.ok;
}
