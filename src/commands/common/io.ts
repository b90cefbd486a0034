// What every command shares: the exit codes, the usage error, the presentation picked once, and
// the process's stdin/stdout. The commands and cli.ts are the only code that touches them; the MCP
// server runs a command apart from them (inRun).
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Readable } from 'node:stream';
import type { SourceContext } from '../../cluster/facts-source.js';
import type { PodHolder } from '../../cluster/nodes/debug-pod.js';
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer, overLimit } from '../../core/facts/not-read.js';
import { jsonPieces, sanitize } from '../../core/sanitize.js';

declare const KDEBUG_VERSION: string;
declare const KDEBUG_COMMIT: string;
export const VERSION = typeof KDEBUG_VERSION === 'string' ? KDEBUG_VERSION : 'dev';
/** The git commit the bundle was built from. */
export const COMMIT = typeof KDEBUG_COMMIT === 'string' ? KDEBUG_COMMIT : 'unknown';

/** Exit codes: 0 healthy, 1 a problem was found, 2 kdebug could not do its job; 130 interrupted
 * by Ctrl-C (128 + SIGINT, as a shell reports it). */
export const EXIT = { ok: 0, problem: 1, failed: 2, interrupted: 130 } as const;

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

/** Where the CLI's bundle is: this module may sit in one of its chunks (build.js: chunks/). */
const here = fileURLToPath(new URL('.', import.meta.url));
const bundleDir = basename(here) === 'chunks' ? resolve(here, '..') : here;

/** The bundled scenarios' snapshots, found next to the installed package. */
export const BUNDLED_SNAPSHOTS = resolve(bundleDir, '..', 'snapshots');
/** A snapshot path that is not there: the bundled scenario of that name, or where they are. */
export function bundledHint(path: string, self: string): string {
  const name = basename(path.replace(/\/+$/, ''));
  return existsSync(join(BUNDLED_SNAPSHOTS, name, 'objects.json'))
    ? `; ${name} is a bundled scenario: ${self} demo ${name} runs it, from ${join(BUNDLED_SNAPSHOTS, name)}`
    : `; ${self} demo --list lists the bundled scenarios`;
}

/** The bundled demo snapshot. */
export const DEMO_SNAPSHOT = resolve(BUNDLED_SNAPSHOTS, 'nginx-svc');

/** The parse worker's bundle, beside the CLI's (absent when the sources run unbundled). */
export const PARSE_WORKER = pathToFileURL(join(bundleDir, 'parse-worker.js'));

/** What a command can print, and what it says when asked for something else. */
const OUTPUTS: Record<string, { formats: Format[]; refusal?: string }> = {
  svc: { formats: ['tui', 'text', 'json'] },
  rules: { formats: ['tui', 'text', 'json'] },
  drift: { formats: ['text', 'json'] },
  trace: { formats: ['text', 'json'] },
  version: { formats: ['text', 'json'] },
  expect: { formats: ['text', 'json'] },
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

/**
 * A command run for another program in this process (the MCP server): its output, its stderr
 * lines and what a cancel must release stay with that run, apart from this process's stdout (the
 * protocol's channel there), its signal handlers and any other run.
 */
export interface Run {
  write(text: string): void;
  /** Takes a command's -o json document as a value (an MCP tool call), where printing it would
   * only have it parsed back. */
  doc?(doc: object): void;
  tell(line: string): void;
  release: Set<() => Promise<void>>;
  podHolders: Set<PodHolder>;
}

const runs = new AsyncLocalStorage<Run>();

/** `f` (a command) as `run`: what it writes, tells and holds goes there. */
export const inRun = <T>(run: Run, f: () => Promise<T>): Promise<T> => runs.run(run, f);

export function write(text: string): void {
  const run = runs.getStore();
  if (run) run.write(text);
  else process.stdout.write(text);
}

/** A command's -o json document: printed as JSON, or handed whole to a run that takes it. */
export function writeDoc(doc: object): void {
  const run = runs.getStore();
  if (run?.doc) run.doc(doc);
  else jsonPieces(doc, write);
}

/**
 * Text for stderr: each line sanitised as stdout's text is, since node names, node errors and
 * paths come from the cluster or the person; a message's own line breaks are kept.
 */
export const inert = (text: string): string => text.split('\n').map(sanitize).join('\n');

/** A line on stderr ("kdebug: ..."): stdout stays the report. */
export function tell(line: string): void {
  const run = runs.getStore();
  if (run) run.tell(line);
  else process.stderr.write(`kdebug: ${inert(line)}\n`);
}

/** A line on the terminal's stderr that each `show` rewrites (at most ten times a second);
 * nothing where stderr is no terminal or the run is another program's. `done` clears it. */
export function statusLine(): { show(text: string): void; done(): void } {
  if (runs.getStore() || !process.stderr.isTTY)
    return { show: () => undefined, done: () => undefined };
  let last = 0;
  let shown = false;
  return {
    show(text) {
      if (Date.now() - last < 100) return;
      last = Date.now();
      shown = true;
      process.stderr.write(`\r\x1b[2Kkdebug: ${sanitize(text)}`);
    },
    done() {
      if (shown) process.stderr.write('\r\x1b[2K');
    },
  };
}

/** A yes/no question on the terminal (stderr, so stdout stays the answer); false without one. */
export async function ask(question: string): Promise<boolean> {
  // a run's stdin is another program's channel, whatever it is connected to
  if (runs.getStore() || !process.stdin.isTTY || !process.stderr.isTTY) return false;
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${inert(question)} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** A file's bytes, or stdin's for "-", at most `limit` of them; what cannot be read is a usage error. */
export async function readInput(path: string, limit = DEFAULT_MAX_OUTPUT_BYTES): Promise<Buffer> {
  if (path === '-') {
    // a person at a terminal, not a pipe: say how the paste ends, rather than wait in silence
    if (!process.stdin.isTTY) return readStream(process.stdin, 'stdin', limit);
    tell('paste the listing, then press Ctrl-D on a line of its own');
    const pasted = await readStream(process.stdin, 'stdin', limit);
    // Ctrl-D at once on a terminal: no pipe failed, nothing was pasted
    if (pasted.length === 0)
      throw new UsageError(
        'nothing was pasted: paste the listing before Ctrl-D, or give --file PATH',
      );
    return pasted;
  }
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const stat = await file.stat();
    if (stat.isDirectory()) throw new UsageError(`${path}: is a directory`);
    // a pipe or a device has no size to check first: read it as stdin is read
    if (!stat.isFile()) return await readStream(file.createReadStream(), path, limit);
    if (stat.size > limit) throw new UsageError(`${path}: ${overLimit(limit)}`);
    return await readWhole(file, stat.size);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' };
    throw new UsageError(`${path}: ${why[code as keyof typeof why] ?? (e as Error).message}`);
  } finally {
    await file?.close();
  }
}

/** A regular file of a known size, in as few reads as the system allows. */
async function readWhole(file: FileHandle, size: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await file.read(bytes, at, size - at, at);
    if (bytesRead === 0) break; // it shrank meanwhile
    at += bytesRead;
  }
  return bytes.subarray(0, at);
}

