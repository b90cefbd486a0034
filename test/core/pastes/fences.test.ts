// A markdown code fence typed on the listing's own line ("```-A KUBE-SVC-...", "... -j X```"), as
// GitHub issues hold it (kubernetes#34321): markdown's, read off for every reader, the line kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { unquoted } from '../../../src/core/dataplane/iptables/read/paste/mangled/quoted.js';
import { rulesText } from '../../../src/output/rules.js';

const SVC = 'KUBE-SVC-H2F4SOSDHAEHZFXQ';
const jump = (p: string | undefined, sep: string) =>
  `-A ${SVC} -m comment --comment "default/nginx:"${p ? ` -m statistic --mode random --probability ${p}` : ''} -j ${sep}`;
const FIVE = [
  'On a worker node, I see this in iptables for this service:',
  '```' + jump('0.20000000019', 'KUBE-SEP-W565FQEHFWB3IXKJ'),
  jump('0.25000000000', 'KUBE-SEP-AAAAAAAAAAAAAAA2'),
  jump('0.33332999982', 'KUBE-SEP-AAAAAAAAAAAAAAA3'),
  jump('0.50000000000', 'KUBE-SEP-AAAAAAAAAAAAAAA4'),
  jump(undefined, 'KUBE-SEP-AAAAAAAAAAAAAAA5') + '```',
].join('\n');

const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'iptables', got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};

describe('a markdown fence glued to a rule', () => {
  it('opening the first rule and closing the last: five endpoints at 20%, no backtick in a name', () => {
    const { got, text } = read(FIVE);
    const tree = got.trees.services[0]!;
    assert.deepEqual(
      tree.endpoints.map((e) => [e.chain, Math.round(e.probability * 100), e.shareUnknown]),
      [
        ['KUBE-SEP-W565FQEHFWB3IXKJ', 20, undefined],
        ['KUBE-SEP-AAAAAAAAAAAAAAA2', 20, undefined],
        ['KUBE-SEP-AAAAAAAAAAAAAAA3', 20, undefined],
        ['KUBE-SEP-AAAAAAAAAAAAAAA4', 20, undefined],
        ['KUBE-SEP-AAAAAAAAAAAAAAA5', 20, undefined],
      ],
    );
    assert.match(
      text,
      /line 2: a markdown fence is glued to the start of line 2 .*to the end of line 6/,
    );
    assert.doesNotMatch(text, /`{3}-A|SEP-\w+`|fence, skipped/);
  });

  it('the paste cut after the first rule (kubernetes#34321 as it starts): that rule read, no share', () => {
    const { got, text } = read([...FIVE.split('\n').slice(0, 2), '-A KUBE-'].join('\n'));
    const [ep] = got.trees.services[0]!.endpoints;
    assert.equal(ep?.chain, 'KUBE-SEP-W565FQEHFWB3IXKJ');
    assert.ok(ep?.shareUnknown, text);
    assert.match(text, /--probability 0\.20000000019: of the connections that reach it/);
    assert.match(text, /cut at line 3/);
  });

  it('is read off for every reader: a fence glued to a quoted line, an ipvsadm row, a line alone', () => {
    const q = unquoted(
      ['> ```' + jump('0.5', 'KUBE-SEP-A'), '> ' + jump(undefined, 'KUBE-SEP-B')].join('\n'),
    );
    assert.equal(q.text.split('\n')[0], jump('0.5', 'KUBE-SEP-A'));
    assert.deepEqual(q.quote?.lines, [1, 2]);
    const ipvs = unquoted(
      ['```TCP  10.96.0.1:443 rr', '  -> 192.168.0.10:6443  Masq 1 0 0```'].join('\n'),
    );
    assert.equal(
      ipvs.text,
      ['TCP  10.96.0.1:443 rr', '  -> 192.168.0.10:6443  Masq 1 0 0'].join('\n'),
    );
    const one = unquoted('```' + jump(undefined, 'KUBE-SEP-B') + '```');
    assert.equal(one.text, jump(undefined, 'KUBE-SEP-B'));
    // a fence on its own line, a language after it, prose after backticks: markdown's, left as is
    assert.equal(
      unquoted(['```bash', jump(undefined, 'KUBE-SEP-B'), '```'].join('\n')).quote,
      undefined,
    );
    assert.equal(unquoted('see ```this```').quote, undefined);
  });
});
