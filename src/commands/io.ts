// What every command shares: the exit codes, the usage error, the presentation picked once, and
// the process's stdin/stdout. The commands and cli.ts are the only code that touches them.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SourceContext } from '../cluster/facts-source.js';

declare const KDEBUG_VERSION: string;
declare const KDEBUG_COMMIT: string;
export const VERSION = typeof KDEBUG_VERSION === 'string' ? KDEBUG_VERSION : 'dev';
/** The git commit the bundle was built from. */
export const COMMIT = typeof KDEBUG_COMMIT === 'string' ? KDEBUG_COMMIT : 'unknown';

/** Exit codes: 0 healthy, 1 a problem was found, 2 kdebug could not do its job. */
export const EXIT = { ok: 0, problem: 1, failed: 2 } as const;

/** Bad input or no access: the message says which; exit 2, no stack trace. */
export class UsageError extends Error {}

export type Format = 'tui' | 'text' | 'json';

export interface GlobalOptions {
  namespace?: string;
  context?: string;
  kubeconfig?: string;
  output?: Format;
  color: boolean;
}

/** The bundled demo snapshot, found next to the installed package. */
export const DEMO_SNAPSHOT = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  '..',
  'snapshots',
  'nginx-svc',
);

/** The parse worker's bundle, beside the CLI's (absent when the sources run unbundled). */
export const PARSE_WORKER = new URL('./parse-worker.js', import.meta.url);

/** What a command can print, and what it says when asked for something else. */
const OUTPUTS: Record<string, { formats: Format[]; refusal?: string }> = {
  svc: { formats: ['tui', 'text', 'json'] },
  rules: { formats: ['tui', 'text', 'json'] },
  drift: { formats: ['text', 'json'] },
  trace: { formats: ['text', 'json'] },
  version: { formats: ['text', 'json'] },
  expect: { formats: ['text'], refusal: 'expect prints iptables-save text; use -o text' },
  snapshot: { formats: ['text'], refusal: 'snapshot save writes a directory; use -o text' },
  cleanup: { formats: ['text'], refusal: 'cleanup prints what it deleted as text; use -o text' },
  rbac: { formats: ['text'], refusal: 'rbac prints Kubernetes YAML; use -o text' },
  completion: { formats: ['text'], refusal: 'completion prints a shell script; use -o text' },
};

/** The presentation: -o when the command has it (else a refusal), the TUI on a terminal (stdin
 * and stdout: Ink reads keys from stdin), text otherwise. */
export function format(opts: GlobalOptions, command = 'svc'): Format {
  const can = OUTPUTS[command] ?? OUTPUTS['svc']!;
  const terminal = process.stdout.isTTY === true && process.stdin.isTTY === true;
  if (opts.output !== undefined && !can.formats.includes(opts.output))
    throw new UsageError(
      can.refusal ??
        `${command} has no ${opts.output} output; use ${can.formats.map((f) => `-o ${f}`).join(' or ')}`,
    );
  if (opts.output === 'tui' && !terminal)
    throw new UsageError(
      `-o tui needs a terminal on stdin and stdout (${!process.stdin.isTTY && !process.stdout.isTTY ? 'neither is one' : `${process.stdin.isTTY ? 'stdout' : 'stdin'} is not one`}): use -o text or -o json`,
    );
  return opts.output ?? (terminal && can.formats.includes('tui') ? 'tui' : 'text');
}

export function write(text: string): void {
  process.stdout.write(text);
}

/** A line on stderr ("kdebug: ..."): stdout stays the report. */
export function tell(line: string): void {
  process.stderr.write(`kdebug: ${line}\n`);
}

/** A yes/no question on the terminal (stderr, so stdout stays the answer); false without one. */
export async function ask(question: string): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** A file's bytes, or stdin's for "-"; a file that cannot be read is a usage error. */
export async function readInput(path: string): Promise<Buffer> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  try {
    return readFileSync(path); // in one read: fs/promises reads 512 KiB at a time
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' };
    throw new UsageError(`${path}: ${why[code as keyof typeof why] ?? (e as Error).message}`);
  }
}

/** The terminal's width (COLUMNS first, as shells set it); a file is not cut, only wrapped. */
export function textWidth(): { width: number; truncate: boolean } {
  const tty = process.stdout.isTTY === true;
  const columns = Number(process.env['COLUMNS']) || (tty ? process.stdout.columns : 0) || 80;
  return { width: Math.max(40, columns), truncate: tty };
}

/** What to release when kdebug is interrupted (debug Pods above all); cli.ts runs them. */
export const onInterrupt = new Set<() => Promise<void>>();

/** The file name a node's dump is reported under: its snapshot path, or the node's command. */
export const dumpFile =
  (o: { snapshot?: string }) =>
  (node: string, source: string): string =>
    o.snapshot !== undefined ? join(o.snapshot, source) : `${node}: ${source.split('/').pop()}`;

/** How the Facts sources read: the kubeconfig flags, this process's environment and stderr. */
export function sourceContext(g: GlobalOptions): SourceContext {
  return {
    kubeconfig: g.kubeconfig,
    context: g.context,
    env: process.env,
    kdebugVersion: VERSION,
    tell,
    release: onInterrupt,
  };
}
