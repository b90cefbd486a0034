// The nftables-mode table kube-proxy writes on one node, computed from the same model as
// iptables mode (kube-proxy/expected.ts: endpoints, policies, addresses) and written as the
// `nft -f` script kube-proxy itself feeds nft (pkg/proxy/nftables/proxier.go setupNFTables and
// syncProxyRules), as the release of `exp` writes it (kube-proxy/releases.ts says which release
// changed what); default feature gates. The script is typed commands (script.ts): drift builds
// its table from them, never from the printed lines. Each release's TestOverallNFTablesRules is
// the vector (test/versions).
import { nftChainBase } from '../../kube-proxy/chain-names.js';
import type { ExpectedRules, ExpectedServicePort } from '../../kube-proxy/expected.js';
import type { ProxyEndpoint } from '../../kube-proxy/endpoints.js';
import { containsAny, familyOf } from '../../../ipv6.js';
import { writes } from '../../kube-proxy/releases.js';
import type { NftSet, NftTable } from '../read/listing.js';
import {
  dnatTo,
  jump,
  markOr,
  numgenDnat,
  numgenGoto,
  scriptLine,
  scriptTable,
  updateSaddr,
  type BaseChain,
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
  port: sp.name.slice(`${sp.namespace}/${sp.service}`.length + 1),
});

/** kube-proxy's script for the node of `exp` as typed commands, in the order kube-proxy's
 * transaction adds them (so each chain exists before anything points at it), with the
 * commands each Service port adds (drift's evidence) kept apart. */
export interface ExpectedNftScript {
  /** The family of kube-proxy's table: ip or ip6. */
  family: 'ip' | 'ip6';
  commands: NftCommand[];
  ports: Map<ExpectedServicePort, NftCommand[]>;
}

/**
 * The `nft -f` script of kube-proxy's table on the node of `exp`, one command per line.
 * `serviceCIDRs` feed the drop of unallocated cluster IPs (none: no such rule).
 */
export function expectedNftScript(exp: ExpectedRules, serviceCIDRs: string[]): string[] {
  const s = expectedNftCommands(exp, serviceCIDRs);
  return s.commands.map((c) => scriptLine(c, s.family));
}

/** The table that script builds, read from its commands (drift compares a node's with it). */
export function expectedNftTable(s: ExpectedNftScript): NftTable {
  return scriptTable(s.commands, s.family);
}

/** The script's commands; `fixedOnly`: only what every sync writes whatever the Services (the
 * base chains, dispatch, masquerading, checks and their sets), without any Service port's. */
