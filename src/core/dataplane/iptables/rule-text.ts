// The text of the rules kube-proxy writes, in the canonical form iptables-save prints them back:
// `-s/-d/-i/-p` first (addresses with their /32 or /128), then the matches in the order kube-proxy wrote
// them, comments always quoted, `--or-mark 0x4000` as `--set-xmark 0x4000/0x4000`, probabilities
// quantised, `-j REJECT` with its default `--reject-with`. Checked against iptables 1.8.9.
import { savedProbability } from '../kube-proxy/endpoints.js';
import type { ExpectedEndpoint, ExpectedServicePort } from '../kube-proxy/service-port.js';
import { containsAny, FAMILY, type IPFamily } from '../../ipv6.js';
import type { Address } from './read/rule/rule.js';

/** One rule: its chain and its full text ("-A CHAIN ..."), and the parts drift picks rules by,
 * as kdebug computed them (a rendered text is never read back). */
export interface RuleLine {
  chain: string;
  text: string;
  /** Its -j target; undefined: it has none. */
  target?: string;
  /** Its -s and -d matches, addresses with their /32 or /128 as written. */
  source?: Address;
  destination?: Address;
  /** Sampled rules only: the rule's position in its chain, and how many rules the chain has. */
  index?: number;
  of?: number;
}

const NODEPORTS_COMMENT =
  'kubernetes service nodeports; NOTE: this must be the last rule in this chain';

/** What a rule is picked by besides its chain. */
type Parts = Pick<RuleLine, 'target' | 'source' | 'destination'>;

/** A rule's target and the options written after it (" --reject-with ..."). */
type Verdict = [target: string, args: string];

/** A positive -s or -d match. */
const at = (cidr: string): Address => ({ cidr, negated: false });

/** Every RuleLine with the same fields, in one order (V8 keeps one shape for 300,000 of them);
 * a sampled rule's place in its chain (`index` of `of`). */
const ruleLine = (
  chain: string,
  spec: string,
  parts: Parts,
  index?: number,
  of?: number,
): RuleLine => ({
  chain,
  text: `-A ${chain} ${spec}`,
  target: parts.target,
  source: parts.source,
  destination: parts.destination,
  index,
  of,
});

/** The canonical spelling of the mark, e.g. 0x4000. */
export const hexMark = (mark: number) => `0x${mark.toString(16)}`;

export interface ServiceRulesContext {
  /** The rule set's family: iptables (IPv4) or ip6tables (IPv6). */
  family: IPFamily;
  largeClusterMode: boolean;
  nodeIPs: string[];
  /** localhost node ports with the nfacct counter: an extra counting rule per node port. */
  localhostCounter: boolean;
  /** The local detector's match for Pod traffic ("-s 10.244.0.0/16", "-i cni0"), if any. */
  podTraffic?: string;
}

/** What a Service port's rules are written from: all servicePortRules reads of it (a port whose
 * names are numbered, drift/behaviour/port-names.ts, writes the rules of its shape). */
export type PortShape = Pick<
  ExpectedServicePort,
  | 'name'
  | 'protocol'
  | 'clusterIP'
  | 'port'
  | 'nodePort'
  | 'healthCheckNodePort'
  | 'externalIPs'
  | 'loadBalancerIPs'
  | 'sourceRanges'
  | 'externalPolicyLocal'
  | 'affinitySeconds'
  | 'hasEndpoints'
  | 'hasInternalEndpoints'
  | 'hasExternalEndpoints'
  | 'chains'
  | 'internalChain'
  | 'externalPolicyChain'
  | 'clusterIPMasquerade'
  | 'internalVerdict'
  | 'externalVerdict'
> & {
  clusterEndpoints: EndpointShape[];
  localEndpoints: EndpointShape[];
  reachableEndpoints: EndpointShape[];
};

/** What the rules say of an endpoint. */
export type EndpointShape = Pick<ExpectedEndpoint, 'ip' | 'address' | 'chain'>;

