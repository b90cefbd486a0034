// Each form Cilium's listings take from 1.14 to 1.20, as the release's own printer writes it
// (test/fixtures/cilium/releases, made from the source's format strings at each tag; README.md
// there says which), read into what a person reads in it: these readings are written by hand.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseCilium, withBackendStates } from '../../../src/core/dataplane/cilium/read/read.js';
import {
  formatAddress,
  frontendKey,
  type CiliumTable,
} from '../../../src/core/dataplane/cilium/read/listing.js';
import { ciliumDrift } from '../../../src/core/dataplane/cilium/drift.js';
import type { ExpectedFrontend } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { fromStatus } from '../../../src/core/dataplane/cilium/agent/status.js';

const DIR = new URL('../../fixtures/cilium/releases/', import.meta.url).pathname;
const read = (file: string) => parseCilium(readFileSync(`${DIR}${file}`, 'utf8'), file);

/** Each frontend as "KEY TYPE -> BACKEND (state), ...". */
const rows = (t: CiliumTable) =>
  t.frontends.map(
    (f) =>
      `${frontendKey(f)} ${f.type ?? '?'} -> ${f.backends
        .map((b) => `${formatAddress(b)}${b.state ? ` (${b.state})` : ''}`)
        .join(', ')}`,
  );

describe('cilium service list, at each release', () => {
  it('1.14 to 1.16: no protocol, /i for the internal scope, (preferred) and (Remote)', () => {
    const t = read('service-list-v1.14-v1.16.txt');
    assert.deepEqual(rows(t), [
      '10.96.0.1:443 ClusterIP -> 192.168.1.10:6443 (active)',
      '10.96.0.10:53 ClusterIP -> 10.244.0.2:53 (active), 10.244.1.3:53 (terminating)',
      '10.96.0.50:80 ClusterIP -> 10.244.0.5:8080 (active), 10.244.1.6:8080 (quarantined), 10.244.1.7:8080 (maintenance)',
      '0.0.0.0:30080 NodePort -> 10.244.0.5:8080 (active), 10.244.1.6:8080 (quarantined), 10.244.1.7:8080 (maintenance)',
      '192.168.1.10:30080 NodePort -> 10.244.0.5:8080 (active), 10.244.1.6:8080 (quarantined), 10.244.1.7:8080 (maintenance)',
      '0.0.0.0:30080/i NodePort -> 10.244.0.5:8080 (active)',
      '10.96.0.60:80 ClusterIP -> ',
      '172.18.0.100:80 LoadBalancer -> 10.245.0.9:80 (active)',
    ]);
    assert.deepEqual(t.frontends.at(-1)!.flags, ['remote']);
    assert.equal(t.frontends.at(-1)!.backends[0]!.preferred, true);
    assert.equal(t.cut, undefined);
  });

  it('1.17 to 1.20: with protocols; terminating-not-serving (1.18 on)', () => {
    const t = read('service-list-v1.17-v1.20.txt');
    assert.deepEqual(rows(t), [
      '10.96.0.1:443/TCP ClusterIP -> 192.168.1.10:6443/TCP (active)',
      '10.96.0.10:53/UDP ClusterIP -> 10.244.0.2:53/UDP (active), 10.244.1.3:53/UDP (terminating)',
      '10.96.0.50:80/TCP ClusterIP -> 10.244.0.5:8080/TCP (active), 10.244.1.6:8080/TCP (terminating-not-serving), 10.244.1.7:8080/TCP (maintenance)',
      '0.0.0.0:30080/TCP NodePort -> 10.244.0.5:8080/TCP (active), 10.244.1.6:8080/TCP (terminating-not-serving), 10.244.1.7:8080/TCP (maintenance)',
      '0.0.0.0:30080/TCP/i NodePort -> 10.244.0.5:8080/TCP (active)',
      '10.96.0.60:80/TCP ClusterIP -> ',
      '[fd00::10]:53/UDP ClusterIP -> [fd00:10:244::2]:53/UDP (active)',
    ]);
  });
});

