// ~/.ssh/config, resolved the way ssh resolves it for one host: Host and Match blocks in order,
// the first value of each option wins (IdentityFile adds up), Include, %-tokens and ~. kdebug
// never runs a command from it: `Match exec` never matches and ProxyCommand is refused.
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { isDnsName, isPlainIp, isPort } from '../nodes/valid-command.js';

/** One `Keyword value...` line, with where it came from. */
export interface ConfigLine {
  keyword: string;
  args: string[];
  file: string;
  line: number;
}

export class SshConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshConfigError';
  }
}

/** Splits one config line into keyword and arguments ("Key value", "Key=value", "quoted args"). */
function splitLine(text: string): { keyword: string; args: string[] } | undefined {
  const t = text.trim();
  if (t === '' || t.startsWith('#')) return undefined;
  const m = /^([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*)$/.exec(t);
  if (!m) return { keyword: t.toLowerCase(), args: [] };
  const args: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let a = re.exec(m[2]!); a; a = re.exec(m[2]!)) args.push(a[1] ?? a[2]!);
  return { keyword: m[1]!.toLowerCase(), args };
}

export function parseSshConfig(text: string, file = 'ssh_config'): ConfigLine[] {
  const lines: ConfigLine[] = [];
  text.split('\n').forEach((raw, i) => {
    const s = splitLine(raw);
    if (s) lines.push({ ...s, file, line: i + 1 });
  });
  return lines;
}

export interface LoadOptions {
  /** The user's home directory: `~` and relative Include paths (under ~/.ssh) start there. */
  home: string;
}

