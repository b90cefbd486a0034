// The SSH transport's pieces that need no sshd: which address a node is reached at, how a
// failed command is explained (sudo, missing binary, time limit), and that ssh2 is only ever
// loaded when SSH is used; and, against a stand-in ssh2 server, a node that never stops writing.
// Its behaviour against a real sshd is in test/lab/ssh.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import ssh2 from 'ssh2';
import { nodeArgv } from '../../src/cluster/nodes/commands.js';
import { explainFailure, nodeSshHost, SshSession } from '../../src/cluster/nodes/ssh.js';
import { SshError, sshOptionsFromFlags } from '../../src/cluster/ssh/route.js';

const RULES_AS_USER = nodeArgv(
  { kind: 'iptables-save', backend: 'auto', table: 'nat' },
  { kind: 'host', sudo: true },
);
const result = (exitCode: number | null, stderr = '') => ({ stdout: '', stderr, exitCode });

describe('SSH node transport', () => {
  const node = {
    addresses: [
      { type: 'InternalIP', address: '192.0.2.11' },
      { type: 'ExternalIP', address: '198.51.100.11' },
      { type: 'Hostname', address: 'node-a' },
    ],
  };
  const ADDRESSES: [
    string,
    typeof node,
    'InternalIP' | 'ExternalIP' | 'Hostname',
    string | undefined,
  ][] = [
    ['InternalIP', node, 'InternalIP', '192.0.2.11'],
    ['ExternalIP', node, 'ExternalIP', '198.51.100.11'],
    ['Hostname', node, 'Hostname', 'node-a'],
    [
      'missing type',
      { addresses: [{ type: 'InternalIP', address: '192.0.2.11' }] },
      'ExternalIP',
      undefined,
    ],
    [
      'an address that is no host',
      { addresses: [{ type: 'Hostname', address: 'node a;reboot' }] },
      'Hostname',
      undefined,
    ],
  ];
  for (const [why, n, type, expected] of ADDRESSES)
    it(`picks the node address: ${why}`, () => assert.equal(nodeSshHost(n, type), expected));

  const FAILURES: [string, ReturnType<typeof result>, RegExp | undefined][] = [
    [
      'sudo wants a password',
      result(1, 'sudo: a password is required\n'),
      /^core may not run \/usr\/sbin\/iptables-save with sudo -n \(sudo: a password is required\)\. Allow it without a password in sudoers, or connect as root\.$/,
    ],
    [
      'not in sudoers',
      result(1, 'core is not in the sudoers file.  This incident will be reported.\n'),
      /may not run \/usr\/sbin\/iptables-save with sudo -n/,
    ],
    [
      'no root',
      result(
        1,
        'iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n',
      ),
      /needs root on the node/,
    ],
    [
      'binary missing',
      result(
        127,
        'timeout: failed to run command ‘/usr/sbin/iptables-save’: No such file or directory\n',
      ),
      /^\/usr\/sbin\/iptables-save is not installed on the node \(exit 127\)$/,
    ],
    ['time limit', result(124), /did not finish within its time limit on the node/],
    ['success', result(0), undefined],
  ];
  for (const [why, r, message] of FAILURES) {
    it(`explains a failed command: ${why}`, () => {
      const text = explainFailure(r, RULES_AS_USER, 'core');
      if (message) assert.match(text ?? '', message);
      else assert.equal(text, undefined);
    });
  }

  it('turns the CLI flags and SSH_AUTH_SOCK into options', () => {
    const flags = {
      sshUser: 'core',
      sshKey: '/k',
      sshConfig: 'none',
      knownHosts: '/kh',
      sshTimeout: '2.5',
    };
    assert.deepEqual(sshOptionsFromFlags(flags, { SSH_AUTH_SOCK: '/run/agent' }), {
      user: 'core',
      identityFile: '/k',
      configFile: 'none',
      knownHostsFiles: ['/kh'],
      connectTimeoutMs: 2500,
      agentSocket: '/run/agent',
    });
    assert.deepEqual(sshOptionsFromFlags({}, {}), {});
    for (const bad of ['0', '-1', 'soon', '601'])
      assert.throws(() => sshOptionsFromFlags({ sshTimeout: bad }, {}), SshError);
  });

  const LIMITS: [string, number | RegExp][] = [
    ['1', 1024 * 1024],
    ['511', 511 * 1024 * 1024],
    ['0', /^--max-output-mib 0: give a whole number of MiB from 1 to 511$/],
    ['512', /^--max-output-mib 512: give/],
    ['1.5', /^--max-output-mib 1\.5: give/],
    ['lots', /^--max-output-mib lots: give/],
  ];
  for (const [typed, expected] of LIMITS)
    it(`reads --max-output-mib ${typed}`, () => {
      if (typeof expected === 'number')
        assert.equal(sshOptionsFromFlags({ maxOutputMib: typed }, {}).maxOutputBytes, expected);
      else
        assert.throws(() => sshOptionsFromFlags({ maxOutputMib: typed }, {}), {
          message: expected,
        });
    });

  it('loads ssh2 only on use: no file under src/ imports it at load time', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? walk(join(dir, e.name))
          : /\.tsx?$/.test(e.name)
            ? [join(dir, e.name)]
            : [],
      );
    const eager = walk('src').filter((f) =>
      /^\s*import\s+(?!type\b)[^;]*from\s+['"]ssh2['"]/m.test(readFileSync(f, 'utf8')),
    );
    assert.deepEqual(eager, []);
    assert.match(readFileSync('src/cluster/ssh/connect.ts', 'utf8'), /await import\('ssh2'\)/);
  });
});

