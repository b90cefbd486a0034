// known_hosts as OpenSSH reads it. The keys, fingerprints and hashed lines below were made by
// OpenSSH 9.2 (ssh-keygen -t ed25519 / -t rsa, ssh-keygen -lf, ssh-keygen -H).
// Hosts: nodes 192.0.2.11-13 (TEST-NET-1), node-1.example.com.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkHostKey,
  entryMatches,
  fingerprint,
  hostKeyName,
  knownHostsLine,
  knownKeyTypes,
  keyTypeOf,
  parseKnownHosts,
} from '../../../src/cluster/ssh/known-hosts.js';
import { hostKeyAlgorithms } from '../../../src/cluster/ssh/connect.js';

const K1 = 'AAAAC3NzaC1lZDI1NTE5AAAAIN0PKb7Y/khXR1i94xjitrkd0prc2FY3N5P8IZ9FKZdt'; // SHA256:/CSG8hCTsmjoHLpKZIBXmcKFJ64ncqkgTB7s0eer5aM
const K2 = 'AAAAC3NzaC1lZDI1NTE5AAAAIDXufl7QfSs+M/f7gU9IoZ+eaD/alqfPkM2By0AXJ5D/'; // SHA256:Fm+bpZP07vSD8T9jlT10QjUmqNm6Hc5H6vTCubWGRe8
const RSA =
  'AAAAB3NzaC1yc2EAAAADAQABAAAAgQCpROmDkRX5R1wh2Uamr1gAyESwBIA2AlkoZ9fRHO52Ae9tCSyjb6q1aasjpVhwKdrCk3Vr/6vKIr3UmRp6LM52+qtzI+LzNcE6/Bf7ExeAL72S+V1EmlK/LlbfQZp43DIwixtWhXmKT4Zk2dX9KW219uuy0lh9lrxNtk1vhX41Jw==';
const key = (b64: string) => Buffer.from(b64, 'base64');

// ssh-keygen -H of "node-1.example.com K1" and "[192.0.2.13]:2222 K1"
const HASHED_NODE1 = `|1|5LCiFyKZZGPpUzPouuD8/Zr+89g=|suoR/xX8rYKmdeGDwLGo+3vcaok= ssh-ed25519 ${K1}`;
const HASHED_C_2222 = `|1|zvt9BYBjxmMEAoqkjvIemIJcZGw=|gI8Du9RhwWwhx6E4KyadnB/n2jw= ssh-ed25519 ${K1}`;

const FILE = [
  '# a comment',
  '',
  `192.0.2.11 ssh-ed25519 ${K1}`,
  `192.0.2.12,node-b ssh-rsa ${RSA} root@node-b`,
  HASHED_NODE1,
  HASHED_C_2222,
  `*.lab.example,!bastion.lab.example ssh-ed25519 ${K2}`,
  `@revoked * ssh-ed25519 ${K2}`,
  `@cert-authority *.example.com ssh-ed25519 ${K1}`,
  `192.0.2.99 ssh-ed25519 ${RSA}`, // the type field lies about the key: skipped
  'garbage line',
].join('\n');

