// One packet walked through kube-proxy's nftables table: the table kube-proxy should write for the
// objects of its TestOverallNFTablesRules, read as a script and (from the real nft) as JSON and
// as text. Each packet's outcomes are what that table does: DNAT with its shares, the ping to a
// ClusterIP rejected in cluster-ips-check, an unallocated ClusterIP dropped, a Service without
// endpoints rejected, a node port masqueraded, a hairpin, a load-balancer source range.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { type NftTable } from '../../src/core/dataplane/nftables/read/listing.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { traceNftPacket } from '../../src/core/dataplane/nftables/trace.js';
import type { TracePacket } from '../../src/core/dataplane/trace/trace.js';
import { NODE, objects } from '../support/nft-overall.js';
import { hasCommand, skipWithout } from '../support/skip.js';

const view = clusterView(objects);
const script = expectedNftScript(expectedRules(view, NODE), serviceCIDRs(view)).join('\n') + '\n';
const net = {
  // the node's IP and its Pod bridge
  localAddresses: ['192.168.0.2', '10.180.0.254'],
  interfaces: [
    { name: 'eth0', cidrs: ['192.168.0.2/24'] },
    { name: 'cni0', cidrs: ['10.180.0.254/24'] },
  ],
  defaultInterface: 'eth0',
};

const pkt = (src: string, dst: string, dport: number | undefined, o: Partial<TracePacket> = {}) =>
  ({ src, dst, dport, protocol: 'tcp', fromHost: false, ...o }) as TracePacket;

/** Each outcome in one line: chance, verdict, destination, masquerade. */
const walk = (t: NftTable, p: TracePacket) =>
  traceNftPacket(t, net, p)
    .outcomes.map(
      (o) =>
        `${Math.round(o.probability * 100)}% ${o.verdict}${o.dnat ? ` ${o.dnat}` : ''}${o.masquerade ? ' masquerade' : ''}`,
    )
    .sort();

const CASES: [string, TracePacket, string[]][] = [
  ['a Pod to a ClusterIP', pkt('10.180.0.99', '172.30.0.41', 80), ['100% ACCEPT 10.180.0.1:80']],
  [
    'a Pod to a ClusterIP with two endpoints: half each',
    pkt('10.180.0.99', '172.30.0.44', 80),
    ['50% ACCEPT 10.180.0.4:80', '50% ACCEPT 10.180.0.5:80'],
  ],
  [
    'one of those endpoints to its own Service: masqueraded when it picks itself',
    pkt('10.180.0.5', '172.30.0.44', 80),
    ['50% ACCEPT 10.180.0.4:80', '50% ACCEPT 10.180.0.5:80 masquerade'],
  ],
  [
    'a ping to a ClusterIP: rejected by cluster-ips-check',
    pkt('10.180.0.99', '172.30.0.41', undefined, { protocol: 'icmp' }),
    ['100% REJECT'],
  ],
  [
    'another port of a ClusterIP: rejected too',
    pkt('10.180.0.5', '172.30.0.41', 8080),
    ['100% REJECT'],
  ],
  ['an unallocated ClusterIP: dropped', pkt('10.180.0.5', '172.30.9.9', 80), ['100% DROP']],
  ['a Service without endpoints: rejected', pkt('10.180.0.5', '172.30.0.46', 80), ['100% REJECT']],
  [
    'a node port from outside: masqueraded',
    pkt('203.0.113.50', '192.168.0.2', 3003),
    ['100% ACCEPT 10.180.0.3:80 masquerade'],
  ],
  [
    'an endpoint to its own Service: hairpin masquerade',
    pkt('10.180.0.1', '172.30.0.41', 80),
    ['100% ACCEPT 10.180.0.1:80 masquerade'],
  ],
  [
    'a load-balancer IP from outside its source ranges: dropped',
    pkt('198.51.100.1', '5.6.7.8', 80),
    ['100% DROP'],
  ],
  [
    'a load-balancer IP from its source range: through affinity to the endpoint',
    pkt('203.0.113.5', '5.6.7.8', 80),
    ['100% ACCEPT 10.180.0.3:80 masquerade'],
  ],
  [
    'a process on the node to a ClusterIP: not from the Pod CIDR, masqueraded',
    pkt('192.168.0.2', '172.30.0.41', 80, { fromHost: true }),
    ['100% ACCEPT 10.180.0.1:80 masquerade'],
  ],
];

