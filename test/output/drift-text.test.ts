// `kdebug drift`'s text: its last line counts nodes, not the rule sets compared on them (a
// dual-stack node has an IPv4 and an IPv6 one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeDrift } from '../../src/core/dataplane/drift.js';
import { driftText } from '../../src/output/drift.js';

const clean = (node: string, family?: 'IPv6'): NodeDrift => ({
  mode: 'iptables',
  node,
  ...(family ? { family } : {}),
  source: `nodes/${node}/${family ? 'ip6tables' : 'iptables'}-save.txt`,
  servicePorts: 3,
  findings: [],
  drifted: false,
});

const lastLine = (nodes: NodeDrift[]) =>
  driftText({ label: 'snapshot s', nodes, drifted: false, notCompared: [] })
    .trimEnd()
    .split('\n')
    .pop();

describe('drift text: the closing count', () => {
  it('counts each node once, the families of its rule sets apart where IPv6 was compared', () => {
    const nodes = ['node-a', 'node-b'].flatMap((n) => [clean(n), clean(n, 'IPv6')]);
    assert.equal(lastLine(nodes), '2 nodes (2 IPv4 rule sets, 2 IPv6 rule sets): no drift');
    assert.equal(lastLine([clean('node-a')]), '1 node: no drift');
  });
});

describe('drift text: what each node was compared with', () => {
  const firstLine = (n: NodeDrift) =>
    driftText({ label: 'snapshot s', nodes: [n], drifted: false, notCompared: [] }).split('\n')[0];

  it('says the mode the drift was computed in, whatever its tables are called', () => {
    // a table named as no other mode names one: the mode is the drift's, not read from its name
    const nft: NodeDrift = { ...clean('node-a'), mode: 'nftables', tables: ['inet kube-proxy-x'] };
    assert.match(firstLine(nft)!, /would write in nftables mode/);
    const ipvs: NodeDrift = { ...clean('node-a'), mode: 'ipvs', tables: ['nat'] };
    assert.match(
      firstLine(ipvs)!,
      /would program in IPVS mode \(virtual servers, real servers; its ipsets were not read, its iptables nat rules;/,
    );
    const natOnly = { ...clean('node-a'), tables: ['nat'] };
    assert.match(
      firstLine(natOnly)!,
      /would write \(nat table only: the dump has no filter table\)$/,
    );
    assert.match(firstLine(clean('node-a'))!, /compared with what kube-proxy would write$/);
  });
});
