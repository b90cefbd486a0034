// What each Service port's part of kube-proxy's nftables table does, as drift compares it with
// the node's trees: its map entries, no-endpoint verdicts, chains, endpoints, affinity, external
// masquerade and firewall sources. Derived from the same model the script is written from
// (expected.ts), so drift reads no text back; a test holds it equal to the trees of that script's
// table for every modelled release.
import { containsAny, hostCidr } from '../../../ipv6.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import { writes } from '../../kube-proxy/releases.js';
import type { EntryPoint, ServiceTree } from '../../trees.js';
import { nftEndpointNames, nftPortChains, usesFirewall } from './port-script.js';

export interface NftPortPlan {
  entries: Pick<EntryPoint, 'kind' | 'address' | 'port' | 'protocol' | 'chain' | 'from'>[];
  verdicts: { kind: 'reject' | 'drop'; chain: string; address?: string; port: number }[];
  chains: Pick<ServiceTree['chains'], 'svc' | 'svl' | 'ext' | 'fw'>;
  /** The addresses ("ip:port") the service chain DNATs to, in order. */
  endpoints: string[];
  /** The same for the local chain. */
  localEndpoints: string[];
  affinitySeconds?: number;
  /** What the external chain's masquerade marks match: "all", or the match in nft words. */
  externalMasquerade: string[];
}

/** Each Service port with its plan, in the ports' order. Where two ports write an element of the
 * same key (an external IP two Services share), the map holds the last one written, as nft
 * applies the script. */
export function nftPortPlans(
  ports: readonly ExpectedServicePort[],
  loadBalancerIPs: ReadonlySet<string>,
): (readonly [ExpectedServicePort, NftPortPlan])[] {
  // an address in cluster-ips is a cluster IP to the trees, whatever else it is
  const clusterIPs = new Set(ports.map((sp) => sp.clusterIP));
  // pairs, not a Map: each is walked in order, none looked up
  const plans = ports.map((sp) => [sp, nftPortPlan(sp, clusterIPs, loadBalancerIPs)] as const);
  // two ports' keys can be one only at an address (a node port's: its port number) both write:
  // only keys at such an address are spelled out, most addresses being one port's alone
  const writer = new Map<string | number, NftPortPlan | 'several'>();
  let shared = false;
  const wrote = (p: NftPortPlan, at: string | number) => {
    const w = writer.get(at);
    if (w === undefined) writer.set(at, p);
    else if (w !== p) {
      writer.set(at, 'several');
      shared = true;
    }
  };
  for (const [, p] of plans) {
    for (const e of p.entries) wrote(p, e.address ?? e.port!);
    for (const v of p.verdicts) wrote(p, v.address ?? v.port);
  }
  // no address two ports write (most clusters): every key is its one port's
  if (!shared) return plans;
  const keyOf = (
    sp: ExpectedServicePort,
    map: string,
    address: string | undefined,
    port: number,
  ) =>
    writer.get(address ?? port) === 'several'
      ? `${map} ${address ?? ''} ${sp.protocol} ${port}`
      : undefined;
  const owner = new Map<string, NftPortPlan>();
  let keys = 0; // the keys spelled out, each time written
  const own = (key: string | undefined, p: NftPortPlan) => {
    if (key === undefined) return;
    owner.set(key, p);
    keys++;
  };
  for (const [sp, p] of plans) {
    for (const e of p.entries) own(keyOf(sp, e.from, e.address, e.port!), p);
    for (const v of p.verdicts) own(keyOf(sp, v.chain, v.address, v.port), p);
  }
  // a key not spelled out is its one port's
  const last = (key: string | undefined, p: NftPortPlan) =>
    key === undefined || owner.get(key) === p;
  if (owner.size < keys)
    for (const [sp, p] of plans) {
      p.entries = p.entries.filter((e) => last(keyOf(sp, e.from, e.address, e.port!), p));
      p.verdicts = p.verdicts.filter((v) => last(keyOf(sp, v.chain, v.address, v.port), p));
    }
  return plans;
}

/** One port's plan; `clusterIPs` and `loadBalancerIPs` are every Service's, which the trees
 * tell an entry's kind by. */