describe('the nftables packet walk', () => {
  const table = parseNftScript(script).tables[0]!;
  for (const [what, p, want] of CASES)
    it(what, () => {
      assert.deepEqual(walk(table, p), want);
    });

  it('says each rule it went through, hook by hook, lowest priority first', () => {
    const r = traceNftPacket(
      table,
      net,
      pkt('10.180.0.99', '172.30.0.41', undefined, { protocol: 'icmp' }),
    );
    const o = r.outcomes[0]!;
    assert.deepEqual(
      o.rules.map((x) => `${x.chain}:${x.line} ${x.effect}`),
      [
        'filter-prerouting-pre-dnat:1 jump firewall-check',
        'nat-prerouting:1 jump services',
        'filter-forward:1 jump service-endpoints-check',
        'filter-forward:2 jump cluster-ips-check',
        'cluster-ips-check:1 reject',
      ],
    );
    assert.equal(o.rules[4]!.rule, 'ip daddr @cluster-ips reject');
    assert.equal(o.rules[4]!.table, 'ip kube-proxy');
  });

  it('notes that an affinity set holds no client yet', () => {
    const o = traceNftPacket(table, net, pkt('203.0.113.5', '5.6.7.8', 80)).outcomes[0]!;
    assert.ok(o.assumptions.some((a) => /a new client: not yet in affinity-/.test(a)));
  });
});

const why =
  hasCommand('nft') && hasCommand('unshare') ? '' : 'nft and unshare (nftables, util-linux)';
describe('the nftables packet walk on what the real nft lists', skipWithout(why), () => {
  const listed = (args: string) => {
    const r = spawnSync('unshare', ['-n', 'sh', '-c', `nft -f - && nft ${args}`], {
      input: script,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  const forms: [string, () => NftTable][] = [
    ['JSON', () => parseNftJson(listed('-j list table ip kube-proxy')).tables[0]!],
    ['text', () => parseNftText(listed('list table ip kube-proxy')).tables[0]!],
  ];
  for (const [form, read] of forms)
    it(`walks the ${form} listing as it walks the script`, () => {
      const t = read();
      for (const [what, p, want] of CASES) assert.deepEqual(walk(t, p), want, `${form}: ${what}`);
    });
});

describe('numgen random mod N with a huge N', () => {
  const N = 4000000000;
  const table = parseNftScript(
    script
      .replace('numgen random mod 2 map', `numgen random mod ${N} map`)
      .replace('numgen random mod 1 vmap', `numgen random mod ${N} vmap`),
  ).tables[0]!;
  const timed = (p: TracePacket) => {
    const start = Date.now();
    const r = traceNftPacket(table, net, p);
    assert.ok(Date.now() - start < 2000, `${Date.now() - start} ms`);
    return r.outcomes;
  };

  it('reads a DNAT map by the elements it holds, the rest one untranslated share', () => {
    const outcomes = timed(pkt('10.180.0.99', '172.30.0.44', 80));
    const to = (ip: string) => outcomes.find((o) => o.dnat === `${ip}:80`)?.probability;
    assert.equal(to('10.180.0.4'), 1 / N);
    assert.equal(to('10.180.0.5'), 1 / N);
    assert.ok(
      outcomes.some((o) =>
        o.assumptions.some((a) =>
          a.includes(`${N - 2} of its ${N} shares have no element in the map`),
        ),
      ),
    );
  });

  it('reads a vmap by the elements it holds, the rest mapping to nothing', () => {
    const outcomes = timed(pkt('10.180.0.99', '172.30.0.45', 80));
    const hit = outcomes.find((o) => o.dnat === '10.180.0.3:80');
    assert.ok(hit && Math.abs(hit.probability - 1 / N) < 1e-15);
    assert.ok(
      outcomes.some((o) =>
        o.assumptions.some((a) =>
          a.includes(`${N - 1} of its ${N} shares have no element in the map`),
        ),
      ),
    );
  });
});
