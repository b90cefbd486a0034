// A readable paste is read whole although one of its lines is not iptables' own: an author's
// "# note" after a rule. Rules written as kube-proxy 1.29 writes a NodePort Service
// (default/svc-nodeport:svc-webport, node port 30898), pasted from `iptables -t nat -S | grep`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const read = (text: string) => readPaste(text, { file: 'p.txt' });

describe('a rule with an author\'s "# note" after it', () => {
  const text = [
    'iptables -t nat -S | grep "A KUBE-POSTROUTING"',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN  # marked: goes on to the next rule',
    '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
  ].join('\n');

  it('reads the rule before the note, and says the note skipped', () => {
    const x = read(text);
    assert.ok(x.mode === 'iptables');
    const rules = x.dump.table('nat')!.chain('KUBE-POSTROUTING')!.rules;
    assert.equal(rules.length, 3);
    assert.equal(rules[0]!.target?.name, 'RETURN');
    const said = x.dump.warnings.find((w) => w.line === 2);
    assert.match(said?.message ?? '', /a note after the rule.*skipped.*"# marked: goes on/);
  });

  it('keeps a "#" inside a quoted comment as the comment\'s', () => {
    const x = read(
      '-A KUBE-SERVICES -m comment --comment "ns/a # b:p cluster IP" -d 10.96.0.9/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA\n',
    );
    assert.ok(x.mode === 'iptables');
    assert.ok(!x.dump.warnings.some((w) => /a note after the rule/.test(w.message)));
  });
});
