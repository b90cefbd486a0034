// Lines of kube-proxy's nft script, not all of it: kube-proxy adds each chain before its rules
// (and nft -f refuses a rule to a chain not added), so a rule to a chain no line adds says the
// paste is part of a script, and no chain of it is called an orphan. A last script line short of
// what nft's grammar needs is a cut: the lines before it are read, the cut said at its line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const EP = 'endpoint-SGOXE6O3-ns2/svc2/tcp/p80__10.180.0.2/80';
const RULES = [
  `add rule ip kube-proxy ${EP} ip saddr 10.180.0.2 jump mark-for-masquerade`,
  `add rule ip kube-proxy ${EP} meta l4proto tcp dnat to 10.180.0.2:80`,
];

const read = (lines: string[]) => {
  const got = readPaste(lines.join('\n') + '\n', { file: 'p.txt' });
  assert.ok(got.mode === 'nftables', 'message' in got ? got.message : got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }).replace(/\s+/g, ' ') };
};

describe("part of kube-proxy's nft script", () => {
  it('rules to a chain no line adds: not called orphans, the part said', () => {
    const { got, text } = read(RULES);
    assert.deepEqual(got.dump.scriptPart, { line: 1, chain: EP });
    assert.doesNotMatch(text, /orphan chains \(no entry point/);
    assert.match(text, /not called orphans .*part of kube-proxy's nft script/);
  });

  it('the chain added first: a whole script, its unreached chain an orphan', () => {
    const { got, text } = read([
      'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
      `add chain ip kube-proxy ${EP}`,
      ...RULES,
    ]);
    assert.equal(got.dump.scriptPart, undefined);
    assert.match(text, /orphan chains \(no entry point reaches them\)/);
  });

  const cuts: [string, string][] = [
    ['inside the table name', 'add element ip k'],
    ['before the family', 'add element'],
    ['inside the object', 'add ele'],
    ['before the element', 'add element ip kube-proxy service-ips'],
    [
      'inside the element list',
      'add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 53 : goto',
    ],
    ['inside a chain body', 'add chain ip kube-proxy services { type nat hook'],
  ];
  for (const [name, last] of cuts)
    it(`a last line cut ${name}: the lines before read, the cut said at its line`, () => {
      const { got, text } = read([...RULES, last, '```']);
      assert.equal(got.dump.cut?.line, 3);
      assert.equal(got.dump.chain(EP)?.rules.length, 2);
      assert.match(text, /not called orphans \(.*it is cut/);
    });

  it('a line short of the grammar before the last is still an error at its line', () => {
    assert.throws(
      () => readPaste(['add element ip k', ...RULES].join('\n'), { file: 'p.txt' }),
      /p\.txt:1: .*not added before/,
    );
  });

  it('an element of a map no line adds, before other lines: read into a map outside the paste, said, the rest read', () => {
    const SVC = 'service-ULMVA6XW-ns2/svc2/tcp/p80';
    const { got, text } = read([
      `add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto ${SVC} }`,
      ...RULES,
    ]);
    const map = got.dump.set('service-ips')!;
    assert.equal(map.kind, 'map');
    assert.equal(map.outside, 1);
    assert.deepEqual(map.elements[0]!.verdict, { kind: 'goto', target: SVC });
    assert.equal(got.dump.chain(EP)?.rules.length, 2);
    assert.deepEqual(got.dump.scriptPart, { line: 1, set: 'service-ips' });
    assert.match(
      text,
      /line 1 adds an element to map service-ips, which no line of the paste adds/,
    );
  });

  it('a last rule line with no newline after it, whole to the grammar: read, said it may be cut', () => {
    const cut = `add rule ip kube-proxy ${EP} meta l4proto tcp dnat to 10.180.0.2:8`;
    const got = readPaste([RULES[0], cut].join('\n'), { file: 'p.txt' });
    assert.ok(got.mode === 'nftables');
    assert.equal(got.dump.mayBeCut, 2);
    assert.equal(got.dump.chain(EP)?.rules.length, 2);
    const text = rulesText(got.dump, got.trees, { label: 'p' }).replace(/\s+/g, ' ');
    assert.match(text, /line 2, the script's last, has no newline after it/);
    // with its newline the line is whole
    assert.equal(read([RULES[0]!, cut]).got.dump.mayBeCut, undefined);
  });

  it("a diff whose context lines lost their leading space (Go's tabs): its new side read", () => {
    const { got, text } = read([
      'pkg/proxy/nftables/proxier_test.go:587',
      '```diff',
      '@@ -574,6 +582,7 @@ func TestOverallNFTablesRules(t *testing.T) {',
      ...RULES.map((r) => `\t\t${r}`),
      ' ',
      '+\t\tadd element ip k',
    ]);
    assert.equal(got.dump.paste?.diff, true);
    assert.equal(got.dump.cut?.line, 7);
    assert.match(text, /it is a diff's hunk/);
  });
});
