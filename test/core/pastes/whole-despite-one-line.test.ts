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

describe('two greps of one `iptables -t nat -S`, the second keeping a -N line', () => {
  // kube-proxy's rules for a Service with two endpoints, as `-S | grep` prints them
  const svc = 'KUBE-SVC-5OS5BND5KMKOINHH';
  const entry = `-A KUBE-SERVICES -d 172.30.81.39/32 -p tcp -m comment --comment "edu25/nginx:http cluster IP" -m tcp --dport 80 -j ${svc}`;
  const text = [
    '$ sudo iptables -t nat -S | grep 172.30.81.39',
    entry,
    '$ sudo iptables -t nat -S | grep ' + svc,
    `-N ${svc}`,
    entry,
    `-A ${svc} -m comment --comment "edu25/nginx:http -> 10.128.3.121:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BGX236REKJDO52A7`,
    `-A ${svc} -m comment --comment "edu25/nginx:http -> 10.131.0.17:80" -j KUBE-SEP-J2HVM7YGNXR4UJJO`,
  ].join('\n');

  it('reads both as lines of the one nat table (not two listings of it)', () => {
    const x = read(text);
    assert.ok(x.mode === 'iptables');
    assert.deepEqual(
      x.dump.tables.map((t) => t.name),
      ['nat'],
    );
    const tree = x.trees.services.find((t) => t.name === 'edu25/nginx:http');
    assert.equal(tree?.entries.length, 1);
    assert.equal(x.dump.table('nat')!.chain(svc)!.rules.length, 2);
  });

  it('still refuses two whole -S listings of one table typed without grep', () => {
    const whole = (n: string) => [
      `$ iptables -t nat -S`,
      '-P PREROUTING ACCEPT',
      '-P OUTPUT ACCEPT',
      `-N ${svc}`,
      `-A ${svc} -j KUBE-SEP-${n}`,
    ];
    assert.throws(
      () => read([...whole('AAAAAAAAAAAAAAAA'), ...whole('BBBBBBBBBBBBBBBB')].join('\n')),
      /two listings of the nat table/,
    );
  });
});
