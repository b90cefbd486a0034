// Every BPF maps dump of Cilium's own load-balancer tests, read whole: each of its lines lands in
// the model (a slot's backend, the affinity, source-range and Maglev maps' entries, the reverse
// NAT), counted against the dump's own lines.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAddress, isDropEntry } from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { listing, vectors } from '../../support/cilium-vectors.js';

const count = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;

describe('Cilium vectors: each maps dump read whole', () => {
  let read = 0;
  for (const v of vectors) {
    const dump = listing(v, 'expected-maps.txt');
    // zero bytes: the script asserts the maps are empty
    if (dump === undefined || dump === '') continue;
    it(v, () => {
      const t = parseCilium(dump, v);
      assert.equal(t.form, 'maps-dump');
      assert.equal(t.cut, undefined);
      assert.equal(t.unreadFrom, undefined);
      // every map its entries refer to is in it (an empty one prints no line)
      assert.equal(t.unreadMaps, undefined);
      const fes = t.frontends;
      const backends = fes.flatMap((f) => f.backends);
      assert.deepEqual(
        fes.flatMap((f) => f.flags.filter((x) => /^backend /.test(x))),
        [],
        'every slot, affinity and Maglev entry names a backend of its Service',
      );
      assert.equal(backends.length, count(dump, /^SVC: .* SLOT=[1-9]/));
      assert.equal(fes.length, count(dump, /^SVC: .* SLOT=0 /));
      assert.equal(backends.filter((b) => b.affinity).length, count(dump, /^AFF: /));
      assert.equal(
        backends.filter((b) => b.maglev !== undefined).length,
        [...dump.matchAll(/\d+\(\d+\)/g)].length,
      );
      assert.equal(fes.flatMap((f) => f.sourceRanges ?? []).length, count(dump, /^SRCRANGE: /));
      assert.equal(fes.filter((f) => f.algorithm).length, count(dump, /LBALG=(?!undef)/));
      // each frontend's replies are translated back to its own address; a VIP's wildcard drop
      // entry (1.19 on, ID 0) has no reverse NAT
      for (const f of fes)
        assert.equal(f.reverseNat, isDropEntry(f) ? '' : formatAddress({ ip: f.ip, port: f.port }));
      read++;
    });
  }
  it('reads the 96 dumps that hold entries', () => assert.equal(read, 96));

  it("keeps 1.17's portless <zero> entries apart, one per Service", () => {
    const t = parseCilium(listing('01-v117-nodeport-two-services', 'expected-maps.txt')!, '01');
    const zero = t.frontends.filter((f) => f.ip === '0.0.0.0');
    assert.deepEqual(
      zero.map((f) => f.backends.map((b) => b.ip)),
      [
        ['10.244.1.1', '10.244.1.2', '10.244.1.3', '10.244.1.4'],
        ['10.244.2.1', '10.244.2.2', '10.244.2.3', '10.244.2.4'],
      ],
    );
  });

  it('reads which backends take new connections from the slots and counts', () => {
    const dump = listing('11-v118-terminating-maglev-one-terminating', 'expected-maps.txt')!;
    const [fe] = parseCilium(dump, 'maps').frontends;
    assert.deepEqual(
      fe!.backends.map((b) => [formatAddress(b), b.state, b.inRotation]),
      [
        ['10.244.0.113:8081/TCP', 'active', true],
        ['10.244.0.112:8081/TCP', 'terminating', false],
      ],
    );
  });

  it('a dump without its Service map names no frontend: not read, the map named, not an empty table', () => {
    const dump = listing('05-v118-nodeport-two-services', 'expected-maps.txt')!;
    const others = dump.replace(/^SVC: .*\n/gm, '');
    assert.throws(
      () => parseCilium(others, 'd'),
      /^CiliumParseError: d: read as a Cilium agent listing: no SVC line, though the dump holds entries of the other maps: the Service map is not in the dump/,
    );
  });

  it('says which line is of no map', () =>
    assert.throws(
      () => parseCilium('BE: ID=1 ADDR=10.0.0.1:80/TCP STATE=active\nSVC: ID=1 ADDR=x\n', 'd'),
      /^CiliumParseError: d:2: read as a Cilium agent listing: not a line of the maps dump/,
    ));
});
