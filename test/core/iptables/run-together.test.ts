// Rules run together on one line (their line ends lost in copying): each " -A " outside quotes
// starts the next. Inside quotes iptables-save escapes ", \ and ' with a backslash
// (xtables_save_string), so a comment's escaped quote neither opens nor closes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const rulesOf = (line: string) => {
  const rs = parseIptables(`*nat\n:KUBE-SERVICES - [0:0]\n${line}\nCOMMIT\n`);
  const t = rs.table('nat')!;
  return {
    rules: t.chain('KUBE-SERVICES')!.ruleIds.map((id) => t.text(id)),
    joined: rs.warnings.some((w) => w.kind === 'joined'),
  };
};

describe('rules run together on one line, a comment holding an escaped quote', () => {
  it('the rule after the comment starts at its " -A ": both read', () => {
    const r = rulesOf(
      '-A KUBE-SERVICES -m comment --comment "a \\" b" -j RETURN -A KUBE-SERVICES -j KUBE-NODEPORTS',
    );
    assert.deepEqual(r.rules, [
      '-A KUBE-SERVICES -m comment --comment "a \\" b" -j RETURN',
      '-A KUBE-SERVICES -j KUBE-NODEPORTS',
    ]);
    assert.ok(r.joined);
  });

  it('" -A " inside the comment after the escaped quote starts no rule: one read', () => {
    const r = rulesOf('-A KUBE-SERVICES -m comment --comment "a \\" -A b" -j KUBE-NODEPORTS');
    assert.deepEqual(r, {
      rules: ['-A KUBE-SERVICES -m comment --comment "a \\" -A b" -j KUBE-NODEPORTS'],
      joined: false,
    });
  });
});