function nftPortPlan(
  sp: ExpectedServicePort,
  clusterIPs: ReadonlySet<string>,
  loadBalancerIPs: ReadonlySet<string>,
): NftPortPlan {
  const names = nftPortChains(sp);
  const proto = sp.protocol;
  const internalChain = sp.internalPolicyLocal ? names.local : names.service;
  const plan: NftPortPlan = {
    entries: [],
    verdicts: [],
    chains: {},
    // an endpoint's address is its "ip:port" already ("[ip]:port" in IPv6), as hostPort writes it
    endpoints: sp.chains.svc ? sp.clusterEndpoints.map((e) => e.address) : [],
    localEndpoints: sp.chains.svl ? sp.localEndpoints.map((e) => e.address) : [],
    externalMasquerade: !sp.chains.ext
      ? []
      : sp.externalPolicyLocal
        ? ['fib saddr type local']
        : ['all'],
  };
  // set one by one, not spread from an object made for each (10,000 ports)
  if (sp.chains.svc) plan.chains.svc = names.service;
  if (sp.chains.svl) plan.chains.svl = names.local;
  if (sp.chains.ext) plan.chains.ext = names.external;
  if (usesFirewall(sp)) plan.chains.fw = names.firewall;
  const balanced =
    (sp.chains.svc && sp.clusterEndpoints.length > 0) ||
    (sp.chains.svl && sp.localEndpoints.length > 0);
  if (sp.affinitySeconds !== undefined && balanced) plan.affinitySeconds = sp.affinitySeconds;
  // a map holds one element per key: an address listed twice is one entry, the last written
  // in the first one's place
  const entry = (
    kind: EntryPoint['kind'],
    address: string | undefined,
    port: number,
    chain: string,
  ) => {
    const from = address === undefined ? 'service-nodeports' : 'service-ips';
    const e = {
      kind: address !== undefined && clusterIPs.has(address) ? 'cluster-ip' : kind,
      address,
      port,
      protocol: proto,
      chain,
      from,
    } as const;
    const at = plan.entries.findIndex(
      (x) => x.from === from && x.address === address && x.port === port,
    );
    if (at < 0) plan.entries.push(e);
    else plan.entries[at] = e;
  };
  const verdict = (v: 'REJECT' | 'DROP' | undefined, address: string | undefined, port: number) => {
    const chain = address === undefined ? 'no-endpoint-nodeports' : 'no-endpoint-services';
    const x = { kind: v === 'REJECT' ? 'reject' : 'drop', chain, address, port } as const;
    const at = plan.verdicts.findIndex(
      (y) => y.chain === chain && y.address === address && y.port === port,
    );
    if (at < 0) plan.verdicts.push(x);
    else plan.verdicts[at] = x;
  };
  if (sp.hasInternalEndpoints) entry('cluster-ip', sp.clusterIP, sp.port, internalChain);
  else verdict(sp.internalVerdict, sp.clusterIP, sp.port);
  for (const ip of sp.externalIPs) {
    const kind = loadBalancerIPs.has(ip) ? 'load-balancer' : 'external-ip';
    if (sp.hasEndpoints) entry(kind, ip, sp.port, names.external);
    if (!sp.hasExternalEndpoints) verdict(sp.externalVerdict, ip, sp.port);
  }
  for (const ip of sp.loadBalancerIPs)
    if (sp.hasEndpoints) entry('load-balancer', ip, sp.port, names.external);
  if (!sp.hasExternalEndpoints)
    for (const ip of sp.loadBalancerIPs) verdict(sp.externalVerdict, ip, sp.port);
  if (sp.nodePort !== undefined) {
    if (sp.hasEndpoints) entry('node-port', undefined, sp.nodePort, names.external);
    if (!sp.hasExternalEndpoints) verdict(sp.externalVerdict, undefined, sp.nodePort);
  }
  return plan;
}

/** Addresses and CIDRs as nft's interval set holds them: sorted, one inside another left out. */
export function intervalSources(all: string[]): string[] {
  const unique = [...new Set(all)];
  const len = (c: string) => Number(hostCidr(c).split('/')[1]);
  const inside = (a: string) =>
    unique.some((b) => b !== a && len(b) <= len(a) && containsAny(hostCidr(b), a.split('/')[0]!));
  return unique.filter((a) => !inside(a)).sort();
}

/** Every chain kube-proxy writes for the port: its own and, where the release writes them, one
 * per endpoint (before 1.36, or with session affinity). */
export function nftPortChainNames(sp: ExpectedServicePort, exp: ExpectedRules): Set<string> {
  const names = nftPortChains(sp);
  const out = new Set<string>();
  if (sp.chains.svc) out.add(names.service);
  if (sp.chains.svl) out.add(names.local);
  if (sp.chains.ext) out.add(names.external);
  if (usesFirewall(sp)) out.add(names.firewall);
  if (sp.affinitySeconds !== undefined || !writes(exp.release, 'nftInlineMasquerade'))
    for (const ep of sp.reachableEndpoints) out.add(nftEndpointNames(sp, ep).chain);
  return out;
}
