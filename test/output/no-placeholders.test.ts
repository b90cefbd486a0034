// No output anywhere prints a JavaScript placeholder for a value it did not have.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { rulesJson, rulesText } from '../../src/output/rules.js';

const PLACEHOLDER = /\bundefined\b|\bNaN\b|\[object Object\]/;
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });

describe('no undefined, NaN or [object Object] in what kdebug prints', () => {
  it('in every golden file', () => {
    for (const f of files('test/golden'))
      assert.doesNotMatch(readFileSync(f, 'utf8'), PLACEHOLDER, f);
  });

  it('in the rules text and JSON of every recorded node and of partial pastes', () => {
    const dumps = files('snapshots')
      .filter((f) => /iptables(-nft|-legacy)?-save\.txt$/.test(f))
      .map((f) => readFileSync(f, 'utf8'));
    assert.ok(dumps.length >= 10);
    dumps.push(
      // no --dport, a KUBE-SEP chain not pasted, a KUBE-SVC chain not pasted, an unnamed port
      '-A KUBE-SERVICES -d 10.0.91.63/32 -p tcp -m comment --comment "ns/a: cluster IP" -j KUBE-SVC-AAAAAAAAAAAAAAAA\n' +
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.5 -j KUBE-SEP-BBBBBBBBBBBBBBBB\n' +
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-CCCCCCCCCCCCCCCC\n' +
        '-A KUBE-SERVICES -d 10.0.91.64/32 -p udp -m udp --dport 53 -j KUBE-SVC-DDDDDDDDDDDDDDDD\n',
      '-A KUBE-SVC-EEEEEEEEEEEEEEEE -j KUBE-SEP-FFFFFFFFFFFFFFFF\n',
    );
    for (const d of dumps) {
      const rs = parseIptables(d, { table: 'nat' });
      const trees = buildServiceTrees(rs);
      const source = { label: 'test' };
      assert.doesNotMatch(rulesText(rs, trees, source), PLACEHOLDER);
      assert.doesNotMatch(rulesJson(rs, trees, source), PLACEHOLDER);
    }
  });
});
