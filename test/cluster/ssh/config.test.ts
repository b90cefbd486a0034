// ~/.ssh/config resolution as ssh does it, and the route (jump hosts) built from it.
// Hosts: nodes 192.0.2.11-13 (TEST-NET-1), bastion 198.51.100.5 (TEST-NET-2).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  computeSshConfig,
  loadSshConfig,
  matchPatternList,
  parseSshConfig,
  parseSshDestination,
} from '../../../src/cluster/ssh/config.js';
import { resolveRoute, SshError, type SshHop } from '../../../src/cluster/ssh/route.js';

const HOME = '/home/me';
const ctx = { home: HOME, localUser: 'me' };
const compute = (text: string, host: string) =>
  computeSshConfig(parseSshConfig(text, 'config'), host, ctx);

describe('ssh config', () => {
  it('matches pattern lists: wildcards, ?, negation wins', () => {
    const rows: [string[], string, boolean][] = [
      [['node-*'], 'node-a', true],
      [['node-?'], 'node-ab', false],
      [['192.0.2.*'], '192.0.2.11', true],
      [['*', '!bastion'], 'bastion', false],
      [['!bastion'], 'node-a', false], // a negation alone matches nothing
      [['NODE-A'], 'node-a', true],
    ];
    for (const [patterns, name, expected] of rows)
      assert.equal(matchPatternList(patterns, name), expected, `${patterns} ${name}`);
  });

  it('takes the first value of each option from matching blocks, in file order', () => {
    const cfg = compute(
      `# global first
Port 2200
Host node-a
  HostName 192.0.2.11
  User admin
Host node-*
  User ignored
  Port 22
  IdentityFile ~/.ssh/nodes
Host *
  User root
  IdentityFile %d/.ssh/id_%r@%h
  ConnectTimeout 7
`,
      'node-a',
    );
    assert.deepEqual(
      {
        hostName: cfg.hostName,
        user: cfg.user,
        port: cfg.port,
        keys: cfg.identityFiles,
        timeout: cfg.connectTimeout,
      },
      {
        hostName: '192.0.2.11',
        user: 'admin',
        port: 2200,
        keys: ['/home/me/.ssh/nodes', '/home/me/.ssh/id_admin@192.0.2.11'],
        timeout: 7,
      },
    );
  });

  it('reads Key=value, quoted values, case-insensitive keywords and HostName %h', () => {
    const cfg = compute(
      'HOST web\n  hostname=%h.lab.example\n  IDENTITYFILE "/keys/my key"\n  ProxyJump admin@198.51.100.5:2222,node-a\n',
      'web',
    );
    assert.equal(cfg.hostName, 'web.lab.example');
    assert.deepEqual(cfg.identityFiles, ['/keys/my key']);
    assert.deepEqual(cfg.proxyJump, ['admin@198.51.100.5:2222', 'node-a']);
  });

  it('ProxyJump none and ProxyCommand none mean no jump', () => {
    const cfg = compute(
      'Host x\n  ProxyJump none\n  ProxyCommand none\nHost *\n  ProxyJump bastion\n',
      'x',
    );
    assert.deepEqual([cfg.proxyJump, cfg.proxyCommand], [[], undefined]);
  });

  it('never runs Match exec and never applies its block; Match host/user/all are evaluated', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-ssh-'));
    const witness = join(dir, 'ran');
    const cfg = compute(
      `Match exec "touch ${witness}"
  User fromexec
Match host 192.0.2.* user root
  Port 2022
Match originalhost node-c
  HostName 192.0.2.13
  User root
Match all
  IdentityFile /keys/all
`,
      'node-c',
    );
    assert.equal(existsSync(witness), false, 'Match exec ran a command');
    rmSync(dir, { recursive: true });
    assert.equal(cfg.user, 'root');
    assert.equal(cfg.port, 22, 'Match host ran before HostName and user were known');
    assert.deepEqual(cfg.identityFiles, ['/keys/all']);
    assert.deepEqual(cfg.skippedMatches, ['config:1']);
  });

  it('reports a bad Port with file and line', () => {
    assert.throws(
      () => compute('Host x\n  Port 99999\n', 'x'),
      /config:2: Port 99999 is not a port number/,
    );
  });

  describe('Include', () => {
    const home = mkdtempSync(join(tmpdir(), 'kdebug-home-'));
    after(() => rmSync(home, { recursive: true, force: true }));
    mkdirSync(join(home, '.ssh', 'conf.d'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'config'), 'Include conf.d/*.conf\nHost *\n  User fallback\n');
    writeFileSync(join(home, '.ssh', 'conf.d', '20-b.conf'), 'Host node-a\n  User second\n');
    writeFileSync(
      join(home, '.ssh', 'conf.d', '10-a.conf'),
      'Host node-a\n  User first\n  Include ~/.ssh/extra\n',
    );
    writeFileSync(join(home, '.ssh', 'conf.d', 'skip.txt'), 'Host node-a\n  User never\n');
    writeFileSync(join(home, '.ssh', 'extra'), '  Port 2222\n');

    it('reads included files in place, sorted, relative to ~/.ssh, nested', async () => {
      const lines = await loadSshConfig(join(home, '.ssh', 'config'), { home });
      const cfg = computeSshConfig(lines, 'node-a', { home, localUser: 'me' });
      assert.deepEqual([cfg.user, cfg.port], ['first', 2222]);
      assert.equal(computeSshConfig(lines, 'other', { home, localUser: 'me' }).user, 'fallback');
    });

    it('treats a missing config file as empty', async () => {
      assert.deepEqual(await loadSshConfig(join(home, 'nope'), { home }), []);
    });
  });
});

