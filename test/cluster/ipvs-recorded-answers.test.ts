// One Service's IPVS reads by address, as a real kernel answered them (test/fixtures/ipvs-live,
// recorded by test/support/ipvs-vm/record.sh): ipvsadm -Ln of one address lists that virtual
// server, or says "No such service" (exit 1), which is no virtual server there, observed, not a
// failed read; ipset test says whether the set holds the entry, on stderr with exit 0 or 1, or
// that the set does not exist. The expectations are record.sh's configuration.
// IP conventions: Services 10.96.0.0/16 and fd00:10:96::/112, Pods 10.244.0.0/16, the node
// 192.168.0.10.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { recordedAnswer } from '../../src/cluster/collect/service-ipvs.js';
import type { NodeCommand, NodeResult } from '../../src/cluster/cluster.js';
import { typedCommand } from '../../src/cluster/nodes/commands.js';
import {
  ipsetAnswer,
  virtualServerAt,
  type IpsetAnswer,
} from '../../src/core/dataplane/ipvs/read/by-address.js';

const DIR = 'test/fixtures/ipvs-live';

/** What the kernel answered to the recording `name`: stdout, stderr, exit code. */
function recorded(name: string): NodeResult {
  const at = (ext: string) =>
    existsSync(`${DIR}/${name}.${ext}`) ? readFileSync(`${DIR}/${name}.${ext}`, 'utf8') : '';
  return { stdout: at('txt'), stderr: at('stderr'), exitCode: Number(at('rc') || 0), via: 'vm' };
}

