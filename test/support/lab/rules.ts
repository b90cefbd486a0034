// Rules for the lab nodes, as iptables-save text that `iptables-restore` loads: what kube-proxy
// would write for the lab's Services (src/core/dataplane/kube-proxy/expected.ts), or the seed's `iptables -S` dumps
// (the demo cluster's) turned into restore input with the lab's ClusterIP.
import { readFileSync } from 'node:fs';
import { expectedRules } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { expectedSave } from '../../../src/core/dataplane/iptables/save.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import type { LabTopology } from './lab.js';
import { labObjects } from './objects.js';

export interface LabService {
  namespace: string;
  name: string;
  portName: string;
  protocol: 'tcp' | 'udp';
  clusterIP: string;
  port: number;
  endpoints: { ip: string; port: number }[];
}

/**
 * What kube-proxy (1.28+, iptables mode) would write on a lab node, by kdebug's own expected-rules
 * generator from the objects the fake API server serves for the lab: the lab's kernel then does
 * exactly what the API says.
 */
export function expectedLabRules(topology: LabTopology, node: string): string {
  return expectedSave(expectedRules(clusterView(labObjects(topology)), node));
}

const BUILTINS = {
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
};

const declare = (table: keyof typeof BUILTINS, chains: string[]) => [
  `*${table}`,
  ...BUILTINS[table].map((c) => `:${c} ACCEPT [0:0]`),
  ...chains.map((c) => `:${c} - [0:0]`),
];

/** `iptables [-t table] -S` lines (as in the seed files) -> iptables-restore input for that table. */

export function restoreFromListing(table: keyof typeof BUILTINS, listing: string): string {
  const lines = listing.split('\n').filter((l) => l.trim() !== '');
  const chains = lines.filter((l) => l.startsWith('-N ')).map((l) => l.slice(3).trim());
  const rules = lines.filter((l) => l.startsWith('-A '));
  return [...declare(table, chains), ...rules, 'COMMIT', ''].join('\n');
}

/** The seed cluster's nat and filter dumps with its ClusterIP moved into the lab's Service CIDR. */
export function seedRules(clusterIP: string): string {
  const read = (f: string) => readFileSync(new URL(`../../fixtures/${f}`, import.meta.url), 'utf8');
  return (
    restoreFromListing('filter', read('seed-filter-S.txt')) +
    restoreFromListing('nat', read('seed-nat-S.txt').replaceAll('10.1.190.219', clusterIP))
  );
}