/** The nat and filter rules of one Service port, in kube-proxy's emission order. */
export function servicePortRules(
  sp: PortShape,
  ctx: ServiceRulesContext,
  /** Per-endpoint rules only for the first and last endpoint (the drift check of huge dumps). */
  sample = false,
): { nat: RuleLine[]; filter: RuleLine[] } {
  const nat: RuleLine[] = [];
  const filter: RuleLine[] = [];
  const N = sp.name;
  const P = sp.protocol;
  const F = FAMILY[ctx.family];
  const rule = (list: RuleLine[], chain: string, spec: string, parts: Parts) =>
    list.push(ruleLine(chain, spec, parts));
  const host = (ip: string) => at(`${ip}${F.host}`);
  // a rule to one of the port's addresses, jumping to `target` (with its options, `args`)
  const vip = (
    list: RuleLine[],
    chain: string,
    ip: string,
    comment: string,
    [target, args]: Verdict,
  ) =>
    rule(
      list,
      chain,
      `-d ${ip}${F.host} -p ${P} -m comment --comment "${comment}" -m ${P} --dport ${sp.port} -j ${target}${args}`,
      { target, destination: host(ip) },
    );
  const verdictFor = (v: 'REJECT' | 'DROP' | undefined): Verdict =>
    v === 'REJECT' ? ['REJECT', ` --reject-with ${F.reject}`] : ['DROP', ''];
  const verdictComment = (v: 'REJECT' | 'DROP' | undefined) =>
    v === 'REJECT' ? `${N} has no endpoints` : `${N} has no local endpoints`;
  const jump = (chain: string): Verdict => [chain, ''];
  const ext = sp.chains.ext;
  const lbChain = sp.chains.fw ?? ext;

  // 1. cluster IP
  if (sp.hasInternalEndpoints)
    vip(nat, 'KUBE-SERVICES', sp.clusterIP, `${N} cluster IP`, jump(sp.internalChain));
  else
    vip(
      filter,
      'KUBE-SERVICES',
      sp.clusterIP,
      verdictComment(sp.internalVerdict),
      verdictFor(sp.internalVerdict),
    );
  // 2. external IPs
  for (const ip of sp.externalIPs) {
    if (sp.hasEndpoints && ext) vip(nat, 'KUBE-SERVICES', ip, `${N} external IP`, jump(ext));
    if (!sp.hasExternalEndpoints)
      vip(
        filter,
        'KUBE-EXTERNAL-SERVICES',
        ip,
        verdictComment(sp.externalVerdict),
        verdictFor(sp.externalVerdict),
      );
  }
  // 3. load-balancer IPs
  for (const ip of sp.loadBalancerIPs) {
    if (sp.hasEndpoints && lbChain)
      vip(nat, 'KUBE-SERVICES', ip, `${N} loadbalancer IP`, jump(lbChain));
    if (sp.chains.fw)
      vip(
        filter,
        'KUBE-PROXY-FIREWALL',
        ip,
        `${N} traffic not accepted by ${sp.chains.fw}`,
        verdictFor('DROP'),
      );
  }
  // 4. load-balancer IPs without (local) endpoints
  if (!sp.hasExternalEndpoints)
    for (const ip of sp.loadBalancerIPs)
      vip(
        filter,
        'KUBE-EXTERNAL-SERVICES',
        ip,
        verdictComment(sp.externalVerdict),
        verdictFor(sp.externalVerdict),
      );
  // 5. node port
  if (sp.nodePort !== undefined) {
    if (sp.hasEndpoints && ext) {
      if (ctx.localhostCounter)
        rule(
          nat,
          'KUBE-NODEPORTS',
          `-d 127.0.0.0/8 -p ${P} -m comment --comment "${N}" -m ${P} --dport ${sp.nodePort} -m nfacct --nfacct-name  localhost_nps_accepted_pkts -j ${ext}`,
          { target: ext, destination: at('127.0.0.0/8') },
        );
      rule(
        nat,
        'KUBE-NODEPORTS',
        `-p ${P} -m comment --comment "${N}" -m ${P} --dport ${sp.nodePort} -j ${ext}`,
        { target: ext },
      );
    }
    if (!sp.hasExternalEndpoints) {
      const [target, args] = verdictFor(sp.externalVerdict);
      rule(
        filter,
        'KUBE-EXTERNAL-SERVICES',
        `-p ${P} -m comment --comment "${verdictComment(sp.externalVerdict)}" -m addrtype --dst-type LOCAL -m ${P} --dport ${sp.nodePort} -j ${target}${args}`,
        { target },
      );
    }
  }
  // 6. health check node port
  if (sp.healthCheckNodePort)
    rule(
      filter,
      'KUBE-NODEPORTS',
      `-p tcp -m comment --comment "${N} health check node port" -m tcp --dport ${sp.healthCheckNodePort} -j ACCEPT`,
      { target: 'ACCEPT' },
    );
  // 8. external traffic
  if (ext) {
    if (!sp.externalPolicyLocal) {
      rule(
        nat,
        ext,
        `-m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ`,
        { target: 'KUBE-MARK-MASQ' },
      );
    } else {
      const svc = sp.chains.svc ?? sp.internalChain;
      if (ctx.podTraffic)
        rule(
          nat,
          ext,
          `${ctx.podTraffic} -m comment --comment "pod traffic for ${N} external destinations" -j ${svc}`,
          { target: svc },
        );
      rule(
        nat,
        ext,
        `-m comment --comment "masquerade LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        { target: 'KUBE-MARK-MASQ' },
      );
      rule(
        nat,
        ext,
        `-m comment --comment "route LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j ${svc}`,
        { target: svc },
      );
    }
    if (sp.hasExternalEndpoints)
      rule(nat, ext, `-j ${sp.externalPolicyChain}`, { target: sp.externalPolicyChain });
  }
  // 9. loadBalancerSourceRanges
  const fw = sp.chains.fw;
  if (fw && ext) {
    const lb = `-m comment --comment "${N} loadbalancer IP" -j ${ext}`;
    for (const cidr of sp.sourceRanges)
      rule(nat, fw, `-s ${cidr} ${lb}`, { target: ext, source: at(cidr) });
    if (sp.sourceRanges.some((c) => ctx.nodeIPs.some((ip) => containsAny(c, ip))))
      for (const ip of sp.loadBalancerIPs)
        rule(nat, fw, `-s ${ip}${F.host} ${lb}`, { target: ext, source: host(ip) });
    rule(
      nat,
      fw,
      `-m comment --comment "other traffic to ${N} will be dropped by KUBE-PROXY-FIREWALL"`,
      {},
    );
  }
  // 7 + 10. the policy chains: the masquerade rule for cluster IP traffic from outside the Pod
  // network heads the internal one (kube-proxy writes it first, before the EXT and FW rules; here
  // each chain's rules stay together), then the endpoint jumps
  for (const [chain, eps] of [
    [sp.chains.svc, sp.clusterEndpoints],
    [sp.chains.svl, sp.localEndpoints],
  ] as const) {
    if (!chain) continue;
    const masq = chain === sp.internalChain && sp.hasInternalEndpoints && sp.clusterIPMasquerade;
    const start = nat.length;
    if (masq) {
      const src = masq.startsWith('! -s') ? `${masq} ` : '';
      const iface = masq.startsWith('! -i') ? ` ${masq}` : '';
      rule(
        nat,
        chain,
        `${src}-d ${sp.clusterIP}${F.host}${iface} -p ${P} -m comment --comment "${N} cluster IP" -m ${P} --dport ${sp.port} -j KUBE-MARK-MASQ`,
        { target: 'KUBE-MARK-MASQ', destination: host(sp.clusterIP) },
      );
    }
    jumps(nat, sp, chain, eps, ctx, sample, masq ? 1 : 0);
    if (sample && nat.length > start && nat[nat.length - 1]!.of !== undefined) {
      if (masq) Object.assign(nat[start]!, { index: 0, of: nat[nat.length - 1]!.of });
    }
  }
  // 11. the endpoint chains
  const seps = sample ? sp.reachableEndpoints.slice(0, 1) : sp.reachableEndpoints;
  for (const ep of seps) {
    const comment = ctx.largeClusterMode ? '' : ` -m comment --comment "${N}"`;
    const recent =
      sp.affinitySeconds !== undefined
        ? ` -m recent --set --name ${ep.chain} --mask ${F.mask} --rsource`
        : '';
    nat.push(
      ruleLine(
        ep.chain,
        `-s ${ep.ip}${F.host}${comment} -j KUBE-MARK-MASQ`,
        { target: 'KUBE-MARK-MASQ', source: host(ep.ip) },
        sample ? 0 : undefined,
        sample ? 2 : undefined,
      ),
      ruleLine(
        ep.chain,
        `-p ${P}${comment}${recent} -m ${P} -j DNAT --to-destination ${ep.address}`,
        { target: 'DNAT' },
        sample ? 1 : undefined,
        sample ? 2 : undefined,
      ),
    );
  }
  return { nat, filter };
}

