// pods/exec over WebSocket as a 1.30+ apiserver speaks it (StreamTranslator): subprotocol
// v5.channel.k8s.io, binary frames whose first byte is the channel, an empty "ready" frame on
// the lowest writable channel, then output, then a metav1.Status on channel 3, then close(1000).
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { WebSocket } from 'ws';
import type { KubeObject } from '../../../src/core/model.js';

export interface ExecRequest {
  namespace: string;
  pod: KubeObject;
  container: string;
  command: string[];
  user: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  /** The negotiated subprotocol, e.g. "v5.channel.k8s.io". */
  protocol: string;
}

export interface ExecOutput {
  stdout?: string | Buffer;
  stderr?: string | Buffer;
  exitCode: number;
  /** The connection breaks after the output, before any status (a node or proxy that went away). */
  drop?: boolean;
}

/**
 * Runs one exec: return the output, or a spawned process whose output is streamed as it comes.
 * Throwing gives the InternalError Status a real server sends when the runtime cannot start it.
 */
export type ExecHandler = (
  req: ExecRequest,
) => ExecOutput | ChildProcess | Promise<ExecOutput | ChildProcess>;

export const CH = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const;

/** Query booleans the apiserver way: absent, "false" and "0" are false; anything else, "" included, is true. */
export const queryBool = (q: URLSearchParams, name: string) => {
  const v = q.get(name);
  return v !== null && v !== 'false' && v !== '0';
};

export function exitStatus(code: number): object {
  if (code === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command terminated with exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

export const internalStatus = (message: string) => ({
  metadata: {},
  status: 'Failure',
  message,
  reason: 'InternalError',
  code: 500,
});

const isProcess = (x: unknown): x is ChildProcess =>
  typeof (x as ChildProcess)?.kill === 'function' && 'stdio' in (x as object);

/** Serves one upgraded exec connection with the handler. Returns the spawned process, if any, for teardown. */
export async function serveExec(
  ws: WebSocket,
  req: ExecRequest,
  handler: ExecHandler,
  onProcess: (p: ChildProcess) => void,
): Promise<void> {
  const send = (channel: number, data: Buffer | string) =>
    ws.readyState === ws.OPEN &&
    ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(data)]));
  const finish = (status: object) => {
    send(CH.status, JSON.stringify(status));
    if (ws.readyState === ws.OPEN) ws.close(1000);
  };
  // the "ready" frame: empty, on the lowest channel the server writes to
  send(req.stdout ? CH.stdout : req.stderr && !req.tty ? CH.stderr : CH.status, '');
  let result: ExecOutput | ChildProcess;
  try {
    result = await handler(req);
  } catch (e) {
    finish(internalStatus((e as Error).message));
    return;
  }
  if (!isProcess(result)) {
    if (req.stdout && result.stdout?.length) send(CH.stdout, result.stdout);
    if (req.stderr && !req.tty && result.stderr?.length) send(CH.stderr, result.stderr);
    if (result.drop) return void ws.terminate();
    finish(exitStatus(result.exitCode));
    return;
  }
  const child = result;
  onProcess(child);
  if (req.stdout) child.stdout?.on('data', (d: Buffer) => send(CH.stdout, d));
  if (req.stderr && !req.tty) child.stderr?.on('data', (d: Buffer) => send(CH.stderr, d));
  ws.on('message', (data: Buffer) => {
    if (data[0] === CH.stdin) child.stdin?.write(data.subarray(1));
    if (data[0] === CH.close && data[1] === CH.stdin) child.stdin?.end();
  });
  await new Promise<void>((resolve) => {
    child.on('error', (e) => {
      finish(internalStatus(e.message));
      resolve();
    });
    child.on('close', (code, signal) => {
      const n = code ?? 128 + ((signal && constants.signals[signal]) || 0);
      finish(exitStatus(n));
      resolve();
    });
  });
}
