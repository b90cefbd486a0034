// Rules for the lab nodes, as iptables-save text that `iptables-restore` loads: kube-proxy's
// iptables-mode shape generated from the lab's Services, or the seed's `iptables -S` dumps
// (SEEDS.md section 3) turned into restore input with the lab's ClusterIP.
import { readFileSync } from 'node:fs';
import { endpointChain, kubeProxyChain } from '../../../src/core/chain-names.js';

export interface LabService {
  namespace: string;
  name: string;
  portName: string;
  protocol: 'tcp' | 'udp';
  clusterIP: string;
  port: number;
  endpoints: { ip: string; port: number }[];
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

/** kube-proxy (1.2x, iptables mode) rules for these Services, as iptables-save text. */
export function generateRules(services: LabService[], clusterCIDR: string): string {
  const chains = ['KUBE-MARK-MASQ', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-SERVICES'];
  const rules: string[] = [
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
  ];
  for (const s of services) {
    const spn = `${s.namespace}/${s.name}${s.portName ? `:${s.portName}` : ''}`;
    const svc = kubeProxyChain('KUBE-SVC', spn, s.protocol);
    const match = `-d ${s.clusterIP}/32 -p ${s.protocol} -m comment --comment "${spn} cluster IP" -m ${s.protocol} --dport ${s.port}`;
    chains.push(svc);
    rules.push(`-A KUBE-SERVICES ${match} -j ${svc}`);
    rules.push(`-A ${svc} ! -s ${clusterCIDR} ${match} -j KUBE-MARK-MASQ`);
    s.endpoints.forEach((e, i) => {
      const sep = endpointChain(spn, s.protocol, `${e.ip}:${e.port}`);
      const left = s.endpoints.length - i;
      const pick =
        left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(11)}` : '';
      chains.push(sep);
      rules.push(`-A ${svc} -m comment --comment "${spn} -> ${e.ip}:${e.port}"${pick} -j ${sep}`);
      rules.push(`-A ${sep} -s ${e.ip}/32 -m comment --comment "${spn}" -j KUBE-MARK-MASQ`);
      rules.push(
        `-A ${sep} -p ${s.protocol} -m comment --comment "${spn}" -m ${s.protocol} -j DNAT --to-destination ${e.ip}:${e.port}`,
      );
    });
  }
  rules.push(
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
  );
  const filter = [
    ...declare('filter', ['KUBE-FORWARD']),
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    'COMMIT',
  ];
  return [...filter, ...declare('nat', chains), ...rules, 'COMMIT', ''].join('\n');
}

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
