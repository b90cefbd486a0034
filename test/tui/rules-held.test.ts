// The word for what a node's rules were read from: a node's dump (a snapshot's, a live node's) is
// "the dump", a file given to `rules --file` "the paste", in the Rules screen and in `rules`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { analyze } from '../../src/tui/data.js';
import { rulesModel } from '../../src/tui/screens/Rules.js';
import { initialState } from '../../src/tui/state.js';
import { rulesDoc, rulesText } from '../../src/output/rules.js';
import { parseNftAny } from '../../src/core/dataplane/nftables/read/read-text.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { allModes } from '../support/modes.js';

const SNAPSHOTS = new URL('../../snapshots/', import.meta.url).pathname;
const NODE = 'vm-12-7-centos';

/** The orphan-chains snapshot with its node's nat table recorded in part: no *nat line and no
 * built-in chain. */
async function natInPart() {
  const facts = await readSnapshot(`${SNAPSHOTS}orphan-chains`);
  const node = facts.nodes[NODE]!;
  let table = '';
  node['iptables-save'] = node['iptables-save']!.split('\n')
    .filter((l) => {
      if (l.startsWith('*')) table = l;
      return (
        table !== '*nat' ||
        (l !== '*nat' && !/^(?::|-A )(?:PREROUTING|INPUT|OUTPUT|POSTROUTING) /.test(l))
      );
    })
    .join('\n');
  return facts;
}

describe('what the rules were read from, in words', () => {
  it("a snapshot node's dump read in part: the Rules screen says the dump, never the paste", async () => {
    const data = analyze({ facts: await natInPart(), code: allModes });
    const nodes = data.nodes.filter((n) => n.name === NODE);
    assert.equal(nodes[0]!.held, 'dump');
    const m = rulesModel(initialState('rules'), nodes, undefined, 120, 40);
    assert.match(m.marks.unproven ?? '', /the dump holds part of the nat table/);
    assert.equal(m.marks.held, 'dump');
  });

  it('a file given to rules --file: the paste', async () => {
    const facts = await natInPart();
    const text = facts.nodes[NODE]!['iptables-save']!;
    const data = analyze(
      { facts: { objects: [], nodes: {}, meta: {} }, code: allModes },
      { rules: { label: 'p.txt', text } },
    );
    assert.equal(data.nodes[0]!.held, 'paste');
  });

  it("`rules` of every snapshot's nodes never says paste", async () => {
    for (const dir of readdirSync(SNAPSHOTS)) {
      const facts = await readSnapshot(`${SNAPSHOTS}${dir}`);
      for (const name of Object.keys(facts.nodes)) {
        const node = new Analysis(facts, { code: allModes }).node(name);
        const dp = node.dataplane();
        const dump = dp && 'table' in dp ? dp.table : node.ruleset();
        const trees = node.trees();
        if (!dump || !trees) continue;
        const source = { label: `node ${name}`, node: name, held: 'dump' as const };
        const said = `${rulesText(dump, trees, source)}\n${JSON.stringify(rulesDoc(dump, trees, source))}`;
        assert.doesNotMatch(said, /\bpaste/, `${dir} ${name}:\n${said}`);
      }
    }
  });

  it("a node's nft dump cut short: its partial Services say the listing, not the paste", () => {
    const whole = readFileSync(
      new URL('../fixtures/nft/kube-proxy-1.37-node-a.txt', import.meta.url),
      'utf8',
    ).split('\n');
    // cut inside the Service chains, before kube-dns's
    const cut = whole.slice(0, whole.findIndex((l) => /chain service-AS2KJYAD/.test(l)) + 1);
    const table = parseNftAny(cut.join('\n') + '\n', 'nft.txt').table('ip', 'kube-proxy')!;
    assert.ok(table.cut);
    const trees = buildNftServiceTrees(table);
    const source = { label: 'node node-a', node: 'node-a', held: 'dump' as const };
    const said = `${rulesText(table, trees, source)}\n${JSON.stringify(rulesDoc(table, trees, source))}`;
    assert.match(said, /its chain is not in the listing/);
    assert.doesNotMatch(said, /\bpaste/, said);
  });
});
