// Where an SSH connection goes, decided the way `ssh` decides it: the hops from ~/.ssh/config
// (ProxyJump), and for each hop its address, port, user, keys and known_hosts files. Also the
// CLI's SSH flags and the one error type every SSH failure is told with.
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { outputLimitBytes } from '../../core/facts/not-read.js';
import { isDnsName, isPlainIp } from '../nodes/valid-command.js';
import {
  computeSshConfig,
  loadSshConfig,
  parseSshDestination,
  SshConfigError,
  type ConfigLine,
  type SshDestination,
  type SshHostConfig,
} from './config.js';

export interface SshOptions {
  /** --ssh-user: the login on the target (not on jump hosts); `user@` in a destination wins. */
  user?: string;
  /** --ssh-key: tried first, on every hop. */
  identityFile?: string;
  /** --ssh-config: defaults to ~/.ssh/config; "none" reads no config. */
  configFile?: string;
  /** --known-hosts: replaces the default known_hosts files (and UserKnownHostsFile). */
  knownHostsFiles?: string[];
  /** --ssh-timeout, per hop: TCP connect, handshake and authentication. */
  connectTimeoutMs?: number;
  /** The longest one node command may run before kdebug gives up on it. */
  commandTimeoutMs?: number;
  /** --max-output-mib: the most one node command may print; past it the read fails. */
  maxOutputBytes?: number;
  /** SSH_AUTH_SOCK, read by the CLI. */
  agentSocket?: string;
  home?: string;
  localUser?: string;
}

/** The SSH flags as commander gives them (`--ssh-user`, `--ssh-key` ...). */
export interface SshFlags {
  sshUser?: string;
  sshKey?: string;
  sshConfig?: string;
  knownHosts?: string;
  /** Seconds, as typed. */
  sshTimeout?: string;
  /** --max-output-mib, as typed: read here too, as `rules --ssh` reads nodes with these options. */
  maxOutputMib?: string;
}

