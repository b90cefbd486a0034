// The Drift screen marks only what differs: an expected rule that is on the node is not "-".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import { driftLines } from '../../src/tui/screens/Drift.js';
import { allModes } from '../support/modes.js';

describe('the Drift diff', () => {
  it('on a node with a stale endpoint: the stale rules are +, the missing ones -, the rest plain', async () => {
    const data = analyze({ facts: await readSnapshot('snapshots/stale-endpoint'), code: allModes });
    const node = data.nodes.find((n) => n.name === 'vm-12-11-centos')!;
    const drift = node.drift();
    assert.ok('findings' in drift);
    const lines = driftLines(drift.findings, 400).map((l) => l.text.trim());
    const marked = (mark: string) =>
      lines.filter((l) => l.startsWith(mark + ' -t ')).map((l) => l.slice(2));
    assert.ok(
      marked('+').some((l) => l.includes('10.244.1.7')),
      'the stale endpoint is +',
    );
    assert.ok(
      marked('-').some((l) => l.includes('10.244.1.8')),
      'the missing endpoint is -',
    );
    // the cluster IP masquerade rule is expected and on the node: not marked
    assert.ok(
      !marked('-').some((l) => l.includes('KUBE-MARK-MASQ') && l.includes('! -s 10.244.0.0/16')),
    );
    // each line marked missing is absent from the node's dump as iptables-save wrote it
    const dump = new Set(data.facts.nodes['vm-12-11-centos']!['iptables-save']!.split('\n'));
    for (const l of marked('-'))
      assert.equal(
        dump.has(l.replace(/^-t nat /, '')),
        false,
        `marked missing but on the node: ${l}`,
      );
  });
});
