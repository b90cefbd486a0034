// What kube-proxy programs on one node in IPVS mode (pkg/proxy/ipvs/proxier.go syncProxyRules,
// the same in 1.30-1.37): one virtual server per cluster IP, external IP, load-balancer IP and node
// address × node port of each Service port, with the endpoints of its traffic policy as real
// servers (weight 1); the addresses it binds to kube-ipvs0; its ipsets and their entries; its
// iptables rules (iptables-rules.ts). Built from the same model as iptables mode
// (../../kube-proxy/expected.ts: endpoints, policies, addresses, the release).
import { IPVS_SERVICE_FLAG } from '../../../nodes/commands.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import { containsAny, familyOf, hostPort, type IPFamily } from '../../../ipv6.js';
import type { ServicePortName } from '../../../model.js';
import type { EntryPoint } from '../../trees.js';
import { BUILTINS } from '../../iptables/save.js';
import {
  IPVS_CHAINS,
  ipvsIptablesRules,
  type IpvsIptables,
  type NoNodeAccess,
} from './iptables-rules.js';
import { createLine, IPSETS, ipsetName, type IpsetBase } from './ipsets.js';

export interface ExpectedVirtualServer {
  name: ServicePortName;
  kind: EntryPoint['kind'];
  protocol: 'tcp' | 'udp' | 'sctp';
  /** "10.96.0.10:53" ("[fd00::a]:53"), as ipvsadm prints it. */
  address: string;
  /** The same, as data. */
  ip: string;
  port: number;
  scheduler: string;
  /** Session affinity ClientIP: persistence timeout, seconds. */
  persistent?: number;
  /** "10.244.1.4:80": the endpoints of the entry's traffic policy, weight 1 each. */
  realServers: string[];
  /** Local traffic policy applies to this entry (and found local endpoints). */
  local: boolean;
}

export interface ExpectedIpvs {
  family: IPFamily;
  virtualServers: ExpectedVirtualServer[];
  /** The addresses kube-proxy binds to kube-ipvs0 (its KUBE-IPVS-IPS set). */
  bound: string[];
  /** kube-proxy's ipsets with their entries, as ipset prints them ("10.96.0.10,udp:53"). */
  ipsets: Map<string, string[]>;
  /** The Service port each ipset entry is for, by ipset then entry (KUBE-CLUSTER-IP,
   * "10.96.0.10,udp:53" -> its name): no key string made per entry. */
  entryOwners: Map<string, Map<string, ServicePortName>>;
  /** Its iptables rules (ip6tables' for IPv6), each chain's in the order kube-proxy writes them. */
  iptables: IpvsIptables;
  /** The release modelled, for what the text says. */
  release: ExpectedRules['release'];
  /** The objects the node's kube-proxy takes the endpoints from. */
  endpointsFrom: ExpectedRules['endpointsFrom'];
  /** The node addresses its node ports listen on. */
  nodeIPs: string[];
  /** Those are all of them: the node's addresses were read, or nodePortAddresses names them. */
  nodeIPsKnown: boolean;
  notes: string[];
}

export interface IpvsExpectOptions {
  /** `ipvs.scheduler` (default rr). */
  scheduler?: string;
  /** The node's addresses outside kube-ipvs0 (`ip -br addr`); undefined when not read. */
  nodeAddresses?: string[];
}

/** A KUBE-LOOP-BACK entry: an endpoint reaching itself ("10.244.1.5,tcp:80,10.244.1.5"). */
export const loopBackEntry = (ip: string, protocol: string, port: number | string) =>
  `${ip},${protocol}:${port},${ip}`;

