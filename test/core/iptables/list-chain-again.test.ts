// `iptables -t nat -L CHAIN` typed again for a chain listed above: the later listing is the chain
// after a change, read as a later `-S CHAIN` is, whichever holds more rules.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const H = 'target     prot opt source               destination';
const SVC = 'KUBE-SVC-ERIFXISQEP7F7OF4';
const row = (sep: string, p?: string) =>
  `${sep}  all  --  0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns */${p ? ` statistic mode random probability ${p}` : ''}`;

describe('iptables -L of one chain listed again', () => {
  it('reads the later listing, though it holds fewer rules, and says so', () => {
    const before = [
      `Chain ${SVC} (1 references)`,
      H,
      row('KUBE-SEP-AAAAAAAAAAAAAAAA', '0.50000000000'),
      row('KUBE-SEP-BBBBBBBBBBBBBBBB'),
    ];
    const after = [`Chain ${SVC} (1 references)`, H, row('KUBE-SEP-BBBBBBBBBBBBBBBB')];
    const rs = parseIptables([...before, '', ...after].join('\n') + '\n', { file: 'p.txt' });
    const chain = rs.table('nat')!.chain(SVC)!;
    assert.equal(chain.ruleCount, 1);
    const said = rs.warnings.map((w) => w.message).join('\n');
    assert.match(said, /the one from line 6 is read \(the later: the chain after a change\)/, said);
  });
});
