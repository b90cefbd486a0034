// A row `iptables -L` printed among rules iptables-save or -S printed: not read, so the chain
// around it may hold a rule the paste shows only as that row: no share is stated of it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const SVC = 'KUBE-SVC-BBBBBBBBBBBBBBBB';
const ENTRY = `-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${SVC}`;
const ROW =
  'KUBE-SEP-AAAAAAAAAAAAAAA1  all  --  anywhere             anywhere             /* default/web:http -> 10.244.1.5:80 */ statistic mode random probability 0.50000000000';
const LAST = `-A ${SVC} -m comment --comment "default/web:http -> 10.244.2.6:80" -j KUBE-SEP-AAAAAAAAAAAAAAA2`;
const DNAT =
  '-A KUBE-SEP-AAAAAAAAAAAAAAA2 -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.2.6:80';

const web = (lines: string[]) => {
  const got = readPaste(lines.join('\n'), { file: 'p.txt' });
  assert.ok(got.mode === 'iptables');
  return got.trees.services.find((t) => t.name === 'default/web:http')!;
};

describe('an iptables -L row among save rules', () => {
  it('makes the chain after it partial: no 100% for the endpoint read', () => {
    const t = web([ENTRY, ROW, LAST, DNAT]);
    assert.ok(t.partial, 'not partial');
    assert.deepEqual(
      t.endpoints.map((e) => e.shareUnknown !== undefined),
      [true],
    );
  });

  it('a row in the output of another command typed between says nothing of the rules', () => {
    const t = web([
      ENTRY,
      `$ iptables -t nat -L ${SVC} | grep 10.244.1.5`,
      ROW,
      '$ iptables -t nat -S',
      LAST,
      DNAT,
    ]);
    assert.equal(t.partial, undefined);
    assert.deepEqual(
      t.endpoints.map((e) => e.probability),
      [1],
    );
  });
});
