// An arrow an author draws before a line to point at it ("--> 9   540 KUBE-MARK-MASQ ...", "==> -A
// KUBE-SVC-..."): the rule after it is read, so the chain keeps every rule and its shares.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const SVC = 'KUBE-SVC-BBBBBBBBBBBBBBBB';
const ENTRY = `-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${SVC}`;

const shares = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'iptables');
  const t = got.trees.services.find((s) => s.name === 'default/web:http');
  assert.ok(t, 'no tree');
  return t.endpoints.map((e) => (e.shareUnknown ? null : Math.round(e.probability * 100)));
};

describe('an arrow drawn before a line', () => {
  it('before an -S rule: the rule is read', () => {
    const text = [
      ENTRY,
      `--> -A ${SVC} -m comment --comment "default/web:http -> 10.244.1.5:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAA1`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.244.2.6:80" -j KUBE-SEP-AAAAAAAAAAAAAAA2`,
      '',
    ].join('\n');
    assert.deepEqual(shares(text), [50, 50]);
  });

  it('before an -L -v row: the row is read', () => {
    const text = [
      `Chain ${SVC} (1 references)`,
      ' pkts bytes target     prot opt in     out     source               destination',
      '==> 7   420 KUBE-SEP-AAAAAAAAAAAAAAA1  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* default/web:http -> 10.244.1.5:80 */ statistic mode random probability 0.50000000000',
      '    3   180 KUBE-SEP-AAAAAAAAAAAAAAA2  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* default/web:http -> 10.244.2.6:80 */',
      '',
      'Chain KUBE-SERVICES (2 references)',
      ' pkts bytes target     prot opt in     out     source               destination',
      `    0     0 ${SVC}  tcp  --  *      *       0.0.0.0/0            10.96.0.50           /* default/web:http cluster IP */ tcp dpt:80`,
      '',
    ].join('\n');
    assert.deepEqual(shares(text), [50, 50]);
  });
});
