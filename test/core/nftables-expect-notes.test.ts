// `kdebug expect` on an nftables node says no iptables assumption: kube-proxy's nftables proxier
// writes `masquerade fully-random` whatever the node's iptables (pkg/proxy/nftables/proxier.go),
// so the --random-fully note of the iptables proxier before 1.37 is not its (real 1.31 recording).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const randomFully = (notes: string[]) => notes.filter((n) => /random-fully/.test(n));

describe('expect on an nftables node: no --random-fully note', () => {
  it('v1.31 nftables recording: the node read as nftables mode, no note; the iptables proxier of 1.31 keeps it', async () => {
    const facts = await readSnapshot(join(FIXTURES, '31', 'nftables'));
    const analysis = new Analysis(facts, { code: allModes });
    const exp = analysis.node('node-a').expected();
    assert.equal(exp.release.minor, 31);
    assert.deepEqual(randomFully(exp.notes), []);
    // the same objects for the iptables proxier, its rules not read: the assumption is said
    const iptables = expectedRules(analysis.view, 'node-a', { release: { minor: 31 } });
    assert.equal(randomFully(iptables.notes).length, 1);
  });
});