/** SshOptions from the CLI flags and the environment the CLI read (SSH_AUTH_SOCK). */
export function sshOptionsFromFlags(
  flags: SshFlags,
  env: Record<string, string | undefined>,
): SshOptions {
  const seconds = flags.sshTimeout === undefined ? undefined : Number(flags.sshTimeout);
  if (seconds !== undefined && !(seconds > 0 && seconds <= 600)) {
    throw new SshError(
      'config',
      `--ssh-timeout ${flags.sshTimeout}: give seconds between 0 and 600`,
    );
  }
  const agent = env['SSH_AUTH_SOCK'];
  let maxOutputBytes: number | undefined;
  try {
    if (flags.maxOutputMib !== undefined) maxOutputBytes = outputLimitBytes(flags.maxOutputMib);
  } catch (e) {
    throw new SshError('config', (e as Error).message);
  }
  return {
    ...(flags.sshUser !== undefined ? { user: flags.sshUser } : {}),
    ...(flags.sshKey !== undefined ? { identityFile: flags.sshKey } : {}),
    ...(flags.sshConfig !== undefined ? { configFile: flags.sshConfig } : {}),
    ...(flags.knownHosts !== undefined ? { knownHostsFiles: [flags.knownHosts] } : {}),
    ...(seconds !== undefined ? { connectTimeoutMs: seconds * 1000 } : {}),
    ...(maxOutputBytes !== undefined ? { maxOutputBytes } : {}),
    ...(agent ? { agentSocket: agent } : {}),
  };
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;
const DEFAULT_KEYS = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

export type SshFailure =
  | 'refused'
  | 'timeout'
  | 'unreachable'
  | 'dns'
  | 'auth'
  | 'host-key-unknown'
  | 'host-key-changed'
  | 'host-key-revoked'
  | 'config'
  | 'closed'
  | 'other';

/** An SSH failure told in a person's words; `reason` is for code that reacts to it. */
export class SshError extends Error {
  constructor(
    readonly reason: SshFailure,
    message: string,
  ) {
    super(message);
    this.name = 'SshError';
  }
}

/** One machine on the way to the target, with everything needed to log in to it. */
export interface SshHop {
  /** What the user or the config named it. */
  alias: string;
  host: string;
  port: number;
  user: string;
  identityFiles: string[];
  /** Whether identityFiles came from --ssh-key or IdentityFile (else: the default files). */
  explicitKeys: boolean;
  identitiesOnly: boolean;
  knownHostsFiles: string[];
  /** The name host keys are looked up under (HostKeyAlias, else the host). */
  keyName: string;
  connectTimeoutMs: number;
}

interface Env {
  home: string;
  localUser: string;
  lines: ConfigLine[];
}

async function env(opts: SshOptions): Promise<Env> {
  const home = opts.home ?? homedir();
  const localUser = opts.localUser ?? userInfo().username;
  const configFile = opts.configFile ?? join(home, '.ssh', 'config');
  const lines = configFile === 'none' ? [] : await loadSshConfig(configFile, { home });
  return { home, localUser, lines };
}

/** The hops to reach `destination`, jump hosts first and the target last. */
export async function resolveRoute(
  destination: string | SshDestination,
  opts: SshOptions = {},
): Promise<SshHop[]> {
  try {
    const dest = typeof destination === 'string' ? parseSshDestination(destination) : destination;
    return route(dest, undefined, opts, await env(opts), 0, true);
  } catch (err) {
    if (err instanceof SshConfigError) throw new SshError('config', err.message);
    throw err;
  }
}

function route(
  dest: SshDestination,
  jumpsOverride: string[] | undefined,
  opts: SshOptions,
  e: Env,
  depth: number,
  target: boolean,
): SshHop[] {
  if (depth > 8)
    throw new SshError(
      'config',
      `ProxyJump chain to ${dest.host} is longer than 8 hops (a loop in ~/.ssh/config?)`,
    );
  const cfg = computeSshConfig(e.lines, dest.host, e);
  if (cfg.proxyCommand) {
    throw new SshError(
      'config',
      `ssh config sets ProxyCommand for ${dest.host}; kdebug runs no commands from ssh config. Use ProxyJump instead.`,
    );
  }
  const hop = toHop(dest, cfg, opts, e, target);
  const jumps = jumpsOverride ?? cfg.proxyJump;
  if (jumps.length === 0) return [hop];
  const last = parseJump(jumps[jumps.length - 1]!, cfg);
  const before = jumps.slice(0, -1);
  // `ProxyJump a,b`: reach b through a; a alone follows its own ProxyJump, as ssh -J does
  return [...route(last, before.length > 0 ? before : undefined, opts, e, depth + 1, false), hop];
}

function parseJump(spec: string, cfg: SshHostConfig): SshDestination {
  try {
    return parseSshDestination(spec);
  } catch (err) {
    throw new SshError('config', `ProxyJump for ${cfg.alias}: ${(err as Error).message}`);
  }
}

function toHop(
  dest: SshDestination,
  cfg: SshHostConfig,
  opts: SshOptions,
  e: Env,
  target: boolean,
): SshHop {
  if (!isPlainIp(cfg.hostName) && !isDnsName(cfg.hostName)) {
    throw new SshError(
      'config',
      `ssh config gives ${dest.host} the HostName ${JSON.stringify(cfg.hostName)}, which is not a host name or IP address`,
    );
  }
  const fromFlag = opts.identityFile ? [opts.identityFile] : [];
  const explicit = [...fromFlag, ...cfg.identityFiles];
  const sshDir = join(e.home, '.ssh');
  const knownHostsFiles = opts.knownHostsFiles ?? [
    ...(cfg.userKnownHostsFiles ?? [join(sshDir, 'known_hosts'), join(sshDir, 'known_hosts2')]),
    '/etc/ssh/ssh_known_hosts',
  ];
  return {
    alias: cfg.alias,
    host: cfg.hostName,
    port: dest.port ?? cfg.port,
    user: dest.user ?? (target ? opts.user : undefined) ?? cfg.user ?? e.localUser,
    identityFiles: explicit.length > 0 ? explicit : DEFAULT_KEYS.map((k) => join(sshDir, k)),
    explicitKeys: explicit.length > 0,
    identitiesOnly: cfg.identitiesOnly,
    knownHostsFiles,
    keyName: cfg.hostKeyAlias ?? cfg.hostName,
    connectTimeoutMs:
      opts.connectTimeoutMs ??
      (cfg.connectTimeout ? cfg.connectTimeout * 1000 : DEFAULT_CONNECT_TIMEOUT_MS),
  };
}

export const hopLabel = (h: Pick<SshHop, 'user' | 'host' | 'port'>) =>
  `${h.user}@${h.host.includes(':') ? `[${h.host}]` : h.host}${h.port === 22 ? '' : `:${h.port}`}`;
