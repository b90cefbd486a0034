// A whole `iptables-save` of a scenario node (Rocky Linux 9, iptables 1.8.10 nf_tables): the
// rules kube-proxy wrote (from src/core/dataplane/kube-proxy/expected.ts, for the API state it last synced), kubelet's
// chains, flannel v0.25's and docker's rules, in the order those components leave them.
import { digest } from './scenario-cluster.js';
import {
  declaredChains,
  type ExpectedRules,
  type RuleLine,
} from '../../src/core/dataplane/kube-proxy/expected.js';

export interface HostInfo {
  node: string;
  /** This node's Pod CIDR (flannel's per-node subnet), e.g. 10.244.1.0/24. */
  podCIDR: string;
  clusterCIDR: string;
  /** "Sat Nov 28 10:15:09 2026" */
  savedAt: string;
}

/** Chains left in nat by an earlier sync (e.g. a deleted Service's), written as they were. */
export type Leftovers = RuleLine[];

const BUILTINS = {
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
} as const;

/** A plausible, stable packet:byte counter for a built-in chain. */
function counter(seed: string): string {
  const n = parseInt(digest(seed, 7), 16);
  return `[${n}:${n * 97 + parseInt(digest(`${seed}b`, 3), 16)}]`;
}

/** Go map order: the Service ports' blocks of a shared chain in an order seeded by the node. */
function shuffled(exp: ExpectedRules, node: string) {
  return [...exp.servicePorts].sort((a, b) => {
    const x = digest(`${node}/${a.name}`, 8);
    const y = digest(`${node}/${b.name}`, 8);
    return x < y ? -1 : 1;
  });
}

