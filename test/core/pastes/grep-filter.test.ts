// `iptables-save | grep X` without context options: grep prints only the lines matching X, so each
// chain its output shows is part of the chain, unless X is in every rule of it (the chain's name
// after -A, the Service port's name kube-proxy comments each KUBE-SVC/SEP rule with).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { grepFilter } from '../../../src/core/dataplane/paste/grep-context.js';
import { rulesText } from '../../../src/output/rules.js';

const SVC = 'KUBE-SVC-BBBBBBBBBBBBBBBB';
const jump = (ep: string, sep: string, p?: string) =>
  `-A ${SVC} -m comment --comment "default/web:http -> ${ep}"${p ? ` -m statistic --mode random --probability ${p}` : ''} -j ${sep}`;
const dnat = (ep: string, sep: string) =>
  `-A ${sep} -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination ${ep}`;
const RULES = [
  `-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${SVC}`,
  jump('10.244.1.5:80', 'KUBE-SEP-AAAAAAAAAAAAAAA1', '0.50000000000'),
  jump('10.244.2.6:80', 'KUBE-SEP-AAAAAAAAAAAAAAA2'),
  dnat('10.244.1.5:80', 'KUBE-SEP-AAAAAAAAAAAAAAA1'),
  dnat('10.244.2.6:80', 'KUBE-SEP-AAAAAAAAAAAAAAA2'),
];

const read = (command: string, keep = (l: string) => l.includes(command.split(' ').at(-1)!)) => {
  const got = readPaste([`$ sudo iptables-save | ${command}`, ...RULES.filter(keep)].join('\n'), {
    file: 'p.txt',
  });
  assert.ok(got.mode === 'iptables');
  const web = got.trees.services.find((t) => t.name === 'default/web:http');
  return { got, web, text: rulesText(got.dump, got.trees, { label: 'paste' }) };
};