describe('known_hosts', () => {
  const entries = parseKnownHosts(FILE, '/home/me/.ssh/known_hosts');

  it('parses entries with file and line, and skips comments and malformed lines', () => {
    assert.deepEqual(
      entries.map((e) => [e.line, e.marker ?? '', e.keyType]),
      [
        [3, '', 'ssh-ed25519'],
        [4, '', 'ssh-rsa'],
        [5, '', 'ssh-ed25519'],
        [6, '', 'ssh-ed25519'],
        [7, '', 'ssh-ed25519'],
        [8, 'revoked', 'ssh-ed25519'],
        [9, 'cert-authority', 'ssh-ed25519'],
      ],
    );
  });

  const MATCHES: [string, string, boolean][] = [
    ['plain', '192.0.2.11', true],
    ['plain, other host', '192.0.2.111', false],
    ['second name of a list', 'node-b', true],
    ['case-insensitive', 'NODE-B', true],
    ['hashed', 'node-1.example.com', true],
    ['hashed, other host', 'node-2.example.com', false],
    ['hashed [host]:port', '[192.0.2.13]:2222', true],
    ['hashed host without its port', '192.0.2.13', false],
    ['wildcard', 'node-7.lab.example', true],
    ['negated pattern wins', 'bastion.lab.example', false],
  ];
  for (const [why, name, expected] of MATCHES) {
    it(`matches ${why}: ${name}`, () =>
      assert.equal(
        entries.some((e) => e.marker === undefined && entryMatches(e, name)),
        expected,
      ));
  }

  const CHECKS: [string, string, number, string, string][] = [
    ['the known key', '192.0.2.11', 22, K1, 'known'],
    ['a hashed host', 'node-1.example.com', 22, K1, 'known'],
    ['a non-22 port', '192.0.2.13', 2222, K1, 'known'],
    ['the same host on port 22 is another entry', '192.0.2.13', 22, K1, 'unknown'],
    ['a @revoked key offered for a known host', '192.0.2.11', 22, K2, 'revoked'],
    ['a host never seen', '192.0.2.50', 22, K1, 'unknown'],
    ['a revoked key, even for a known host pattern', 'node-7.lab.example', 22, K2, 'revoked'],
    ['a cert-authority line is not a host key', 'ca.example.com', 22, K1, 'unknown'],
  ];
  for (const [why, host, port, b64, status] of CHECKS) {
    it(`check: ${why}`, () =>
      assert.equal(checkHostKey(entries, host, port, key(b64)).status, status));
  }

  it('reports a changed key with the entries that hold the old one', () => {
    const mine = parseKnownHosts(`192.0.2.11 ssh-ed25519 ${K1}\n`, 'kh');
    const check = checkHostKey(mine, '192.0.2.11', 22, key(K2));
    assert.equal(check.status, 'changed');
    assert.deepEqual(
      check.status === 'changed' && check.entries.map((e) => `${e.file}:${e.line}`),
      ['kh:1'],
    );
  });

  it('reports an unknown key type for a host known by another type', () => {
    const check = checkHostKey(entries, 'node-b', 22, key(K1));
    assert.deepEqual(check, { status: 'unknown', otherTypes: ['ssh-rsa'] });
    assert.deepEqual(knownKeyTypes(entries, 'node-b', 22), ['ssh-rsa']);
    assert.deepEqual(hostKeyAlgorithms(['ssh-rsa']).slice(0, 4), [
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
      'ssh-ed25519',
    ]);
    assert.equal(hostKeyAlgorithms([])[0], 'ssh-ed25519');
  });

  it("prints OpenSSH's fingerprints and the line to add", () => {
    assert.equal(fingerprint(key(K1)), 'SHA256:/CSG8hCTsmjoHLpKZIBXmcKFJ64ncqkgTB7s0eer5aM');
    assert.equal(fingerprint(key(K2)), 'SHA256:Fm+bpZP07vSD8T9jlT10QjUmqNm6Hc5H6vTCubWGRe8');
    assert.equal(fingerprint(key(RSA)), 'SHA256:oxaok3KZmPc3Cx5QqWgb+Mek8MJpJ6orCfJYeQ7R18E');
    assert.equal(knownHostsLine('192.0.2.11', 22, key(K1)), `192.0.2.11 ssh-ed25519 ${K1}`);
    assert.equal(
      knownHostsLine('192.0.2.13', 2222, key(K1)),
      `[192.0.2.13]:2222 ssh-ed25519 ${K1}`,
    );
    // the printed line is itself read back as the known key
    const added = parseKnownHosts(knownHostsLine('192.0.2.13', 2222, key(K2)));
    assert.equal(checkHostKey(added, '192.0.2.13', 2222, key(K2)).status, 'known');
  });

  it('names hosts as ssh does and reads key types from blobs', () => {
    assert.equal(hostKeyName('Node-A', 22), 'node-a');
    assert.equal(hostKeyName('fd00::1', 2222), '[fd00::1]:2222');
    assert.equal(keyTypeOf(key(RSA)), 'ssh-rsa');
    assert.equal(keyTypeOf(Buffer.from([0, 0])), '');
  });
});
