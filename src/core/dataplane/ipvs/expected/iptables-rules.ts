// The iptables rules kube-proxy writes in IPVS mode beside its virtual servers, one family's
// (pkg/proxy/ipvs/proxier.go createAndLinkKubeChain, writeIptablesRules, acceptIPVSTraffic): fixed
// chains whose rules match its ipsets, a set's rule only where the set has entries, and a DROP per
// load-balancer IP whose source ranges leave out the node. Every release 1.30-1.37 writes the
// same but for MASQUERADE's --random-fully (always from 1.37, before where iptables has it).
// In iptables-save's canonical form, as iptables 1.8.9 prints it back.
import { FAMILY, type IPFamily } from '../../../ipv6.js';
import type { ExpectedRules, RuleLine } from '../../kube-proxy/expected.js';
import { hexMark } from '../../iptables/rule-text.js';
import { IPSETS, ipsetName, type IpsetBase } from './ipsets.js';
import { configTells } from '../../../kube/objects.js';

/** A load-balancer IP and port the node may not reach (its source ranges do not hold the node). */
export interface NoNodeAccess {
  ip: string;
  protocol: 'tcp' | 'udp' | 'sctp';
  port: number;
}

export interface IpvsIptablesInput {
  family: IPFamily;
  /** The sets that hold entries: a rule matching an empty set is not written. */
  filled: ReadonlySet<IpsetBase>;
  noNodeAccess: NoNodeAccess[];
}

/** kube-proxy's chains in IPVS mode, as iptables-save lists them (by name). */
export const IPVS_CHAINS = {
  filter: [
    'KUBE-FORWARD',
    'KUBE-IPVS-FILTER',
    'KUBE-IPVS-OUT-FILTER',
    'KUBE-NODE-PORT',
    'KUBE-PROXY-FIREWALL',
    'KUBE-SOURCE-RANGES-FIREWALL',
  ],
  nat: [
    'KUBE-LOAD-BALANCER',
    'KUBE-MARK-MASQ',
    'KUBE-NODE-PORT',
    'KUBE-POSTROUTING',
    'KUBE-SERVICES',
  ],
} as const;

/** A comment as iptables-save quotes it (xtables_save_string escapes ", \ and '). */
const comment = (text: string) => `-m comment --comment "${text.replace(/["\\']/g, '\\$&')}"`;

