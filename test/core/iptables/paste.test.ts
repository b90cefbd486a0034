// What people paste: the seed dumps wrapped in prompts, prose, grep prefixes, cut short or doubled.
// IP conventions: Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16 (nginx-svc 10.1.190.219:8080),
// endpoints 10.244.0.3:80 and 10.244.1.7:80.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  IptablesParseError,
  NoRulesError,
  parseIptables,
  printRule,
  type Ruleset,
} from '../../../src/core/dataplane/iptables/read/parse.js';
import { uncolumn } from '../../../src/core/dataplane/iptables/read/paste/mangled/columned.js';
import { endpointChain } from '../../../src/core/dataplane/kube-proxy/chain-names.js';
import { buildServiceTrees } from '../../../src/core/dataplane/iptables/trees.js';
import { tracePacket } from '../../../src/core/dataplane/iptables/trace/trace.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');
const NAT_S = fixture('seed-nat-S.txt');
const SAVE = readFileSync(
  new URL('../../../snapshots/nginx-svc/nodes/vm-12-7-centos/iptables-save.txt', import.meta.url),
  'utf8',
);
const lines = (t: string) => t.trimEnd().split('\n');
const CLEAN_S = parseIptables(NAT_S, { table: 'nat' });
const CLEAN_SAVE = parseIptables(SAVE);

/** Every rule of the clean dump was read, rule for rule. */
function sameRules(rs: Ruleset, clean: Ruleset): void {
  assert.equal(rs.ruleCount, clean.ruleCount);
  const bare = (line: string) => line.replace(/^\[\d+:\d+\] /, ''); // iptables-save -c
  for (const t of clean.tables)
    for (const c of t.chains)
      assert.deepEqual(
        rs
          .table(t.name)!
          .chain(c.name)!
          .ruleIds.map((id) => bare(rs.table(t.name)!.text(id))),
        c.ruleIds.map((id) => t.text(id)),
        `${t.name} ${c.name}`,
      );
}

const kinds = (rs: Ruleset) =>
  rs.warnings.filter((w) => w.kind !== 'table').map((w) => `${w.line}:${w.kind}`);

describe('pastes: what is not a rule is skipped and said, the rules are read', () => {
  const cases: { what: string; text: string; warnings: string[]; excerpt?: RegExp }[] = [
    {
      what: 'a shell prompt and the command before the output',
      text: `controlplane $ kubectl exec -n kube-system kube-proxy-x -- iptables-save | grep KUBE\n${NAT_S}`,
      // every line holds KUBE: grep's output, said filtered
      warnings: ['1:prompt', '1:view'],
      excerpt: /controlplane \$ kubectl exec/,
    },
    {
      what: 'a root prompt',
      text: `root@node-a:~# iptables -t nat -S | grep KUBE\n${NAT_S}`,
      warnings: ['1:prompt', '1:view'],
    },
    {
      what: 'a "$ " prompt with the command',
      text: `$ sudo iptables -t nat -S\n${NAT_S}`,
      warnings: ['1:prompt'],
    },
    {
      what: 'a prompt naming the host and the directory (CoreOS, Gentoo)',
      text: `wwserver206 coreos-install # iptables-save -t nat\n${NAT_S}`,
      warnings: ['1:prompt'],
    },
    {
      what: 'a command line without a prompt',
      text: `sudo iptables -t nat -S\n${NAT_S}`,
      warnings: ['1:command'],
    },
    {
      what: 'a sentence of prose and a blank line',
      text: `Here are the rules on the node:\n\n${NAT_S}`,
      warnings: ['1:prose', '2:blank'],
      excerpt: /Here are the rules on the node:/,
    },
    {
      what: 'a markdown fence around the dump',
      text: `\`\`\`\n${NAT_S}\`\`\`\n`,
      warnings: ['1:fence', `${lines(NAT_S).length + 2}:fence`],
    },
    {
      what: 'an elision in the middle',
      text: [...lines(NAT_S).slice(0, 8), '...', ...lines(NAT_S).slice(8)].join('\n'),
      warnings: ['9:elided'],
    },
    {
      what: 'klog lines of kube-proxy',
      text: `I1201 10:00:00.123456       1 proxier.go:825] "Syncing iptables rules"\n${NAT_S}`,
      warnings: ['1:foreign'],
    },
    {
      what: 'grep -n prefixes',
      text: lines(NAT_S)
        .map((l, i) => `${i + 1}:${l}`)
        .join('\n'),
      warnings: ['1:prefix'],
    },
    {
      what: 'grep -Hn prefixes of a log file',
      text: lines(NAT_S)
        .map((l, i) => `kube-proxy.log:${i + 123}:${l}`)
        .join('\n'),
      warnings: ['1:prefix'],
    },
    {
      what: 'grep -H prefixes',
      text: lines(NAT_S)
        .map((l) => `dump.txt:${l}`)
        .join('\n'),
      warnings: ['1:prefix'],
    },
    {
      what: 'diff "+" and "$ " prefixes',
      text: lines(NAT_S)
        .map((l, i) => (i % 2 ? `+${l}` : `$ ${l}`))
        .join('\n'),
      // a diff's "+" said as its new side, the prompts' "$ " as a prefix
      warnings: ['1:prefix', '2:prefix'],
    },
    {
      what: 'lines pasted twice',
      text: NAT_S + lines(NAT_S).slice(8).join('\n') + '\n',
      warnings: ['23:duplicate'],
    },
    {
      what: 'one rule pasted twice in a row',
      text: [...lines(NAT_S).slice(0, 15), ...lines(NAT_S).slice(14)].join('\n'),
      warnings: ['16:duplicate'],
    },
    {
      what: "nft's counter statement alone on a line: nft's, not prose",
      text: `counter packets 0 bytes 0\n${NAT_S}`,
      warnings: ['1:foreign'],
    },
    {
      what: 'an iptables command among the rules',
      text: `-I INPUT -j ACCEPT\n${NAT_S}`,
      warnings: ['1:command'],
    },
  ];
  for (const c of cases)
    it(c.what, () => {
      const rs = parseIptables(c.text, { table: 'nat' });
      sameRules(rs, CLEAN_S);
      assert.deepEqual(kinds(rs), c.warnings);
      if (c.excerpt) assert.match(rs.warnings[0]!.message, c.excerpt);
    });

  it('a summary warning carries every line it stands for', () => {
    const text = lines(NAT_S)
      .map((l, i) => `${i + 1}:${l}`)
      .join('\n');
    const w = parseIptables(text, { table: 'nat' }).warnings.find((x) => x.kind === 'prefix')!;
    assert.deepEqual(
      w.lines,
      lines(NAT_S).map((_, i) => i + 1),
    );
  });

  it('iptables-save -c counters and a save dump pasted twice', () => {
    const counted = SAVE.replace(/^-A /gm, '[0:0] -A ');
    sameRules(parseIptables(counted), CLEAN_SAVE);
    const twice = parseIptables(SAVE + SAVE);
    sameRules(twice, CLEAN_SAVE);
    assert.ok(twice.warnings.every((w) => w.kind === 'duplicate'));
    assert.equal(twice.warnings.length, CLEAN_SAVE.tables.length);
    assert.match(
      twice.warnings[0]!.message,
      /table mangle from line 144 repeats the one from line 2 byte for byte/,
    );
  });

  it('a rule iptables holds twice is two rules: counted apart, or not followed by the rest of its chain again', () => {
    const rule = '-A INPUT -p tcp -m tcp --dport 9107 -j ACCEPT';
    // iptables-save -c: one text, four counts, four rules (a paste twice copies the counters too)
    const counted = parseIptables(
      ['[0:0]', '[18:1271]', '[0:0]', '[16:1167]'].map((c) => `  ${c} ${rule}`).join('\n'),
      { table: 'filter' },
    );
    assert.equal(counted.table('filter')!.chain('INPUT')!.ruleIds.length, 4);
    assert.deepEqual(kinds(counted), []);
    // without counters: a rule appended again after another is the chain's, not a block again
    const other = '-A INPUT -i lo -j ACCEPT';
    const again = parseIptables([rule, other, rule, '-A INPUT -j DROP'].join('\n'), {
      table: 'filter',
    });
    assert.equal(again.table('filter')!.chain('INPUT')!.ruleIds.length, 4);
    assert.deepEqual(kinds(again), []);
    // the chain's rules again up to its last read: a block pasted twice, counters and all
    const twice = parseIptables([rule, other, rule, other].map((r) => `[5:300] ${r}`).join('\n'), {
      table: 'filter',
    });
    assert.equal(twice.table('filter')!.chain('INPUT')!.ruleIds.length, 2);
    assert.deepEqual(kinds(twice), ['3:duplicate']);
  });

  it("iptables-save -c's counters on a line of their own: the rule after them read; on the last line, a cut", () => {
    const broken = SAVE.replace(/^-A /gm, '[12:720]\n-A ');
    const rs = parseIptables(broken);
    sameRules(rs, CLEAN_SAVE);
    assert.equal(rs.warnings.length, CLEAN_SAVE.ruleCount);
    assert.ok(
      rs.warnings.every(
        (w) => w.kind === 'counters' && /the rule on the next line is read$/.test(w.message),
      ),
    );
    const cut = parseIptables(`${lines(broken).slice(0, 12).join('\n')}\n[3:180]\n`);
    assert.match(
      cut.warnings.find((w) => w.kind === 'truncated')?.message ?? '',
      /cut at line 13: it ends mid-rule \(a rule cut after its counters\)/,
    );
    // counters whose rule is not in the paste: said, not read as prose
    const alone = parseIptables('*nat\n:X - [0:0]\n-A X -j RETURN\n[3:180]\nCOMMIT\n');
    assert.deepEqual(kinds(alone), ['4:counters']);
    assert.match(alone.warnings[0]!.message, /the rule they count is not in the paste/);
    // counters and nothing else readable: the error says what the line is, not that it is none
    for (const [text, lines, more] of [
      ['[12:720]', 'line 1 holds', false],
      ['$ sudo iptables-save -c\n[12:720]\n', 'line 2 holds', true],
      // every counters line is named, and none is "other"
      ['[12:720]\n[1:60]', 'lines 1, 2 hold', false],
      ['$ sudo iptables-save -c\n[12:720]\n[1:60]\n', 'lines 2, 3 hold', true],
    ] as const)
      assert.throws(
        () => parseIptables(text, { file: 'dump.txt' }),
        (e: unknown) =>
          e instanceof NoRulesError &&
          e.message.startsWith(`no iptables rules in dump.txt: ${lines} only the packet`) &&
          /rules? they count (?:is|are) not in the paste/.test(e.message) &&
          /no other line/.test(e.message) === more &&
          !/ is not a line of iptables-save/.test(e.message),
      );
  });

  it('a prompt run on from the end of a rule (a page lost the line end): the rule read, the command not', () => {
    const rs = parseIptables(
      [
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http -> 10.244.0.3:80" -j KUBE-SEP-BBBBBBBBBBBBBBBB# cat rules.txt|grep KUBE-SEP-BBBBBBBBBBBBBBBB',
        '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "ns/a:http" -m tcp -j DNAT --to-destination 10.244.0.3:80',
      ].join('\n'),
      { file: 'dump.txt', table: 'nat' },
    );
    const svc = rs.tables[0]!.chains.find((c) => c.name === 'KUBE-SVC-AAAAAAAAAAAAAAAA')!;
    assert.match(printRule(svc.rules[0]!), /-j KUBE-SEP-BBBBBBBBBBBBBBBB$/);
    assert.match(
      rs.warnings.find((w) => w.kind === 'joined')?.message ?? '',
      /^a prompt runs on from the end of its rule .*: "# cat rules\.txt\|grep KUBE-SEP-B+"$/,
    );
    // "# " inside a quoted comment is the comment's
    const quoted = parseIptables('-A X -m comment --comment "see# cat notes" -j RETURN\n', {
      table: 'nat',
    });
    assert.equal(quoted.warnings.length, 0);
  });

  it('a rule run on from the end of a command that prints rules (a page lost the line end): read from there, the command not', () => {
    const rs = parseIptables(
      [
        '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "ns/a:http" -m tcp -j DNAT --to-destination 10.244.0.3:80',
        '...# iptables-save > rules.txt-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-AAAAAAAAAAAAAAAA# cat rules.txt|grep KUBE-SVC-AAAAAAAAAAAAAAAA-A KUBE-SVC-AAAAAAAAAAAAAAAA ! -s 10.244.0.0/16 -d 10.1.190.219/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 8080 -j KUBE-MARK-MASQ',
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http -> 10.244.0.3:80" -j KUBE-SEP-BBBBBBBBBBBBBBBB',
      ].join('\n'),
      { file: 'page.txt' },
    );
    const nat = rs.table('nat')!;
    assert.deepEqual(
      nat.chains.map((c) => `${c.name} ${c.ruleCount}`),
      ['KUBE-SEP-BBBBBBBBBBBBBBBB 1', 'KUBE-SERVICES 1', 'KUBE-SVC-AAAAAAAAAAAAAAAA 2'],
    );
    assert.match(
      printRule(nat.chain('KUBE-SVC-AAAAAAAAAAAAAAAA')!.rules[0]!),
      /-j KUBE-MARK-MASQ$/,
    );
    const joined = rs.warnings
      .filter((w) => w.kind === 'joined')
      .map((w) => `${w.line}: ${w.message}`);
    assert.deepEqual(joined, [
      '2: a rule runs on from the end of the command typed before it (the line end was lost in copying): the rule is read, not the command: "# iptables-save > rules.txt"',
      '2: a prompt runs on from the end of its rule, and the next rule from the end of its command (the line ends were lost in copying): the rule and what runs on from the command are read, not the command between them: "# cat rules.txt|grep KUBE-SVC-AAAAAAAAAAAAAAAA"',
    ]);
    // "..." before the prompt: the output before it was left out there
    assert.match(nat.partial.get('KUBE-SEP-BBBBBBBBBBBBBBBB') ?? '', /elides lines after it/);

    // a save's own first lines run on from it too
    const save = parseIptables(
      '$ sudo iptables-save*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j RETURN\nCOMMIT\n',
    );
    assert.equal(save.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1);
  });

  it('a rule typed as a command is no output: its -A follows a blank, or the command prints no rules', () => {
    for (const typed of [
      '# iptables -t nat -A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -j KUBE-SVC-AAAAAAAAAAAAAAAA',
      // a blank lost inside a command that prints nothing
      '# iptables -t nat-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -j KUBE-SVC-AAAAAAAAAAAAAAAA',
      // grep's own -A (lines after a match) has a blank before it
      '# iptables-save | grep -A 3 KUBE-SERVICES',
    ]) {
      const rs = parseIptables(`${typed}\n-A KUBE-SEP-BBBBBBBBBBBBBBBB -j KUBE-MARK-MASQ\n`, {
        table: 'nat',
      });
      assert.deepEqual(
        rs.table('nat')!.chains.map((c) => c.name),
        ['KUBE-SEP-BBBBBBBBBBBBBBBB'],
        typed,
      );
      assert.ok(!rs.warnings.some((w) => w.kind === 'joined'), typed);
      assert.equal(rs.warnings.find((w) => w.line === 1)?.kind, 'prompt', typed);
    }
  });

  it('prose run on from a command is no output: the split is taken only where the rest reads as a rule', () => {
    for (const typed of [
      '$ grep -c KUBE-SEP rules.txt-A is the flag to append',
      '# iptables-save > rules.txt-A is the flag to append',
    ]) {
      const rs = parseIptables(
        `${typed}\n*nat\n:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]\n-A KUBE-SEP-BBBBBBBBBBBBBBBB -j KUBE-MARK-MASQ\nCOMMIT\n`,
        { file: 'f.txt' },
      );
      assert.equal(rs.table('nat')!.chain('KUBE-SEP-BBBBBBBBBBBBBBBB')!.ruleCount, 1, typed);
      assert.ok(!rs.warnings.some((w) => w.kind === 'joined'), typed);
      assert.equal(rs.warnings.find((w) => w.line === 1)?.kind, 'prompt', typed);
    }
    // after a rule, the prompt is still not read; the rule before it is
    const after = parseIptables(
      '-A KUBE-SEP-BBBBBBBBBBBBBBBB -j KUBE-MARK-MASQ# cat rules.txt-A is the flag to append\n',
      { table: 'nat' },
    );
    assert.equal(after.table('nat')!.chain('KUBE-SEP-BBBBBBBBBBBBBBBB')!.ruleCount, 1);
    assert.deepEqual(
      after.table('nat')!.chains.map((c) => c.name),
      ['KUBE-SEP-BBBBBBBBBBBBBBBB'],
    );
  });

  it('a chain declared twice is read once', () => {
    const rs = parseIptables('*nat\n:X - [0:0]\n:X - [0:0]\n-A X -j ACCEPT\nCOMMIT\n');
    assert.equal(rs.table('nat')!.chain('X')!.line, 2);
    assert.deepEqual(kinds(rs), ['3:duplicate']);
  });
});

