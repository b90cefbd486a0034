// What one Service port adds to kube-proxy's nftables script (proxier.go syncProxyRules' loop over
// the Service ports): its chains' names, its map elements, its chains' rules and load balancing.
import { nftChainBase } from '../../kube-proxy/chain-names.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { ProxyEndpoint } from '../../kube-proxy/endpoints.js';
import { containsAny } from '../../../ipv6.js';
import { portNameOf } from '../../../model.js';
import { writes } from '../../kube-proxy/releases.js';
import {
  dnatTo,
  jump,
  numgenDnat,
  numgenGoto,
  updateSaddr,
  type NftCommand,
  type Statement,
} from './script.js';

/** The chain names of one Service port in nftables mode. */
export interface NftPortChains {
  service: string;
  local: string;
  external: string;
  firewall: string;
}

export function nftPortChains(sp: ExpectedServicePort): NftPortChains {
  const base = nftChainBase(portOf(sp), sp.protocol);
  return {
    service: `service-${base}`,
    local: `local-${base}`,
    external: `external-${base}`,
    firewall: `firewall-${base}`,
  };
}

/** An endpoint's chain and affinity set (session affinity only). */
export function nftEndpointNames(sp: ExpectedServicePort, ep: ProxyEndpoint) {
  const base = nftChainBase(portOf(sp), sp.protocol, ep);
  return { chain: `endpoint-${base}`, affinity: `affinity-${base}` };
}

const portOf = (sp: ExpectedServicePort) => ({
  namespace: sp.namespace,
  service: sp.service,
  port: portNameOf(sp.name),
});

/** Whether the port has a firewall chain: load-balancer IPs with source ranges. */
export const usesFirewall = (sp: ExpectedServicePort) =>
  sp.loadBalancerIPs.length > 0 && sp.sourceRanges.length > 0;

/** The sources the firewall chain lets through: the ranges, and the load-balancer IPs where a
 * range holds the node (kube-proxy lets the node reach its own load balancer). */
export function firewallSources(sp: ExpectedServicePort, exp: ExpectedRules): string[] {
  const nodeIP = exp.node.ips[0];
  const fromNode = nodeIP !== undefined && sp.sourceRanges.some((r) => containsAny(r, nodeIP));
  return [...sp.sourceRanges, ...(fromNode ? sp.loadBalancerIPs : [])];
}

interface PortContext {
  /** The protocols whose localhost node ports kube-proxy rejects (1.37's alpha gate). */
  rejects: ReadonlySet<string>;
  ipX: string;
  addr: string;
  masquerade: Statement;
  ifLocal: string | undefined;
  ifNotLocal: string | undefined;
  exp: ExpectedRules;
  ensure: (chain: string) => void;
  out: NftCommand[];
  rule: (chain: string, matches: string, statement?: Statement, comment?: string) => void;
  hairpins: Set<string>;
}