export function expectedNftCommands(
  exp: ExpectedRules,
  serviceCIDRs: string[],
  { fixedOnly = false } = {},
): ExpectedNftScript {
  const family = exp.ruleContext.family;
  const ipX = family === 'IPv6' ? 'ip6' : 'ip';
  const addr = family === 'IPv6' ? 'ipv6_addr' : 'ipv4_addr';
  const notLocalhost = family === 'IPv6' ? 'ip6 daddr != ::1' : 'ip daddr != 127.0.0.0/8';
  const out: NftCommand[] = [];
  // optional fields set only where given: a JSON dump of the commands has no undefined
  const rule = (chain: string, matches: string, statement?: Statement, comment?: string) => {
    const r: NftCommand & { add: 'rule' } = { add: 'rule', chain, matches };
    if (statement) r.statement = statement;
    if (comment !== undefined) r.comment = comment;
    out.push(r);
  };
  const chain = (name: string, base?: BaseChain) =>
    out.push(base ? { add: 'chain', name, base } : { add: 'chain', name });
  const set = (s: Omit<NftSet, 'elements' | 'flags'> & { flags?: string[] }) =>
    out.push({ add: 'set', set: { flags: [], ...s } });
  const made = new Set<string>();
  const ensure = (name: string) => {
    if (!made.has(name)) chain(name);
    made.add(name);
  };
  const mark = `0x${exp.masqueradeMark.toString(16)}`;
  const inline = writes(exp.release, 'nftInlineMasquerade');
  // before 1.36 the mark is set by a jump to a chain of its own
  const masquerade = inline ? markOr(exp.masqueradeMark) : jump('jump', 'mark-for-masquerade');
  // the local detector in nft words (an interface prefix "veth+" is "veth*" there)
  const local = exp.localDetector?.ifLocal;
  const [match, value] = local?.source
    ? [`${ipX} saddr`, local.source]
    : local?.inInterface
      ? ['iifname', local.inInterface.replace(/\+$/, '*')]
      : [];
  const ifLocal = match && `${match} ${value}`;
  const ifNotLocal = match && `${match} != ${value}`;
  const nodePortIPs = nodePortAddressesOf(exp);

  out.push({ add: 'table', comment: 'rules for kube-proxy' });
  const preDnat = writes(exp.release, 'nftPreDnatFilterChains');
  for (const [name, type, hook, prio] of preDnat ? BASE_CHAINS : BASE_CHAINS_BEFORE_33)
    chain(name, { type, hook, prio });
  for (const [to, from, extra] of preDnat ? JUMPS : JUMPS_BEFORE_33) {
    ensure(to);
    rule(from, extra, jump('jump', to));
  }
  const vipType = [addr, 'inet_proto', 'inet_service'];
  if (inline) {
    set({
      name: 'hairpin-connections',
      kind: 'set',
      type: [addr, addr, 'inet_proto', 'inet_service'],
      comment: 'service hairpin connections',
    });
    rule('masquerading', `mark and ${mark} != 0 mark set mark xor ${mark} masquerade fully-random`);
    rule(
      'masquerading',
      `ct status dnat ${ipX} saddr . ${ipX} daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random`,
    );
  } else {
    ensure('mark-for-masquerade');
    rule('mark-for-masquerade', '', markOr(exp.masqueradeMark));
    rule('masquerading', `mark and ${mark} == 0 return`);
    rule('masquerading', `mark set mark xor ${mark}`);
    rule('masquerading', 'masquerade fully-random');
  }
  set({ name: 'cluster-ips', kind: 'set', type: [addr], comment: 'Active ClusterIPs' });
  rule(
    'cluster-ips-check',
    `${ipX} daddr @cluster-ips reject`,
    undefined,
    'Reject traffic to invalid ports of ClusterIPs',
  );
  const cidrs = serviceCIDRs.filter((c) => familyOf(c) === family);
  if (cidrs.length > 0)
    rule(
      'cluster-ips-check',
      `${ipX} daddr { ${cidrs.join(', ')} } drop`,
      undefined,
      'Drop traffic to unallocated ClusterIPs',
    );
  if (nodePortIPs !== 'all') {
    set({
      name: 'nodeport-ips',
      kind: 'set',
      type: [addr],
      comment: 'IPs that accept NodePort traffic',
    });
    for (const ip of nodePortIPs)
      out.push({ add: 'element', set: 'nodeport-ips', element: { key: [ip] } });
  }
  set({
    name: 'no-endpoint-services',
    kind: 'map',
    type: vipType,
    map: 'verdict',
    comment: 'vmap to drop or reject packets to services with no endpoints',
  });
  set({
    name: 'no-endpoint-nodeports',
    kind: 'map',
    type: ['inet_proto', 'inet_service'],
    map: 'verdict',
    comment: 'vmap to drop or reject packets to service nodeports with no endpoints',
  });
  out.push({
    add: 'chain',
    name: 'reject-chain',
    comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports',
  });
  rule('reject-chain', 'reject');
  rule(
    'service-endpoints-check',
    `${ipX} daddr . meta l4proto . th dport vmap @no-endpoint-services`,
  );
  rule(
    'nodeport-endpoints-check',
    `${nodePortIPs === 'all' ? notLocalhost : `${ipX} daddr @nodeport-ips`} meta l4proto . th dport vmap @no-endpoint-nodeports`,
  );
  const rejects = localhostRejects(exp);
  if (rejects.size > 0) {
    set({
      name: 'localhost-nodeport-reject-ports',
      kind: 'map',
      type: ['inet_proto', 'inet_service'],
      map: 'verdict',
      comment: 'localhost NodePorts rejected by kube-proxy',
    });
    for (const p of rejects) {
      out.push({ add: 'counter', name: `localhost-nodeport-rejected-${p}` });
      ensure(`localhost-nodeport-reject-${p}`);
      rule(
        `localhost-nodeport-reject-${p}`,
        `counter name "localhost-nodeport-rejected-${p}" reject`,
      );
    }
    const loopback = family === 'IPv6' ? 'ip6 daddr ::1' : 'ip daddr 127.0.0.0/8';
    rule(
      'nodeport-endpoints-check',
      `${loopback} meta l4proto . th dport vmap @localhost-nodeport-reject-ports`,
    );
  }
  set({
    name: 'firewall-ips',
    kind: 'map',
    type: vipType,
    map: 'verdict',
    comment: 'destinations that are subject to LoadBalancerSourceRanges',
  });
  ensure('firewall-check');
  rule('firewall-check', `${ipX} daddr . meta l4proto . th dport vmap @firewall-ips`);
  set({
    name: 'service-ips',
    kind: 'map',
    type: vipType,
    map: 'verdict',
    comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
  });
  set({
    name: 'service-nodeports',
    kind: 'map',
    type: ['inet_proto', 'inet_service'],
    map: 'verdict',
    comment: 'NodePort traffic',
  });
  // before 1.36 each Service chain masquerades its own cluster IP (servicePortScript)
  if (inline && exp.config.masqueradeAll)
    rule('services', `${ipX} daddr @cluster-ips`, masquerade, 'masquerade all clusterIP traffic');
  else if (inline && ifNotLocal)
    rule(
      'services',
      `${ipX} daddr @cluster-ips ${ifNotLocal}`,
      masquerade,
      'masquerade clusterIP traffic from outside cluster',
    );
  rule('services', `${ipX} daddr . meta l4proto . th dport vmap @service-ips`);
  rule(
    'services',
    nodePortIPs === 'all'
      ? `fib daddr type local ${notLocalhost} meta l4proto . th dport vmap @service-nodeports`
      : `${ipX} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`,
  );

  const hairpins = new Set<string>();
  const ports = new Map<ExpectedServicePort, NftCommand[]>();
  for (const sp of fixedOnly ? [] : exp.servicePorts) {
    const from = out.length;
    servicePortScript(sp, {
      rejects,
      ipX,
      addr,
      masquerade,
      ifLocal,
      ifNotLocal,
      exp,
      ensure,
      out,
      rule,
      hairpins,
    });
    ports.set(sp, out.slice(from));
  }
  return { family: ipX, commands: out, ports };
}

