// Rules a paste shows twice: a block pasted twice (read once), the same command run again (its
// rules the same rules, their counters moved: read once), and a rule iptables holds twice (its
// own, kept). IP conventions: Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseIptables, type Ruleset } from '../../../src/core/dataplane/iptables/read/parse.js';
import { buildServiceTrees } from '../../../src/core/dataplane/iptables/trees.js';

const SVC = 'KUBE-SVC-AAAAAAAAAAAAAAAA';
const SERVICES = `-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${SVC}`;
const TO_B = `-A ${SVC} -m comment --comment "default/web:http -> 10.244.1.2:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB`;
const TO_C = `-A ${SVC} -m comment --comment "default/web:http -> 10.244.2.3:80" -j KUBE-SEP-CCCCCCCCCCCCCCCC`;
const MASQ = `-A ${SVC} ! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`;

const kinds = (rs: Ruleset) =>
  rs.warnings.filter((w) => w.kind !== 'table').map((w) => `${w.line}:${w.kind}`);
const count = (rs: Ruleset, chain: string) => rs.table('nat')!.chain(chain)?.ruleCount ?? 0;

/** `iptables-save -c -t nat | grep` of the Service's chain: the counters each rule had then. */
const grepped = (n: number) => [
  `# iptables-save -c -t nat | grep ${SVC.slice(0, 12)}`,
  `:${SVC} - [0:0]`,
  `[${2 * n}:${120 * n}] ${SERVICES}`,
  `[${n}:${60 * n}] ${TO_B}`,
  `[${n}:${60 * n}] ${TO_C}`,
];

describe('a rule the paste shows twice', () => {
  it('the same command run again: its rules are the rules read before, their counters moved', () => {
    const rs = parseIptables([...grepped(2), ...grepped(3)].join('\n'), { table: 'nat' });
    assert.equal(count(rs, 'KUBE-SERVICES'), 1);
    assert.equal(count(rs, SVC), 2);
    const tree = buildServiceTrees(rs).services.find((t) => t.name === 'default/web:http')!;
    assert.equal(tree.entries.length, 1);
    const said = rs.warnings.find((w) => w.kind === 'duplicate' && w.line === 8)!;
    assert.match(said.message, /run again/);
    assert.deepEqual(said.lines, [8, 9, 10]);
    // iptables' own second copy of a rule, in both runs: each run's two are the two rules
    const twice = (n: number) => [...grepped(n), `[${n + 1}:0] ${TO_C}`];
    const kept = parseIptables([...twice(2), ...twice(3)].join('\n'), { table: 'nat' });
    assert.equal(count(kept, SVC), 3);
  });

  it('within one command output, one text counted apart is rules iptables holds twice', () => {
    const counts = ['[0:0]', '[4:240]', '[0:0]', '[7:420]'];
    const rs = parseIptables(counts.map((c) => `${c} ${TO_C}`).join('\n'), { table: 'nat' });
    assert.equal(count(rs, SVC), 4);
    assert.deepEqual(kinds(rs), []);
  });

  it('a copy cut by the paste’s end is still a copy: at a line end, or inside its last line', () => {
    const block = [SERVICES, MASQ, TO_B, TO_C];
    const rules = [...block, MASQ, TO_B].map((r) => `[3:180] ${r}`);
    const rs = parseIptables(rules.join('\n'), { table: 'nat' });
    assert.deepEqual([count(rs, SVC), kinds(rs)], [3, ['5:duplicate']]);
    const inside = [...rules.slice(0, -1), rules.at(-1)!.slice(0, 60)].join('\n');
    const cut = parseIptables(inside, { table: 'nat' });
    assert.deepEqual([count(cut, SVC), kinds(cut)], [3, ['5:duplicate']]);
  });

  it('prefixed lines (grep -n, -H) pasted twice: compared as read, without the prefix', () => {
    const block = [MASQ, TO_B, TO_C, `-A ${SVC} -j KUBE-MARK-DROP`];
    for (const prefix of [(i: number) => `${i + 1}:`, () => 'nat.txt:'])
      for (const copy of [block, block.slice(0, 2)]) {
        const text = [...block, ...copy].map((r, i) => prefix(i % block.length) + r).join('\n');
        const rs = parseIptables(text, { table: 'nat' });
        assert.equal(count(rs, SVC), 4, text);
        assert.ok(rs.warnings.some((w) => w.kind === 'duplicate' && w.line === 5));
      }
  });

  it("chains whose rules take turns (kube-proxy's own order, grep'ed) pasted twice: read once", () => {
    const svc2 = SVC.replace('AAAA', 'DDDD');
    const turns = [SERVICES, MASQ, SERVICES.replace(SVC, svc2).replace('.20/', '.21/'), TO_B];
    const more = [MASQ.replace(SVC, svc2), TO_C];
    const rs = parseIptables([...turns, ...more, ...turns, ...more].join('\n'), { table: 'nat' });
    assert.deepEqual([count(rs, 'KUBE-SERVICES'), count(rs, SVC), count(rs, svc2)], [2, 3, 1]);
    assert.ok(rs.warnings.some((w) => w.kind === 'duplicate' && w.line === 7));
  });

  it('the published paste of four rules iptables holds alike, counted apart, still reads so', () => {
    const ovn = readFileSync(
      new URL(
        '../../fixtures/pastes/ovn-k8s-4394-ci-log-indented-iptables-save-c-filter-end-then-nat-ovn-chains-cut.txt',
        import.meta.url,
      ),
      'utf8',
    );
    const rs = parseIptables(ovn);
    assert.equal(rs.table('filter')!.chain('INPUT')!.ruleCount, 6);
    assert.ok(!rs.warnings.some((w) => w.kind === 'duplicate'));
  });

  it('one rule appended again inside a whole *table ... COMMIT block is the kernel’s, each kept', () => {
    // libvirt appends its CHECKSUM rule on each restart; iptables-save prints each copy
    const rule = '-A POSTROUTING -o virbr0 -p udp -m udp --dport 68 -j CHECKSUM --checksum-fill';
    const block = ['*mangle', ':POSTROUTING ACCEPT [0:0]', rule, rule, rule];
    const whole = parseIptables([...block, 'COMMIT'].join('\n'));
    assert.equal(whole.table('mangle')!.chain('POSTROUTING')!.ruleCount, 3);
    assert.ok(!whole.warnings.some((w) => w.kind === 'duplicate'));
    // the block declared again before its COMMIT: the rules after it are a second copy
    const again = [...block.slice(0, 3), ...block.slice(1, 3), 'COMMIT'].join('\n');
    assert.ok(parseIptables(again).warnings.some((w) => w.kind === 'duplicate'));
  });
});
