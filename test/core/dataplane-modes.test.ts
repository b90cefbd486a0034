// Which mode's code a run loads for what its nodes recorded (core/nodes/commands.ts listingMode):
// each listing's stem names the mode that reads it, and no other output loads one. The code
// loaded is the value loadDataplanes returns, and nothing else holds it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadModes, ModeNotLoaded, type LoadedMode } from '../../src/core/dataplane/modes.js';
import type { Facts } from '../../src/core/model.js';
import { loadDataplanes } from '../../src/core/nodes/analysis.js';
import { commandStem, listingMode, type NodeCommand } from '../../src/core/nodes/commands.js';
import { aCiliumAgent } from '../support/builders.js';

describe('the mode a recorded output loads', () => {
  it("each mode's listings, by the stem a snapshot keeps them under", () => {
    const listings: [NodeCommand, string][] = [
      [{ kind: 'nft-list', family: 'ip' }, 'nftables'],
      [{ kind: 'nft-list', family: 'ip6', format: 'text' }, 'nftables'],
      [{ kind: 'ipvs-save' }, 'ipvs'],
      [{ kind: 'ipvs-save', format: 'list' }, 'ipvs'],
      [{ kind: 'ipvs-service', protocol: 'udp', ip: '10.96.0.10', port: 53 }, 'ipvs'],
      [{ kind: 'ipset-save' }, 'ipvs'],
      [{ kind: 'ipset-test', set: 'KUBE-LOOP-BACK', entry: '10.0.0.1,tcp:80,10.0.0.1' }, 'ipvs'],
      [{ kind: 'cilium', list: 'service-list' }, 'cilium'],
      [{ kind: 'cilium', list: 'frontends', binary: 'cilium' }, 'cilium'],
      [{ kind: 'cilium', list: 'backends' }, 'cilium'],
      [{ kind: 'cilium', list: 'bpf-lb-list' }, 'cilium'],
    ];
    for (const [c, mode] of listings) assert.equal(listingMode(commandStem(c)), mode, c.kind);
  });

  it("loads none for iptables' dumps, the agent's status or the node's other outputs", () => {
    const others: NodeCommand[] = [
      { kind: 'iptables-save', backend: 'auto' },
      { kind: 'ip6tables-save', backend: 'nft', table: 'nat' },
      { kind: 'iptables-chain', tool: 'iptables', backend: 'auto', chain: 'KUBE-SERVICES' },
      { kind: 'proxy-mode' },
      { kind: 'proxy-configz' },
      { kind: 'ip-addr' },
      { kind: 'conntrack-stats' },
      { kind: 'proc-net', file: 'ip_vs_stats' },
      { kind: 'cilium', list: 'status' },
      { kind: 'tcp-connect', ip: '10.96.0.10', port: 53 },
    ];
    for (const c of others) assert.equal(listingMode(commandStem(c)), undefined, commandStem(c));
  });
});

/** The modes whose code `code` holds: the others are a bug to ask for, said in one line. */
function held(code: Awaited<ReturnType<typeof loadModes>>): LoadedMode[] {
  return (['nftables', 'ipvs', 'cilium'] as const).filter((m) => {
    try {
      return code.of(m) !== undefined;
    } catch (e) {
      assert.ok(e instanceof ModeNotLoaded, String(e));
      assert.equal(e.message, `kdebug: the ${m} dataplane was not loaded before it was read`);
      return false;
    }
  });
}

describe('the code a run loads', () => {
  const recorded = (stems: string[], objects: Facts['objects'] = []): Facts => ({
    objects,
    nodes: { 'node-a': Object.fromEntries(stems.map((s) => [s, ''])) },
    meta: {},
  });

  it('an iptables node loads no other mode: each one asked for is a bug, in one line', async () => {
    const code = await loadDataplanes(recorded(['iptables-save', 'ip-addr', 'proxy-mode']));
    assert.deepEqual(held(code), []);
  });

  it("the modes the nodes' listings name, and Cilium's for an agent in the API", async () => {
    const nft = commandStem({ kind: 'nft-list', family: 'ip' });
    const ipset = commandStem({ kind: 'ipset-save' });
    assert.deepEqual(held(await loadDataplanes(recorded([nft]))), ['nftables']);
    assert.deepEqual(held(await loadDataplanes(recorded([ipset, 'iptables-save']))), ['ipvs']);
    // an agent's expected frontends need no listing of it
    const agent = recorded(['iptables-save'], [aCiliumAgent('node-a')]);
    assert.deepEqual(held(await loadDataplanes(agent)), ['cilium']);
  });

  it("each load is its own value: a mode loaded before is not another run's", async () => {
    assert.deepEqual(held(await loadModes(['ipvs', 'nftables', 'iptables'])), ['nftables', 'ipvs']);
    assert.deepEqual(held(await loadModes([])), []);
  });
});