describe('cilium bpf lb list, at each release (a row per map entry, in Go map order)', () => {
  /** Each frontend with its type, flags and backends in slot order. */
  const entries = (t: CiliumTable) =>
    Object.fromEntries(
      t.frontends.map((f) => [
        frontendKey(f),
        `${[f.type ?? '?', ...f.flags].join('+')} -> ${f.backends.map((b) => formatAddress(b)).join(', ')}`,
      ]),
    );
  it('1.14 to 1.16: no protocols; the L7 proxy port', () => {
    const t = read('bpf-lb-list-v1.14-v1.16.txt');
    assert.deepEqual(entries(t), {
      '10.96.0.10:53': 'ClusterIP+non-routable -> 10.244.0.2:53, 10.244.1.3:53',
      '10.96.0.50:80': 'ClusterIP+non-routable -> 10.244.1.6:8080, 10.244.0.5:8080',
      '192.168.1.10:30080': 'NodePort+Local+two-scopes -> 10.244.0.5:8080',
      '172.18.0.100:80': 'LoadBalancer+check source-range -> ',
      '10.96.0.60:80': 'ClusterIP+non-routable -> ',
    });
    assert.equal(
      t.frontends.find((f) => f.port === 80 && f.ip === '172.18.0.100')?.l7Proxy?.port,
      10000,
    );
  });
  it('1.17 to 1.20: protocols on the key and each backend; deny, dsr', () => {
    const t = read('bpf-lb-list-v1.17-v1.20.txt');
    assert.deepEqual(entries(t), {
      '10.96.0.10:53/UDP': 'ClusterIP+non-routable -> 10.244.0.2:53/UDP, 10.244.1.3:53/UDP',
      '10.96.0.50:80/TCP': 'ClusterIP+non-routable -> 10.244.1.6:8080/TCP, 10.244.0.5:8080/TCP',
      '192.168.1.10:30080/TCP': 'NodePort+Local+two-scopes+dsr -> 10.244.0.5:8080/TCP',
      '172.18.0.100:80/TCP': 'LoadBalancer+check source-range+deny -> 10.244.0.5:8080/TCP',
      '10.96.0.60:80/TCP': 'ClusterIP+non-routable -> ',
    });
  });
});

