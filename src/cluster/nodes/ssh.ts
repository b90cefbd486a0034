// The SSH node transport: one connection per node, opened on first use, running only members of
// the closed NodeCommand list (rules through `sudo -n` for a non-root user). A node that cannot
// be reached gives a NodeResult with an error; it never stops the others.
import type { Node } from '../../core/kube/objects.js';
import {
  DEFAULT_MAX_OUTPUT_BYTES,
  OutputBuffer,
  outputOverLimit,
} from '../../core/facts/not-read.js';
import { failedResult, type NodeCommand, type NodeResult } from '../cluster.js';
import { nodeArgv, shellCommand } from './commands.js';
import { isDnsName, isPlainIp } from './valid-command.js';
import { connectRoute, type SshConnection } from '../ssh/connect.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  hopLabel,
  resolveRoute,
  SshError,
  type SshOptions,
} from '../ssh/route.js';
import type { SshDestination } from '../ssh/config.js';

export type SshAddressType = 'InternalIP' | 'ExternalIP' | 'Hostname';

/** How much of a command's stderr is kept: only its first line is told. */
const STDERR_KEPT = 64 * 1024;

/** The address kdebug connects to for a node (--ssh-address-type), or undefined if it has none. */
export function nodeSshHost(
  node: Pick<Node, 'addresses'>,
  type: SshAddressType,
): string | undefined {
  return node.addresses.find(
    (a) => a.type === type && (isPlainIp(a.address) || isDnsName(a.address)),
  )?.address;
}

/** An open SSH connection to one host that runs NodeCommands. */
export class SshSession {
  private constructor(
    private readonly conn: SshConnection,
    private readonly commandTimeoutMs: number,
    private readonly maxOutputBytes: number,
  ) {}

  static async open(
    destination: string | SshDestination,
    opts: SshOptions = {},
  ): Promise<SshSession> {
    const hops = await resolveRoute(destination, opts);
    return new SshSession(
      await connectRoute(hops, opts),
      opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    );
  }

  /** "ssh root@192.0.2.11", "ssh admin@192.0.2.12 via root@192.0.2.11". */
  get via(): string {
    const hops = this.conn.hops.map(hopLabel);
    const target = hops.pop()!;
    return hops.length > 0 ? `ssh ${target} via ${hops.join(', ')}` : `ssh ${target}`;
  }

  /** Rules need root: a non-root login reads them through `sudo -n`. */
  get sudo(): boolean {
    return this.conn.hops[this.conn.hops.length - 1]!.user !== 'root';
  }

  /** Runs one command from the closed list. Never throws: failures come back in the result. */
  async run(command: NodeCommand): Promise<NodeResult> {
    let argv: string[];
    try {
      argv = nodeArgv(command, { kind: 'host', sudo: this.sudo });
    } catch (err) {
      return {
        stdout: '',
        stderr: '',
        exitCode: null,
        error: (err as Error).message,
        via: this.via,
      };
    }
    const result = await this.exec(shellCommand(argv));
    const explained = explainFailure(result, argv, this.conn.hops[this.conn.hops.length - 1]!.user);
    return { ...result, ...(explained ? { error: explained } : {}), via: this.via };
  }

  private exec(line: string): Promise<Omit<NodeResult, 'via'>> {
    return new Promise((resolve) => {
      const out = new OutputBuffer(this.maxOutputBytes);
      const err = new OutputBuffer(STDERR_KEPT, 'head');
      let exitCode: number | null = null;
      let signal: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const done = (error?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const lost = signal
          ? `stopped by signal ${signal}`
          : 'the connection closed before it finished';
        const why = error ?? (exitCode === null ? lost : undefined);
        // begun on an open connection and ended without an exit status: lost, not failed
        resolve({
          stdout: out.text(),
          stderr: err.text(),
          exitCode,
          ...(why ? { error: why } : {}),
          ...(exitCode === null ? { lost: true } : {}),
          ...(out.over ? { overLimit: true } : {}),
        });
      };
      this.conn.target.exec(line, (e, stream) => {
        if (e) return done(`could not start the command: ${e.message}`);
        // kdebug gives up: no exit status counts, and a paused channel gets no more window
        const stop = (why: string) => {
          exitCode = null;
          stream.pause();
          stream.close();
          done(why);
        };
        timer = setTimeout(
          () => stop(`no result within ${this.commandTimeoutMs / 1000}s; kdebug stopped waiting`),
          this.commandTimeoutMs,
        );
        stream.on('data', (d: Buffer) => {
          // past the limit the channel is closed, so the node stops sending
          if (!out.add(d) && !settled) stop(outputOverLimit(this.maxOutputBytes));
        });
        stream.stderr.on('data', (d: Buffer) => err.add(d));
        stream.on('exit', (code: number | null, sig?: string) => {
          exitCode = code;
          signal = sig;
        });
        stream.on('close', () => done());
      });
    });
  }

  async close(): Promise<void> {
    for (const c of [...this.conn.clients].reverse()) c.end();
  }
}

/** Says in a person's words why a command failed on the node, when the cause is recognisable. */
export function explainFailure(
  r: Omit<NodeResult, 'via'>,
  argv: string[],
  user: string,
): string | undefined {
  if (r.error) return r.error;
  const program =
    argv.find((a, i) => i > 0 && a.startsWith('/') && a !== '/usr/bin/timeout') ?? argv[0]!;
  if (
    /sudo: (a password is required|a terminal is required)|is not in the sudoers file|is not allowed to (execute|run sudo)/.test(
      r.stderr,
    )
  ) {
    return `${user} may not run ${program} with sudo -n (${r.stderr.trim().split('\n')[0]}). Allow it without a password in sudoers, or connect as root.`;
  }
  if (/must be root|Permission denied/i.test(r.stderr))
    return `${program} needs root on the node: connect as root or as a user with passwordless sudo`;
  if (r.exitCode === 124) return `${program} did not finish within its time limit on the node`;
  if (r.exitCode === 127 || r.exitCode === 126)
    return `${program} is not installed on the node (exit ${r.exitCode})`;
  return undefined;
}

/** Runs NodeCommands on cluster nodes over SSH, one cached connection per node. */
export class SshNodes {
  private readonly sessions = new Map<string, Promise<SshSession>>();

  constructor(private readonly opts: SshOptions & { addressType?: SshAddressType }) {}

  async run(node: Pick<Node, 'name' | 'addresses'>, command: NodeCommand): Promise<NodeResult> {
    const type = this.opts.addressType ?? 'InternalIP';
    const host = nodeSshHost(node, type);
    if (!host)
      return failedResult(
        `node ${node.name} has no ${type} address (try --ssh-address-type)`,
        `ssh ${node.name}`,
      );
    let session = this.sessions.get(node.name);
    if (!session) {
      session = SshSession.open({ host }, this.opts);
      session.catch(() => undefined); // reported through run(); a failed node stays failed
      this.sessions.set(node.name, session);
    }
    try {
      return await (await session).run(command);
    } catch (err) {
      const message =
        err instanceof SshError ? err.message : `ssh ${host}: ${(err as Error).message}`;
      return failedResult(message, `ssh ${host}`);
    }
  }

  async close(): Promise<void> {
    const open = await Promise.allSettled(this.sessions.values());
    this.sessions.clear();
    for (const s of open) if (s.status === 'fulfilled') await s.value.close();
  }
}
