// Which mode's code a run loads for what its nodes recorded (core/nodes/commands.ts listingMode):
// each listing's stem names the mode that reads it, and no other output loads one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandStem, listingMode, type NodeCommand } from '../../src/core/nodes/commands.js';

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
