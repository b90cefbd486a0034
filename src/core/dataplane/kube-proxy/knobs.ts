// What kube-proxy on one node takes from the node itself rather than from the API objects, read
// from what was recorded there: the knobs its rules show, its /configz, its /metrics and version.
// The one home for expect, drift, the Rules step and the TUI.
import type { ExpectOptions } from './expected.js';
import type { Ruleset, Table } from '../iptables/read/parse.js';
import type { NodeState } from '../../nodes/state.js';
import { atLeast } from '../../version.js';
import { NEWEST_MODELLED } from './releases.js';
import { endpointSource } from './endpoint-source.js';
import { configTells, type KubeProxyConfig } from '../../kube/objects.js';
import { masqueradeCondition } from '../iptables/trees/tree-index.js';
import { IPSETS } from '../ipvs/expected/ipsets.js';

/** A node's options, and where the ones not read off its rules came from (for `expect`'s notes). */
export interface NodeKnobs {
  options: ExpectOptions;
  notes: string[];
  /** What was assumed of the nfacct counters: void when --nfacct / --no-nfacct says it. */
  nfacctNotes: string[];
}

/** kube-proxy has written `-m nfacct` counters since v1.31 (its 1.31 release notes: the
 * ct_state_invalid and localhost node-port metrics), where the kernel has nfnetlink_acct. */
const NFACCT_SINCE = [1, 31] as const;
const LOCALHOST_COUNTER = 'kubeproxy_iptables_localhost_nodeports_accepted_packets_total';

/**
 * The options kube-proxy on `node` runs with, best evidence first: its rules (they show
 * --random-fully, the nfacct counters and the INVALID drop), its configuration as the node state
 * decided it, then its /metrics (the nfacct counter it reports) and its version.
 */
export function nodeKnobs(
  state: Pick<NodeState, 'node' | 'config' | 'version'>,
  outputs: Record<string, string> | undefined,
  rules?: Ruleset,
): NodeKnobs {
  const node = state.node;
  const config = rules ? withMasqueradeShown(state.config.value, rules) : state.config.value;
  const version = state.version?.value;
  // the release whose rules to write: the node's own; unknown, the newest modelled, said
  const release = version?.major === 1 ? { minor: version.minor } : undefined;
  const notes = release
    ? []
    : [
        `kube-proxy's version on ${node} is ${version ? `${version.text}, not a 1.x release` : 'unknown'}: written as kube-proxy v1.${NEWEST_MODELLED} writes it, ${endpointSource(undefined).assumed}`,
      ];
  if (rules)
    return { options: { ...optionsFromDump(rules), config, release }, notes, nfacctNotes: [] };
  const nfacctNotes: string[] = [];
  const metrics = outputs?.['proxy-metrics'] ?? '';
  let nfacct = false;
  if (new RegExp(`^${LOCALHOST_COUNTER}(\\{[^}]*\\})? `, 'm').test(metrics)) nfacct = true;
  else if (/^kubeproxy_sync_proxy_rules_/m.test(metrics)) nfacct = false;
  else if (version && atLeast(version, NFACCT_SINCE)) {
    nfacct = true;
    nfacctNotes.push(
      `nfacct counters assumed from kube-proxy ${version.text} on ${node} (it creates them where the kernel has nfnetlink_acct); --no-nfacct if not`,
    );
  } else if (!version)
    nfacctNotes.push(
      `kube-proxy's version on ${node} is unknown: no nfacct counter rules (--nfacct for kube-proxy 1.31+)`,
    );
  return { options: { nfacct, config, release }, notes, nfacctNotes };
}

/** Knobs the dump itself tells (so a node without nfacct is not drift). */
export function optionsFromDump(rs: Ruleset): ExpectOptions {
  // one kube-proxy writes both families' tables alike: each family's nat and filter tell (the
  // first may be a part, or lack a chain the other holds)
  const nats = rs.tables.filter((t) => t.name === 'nat');
  const filters = rs.tables.filter((t) => t.name === 'filter');
  const post = nats.flatMap((t) => t.chain('KUBE-POSTROUTING')?.rules ?? []);
  const forward = filters.flatMap((t) => t.chain('KUBE-FORWARD')?.rules ?? []);
  // the rule for marked traffic: in IPVS mode KUBE-LOOP-BACK's own MASQUERADE (no flag) comes first
  const masquerade = post.find(
    (r) => r.target?.kind === 'masquerade' && !r.matches.some((m) => m.module === 'set'),
  );
  // the localhost counter is among KUBE-NODEPORTS' first rules: 50 are typed, not thousands
  const first = nats.flatMap((nat) => {
    const nodePorts = nat.chain('KUBE-NODEPORTS');
    return nodePorts
      ? Array.from({ length: Math.min(50, nodePorts.ruleCount) }, (_, k) =>
          nat.rule(nodePorts.ruleId(k)),
        )
      : [];
  });
  const nfacct = [...forward, ...first].some((r) => r.matches.some((m) => m.module === 'nfacct'));
  const invalidDrop = forward.some((r) =>
    r.matches.some((m) => m.kind === 'conntrack' && m.ctstate?.types.includes('INVALID')),
  );
  return {
    randomFully: masquerade?.target?.kind === 'masquerade' ? masquerade.target.randomFully : true,
    nfacct,
    conntrackTcpBeLiberal: forward.length > 0 && !invalidDrop,
  };
}