/** A stream's bytes up to `limit`: past it, reading stops and the input is refused. */
async function readStream(stream: Readable, name: string, limit: number): Promise<Buffer> {
  const input = new OutputBuffer(limit);
  for await (const chunk of stream) {
    if (!input.add(chunk as Buffer)) {
      stream.destroy();
      throw new UsageError(`${name}: ${overLimit(limit)}`);
    }
  }
  return input.bytes();
}

/** The terminal's width (COLUMNS first, as shells set it); a file is not cut, only wrapped. */
export function textWidth(): { width: number; truncate: boolean } {
  const tty = process.stdout.isTTY === true;
  const columns = Number(process.env['COLUMNS']) || (tty ? process.stdout.columns : 0) || 80;
  return { width: Math.max(40, columns), truncate: tty };
}

/** A set of what to release that says when it changes: cli.ts listens for signals only while it
 * holds something, so that with nothing to release a signal ends kdebug at once, even in the
 * middle of a long synchronous read (a snapshot's huge objects.json). */
class Releases extends Set<() => Promise<void>> {
  changed?: () => void;
  override add(f: () => Promise<void>): this {
    super.add(f);
    this.changed?.();
    return this;
  }
  override delete(f: () => Promise<void>): boolean {
    const had = super.delete(f);
    this.changed?.();
    return had;
  }
  override clear(): void {
    super.clear();
    this.changed?.();
  }
}

/** What to release when kdebug is interrupted (debug Pods, a temporary directory ...); cli.ts
 * runs them. */
export const onInterrupt = new Releases();

/** The debug Pod channels of this run until they close: a signal says it deletes Pods only
 * when they hold some. */
const podHolders = new Set<PodHolder>();

/** Debug Pods this run created and has not deleted yet. */
export const debugPodsHeld = (): number =>
  [...podHolders].reduce((n, holder) => n + holder.pods.length, 0);

/** The file name a node's dump is reported under: its snapshot path, or the node's command. */
export const dumpFile =
  (o: { snapshot?: string }) =>
  (node: string, source: string): string =>
    o.snapshot !== undefined ? join(o.snapshot, source) : `${node}: ${source.split('/').pop()}`;

/** How the Facts sources read: the kubeconfig flags, this process's environment and stderr. */
export function sourceContext(g: GlobalOptions): SourceContext {
  const run = runs.getStore();
  return {
    kubeconfig: g.kubeconfig,
    context: g.context,
    env: process.env,
    kdebugVersion: VERSION,
    tell,
    release: run?.release ?? onInterrupt,
    podHolders: run?.podHolders ?? podHolders,
  };
}