describe('iptables-save piped through grep without context options', () => {
  it('an endpoint address: the Service chain is part, no share stated, the headline says grep', () => {
    const { web, text } = read('grep 10.244.1.5');
    assert.ok(web?.partial, text);
    assert.deepEqual(
      web.endpoints.map((e) => [e.address, e.shareUnknown !== undefined]),
      [['10.244.1.5:80', true]],
    );
    assert.match(text.split('\n')[0]!, /filtered by `grep 10\.244\.1\.5` \(line 1\)/);
    assert.doesNotMatch(text, /no endpoints|match no endpoint rule|100%/);
  });

  it('a grep whose output holds rules of two tables is said not whole once, not per table (r138)', () => {
    const got = readPaste(
      [
        '$ iptables-save | grep default/lb',
        '-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "default/lb:http has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j REJECT --reject-with icmp-port-unreachable',
        '-A KUBE-NODEPORTS -p tcp -m comment --comment "default/lb:http health check node port" -m tcp --dport 31000 -j ACCEPT',
        '-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment "default/lb:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
        '-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment "default/lb:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
        '-A KUBE-NODEPORTS -p tcp -m comment --comment "default/lb:http" -m tcp --dport 30080 -j KUBE-EXT-AAAAAAAAAAAAAAAA',
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.ok(got.mode === 'iptables');
    assert.deepEqual(got.dump.tables.map((t) => t.name).sort(), ['filter', 'nat']);
    const said = got.dump.warnings.filter((w) =>
      /are the output of `grep default\/lb`/.test(w.message),
    );
    assert.equal(said.length, 1, JSON.stringify(got.dump.warnings));
  });

  it("the Service port's name: kube-proxy comments every rule of its chains, so they are whole", () => {
    const { web, text } = read('grep default/web');
    assert.equal(web?.partial, undefined, text);
    assert.deepEqual(
      web?.endpoints.map((e) => e.probability),
      [0.5, 0.5],
    );
    assert.match(text.split('\n')[0]!, /filtered by `grep default\/web`/);
  });

  it("a chain's name: every rule -A prints of it holds it", () => {
    const { web, text } = read(`grep ${SVC}`);
    assert.equal(web?.partial, undefined, text);
  });

  // the Service's chains named in one pattern of alternatives (`iptables-save | egrep "A|B|VIP"`):
  // each alternative is matched as a grep of it alone would be
  for (const command of [
    `grep -E '${SVC}|KUBE-SEP-AAAAAAAAAAAAAAA1|KUBE-SEP-AAAAAAAAAAAAAAA2|10.96.0.50'`,
    `egrep "${SVC}|KUBE-SEP-AAAAAAAAAAAAAAA1|KUBE-SEP-AAAAAAAAAAAAAAA2|10.96.0.50"`,
    `grep '${SVC}\\|KUBE-SEP-AAAAAAAAAAAAAAA1\\|KUBE-SEP-AAAAAAAAAAAAAAA2\\|10.96.0.50'`,
    `grep -e ${SVC} -e KUBE-SEP-AAAAAAAAAAAAAAA1 -e KUBE-SEP-AAAAAAAAAAAAAAA2 -e 10.96.0.50`,
  ])
    it(`chain names among alternatives (\`${command.slice(0, 20)}…\`): those chains whole, the shares stand`, () => {
      const { web, text } = read(command, () => true);
      assert.equal(web?.partial, undefined, text);
      assert.deepEqual(
        web?.endpoints.map((e) => [e.address, e.probability, e.shareUnknown]),
        [
          ['10.244.1.5:80', 0.5, undefined],
          ['10.244.2.6:80', 0.5, undefined],
        ],
        text,
      );
      assert.match(text.split('\n')[0]!, /filtered by `/);
    });

  it('alternatives naming one endpoint chain of two: the Service chain is part, no share stated', () => {
    const { web, text } = read(`grep -E '${SVC}|KUBE-SEP-AAAAAAAAAAAAAAA1'`, (l) =>
      /KUBE-SVC-B|KUBE-SEP-AAAAAAAAAAAAAAA1/.test(l),
    );
    // the Service chain's rules are whole (the grep names it), the second endpoint's chain is not
    // in the paste: its DNAT target unknown, the shares still the Service chain's
    assert.equal(web?.partial, undefined, text);
    assert.deepEqual(
      web?.endpoints.map((e) => e.address),
      ['10.244.1.5:80', '10.244.2.6:80'],
      text,
    );
  });

  it('grep -v keeps lines without the pattern: no chain is whole', () => {
    const { web, text } = read('grep -v KUBE-SEP-AAAAAAAAAAAAAAA1', () => true);
    assert.ok(web?.partial, text);
  });

  it('lines that do not hold the pattern are no output of that grep: put together by hand', () => {
    const { web, text } = read('grep loadbal', () => true);
    assert.equal(web?.partial, undefined, text);
    assert.doesNotMatch(text.split('\n')[0]!, /filtered/);
  });
});

describe('grepFilter', () => {
  it('reads the pattern as grep does', () => {
    assert.equal(grepFilter('iptables-save | grep -i Nginx')?.fixed, 'Nginx');
    assert.equal(grepFilter('iptables-save | grep -i Nginx')?.ignoreCase, true);
    assert.equal(grepFilter("iptables -S | grep -e '-A'")?.fixed, '-A');
    assert.equal(grepFilter("iptables-save | grep '\\-A KUBE-SVC'")?.fixed, '-A KUBE-SVC');
    assert.equal(grepFilter('iptables-save | grep nginx # no rows')?.fixed, 'nginx');
    assert.equal(grepFilter("iptables-save | grep -E 'a|b'")?.fixed, undefined);
    assert.deepEqual(grepFilter("iptables-save | grep -E 'a|b'")?.anyOf, ['a', 'b']);
    assert.deepEqual(grepFilter('iptables-save |egrep "a|1.2.3.4"')?.anyOf, ['a', '1.2.3.4']);
    assert.deepEqual(grepFilter("iptables-save | grep 'a\\|b'")?.anyOf, ['a', 'b']);
    assert.deepEqual(grepFilter('iptables-save | grep -e a -e b')?.anyOf, ['a', 'b']);
    // in a basic pattern "|" is itself; an operator among the alternatives: not fixed strings
    assert.equal(grepFilter("iptables-save | grep 'a|b'")?.anyOf, undefined);
    assert.equal(grepFilter("iptables-save | grep -E 'a.*|b'")?.anyOf, undefined);
    assert.equal(grepFilter("iptables-save | grep -vE 'a|b'")?.anyOf, undefined);
    assert.equal(grepFilter('iptables-save | grep KUBE | grep nginx')?.fixed, undefined);
    assert.equal(grepFilter('iptables-save | grep -A3 nginx'), undefined);
    assert.equal(grepFilter('iptables-save'), undefined);
  });
});

describe('iptables-save piped through a filter other than grep, or a grep -v that keeps every rule', () => {
  const has = (s: string) => (l: string) => l.includes(s);
  for (const command of ['rg 10.244.1.5', "awk '/10.244.1.5/'", 'ag 10.244.1.5'])
    it(`\`${command}\` filters: the Service chain is part, no share stated`, () => {
      const { web, text } = read(command, has('10.244.1.5'));
      assert.ok(web?.partial, text);
      assert.ok(
        web.endpoints.every((e) => e.shareUnknown !== undefined),
        text,
      );
      assert.match(text.split('\n')[0]!, /filtered by `/);
    });

  for (const pattern of ["'^#'", "'^$'", 'COMMIT', "'^\\*'", "'^:'"])
    it(`\`grep -v ${pattern}\` removes no rule line: the shares stand`, () => {
      const { web, text } = read(`grep -v ${pattern}`, () => true);
      assert.ok(web && !web.partial, text);
      assert.ok(
        web.endpoints.every((e) => e.shareUnknown === undefined),
        text,
      );
      assert.doesNotMatch(text.split('\n')[0]!, /filtered by/);
    });

  it('`head -20` keeps the first lines in order, picks none by pattern: no filter, shares stand', () => {
    const { web, text } = read('head -20', () => true);
    assert.ok(web && !web.partial, text);
    assert.deepEqual(
      web.endpoints.map((e) => [e.probability, e.shareUnknown]),
      [
        [0.5, undefined],
        [0.5, undefined],
      ],
    );
    assert.doesNotMatch(text.split('\n')[0]!, /filtered by/);
    assert.equal(grepFilter('$ iptables-save | head -n 40 | rg web')?.command, 'rg web');
  });

  it('`grep -v DOCKER` may remove rule lines: still a filter', () => {
    const { web, text } = read('grep -v DOCKER', () => true);
    assert.ok(web?.partial, text);
  });

  // each stage said by what its tool prints, never "the lines matching" of one that matches none
  const SAID: [command: string, keeps: string][] = [
    ['grep 10.244.1.5', 'the lines matching its pattern'],
    ['grep -v DOCKER', 'the lines not matching its pattern'],
    ['rg 10.244.1.5', 'the lines matching its pattern'],
    ['ag 10.244.1.5', 'the lines matching its pattern'],
    ["awk '/10.244.1.5/'", 'the lines matching its pattern'],
    ["awk '!/DOCKER/ {print}'", 'the lines not matching its pattern'],
    ["awk '{print $1, $2}'", 'what its program prints of each line'],
    ["sed -n '/10.244.1.5/p'", 'the lines matching its pattern'],
    ["sed -n '2,4p'", 'lines 2 to 4 of its input'],
    ["sed '/DOCKER/d'", 'the lines not matching its pattern'],
    ['tail -n 3', 'the last 3 lines of its input'],
    [
      'grep KUBE | sort',
      'what each stage keeps: `grep` the lines matching its pattern; `sort` its lines, sorted (not in the order the listing printed them)',
    ],
  ];
  for (const [command, keeps] of SAID)
    it(`the headline and the chain say what \`${command}\` keeps: ${keeps}`, () => {
      // grep's output holds only the rules its pattern matches (more were put there by hand)
      const { web, text } = read(
        command,
        (l) => !command.startsWith('grep 10') || l.includes('10.244.1.5'),
      );
      const headline = text.split('\n')[0]!;
      assert.ok(headline.includes(`(line 1): only ${keeps}`), headline);
      assert.ok(web?.partial?.includes(`printed only ${keeps}:`), web?.partial);
      if (!keeps.includes('lines matching'))
        assert.doesNotMatch(text, /lines matching its pattern/);
    });

  it('a `|` inside quotes does not split the pipe: the grep is named whole', () => {
    assert.equal(grepFilter('$ iptables-save | grep "web\\|10.96"')?.command, 'grep "web\\|10.96"');
    assert.equal(grepFilter("$ iptables-save | awk '/a|b/' | cat")?.command, "awk '/a|b/'");
    assert.equal(grepFilter('$ iptables-save | cat'), undefined);
  });
});