/** The protocols whose connections to a node port on loopback kube-proxy rejects and counts:
 * none unless the KubeProxyNFTablesLocalhostNodePorts gate is on (1.37, alpha); all three, or only
 * UDP and SCTP where nodePortAddresses names loopback itself (a userspace proxy serves TCP). */
function localhostRejects(exp: ExpectedRules): ReadonlySet<string> {
  if (!writes(exp.release, 'nftLocalhostNodePortRejects')) return new Set();
  if (exp.config.featureGates['KubeProxyNFTablesLocalhostNodePorts'] !== true) return new Set();
  const family = exp.ruleContext.family;
  const loopback = exp.config.nodePortAddresses.some(
    (c) =>
      familyOf(c) === family &&
      containsAny(family === 'IPv6' ? '::1/128' : '127.0.0.0/8', c.split('/')[0]!),
  );
  return new Set(loopback ? ['udp', 'sctp'] : ['tcp', 'udp', 'sctp']);
}

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

/** What kube-proxy answers node ports on: `nodePortAddresses` ("primary", the nftables-mode
 * default, is the node's first IP), never a loopback address. */
function nodePortAddressesOf(exp: ExpectedRules): 'all' | string[] {
  if (exp.config.nodePortAddresses.length === 0) return exp.node.ips.slice(0, 1);
  if (exp.nodePortIPs === 'all') return 'all';
  return exp.nodePortIPs.filter((ip) => !ip.startsWith('127.') && ip !== '::1');
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

function servicePortScript(sp: ExpectedServicePort, c: PortContext): void {
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

/** `kdebug expect`'s text for a node in nftables mode: what was modelled and left out, as nft
 * comments, then the script (loadable with `nft -f` as it is). */
export function expectedNftText(exp: ExpectedRules, serviceCIDRs: string[]): string {
  const family = exp.ruleContext.family === 'IPv6' ? 'ip6' : 'ip';
  const head = [
    `# kdebug expect: the table ${family} kube-proxy that kube-proxy v1.${exp.release.minor} writes in nftables mode on node ${exp.node.name}`,
    ...exp.notes.map((n) => `# note: ${n}`),
    ...(serviceCIDRs.some((c) => familyOf(c) === exp.ruleContext.family)
      ? []
      : [
          '# note: no ServiceCIDR of this family was read: the drop of traffic to unallocated cluster IPs is left out',
        ]),
  ];
  return [...head, ...expectedNftScript(exp, serviceCIDRs)].join('\n') + '\n';
}

/** The base chains: name, then type, hook and priority as kube-proxy gives them (1.33+). */
const BASE_CHAINS: [string, string, string, number][] = [
  ['filter-prerouting-pre-dnat', 'filter', 'prerouting', -110],
  ['filter-output-pre-dnat', 'filter', 'output', -110],
  ['filter-input', 'filter', 'input', 0],
  ['filter-forward', 'filter', 'forward', 0],
  ['filter-output', 'filter', 'output', 0],
  ['nat-prerouting', 'nat', 'prerouting', -100],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
];

/** The jumps from the base chains: to, from, and the match before the jump (1.33+). */
const JUMPS: [string, string, string][] = [
  ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-forward', 'ct state new'],
  ['service-endpoints-check', 'filter-output', 'ct state new'],
  ['firewall-check', 'filter-prerouting-pre-dnat', 'ct state new'],
  ['firewall-check', 'filter-output-pre-dnat', 'ct state new'],
  ['services', 'nat-output', ''],
  ['services', 'nat-prerouting', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['cluster-ips-check', 'filter-forward', 'ct state new'],
  ['cluster-ips-check', 'filter-output', 'ct state new'],
];

/** Before 1.33: the filter chains all at -110, and the cluster-IP check after DNAT (-90). */
const BASE_CHAINS_BEFORE_33: [string, string, string, number][] = [
  ['filter-prerouting', 'filter', 'prerouting', -110],
  ['filter-forward', 'filter', 'forward', -110],
  ['filter-input', 'filter', 'input', -110],
  ['filter-output', 'filter', 'output', -110],
  ['filter-output-post-dnat', 'filter', 'output', -90],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
  ['nat-prerouting', 'nat', 'prerouting', -100],
];

const JUMPS_BEFORE_33: [string, string, string][] = [
  ['firewall-check', 'filter-prerouting', 'ct state new'],
  ['service-endpoints-check', 'filter-forward', 'ct state new'],
  ['cluster-ips-check', 'filter-forward', 'ct state new'],
  ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-output', 'ct state new'],
  ['firewall-check', 'filter-output', 'ct state new'],
  ['cluster-ips-check', 'filter-output-post-dnat', 'ct state new'],
  ['services', 'nat-output', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['services', 'nat-prerouting', ''],
];
