// A row of `iptables -L` pasted among iptables-save's (or -S's) rules: said as -L's row at its
// line, the rules around it read; a paste of -L rows alone is still named as -L output.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const SVC = 'KUBE-SVC-AAAAAAAAAAAAAAAA';
const ROW = `${SVC}  tcp  --  0.0.0.0/0            10.96.0.5            /* ns/a:http cluster IP */ tcp dpt:80`;
const RULES = [
  `-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j ${SVC}`,
  ROW,
  `-A ${SVC} -m comment --comment "ns/a:http -> 10.244.0.3:80" -j KUBE-SEP-CCCCCCCCCCCCCCCC`,
];

describe('an iptables -L row among rules', () => {
  for (const [form, text] of [
    ['iptables-save', ['*nat', `:KUBE-SERVICES - [0:0]`, `:${SVC} - [0:0]`, ...RULES, 'COMMIT']],
    ['-S lines', RULES],
  ] as const)
    it(`among ${form}: that line said as -L's row, the rest read`, () => {
      const got = readPaste(text.join('\n'), { file: 'p.txt' });
      assert.ok(got.mode === 'iptables');
      const out = rulesText(got.dump, got.trees, { label: 'p' });
      const at = text.indexOf(ROW) + 1;
      assert.match(out, new RegExp(`line ${at}: line ${at}: a row of \`iptables -L\``), out);
      assert.doesNotMatch(out, /cannot read line by line/, out);
      assert.equal(got.trees.services[0]?.endpoints[0]?.chain, 'KUBE-SEP-CCCCCCCCCCCCCCCC');
    });
});
