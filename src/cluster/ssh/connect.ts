// Opening an SSH connection the way `ssh` would: hop after hop (jump hosts through forwardOut),
// keys from --ssh-key, IdentityFile, ssh-agent and the default files, and every host key checked
// against known_hosts. ssh2 is loaded only here, and only when SSH is used.
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import type {
  AgentAuthMethod,
  Client,
  ConnectConfig,
  PublicKeyAuthMethod,
  ServerHostKeyAlgorithm,
  utils,
} from 'ssh2';
import {
  checkHostKey,
  fingerprint,
  hostKeyName,
  knownHostsLine,
  knownKeyTypes,
  loadKnownHosts,
  type HostKeyCheck,
  type KnownHost,
} from './known-hosts.js';
import { hopLabel, SshError, type SshHop, type SshOptions } from './route.js';

/** Open clients from the first hop to the target; close them in reverse. */
export interface SshConnection {
  hops: SshHop[];
  clients: Client[];
  target: Client;
}

/** Connects hop after hop (jumps through forwardOut), checking every host key. */
export async function connectRoute(hops: SshHop[], opts: SshOptions = {}): Promise<SshConnection> {
  const ssh2 = (await import('ssh2')).default;
  const clients: Client[] = [];
  try {
    let sock: Duplex | undefined;
    for (const [i, hop] of hops.entries()) {
      const client = new ssh2.Client();
      clients.push(client);
      await connectHop(client, hop, sock, opts, ssh2.utils.parseKey);
      const next = hops[i + 1];
      if (next) sock = await forwardOut(client, hop, next);
    }
    return { hops, clients, target: clients[clients.length - 1]! };
  } catch (err) {
    for (const c of clients.reverse()) c.end();
    throw err;
  }
}

function forwardOut(client: Client, via: SshHop, next: SshHop): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, next.host, next.port, (err, stream) => {
      if (!err) return resolve(stream);
      const why = /refused/i.test(err.message)
        ? new SshError(
            'refused',
            `${via.host} could not open a connection to ${next.host}:${next.port}: connection refused (is sshd running there?)`,
          )
        : new SshError(
            'unreachable',
            `jump host ${via.host} could not reach ${next.host}:${next.port}: ${err.message}`,
          );
      reject(why);
    });
  });
}

type ParseKey = typeof utils.parseKey;

async function connectHop(
  client: Client,
  hop: SshHop,
  sock: Duplex | undefined,
  opts: SshOptions,
  parseKey: ParseKey,
): Promise<void> {
  const known = await loadKnownHosts(hop.knownHostsFiles);
  const auth = await authMethods(hop, opts, parseKey);
  let keyProblem: SshError | undefined;
  const config: ConnectConfig = {
    host: hop.host,
    port: hop.port,
    username: hop.user,
    readyTimeout: hop.connectTimeoutMs,
    keepaliveInterval: 5000,
    keepaliveCountMax: 3,
    authHandler: auth.methods,
    algorithms: { serverHostKey: hostKeyAlgorithms(knownKeyTypes(known, hop.keyName, hop.port)) },
    // The one place a host key is accepted: only when known_hosts holds exactly this key
    hostVerifier: (key: Buffer) => {
      const check = checkHostKey(known, hop.keyName, hop.port, key);
      if (check.status === 'known') return true;
      keyProblem = hostKeyError(check, hop, key);
      return false;
    },
    ...(sock ? { sock } : {}),
  };
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      if (err) {
        client.end();
        reject(err);
      } else resolve();
    };
    client.once('ready', () => settle());
    // ssh2 may report one failure twice (a timeout, then "Connection lost"): the first wins
    client.on('error', (err: Error & { level?: string; code?: string }) =>
      settle(keyProblem ?? translate(err, hop, auth.tried)),
    );
    client.once('close', () =>
      settle(
        keyProblem ??
          new SshError('closed', `${hopLabel(hop)} closed the connection during the handshake`),
      ),
    );
    try {
      client.connect(config);
    } catch (err) {
      settle(
        new SshError('config', `cannot connect to ${hopLabel(hop)}: ${(err as Error).message}`),
      );
    }
  });
}

const RSA: ServerHostKeyAlgorithm[] = ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
const DEFAULT_HOST_KEY_ALGORITHMS: ServerHostKeyAlgorithm[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  ...RSA,
];

/** Asks first for a key type known_hosts already has, so a known host is not reported unknown. */
export function hostKeyAlgorithms(knownTypes: string[]): ServerHostKeyAlgorithm[] {
  const supported = (t: string): t is ServerHostKeyAlgorithm =>
    (DEFAULT_HOST_KEY_ALGORITHMS as string[]).includes(t);
  const preferred = knownTypes.flatMap((t) => (t === 'ssh-rsa' ? RSA : supported(t) ? [t] : []));
  return [...new Set([...preferred, ...DEFAULT_HOST_KEY_ALGORITHMS])];
}

