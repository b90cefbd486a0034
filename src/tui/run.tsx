// The interactive entry, imported lazily by cli.ts so text and JSON runs never load Ink or React.
// Full screen in the terminal's alternate buffer; the shell's screen comes back on exit.
import { render } from 'ink';
import type { Report } from '../core/model.js';
import { App, type TuiInput } from './App.js';

export interface RunOptions extends TuiInput {
  color: boolean;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
}

const ENTER_ALT_SCREEN = '\x1b[?1049h\x1b[H';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const SHOW_CURSOR = '\x1b[?25h';
const CLEAR_SCREEN = '\x1b[2J\x1b[H';

/** Runs the TUI until the user quits; resolves with the last Report shown, and whether the
 * diagnosis could not run at all. */
export async function runTui(o: RunOptions): Promise<{ report?: Report; failed: boolean }> {
  const { stdin, stdout, color, ...input } = o;
  let report: Report | undefined;
  let failed = false;
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    stdout.write(SHOW_CURSOR + LEAVE_ALT_SCREEN);
  };
  // a crash or a kill must not leave the terminal in the alternate screen
  const signals = ['SIGTERM', 'SIGHUP'] as const;
  const onSignal = (signal: NodeJS.Signals) => {
    restore();
    for (const s of signals) process.off(s, onSignal);
    process.kill(process.pid, signal);
  };
  process.once('exit', restore);
  for (const s of signals) process.on(s, onSignal);
  stdout.write(ENTER_ALT_SCREEN);
  try {
    const onQuit = (r: Report | undefined, f: boolean) => {
      report = r;
      failed = f;
    };
    const app = render(<App {...input} color={color} onQuit={onQuit} />, {
      stdin,
      stdout,
      exitOnCtrlC: false,
    });
    // a full-screen frame cut by a smaller window leaves pieces Ink cannot erase: start clean
    const onResize = () => stdout.write(CLEAR_SCREEN);
    stdout.on('resize', onResize);
    await app.waitUntilExit().finally(() => stdout.off('resize', onResize));
  } finally {
    restore();
    process.off('exit', restore);
    for (const s of signals) process.off(s, onSignal);
  }
  return { report, failed };
}