/** Where the configuration does not tell the cluster IP masquerade condition (none was read),
 * the one condition the node's rules hold for every Service: what kube-proxy there runs with.
 * Several conditions, or none read: still not known, and drift says how the rules differ. */
function withMasqueradeShown(config: KubeProxyConfig, rs: Ruleset): KubeProxyConfig {
  if (configTells(config, 'masquerade')) return config;
  // each condition once, in drift's words, with the settings that write it
  const shown = new Map<string, Partial<KubeProxyConfig> | undefined>();
  for (const nat of rs.tables.filter((t) => t.name === 'nat'))
    for (const chain of nat.chains) {
      // kube-proxy marks cluster IP traffic in KUBE-SVC chains, before 1.21 in KUBE-SERVICES
      if (chain.name !== 'KUBE-SERVICES' && !chain.name.startsWith('KUBE-SVC-')) continue;
      for (const id of chain.ruleIds) {
        if (!nat.marksForMasquerade(id)) continue;
        if (nat.comment(id)?.endsWith(' cluster IP'))
          shown.set(masqueradeCondition(nat, id), settingsOf(nat, id));
        else if (chain.name === 'KUBE-SERVICES') {
          const ipvs = ipvsSettingsOf(nat, id);
          if (ipvs) shown.set(ipvs[0], ipvs[1]);
        }
      }
    }
  const [only] = shown;
  return shown.size === 1 && only![1]
    ? { ...config, ...only![1], masqueradeShown: only![0] }
    : config;
}

/** IPVS mode's one KUBE-MARK-MASQ rule for cluster IPs, in KUBE-SERVICES on the KUBE-CLUSTER-IP
 * set (pkg/proxy/ipvs/proxier.go writeIptablesRules): "dst,dst" after the local detector's
 * negated match, "dst,dst" alone with masqueradeAll, "src,dst" where there is no detector (no
 * cluster CIDR). Its condition in drift's words and the settings that write it; undefined for
 * another rule, or one kube-proxy does not write so. */
function ipvsSettingsOf(
  nat: Table,
  id: number,
): [string, Partial<KubeProxyConfig> | undefined] | undefined {
  if (nat.comment(id) !== IPSETS['KUBE-CLUSTER-IP'].comment) return undefined;
  const sets = nat.rule(id).matches.filter((m) => m.kind === 'set');
  const set = sets[0];
  if (sets.length !== 1 || set?.kind !== 'set' || set.negated) return undefined;
  if (!/^KUBE-(?:6-)?CLUSTER-IP$/.test(set.name)) return undefined;
  const flags = set.flags.join(',');
  const src = nat.addressMatch(id, 'source');
  const into = nat.rule(id).inInterface;
  if (flags === 'src,dst')
    return src || into
      ? undefined
      : [
          'traffic from a cluster IP (no local detector: "src,dst")',
          { masqueradeAll: false, detectLocalMode: 'ClusterCIDR', clusterCIDR: '' },
        ];
  if (flags !== 'dst,dst') return undefined;
  if (!src && !into) return ['all', { masqueradeAll: true }];
  const settings = settingsOf(nat, id);
  return settings && settings.masqueradeAll === false
    ? [masqueradeCondition(nat, id), settings]
    : undefined;
}

/** The settings under which kube-proxy writes this KUBE-MARK-MASQ rule for a cluster IP: what
 * its local traffic detector matches, negated, or nothing (masqueradeAll). */
function settingsOf(nat: Table, id: number): Partial<KubeProxyConfig> | undefined {
  const src = nat.addressMatch(id, 'source');
  const into = nat.rule(id).inInterface;
  if (src?.negated && !into)
    return { masqueradeAll: false, detectLocalMode: 'ClusterCIDR', clusterCIDR: src.cidr };
  if (!src && into?.negated)
    return into.name.endsWith('+')
      ? {
          masqueradeAll: false,
          detectLocalMode: 'InterfaceNamePrefix',
          interfaceNamePrefix: into.name.slice(0, -1),
        }
      : { masqueradeAll: false, detectLocalMode: 'BridgeInterface', bridgeInterface: into.name };
  return !src && !into && !nat.hasOtherMatches(id) ? { masqueradeAll: true } : undefined;
}
