// Which kube-proxy releases an nftables table reads as written by (nftables/drift/written-by.ts)
// is read from its rules' expressions (the masquerade jump, the matched fields, the DNAT and its
// numgen map), never from their rendered text: each recorded release's table shows a range that
// holds it, its text listing shows what its JSON does, and a statement that only names DNAT in
// its words is no DNAT.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { nftShown } from '../../src/core/dataplane/nftables/drift/written-by.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import type { NftTable } from '../../src/core/dataplane/nftables/read/listing.js';
import { recordings } from '../versions/record.js';

const nftables = recordings().filter((r) => r.mode === 'nftables');
const tableOf = (dir: string): NftTable =>
  parseNftJson(readFileSync(join(dir, 'nodes/node-a/nft-ip-kube-proxy.txt'), 'utf8')).tables[0]!;
const said = (t: NftTable) => {
  const s = nftShown(t);
  return { oldest: s.oldest, newest: s.newest, signs: s.signs.map((x) => x.what) };
};

describe('the releases an nftables table reads as written by', () => {
  it('has the nftables recordings', () => assert.ok(nftables.length >= 7));

  for (const { release, dir } of nftables)
    it(`hold v1.${release.minor} for its recorded table`, () => {
      const s = said(tableOf(dir));
      assert.ok(s.oldest <= release.minor && release.minor <= s.newest, JSON.stringify(s));
    });

  it("are the same for a table's text listing as for its JSON", () => {
    const read = (f: string) =>
      said(
        (f.endsWith('.json') ? parseNftJson : parseNftText)(
          readFileSync(join('test/fixtures/nft', f), 'utf8'),
        ).tables[0]!,
      );
    const text = read('kube-proxy-1.37-node-a.txt');
    assert.deepEqual(text, read('kube-proxy-1.37-node-a.json'));
    assert.ok(
      text.signs.some((s) => s.includes('DNAT straight to it')),
      text.signs.join('; '),
    );
  });

  it('take no DNAT from a statement that only names it (a log prefix)', () => {
    const v36 = nftables.find((r) => r.release.minor === 36)!;
    const t = tableOf(v36.dir);
    // the first Service chain whose one endpoint is DNATed through a numgen map
    const chain = t.chains.find(
      (c) =>
        c.name.startsWith('service-') &&
        c.rules.some((r) => r.expr.some((e) => JSON.stringify(e['dnat'] ?? '').includes('numgen'))),
    )!;
    assert.ok(chain, 'v1.36 has a one-endpoint Service chain');
    chain.rules.unshift({ chain: chain.name, expr: [{ log: { prefix: 'dnat to ' } }] });
    const s = said(t);
    assert.deepEqual([s.oldest, s.newest], [36, 36], s.signs.join('; '));
  });
});