export function expectedIpvs(exp: ExpectedRules, o: IpvsExpectOptions = {}): ExpectedIpvs {
  const family = exp.ruleContext.family;
  const scheduler = o.scheduler || 'rr';
  const notes = [...exp.notes];
  const nodeIPs = nodePortIPs(exp, o, notes);
  const local = new Set(o.nodeAddresses ?? exp.node.ips);
  const ipsets = new Map<string, Set<string>>();
  const entryOwners = new Map<string, Map<string, ServicePortName>>();
  let owner: ServicePortName | undefined;
  const add = (set: string, entry: string) => {
    const name = ipsetName(set, family);
    let entries = ipsets.get(name);
    if (!entries) ipsets.set(name, (entries = new Set()));
    entries.add(entry);
    if (!owner) return;
    let owners = entryOwners.get(name);
    if (!owners) entryOwners.set(name, (owners = new Map()));
    owners.set(entry, owner);
  };
  const bound = new Set<string>();
  const noNodeAccess: NoNodeAccess[] = [];
  const virtualServers: ExpectedVirtualServer[] = [];
  for (const sp of exp.servicePorts) {
    owner = sp.name;
    const proto = sp.protocol;
    const at = (ip: string, port = sp.port) => `${ip},${proto}:${port}`;
    const vs = (kind: EntryPoint['kind'], ip: string, port: number, policyLocal: boolean) => {
      // Local policy: this node's endpoints, else the cluster's where kube-proxy tracks them
      // (kubernetes#97081: a local Pod still reaches the Service)
      const usesCluster =
        !sp.internalPolicyLocal || (sp.externallyAccessible && !sp.externalPolicyLocal);
      const cluster = usesCluster ? sp.clusterEndpoints : [];
      const eps = policyLocal && sp.localEndpoints.length > 0 ? sp.localEndpoints : cluster;
      virtualServers.push({
        name: sp.name,
        kind,
        protocol: proto,
        address: hostPort(ip, port),
        ip,
        port,
        scheduler,
        ...(sp.affinitySeconds !== undefined ? { persistent: sp.affinitySeconds } : {}),
        realServers: eps.map((e) => e.address),
        local: policyLocal,
      });
    };
    for (const e of sp.allEndpoints)
      if (e.local) add('KUBE-LOOP-BACK', loopBackEntry(e.ip, proto, e.port));
    add('KUBE-CLUSTER-IP', at(sp.clusterIP));
    vs('cluster-ip', sp.clusterIP, sp.port, sp.internalPolicyLocal);
    bound.add(sp.clusterIP);
    for (const ip of sp.externalIPs) {
      add(sp.externalPolicyLocal ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', at(ip));
      vs('external-ip', ip, sp.port, sp.externalPolicyLocal);
      if (!local.has(ip)) bound.add(ip);
    }
    for (const ip of sp.loadBalancerIPs) {
      add('KUBE-LOAD-BALANCER', at(ip));
      if (sp.externalPolicyLocal) add('KUBE-LOAD-BALANCER-LOCAL', at(ip));
      if (sp.sourceRanges.length > 0) {
        add('KUBE-LOAD-BALANCER-FW', at(ip));
        for (const cidr of sp.sourceRanges)
          add('KUBE-LOAD-BALANCER-SOURCE-CIDR', `${at(ip)},${cidr}`);
        const fromNode = exp.node.ips
          .slice(0, 1)
          .some((n) => sp.sourceRanges.some((c) => containsAny(c, n)));
        if (fromNode) add('KUBE-LOAD-BALANCER-SOURCE-IP', `${at(ip)},${ip}`);
        else noNodeAccess.push({ ip, protocol: proto, port: sp.port });
      }
      vs('load-balancer', ip, sp.port, sp.externalPolicyLocal);
      if (!local.has(ip)) bound.add(ip);
    }
    if (sp.nodePort && nodeIPs.length > 0) {
      const entries =
        proto === 'sctp' ? nodeIPs.map((ip) => at(ip, sp.nodePort)) : [`${sp.nodePort}`];
      const set =
        proto === 'sctp' ? 'KUBE-NODE-PORT-SCTP-HASH' : `KUBE-NODE-PORT-${proto.toUpperCase()}`;
      for (const e of entries) {
        add(set, e);
        if (sp.externalPolicyLocal) add(set.replace('KUBE-NODE-PORT-', 'KUBE-NODE-PORT-LOCAL-'), e);
      }
      for (const ip of nodeIPs) vs('node-port', ip, sp.nodePort, sp.externalPolicyLocal);
    }
    if (sp.healthCheckNodePort) add('KUBE-HEALTH-CHECK-NODE-PORT', `${sp.healthCheckNodePort}`);
  }
  owner = undefined;
  for (const ip of bound) add('KUBE-IPVS-IPS', ip);
  const filled = new Set(
    (Object.keys(IPSETS) as IpsetBase[]).filter((b) => ipsets.has(ipsetName(b, family))),
  );
  return {
    family,
    virtualServers,
    bound: [...bound],
    ipsets: new Map([...ipsets].map(([k, v]) => [k, [...v]])),
    entryOwners,
    iptables: ipvsIptablesRules(exp, { family, filled, noNodeAccess }),
    release: exp.release,
    endpointsFrom: exp.endpointsFrom,
    nodeIPs,
    nodeIPsKnown: exp.nodePortIPs !== 'all' || o.nodeAddresses !== undefined,
    notes,
  };
}

/** The node addresses node ports listen on: every address but loopback, IPv6 link-local and
 * kube-ipvs0's by default; those in nodePortAddresses when it is set. */
function nodePortIPs(exp: ExpectedRules, o: IpvsExpectOptions, notes: string[]): string[] {
  const family = exp.ruleContext.family;
  const usable = (ip: string) =>
    familyOf(ip) === family &&
    !ip.startsWith('127.') &&
    ip !== '::1' &&
    !/^fe[89ab][0-9a-f]:/i.test(ip);
  if (exp.nodePortIPs !== 'all') return exp.nodePortIPs.filter(usable);
  if (o.nodeAddresses) return [...new Set(o.nodeAddresses.filter(usable))];
  notes.push(
    `the node's addresses were not read (ip -br addr): node ports are expected on the Node object's addresses only`,
  );
  return exp.node.ips.filter(usable);
}

/** The virtual and real servers as `ipvsadm-save -n` prints them (ipvsadm-restore loads it). */
export function ipvsadmSaveLines(e: ExpectedIpvs): string[] {
  return e.virtualServers.flatMap((vs) => [
    `-A ${IPVS_SERVICE_FLAG[vs.protocol]} ${vs.address} -s ${vs.scheduler}${vs.persistent !== undefined ? ` -p ${vs.persistent}` : ''}`,
    ...vs.realServers.map(
      (rs) => `-a ${IPVS_SERVICE_FLAG[vs.protocol]} ${vs.address} -r ${rs} -m -w 1`,
    ),
  ]);
}

/** kube-proxy's ipsets, every one it creates (empty ones too), as `ipset save` writes them
 * (`ipset restore` loads it); the kernel's ipset adds its own options (bucketsize, initval). */
export function ipsetSaveLines(e: ExpectedIpvs): string[] {
  return (Object.keys(IPSETS) as IpsetBase[]).flatMap((base) => {
    const name = ipsetName(base, e.family);
    return [
      createLine(base, e.family),
      ...(e.ipsets.get(name) ?? []).map((entry) => `add ${name} ${entry}`),
    ];
  });
}

/** Its iptables rules as iptables-save prints them: filter then nat, built-in chains first, then
 * kube-proxy's by name, each chain's rules together in the order written. */
export function ipvsIptablesSave(e: ExpectedIpvs): string[] {
  return (['filter', 'nat'] as const).flatMap((table) => {
    const rules = e.iptables[table];
    const chains = [...BUILTINS[table], ...IPVS_CHAINS[table]];
    return [
      `*${table}`,
      ...BUILTINS[table].map((c) => `:${c} ACCEPT [0:0]`),
      ...IPVS_CHAINS[table].map((c) => `:${c} - [0:0]`),
      ...chains.flatMap((c) => rules.filter((r) => r.chain === c).map((r) => r.text)),
      'COMMIT',
    ];
  });
}

/** What kube-proxy programs, as a person compares it with the node: `ipvsadm-save -n`'s lines,
 * the ipsets as `ipset save` writes them, the addresses on kube-ipvs0, then its iptables rules. */
export function expectedIpvsText(e: ExpectedIpvs): string {
  const v6 = e.family === 'IPv6';
  return [
    `# kdebug expect: what kube-proxy v1.${e.release.minor} programs in IPVS mode (${e.family})`,
    ...e.notes.map((n) => `# note: ${n}`),
    `# IPVS (${e.family}): ipvsadm-save -n (ipvsadm-restore loads it)`,
    ...ipvsadmSaveLines(e),
    `# ipsets: ipset list -o save (ipset restore loads it)`,
    ...ipsetSaveLines(e),
    `# kube-ipvs0: ip -br addr show kube-ipvs0`,
    ...e.bound.map((ip) => `${ip}/${v6 ? 128 : 32}`),
    `# ${v6 ? 'ip6tables' : 'iptables'}: ${v6 ? 'ip6tables-save' : 'iptables-save'} (${v6 ? 'ip6tables-restore' : 'iptables-restore'} loads it)`,
    ...ipvsIptablesSave(e),
    '',
  ].join('\n');
}
