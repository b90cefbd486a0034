// A node's recorded dump whose rule holds a control byte iptables-save never prints: not read,
// its chain not claimed whole; one inside a quoted comment changes nothing the rule does. Inside
// quotes iptables-save escapes ", \ and ' with a backslash (xtables_save_string), so an escaped
// quote does not end the comment. IP conventions: Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const SEP = 'KUBE-SEP-FNO4E6JYD7EGUHTP';
const dump = (comment: string, after = '') =>
  `*nat\n:${SEP} - [0:0]\n-A ${SEP} -p tcp -m comment --comment ${comment} -m tcp -j DNAT --to-destination 10.244.1.7:80${after}\nCOMMIT\n`;
const read = (text: string) => {
  const rs = parseIptables(text, { file: 'nodes/a/iptables-save.txt', noun: 'dump' });
  return {
    rules: rs.table('nat')!.chain(SEP)!.ruleCount,
    control: rs.warnings.filter((w) => w.kind === 'control').map((w) => w.message),
  };
};

describe('a recorded dump rule holding a control byte', () => {
  it('after a comment holding an escaped quote: not read, said', () => {
    const r = read(dump('"default/web:http \\"a b"', '\x07'));
    assert.equal(r.rules, 0);
    assert.match(r.control[0] ?? '', /a rule of KUBE-SEP-FNO4E6JYD7EGUHTP not read: .*\(\\x07\)/);
  });

  it('inside the comment, after an escaped quote: read, nothing said', () => {
    const r = read(dump('"default/web:http \\"a\x07\\" b"'));
    assert.deepEqual(r, { rules: 1, control: [] });
  });

  it('after a comment ending in an escaped backslash: not read, said', () => {
    const r = read(dump('"default/web:http \\\\"', '\x07'));
    assert.equal(r.rules, 0);
    assert.equal(r.control.length, 1);
  });
});