describe("kube-proxy's own restore payload, as it logs it", () => {
  it('reads unquoted comments and -d after -p into the same trees as iptables-save text', () => {
    const payload = fixture('kube-proxy-overall-payload.txt');
    const rs = parseIptables(payload);
    // the fixture's own five-line header is a note, no line of the payload: said skipped
    assert.deepEqual(
      rs.warnings.map((w) => `${w.line}:${w.kind}`),
      ['1:comment', '2:comment', '3:comment', '4:comment', '5:comment'],
    );
    const trees = buildServiceTrees(rs);
    const svc1 = trees.services.find((t) => t.name === 'ns1/svc1:p80')!;
    assert.deepEqual([svc1.clusterIP, svc1.port], ['172.30.0.41', 80]);
    assert.deepEqual(
      svc1.endpoints.map((e) => [e.address, e.probability, e.hairpinMasquerade]),
      [['10.180.0.1:80', 1, true]],
    );
  });
});

describe("kube-proxy's log with the rules it gave iptables-restore", () => {
  const J = 'Nov 14 11:06:11 HOSTNAME kube-proxy[12085]: ';
  it('journald lines: the rules after the prefix read, said to be what kube-proxy logged', () => {
    const rs = parseIptables(
      [
        `${J}-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment default/kubernetes:https -j KUBE-SEP-SSNSCRUIRMZDLXKS`,
        `${J}-A KUBE-SEP-SSNSCRUIRMZDLXKS -m comment --comment default/kubernetes:https -m tcp -p tcp -j DNAT --to-destination 1.2.3.5:8080`,
        `${J}-X KUBE-SEP-GAZ6D67M54LH5EY5`,
        `${J}COMMIT`,
        `${J}E1114 11:06:11.978073   12085 proxier.go:1282] Failed to execute iptables-restore: exit status 2 (Bad argument \`KUBE-SVC-574IYFDEANSYIEBF'`,
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.equal(rs.table('nat')!.ruleCount, 2);
    assert.match(
      rs.warnings.find((w) => w.kind === 'log')!.message,
      /^rules kube-proxy logged \(the input it gave iptables-restore\).*not read back from the node.*\(lines 1, 2, 4\)$/,
    );
    assert.deepEqual(rs.foreign, ['kube-proxy-log']);
    // its restore input's chains take turns: every chain may go on above the paste, no share
    const ep = buildServiceTrees(rs).services[0]!.endpoints[0]!;
    assert.match(ep.shareUnknown ?? '', /starts inside its table/);
  });

  it('"Restoring iptables rules: *filter": the payload starts on the log line, in its table', () => {
    const rs = parseIptables(
      'I0413 17:26:42.526157       5 proxier.go:938] Restoring iptables rules: *filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment "ns/svc:p has no endpoints" -m tcp -p tcp -d 10.0.0.9/32 --dport 80 -j REJECT\nCOMMIT\n',
    );
    assert.deepEqual(
      rs.tables.map((t) => [t.name, t.ruleCount]),
      [['filter', 1]],
    );
    assert.ok(!rs.warnings.some((w) => w.kind === 'table'));
  });
});

describe('pastes cut short', () => {
  it('a table with no COMMIT is read up to the cut', () => {
    const cut = SAVE.slice(0, SAVE.lastIndexOf('COMMIT'));
    const rs = parseIptables(cut);
    assert.equal(rs.ruleCount, CLEAN_SAVE.ruleCount);
    const last = rs.warnings.at(-1)!;
    assert.equal(last.kind, 'truncated');
    assert.match(
      last.message,
      new RegExp(`cut short after line ${lines(cut).length}: table filter has no COMMIT`),
    );
  });

  it('a last line cut mid-rule is left out, with or without a *table line', () => {
    // the nat table of the save dump, cut inside the quoted comment of its line 82
    const nat = lines(SAVE).slice(23, 81);
    const cut = [
      ...nat,
      '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-',
    ];
    // a paste saved to a file ends in a newline (and blank lines) after the cut line too
    for (const [text, end] of [
      [cut, ''],
      [cut.slice(1), ''],
      [cut, '\n'],
      [cut, '\n\n  \n'],
    ] as const) {
      const rs = parseIptables(text.join('\n') + end, { table: 'nat' });
      assert.equal(rs.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1);
      const w = rs.warnings.find((x) => x.kind === 'truncated')!;
      assert.equal(w.line, text.length);
      assert.match(
        w.message,
        new RegExp(
          `^the paste is cut at line ${text.length}: it ends mid-rule \\(unterminated quoted string\\)`,
        ),
      );
    }
  });

  // a *nat table whose last rule jumps to a Service chain, its name cut to `hash` characters
  const nat = (hash: string, after: string[] = []) =>
    [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      `-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-${hash}`,
      ...after,
    ].join('\n');
  const truncated = (rs: Ruleset) =>
    rs.warnings.filter((w) => w.kind === 'truncated').map((w) => [w.line, w.message]);

  it("a save table whose last line is cut says the cut once: its missing COMMIT is the cut's", () => {
    const name = parseIptables(nat('AAAAAAA'));
    assert.deepEqual(truncated(name), [
      [
        3,
        'the paste is cut at line 3: it ends mid-word in KUBE-SVC-AAAAAAA, 7 of the 16 characters kube-proxy writes after KUBE-SVC-: the rule is read, the chain it names is not in the paste',
      ],
    ]);
    // what it does not say, it still knows: the chain the cut falls in may go on past it
    assert.match(name.table('nat')!.partial.get('KUBE-SERVICES') ?? '', /the paste is cut/);
    const rule = parseIptables(`${nat('AAAAAAAAAAAAAAAA')}\n-A KUBE-SERVICES -d 10.96.0.10/32`);
    assert.deepEqual(
      truncated(rule).map(([line]) => line),
      [4],
    );
    assert.match(String(truncated(rule)[0]![1]), /^the paste is cut at line 4: it ends mid-rule/);
  });

  it("a last rule cut in or after its target option's name is a cut, not a whole rule", () => {
    const declared = [
      '-P PREROUTING ACCEPT',
      '-N KUBE-MARK-DROP',
      '-N KUBE-SEP-AAAAAAAAAAAAAAAA',
      '-N KUBE-SVC-AAAAAAAAAAAAAAAA',
    ];
    for (const [last, why] of [
      ['-A KUBE-MARK-DROP -j MARK --set-xm', 'inside its MARK option\'s name \\("--set-xm"\\)'],
      ['-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m tcp -j DNAT --to-destination', 'DNAT without'],
      // libxt_MARK prints the mark and its mask whole: "0x4000/" stops inside the value
      ['-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/', 'inside its value \\("0x8000/"'],
      ['-A KUBE-MARK-DROP -j MARK --set-xmark 0x', 'inside its value \\("0x"'],
    ] as const) {
      const rs = parseIptables([...declared, last].join('\n'), { table: 'nat' });
      const cut = truncated(rs);
      assert.equal(cut.length, 1, last);
      assert.match(String(cut[0]![1]), new RegExp(`cut at line 5: it ends mid-rule .*${why}`));
      // the chains declared above the cut have their rules past it: none is claimed empty
      assert.match(rs.table('nat')!.partial.get('KUBE-SVC-AAAAAAAAAAAAAAAA') ?? '', /cut/);
    }
    // whole: a flag option ends a rule, and MARK's value follows its option
    for (const last of [
      '-A KUBE-POSTROUTING -j MASQUERADE --random-fully',
      '-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000',
    ])
      assert.deepEqual(
        truncated(parseIptables([...declared, last].join('\n'), { table: 'nat' })),
        [],
      );
  });

  it('a rule wrapped by the terminal onto the next line (mid-word) is read as one rule', () => {
    const jump =
      '-A PREROUTING -m addrtype --dst-type LOCAL -m comment --comment "handle service NodePorts; NOTE: this must be the last rule in the chain" -j KUBE-NODEPORT-CONTAINER';
    const wrapAt = jump.length - 6; // "...-j KUBE-NODEPORT-CON" then "TAINER"
    const dump = (rule: string[]) =>
      [
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':KUBE-NODEPORT-CONTAINER - [0:0]',
        ...rule,
        '-A KUBE-NODEPORT-CONTAINER -p tcp -m comment --comment "default/my-nginx:" -m tcp --dport 32749 -j REDIRECT --to-ports 39018',
        'COMMIT',
      ].join('\n');
    const rs = parseIptables(dump([`${jump.slice(0, wrapAt)}`, `${jump.slice(wrapAt)} `]));
    const nat = rs.table('nat')!;
    assert.deepEqual(
      nat.chain('PREROUTING')!.rules.map((r) => r.target?.name),
      ['KUBE-NODEPORT-CONTAINER'],
    );
    const said = rs.warnings
      .filter((w) => w.kind !== 'mode')
      .map((w) => [w.kind, w.line, w.message]);
    assert.deepEqual(said, [
      [
        'view',
        4,
        'lines 4-5: a rule longer than the terminal it was copied from, gone on at the start of the next line: read as one rule',
      ],
    ]);
    // prose after a rule no longer than the lines above it is prose, not the rule's rest
    const prose = parseIptables(dump([jump, 'TAINER is what this says']));
    assert.equal(prose.table('nat')!.chain('PREROUTING')!.ruleCount, 1);
    assert.ok(prose.warnings.some((w) => w.kind === 'prose' && w.line === 5));
  });

  it('a whole rule, the longest line, then a word of its own: no wrap, the word is prose', () => {
    const dnat =
      '-A KUBE-SEP-BWHGELGX6BITPZVO -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp" -m tcp -j DNAT --to-destination 10.244.1.2:53';
    const masq =
      '-A KUBE-SERVICES ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-MARK-MASQ';
    for (const [rule, word] of [
      [dnat, 'Thanks'],
      [masq, 'exit'],
      [dnat, 'root@k8s-master:~#'],
    ] as const) {
      const rs = parseIptables(
        [
          '*nat',
          ':KUBE-SERVICES - [0:0]',
          ':KUBE-MARK-MASQ - [0:0]',
          ':KUBE-SEP-BWHGELGX6BITPZVO - [0:0]',
          rule,
          word,
        ].join('\n'),
      );
      const t = rs.table('nat')!;
      const last = t.chain(rule.split(' ')[1]!)!.rules.at(-1)!;
      assert.equal(
        rule.endsWith(last.target!.name) || rule.includes(`--to-destination 10.244.1.2:53`),
        true,
      );
      assert.ok(!rs.warnings.some((w) => /longer than the terminal/.test(w.message)), word);
    }
    // a cut address completed by the next line is a wrap
    const cut = dnat.length - 4; // "...--to-destination 10.244.1." then "2:53"
    const rs = parseIptables(
      [
        '*nat',
        ':KUBE-SEP-BWHGELGX6BITPZVO - [0:0]',
        '-A KUBE-SEP-BWHGELGX6BITPZVO -j RETURN',
        dnat.slice(0, cut),
        dnat.slice(cut),
        'COMMIT',
      ].join('\n'),
    );
    assert.ok(
      rs.warnings.some((w) => /lines 4-5: a rule longer than the terminal/.test(w.message)),
    );
  });

  it('a save table that ends in "...": the elision is why it has no COMMIT, said once', () => {
    const whole = nat('AAAAAAAAAAAAAAAA');
    const rs = parseIptables(`${whole}\n...\n\n`);
    assert.deepEqual(
      rs.warnings.filter((w) => w.kind !== 'blank').map((w) => [w.kind, w.line, w.message]),
      [
        [
          'truncated',
          4,
          'the paste ends in an elision at line 4 ("..."): the rest of table nat, its COMMIT with it, is not in the paste; read up to there',
        ],
      ],
    );
    assert.equal(
      rs.table('nat')!.partial.get('KUBE-SERVICES'),
      'the paste elides lines after it: more of its rules may be there',
    );
    // an elision with rules after it is one of its own: the missing COMMIT is the paste's end
    const inside = parseIptables(`${whole}\n...\n-A KUBE-SERVICES -j RETURN\n`);
    assert.deepEqual(
      inside.warnings.map((w) => [w.kind, w.line]),
      [
        ['elided', 4],
        ['truncated', 5],
      ],
    );
  });

  it('a name cut short inside a table that also lacks its COMMIT: the missing COMMIT said on its own', () => {
    // mid-paste a short name is no cut (the line goes on to its newline): the table's end is
    const whole = `-A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -m comment --comment "default/k:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-BBBBBBBBBBBBBBBB`;
    const rs = parseIptables(`${nat('AAAAAAA', [whole])}\n`);
    assert.deepEqual(truncated(rs), [
      [4, 'the dump looks cut short after line 4: table nat has no COMMIT; read up to there'],
    ]);
  });
});

describe("a paste copied off a terminal's screen", () => {
  it('rows padded to its width and run together, a line wrapped at it: read row by row', () => {
    const W = 120;
    const row = (t: string) => t.padEnd(W, ' ');
    const dnat =
      'DNAT       tcp  --  anywhere             anywhere             /* default/kubernetes:https */ recent: SET name: KUBE-SEP-PJZO5AYPZ3OGMFYJ side: source mask: 255.255.255.255 tcp to:172.28.128.6:8443';
    const screen = [
      row('Chain KUBE-SEP-PJZO5AYPZ3OGMFYJ (2 references)') +
        row('target     prot opt source               destination'),
      row(
        'KUBE-MARK-MASQ  all  --  172.28.128.6         anywhere             /* default/kubernetes:https */',
      ),
      dnat.slice(0, W),
      dnat.slice(W),
    ].join('\n');
    // as copied, and with the blanks that end each line stripped (by an editor, or a page)
    for (const text of [screen, screen.replace(/ +$/gm, '')]) {
      const rs = parseIptables(text);
      assert.match(rs.warnings[0]!.message, /^copied off a terminal 120 columns wide/);
      const sep = rs.table('nat')!.chain('KUBE-SEP-PJZO5AYPZ3OGMFYJ')!;
      assert.deepEqual(
        sep.rules.map((r) => printRule(r)),
        [
          '-A KUBE-SEP-PJZO5AYPZ3OGMFYJ -s 172.28.128.6/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ',
          '-A KUBE-SEP-PJZO5AYPZ3OGMFYJ -p tcp -m comment --comment "default/kubernetes:https" -m recent --set --name KUBE-SEP-PJZO5AYPZ3OGMFYJ --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 172.28.128.6:8443',
        ],
      );
    }
  });
});

describe('segments of an iptables-save dump', () => {
  const SEP = 'KUBE-SEP-WAUCGDKZ7FS22SOS';
  const nat = [
    '*nat',
    `:${SEP} - [0:0]`,
    '-A KUBE-SERVICES -d 100.64.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
    `-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https" -j ${SEP}`,
  ];
  const endpoint = (rs: Ruleset) =>
    buildServiceTrees(rs).services.find((t) => t.name === 'default/kubernetes:https')!
      .endpoints[0]!;

  it("one in iptables-save -c's form without its *table line starts inside the table; a cut rule's own chain is the one cut", () => {
    const rs = parseIptables(
      [
        '[0:0] -A KUBE-SEP-6B5SP7D5ASD3CW5Y -p tcp -m tcp -j DNAT --to-destination [fd00::111]:6443',
        '[0:0] -A KUBE-SEP-HV7FJCKRVMU7FEF3 -s fd00:3000::c6c0/128 -j KUBE-MARK-MASQ',
        '[0:0] -A KUBE-SEP-HV7FJCKRVMU7FEF3 -p udp -m udp -j DNAT --to-destination [fd00:3000::c6c0]:53',
        '[0:0] -A KUBE-SEP-V3SQHT4VN75PHYKP -s fd00:3000::5583/12',
      ].join('\n'),
    );
    const nat = rs.table('nat')!;
    // -c prints "[packets:bytes]" inside *table ... COMMIT only: the first chain's masquerade
    // rule lies above the part pasted
    assert.deepEqual([...nat.partial.keys()], ['KUBE-SEP-6B5SP7D5ASD3CW5Y']);
    assert.ok(nat.cutAbove.has('KUBE-SEP-6B5SP7D5ASD3CW5Y'));
    // the last line starts a chain the paste holds nothing else of: the one before it is whole
    assert.equal(nat.chain('KUBE-SEP-HV7FJCKRVMU7FEF3')!.ruleCount, 2);
    assert.equal(nat.family, 'IPv6');
  });

  it('one that starts inside a table: the rules before its COMMIT are that table, read', () => {
    const rs = parseIptables(
      [
        '-A KUBE-SERVICES -d 100.64.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns has no endpoints" -m udp --dport 53 -j REJECT',
        'COMMIT',
        ...nat,
        `-A ${SEP} -s 51.254.1.2/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ`,
        `-A ${SEP} -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination 51.254.1.2:8080`,
        'COMMIT',
      ].join('\n'),
    );
    assert.deepEqual(
      rs.tables.map((t) => [t.name, t.ruleCount]),
      [
        ['filter', 1],
        ['nat', 4],
      ],
    );
    assert.ok(
      rs.warnings.some((w) =>
        /^COMMIT ends the rules from line 1: the end of an iptables-save table whose \*table line is above the paste$/.test(
          w.message,
        ),
      ),
    );
    // the chain it starts in may have rules above the paste
    assert.match(rs.table('filter')!.partial.get('KUBE-SERVICES') ?? '', /starts inside it/);
  });

  it('one cut inside a chain declaration: read up to the cut, not refused', () => {
    const rs = parseIptables([...nat.slice(0, 2), ':KUBE-POS'].join('\n'));
    assert.match(
      rs.warnings.find((w) => w.kind === 'truncated')!.message,
      /cut at line 3: it ends mid-line \(a chain declaration\), not read: ":KUBE-POS"/,
    );
  });

  it('an endpoint chain cut before its DNAT rule: its target and hairpin rule unknown, not absent', () => {
    const ep = endpoint(
      parseIptables(
        [
          ...nat,
          `-A ${SEP} -s 51.254.1.2/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ`,
          `-A ${SEP} -m comment`,
        ].join('\n'),
      ),
    );
    assert.equal(ep.address, undefined);
    assert.match(ep.chainPartial ?? '', /cut inside it/);
    const cutEarlier = endpoint(parseIptables([...nat, `-A ${SEP} -m comment`].join('\n')));
    assert.equal(
      cutEarlier.hairpinMasquerade,
      null,
      'declared, but its hairpin rule may lie past the cut',
    );
  });

  it('an address hidden by hand (xxx): that rule is not read, its chain not claimed whole', () => {
    const rs = parseIptables(
      [
        ...nat,
        `-A ${SEP} -s 51.254.xxx.xxx/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ`,
        `-A ${SEP} -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination 51.254.1.2:8080`,
        'COMMIT',
      ].join('\n'),
    );
    assert.ok(
      rs.warnings.some(
        (w) =>
          w.kind === 'redacted' &&
          w.line === 5 &&
          /"51\.254\.xxx\.xxx\/32" was hidden by hand/.test(w.message),
      ),
    );
    const ep = endpoint(rs);
    assert.equal(ep.address, '51.254.1.2:8080');
    assert.equal(ep.hairpinMasquerade, null, 'its hairpin rule is the one not read');
  });
});

describe('iptables -L pastes cut short', () => {
  // canonical/microk8s#2890: `iptables -t nat -L -n -v` cut mid-address on its last line
  const HEADER = ' pkts bytes target     prot opt in     out     source               destination';
  const listing = (last: string) =>
    [
      'Chain KUBE-SERVICES (2 references)',
      HEADER,
      ' 1605 96300 KUBE-SVC-Z4ANX4WAEWEBLCTM  tcp  --  *      *       0.0.0.0/0            10.152.183.46        /* kube-system/metrics-server:https cluster IP */ tcp dpt:443',
      last,
    ].join('\n');

  it('a last rule cut mid-address is a cut, its chain read in part, not a rule to no address', () => {
    const rs = parseIptables(
      listing(
        '    0     0 KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  *      *       0.0.0.0/0            10.152.183.',
      ),
      { table: 'nat' },
    );
    assert.equal(rs.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1);
    const w = rs.warnings.find((x) => x.kind === 'truncated')!;
    assert.equal(w.line, 4);
    assert.match(w.message, /cut at line 4: it ends mid-rule/);
    assert.ok(rs.table('nat')!.partial.has('KUBE-SERVICES'));
    // -L prints the target first: the cut line names it, as the paste shows the line
    assert.match(
      w.message,
      /\(-L printed its target KUBE-SVC-TCOU7JCQXEZGVUNU, protocol udp, and its destination cut at "10\.152\.183\."\), not read: "0 {5}0 KUBE-SVC-TCOU7JCQXEZGVUNU/,
    );
  });

  it('the chain a cut line is in is the one cut, not the chain listed before it', () => {
    const rs = parseIptables(
      [
        'Chain KUBE-SEP-YSVAKJLNBVVBENUI (1 references)',
        HEADER,
        '    0     0 DNAT       tcp  --  *      *       0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-registry:registry */ tcp to:192.168.75.32:5000',
        '',
        'Chain KUBE-SERVICES (2 references)',
        HEADER,
        '    0     0 KUBE-MARK-MASQ  tcp  --  any',
      ].join('\n'),
      { table: 'nat' },
    );
    assert.deepEqual([...rs.table('nat')!.partial.keys()], ['KUBE-SERVICES']);
  });

  it('a last line cut before its protocol or inside its counters names what -L printed', () => {
    const cut = (last: string) =>
      parseIptables(listing(last), { table: 'nat' }).warnings.find((x) => x.kind === 'truncated')
        ?.message;
    assert.match(
      cut('    0     0 DROP       all  --  *') ?? '',
      /-L printed its target DROP, protocol all, then the cut/,
    );
    assert.match(
      cut('    0     0 KUBE-MARK-MASQ') ?? '',
      /-L printed its target KUBE-MARK-MASQ, then the cut/,
    );
    // -v prints a packet count, then a byte count, before the target: a cut says which it holds
    assert.match(cut('    0') ?? '', /\(-L printed only its packet count\)/);
    assert.match(cut('    0     0') ?? '', /\(-L printed only its packet and byte counts\)/);
    const numbered = (last: string) =>
      parseIptables(
        [
          'Chain KUBE-SERVICES (2 references)',
          `num  ${HEADER}`,
          `1    ${listing('').split('\n')[2]!}`,
          last,
        ].join('\n'),
        { table: 'nat' },
      ).warnings.find((x) => x.kind === 'truncated')?.message;
    assert.match(numbered('2') ?? '', /\(-L printed only its number\)/);
    assert.match(numbered('2    0') ?? '', /\(-L printed only its number and packet count\)/);
  });

  it('a last line cut inside what a match or its target prints is a cut, not a rule', () => {
    const sep = (last: string) =>
      parseIptables(
        [
          'Chain KUBE-SEP-NALPWJLJVSZNTJRD (2 references)',
          'target     prot opt source               destination',
          'KUBE-MARK-MASQ  all  --  10.244.0.7           anywhere             /* default/kubernetes:dns */',
          last,
        ].join('\n'),
        { table: 'nat' },
      );
    const dnat =
      'DNAT       udp  --  anywhere             anywhere             /* default/kubernetes:dns */';
    for (const [last, inside] of [
      [`${dnat} recent: SET name: KUBE-SEP-NALPWJLJVSZNTJRD side: sou`, 'side: sou'],
      [`${dnat} udp to:10.244.`, 'to:10.244.'],
      [
        'DNAT       udp  --  anywhere             anywhere             /* default/kuber',
        '/\\* default/kuber',
      ],
      [`${dnat} ud`, 'ud'],
      [dnat, null], // DNAT's to: is always printed: the line stops before it
    ] as const) {
      const rs = sep(last);
      assert.equal(rs.table('nat')!.chain('KUBE-SEP-NALPWJLJVSZNTJRD')!.ruleCount, 1, last);
      assert.ok(rs.table('nat')!.partial.has('KUBE-SEP-NALPWJLJVSZNTJRD'), last);
      const w = rs.warnings.find((x) => x.kind === 'truncated')?.message ?? '';
      assert.match(
        w,
        inside === null
          ? /its addresses, not the option -L prints for DNAT/
          : new RegExp(`then the cut inside "(?:…[^"]*)?${inside}"`),
        last,
      );
    }
    // a whole line whose match kdebug does not read is a rule (its match kept as not read)
    for (const last of [
      `${dnat} udp to:10.244.0.7:53`,
      'KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  anywhere  10.96.0.10  /* kube-system/kube-dns:dns cluster IP */ multiport sports 53,54',
    ]) {
      const rs = sep(last);
      assert.ok(!rs.warnings.some((x) => x.kind === 'truncated'), last);
      assert.equal(rs.table('nat')!.ruleCount, 2, last);
    }
  });

  it('a last line cut inside a Chain line or a column header is a cut, and no rule', () => {
    for (const [last, inside] of [
      ['Chain', 'a Chain line'],
      ['Chain KUBE-SEP-O5ROI2O3K6SCVUFM (', 'a Chain line'],
      [' pkts bytes target', 'a column header'],
      // cut in its last column's name, with or without -v's columns
      [
        ' pkts bytes target     prot opt in     out     source               destin',
        'a column header',
      ],
      ['target     prot opt source               dest', 'a column header'],
    ]) {
      const rs = parseIptables(listing(last!), { table: 'nat' });
      assert.equal(rs.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1, last);
      const w = rs.warnings.find((x) => x.kind === 'truncated');
      assert.equal(w?.line, 4, last);
      assert.match(
        w.message,
        new RegExp(`cut at line 4: it ends inside ${inside}, not read`),
        last,
      );
      assert.ok(!rs.warnings.some((x) => x.kind === 'foreign'), last);
      // a Chain line cut ends the chain listed before it whole: only what follows is cut
      assert.deepEqual([...rs.table('nat')!.partial.keys()], [], last);
    }
    // a column header cut: its chain's rules lie past the cut, and no other chain's
    const rs = parseIptables(
      [
        listing(''),
        'Chain KUBE-MARK-DROP (0 references)',
        '',
        'Chain KUBE-SEP-A (1 references)',
        ' pkts bytes tar',
      ].join('\n'),
      { table: 'nat' },
    );
    assert.deepEqual([...rs.table('nat')!.partial.keys()], ['KUBE-SEP-A']);
  });

  it('two -L rows run together on one line (the line end after a comment lost): both read', () => {
    for (const [header, pad] of [
      ['target     prot opt source               destination', ''],
      [
        ' pkts bytes target     prot opt in     out     source               destination',
        '    5   300 ',
      ],
    ]) {
      const ifs = pad ? '*      *       ' : '';
      const rs = parseIptables(
        [
          '> iptables -L -n',
          'Chain INPUT (policy ACCEPT)',
          header,
          `${pad}KUBE-EXTERNAL-SERVICES  all  --  ${ifs}0.0.0.0/0            0.0.0.0/0            ctstate NEW /* kubernetes externally-visible service portals */${pad}KUBE-FIREWALL  all  --  ${ifs}0.0.0.0/0            0.0.0.0/0`,
          '',
        ].join('\n'),
      );
      // the quoted command names the table (filter, -L's default)
      assert.deepEqual(
        rs.tables.map((t) => t.name),
        ['filter'],
      );
      const input = rs.table('filter')!.chain('INPUT')!;
      assert.deepEqual(
        input.rules.map((r) => r.target?.name),
        ['KUBE-EXTERNAL-SERVICES', 'KUBE-FIREWALL'],
        header,
      );
      assert.ok(rs.warnings.some((w) => w.kind === 'joined' && w.line === 4));
    }
  });

  it('a row broken after its counters or number, a column header after "pkts bytes": read with the next line', () => {
    const whole = listing(
      '    0     0 KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  *      *       0.0.0.0/0            10.152.183.10        /* kube-system/kube-dns:dns cluster IP */ udp dpt:53',
    );
    const rules = (rs: Ruleset) =>
      rs
        .table('nat')!
        .chain('KUBE-SERVICES')!
        .ruleIds.map((id) => rs.table('nat')!.text(id));
    const clean = rules(parseIptables(whole, { table: 'nat' }));
    assert.equal(clean.length, 2);
    const [chainLine, header, first, second] = whole.split('\n') as [
      string,
      string,
      string,
      string,
    ];
    for (const [text, note] of [
      // a page broke the row after -v's packet and byte counts
      [
        [chainLine, header, first, '    0     0', second.slice(12)].join('\n'),
        /^line 4: a rule's first columns \(its counters or number\) on a line of their own, the rest of the row on the next: read as one row$/,
      ],
      [
        [chainLine, ' pkts bytes', header.slice(12), first, second].join('\n'),
        /^line 2: a column header's first words on a line of their own/,
      ],
    ] as const) {
      const rs = parseIptables(text, { table: 'nat' });
      assert.deepEqual(rules(rs), clean, text);
      assert.ok(
        rs.warnings.some((w) => note.test(w.message)),
        text,
      );
      assert.ok(!rs.warnings.some((w) => ['prose', 'foreign'].includes(w.kind)), text);
    }
    // --line-numbers' number alone, its row after it
    const numbered = [
      'Chain KUBE-SERVICES (2 references)',
      'num  target     prot opt source               destination',
      '1',
      'KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  0.0.0.0/0            10.152.183.10        udp dpt:53',
      '2    RETURN     all  --  0.0.0.0/0            0.0.0.0/0',
    ].join('\n');
    assert.equal(parseIptables(numbered, { table: 'nat' }).table('nat')!.ruleCount, 2);
  });

  it('counters without their row in the middle of a listing: that rule not read, its chain not whole', () => {
    const [chainLine, header, first] = listing('').split('\n') as [string, string, string];
    const text = [chainLine, header, '    0     0', first].join('\n');
    // the counters line is followed by a whole row: it is a row of its own, broken
    const rs = parseIptables(text, { table: 'nat' });
    const w = rs.warnings.find((x) => x.kind === 'counters');
    assert.equal(w?.line, 3);
    assert.match(w?.message ?? '', /a rule of KUBE-SERVICES not read/);
    assert.deepEqual([...rs.table('nat')!.partial.keys()], ['KUBE-SERVICES']);
    assert.equal(rs.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1);
    // nothing is said of the Services the chain's unread rule may lead to
    const x = readPaste(text, { file: 'p.txt' });
    assert.ok(x.mode === 'iptables');
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /no Service rules found/);
  });

  it('-L -v: counters alone, then a whole row with its own counters: never joined into one rule', () => {
    const text = [
      'Chain KUBE-SERVICES (2 references)',
      ' pkts bytes target     prot opt in     out     source               destination',
      '    0     0',
      '    0     0 KUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  *      *       0.0.0.0/0            10.96.0.1            /* default/kubernetes:https cluster IP */ tcp dpt:443',
    ].join('\n');
    const rs = parseIptables(text, { table: 'nat' });
    assert.equal(rs.warnings.find((x) => x.kind === 'counters')?.line, 3);
    const nat = rs.table('nat')!;
    assert.deepEqual(
      nat.chain('KUBE-SERVICES')!.ruleIds.map((id) => nat.text(id)),
      [
        '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
      ],
    );
  });

  it('a paste that ends on a whole Chain line or column header (plain -L too): its chain is not claimed empty', () => {
    // `iptables -t nat -L` without -n or -v: names, and no counters in the Chain lines
    const plain = [
      'Chain PREROUTING (policy ACCEPT)',
      'target     prot opt source               destination',
      'KUBE-SERVICES  all  --  anywhere             anywhere             /* kubernetes service portals */',
      '',
    ];
    for (const [end, chain, said] of [
      [
        ['Chain KUBE-SERVICES (2 references)'],
        'KUBE-SERVICES',
        /the paste ends after the Chain line of KUBE-SERVICES, before its column header/,
      ],
      [
        ['Chain POSTROUTING (policy ACCEPT)'],
        'POSTROUTING',
        /the paste ends after the Chain line of POSTROUTING/,
      ],
      [
        ['Chain POSTROUTING (policy ACCEPT 0 packets, 0 bytes)'],
        'POSTROUTING',
        /after the Chain line of POSTROUTING/,
      ],
      [
        ['Chain KUBE-SERVICES (2 references)', plain[1]!],
        'KUBE-SERVICES',
        /the paste ends after the column header of KUBE-SERVICES: its rules, if it has any, are not in it/,
      ],
    ] as const) {
      const text = [...plain, ...end, ''].join('\n');
      const rs = parseIptables(text, { table: 'nat' });
      const w = rs.warnings.find((x) => x.kind === 'truncated');
      assert.match(w?.message ?? '', said, text);
      assert.deepEqual([...rs.table('nat')!.partial.keys()], [chain], text);
      const x = readPaste(text, { file: 'p.txt' });
      assert.ok(x.mode === 'iptables');
      assert.doesNotMatch(
        rulesText(x.dump, x.trees, { label: 'p' }),
        /no Service rules found/,
        text,
      );
    }
    // a first word cut short may be a Chain line's or a rule's target: the chain above is not whole
    const rs = parseIptables([...plain.slice(0, 3), 'Cha'].join('\n'), { table: 'nat' });
    assert.match(
      rs.warnings.find((x) => x.kind === 'truncated')?.message ?? '',
      /cut at line 4: it ends inside a Chain line or a rule's target, not read: "Cha"/,
    );
    assert.deepEqual([...rs.table('nat')!.partial.keys()], ['PREROUTING']);
  });

  it('a *nat ... COMMIT block without rules is the whole nat table, empty, not a part of it', () => {
    const x = readPaste(
      ['# Generated by iptables-save v1.8.4', '*nat', ':PREROUTING ACCEPT [0:0]', 'COMMIT'].join(
        '\n',
      ),
      { file: 'p.txt' },
    );
    assert.ok(x.mode === 'iptables');
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /the paste holds the whole nat table, and it holds no\s+rules/);
    assert.doesNotMatch(text, /part of the nat table/);
  });

  it('a paste of part of the nat table says KUBE-SERVICES is not in it, not "no Service rules found"', () => {
    const said = (text: string) => {
      const x = readPaste(text, { file: 'p.txt' });
      return x.mode === 'iptables' ? rulesText(x.dump, x.trees, { label: 'p' }) : '';
    };
    const sep = [
      'Chain KUBE-SEP-NPQ2VIAEH3BD3ESR (2 references)',
      'target     prot opt source               destination',
      'KUBE-MARK-MASQ  all  --  10.244.0.9           0.0.0.0/0            /* default/kubernetes:dns-tcp */',
      'DNAT       tcp  --  0.0.0.0/0            0.0.0.0/0            /* default/kubernetes:dns-tcp */ tcp to:10.244.0.9:8053',
      '',
    ];
    // cut in the next Chain line, cut in a column header, or one chain listed whole
    for (const tail of [
      'Chain KUBE-SEP-O5ROI2O3K6SCVUFM (',
      'Chain KUBE-SERVICES (2 references)\ntarget     prot',
      '',
    ]) {
      const text = said([...sep, tail].join('\n'));
      assert.doesNotMatch(text, /no Service rules found/, tail);
      if (tail.includes('KUBE-SERVICES')) {
        assert.match(text, /no Service entry in the paste: .*KUBE-SERVICES/, tail);
        assert.match(text, /chains no rule in the paste reaches, not called orphans/, tail);
      } else {
        // the endpoint chain's comment names its Service port, whose entry is not in the paste
        assert.match(text, /entry not in this paste \(no KUBE-SERVICES rules in it\)/, tail);
        assert.match(text, /KUBE-SEP-NPQ2VIAEH3BD3ESR {2}DNAT -> 10\.244\.0\.9:8053/, tail);
      }
    }
    // the whole table (its built-in chains listed) without KUBE-SERVICES holds no Service rules
    const whole = ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'].map(
      (c) => `Chain ${c} (policy ACCEPT)\ntarget     prot opt source               destination\n`,
    );
    assert.match(said([...whole, ...sep].join('\n')), /no Service rules found/);
  });

  it("a cut in filter after nat's COMMIT leaves nat whole: its orphans are proven (jumps cross no table)", () => {
    const nat = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]
:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "default/gone:http -> 10.244.0.5:80" -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "default/gone:http" -m tcp -j DNAT --to-destination 10.244.0.5:80
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FORWARD - [0:0]
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
`;
    const said = (text: string) => {
      const x = readPaste(text, { file: 'p.txt' });
      return x.mode === 'iptables' ? rulesText(x.dump, x.trees, { label: 'p' }) : '';
    };
    const text = said(nat);
    assert.match(text, /cut short/);
    assert.match(text, /orphan chains \(no entry point reaches them\): KUBE-SEP-BBBBBBBBBBBBBBBB/);
    assert.doesNotMatch(text, /not called orphans/);
    // cut inside nat itself: its orphans are not proven
    const inNat = said(nat.slice(0, nat.indexOf('COMMIT')));
    assert.match(inNat, /not called orphans \(the dump is cut short/);
  });

  it('rules above the first Chain line: their chain is not in the paste, said so, not "another listing"', () => {
    const rs = parseIptables(
      [
        HEADER, // the paste starts between a Chain line and its column header
        '    0     0 KUBE-MARK-MASQ  all  --  *      *       192.168.22.19        0.0.0.0/0            /* default/kubernetes:https */',
        '',
        listing(
          '    0     0 KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  *      *       0.0.0.0/0            10.152.183.',
        ),
      ].join('\n'),
      { table: 'nat' },
    );
    // a hairpin rule is written in an endpoint's chain, whose name needs the port it does not hold
    assert.ok(
      rs.warnings.some(
        (x) =>
          x.message ===
          'line 2: rules of a chain whose Chain line is above the paste, not in it: not read (their chain is not known)',
      ),
    );
    assert.ok(!rs.warnings.some((x) => x.kind === 'foreign'));
    assert.deepEqual(
      rs.table('nat')!.chains.map((c) => c.name),
      ['KUBE-SERVICES'],
    );
  });

  it('rules above the first Chain line are read where what kube-proxy writes in them names their chain', () => {
    const NO_V = 'target     prot opt source               destination';
    const text = [
      NO_V,
      // k3s (cht-core#6876): a node port's masquerade and jump, written in KUBE-NODEPORTS alone
      'KUBE-MARK-MASQ  tcp  --  anywhere             anywhere             /* kube-system/traefik:http */ tcp dpt:30579',
      'KUBE-SVC-X3WUOHPTYIG7AA3Q  tcp  --  anywhere             anywhere             /* kube-system/traefik:http */ tcp dpt:30579',
      // an endpoint's DNAT: its chain is named by the hash of the Service port, protocol and address
      'DNAT       tcp  --  anywhere             anywhere             /* kube-system/traefik:http */ tcp to:10.42.0.56:80',
      // written in KUBE-SERVICES before v1.21 and in KUBE-SVC after: no one chain
      'KUBE-MARK-MASQ  tcp  -- !10.42.0.0/16         10.43.0.10           /* kube-system/kube-dns:dns-tcp cluster IP */ tcp dpt:53',
      // the bare name and a port, but no jump kube-proxy writes there
      'ACCEPT     tcp  --  anywhere             anywhere             /* kube-system/traefik:http */ tcp dpt:30579',
      '',
      'Chain KUBE-POSTROUTING (1 references)',
      NO_V,
      'MASQUERADE  all  --  anywhere             anywhere             /* kubernetes service traffic requiring SNAT */ random-fully',
    ].join('\n');
    const rs = parseIptables(text, { file: 'nat-L.txt' });
    const nat = rs.table('nat')!;
    const sep = endpointChain('kube-system/traefik:http', 'tcp', '10.42.0.56:80');
    assert.equal(sep, 'KUBE-SEP-3D2PP3ZX6YNMQERR', 'the chain the real paste names');
    assert.deepEqual(
      nat.chains.map((c) => `${c.name} ${c.ruleCount}`),
      ['KUBE-NODEPORTS 2', `${sep} 1`, 'KUBE-POSTROUTING 1'],
    );
    assert.equal(nat.chain('KUBE-NODEPORTS')!.line, undefined, 'no Chain line is made up');
    const note = rs.warnings.find((w) => w.message.includes('Chain line is above'))!.message;
    assert.match(
      note,
      /^lines 2, 3, 4, 5, 6: rules of a chain whose Chain line is above the paste, not in it: lines 2, 3 read as KUBE-NODEPORTS's, the chain inferred from .*; line 4 read as KUBE-SEP-3D2PP3ZX6YNMQERR's, .*; lines 5, 6 not read \(nothing kube-proxy writes in them names one chain: their chain is not known\)$/,
    );
    // their first rules lie above the paste: no share, and no chain claimed whole
    for (const name of ['KUBE-NODEPORTS', sep]) {
      assert.match(nat.partial.get(name) ?? '', /Chain line is above the paste/);
      assert.ok(nat.cutAbove.has(name), name);
    }
    const said = rulesText(rs, buildServiceTrees(rs), { label: 'paste' });
    assert.match(said, /node port 30579\/tcp +\(KUBE-NODEPORTS line 3 ->/);
    assert.match(said, /KUBE-SVC-X3WUOHPTYIG7AA3Q +\(chain not in this paste: its endpoints are/);
    assert.doesNotMatch(said, /no endpoints/);
  });

  it("iptables failing to open one table beside another's rules: said of the table it names", () => {
    const rs = parseIptables(
      [
        '# iptables -t security -L -n',
        "iptables v1.8.7 (legacy): can't initialize iptables table `security': Table does not exist (do you need to insmod?)",
        'Perhaps iptables or your kernel needs to be upgraded.',
        ...lines(NAT_S),
      ].join('\n'),
      { file: 'dump.txt' },
    );
    assert.ok(rs.table('nat')!.ruleCount > 0);
    const said = rs.warnings.find((w) => w.kind === 'foreign')!.message;
    assert.match(said, /open table security .*no IPv4 security table .*iptable_security module/);
    assert.match(said, /its other tables are not affected/);
    assert.doesNotMatch(said, /holds no rules to list/);
  });

  it('a note after the last rule is not a cut', () => {
    const rs = parseIptables(
      listing('# Warning: iptables-legacy tables present, use iptables-legacy to see them'),
      { table: 'nat' },
    );
    assert.equal(rs.table('nat')!.chain('KUBE-SERVICES')!.ruleCount, 1);
    assert.ok(!rs.warnings.some((x) => x.kind === 'truncated'));
  });
});

