// Reading Facts: which nodes were recorded and the rules dump of each. Pure lookups, no verdicts.
import type { Facts } from './model.js';

/** The file stems a node's rules can be stored under, best first. */
const DUMP_STEMS = ['iptables-save', 'iptables-nft-save', 'iptables-legacy-save'];

export interface NodeDump {
  /** Where it came from, e.g. "nodes/vm-12-7-centos/iptables-save.txt". */
  source: string;
  text: string;
}

/** Nodes with at least one recorded output, sorted. */
export function recordedNodes(facts: Facts): string[] {
  return Object.keys(facts.nodes).sort();
}

/** The node's iptables-save output, if recorded. */
export function nodeDump(facts: Facts, node: string): NodeDump | undefined {
  const outputs = facts.nodes[node];
  if (!outputs) return undefined;
  for (const stem of DUMP_STEMS) {
    const text = outputs[stem];
    if (text !== undefined) return { source: `nodes/${node}/${stem}.txt`, text };
  }
  return undefined;
}