describe('SSH destinations', () => {
  const OK: [string, object][] = [
    ['192.0.2.11', { host: '192.0.2.11' }],
    ['root@192.0.2.11', { user: 'root', host: '192.0.2.11' }],
    ['admin@node-a.lab.example:2222', { user: 'admin', host: 'node-a.lab.example', port: 2222 }],
    ['[fd00::11]:2222', { host: 'fd00::11', port: 2222 }],
    ['root@fd00::11', { user: 'root', host: 'fd00::11' }],
    ['ssh://core@192.0.2.11:22', { user: 'core', host: '192.0.2.11', port: 22 }],
  ];
  for (const [spec, expected] of OK)
    it(`parses ${spec}`, () => assert.deepEqual(parseSshDestination(spec), expected));

  const BAD = [
    '1.2.3.4; rm -rf /',
    'root@$(id)',
    '-oProxyCommand=id',
    'a b',
    'root@host:0',
    'root@host:99999',
    '',
    'us;er@host',
    '[fd00::1',
  ];
  for (const spec of BAD)
    it(`refuses ${JSON.stringify(spec)}`, () =>
      assert.throws(() => parseSshDestination(spec), /bad SSH destination/));
});

describe('SSH routes', () => {
  const home = mkdtempSync(join(tmpdir(), 'kdebug-route-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const config = (text: string) => {
    const file = join(home, `config-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, text);
    return file;
  };
  const base = { home, localUser: 'me' };
  const short = (hops: SshHop[]) => hops.map((h) => `${h.user}@${h.host}:${h.port}`);

  it('goes straight to a host without ProxyJump; destination user > --ssh-user > User > local user', async () => {
    const file = config('Host 192.0.2.11\n  User fromconfig\n');
    assert.deepEqual(short(await resolveRoute('192.0.2.11', { ...base, configFile: file })), [
      'fromconfig@192.0.2.11:22',
    ]);
    assert.deepEqual(
      short(await resolveRoute('192.0.2.11', { ...base, configFile: file, user: 'flag' })),
      ['flag@192.0.2.11:22'],
    );
    assert.deepEqual(
      short(
        await resolveRoute('core@192.0.2.11:2222', { ...base, configFile: file, user: 'flag' }),
      ),
      ['core@192.0.2.11:2222'],
    );
    assert.deepEqual(short(await resolveRoute('192.0.2.12', { ...base, configFile: 'none' })), [
      'me@192.0.2.12:22',
    ]);
  });

  it('reaches a host through its ProxyJump, the jump resolved with its own config', async () => {
    const file = config(`Host bastion
  HostName 198.51.100.5
  User jump
  Port 2222
  IdentityFile /keys/bastion
Host 192.0.2.*
  User root
  ProxyJump bastion
`);
    const hops = await resolveRoute('192.0.2.13', {
      ...base,
      configFile: file,
      user: 'admin',
      identityFile: '/keys/flag',
    });
    assert.deepEqual(
      short(hops),
      ['jump@198.51.100.5:2222', 'admin@192.0.2.13:22'],
      '--ssh-user is for the target only',
    );
    assert.deepEqual(
      hops[0]!.identityFiles,
      ['/keys/flag', '/keys/bastion'],
      '--ssh-key is tried first on every hop',
    );
    assert.equal(hops[1]!.keyName, '192.0.2.13');
  });

  it('chains ProxyJump a,b: a first, then b, then the target; a follows its own ProxyJump', async () => {
    const file = config(
      'Host a\n  HostName 198.51.100.1\n  ProxyJump outer@198.51.100.9\nHost b\n  HostName 198.51.100.2\n  ProxyJump ignored\nHost t\n  HostName 192.0.2.11\n  ProxyJump a,b\n',
    );
    assert.deepEqual(short(await resolveRoute('t', { ...base, configFile: file })), [
      'outer@198.51.100.9:22',
      'me@198.51.100.1:22',
      'me@198.51.100.2:22',
      'me@192.0.2.11:22',
    ]);
  });

  it('uses --known-hosts alone when given, UserKnownHostsFile otherwise, and HostKeyAlias for lookups', async () => {
    const file = config(
      'Host n\n  HostName 192.0.2.11\n  UserKnownHostsFile ~/kh1 /etc/kh2\n  HostKeyAlias node-a\n',
    );
    const [hop] = await resolveRoute('n', { ...base, configFile: file });
    assert.deepEqual(hop!.knownHostsFiles, [
      join(home, 'kh1'),
      '/etc/kh2',
      '/etc/ssh/ssh_known_hosts',
    ]);
    assert.equal(hop!.keyName, 'node-a');
    const [flagged] = await resolveRoute('n', {
      ...base,
      configFile: file,
      knownHostsFiles: ['/tmp/only'],
    });
    assert.deepEqual(flagged!.knownHostsFiles, ['/tmp/only']);
  });

  const REFUSED: [string, string, RegExp][] = [
    [
      'ProxyCommand',
      'Host x\n  ProxyCommand nc %h %p\n',
      /kdebug runs no commands from ssh config/,
    ],
    ['a ProxyJump loop', 'Host x\n  ProxyJump y\nHost y\n  ProxyJump x\n', /longer than 8 hops/],
    ['a bad HostName', 'Host x\n  HostName "a;reboot"\n', /not a host name or IP address/],
    [
      'a bad ProxyJump',
      'Host x\n  ProxyJump "-oProxyCommand=id"\n',
      /ProxyJump for x: bad SSH destination/,
    ],
  ];
  for (const [why, text, message] of REFUSED) {
    it(`refuses ${why}`, async () => {
      await assert.rejects(
        resolveRoute('x', { ...base, configFile: config(text) }),
        (e: Error) => e instanceof SshError && e.reason === 'config' && message.test(e.message),
      );
    });
  }
});