describe('input that holds no rule at all', () => {
  const cases: { what: string; text: string; message: RegExp }[] = [
    {
      what: 'empty input, its source not said',
      text: '',
      message: /^no iptables rules in dump\.txt: it is empty$/,
    },
    {
      what: 'only a prompt',
      text: '$ sudo iptables-save\n',
      message: /^no iptables rules in dump\.txt/,
    },
    {
      what: 'iptables -L output a web page ran onto one line',
      text: 'Chain KUBE-SERVICES (2 references) target     prot opt source               destination KUBE-SVC-ELCM5PCEQWBTUJ2I  tcp  --  0.0.0.0/0            10.1.190.219         /* default/nginx-svc:http cluster IP */ tcp dpt:8080\n',
      message: /`iptables -L` output that kdebug cannot read line by line.*run `iptables-save`/,
    },
    {
      what: 'iptables-nft rules printed by nft',
      text: 'table ip nat {\n\tchain KUBE-SERVICES {\n\t\tmeta l4proto tcp ip daddr 10.1.190.219 tcp dport 8080 counter packets 0 bytes 0 jump KUBE-SVC-ELCM5PCEQWBTUJ2I\n\t}\n}\n',
      message: /iptables-nft rules as printed by `nft list ruleset`.*run `iptables-nft-save`/,
    },
    {
      what: "kube-proxy's nftables table",
      text: 'table ip kube-proxy {\n\tcomment "rules for kube-proxy"\n\tchain services {\n\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}\n}\n',
      message: /kube-proxy's nftables table.*nftables mode/,
    },
    {
      what: "kube-proxy's nftables table inside nft list ruleset",
      text: 'table ip nat {\n\tchain POSTROUTING {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\t}\n}\ntable ip kube-proxy {\n\tchain services {\n\t}\n}\n',
      message: /nftables mode/,
    },
    {
      what: "prose with a few lines another tool's could start so (a README's code braces)",
      text: 'kdebug reads the rules kube-proxy wrote.\n\n```json\n{\n  "a": 1\n}\n```\nIt compares them with the table kube-proxy should write there.\nEach step says what it saw.\nThe last line.\n',
      message: /^no iptables rules in dump\.txt: none of its 9 lines is a line of iptables-save/,
    },
    {
      what: 'ipvsadm -Ln output',
      text: 'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.1.190.219:8080 rr\n  -> 10.244.0.3:80                Masq    1      0          0\n',
      message: /`ipvsadm` output \(kube-proxy IPVS mode\).*`ipvsadm -Ln`/,
    },
    {
      what: 'ipvsadm-save output',
      text: '-A -t 10.1.190.219:8080 -s rr\n-a -t 10.1.190.219:8080 -r 10.244.0.3:80 -m -w 1\n',
      message: /`ipvsadm` output/,
    },
    {
      what: "kube-proxy's log: its klog lines and the lines its messages run on to",
      text: "I1110 22:35:32.340339       1 shared_informer.go:247] Caches are synced for service config \nE1110 22:50:28.892923       1 proxier.go:1570] Failed to execute iptables-restore: exit status 2 (ip6tables-restore v1.8.3 (legacy): Couldn't load target `KUBE-MARK-DROP':No such file or directory\n\nError occurred at line: 269\n)\n",
      message:
        /^dump\.txt: this is kube-proxy's log: it says what kube-proxy did.*run `iptables-save` on the node \(`ip6tables-save` for IPv6 Services, `ipvsadm -Ln` in IPVS mode, `nft list table ip kube-proxy` in nftables mode\)/,
    },
    {
      what: "rule lines in nft's syntax without their chain or table (another proxy's)",
      text: 'ip saddr != 57.112.0.0/12 ip daddr 57.128.122.183 tcp dport 808 meta mark set 0x00004000 \nip daddr 57.128.122.183 tcp dport 808 jump k8s-nfproxy-svc-TNGJY3JO4IVC7RJC \n',
      message: /nftables rules in nft's own syntax, lines of a chain without their table/,
    },
    {
      what: "rule lines of kube-proxy's nftables chains, by the chains they jump to",
      text: 'ip daddr 10.96.0.1 tcp dport 443 ip saddr != 10.244.0.0/16 jump mark-for-masquerade\n',
      message: /kube-proxy's nftables table \(nftables mode\)/,
    },
    {
      what: "rule lines of iptables-nft's chains in nft's syntax, without counters",
      text: 'meta l4proto tcp ip daddr 10.96.0.1 tcp dport 443 jump KUBE-SVC-NPX46M4PTMTKRN6Y\n',
      message: /iptables-nft rules as printed by `nft list ruleset`/,
    },
    {
      what: 'nft list tables (the names of the tables, not their rules)',
      text: '# nft list tables\ntable ip nat\ntable ip filter\ntable ip kube-proxy\ntable ip6 kube-proxy\n',
      message:
        /`nft list tables` output.*give kdebug `nft list table ip kube-proxy` \(and `nft list table ip6 kube-proxy`\)/,
    },
    {
      what: '`ipvsadm -L --timeout` (ipvsadm.c print_timeout): the timeouts, no virtual server',
      text: '# ipvsadm -L --timeout\nTimeout (tcp tcpfin udp): 900 120 15\n',
      message: /^dump\.txt: this is `ipvsadm -L --timeout` output, IPVS's connection timeouts/,
    },
    {
      what: 'iptables (legacy) and iptables-save failing to open a table the kernel does not have',
      text: "$ sudo iptables -t nat -L -n\niptables v1.6.1: can't initialize iptables table `nat': Table does not exist (do you need to insmod?)\nPerhaps iptables or your kernel needs to be upgraded.\n",
      message:
        /^dump\.txt: this is iptables failing to open table nat .*no IPv4 nat table for this iptables backend \(its iptable_nat module/,
    },
    {
      what: 'ip6tables-save failing to open a table: the IPv6 family named',
      text: 'ip6tables-save v1.8.4 (legacy): Cannot initialize: Table does not exist (do you need to insmod?)\n',
      message:
        /^dump\.txt: this is ip6tables failing to open a table .*no IPv6 netfilter table of the one ip6tables was asked to open/,
    },
    {
      what: "the shell's report of nft's crash, naming it (zsh) or after it was typed (bash)",
      text: 'zsh: segmentation fault (core dumped)  sudo nft list ruleset\n',
      message: /^dump\.txt: this is nft failing where a listing was asked for/,
    },
    {
      what: "bash's crash report after a typed nft, a blank between",
      text: 'root@node:~# nft -a list table ip kube-proxy\n\nBus error (core dumped)\n',
      message: /^dump\.txt: this is nft failing where a listing was asked for/,
    },
    {
      what: "a crash report after another command typed is not said to be nft's",
      text: '$ sudo iptables-save\nSegmentation fault (core dumped)\n',
      message: /^no iptables rules in dump\.txt: none of its 2 lines/,
    },
    {
      what: "kubectl get pods -o wide (kubectl's pod columns)",
      text: 'NAME                     READY   STATUS    RESTARTS   AGE   IP           NODE\nnginx-7c5ddbdf54-2xk8p   1/1     Running   0          3d    10.244.1.5   node-a\n',
      message: /^dump\.txt: this is `kubectl get pods` output, Pods .*: no rules in it;/,
    },
    {
      what: "kubectl get nodes (kubectl's node columns), named as nodes, not endpoints or Services",
      text: 'NAME        STATUS   ROLES           AGE   VERSION\ncontrol-1   Ready    control-plane   12d   v1.30.2\nworker-1    Ready    <none>          12d   v1.30.2\n',
      message:
        /^dump\.txt: this is `kubectl get nodes` output, the cluster's Nodes .*: no rules in it;/,
    },
    {
      what: 'kubectl get nodes -o wide',
      text: 'NAME        STATUS   ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE             KERNEL-VERSION     CONTAINER-RUNTIME\ncontrol-1   Ready    control-plane   12d   v1.30.2   192.0.2.21    <none>        Ubuntu 22.04.4 LTS   5.15.0-105-generic containerd://1.7.13\n',
      message: /^dump\.txt: this is `kubectl get nodes` output/,
    },
    {
      what: 'kubectl get svc -A',
      text: 'NAMESPACE   NAME         TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\ndefault     kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   12d\n',
      message: /^dump\.txt: this is `kubectl get services` output, Services /,
    },
    {
      what: 'kubectl get endpoints',
      text: 'NAME         ENDPOINTS          AGE\nkubernetes   192.0.2.21:6443    12d\n',
      message: /^dump\.txt: this is `kubectl get endpoints` output, Endpoints objects /,
    },
    {
      what: 'kubectl get endpointslices',
      text: 'NAME               ADDRESSTYPE   PORTS   ENDPOINTS    AGE\nkubernetes         IPv4          6443    192.0.2.21   12d\n',
      message: /^dump\.txt: this is `kubectl get endpointslices` output, EndpointSlices /,
    },
    {
      what: 'ipset list output',
      text: 'Name: KUBE-CLUSTER-IP\nType: hash:ip,port\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536\nMembers:\n10.1.190.219,tcp:8080\n',
      message: /`ipset list` output/,
    },
  ];
  // klog names the Go file that logged each line: kube-proxy's own (proxier.go, server_linux.go)
  // say its log; a file every component shares (iptables.go, shared_informer.go) says none
  const klog = (file: string, message: string) =>
    `I0318 09:47:50.453148       1 ${file}:358] ${message}`;
  const logs: { what: string; lines: string[]; whose: RegExp }[] = [
    {
      what: "flannel's klog lines (its iptables.go, not kube-proxy's)",
      lines: [
        klog('iptables.go', 'Some iptables rules are missing; deleting and recreating rules'),
        klog(
          'iptables.go',
          'trying to run iptables-restore < map[nat:[[-A POSTROUTING -m comment --comment flanneld masq -j FLANNEL-POSTRTG]]]',
        ),
        klog('main.go', 'Installing signal handlers'),
      ],
      whose: /^dump\.txt: this is flannel's log, not rules/,
    },
    {
      what: "Antrea's agent log (AntreaProxy's proxier.go logs of OVS flows)",
      lines: [
        klog('shared_informer.go', 'Caches are synced for AntreaAgentNodeRouteController'),
        klog('proxier.go', 'Error when uninstalling ClusterIP flows for Service'),
      ],
      whose: /^dump\.txt: this is Antrea's agent log, not rules/,
    },
    {
      what: "the kubelet's log, that nftables and ip6tables-restore words do not make kube-proxy's",
      lines: [
        klog(
          'kubelet_network_linux.go',
          '"Failed to ensure that iptables hint chain exists" err="ip6tables-restore: nftables"',
        ),
      ],
      whose: /^dump\.txt: this is the kubelet's log, not rules/,
    },
    {
      what: "the kubelet's log naming flannel's CNI plugin is the kubelet's: its file before its words",
      lines: [klog('pod_workers.go', 'Error syncing pod: failed to find plugin "flannel" in path')],
      whose: /^dump\.txt: this is the kubelet's log, not rules/,
    },
    {
      what: "Antrea's copy of kube-proxy's files, told by the Pod a log viewer names",
      lines: [
        `antrea-agent-x7k2p antrea-agent ${klog('endpointslicecache.go', 'Setting endpoints for service')}`,
      ],
      whose: /^dump\.txt: this is Antrea's agent log, not rules/,
    },
    {
      what: "a proxier.go line without OVS or iptables words (AntreaProxy's, here) is not said kube-proxy's",
      lines: [
        klog(
          'proxier.go',
          '"Removing stale Service" ServicePortName="kube-system/kube-dns:dns" ServiceInfo="10.96.0.10:53/UDP"',
        ),
      ],
      whose:
        /^dump\.txt: this is a log, not rules \(klog or journald lines; which component's, its lines do not say\)/,
    },
    {
      what: "iptables.go (every component's) making kube-proxy's IPVS chains: its IPVS proxier's log, named (kubernetes#95149)",
      lines: [
        klog('iptables.go', 'running iptables-save [-t nat]'),
        klog('iptables.go', 'running iptables: iptables [-w 5 -W 100000 -N KUBE-SERVICES -t nat]'),
        klog('iptables.go', 'running iptables: iptables [-w 5 -W 100000 -N KUBE-NODE-PORT -t nat]'),
        klog(
          'iptables.go',
          'running iptables: iptables [-w 5 -W 100000 -N KUBE-LOAD-BALANCER -t nat]',
        ),
      ],
      whose:
        /^dump\.txt: this is kube-proxy's log, of its IPVS proxier \(it names KUBE-NODE-PORT and KUBE-LOAD-BALANCER, chains only kube-proxy's IPVS mode makes\)/,
    },
    {
      what: "kube-proxy's iptables proxier failing on a table the kernel lacks: its log, not IPVS's (no table said a chain)",
      lines: [
        klog('server_others.go', 'Using iptables Proxier.'),
        `E1203 10:00:01.000000       1 proxier.go:1600] "Failed to ensure chain exists" err="error creating chain \\"KUBE-SERVICES\\": exit status 3: iptables v1.8.7 (legacy): can't initialize iptables table \`nat': Table does not exist (do you need to insmod?)" table=nat chain=KUBE-SERVICES`,
      ],
      whose:
        /^dump\.txt: this is kube-proxy's log: it says what kube-proxy did and what failed, not which rules/,
    },
    {
      what: "the IPVS proxier's log naming a missing table: the IPVS chain named, the table not called a chain",
      lines: [
        klog('server_others.go', 'Using ipvs Proxier.'),
        `E1203 10:00:01.000000       1 proxier.go:1600] "Failed to ensure chain exists" err="error creating chain \\"KUBE-NODE-PORT\\": exit status 3: iptables v1.8.7 (legacy): can't initialize iptables table \`filter': Table does not exist (do you need to insmod?)" table=filter chain=KUBE-NODE-PORT`,
      ],
      whose:
        /^dump\.txt: this is kube-proxy's log, of its IPVS proxier \(it names KUBE-NODE-PORT, chains only/,
    },
    {
      what: 'kube-proxy saying it uses its iptables proxier is not IPVS mode, whatever IPVS chains it names (leftovers it cleans up)',
      lines: [
        klog('server_others.go', 'Using iptables Proxier.'),
        klog('iptables.go', 'running iptables: iptables [-w 5 -X KUBE-NODE-PORT -t nat]'),
      ],
      whose: /^dump\.txt: this is kube-proxy's log: it says/,
    },
    {
      what: 'iptables.go making a chain the kubelet makes too (KUBE-MARK-DROP) names no component',
      lines: [klog('iptables.go', 'running iptables: iptables [-w 5 -N KUBE-MARK-DROP -t nat]')],
      whose:
        /^dump\.txt: this is a log, not rules \(klog or journald lines; which component's, its lines do not say\)/,
    },
    {
      what: "AntreaProxy's own files say Antrea's log",
      lines: [klog('proxier_linux.go', '"Installing NodePort Service" NodePort=30080')],
      whose: /^dump\.txt: this is Antrea's agent log, not rules/,
    },
    {
      what: "kube-proxy's proxier.go told by what it writes: IPVS's kube-ipvs0, a KUBE- set",
      lines: [
        klog('proxier.go', 'Failed to bind service address to dummy device: kube-ipvs0'),
        klog('proxier.go', '"Failed to add entry to ip set" set="KUBE-LOAD-BALANCER"'),
      ],
      whose: /^dump\.txt: this is kube-proxy's log/,
    },
    {
      what: "a proxier.go entry whose multi-line value (klog's key=< ... >) names ip6tables and a KUBE- chain: kube-proxy's",
      lines: [
        `E0928 23:55:44.961265    4424 proxier.go:874] "Failed to ensure chain jumps" err=<`,
        "\terror checking rule: exit status 2: ip6tables v1.8.6 (nf_tables): Couldn't find match `conntrack'",
        '\t',
        ' > table=filter srcChain=INPUT dstChain=KUBE-EXTERNAL-SERVICES',
        klog('proxier.go', '"Sync failed" retryingTime="30s"'),
      ],
      whose: /^dump\.txt: this is kube-proxy's log/,
    },
    {
      what: "a component's log whose lines name no component",
      lines: [
        klog('iptables.go', 'running iptables-restore with nftables'),
        klog('server.go', 'Version: v1.2.3'),
      ],
      whose: /^dump\.txt: this is a log, not rules/,
    },
    {
      what: "kube-proxy's klog lines after grep -n, grep -Hn, and a log viewer's pod and container",
      lines: [
        `12:${klog('server_linux.go', '"Using iptables proxy"')}`,
        `kube-proxy.log:13:${klog('proxier.go', '"Syncing iptables rules"')}`,
        `kube-proxy-x7k2p kube-proxy ${klog('proxier.go', '"SyncProxyRules complete"')}`,
        `[pod/kube-proxy-x7k2p/kube-proxy] ${klog('shared_informer.go', 'Caches are synced for service config')}`,
      ],
      whose: /^dump\.txt: this is kube-proxy's log: it says what kube-proxy did/,
    },
  ];
  for (const l of logs)
    it(l.what, () =>
      assert.throws(
        () => parseIptables(l.lines.join('\n'), { file: 'dump.txt' }),
        (e: unknown) => e instanceof NoRulesError && l.whose.test(e.message),
      ),
    );

  for (const c of cases)
    it(c.what, () => {
      assert.throws(
        () => parseIptables(c.text, { file: 'dump.txt' }),
        (e: unknown) => e instanceof NoRulesError && c.message.test(e.message),
      );
    });

  it('another listing beside the rules is named and skipped, the rules read', () => {
    const ipvs =
      'TCP  10.1.190.219:8080 rr\n  -> 10.244.0.3:80                Masq    1      0          0\n';
    const rs = parseIptables(NAT_S + ipvs, { table: 'nat' });
    sameRules(rs, CLEAN_S);
    assert.deepEqual(rs.foreign, ['ipvsadm']);
    assert.match(rs.warnings.at(-1)!.message, /^lines 23, 24 not read: this is `ipvsadm` output/);
  });
});

describe('iptables -L listings are read as the rules they list', () => {
  it('-L -n: a rule line in -S form, its matches as iptables prints them', () => {
    const rs = parseIptables(
      'Chain KUBE-SERVICES (2 references)\ntarget     prot opt source               destination\nKUBE-SVC-ELCM5PCEQWBTUJ2I  tcp  --  0.0.0.0/0            10.1.190.219         /* default/nginx-svc:http cluster IP */ tcp dpt:8080\n',
      { file: 'dump.txt' },
    );
    const nat = rs.table('nat')!;
    const id = nat.chain('KUBE-SERVICES')!.ruleId(0);
    assert.equal(
      printRule(nat.chain('KUBE-SERVICES')!.rules[0]!),
      '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-ELCM5PCEQWBTUJ2I',
    );
    assert.equal(nat.dport(id), '8080');
    assert.match(rs.warnings[0]!.message, /^read from an `iptables -L` listing/);
  });

  it('-L piped through column -t: its fields and comments spread apart, read one space apart', () => {
    // gamelife1314.github.io: `iptables -t nat -L CHAIN | column -t`, ports by service name
    const rs = parseIptables(
      [
        'root@node2:/home/ubuntu# iptables -t nat -L KUBE-SVC-ATSXPZA6MCLBTOSW | column -t',
        'Chain                      KUBE-SVC-ATSXPZA6MCLBTOSW  (1   references)',
        'target                     prot                       opt  source          destination',
        'KUBE-MARK-MASQ             tcp                        --   !10.244.0.0/16  10.105.145.136  /*  default/web  cluster  IP             */  tcp        dpt:http-alt',
        'KUBE-SEP-E4NSA7Z3P6FEYR22  all                        --   anywhere        anywhere        /*  default/web  ->       10.244.0.4:80  */  statistic  mode          random  probability  0.50000000000',
        'KUBE-SEP-ENS4OGYPXWST7P2F  all                        --   anywhere        anywhere        /*  default/web  ->       10.244.1.2:80  */',
        '',
      ].join('\n'),
      { file: 'dump.txt' },
    );
    const nat = rs.table('nat')!;
    const c = nat.chain('KUBE-SVC-ATSXPZA6MCLBTOSW')!;
    assert.deepEqual(
      c.ruleIds.map((id) => [nat.line(id), nat.comment(id)]),
      [
        [4, 'default/web cluster IP'],
        [5, 'default/web -> 10.244.0.4:80'],
        [6, 'default/web -> 10.244.1.2:80'],
      ],
    );
    assert.equal(nat.dport(c.ruleId(0)), '8080');
    assert.deepEqual(
      rs.warnings.filter((w) => /column -t/.test(w.message)).map((w) => w.line),
      [2],
    );
  });

  it("column -t's spacing is undone on -L lines only: a save line's quoted comment keeps its blanks", () => {
    const save = '-A KUBE-SERVICES -m comment --comment "two  spaces" -j KUBE-NODEPORTS';
    assert.deepEqual(uncolumn(`Chain  X  (1   references)\n${save}`).split('\n'), [
      'Chain X (1 references)',
      save,
    ]);
    // a save line column -t aligned too (two blanks after -A) is undone as the listing's
    assert.equal(
      uncolumn(
        'Chain  X  (1   references)\n-A  KUBE-SERVICES  -m  comment  --comment  "a  b"',
      ).split('\n')[1],
      '-A KUBE-SERVICES -m comment --comment "a b"',
    );
  });

  it('-L -v -n --line-numbers: the counters and numbers are columns, the interfaces read', () => {
    const rs = parseIptables(
      'Chain POSTROUTING (policy ACCEPT 0 packets, 0 bytes)\nnum   pkts bytes target     prot opt in     out     source               destination\n1     1234  100K MASQUERADE  all  --  *      !docker0  172.17.0.0/16        0.0.0.0/0\n2        0     0 KUBE-POSTROUTING  0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* kubernetes postrouting rules */\n',
      { file: 'dump.txt' },
    );
    const rules = rs.table('nat')!.chain('POSTROUTING')!.rules.map(printRule);
    assert.deepEqual(rules, [
      '-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE',
      '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    ]);
    assert.ok(!rs.warnings.some((w) => /prints no interfaces/.test(w.message)));
  });

  it("what the listing leaves out is said at the line it is about, as kdebug's other warnings are", () => {
    const rs = parseIptables(
      [
        '$ iptables -t nat -L',
        'Chain KUBE-SERVICES (2 references)',
        'target     prot opt source               destination',
        'KUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  anywhere             10.96.0.1            /* default/kubernetes:https cluster IP */ tcp dpt:https',
        'KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  anywhere             kube-dns.kube-system /* kube-system/kube-dns:dns cluster IP */ udp dpt:domain',
      ].join('\n'),
      { file: 'dump.txt' },
    );
    const view = rs.warnings.filter((w) => w.kind === 'view');
    assert.deepEqual(
      view.map((w) => [w.line, w.message.slice(0, 30)]),
      [
        [2, 'read from an `iptables -L` lis'],
        [3, '-L without -v prints no interf'],
        [4, '-L without -n prints names, no'],
      ],
    );
    // a note of several lines is at the first, with every one
    const joined = parseIptables(
      [
        'Chain POSTROUTING (policy ACCEPT 0 packets, 0 bytes)',
        ' pkts bytes target     prot opt in     out     source               destination',
        '    0     0',
        'MASQUERADE  all  --  *      !docker0  172.17.0.0/16        0.0.0.0/0',
        '    5   300',
        'KUBE-POSTROUTING  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* kubernetes postrouting rules */',
      ].join('\n'),
      { file: 'dump.txt' },
    ).warnings.find((w) => /read as one row/.test(w.message))!;
    assert.deepEqual([joined.line, joined.lines], [3, [3, 5]]);
  });
});

describe('the table of a listing without *table lines, as iptables takes it', () => {
  const tables = (rs: Ruleset) => rs.tables.map((t) => [t.name, t.chains.map((c) => c.name)]);
  const V = ' pkts bytes target     prot opt in     out     source               destination';

  it('the command typed before it names the table (`-t nat`), said with its line', () => {
    const rs = parseIptables(
      [
        '[centos@node ~]$ sudo iptables -t nat -L -n -v',
        'Chain PREROUTING (policy ACCEPT 0 packets, 0 bytes)',
        V,
        '    1    60 KUBE-PORTALS-CONTAINER  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* handle ClusterIPs; NOTE: this must be before the NodePort rules */',
        '',
        'Chain INPUT (policy ACCEPT 0 packets, 0 bytes)',
        V,
        '',
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.deepEqual(tables(rs), [['nat', ['PREROUTING', 'INPUT']]]);
    assert.ok(
      rs.warnings.some(
        (w) =>
          w.message ===
          'rules from line 2 read as the nat table: the command on line 1 lists it (`sudo iptables -t nat -L -n -v`)',
      ),
    );
    // the portal chain is only jumped to here: userspace mode all the same
    assert.ok(rs.warnings.some((w) => w.kind === 'mode' && /^userspace mode/.test(w.message)));
  });

  it('without a command, its built-in chains: PREROUTING is never filter, FORWARD never nat', () => {
    const listing = (chains: string[]) =>
      chains
        .map(
          (c) =>
            `Chain ${c} (policy ACCEPT)\ntarget     prot opt source               destination\n`,
        )
        .join('\n');
    assert.equal(parseIptables(listing(['PREROUTING', 'INPUT', 'OUTPUT'])).tables[0]!.name, 'nat');
    assert.equal(parseIptables(listing(['INPUT', 'FORWARD', 'OUTPUT'])).tables[0]!.name, 'filter');
  });

  it('per-chain listings of two tables, each after its command, are two tables', () => {
    const rs = parseIptables(
      [
        '$ sudo iptables -t filter -S KUBE-EXTERNAL-SERVICES',
        '-N KUBE-EXTERNAL-SERVICES',
        '-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "default/nginx has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30783 -j DROP',
        '$ sudo iptables -t nat -S KUBE-NODEPORTS',
        '-N KUBE-NODEPORTS',
        '-A KUBE-NODEPORTS -p tcp -m comment --comment "default/nginx" -m tcp --dport 30783 -j KUBE-EXT-2CMXP7HKUVJN7L6M',
      ].join('\n'),
    );
    assert.deepEqual(tables(rs), [
      ['filter', ['KUBE-EXTERNAL-SERVICES']],
      ['nat', ['KUBE-NODEPORTS']],
    ]);
  });

  it('iptables without -t lists filter; a command that lists nothing leaves the next output its own', () => {
    const svc =
      '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-ELCM5PCEQWBTUJ2I';
    const listed = parseIptables(`$ iptables -S KUBE-SERVICES\n-N KUBE-SERVICES\n${svc}\n`);
    assert.equal(listed.tables[0]!.name, 'filter');
    const other = parseIptables(
      `$ iptables -vnL # no rows\n$ iptables-save | grep nginx\n${svc}\n`,
    );
    assert.equal(other.tables[0]!.name, 'nat');
  });
});

describe('iptables -L: what it prints is read, what kdebug cannot read stays on its rule', () => {
  const rules = (text: string, table = 'nat') =>
    parseIptables(text, { file: 'dump.txt' })
      .table(table)!
      .chains.flatMap((c) => c.rules.map(printRule));
  const HEAD = 'target     prot opt source               destination';

  it('two listings, filter then nat: each chain in its own table, the policies kept', () => {
    const rs = parseIptables(
      [
        '# iptables -L -n',
        'Chain INPUT (policy ACCEPT)',
        HEAD,
        'KUBE-FIREWALL  all  --  0.0.0.0/0            0.0.0.0/0',
        '',
        'Chain FORWARD (policy DROP)',
        HEAD,
        '',
        'Chain KUBE-FIREWALL (1 references)',
        HEAD,
        'DROP       all  --  0.0.0.0/0            0.0.0.0/0            mark match 0x8000/0x8000',
        '',
        '# iptables -t nat -L -n',
        'Chain PREROUTING (policy ACCEPT)',
        HEAD,
        'KUBE-SERVICES  all  --  0.0.0.0/0            0.0.0.0/0            /* kubernetes service portals */',
        '',
        'Chain KUBE-SERVICES (1 references)',
        HEAD,
        'KUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  0.0.0.0/0            10.96.0.1            /* default/kubernetes:https cluster IP */ tcp dpt:443',
        '',
      ].join('\n'),
      { file: 'dump.txt' },
    );
    assert.deepEqual(rs.tables.map((t) => t.name).sort(), ['filter', 'nat']);
    assert.equal(rs.table('filter')!.chain('FORWARD')!.policy, 'DROP');
    assert.ok(rs.table('nat')!.chain('PREROUTING'), "PREROUTING is nat's");
    assert.equal(rs.table('filter')!.chain('PREROUTING'), undefined);
  });

  it('a name or port name it cannot read back is kept as not read, never dropped', () => {
    const got = rules(
      [
        'Chain KUBE-SERVICES (2 references)',
        HEAD,
        'KUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  anywhere             kube-api.example/32  /* default/kubernetes:https cluster IP */ tcp dpt:kdebug-unknown-port',
        'MASQUERADE  all  --  10.244.0.0/16       !base-address.mcast.net/4  /* flanneld masq */ random-fully',
        'KUBE-MARK-MASQ  all  --  anywhere             anywhere             ! ctstate RELATED,ESTABLISHED physdev-is-in',
      ].join('\n'),
    );
    assert.deepEqual(got, [
      '-A KUBE-SERVICES -p tcp -m unread --as "destination kube-api.example/32" -m comment --comment "default/kubernetes:https cluster IP" -m tcp -m unread --as "tcp dpt:kdebug-unknown-port" -j KUBE-SVC-NPX46M4PTMTKRN6Y',
      '-A KUBE-SERVICES -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully',
      '-A KUBE-SERVICES -m conntrack ! --ctstate RELATED,ESTABLISHED -m unread --as "physdev-is-in" -j KUBE-MARK-MASQ',
    ]);
  });

  it('a comment holding " */" ends where the rest reads', () => {
    assert.deepEqual(
      rules(
        `Chain KUBE-SERVICES (2 references)\n${HEAD}\nKUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  0.0.0.0/0            10.96.0.1            /* a */ tcp dpt:9999 */ tcp dpt:443\n`,
      ),
      [
        '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "a */ tcp dpt:9999" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
      ],
    );
  });

  it('ip6tables before 1.8.8 (a blank fragment column), a negated protocol, -v without -n', () => {
    assert.deepEqual(
      rules(
        `Chain KUBE-SERVICES (2 references)\n${HEAD}\nKUBE-SVC-NPX46M4PTMTKRN6Y  tcp      ::/0                 fd00:10:96::1        /* default/kubernetes:https cluster IP */ tcp dpt:443\nRETURN     !tcp      ::/0                 ::/0\n`,
      ),
      [
        '-A KUBE-SERVICES -d fd00:10:96::1/128 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
        '-A KUBE-SERVICES ! -p tcp -j RETURN',
      ],
    );
    assert.deepEqual(
      rules(
        'Chain POSTROUTING (policy ACCEPT 0 packets, 0 bytes)\n pkts bytes target     prot opt in     out     source               destination\n    0     0 MASQUERADE  all  --  any    !docker0  172.17.0.0/16        anywhere\n    0     0 KUBE-POSTROUTING  all  --  any    any     anywhere             anywhere\n',
      ),
      [
        '-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE',
        '-A POSTROUTING -j KUBE-POSTROUTING',
      ],
    );
  });
});

describe('what a paste leaves out is not said to be missing', () => {
  const SVC = 'KUBE-SVC-NPX46M4PTMTKRN6Y';
  const SEP = 'KUBE-SEP-AAAAAAAAAAAAAAAA';
  const rules = [
    `-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j ${SVC}`,
    `-A ${SVC} -m comment --comment "default/kubernetes:https -> 172.18.0.3:6443" -j ${SEP}`,
    `-A ${SEP} -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination 172.18.0.3:6443`,
  ];
  it('a KUBE-SEP chain grep kept a rule of, undeclared: its hairpin rule unknown, not absent', () => {
    const grepped = buildServiceTrees(parseIptables(rules.join('\n'), { table: 'nat' }));
    assert.equal(grepped.services[0]!.endpoints[0]!.hairpinMasquerade, null);
    const declared = buildServiceTrees(
      parseIptables([`-N ${SEP}`, ...rules].join('\n'), { table: 'nat' }),
    );
    assert.equal(declared.services[0]!.endpoints[0]!.hairpinMasquerade, false);
  });

  it('two `iptables -t nat -L` of one table (before and after): the one with more rules is read, the other said; -S still refused', () => {
    const H = 'target     prot opt source               destination';
    const before = ['Chain PREROUTING (policy ACCEPT)', H, ''];
    const after = [
      'Chain PREROUTING (policy ACCEPT)',
      H,
      'KUBE-SERVICES  all  --  0.0.0.0/0            0.0.0.0/0            /* kubernetes service portals */',
      '',
      'Chain KUBE-SERVICES (1 references)',
      H,
      `${SVC}  tcp  --  0.0.0.0/0            10.96.0.1            /* default/kubernetes:https cluster IP */ tcp dpt:443`,
    ];
    const rs = parseIptables([...before, ...after].join('\n'), { file: 'p.txt' });
    assert.equal(rs.table('nat')!.ruleCount, 2);
    assert.match(
      rs.warnings.find((w) => /two listings/.test(w.message))!.message,
      /the one from line 4 is read \(it holds more rules\), the one from line 1 is not/,
    );
    assert.throws(
      () =>
        parseIptables(
          [
            '-P PREROUTING ACCEPT',
            '-P OUTPUT ACCEPT',
            rules[0],
            '-P PREROUTING ACCEPT',
            '-P OUTPUT ACCEPT',
            ...rules,
          ].join('\n'),
          {
            table: 'nat',
          },
        ),
      /two listings of the nat table/,
    );
  });

  it('a line of prose with a star is skipped, not an unknown table', () => {
    const rs = parseIptables(`*** PRE-REQUEST:\n${rules.join('\n')}\n`, { table: 'nat' });
    assert.equal(rs.table('nat')!.ruleCount, 3);
  });
});

describe('iptables -L: the reading keeps what it cannot read where it stands', () => {
  const H = 'target     prot opt source               destination';
  it("an unread source port is kept after the port it did read, which stays the rule's", () => {
    const rs = parseIptables(
      `Chain KUBE-SERVICES (2 references)\n${H}\nKUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  0.0.0.0/0            10.96.0.1            tcp spt:kdebug-nothing dpt:443\n`,
      { file: 'p.txt' },
    );
    const nat = rs.table('nat')!;
    assert.equal(nat.dport(nat.chain('KUBE-SERVICES')!.ruleId(0)), '443');
  });

  it('a hairpin rule whose Pod address -L printed as a name: unknown, not absent', () => {
    const t = buildServiceTrees(
      parseIptables(
        [
          'Chain KUBE-SVC-NPX46M4PTMTKRN6Y (1 references)',
          H,
          'KUBE-SEP-AAAAAAAAAAAAAAAA  all  --  anywhere             anywhere             /* default/kubernetes:https -> 10.0.1.5:6443 */',
          '',
          'Chain KUBE-SEP-AAAAAAAAAAAAAAAA (1 references)',
          H,
          'KUBE-MARK-MASQ  all  --  ip-10-0-1-5.ec2.internal  anywhere             /* default/kubernetes:https */',
          'DNAT       tcp  --  anywhere             anywhere             /* default/kubernetes:https */ tcp to:10.0.1.5:6443',
        ].join('\n'),
        { file: 'p.txt' },
      ),
    ).services[0]!;
    assert.equal(t.endpoints[0]!.hairpinMasquerade, null);
  });

  it("a node port read from filter's KUBE-EXTERNAL-SERVICES where nat's KUBE-NODEPORTS is not there to say, or has no rule for a port without endpoints", () => {
    const filter =
      '*filter\n:KUBE-EXTERNAL-SERVICES - [0:0]\n-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "ns/svc:p has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j REJECT --reject-with icmp-port-unreachable\nCOMMIT\n';
    const nat =
      '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n-A KUBE-SERVICES -d 10.96.0.9/32 -p tcp -m comment --comment "ns/svc:p cluster IP" -m tcp --dport 80 -j REJECT\nCOMMIT\n';
    const tree = (text: string) =>
      buildServiceTrees(parseIptables(text, { file: 'p.txt' })).services.find(
        (t) => t.name === 'ns/svc:p',
      )!;
    assert.deepEqual(tree(filter).nodePorts, [30080]);
    // a node's whole dump: kube-proxy writes no nat rule for a port without endpoints, so filter
    // says its node port; drift compares nat's own node-port entries, of which it has none
    const whole = tree(filter + nat);
    assert.deepEqual(whole.nodePorts, [30080]);
    assert.deepEqual(
      whole.entries.filter((e) => e.kind === 'node-port'),
      [],
    );
  });

  it("ip6tables' localhost is ::1", () => {
    const rs = parseIptables(
      `Chain KUBE-NODEPORTS (1 references)\n${H}\nKUBE-EXT-AAAAAAAAAAAAAAAA  tcp      ::/0                 !localhost/128       /* ns/svc:p */ tcp dpt:30080\n`,
      { file: 'p.txt' },
    );
    assert.deepEqual(rs.table('nat')!.chain('KUBE-NODEPORTS')!.rules.map(printRule), [
      '-A KUBE-NODEPORTS ! -d ::1/128 -p tcp -m comment --comment "ns/svc:p" -m tcp --dport 30080 -j KUBE-EXT-AAAAAAAAAAAAAAAA',
    ]);
  });
});

describe('a dump inside a quoted string', () => {
  it('escaped line ends with no quote around them: refused as no rules, never a crash', () => {
    assert.throws(
      () =>
        parseIptables("b'*nat\\n:KUBE-SERVICES - [0:0]\\n-A KUBE-SERVICES -j RETURN\\nCOMMIT'\n", {
          file: 'p.txt',
        }),
      (e: unknown) => e instanceof NoRulesError,
    );
  });

  it('a JSON field holding iptables-save: its \\n and \\" read back, said so', () => {
    const dump = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
      '-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 172.18.0.3:6443" -j KUBE-SEP-AAAAAAAAAAAAAAAA',
      'COMMIT',
      '',
    ].join('\n');
    const rs = parseIptables(`{"node": "kind-worker", "iptables": ${JSON.stringify(dump)}}\n`, {
      file: 'state.json',
    });
    assert.match(rs.warnings[0]!.message, /^the rules were inside a quoted string/);
    assert.ok(!rs.warnings.some((w) => /COMMIT without|no \*table line/.test(w.message)));
    const t = buildServiceTrees(rs).services[0]!;
    assert.equal(t.name, 'default/kubernetes:https');
    assert.equal(t.clusterIP, '10.96.0.1');
    assert.equal(t.endpoints[0]!.address, '172.18.0.3:6443');
  });

  it("kube-proxy's own log line, Go's \\u003e and all: the dump after rules=", () => {
    const dump =
      '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y\n-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 172.18.0.3:6443" -j KUBE-SEP-AAAAAAAAAAAAAAAA\nCOMMIT\n';
    const line = `I1205 01:02:03.456789       1 proxier.go:1530] "Restoring iptables" rules=${JSON.stringify(dump).replace(/>/g, '\\u003e')}\n`;
    const rs = parseIptables(line, { file: 'kube-proxy.log' });
    assert.ok(!rs.warnings.some((w) => /COMMIT without|no \*table line/.test(w.message)));
    const t = buildServiceTrees(rs).services[0]!;
    assert.equal(t.endpoints[0]!.address, '172.18.0.3:6443');
  });

  it('a dump with real line ends is not touched by the \\n in one of its comments', () => {
    const rs = parseIptables(
      '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "a\\n-A b" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y\n',
      { table: 'nat' },
    );
    assert.ok(!rs.warnings.some((w) => /quoted string/.test(w.message)));
  });
});

describe('echoed input is inert', () => {
  it('escapes control characters and BIDI overrides in warnings and errors', () => {
    const rs = parseIptables(`evil \x1b]0;owned\x07 \u202etext\n${NAT_S}`, { table: 'nat' });
    assert.match(rs.warnings[0]!.message, /evil \\x1b\]0;owned\\x07 \\u202etext/);
    assert.throws(
      () => parseIptables('-A X -s 10.0.0.\x1b[2J -j ACCEPT\n-A X -j ACCEPT\n', { file: 'd' }),
      (e: unknown) =>
        e instanceof IptablesParseError && /\\x1b\[2J/.test(e.message) && !/\x1b/.test(e.message), // eslint-disable-line no-control-regex
    );
  });
});

describe('other proxy modes seen in an iptables dump are named', () => {
  it('IPVS mode, with the iptables-mode chains it left behind', () => {
    const rs = parseIptables(
      `-N KUBE-NODE-PORT\n${NAT_S}-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ\n`,
      { table: 'nat' },
    );
    const mode = rs.warnings.filter((w) => w.kind === 'mode');
    assert.deepEqual(
      mode.map((w) => w.message),
      [
        'IPVS mode: the Services are in IPVS, read them with `ipvsadm -Ln`; the 3 KUBE-SVC/KUBE-SEP chains here are leftovers from iptables mode',
      ],
    );
  });

  it('userspace mode', () => {
    const rs = parseIptables(
      '-A KUBE-PORTALS-CONTAINER -d 10.0.0.1/32 -p tcp -m comment --comment "default/kubernetes:https" -m tcp --dport 443 -j REDIRECT --to-ports 36647\n',
      { table: 'nat' },
    );
    assert.match(rs.warnings.find((w) => w.kind === 'mode')!.message, /^userspace mode: /);
  });

  it('a clean iptables-mode dump names none', () => {
    assert.deepEqual(
      CLEAN_SAVE.warnings.filter((w) => w.kind === 'mode'),
      [],
    );
  });
});

describe('comments', () => {
  it('a root prompt and its command, and an author’s note, are no lines of the dump: each said', () => {
    const rs = parseIptables(`# iptables -t nat -S\n# rules of node-a\n${NAT_S}`, { table: 'nat' });
    assert.deepEqual(kinds(rs), ['1:prompt', '2:comment']);
  });

  it("iptables-nft's line above a table with nft's own base chains is said as what it is", () => {
    const rs = parseIptables(
      "# Table `nat' contains incompatible base-chains, use 'nft' tool to list them.\n-P PREROUTING ACCEPT\n-P POSTROUTING ACCEPT\n",
      { table: 'nat' },
    );
    assert.deepEqual(kinds(rs), ['1:backend']);
    // an -S listing says not whose family it is: both nft commands
    assert.match(
      rs.warnings[0]!.message,
      /table nat holds base chains it cannot show.*`nft list table ip nat` \(`ip6 nat` for ip6tables\) shows them$/,
    );
  });

  it("an author's '# --- snip ---' as the paste's last line is why the table has no COMMIT, said once", () => {
    const rs = parseIptables(
      '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-NODEPORTS\n# --- snip ---',
    );
    assert.deepEqual(kinds(rs), ['4:truncated']);
    assert.match(rs.warnings[0]!.message, /ends in an elision at line 4/);
  });

  it("an author's '# --- snip ---' between the rules is an elision: the chain before it claims nothing", () => {
    const rs = parseIptables(
      '*nat\n:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.5 -j KUBE-SEP-BBBBBBBBBBBBBBBB\n# --- snip ---\nCOMMIT\n',
    );
    assert.deepEqual(kinds(rs), ['4:elided']);
    assert.match(rs.table('nat')!.partial.get('KUBE-SVC-AAAAAAAAAAAAAAAA') ?? '', /elides lines/);
  });

  it('the comments iptables-save itself prints are its own: not said', () => {
    const save = `# Generated by iptables-save v1.8.9 (nf_tables) on Sun Dec  6 05:00:00 2026\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n# Completed on Sun Dec  6 05:00:00 2026\n`;
    assert.deepEqual(kinds(parseIptables(save)), []);
  });
});

describe("Cilium's BPF load-balancer maps listed one at a time are named, not called empty", () => {
  // the titles and rows of cilium-dbg/cmd/bpf_lb_list.go (1.17-1.20): --revnat and --backends
  // share the one title; a tabwriter pads each row's last cell
  const forms: [string, string][] = [
    ['--revnat', 'ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n1    10.96.0.1:443      \n'],
    ['--backends', 'ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n5    TCP://10.244.0.5   \n'],
    [
      '--frontends',
      'SERVICE ADDRESS          BACKEND ID\n10.96.0.1:443/TCP (0)    0 1[0] (1) [0x0 0x0]   \n',
    ],
    ['--source-ranges', 'SOURCE RANGE (REVNAT_ID)   \n10.0.0.0/8 (4)             \n'],
  ];
  for (const [flag, text] of forms)
    it(`bpf lb list ${flag}`, () =>
      assert.throws(
        () => readPaste(text, { file: 'maps.txt' }),
        (e: unknown) =>
          e instanceof NoRulesError &&
          /^maps\.txt: this is one of Cilium's BPF load-balancer maps alone .*`cilium-dbg bpf lb list` without a flag/.test(
            e.message,
          ),
      ));
});

describe('the family of a table whose rules show none', () => {
  // kube-proxy's IPv6 filter table often holds no address (KUBE-FORWARD, the canaries)
  const filter = [
    '*filter',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-KUBELET-CANARY - [0:0]',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    'COMMIT',
  ];
  const nat = (ip: string, ep: string) => [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
    ':KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    `-A KUBE-SERVICES -d ${ip} -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA`,
    '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "default/web:http" -j KUBE-SEP-BBBBBBBBBBBBBBBB',
    `-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination ${ep}`,
    'COMMIT',
  ];

  it('is the family of the dump it is part of: an ip6tables-save pasted without its header is one IPv6 dump', () => {
    const rs = parseIptables(
      [...filter, ...nat('fd00:10:96::a/128', '[fd00:10:244:1::5]:80')].join('\n'),
    );
    assert.deepEqual(
      rs.tables.map((t) => `${t.name} ${t.family}`),
      ['filter IPv6', 'nat IPv6'],
    );
    assert.deepEqual(rs.families(), ['IPv6']);
  });

  it("a packet walks its own family's tables in a paste of both", () => {
    const rs = parseIptables(
      [
        '# Generated by iptables-save v1.8.9',
        ...nat('10.96.0.10/32', '10.244.1.5:80'),
        '# Generated by ip6tables-save v1.8.9',
        ...nat('fd00:10:96::a/128', '[fd00:10:244:1::5]:80'),
      ].join('\n'),
    );
    const walk = (src: string, dst: string) =>
      tracePacket(
        rs,
        { localAddresses: [], interfaces: [] },
        { src, dst, dport: 80, protocol: 'tcp', fromHost: false },
      ).outcomes.map((o) => o.dnat);
    assert.deepEqual(walk('fd00:10:244:2::9', 'fd00:10:96::a'), ['[fd00:10:244:1::5]:80']);
    assert.deepEqual(walk('10.244.2.9', '10.96.0.10'), ['10.244.1.5:80']);
  });
});

describe("rules in a page's HTML source", () => {
  it("a highlighter's tags around their words and its entities: read as the page showed them, said at the first such line", () => {
    const svc = 'KUBE-SVC-NPX46M4PTMTKRN6Y';
    const rs = parseIptables(
      [
        '<div class="highlight"><pre><code><span class="c"># the Service\'s endpoints</span>',
        `<span class="nt">-A</span> ${svc} <span class="nt">-m</span> comment <span class="nt">--comment</span> <span class="s2">&quot;default/web:http -&gt; 10.1.0.5:80&quot;</span> <span class="nt">-j</span> KUBE-SEP-ZXMNUKOKXUTL2MK2`,
        '<span class="nt">-A</span> KUBE-SEP-ZXMNUKOKXUTL2MK2 -p tcp -m tcp <span class="nt">-j</span> DNAT <span class="nt">--to-destination</span> 10.1.0.5:80',
        '</code></pre></div>',
      ].join('\n'),
    );
    const nat = rs.table('nat')!;
    assert.deepEqual(
      nat.chain(svc)!.ruleIds.map((id) => [nat.line(id), nat.comment(id)]),
      [[2, 'default/web:http -> 10.1.0.5:80']],
    );
    const note = rs.warnings.find((w) => /HTML source/.test(w.message));
    assert.equal(note?.line, 2);
  });
});

describe('rules a page typeset', () => {
  it('read "–" as "--" and curly quotes as straight ones on rule lines only, and say so by line', () => {
    // Kevin-fqh/learning-k8s-source-code: a blog engine's smart punctuation in copied rules
    const paste = [
      '这里kubernetes用“-m statistic –mode random –probability 0.50000000000”实现了负载均衡',
      '-A KUBE-SVC-VX5XTMYNLWGXYEL4 -m comment –comment “ym/echo-app:” -m statistic –mode random –probability 0.50000000000 -j KUBE-SEP-27OZWHQEIJ47W5ZW',
      '-A KUBE-SVC-VX5XTMYNLWGXYEL4 -m comment —comment “ym/echo-app:” -j KUBE-SEP-AA6LE4U3XA6T2EZB',
      '',
    ].join('\n');
    const rs = parseIptables(paste);
    const nat = rs.table('nat')!;
    const svc = nat.chain('KUBE-SVC-VX5XTMYNLWGXYEL4')!;
    assert.deepEqual(
      svc.ruleIds.map((id) => [nat.line(id), nat.comment(id)]),
      [
        [2, 'ym/echo-app:'],
        [3, 'ym/echo-app:'],
      ],
    );
    const tree = buildServiceTrees(rs).services.find((t) => t.name === 'ym/echo-app:');
    assert.deepEqual(
      tree?.endpoints.map((e) => e.probability),
      [0.5, 0.5],
    );
    const note = rs.warnings.find((w) => w.message.includes('typeset'));
    assert.deepEqual([note?.line, note?.lines], [2, [2, 3]]);
    assert.doesNotMatch(note!.message, /\n/);
  });

  it("a comment's own curly quotes, inside iptables' straight ones, are its text: no typesetting", () => {
    const dump = [
      '*filter',
      ':INPUT ACCEPT [0:0]',
      '-A INPUT -p tcp -m tcp --dport 22 -m comment --comment "“office” ssh" -j ACCEPT',
      '-A INPUT -m comment --comment "允许“内网”访问" -j ACCEPT',
      'COMMIT',
      '',
    ].join('\n');
    const rs = parseIptables(dump);
    const filter = rs.table('filter')!;
    assert.deepEqual(
      filter.chain('INPUT')!.ruleIds.map((id) => filter.comment(id)),
      ['“office” ssh', '允许“内网”访问'],
    );
    assert.ok(!rs.warnings.some((w) => w.message.includes('typeset')));
  });

  it("a closing quote curled after a straight opening one is the page's; dashes and \\\" inside quotes are the comment's", () => {
    const rule = (comment: string) =>
      `-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment ${comment} -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4`;
    const read = (comment: string) => {
      const rs = parseIptables(
        ['*nat', ':KUBE-SERVICES - [0:0]', rule(comment), 'COMMIT', ''].join('\n'),
      );
      const nat = rs.table('nat')!;
      const id = nat.chain('KUBE-SERVICES')!.ruleIds[0]!;
      return [nat.comment(id), rs.warnings.some((w) => w.message.includes('typeset'))];
    };
    assert.deepEqual(read('"kube-system/kube-dns:dns-tcp cluster IP”'), [
      'kube-system/kube-dns:dns-tcp cluster IP',
      true,
    ]);
    assert.deepEqual(read('"a –b “c”"'), ['a –b “c”', false]);
    assert.deepEqual(read('"a \\"b “x”"'), ['a "b “x”', false]);
  });
});

describe('rules continued over lines as typed in a shell', () => {
  const text = [
    '*nat',
    '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp \\',
    '  -m comment --comment "default/nginx-svc: cluster IP" \\',
    '  -m tcp --dport 8080 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
    '-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-BBBBBBBBBBBBBBBB',
    '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp \\',
    '  -j DNAT --to-destination 10.244.0.3:80',
    'COMMIT',
    '',
  ].join('\n');

  it('each is read as its one rule, on the line it starts on, and said', () => {
    const rs = parseIptables(text);
    const rules = rs.tables[0]!.chains.flatMap((c) => c.rules);
    assert.deepEqual(
      rules.map((r) => r.line),
      [2, 5, 6],
    );
    const note = rs.warnings.find((w) => w.kind === 'view');
    assert.ok(note, JSON.stringify(rs.warnings));
    assert.match(note.message, /line runs 2-4, 6-7: rules written over several lines/);
    assert.deepEqual(note.lines, [2, 6]);
    // the lines a rule went on to are no blank lines of the paste
    assert.ok(!rs.warnings.some((w) => w.kind === 'blank'), JSON.stringify(rs.warnings));
  });

  it('the Service the rules walk is read whole', () => {
    const x = readPaste(text, { file: 'p.txt' });
    assert.ok(x.mode === 'iptables');
    const t = x.trees.services.find((s) => s.clusterIP === '10.1.190.219');
    assert.ok(t, rulesText(x.dump, x.trees, { label: 'p' }));
    assert.equal(t.port, 8080);
    assert.deepEqual(
      t.endpoints.map((e) => e.address),
      ['10.244.0.3:80'],
    );
  });

  it('a backslash inside a rule, not ending its line, is not read as one', () => {
    assert.throws(
      () => parseIptables('*nat\n-A KUBE-SERVICES -d 10.1.190.219/32 \\ -j ACCEPT\nCOMMIT\n'),
      /unexpected/,
    );
  });
});