function jumps(
  out: RuleLine[],
  sp: PortShape,
  chain: string,
  eps: EndpointShape[],
  ctx: ServiceRulesContext,
  sample: boolean,
  base: number,
): void {
  const comment = (ep: EndpointShape) =>
    ctx.largeClusterMode ? '' : `-m comment --comment "${sp.name} -> ${ep.address}" `;
  const mask = FAMILY[ctx.family].mask;
  const n = eps.length;
  const affinity = sp.affinitySeconds !== undefined;
  const of = base + (affinity ? n : 0) + n;
  const picked = sample && n > 2 ? [0, n - 1] : eps.map((_, i) => i);
  const line = (spec: string, ep: EndpointShape, index: number) =>
    ruleLine(
      chain,
      spec,
      { target: ep.chain },
      sample ? index : undefined,
      sample ? of : undefined,
    );
  if (affinity)
    for (const i of picked) {
      const ep = eps[i]!;
      out.push(
        line(
          `${comment(ep)}-m recent --rcheck --seconds ${sp.affinitySeconds} --reap --name ${ep.chain} --mask ${mask} --rsource -j ${ep.chain}`,
          ep,
          base + i,
        ),
      );
    }
  for (const i of picked) {
    const ep = eps[i]!;
    const stat =
      i < n - 1 ? `-m statistic --mode random --probability ${savedProbability(n - i)} ` : '';
    out.push(line(`${comment(ep)}${stat}-j ${ep.chain}`, ep, base + (affinity ? n : 0) + i));
  }
}

