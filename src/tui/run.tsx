// The interactive entry, imported lazily by cli.ts so text and JSON runs never load Ink or React.
// Full screen in the terminal's alternate buffer; the shell's screen comes back on exit, with
// one line that keeps the answer (or why there is none) once the TUI is gone.
import chalk from 'chalk';
import { render } from 'ink';
import type { FirstProblem, Report } from '../core/model.js';
import { wrap } from '../output/wrap.js';
import { App, type TuiExit } from './App.js';
import type { TuiInput } from './input.js';

export interface RunOptions extends TuiInput {
  color: boolean;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** Where the line left behind goes: stdout stays clean. */
  stderr: NodeJS.WritableStream;
}

const ENTER_ALT_SCREEN = '\x1b[?1049h\x1b[H';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const SHOW_CURSOR = '\x1b[?25h';
const CLEAR_SCREEN = '\x1b[2J\x1b[H';

/** Runs the TUI until the user quits; resolves with how it ended, once the shell's screen is
 * back and the line that keeps the answer is written. */
export async function runTui(o: RunOptions): Promise<TuiExit> {
  const { stdin, stdout, stderr, color, ...input } = o;
  // until the App says how it ended, nothing was answered
  let outcome: TuiExit = { ended: 'quit' };
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
  // chalk drops every attribute when it sees --no-color in argv, NO_COLOR it ignores: the plain
  // theme's bold and inverse (the selection bar) are drawn the same for both
  if (!color && chalk.level === 0 && stdout.isTTY) chalk.level = 1;
  stdout.write(ENTER_ALT_SCREEN);
  try {
    const onQuit = (e: TuiExit) => (outcome = e);
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
  for (const line of exitLine(outcome, stdout.columns || 80)) stderr.write(`${line}\n`);
  return outcome;
}

/**
 * The line the TUI leaves in the terminal, in the text report's words: the verdict, or why there
 * is none; none for a run that diagnosed nothing (the rules screens). Wrapped at `width` and
 * sanitised: the reason and a finding's title carry names from the cluster.
 */
export function exitLine(e: TuiExit, width: number): string[] {
  const line = logicalLine(e);
  return line === undefined ? [] : wrap(line, width, '', '  ');
}

function logicalLine(e: TuiExit): string | undefined {
  if (e.ended === 'unread') return `kdebug: ${e.reason}`;
  const r = e.report;
  if (e.ended === 'answered') return r && `${named(r)}${verdict(r)}`;
  if (!r) return `kdebug: ${e.ended} before the facts were read`;
  return `${named(r)}${e.ended} before the diagnosis completed${soFar(r)}`;
}

const named = (r: Report) => `kdebug: ${r.target.namespace}/${r.target.service}: `;

function problem(r: Report, p: FirstProblem): string {
  const word = p.status === 'fail' ? 'problem' : 'warning';
  return `${word} at step ${p.step + 1} (${r.steps[p.step]!.title}): ${p.finding.title} [${p.finding.id}]`;
}

function verdict(r: Report): string {
  if (r.firstProblem) return problem(r, r.firstProblem);
  const lost = r.notRead.length;
  // a partial read exits 2: the line says why
  const partial =
    lost > 0 ? `; partial: the run lost ${lost === 1 ? 'one read' : `${lost} reads`}` : '';
  return `no problem found in the steps kdebug could check${partial}`;
}

/** What an unfinished diagnosis had found when it was left. */
function soFar(r: Report): string {
  if (r.firstProblem) return `; so far: ${problem(r, r.firstProblem)}`;
  const checked = r.steps.filter((s) => s.status === 'pass').length;
  if (checked === 0) return ' (nothing was checked)';
  return ` (no problem in the ${checked} ${checked === 1 ? 'step' : 'steps'} checked so far)`;
}