/** The command record.sh ran for `name`, as index.tsv names it. */
function commandOf(name: string): string {
  const row = readFileSync(`${DIR}/index.tsv`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}\t`));
  return row!.split('\t')[1]!;
}

type Read = Extract<NodeCommand, { kind: 'ipvs-service' }>;
const vs = (protocol: Read['protocol'], ip: string, port: number): Read => ({
  kind: 'ipvs-service',
  protocol,
  ip,
  port,
});

// recording, the read kdebug makes, what is there (undefined: none), its real servers
const SERVERS: [string, Read, string | undefined, number][] = [
  ['ipvsadm-Ln-t-cluster-ip', vs('tcp', '10.96.0.30', 80), 'tcp 10.96.0.30:80', 3],
  ['ipvsadm-Ln-t-persistent', vs('tcp', '10.96.0.20', 443), 'tcp 10.96.0.20:443', 2],
  ['ipvsadm-Ln-u-dns', vs('udp', '10.96.0.10', 53), 'udp 10.96.0.10:53', 2],
  ['ipvsadm-Ln-t-ipv6', vs('tcp', 'fd00:10:96::a', 80), 'tcp [fd00:10:96::a]:80', 2],
  ['ipvsadm-Ln-t-node-port', vs('tcp', '192.168.0.10', 30080), 'tcp 192.168.0.10:30080', 2],
  ['ipvsadm-Ln-sctp', vs('sctp', '10.96.0.70', 9999), 'sctp 10.96.0.70:9999', 1],
  ['ipvsadm-Ln-t-missing', vs('tcp', '10.96.0.99', 80), undefined, 0],
  ['ipvsadm-Ln-u-missing', vs('udp', '10.96.0.30', 80), undefined, 0],
  ['ipvsadm-Ln-sctp-missing', vs('sctp', '10.96.0.70', 9998), undefined, 0],
  ['ipvsadm-Ln-t-ipv6-missing', vs('tcp', 'fd00:10:96::b', 80), undefined, 0],
];

type Test = Extract<NodeCommand, { kind: 'ipset-test' }>;
const test = (set: string, entry: string): Test => ({ kind: 'ipset-test', set, entry });

// recording, the test kdebug makes, ipset's answer
const TESTS: [string, Test, IpsetAnswer][] = [
  ['ipset-test-cluster-ip', test('KUBE-CLUSTER-IP', '10.96.0.30,tcp:80'), 'held'],
  ['ipset-test-cluster-ip-missing', test('KUBE-CLUSTER-IP', '10.96.0.99,tcp:80'), 'not-held'],
  ['ipset-test-loop-back', test('KUBE-LOOP-BACK', '10.244.1.4,tcp:8080,10.244.1.4'), 'held'],
  [
    'ipset-test-loop-back-missing',
    test('KUBE-LOOP-BACK', '10.244.3.6,tcp:8080,10.244.3.6'),
    'not-held',
  ],
  ['ipset-test-node-port', test('KUBE-NODE-PORT-TCP', '30080'), 'held'],
  ['ipset-test-node-port-missing', test('KUBE-NODE-PORT-TCP', '30081'), 'not-held'],
  ['ipset-test-ipvs-ips', test('KUBE-IPVS-IPS', '10.96.0.30'), 'held'],
  ['ipset-test-ipv6', test('KUBE-6-CLUSTER-IP', 'fd00:10:96::a,tcp:80'), 'held'],
  ['ipset-test-no-set', test('KUBE-LOAD-BALANCER', '10.96.0.30,tcp:80'), 'no-set'],
  [
    'ipset-test-source-cidr',
    test('KUBE-LOAD-BALANCER-SOURCE-CIDR', '10.96.0.80,tcp:80,203.0.113.0/24'),
    'held',
  ],
  // a net inside the one held is not it: the entry is tested as written
  [
    'ipset-test-source-cidr-narrower',
    test('KUBE-LOAD-BALANCER-SOURCE-CIDR', '10.96.0.80,tcp:80,203.0.113.0/25'),
    'not-held',
  ],
];

describe('ipvsadm -Ln of one address on a real kernel, as kdebug records and reads it', () => {
  for (const [name, command, there, realServers] of SERVERS)
    it(`${name}: ${there ?? 'none there, observed'}`, () => {
      assert.equal(typedCommand(command).join(' '), commandOf(name).replace(/'/g, ''));
      const r = recordedAnswer(command, recorded(name));
      assert.equal(r.exitCode, 0, 'a read, not a failure');
      const got = virtualServerAt(r.stdout, command, `${name}.txt`);
      assert.ok(!('unclear' in got), JSON.stringify(got));
      const s = 'service' in got ? got.service : undefined;
      assert.equal(s && `${s.protocol} ${s.address}`, there);
      assert.equal(s?.realServers.length ?? 0, realServers);
    });

  it('a listing of another virtual server, or of all of them, cannot stand for the one asked', () => {
    const asked = { protocol: 'tcp', ip: '10.96.0.30', port: 80 } as const;
    for (const other of ['ipvsadm-Ln-t-persistent', 'ipvsadm-Ln', 'ipvsadm-Ln-stats', 'ipvsadm-L'])
      assert.ok('unclear' in virtualServerAt(recorded(other).stdout, asked, other), other);
    // the same address under another protocol is another virtual server
    const udp = { ...asked, protocol: 'udp' } as const;
    assert.ok('unclear' in virtualServerAt(recorded('ipvsadm-Ln-t-cluster-ip').stdout, udp, 'x'));
  });

  it('a failure that is not "No such service" stays a failure', () => {
    const c = vs('tcp', '10.96.0.30', 80);
    const denied = {
      stdout: '',
      stderr: "Can't initialize ipvs: Permission denied (you must be root?)\n",
      exitCode: 1,
      via: 'x',
    };
    assert.equal(recordedAnswer(c, denied).exitCode, 1);
  });
});

describe('ipset test on a real kernel, as kdebug records and reads it', () => {
  for (const [name, command, answer] of TESTS)
    it(`${name}: ${answer}`, () => {
      assert.equal(typedCommand(command).join(' '), commandOf(name));
      const r = recordedAnswer(command, recorded(name));
      assert.equal(r.exitCode, 0, 'an answer, not a failure');
      assert.equal(ipsetAnswer(r.stdout, command.set), answer);
      // ipset's own words are the record
      assert.equal(r.stdout, recorded(name).stderr);
    });

  it('an error that is not one of its answers stays a failure', () => {
    const c: NodeCommand = {
      kind: 'ipset-test',
      set: 'KUBE-CLUSTER-IP',
      entry: '10.96.0.30,tcp:80',
    };
    const syntax = {
      stdout: '',
      stderr:
        'ipset v7.17: Syntax error: cannot parse fd00:10:96::a: resolving to IPv4 address failed\n',
      exitCode: 1,
      via: 'x',
    };
    assert.equal(recordedAnswer(c, syntax).exitCode, 1);
    assert.equal(ipsetAnswer(syntax.stderr, 'KUBE-CLUSTER-IP'), undefined);
    // another set's answer is not this test's
    const other = recorded('ipset-test-node-port').stderr;
    assert.equal(ipsetAnswer(other, 'KUBE-NODE-PORT-LOCAL-TCP'), undefined);
    assert.equal(
      recordedAnswer(test('KUBE-NODE-PORT-LOCAL-TCP', '30080'), recorded('ipset-test-node-port'))
        .stdout,
      '',
    );
  });
});