describe('db/show frontends and backends, at each release', () => {
  it('1.17: each backend with its state; a failed reconcile says its Error', () => {
    const t = read('db-frontends-v1.17.txt');
    assert.deepEqual(rows(t), [
      '10.96.0.10:53/UDP ClusterIP -> 10.244.0.2:53/UDP (active), 10.244.1.3:53/UDP (terminating)',
      '10.96.0.50:80/TCP ClusterIP -> 10.244.0.5:8080/TCP (active), 10.244.1.6:8080/TCP (quarantined)',
      '10.96.0.60:80/TCP ClusterIP -> ',
      '0.0.0.0:30080/TCP NodePort -> 10.244.0.5:8080/TCP (active), 10.244.1.6:8080/TCP (quarantined)',
    ]);
    assert.deepEqual(
      t.frontends.map((f) => f.status),
      ['Done', 'Done', 'Pending', 'Error: update failed: map full'],
    );
    const states = read('db-backends-v1.17.txt').backendStates!;
    assert.equal(states.get('10.244.1.3:53/UDP'), 'terminating');
    assert.equal(states.get('10.244.1.6:8080/TCP'), 'quarantined');
  });

  it('1.18 on: RedirectTo read; five backends and "+ N more" said not all shown', () => {
    const t = read('db-frontends-v1.18-v1.20.txt');
    const by = new Map(t.frontends.map((f) => [frontendKey(f), f]));
    assert.equal(
      by.get('10.96.0.10:53/UDP')?.redirectTo,
      'kube-system/nodelocaldns:local-redirect',
    );
    assert.equal(by.get('10.96.0.50:80/TCP')?.redirectTo, undefined);
    assert.equal(by.get('10.96.0.70:80/TCP')?.backends.length, 5);
    assert.equal(by.get('10.96.0.70:80/TCP')?.backendsNotShown, 2);
    assert.equal(by.get('169.254.20.10:53/UDP')?.type, 'LocalRedirect');
    assert.equal(by.get('10.96.0.60:80/TCP')?.status, 'Pending');
  });

  // before: one state per address, the first instance's mark (1.18, 1.19.0) or the last row's
  // (1.19.7, 1.20): web's active backend read as web-canary's terminating-not-serving
  for (const backends of ['db-backends-v1.18-v1.19.6.txt', 'db-backends-v1.19.7-v1.20.txt'])
    it(`${backends}: a backend shared by two Services in a state of its own in each`, () => {
      const t = withBackendStates(
        read('db-frontends-v1.18-v1.20.txt'),
        read(backends).backendStates!,
      );
      const of = (key: string) =>
        t.frontends
          .find((f) => frontendKey(f) === key)!
          .backends.map((b) => `${formatAddress(b)} ${b.state}`);
      assert.deepEqual(of('10.96.0.50:80/TCP'), [
        '10.244.0.5:8080/TCP active',
        '10.244.1.6:8080/TCP quarantined',
      ]);
      assert.deepEqual(of('10.96.0.80:80/TCP'), ['10.244.0.5:8080/TCP terminating-not-serving']);
    });

  // before: the policy's backend read as stale for kube-dns, its Pods as missing
  it("a frontend a local redirect policy takes: its backends not compared with the Service's", () => {
    const t = read('db-frontends-v1.18-v1.20.txt');
    const want: ExpectedFrontend = {
      ip: '10.96.0.10',
      port: 53,
      protocol: 'udp',
      type: 'ClusterIP',
      service: 'kube-system/kube-dns',
      portName: 'dns',
      servicePort: 53,
      localOnly: false,
      backends: [
        { ip: '10.244.0.2', port: 53, protocol: 'udp', state: 'active' },
        { ip: '10.244.1.3', port: 53, protocol: 'udp', state: 'terminating' },
      ],
    } as unknown as ExpectedFrontend;
    const d = ciliumDrift({
      node: 'node-a',
      expected: [want],
      table: t,
      services: ['kube-system/kube-dns'],
      listed: { kind: 'none' },
      scoped: true,
    });
    assert.deepEqual(
      d.findings.filter((f) => !f.info).map((f) => f.id),
      [],
    );
    const note = d.notes?.find((n) => n.id === 'cilium-local-redirect');
    assert.match(
      note?.title ?? '',
      /^10\.96\.0\.10:53\/UDP is redirected by Local Redirect Policy kube-system\/nodelocaldns:local-redirect to /,
    );
  });
});

describe('cilium-dbg status --verbose, at each release', () => {
  it('1.14: Strict, DSR, Maglev with its table size, Hostns-only', () => {
    const s = fromStatus(readFileSync(`${DIR}status-v1.14.txt`, 'utf8'));
    assert.deepEqual(
      {
        kpr: s.kubeProxyReplacement,
        socketLB: s.socketLB,
        hostnsOnly: s.hostnsOnly,
        forwarding: s.forwarding,
        algorithm: s.algorithm,
        affinity: s.sessionAffinity,
        range: s.nodePortRange,
        version: s.version,
      },
      {
        kpr: true,
        socketLB: true,
        hostnsOnly: true,
        forwarding: 'dsr',
        algorithm: 'maglev',
        affinity: true,
        range: [30000, 32767],
        version: 'v1.14.19',
      },
    );
  });
  it('1.16 to 1.20: True, Hybrid (its DSR dispatch mode under it not taken for the mode)', () => {
    const s = fromStatus(readFileSync(`${DIR}status-v1.16-v1.20.txt`, 'utf8'));
    assert.equal(s.kubeProxyReplacement, true);
    assert.equal(s.hostnsOnly, false);
    assert.equal(s.forwarding, 'hybrid');
    assert.equal(s.algorithm, 'random');
    assert.equal(s.version, 'v1.20.2');
    assert.deepEqual(s.podCIDRs, ['10.244.1.0/24']);
  });
});
