// The built CLI, run as a person would from the lab's workstation namespace:
// `kdebug rules --ssh ...` against real sshd and real iptables (addresses: test/support/lab/lab.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { ROOT } from '../support/cli.js';
import { labSuite, requireLab } from '../support/lab/harness.js';
import { Lab } from '../support/lab/lab.js';
import { checkJsonStdout } from '../support/schema.js';

const PREFIX = 'kdt-cli';

describe('kdebug rules --ssh against the lab', labSuite(), () => {
  let lab: Lab;
  const kdebug = (...args: string[]) =>
    lab.execAsync('ws', [process.execPath, 'bin/kdebug.js', ...args]).then((r) => {
      checkJsonStdout(args, r.stdout); // every JSON it prints against its schema
      return r;
    });

  before(async () => {
    requireLab();
    if (!existsSync(join(ROOT, 'dist/cli.js')))
      spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
    lab = await Lab.up(PREFIX);
  });
  after(async () => {
    await Lab.down(PREFIX);
  });

  it('reads node-c through its jump host with ~/.ssh/config and prints the Service trees as JSON', async () => {
    const r = await kdebug(
      'rules',
      '--ssh',
      'node-c',
      '--ssh-config',
      lab.files.sshConfig,
      '-o',
      'json',
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /they are in the legacy backend \(iptables-legacy-save\)/);
    const svc = JSON.parse(r.stdout).services.find(
      (s: { name: string }) => s.name === 'default/nginx-svc:http',
    );
    assert.equal(svc.chains.svc, kubeProxyChain('KUBE-SVC', 'default/nginx-svc:http', 'tcp'));
    assert.deepEqual(svc.endpoints.map((e: { address: string }) => e.address).sort(), [
      '10.244.0.3:80',
      '10.244.1.7:80',
    ]);
  });

  it('reads node-a with --ssh-key and --known-hosts as text', async () => {
    const r = await kdebug(
      'rules',
      '--ssh',
      'root@192.0.2.11',
      '--ssh-config',
      'none',
      '--ssh-key',
      lab.files.key,
      '--known-hosts',
      lab.files.knownHosts,
      '-o',
      'text',
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ssh root@192\.0\.2\.11: /);
    assert.match(r.stdout, /^kube-system\/kube-dns:dns {2}10\.96\.0\.10:53\/udp$/m);
  });

  it('refuses an unknown host key with exit 2, the fingerprint and the line to add', async () => {
    const empty = join(lab.dir, 'known_hosts.cli-empty');
    writeFileSync(empty, '');
    const r = await kdebug(
      'rules',
      '--ssh',
      'root@192.0.2.11',
      '--ssh-config',
      'none',
      '--ssh-key',
      lab.files.key,
      '--known-hosts',
      empty,
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^kdebug: 192\.0\.2\.11: host key unknown/);
    assert.match(r.stderr, /The server offered the ssh-ed25519 key SHA256:[A-Za-z0-9+/]{43}\./);
    assert.match(r.stderr, /\n {4}192\.0\.2\.11 ssh-ed25519 AAAA[A-Za-z0-9+/=]+\n/);
    assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
  });

  const USAGE: [string, string[], RegExp][] = [
    [
      'a destination with shell in it',
      ['--ssh', 'root@1.2.3.4;reboot'],
      /^kdebug: bad SSH destination "root@1\.2\.3\.4;reboot"/,
    ],
    [
      '--ssh with --file',
      ['--ssh', '192.0.2.11', '--file', '/dev/null'],
      /^kdebug: give one of --file, --snapshot or --ssh/,
    ],
    [
      'a bad timeout',
      ['--ssh', '192.0.2.11', '--ssh-timeout', 'soon'],
      /^kdebug: --ssh-timeout soon: give seconds/,
    ],
  ];
  for (const [why, args, message] of USAGE) {
    it(`exits 2 for ${why}`, async () => {
      const r = await kdebug('rules', ...args);
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stderr, message);
    });
  }
});
