// `iptables -S CHAIN` pasted without the -N line iptables printed first: the typed command (its
// options as getopt reads -S's optional argument) names the table and the chain its rows are the
// whole of; `-S CHAIN N` (rule N alone) or a pipe after it (grep, head) lists part of it only,
// whose endpoints' shares of the Service it does not show.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  listedTable,
  typedOptions,
} from '../../../src/core/dataplane/iptables/read/paste/list-view/command.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const SVC = 'KUBE-SVC-ERIFXISQEP7F7OF4';
const ROWS = [
  `-A ${SVC} -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-IT2ZTR26TO4XFPTO`,
  `-A ${SVC} -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.244.0.3:53" -j KUBE-SEP-ZXMNUKOKXUTL2MK2`,
];

const read = (command: string) => {
  const got = readPaste([`$ ${command}`, ...ROWS].join('\n'), { file: 'p.txt' });
  assert.ok(got.mode === 'iptables', 'message' in got ? got.message : got.mode);
  const tree = got.trees.services.find((t) => t.chains.svc === SVC || t.id.includes('dns-tcp'));
  assert.ok(tree, got.trees.services.map((t) => t.id).join(', '));
  return { got, tree, text: rulesText(got.dump, got.trees, { label: 'paste' }) };
};

describe('iptables -S CHAIN typed, its -N line not in the paste', () => {
  it("-S's chain as getopt reads it: in the option's word, after '=', or the next word; a rule number after it", () => {
    for (const args of [`-t nat -S${SVC}`, `-t nat --list-rules=${SVC}`, `-tnat --list-r ${SVC}`])
      assert.equal(typedOptions(args).chain, SVC, args);
    assert.equal(typedOptions(`-t nat -S ${SVC} 2`).ruleNumber, 2);
    assert.equal(listedTable(`iptables -t nat -S${SVC}`)?.table, 'nat');
    assert.equal(listedTable(`iptables -t nat --list-rules=${SVC}`)?.chain, SVC);
    assert.equal(listedTable(`iptables -t nat -S ${SVC} 2`)?.chain, undefined);
    assert.equal(listedTable(`iptables -t nat -S ${SVC} | grep 10.244`)?.chain, undefined);
  });

  it('the rows are the whole chain the command names: declared there, not a chain that may go on', () => {
    // grep '-A' drops the -N line alone: every rule is there
    for (const command of [
      `iptables -t nat -S ${SVC}`,
      `sudo iptables -t nat -S${SVC}`,
      `iptables -t nat -S ${SVC} | grep -e '-A'`,
    ]) {
      const { got, tree, text } = read(command);
      assert.deepEqual(
        got.dump.tables.map((t) => t.name),
        ['nat'],
      );
      assert.equal(tree.partial, undefined, text);
      assert.deepEqual(
        tree.endpoints.map((e) => [e.address, Math.round(e.probability * 100)]),
        [
          ['10.244.0.2:53', 50],
          ['10.244.0.3:53', 50],
        ],
      );
      assert.match(text, new RegExp(`${SVC} are \`.*\`'s listing of that chain \\(line 1\\)`));
    }
  });

  it('a rule number or a pipe after the command: part of the chain, no share of the Service', () => {
    for (const [command, why] of [
      [`iptables -t nat -S ${SVC} 2`, /lists its rule 2 alone: rule 1 before it/],
      [`iptables -t nat -S ${SVC} | grep dns`, /piped through `grep dns`: any of its rules/],
    ] as const) {
      const { tree, text } = read(command);
      assert.match(tree.partial ?? '', why, text);
      assert.ok(
        tree.endpoints.every((e) => e.shareUnknown !== undefined),
        text,
      );
      assert.doesNotMatch(text, /\d%/, text);
      assert.doesNotMatch(text, /listing of that chain/);
    }
    // the one rule `-S CHAIN 2` prints, kube-proxy's last: not the Service's every connection
    const one = readPaste([`$ iptables -t nat -S ${SVC} 2`, ROWS[1]!].join('\n'), { file: 'p' });
    assert.ok(one.mode === 'iptables');
    assert.doesNotMatch(rulesText(one.dump, one.trees, { label: 'p' }), /100%/);
  });
});