/** ipsetWithIptablesChain: a filled set's one rule, in kube-proxy's order. */
const SET_RULES: [IpsetBase, 'nat' | 'filter', string, string, string, string?][] = [
  ['KUBE-LOOP-BACK', 'nat', 'KUBE-POSTROUTING', 'MASQUERADE', 'dst,dst,src'],
  ['KUBE-LOAD-BALANCER', 'nat', 'KUBE-SERVICES', 'KUBE-LOAD-BALANCER', 'dst,dst'],
  ['KUBE-LOAD-BALANCER-LOCAL', 'nat', 'KUBE-LOAD-BALANCER', 'RETURN', 'dst,dst'],
  ['KUBE-NODE-PORT-LOCAL-TCP', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'tcp'],
  ['KUBE-NODE-PORT-TCP', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'tcp'],
  ['KUBE-NODE-PORT-LOCAL-UDP', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'udp'],
  ['KUBE-NODE-PORT-UDP', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'udp'],
  ['KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst,dst', 'sctp'],
  ['KUBE-NODE-PORT-SCTP-HASH', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst,dst', 'sctp'],
  [
    'KUBE-LOAD-BALANCER-FW',
    'filter',
    'KUBE-PROXY-FIREWALL',
    'KUBE-SOURCE-RANGES-FIREWALL',
    'dst,dst',
  ],
  [
    'KUBE-LOAD-BALANCER-SOURCE-CIDR',
    'filter',
    'KUBE-SOURCE-RANGES-FIREWALL',
    'RETURN',
    'dst,dst,src',
  ],
  [
    'KUBE-LOAD-BALANCER-SOURCE-IP',
    'filter',
    'KUBE-SOURCE-RANGES-FIREWALL',
    'RETURN',
    'dst,dst,src',
  ],
];

const PROTOCOL_NUMBER = { tcp: 6, udp: 17, sctp: 132 } as const;

/** One family's proxier's rules, and those of them whose form no configuration read tells (the
 * cluster IP masquerade rule where kube-proxy's configuration was not read): not compared. */
export interface IpvsIptables {
  nat: RuleLine[];
  filter: RuleLine[];
  uncompared?: RuleLine[];
}

/** The rules of one family's proxier, each chain's in the order kube-proxy writes them. */
export function ipvsIptablesRules(exp: ExpectedRules, o: IpvsIptablesInput): IpvsIptables {
  const F = FAMILY[o.family];
  const m = hexMark(exp.masqueradeMark);
  const set = (base: IpsetBase) => ipsetName(base, o.family);
  const matchSet = (base: IpsetBase, type: string) => `-m set --match-set ${set(base)} ${type}`;
  const nat: RuleLine[] = [];
  const filter: RuleLine[] = [];
  const uncompared: RuleLine[] = [];
  // a rule's matches (`spec`), then its target and the options after it: the target kept typed
  const l = (list: RuleLine[], chain: string, spec: string, target: string, args = '') =>
    list.push({ chain, text: `-A ${chain} ${spec ? `${spec} ` : ''}-j ${target}${args}`, target });
  // the built-in chains' jumps, each prepended: they end up in reverse order
  l(nat, 'PREROUTING', comment('kubernetes service portals'), 'KUBE-SERVICES');
  l(nat, 'OUTPUT', comment('kubernetes service portals'), 'KUBE-SERVICES');
  l(nat, 'POSTROUTING', comment('kubernetes postrouting rules'), 'KUBE-POSTROUTING');
  l(filter, 'INPUT', comment('kubernetes ipvs access filter'), 'KUBE-IPVS-FILTER');
  l(filter, 'INPUT', comment('kube-proxy firewall rules'), 'KUBE-PROXY-FIREWALL');
  l(filter, 'INPUT', comment('kubernetes health check rules'), 'KUBE-NODE-PORT');
  l(filter, 'FORWARD', comment('kube-proxy firewall rules'), 'KUBE-PROXY-FIREWALL');
  l(filter, 'FORWARD', comment('kubernetes forwarding rules'), 'KUBE-FORWARD');
  l(filter, 'OUTPUT', comment('kubernetes ipvs access filter'), 'KUBE-IPVS-OUT-FILTER');

  l(nat, 'KUBE-SERVICES', `-s ${F.loopback}`, 'RETURN');
  for (const [base, table, chain, to, match, protocol] of SET_RULES)
    if (o.filled.has(base))
      l(
        table === 'nat' ? nat : filter,
        chain,
        `${protocol ? `-p ${protocol} ` : ''}${comment(IPSETS[base].comment)} ${matchSet(base, match)}`,
        to,
      );
  if (o.filled.has('KUBE-CLUSTER-IP')) {
    const c = `${comment(IPSETS['KUBE-CLUSTER-IP'].comment)} `;
    const local = exp.localDetector?.ifLocal;
    // off-cluster traffic to a cluster IP is masqueraded; without a detector, what a VIP sends
    const spec = exp.config.masqueradeAll
      ? `${c}${matchSet('KUBE-CLUSTER-IP', 'dst,dst')}`
      : local
        ? `${local.source ? `! -s ${local.source}` : `! -i ${local.inInterface}`} ${c}${matchSet('KUBE-CLUSTER-IP', 'dst,dst')}`
        : `${c}${matchSet('KUBE-CLUSTER-IP', 'src,dst')}`;
    l(nat, 'KUBE-SERVICES', spec, 'KUBE-MARK-MASQ');
    // no configuration read tells its condition, nor one rule of the node's: written as the
    // defaults say, compared with nothing
    if (!configTells(exp.config, 'masquerade') && exp.config.masqueradeShown === undefined)
      uncompared.push(nat.at(-1)!);
  }
  for (const base of ['KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL'] as const) {
    if (!o.filled.has(base)) continue;
    const args = `${comment(IPSETS[base].comment)} ${matchSet(base, 'dst,dst')}`;
    if (base === 'KUBE-EXTERNAL-IP') l(nat, 'KUBE-SERVICES', args, 'KUBE-MARK-MASQ');
    // from off the node (not a bridge, not local), or to an address that is the node's
    const offNode = '-m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL';
    l(nat, 'KUBE-SERVICES', `${args} ${offNode}`, 'ACCEPT');
    l(nat, 'KUBE-SERVICES', `${args} -m addrtype --dst-type LOCAL`, 'ACCEPT');
  }
  l(nat, 'KUBE-SERVICES', '-m addrtype --dst-type LOCAL', 'KUBE-NODE-PORT');
  l(nat, 'KUBE-LOAD-BALANCER', '', 'KUBE-MARK-MASQ');
  l(filter, 'KUBE-SOURCE-RANGES-FIREWALL', '', 'DROP');
  for (const e of o.noNodeAccess)
    l(
      filter,
      'KUBE-IPVS-OUT-FILTER',
      `-s ${e.ip}${F.host} -m ipvs --vproto ${PROTOCOL_NUMBER[e.protocol]} --vaddr ${e.ip} --vport ${e.port}`,
      'DROP',
    );
  // acceptIPVSTraffic: nothing after kube-proxy's rules may drop what IPVS serves
  for (const base of ['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER'] as const)
    if (o.filled.has(base)) l(nat, 'KUBE-SERVICES', matchSet(base, 'dst,dst'), 'ACCEPT');
  l(
    filter,
    'KUBE-FORWARD',
    `${comment('kubernetes forwarding rules')} -m mark --mark ${m}/${m}`,
    'ACCEPT',
  );
  l(
    filter,
    'KUBE-FORWARD',
    `${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED`,
    'ACCEPT',
  );
  const health = IPSETS['KUBE-HEALTH-CHECK-NODE-PORT'].comment;
  l(
    filter,
    'KUBE-NODE-PORT',
    `${comment(health)} ${matchSet('KUBE-HEALTH-CHECK-NODE-PORT', 'dst')}`,
    'ACCEPT',
  );
  // no host port is reachable through a VIP (kubernetes#72236)
  for (const [base, type] of [
    ['KUBE-LOAD-BALANCER', 'dst,dst'],
    ['KUBE-CLUSTER-IP', 'dst,dst'],
    ['KUBE-EXTERNAL-IP', 'dst,dst'],
    ['KUBE-EXTERNAL-IP-LOCAL', 'dst,dst'],
    ['KUBE-HEALTH-CHECK-NODE-PORT', 'dst'],
  ] as const)
    l(filter, 'KUBE-IPVS-FILTER', matchSet(base, type), 'RETURN');
  l(
    filter,
    'KUBE-IPVS-FILTER',
    `-m conntrack --ctstate NEW ${matchSet('KUBE-IPVS-IPS', 'dst')}`,
    'REJECT',
    ` --reject-with ${F.reject}`,
  );
  l(nat, 'KUBE-POSTROUTING', `-m mark ! --mark ${m}/${m}`, 'RETURN');
  l(nat, 'KUBE-POSTROUTING', '', 'MARK', ` --set-xmark ${m}/0x0`);
  l(
    nat,
    'KUBE-POSTROUTING',
    comment('kubernetes service traffic requiring SNAT'),
    'MASQUERADE',
    exp.options.randomFully ? ' --random-fully' : '',
  );
  l(nat, 'KUBE-MARK-MASQ', '', 'MARK', ` --set-xmark ${m}/${m}`);
  return { nat, filter, uncompared };
}