export function servicePortScript(sp: ExpectedServicePort, c: PortContext): void {
  const { ipX, out, rule, ensure, exp } = c;
  const proto = sp.protocol;
  const names = nftPortChains(sp);
  // each endpoint's names hashed once, though its chain is named in up to four places
  const hashed = new Map<ProxyEndpoint, ReturnType<typeof nftEndpointNames>>();
  const namesOf = (ep: ProxyEndpoint) => {
    let n = hashed.get(ep);
    if (!n) hashed.set(ep, (n = nftEndpointNames(sp, ep)));
    return n;
  };
  const affinity = sp.affinitySeconds !== undefined;
  const inline = writes(exp.release, 'nftInlineMasquerade');
  // before 1.36 every reachable endpoint has a chain; since, only with session affinity
  const endpointChains = affinity || !inline;
  type Verdict = { kind: string; target?: string };
  const verdict = (v: 'REJECT' | 'DROP' | undefined): Verdict =>
    v === 'REJECT' ? { kind: 'goto', target: 'reject-chain' } : { kind: 'drop' };
  const goto = (target: string): Verdict => ({ kind: 'goto', target });
  const element = (set: string, key: (string | number)[], verdict: Verdict, comment?: boolean) =>
    out.push({
      add: 'element',
      set,
      element: comment ? { key, comment: sp.name, verdict } : { key, verdict },
    });

  for (const ep of sp.reachableEndpoints) {
    if (endpointChains) ensure(namesOf(ep).chain);
    const key = `${ep.ip} . ${ep.ip} . ${proto} . ${ep.port}`;
    if (inline && ep.local && !c.hairpins.has(key)) {
      c.hairpins.add(key);
      out.push({
        add: 'element',
        set: 'hairpin-connections',
        element: { key: [ep.ip, ep.ip, proto, ep.port] },
      });
    }
  }
  if (sp.chains.svc) ensure(names.service);
  if (sp.chains.svl) ensure(names.local);
  if (sp.chains.ext) ensure(names.external);
  const internalChain = sp.internalPolicyLocal ? names.local : names.service;
  const externalPolicyChain = sp.externalPolicyLocal ? names.local : names.service;

  out.push({ add: 'element', set: 'cluster-ips', element: { key: [sp.clusterIP] } });
  const vip = (ip: string) => [ip, proto, sp.port];
  if (sp.hasInternalEndpoints) element('service-ips', vip(sp.clusterIP), goto(internalChain));
  else element('no-endpoint-services', vip(sp.clusterIP), verdict(sp.internalVerdict), true);
  for (const ip of sp.externalIPs) {
    if (sp.hasEndpoints) element('service-ips', vip(ip), goto(names.external));
    if (!sp.hasExternalEndpoints)
      element('no-endpoint-services', vip(ip), verdict(sp.externalVerdict), true);
  }
  const firewall = usesFirewall(sp);
  if (firewall) ensure(names.firewall);
  const named = !writes(exp.release, 'nftFirewallElementUncommented');
  for (const ip of sp.loadBalancerIPs) {
    if (sp.hasEndpoints) element('service-ips', vip(ip), goto(names.external));
    if (firewall) element('firewall-ips', vip(ip), goto(names.firewall), named);
  }
  if (!sp.hasExternalEndpoints)
    for (const ip of sp.loadBalancerIPs)
      element('no-endpoint-services', vip(ip), verdict(sp.externalVerdict), true);
  if (sp.nodePort !== undefined) {
    const key = [proto, sp.nodePort];
    if (c.rejects.has(proto))
      element('localhost-nodeport-reject-ports', key, goto(`localhost-nodeport-reject-${proto}`));
    if (sp.hasEndpoints) element('service-nodeports', key, goto(names.external));
    if (!sp.hasExternalEndpoints)
      element('no-endpoint-nodeports', key, verdict(sp.externalVerdict), true);
  }

  if (!inline && sp.hasInternalEndpoints) {
    // the cluster IP's own masquerade rule, in the chain cluster IP traffic goes to
    const port = writes(exp.release, 'nftMasqueradeWithoutPort')
      ? ''
      : ` ${proto} dport ${sp.port}`;
    const match = `${ipX} daddr ${sp.clusterIP}${port}`;
    if (exp.config.masqueradeAll) rule(internalChain, match, c.masquerade);
    else if (c.ifNotLocal) rule(internalChain, `${match} ${c.ifNotLocal}`, c.masquerade);
  }
  if (sp.chains.ext) {
    if (!sp.externalPolicyLocal)
      rule(names.external, '', c.masquerade, inline ? 'masquerade' : undefined);
    else {
      if (c.ifLocal)
        rule(names.external, c.ifLocal, jump('goto', names.service), 'short-circuit pod traffic');
      rule(names.external, 'fib saddr type local', c.masquerade, 'masquerade local traffic');
      rule(
        names.external,
        'fib saddr type local',
        jump('goto', names.service),
        'short-circuit local traffic',
      );
    }
    if (sp.hasExternalEndpoints) rule(names.external, '', jump('goto', externalPolicyChain));
  }
  if (firewall)
    rule(names.firewall, `${ipX} saddr != { ${firewallSources(sp, exp).join(', ')} } drop`);
  if (affinity)
    for (const ep of sp.reachableEndpoints)
      out.push({
        add: 'set',
        set: {
          name: namesOf(ep).affinity,
          kind: 'set',
          type: [c.addr],
          flags: ['dynamic', 'timeout'],
          timeout: sp.affinitySeconds,
        },
      });

  const policies: [string | undefined, ProxyEndpoint[]][] = [
    [sp.chains.svc && names.service, sp.clusterEndpoints],
    [sp.chains.svl && names.local, sp.localEndpoints],
  ];
  for (const [chain, eps] of policies)
    if (chain && eps.length > 0) balance(chain, eps, endpointChains ? namesOf : undefined, sp, c);
  if (endpointChains)
    for (const ep of sp.reachableEndpoints) {
      const n = namesOf(ep);
      if (!inline) rule(n.chain, `${ipX} saddr ${ep.ip}`, c.masquerade);
      if (affinity) rule(n.chain, '', updateSaddr(ipX, n.affinity));
      rule(n.chain, `meta l4proto ${proto}`, dnatTo(ep.ip, ep.port, ep.address));
    }
}

/** A policy chain's load balancing: to endpoint chains (affinity first), or DNAT in place. */
function balance(
  chain: string,
  eps: ProxyEndpoint[],
  /** The endpoint chains' names, where the release writes them. */
  endpointChains: ((ep: ProxyEndpoint) => ReturnType<typeof nftEndpointNames>) | undefined,
  sp: ExpectedServicePort,
  c: PortContext,
): void {
  const { ipX, rule } = c;
  const proto = sp.protocol;
  if (endpointChains) {
    if (sp.affinitySeconds !== undefined)
      for (const ep of eps) {
        const n = endpointChains(ep);
        rule(chain, `${ipX} saddr @${n.affinity}`, jump('goto', n.chain));
      }
    rule(chain, '', numgenGoto(eps.map((ep) => endpointChains(ep).chain)));
  } else if (eps.length === 1 && writes(c.exp.release, 'nftSingleEndpointDnat'))
    rule(chain, `meta l4proto ${proto}`, dnatTo(eps[0]!.ip, eps[0]!.port, eps[0]!.address));
  else rule(chain, `meta l4proto ${proto}`, numgenDnat(ipX, eps));
}
