// The nftables-mode table kube-proxy writes on one node, computed from the same model as
// iptables mode (kube-proxy/expected.ts: endpoints, policies, addresses) and written as the
// `nft -f` script kube-proxy itself feeds nft (pkg/proxy/nftables/proxier.go setupNFTables and
// syncProxyRules), as the release of `exp` writes it (kube-proxy/releases.ts says which release
// changed what); default feature gates. The script is typed commands (script.ts): drift builds
// its table from them, never from the printed lines. Each release's TestOverallNFTablesRules is
// the vector (test/versions).
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import { containsAny, familyOf } from '../../../ipv6.js';
import { writes } from '../../kube-proxy/releases.js';
import type { NftSet, NftTable } from '../read/listing.js';
import {
  jump,
  markOr,
  scriptLine,
  scriptTable,
  type BaseChain,
  type NftCommand,
  type Statement,
} from './script.js';
import { servicePortScript } from './port-script.js';
import { BASE_CHAINS, BASE_CHAINS_BEFORE_33, JUMPS, JUMPS_BEFORE_33 } from './base-chains.js';

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

/** What kube-proxy answers node ports on: `nodePortAddresses` ("primary", the nftables-mode
 * default, is the node's first IP), never a loopback address. */
function nodePortAddressesOf(exp: ExpectedRules): 'all' | string[] {
  if (exp.config.nodePortAddresses.length === 0) return exp.node.ips.slice(0, 1);
  if (exp.nodePortIPs === 'all') return 'all';
  return exp.nodePortIPs.filter((ip) => !ip.startsWith('127.') && ip !== '::1');
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