const MIB = 1024 * 1024;

/** An ed25519 key pair ssh2 can read back: about 1 in 400 it generates is malformed to its own
 * parser ("Cannot parse privateKey"), so one is drawn again. */
function keyPair() {
  for (;;) {
    const k = ssh2.utils.generateKeyPairSync('ed25519');
    if (!(ssh2.utils.parseKey(k.private) instanceof Error)) return k;
  }
}

/**
 * A stand-in sshd on 127.0.0.1 that accepts kdebug's key and answers every command by `behave`.
 * It counts what it wrote and whether kdebug closed the channel.
 */
async function standInSshd(behave: (channel: ssh2.ServerChannel) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-sshd-'));
  const host = keyPair();
  const user = keyPair();
  writeFileSync(join(dir, 'id'), user.private, { mode: 0o600 });
  const seen = { closed: 0 };
  const server = new ssh2.Server({ hostKeys: [host.private] }, (client) => {
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => ctx.accept());
    client.on('ready', () =>
      client.on('session', (accept) =>
        accept().on('exec', (accept) => {
          const channel = accept();
          // its input read, so the channel can end when kdebug closes it
          channel.resume();
          channel.on('close', () => seen.closed++);
          behave(channel);
        }),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const hostKey = host.public.split(' ').slice(0, 2).join(' ');
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey}\n`);
  const open = (maxOutputBytes?: number) =>
    SshSession.open(
      { user: 'root', host: '127.0.0.1', port },
      {
        identityFile: join(dir, 'id'),
        knownHostsFiles: [join(dir, 'known_hosts')],
        configFile: 'none',
        commandTimeoutMs: 20_000,
        ...(maxOutputBytes ? { maxOutputBytes } : {}),
      },
    );
  const close = () => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { open, seen, close };
}

describe('a node that never stops writing, over SSH', () => {
  let written = 0;
  let sshd: Awaited<ReturnType<typeof standInSshd>>;
  before(async () => {
    const chunk = Buffer.alloc(64 * 1024, 'y');
    sshd = await standInSshd((channel) => {
      // as fast as kdebug takes it, forever: only kdebug closing the channel ends it
      const pour = () => {
        while (channel.writable && channel.write(chunk)) written += chunk.length;
        if (channel.writable) channel.once('drain', pour);
      };
      pour();
    });
  });
  after(() => sshd.close());

  it('reads at most the limit, closes the channel and says so: a failed read, no output', async () => {
    const session = await sshd.open(MIB);
    const rss = process.memoryUsage().rss;
    const started = Date.now();
    try {
      const r = await session.run({ kind: 'iptables-save', backend: 'auto' });
      assert.deepEqual(
        { printed: r.stdout.length, exitCode: r.exitCode, lost: r.lost },
        { printed: 0, exitCode: null, lost: true },
      );
      assert.match(r.error ?? '', /^output over 1 MiB, not read \(--max-output-mib/);
      assert.ok(Date.now() - started < 10_000, 'it waited for the time limit');
      // the channel closes on kdebug's word, and the node stops writing
      await until(() => sshd.seen.closed === 1);
      const stopped = written;
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(written, stopped, 'the node kept writing after the channel closed');
      assert.ok(written < 32 * MIB, `the node wrote ${written} bytes`);
      assert.ok(process.memoryUsage().rss - rss < 200 * MIB, 'memory grew with the output');
      // the connection still serves the next command
      assert.equal((await session.run({ kind: 'ip-addr' })).error, r.error);
    } finally {
      await session.close();
    }
  });
});

async function until(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