export interface FixedRulesOptions {
  family: IPFamily;
  masqueradeMark: number;
  randomFully: boolean;
  nfacct: boolean;
  conntrackTcpBeLiberal: boolean;
  localhostNodePorts: boolean;
  /** "all": the node-ports rule matches every local address; else one rule per node IP. */
  nodePortDestinations: 'all' | string[];
}

/** The rules kube-proxy writes on every sync whatever the Services, and its jumps. */
export function fixedRules(o: FixedRulesOptions): { nat: RuleLine[]; filter: RuleLine[] } {
  const m = hexMark(o.masqueradeMark);
  const l = (chain: string, spec: string): RuleLine => ({ chain, text: `-A ${chain} ${spec}` });
  const comment = (c: string) => `-m comment --comment "${c}"`;
  const isNew = '-m conntrack --ctstate NEW';
  const nat = [
    l('PREROUTING', `${comment('kubernetes service portals')} -j KUBE-SERVICES`),
    l('OUTPUT', `${comment('kubernetes service portals')} -j KUBE-SERVICES`),
    l('POSTROUTING', `${comment('kubernetes postrouting rules')} -j KUBE-POSTROUTING`),
    l('KUBE-MARK-MASQ', `-j MARK --set-xmark ${m}/${m}`),
    l('KUBE-POSTROUTING', `-m mark ! --mark ${m}/${m} -j RETURN`),
    l('KUBE-POSTROUTING', `-j MARK --set-xmark ${m}/0x0`),
    l(
      'KUBE-POSTROUTING',
      `${comment('kubernetes service traffic requiring SNAT')} -j MASQUERADE${o.randomFully ? ' --random-fully' : ''}`,
    ),
  ];
  if (o.nodePortDestinations === 'all')
    nat.push(
      l(
        'KUBE-SERVICES',
        // IPv6 never reaches node ports on loopback; IPv4 does with localhostNodePorts
        `${o.family === 'IPv6' ? '! -d ::1/128 ' : o.localhostNodePorts ? '' : '! -d 127.0.0.0/8 '}${comment(NODEPORTS_COMMENT)} -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
      ),
    );
  else
    for (const ip of o.nodePortDestinations)
      nat.push(
        l(
          'KUBE-SERVICES',
          `-d ${ip}${FAMILY[o.family].host} ${comment(NODEPORTS_COMMENT)} -j KUBE-NODEPORTS`,
        ),
      );
  // built-in chain jumps are prepended one by one, so they end up in reverse order; kubelet's
  // KUBE-FIREWALL jumps were there first
  const filter = [
    l('INPUT', `${isNew} ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`),
    l('INPUT', `${comment('kubernetes health check service ports')} -j KUBE-NODEPORTS`),
    l(
      'INPUT',
      `${isNew} ${comment('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`,
    ),
    l('INPUT', '-j KUBE-FIREWALL'),
    l('FORWARD', `${isNew} ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`),
    l('FORWARD', `${comment('kubernetes forwarding rules')} -j KUBE-FORWARD`),
    l('FORWARD', `${isNew} ${comment('kubernetes service portals')} -j KUBE-SERVICES`),
    l(
      'FORWARD',
      `${isNew} ${comment('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`,
    ),
    l('OUTPUT', `${isNew} ${comment('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`),
    l('OUTPUT', `${isNew} ${comment('kubernetes service portals')} -j KUBE-SERVICES`),
    l('OUTPUT', '-j KUBE-FIREWALL'),
  ];
  if (o.localhostNodePorts)
    filter.push(
      l(
        'KUBE-FIREWALL',
        `! -s 127.0.0.0/8 -d 127.0.0.0/8 ${comment('block incoming localnet connections')} -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
      ),
    );
  if (!o.conntrackTcpBeLiberal)
    filter.push(
      l(
        'KUBE-FORWARD',
        `-m conntrack --ctstate INVALID${o.nfacct ? ' -m nfacct --nfacct-name  ct_state_invalid_dropped_pkts' : ''} -j DROP`,
      ),
    );
  filter.push(
    l(
      'KUBE-FORWARD',
      `${comment('kubernetes forwarding rules')} -m mark --mark ${m}/${m} -j ACCEPT`,
    ),
    l(
      'KUBE-FORWARD',
      `${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    ),
  );
  return { nat, filter };
}