function hostKeyError(
  check: Exclude<HostKeyCheck, { status: 'known' }>,
  hop: SshHop,
  key: Buffer,
): SshError {
  const name = hostKeyName(hop.keyName, hop.port);
  const line = knownHostsLine(hop.keyName, hop.port, key);
  const file = hop.knownHostsFiles[0] ?? '~/.ssh/known_hosts';
  const offered = `${check.status === 'revoked' ? check.entry.keyType : line.split(' ')[1]} key ${fingerprint(key)}`;
  switch (check.status) {
    case 'revoked':
      return new SshError(
        'host-key-revoked',
        `${name}: the host key is marked @revoked (${check.entry.file}:${check.entry.line}); refusing to connect.\n  The server offered the ${offered}.`,
      );
    case 'changed': {
      const old = check.entries
        .map((e: KnownHost) => `${e.file}:${e.line} (${fingerprint(e.key)})`)
        .join(', ');
      return new SshError(
        'host-key-changed',
        `${name}: HOST KEY CHANGED; refusing to connect. Someone may be intercepting the connection, or the node was reinstalled.\n` +
          `  The server offered the ${offered}; known_hosts has ${old}.\n` +
          `  If the change is expected, remove the old key (ssh-keygen -R '${name}' -f ${check.entries[0]!.file}) and add this line to ${file}:\n` +
          `    ${line}`,
      );
    }
    case 'unknown': {
      const others =
        check.otherTypes.length > 0
          ? ` (known_hosts only has ${check.otherTypes.join(', ')} for it)`
          : '';
      return new SshError(
        'host-key-unknown',
        `${name}: host key unknown${others}; kdebug only connects to hosts whose key is in known_hosts.\n` +
          `  The server offered the ${offered}.\n` +
          `  Compare it with the node's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the node), then add this line to ${file}:\n` +
          `    ${line}`,
      );
    }
  }
}

function translate(
  err: Error & { level?: string; code?: string },
  hop: SshHop,
  tried: string[],
): SshError {
  const where = `${hop.host}:${hop.port}`;
  const secs = Math.round(hop.connectTimeoutMs / 100) / 10;
  if (err instanceof SshError) return err;
  if (err.code === 'ECONNREFUSED')
    return new SshError(
      'refused',
      `${where}: connection refused (no sshd listening on port ${hop.port}?)`,
    );
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH')
    return new SshError('unreachable', `${where}: no route to host (${err.code})`);
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.level === 'client-dns')
    return new SshError('dns', `cannot resolve ${hop.host}`);
  if (err.code === 'ETIMEDOUT' || err.level === 'client-timeout') {
    return new SshError(
      'timeout',
      `${where}: no SSH answer within ${secs}s (host down, a firewall, or the wrong address?)`,
    );
  }
  if (err.level === 'client-authentication') {
    const offered = tried.length > 0 ? tried.join(', ') : 'nothing';
    return new SshError(
      'auth',
      `${hopLabel(hop)}: authentication failed (offered ${offered}). Check the user (--ssh-user), the key (--ssh-key) and the node's ~${hop.user}/.ssh/authorized_keys.`,
    );
  }
  return new SshError('other', `${hopLabel(hop)}: ${err.message}`);
}

/** The keys to offer, in order: explicit files, then the agent, then default files that exist. */
async function authMethods(
  hop: SshHop,
  opts: SshOptions,
  parseKey: ParseKey,
): Promise<{ methods: (PublicKeyAuthMethod | AgentAuthMethod)[]; tried: string[] }> {
  const methods: (PublicKeyAuthMethod | AgentAuthMethod)[] = [];
  const tried: string[] = [];
  const skipped: string[] = [];
  const fileKeys = async () => {
    for (const file of hop.identityFiles) {
      let data: Buffer;
      try {
        data = await readFile(file);
      } catch (e) {
        const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
        if (missing && !hop.explicitKeys) continue;
        throw new SshError(
          'config',
          `cannot read SSH key ${file}: ${missing ? 'no such file' : (e as Error).message}`,
        );
      }
      const parsed = parseKey(data);
      if (parsed instanceof Error) {
        skipped.push(
          /encrypted/i.test(parsed.message)
            ? `${file} (encrypted: load it with ssh-add)`
            : `${file} (${parsed.message})`,
        );
        continue;
      }
      methods.push({ type: 'publickey', username: hop.user, key: data });
      tried.push(file);
    }
  };
  if (hop.explicitKeys) await fileKeys();
  if (opts.agentSocket && !(hop.identitiesOnly && hop.explicitKeys)) {
    methods.push({ type: 'agent', username: hop.user, agent: opts.agentSocket });
    tried.push('ssh-agent');
  }
  if (!hop.explicitKeys) await fileKeys();
  if (methods.length === 0) {
    const why = skipped.length > 0 ? ` Skipped: ${skipped.join('; ')}.` : '';
    throw new SshError(
      'auth',
      `no SSH key to offer ${hopLabel(hop)}: pass --ssh-key, set IdentityFile in ~/.ssh/config, or start ssh-agent.${why}`,
    );
  }
  return { methods, tried: [...tried, ...skipped.map((s) => `skipped ${s}`)] };
}
