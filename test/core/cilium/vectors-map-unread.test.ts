// A maps dump that lacks one map whole (a grep, a paste in part) against the same map read: an
// empty map prints no line, so a map the dump's own entries refer to and holds no line of is not
// read, said as such, and nothing is said to be missing from it; where the map is read, a missing
// entry is drift as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CiliumMapKind } from '../../../src/core/dataplane/cilium/read/listing.js';
import { drift, edited } from '../../support/cilium-drift.js';
import { listing } from '../../support/cilium-vectors.js';

/** The vector's maps dump without any line of `kind`. */
const without = (v: string, kind: CiliumMapKind) =>
  listing(v, 'expected-maps.txt')!
    .split('\n')
    .filter((l) => !l.startsWith(`${kind}: `))
    .join('\n');

/** Each map, in a vector whose entries refer to it, and the drift its absence was taken for. */
const CASES: [CiliumMapKind, string, string][] = [
  ['BE', '05-v118-nodeport-two-services', 'cilium-backend-missing'],
  ['REV', '05-v118-nodeport-two-services', 'cilium-reverse-nat-differs'],
  ['AFF', '03-v118-clusterip-session-affinity', 'cilium-affinity-differs'],
  ['SRCRANGE', '13-v118-lb-source-ranges-allow', 'cilium-source-range-differs'],
  ['MAGLEV', '29-v118-lb-algorithm-annotation-maglev', 'cilium-algorithm-differs'],
];

describe('Cilium maps dump: a map it lacks whole is not read, never empty', () => {
  for (const [kind, v, id] of CASES)
    for (const alone of [false, true])
      it(`no ${kind} line (${alone ? 'the maps the only table' : "the agent's table besides"}): no ${id}, the map said not read`, () => {
        const d = drift(v, without(v, kind), alone ? null : undefined);
        // the rest of the dump is whole: nothing else differs either
        assert.deepEqual(
          d.findings.map((f) => f.id),
          [],
        );
        assert.deepEqual(
          (d.notRead ?? []).map((n) => [n.id, n.title, n.drift.actual]),
          [
            [
              'table-not-captured',
              `BPF maps dump: no ${kind} line, not compared`,
              [`nodes/testnode/cilium-bpf-lb-list.txt: no ${kind} line`],
            ],
          ],
        );
        assert.match(
          d.notRead![0]!.explanation,
          new RegExp(`no ${kind} line, though .*is not in the dump`),
        );
      });

  it('the reverse-NAT map read: an entry missing from it is drift as before', () => {
    const v = '05-v118-nodeport-two-services';
    const d = drift(v, edited(v, [/^REV: ID=2 ADDR=1\.1\.1\.1:30781\n/m, '']));
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.title]),
      [['cilium-reverse-nat-differs', '1.1.1.1:30781/TCP: reverse NAT missing']],
    );
    assert.equal(d.notRead, undefined);
  });

  it("the Maglev map read and empty (no entry's LBALG names maglev): the agent's maglev is drift as before", () => {
    const v = '28-v118-external-clusterip-maglev';
    const d = drift(v, without(v, 'MAGLEV'));
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.title]),
      [['cilium-algorithm-differs', '10.96.50.104:80/TCP: random in the BPF map, expected Maglev']],
    );
    assert.equal(d.notRead, undefined);
  });

  it("the Maglev map not read: an entry's LBALG is still compared, its table is not", () => {
    const v = '29-v118-lb-algorithm-annotation-maglev';
    const maps = without(v, 'MAGLEV').replace(
      /(ADDR=10\.96\.50\.105:80\/TCP SLOT=0 )LBALG=maglev/,
      '$1LBALG=random',
    );
    const [f, ...rest] = drift(v, maps).findings;
    assert.deepEqual(rest, []);
    assert.deepEqual(
      [f!.id, f!.title],
      [
        'cilium-algorithm-differs',
        '10.96.50.105:80/TCP: LBALG random in the BPF map, expected maglev',
      ],
    );
    // the entry as listed, and no claim of what the unread table picks (" random" after it)
    assert.match(
      f!.drift.actual[0]!,
      /:\d+: 10\.96\.50\.105:80\/TCP ClusterIP\+non-routable LBALG=random$/,
    );
  });
});