/** Reads a config file and, in place, the files its Include lines name. A missing file is empty. */
export async function loadSshConfig(
  file: string,
  opts: LoadOptions,
  depth = 0,
): Promise<ConfigLine[]> {
  if (depth > 16) throw new SshConfigError(`${file}: Include nested too deeply`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SshConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const out: ConfigLine[] = [];
  for (const line of parseSshConfig(text, file)) {
    if (line.keyword !== 'include') {
      out.push(line);
      continue;
    }
    for (const pattern of line.args) {
      const path = expandTilde(pattern, opts.home);
      const full = isAbsolute(path) ? path : join(opts.home, '.ssh', path);
      for (const included of await globFiles(full))
        out.push(...(await loadSshConfig(included, opts, depth + 1)));
    }
  }
  return out;
}

// Include globs: `*` and `?` in the last path component, results sorted as glob(3) does.
async function globFiles(path: string): Promise<string[]> {
  const name = basename(path);
  if (!/[*?]/.test(name)) return [path];
  const re = new RegExp(
    `^${name
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
  );
  try {
    return (await readdir(dirname(path)))
      .filter((f) => re.test(f) && !f.startsWith('.'))
      .sort()
      .map((f) => join(dirname(path), f));
  } catch {
    return [];
  }
}

function expandTilde(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

/** OpenSSH pattern-list: `*`/`?` wildcards, a matching `!pattern` vetoes the list. */
export function matchPatternList(patterns: readonly string[], name: string): boolean {
  let matched = false;
  for (const p of patterns) {
    const negated = p.startsWith('!');
    const re = (negated ? p.slice(1) : p)
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.');
    if (new RegExp(`^${re}$`, 'i').test(name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** What the config says for one host, after ssh's rules. */
export interface SshHostConfig {
  /** The name asked for (a Host alias, a node name, an IP). */
  alias: string;
  hostName: string;
  user?: string;
  port: number;
  identityFiles: string[];
  identitiesOnly: boolean;
  /** ProxyJump hops as written, "[user@]host[:port]"; empty for none. */
  proxyJump: string[];
  proxyCommand?: string;
  userKnownHostsFiles?: string[];
  hostKeyAlias?: string;
  /** Seconds. */
  connectTimeout?: number;
  /** Match blocks that were not evaluated (exec, localnetwork ...): they never apply. */
  skippedMatches: string[];
}

export interface ComputeOptions {
  home: string;
  localUser: string;
}

/** Resolves the options for `host` from parsed lines (first value wins). */
export function computeSshConfig(
  lines: readonly ConfigLine[],
  host: string,
  opts: ComputeOptions,
): SshHostConfig {
  const first = new Map<string, ConfigLine>();
  const identityFiles: ConfigLine[] = [];
  const skippedMatches: string[] = [];
  let applies = true; // lines before the first Host/Match apply to every host
  for (const line of lines) {
    if (line.keyword === 'host') {
      applies = matchPatternList(line.args, host);
      continue;
    }
    if (line.keyword === 'match') {
      const hostName = first.get('hostname')?.args[0] ?? host;
      applies = evaluateMatch(line, {
        host: expandTokens(hostName, { ...opts, host, port: 22 }),
        originalHost: host,
        user: first.get('user')?.args[0],
      });
      if (!applies && unsupportedMatch(line)) skippedMatches.push(`${line.file}:${line.line}`);
      continue;
    }
    if (!applies) continue;
    if (line.keyword === 'identityfile') identityFiles.push(line);
    else if (!first.has(line.keyword)) first.set(line.keyword, line);
  }
  const arg = (k: string) => first.get(k)?.args[0];
  const portText = arg('port');
  const port = portText === undefined ? 22 : Number(portText);
  if (!isPort(port))
    throw new SshConfigError(`${where(first.get('port')!)}: Port ${portText} is not a port number`);
  const user = arg('user');
  const hostName = expandTokens(arg('hostname') ?? host, { ...opts, host, port });
  const tokens = { ...opts, host: hostName, port, user: user ?? opts.localUser, original: host };
  const jump = arg('proxyjump');
  const timeout = arg('connecttimeout');
  const knownHosts = first.get('userknownhostsfile')?.args;
  const proxyCommand = first.get('proxycommand')?.args.join(' ');
  return {
    alias: host,
    hostName,
    ...(user !== undefined ? { user } : {}),
    port,
    identityFiles: identityFiles
      .flatMap((l) => l.args)
      .map((f) => expandTilde(expandTokens(f, tokens), opts.home)),
    identitiesOnly: arg('identitiesonly')?.toLowerCase() === 'yes',
    proxyJump:
      jump === undefined || jump.toLowerCase() === 'none'
        ? []
        : jump.split(',').filter((j) => j !== ''),
    ...(proxyCommand && proxyCommand.toLowerCase() !== 'none' ? { proxyCommand } : {}),
    ...(knownHosts && knownHosts[0]?.toLowerCase() !== 'none'
      ? {
          userKnownHostsFiles: knownHosts.map((f) =>
            expandTilde(expandTokens(f, tokens), opts.home),
          ),
        }
      : {}),
    ...(arg('hostkeyalias') ? { hostKeyAlias: arg('hostkeyalias')! } : {}),
    ...(timeout !== undefined && /^\d+$/.test(timeout) ? { connectTimeout: Number(timeout) } : {}),
    skippedMatches,
  };
}

const where = (l: ConfigLine) => `${l.file}:${l.line}`;

// Criteria kdebug can decide without running anything; any other makes the block not apply.
const MATCH_CRITERIA = new Set(['all', 'host', 'originalhost', 'user']);

function unsupportedMatch(line: ConfigLine): boolean {
  return line.args.some(
    (a, i) => i % 2 === 0 && !MATCH_CRITERIA.has(a.replace(/^!/, '').toLowerCase()),
  );
}

function evaluateMatch(
  line: ConfigLine,
  ctx: { host: string; originalHost: string; user: string | undefined },
): boolean {
  const args = line.args;
  if (args.length === 1 && args[0]!.toLowerCase() === 'all') return true;
  if (unsupportedMatch(line)) return false; // never `exec`: kdebug runs nothing from a config file
  for (let i = 0; i < args.length; i += 2) {
    const negated = args[i]!.startsWith('!');
    const criterion = args[i]!.replace(/^!/, '').toLowerCase();
    const patterns = (args[i + 1] ?? '').split(',');
    const subject =
      criterion === 'host'
        ? ctx.host
        : criterion === 'originalhost'
          ? ctx.originalHost
          : (ctx.user ?? '');
    if (criterion === 'all') continue;
    if (matchPatternList(patterns, subject) === negated) return false;
  }
  return true;
}

interface Tokens extends ComputeOptions {
  host: string;
  port: number;
  user?: string;
  original?: string;
}

/** %h host, %p port, %r remote user, %u local user, %d home, %n the name asked for, %% a '%'. */
function expandTokens(value: string, t: Tokens): string {
  return value.replace(/%([%hprudn])/g, (_, c: string) => {
    switch (c) {
      case 'h':
        return t.host;
      case 'p':
        return `${t.port}`;
      case 'r':
        return t.user ?? t.localUser;
      case 'u':
        return t.localUser;
      case 'd':
        return t.home;
      case 'n':
        return t.original ?? t.host;
      default:
        return '%';
    }
  });
}

/** `[user@]host[:port]`, `ssh://[user@]host[:port]`, IPv6 as `[::1]:22` or bare `::1`. */
export interface SshDestination {
  user?: string;
  host: string;
  port?: number;
}

const USER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/;

/** Parses and validates a destination; anything not a plain user, host and port is refused. */
export function parseSshDestination(spec: string): SshDestination {
  let rest = spec.startsWith('ssh://') ? spec.slice(6).replace(/\/$/, '') : spec;
  const bad = (why: string) =>
    new SshConfigError(
      `bad SSH destination ${JSON.stringify(spec)}: ${why} (expected [USER@]HOST[:PORT])`,
    );
  let user: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    if (!USER.test(user)) throw bad(`${JSON.stringify(user)} is not a user name`);
  }
  let host = rest;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracket) [, host = '', portText] = bracket;
  else if ((rest.match(/:/g) ?? []).length === 1) [host = '', portText] = rest.split(':');
  if (!isPlainIp(host) && !isDnsName(host))
    throw bad(`${JSON.stringify(host)} is not a host name or IP address`);
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && !isPort(port)) throw bad(`${JSON.stringify(portText)} is not a port`);
  return { ...(user ? { user } : {}), host, ...(port !== undefined ? { port } : {}) };
}
