// One tool call: a command run in this process as commands/common/io.ts's inRun runs it (its output
// kept, not written to stdout, the protocol's channel), its stderr lines and a heartbeat sent as
// progress notifications when the client asked for them, and a cancel releasing what the run
// holds (the debug Pods first) as Ctrl-C does on the command line.
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { inert, inRun, type Run } from '../commands/common/io.js';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface Ran {
  /** The command's exit code: 0 healthy, 1 a problem found (2 is thrown, not returned). */
  code: number;
  /** What it printed. */
  out: string;
  /** Its -o json document, taken as a value (commands/common/io.ts writeDoc). */
  doc?: object;
  /** What it said on stderr, without "kdebug: ". */
  lines: string[];
}

/** Runs not ended yet: a signal, or the client leaving, releases them. */
const active = new Set<Run>();

/** Every cleanup a run registered, as the signal handler of cli.ts runs them. */
async function release(run: Run): Promise<void> {
  const cleanups = [...run.release];
  run.release.clear();
  for (const r of await Promise.allSettled(cleanups.map((f) => f())))
    if (r.status === 'rejected') process.stderr.write(`kdebug: ${inert(String(r.reason))}\n`);
}

export const releaseAll = async (): Promise<void> => {
  await Promise.allSettled([...active].map(release));
};

/** How often a long run says it is still running. */
const HEARTBEAT_MS = 2000;

export async function runCommand(
  extra: Extra,
  what: string,
  command: () => Promise<number>,
): Promise<Ran> {
  const token = extra._meta?.progressToken;
  let step = 0;
  const progress = (message: string) => {
    if (token === undefined) return;
    // a client that left mid-run is not an error of the run
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: ++step, message },
      })
      .catch(() => {});
  };
  const out: string[] = [];
  const lines: string[] = [];
  let doc: object | undefined;
  const run: Run = {
    write: (text) => out.push(text),
    doc: (d) => (doc = d),
    tell: (line) => {
      lines.push(line);
      // the operator's log keeps what the command line would have said
      process.stderr.write(`kdebug: ${inert(line)}\n`);
      progress(line);
    },
    release: new Set(),
    podHolders: new Set(),
  };
  const cancel = () => void release(run);
  extra.signal.addEventListener('abort', cancel, { once: true });
  const started = Date.now();
  const beat = setInterval(
    () => progress(`${what}: running for ${Math.round((Date.now() - started) / 1000)}s`),
    HEARTBEAT_MS,
  );
  active.add(run);
  progress(`${what}: started`);
  try {
    const code = await inRun(run, command);
    return { code, out: out.join(''), lines, ...(doc ? { doc } : {}) };
  } finally {
    clearInterval(beat);
    active.delete(run);
    extra.signal.removeEventListener('abort', cancel);
  }
}
