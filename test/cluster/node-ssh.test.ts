// The SSH transport's pieces that need no sshd: which address a node is reached at, how a
// failed command is explained (sudo, missing binary, time limit), and that ssh2 is only ever
// loaded when SSH is used. Its behaviour against a real sshd is in test/lab/ssh.test.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { nodeArgv } from '../../src/cluster/node-commands.js';
import { explainFailure, nodeSshHost } from '../../src/cluster/node-ssh.js';
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