export function nodeDump(exp: ExpectedRules, host: HostInfo, leftovers: Leftovers = []): string {
  const { node, podCIDR, clusterCIDR } = host;
  const m = (c: string) => `-m comment --comment "${c}"`;
  const fixed = (table: 'nat' | 'filter', chain: string) =>
    exp.fixed[table].filter((l) => l.chain === chain).map((l) => l.text);
  const ports = shuffled(exp, node);
  const declared = declaredChains(exp);
  const perService = (table: 'nat' | 'filter', chain: string) =>
    ports.flatMap((sp) => sp[table].filter((l) => l.chain === chain).map((l) => l.text));

  const filter = new Map<string, string[]>([
    [
      'INPUT',
      // kube-proxy's jumps (prepended), then kubelet's KUBE-FIREWALL jump (there first)
      fixed('filter', 'INPUT'),
    ],
    [
      'FORWARD',
      [
        `-A FORWARD ${m('flanneld forward')} -j FLANNEL-FWD`,
        ...fixed('filter', 'FORWARD'),
        '-A FORWARD -j DOCKER-USER',
        '-A FORWARD -j DOCKER-ISOLATION-STAGE-1',
        '-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
        '-A FORWARD -o docker0 -j DOCKER',
        '-A FORWARD -i docker0 ! -o docker0 -j ACCEPT',
        '-A FORWARD -i docker0 -o docker0 -j ACCEPT',
      ],
    ],
    ['OUTPUT', fixed('filter', 'OUTPUT')],
    ['DOCKER', []],
    [
      'DOCKER-ISOLATION-STAGE-1',
      [
        '-A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2',
        '-A DOCKER-ISOLATION-STAGE-1 -j RETURN',
      ],
    ],
    [
      'DOCKER-ISOLATION-STAGE-2',
      ['-A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP', '-A DOCKER-ISOLATION-STAGE-2 -j RETURN'],
    ],
    ['DOCKER-USER', ['-A DOCKER-USER -j RETURN']],
    [
      'FLANNEL-FWD',
      [
        `-A FLANNEL-FWD -s ${clusterCIDR} ${m('flanneld forward')} -j ACCEPT`,
        `-A FLANNEL-FWD -d ${clusterCIDR} ${m('flanneld forward')} -j ACCEPT`,
      ],
    ],
    ['KUBE-KUBELET-CANARY', []],
  ]);
  for (const c of declared.filter) {
    if (
      c === 'KUBE-SERVICES' ||
      c === 'KUBE-EXTERNAL-SERVICES' ||
      c === 'KUBE-PROXY-FIREWALL' ||
      c === 'KUBE-NODEPORTS'
    )
      filter.set(c, perService('filter', c));
    else filter.set(c, fixed('filter', c));
  }

  const nat = new Map<string, string[]>([
    [
      'PREROUTING',
      [...fixed('nat', 'PREROUTING'), '-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER'],
    ],
    ['INPUT', []],
    [
      'OUTPUT',
      [
        ...fixed('nat', 'OUTPUT'),
        '-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER',
      ],
    ],
    [
      'POSTROUTING',
      [
        `-A POSTROUTING ${m('flanneld masq')} -j FLANNEL-POSTRTG`,
        ...fixed('nat', 'POSTROUTING'),
        '-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE',
      ],
    ],
    ['DOCKER', ['-A DOCKER -i docker0 -j RETURN']],
    [
      'FLANNEL-POSTRTG',
      [
        `-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 ${m('flanneld masq')} -j RETURN`,
        `-A FLANNEL-POSTRTG -s ${clusterCIDR} -d ${clusterCIDR} ${m('flanneld masq')} -j RETURN`,
        `-A FLANNEL-POSTRTG -s ${clusterCIDR} ! -d 224.0.0.0/4 ${m('flanneld masq')} -j MASQUERADE --random-fully`,
        `-A FLANNEL-POSTRTG ! -s ${clusterCIDR} -d ${podCIDR} ${m('flanneld masq')} -j RETURN`,
        `-A FLANNEL-POSTRTG ! -s ${clusterCIDR} -d ${clusterCIDR} ${m('flanneld masq')} -j MASQUERADE --random-fully`,
      ],
    ],
    ['KUBE-KUBELET-CANARY', []],
  ]);
  for (const c of declared.nat) nat.set(c, []);
  for (const l of exp.fixed.nat)
    if (nat.has(l.chain) && !BUILTINS.nat.includes(l.chain as never))
      nat.get(l.chain)!.push(l.text);
  // shared chains in map order, the node-ports rule last; per-Service chains as written
  nat.set('KUBE-SERVICES', [
    ...perService('nat', 'KUBE-SERVICES'),
    ...fixed('nat', 'KUBE-SERVICES'),
  ]);
  nat.set('KUBE-NODEPORTS', perService('nat', 'KUBE-NODEPORTS'));
  for (const sp of exp.servicePorts)
    for (const l of sp.nat)
      if (l.chain !== 'KUBE-SERVICES' && l.chain !== 'KUBE-NODEPORTS')
        nat.get(l.chain)!.push(l.text);
  for (const l of leftovers) nat.set(l.chain, [...(nat.get(l.chain) ?? []), l.text]);

  const mangle = new Map<string, string[]>(
    ['KUBE-IPTABLES-HINT', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY'].map((c) => [c, []]),
  );
  const out: string[] = [];
  for (const [name, chains] of [
    ['mangle', mangle],
    ['filter', filter],
    ['nat', nat],
  ] as const) {
    const builtins: readonly string[] = BUILTINS[name];
    const user = [...chains.keys()]
      .filter((c) => !builtins.includes(c))
      .sort((a, b) => (a < b ? -1 : 1));
    out.push(`# Generated by iptables-save v1.8.10 (nf_tables) on ${host.savedAt}`, `*${name}`);
    for (const b of builtins) {
      const policy = name === 'filter' && b === 'FORWARD' ? 'DROP' : 'ACCEPT';
      out.push(`:${b} ${policy} ${counter(`${node}/${name}/${b}`)}`);
    }
    for (const c of user) out.push(`:${c} - [0:0]`);
    for (const c of [...builtins, ...user]) out.push(...(chains.get(c) ?? []));
    out.push('COMMIT', `# Completed on ${host.savedAt}`);
  }
  return out.join('\n') + '\n';
}

/** `ip -br addr` of a scenario node: its NIC, docker0, flannel's VTEP, cni0, one veth per Pod. */
export function ipBrief(node: string, nodeIP: string, podCIDR: string, pods: number): string {
  const net = podCIDR.split('/')[0]!;
  const gw = net.replace(/\.0$/, '.1');
  const rows = [
    ['lo', 'UNKNOWN', '127.0.0.1/8 ::1/128'],
    [
      'eth0',
      'UP',
      `${nodeIP}/22 fe80::5054:ff:fe${digest(`${node}/eth0`, 2)}:${digest(`${node}/eth0b`, 4)}/64`,
    ],
    ['docker0', 'DOWN', '172.17.0.1/16'],
    [
      'flannel.1',
      'UNKNOWN',
      `${net}/32 fe80::${digest(`${node}/vtep`, 4)}:ff:fe${digest(`${node}/vtep2`, 2)}:${digest(`${node}/vtep3`, 4)}/64`,
    ],
    [
      'cni0',
      'UP',
      `${gw}/24 fe80::${digest(`${node}/cni0`, 4)}:ff:fe${digest(`${node}/cni0b`, 2)}:${digest(`${node}/cni0c`, 4)}/64`,
    ],
    ...Array.from({ length: pods }, (_, i) => [
      `veth${digest(`${node}/veth${i}`, 8)}@if2`,
      'UP',
      `fe80::${digest(`${node}/veth6${i}`, 4)}:ff:fe${digest(`${node}/v${i}`, 2)}:${digest(`${node}/w${i}`, 4)}/64`,
    ]),
  ];
  return rows.map(([n, s, a]) => `${n!.padEnd(16)} ${s!.padEnd(14)} ${a} `).join('\n') + '\n';
}
