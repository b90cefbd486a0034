// The walk through a Cilium node's frontends where Cilium 1.19's wildcard drop entry of a Service
// address (port 0, ANY: cilium/cilium#40684) is listed: a port of that address no Service uses is
// dropped by the datapath (DROP_NO_SERVICE) when it comes from outside the node, not routed on
// unchanged as before 1.19; Pods and the host look Services up east-west, which skips the entry
// (bpf/lib/lb.h lb4_lookup_service), so theirs go on unchanged. Outside: TEST-NET 192.0.2.50.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { traceCiliumPacket } from '../../../src/core/dataplane/cilium/trace.js';
import type { TracePacket } from '../../../src/core/dataplane/trace/trace.js';
import { kdebug } from '../../support/cli.js';

const HEAD = 'SERVICE ADDRESS           BACKEND ADDRESS (REVNAT_ID) (SLOT)\n';
const SERVICE =
  '10.96.15.6:80/TCP (0)     0.0.0.0:0 (7) (0) [ClusterIP, non-routable]\n' +
  '10.96.15.6:80/TCP (1)     10.0.0.58:8080/TCP (7) (1)\n';
const DROP = '10.96.15.6:0/ANY (0)      0.0.0.0:0 (0) (0) [ClusterIP, non-routable]\n';

const net = { localAddresses: ['10.0.0.5'], interfaces: [] };
const options = {
  socketLB: true,
  hostnsOnly: false,
  externalClusterIP: false,
  noBackend: 'reject' as const,
  podIPs: new Set(['10.0.0.9']),
};
const OUTSIDE = '192.0.2.50';
const POD = '10.0.0.9';
const packet = (dport: number, src: string, fromHost: boolean): TracePacket => ({
  src,
  dst: '10.96.15.6',
  dport,
  protocol: 'tcp',
  fromHost,
});
const walk = (text: string, dport: number, maps?: string, src = OUTSIDE, fromHost = false) =>
  traceCiliumPacket(parseCilium(text, 'p.txt'), net, packet(dport, src, fromHost), {
    ...options,
    ...(maps ? { maps: parseCilium(maps, 'maps.txt') } : {}),
  }).outcomes;

describe("Cilium 1.19's wildcard drop entry in the walk", () => {
  it('drops a port of the address no Service uses from outside the node, citing the entry', () => {
    const [o, ...rest] = walk(HEAD + SERVICE + DROP, 81);
    assert.equal(rest.length, 0);
    assert.equal(o!.verdict, 'DROP');
    assert.equal(o!.destination, 'DROP');
    assert.deepEqual(o!.rules, [
      {
        table: 'cilium',
        chain: 'ClusterIP 10.96.15.6:0/ANY',
        line: 4,
        rule: 'p.txt:4',
        effect:
          "no Service uses TCP port 81 of 10.96.15.6: dropped from outside the node by the address's wildcard entry (DROP_NO_SERVICE, Cilium 1.19+)",
      },
    ]);
  });

  it("finds it in the BPF maps read besides the agent's table (they alone hold it)", () => {
    const frontends =
      'Address               Type        ServiceName   PortName   Backends             Status\n' +
      '10.96.15.6:80/TCP     ClusterIP   default/web   http       10.0.0.58:8080/TCP   Done\n';
    const [o] = walk(frontends, 81, HEAD + SERVICE + DROP);
    assert.equal(o!.verdict, 'DROP');
    assert.equal(o!.rules[0]!.rule, 'maps.txt:4');
  });

  it('lets a Pod and the host reach that port unchanged: their lookup is east-west', () => {
    for (const [src, fromHost] of [
      [POD, false],
      ['10.0.0.5', true],
    ] as const) {
      const [o, ...rest] = walk(HEAD + SERVICE + DROP, 81, undefined, src, fromHost);
      assert.equal(rest.length, 0);
      assert.equal(o!.verdict, 'ACCEPT', src);
      assert.equal(o!.destination, null);
    }
  });

  it("still translates the address's Service port", () => {
    assert.deepEqual(
      walk(HEAD + SERVICE + DROP, 80, undefined, POD).map((o) => o.destination),
      ['10.0.0.58:8080'],
    );
  });

  it('without the entry (before 1.19), routes the packet on unchanged as before', () => {
    const [o] = walk(HEAD + SERVICE, 81);
    assert.equal(o!.verdict, 'ACCEPT');
    assert.equal(o!.destination, null);
    assert.equal(o!.rules[0]!.rule, 'no frontend 10.96.15.6:81/TCP in p.txt');
  });
});

describe('kdebug trace on a node whose BPF maps hold the drop entry', () => {
  it('says the drop with the entry FILE:LINE and exits 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-drop-'));
    try {
      cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
      const bpf = join(dir, 'nodes/vm-12-11-centos/cilium-bpf-lb-list.txt');
      const lines = readFileSync(bpf, 'utf8').split('\n');
      const at = lines.findIndex((l) => l.startsWith('10.1.0.10:')) + 1;
      lines.splice(
        at - 1,
        0,
        '10.1.0.10:0/ANY (0)         0.0.0.0:0 (0) (0) [ClusterIP, non-routable]',
      );
      writeFileSync(bpf, lines.join('\n'));
      const r = kdebug(
        [
          'trace',
          '--snapshot',
          dir,
          '--node',
          'vm-12-11-centos',
          '--src',
          '192.0.2.50',
          '--dst',
          '10.1.0.10:54',
        ],
        { env: { COLUMNS: '400' } },
      );
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stdout,
        /^ {3}1\. cilium ClusterIP 10\.1\.0\.10:0\/ANY \(line \d+\): no Service uses TCP port 54 of 10\.1\.0\.10: dropped from outside the node /m,
      );
      assert.match(
        r.stdout,
        new RegExp(`^ +nodes/vm-12-11-centos/cilium-bpf-lb-list\\.txt:${at}$`, 'm'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
