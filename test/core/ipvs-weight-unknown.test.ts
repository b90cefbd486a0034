// A real server whose weight the listing does not hold (--stats, --rate, a row pasted without its
// columns): the walk states no share and writes no -w, and drift says neither draining nor not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipvsDrift } from '../../src/core/dataplane/ipvs/drift/drift.js';
import { expectedIpvs } from '../../src/core/dataplane/ipvs/expected/expected.js';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { traceIpvsPacket } from '../../src/core/dataplane/ipvs/trace/trace.js';
import { traceDoc } from '../../src/output/trace.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { aNode, aService, anEndpointSlice } from '../support/builders.js';

const BARE = 'TCP  10.96.0.50:80 rr\n  -> 10.244.1.6:80\n  -> 10.244.1.7:80\n';
const NET = { localAddresses: ['192.0.2.11'], interfaces: [] };
const PACKET = {
  src: '10.244.0.9',
  dst: '10.96.0.50',
  dport: 80,
  protocol: 'tcp',
  fromHost: false,
} as const;
const walk = (text: string) =>
  traceIpvsPacket({ table: parseIpvs(text) }, NET, PACKET, { masqueradeAll: false });

describe('IPVS: a real server weight not in the listing', () => {
  it('the walk states no share and no -w for rows pasted without their columns', () => {
    const r = walk(BARE);
    assert.deepEqual(
      r.outcomes.map((o) => [o.destination, o.shareUnknown]),
      [
        ['10.244.1.6:80', 'weight not in the listing'],
        ['10.244.1.7:80', 'weight not in the listing'],
      ],
    );
    const rules = r.outcomes.flatMap((o) => o.rules.map((m) => m.rule));
    // nor a forwarding flag: the rows do not show the method
    assert.ok(rules.includes('-a -t 10.96.0.50:80 -r 10.244.1.6:80'), rules.join('\n'));
    assert.ok(!rules.some((l) => /-w/.test(l)), rules.join('\n'));
  });

  it('trace -o json: a share not known is null, not 0, with why beside it', () => {
    const result = walk(BARE);
    const doc = traceDoc({ result, node: 'node-a', stale: [], blocked: false, unanswered: false });
    assert.deepEqual(
      doc.outcomes.map((o) => [o.probability, o.shareUnknown]),
      [
        [null, 'weight not in the listing'],
        [null, 'weight not in the listing'],
      ],
    );
    const known = walk('TCP  10.96.0.50:80 rr\n  -> 10.244.1.6:80  Masq  1  0  0\n');
    const one = traceDoc({
      result: known,
      node: 'node-a',
      stale: [],
      blocked: false,
      unanswered: false,
    });
    assert.deepEqual(
      one.outcomes.map((o) => o.probability),
      [1],
    );
  });

  it('a lone real server without its columns: its share not known either (at weight 0 none)', () => {
    const [o, ...more] = walk('TCP  10.96.0.50:80 rr\n  -> 10.244.1.6:80\n').outcomes;
    assert.equal(more.length, 0);
    assert.equal(o!.shareUnknown, 'weight not in the listing');
    assert.match(o!.rules[1]!.effect, /^one real server, its share not known/);
  });

  it('weights listed: wrr shares by weight, rr one each whatever the weight, lc none; -w as listed', () => {
    const walkWith = (scheduler: string) =>
      walk(
        `TCP  10.96.0.50:80 ${scheduler}\n  -> 10.244.1.6:80  Masq  3  0  0\n  -> 10.244.1.7:80  Masq  1  0  0\n`,
      ).outcomes.map((o) => [o.probability, o.shareUnknown]);
    assert.deepEqual(walkWith('wrr'), [
      [0.75, undefined],
      [0.25, undefined],
    ]);
    // ip_vs_rr.c goes round every real server of weight above 0, one connection each
    assert.deepEqual(walkWith('rr'), [
      [0.5, undefined],
      [0.5, undefined],
    ]);
    const lc = walkWith('lc');
    assert.deepEqual(
      lc.map(([p]) => p),
      [0, 0],
    );
    assert.match(
      String(lc[0]![1]),
      /^scheduler lc picks the real server by the fewest connections: no fixed share$/,
    );
    const r = walk(
      'TCP  10.96.0.50:80 wrr\n  -> 10.244.1.6:80  Masq  3  0  0\n  -> 10.244.1.7:80  Masq  1  0  0\n',
    );
    assert.equal(r.outcomes[0]!.rules.at(-1)!.rule, '-a -t 10.96.0.50:80 -r 10.244.1.6:80 -m -w 3');
    assert.match(r.outcomes[0]!.rules[1]!.effect, /^75% branch/);
  });

  it('drift: a real server no longer an endpoint, weight unknown, is neither drained nor taken', () => {
    const view = clusterView([
      aNode('node-a', '192.0.2.11', '10.244.0.0/24'),
      aService('shop/web', { clusterIP: '10.96.0.50', ports: [['http', 80, 'TCP']] }),
      anEndpointSlice('shop/web', ['10.244.1.6'], [['http', 80]]),
    ]);
    const d = ipvsDrift({
      node: 'node-a',
      source: 's',
      expected: expectedIpvs(expectedRules(view, 'node-a')),
      table: parseIpvs(BARE),
      localEndpoints: new Set(),
      scoped: true,
      listed: { kind: 'none' },
    });
    assert.deepEqual(
      d.findings.map((f) => f.title),
      [],
    );
    assert.deepEqual(
      d.notes?.map((n) => n.title),
      ['10.96.0.50:80: 10.244.1.7:80 is no longer an endpoint, its weight not in the listing'],
    );
    assert.doesNotMatch(JSON.stringify(d), /undefined|draining \(weight 0\)/);
  });
});
