// What kube-proxy on one node takes from the node itself rather than from the API objects, read
// from what was recorded there: the knobs its rules show, its /configz, its /metrics and version.
// The one home for expect, drift, the Rules step and the TUI.
import type { ExpectOptions } from '../expected.js';
import type { Ruleset } from '../iptables.js';
import { configFromConfigz, isKubeProxyPod, type ClusterView } from '../kube.js';

/** A node's options, and where the ones not read off its rules came from (for `expect`'s notes). */
export interface NodeKnobs {
  options: ExpectOptions;
  notes: string[];
}

/** kube-proxy has written `-m nfacct` counters since v1.31 (its 1.31 release notes: the
 * ct_state_invalid and localhost node-port metrics), where the kernel has nfnetlink_acct. */
const NFACCT_SINCE = [1, 31] as const;
const LOCALHOST_COUNTER = 'kubeproxy_iptables_localhost_nodeports_accepted_packets_total';

/**
 * The options kube-proxy on `node` runs with, best evidence first: its rules (they show
 * --random-fully, the nfacct counters and the INVALID drop), its /configz, then its /metrics
 * (the nfacct counter it reports) and its version (the image of its Pod, or the build info).
 */
export function nodeKnobs(
  node: string,
  outputs: Record<string, string> | undefined,
  rules?: Ruleset,
  view?: ClusterView,
): NodeKnobs {
  const notes: string[] = [];
  const config = configFromConfigz(outputs?.['proxy-configz'] ?? '', node);
  if (rules) return { options: { ...optionsFromDump(rules), config }, notes };
  const metrics = outputs?.['proxy-metrics'] ?? '';
  const version = versionOf(metrics) ?? imageVersion(view, node);
  let nfacct = false;
  if (new RegExp(`^${LOCALHOST_COUNTER}(\\{[^}]*\\})? `, 'm').test(metrics)) nfacct = true;
  else if (/^kubeproxy_sync_proxy_rules_/m.test(metrics)) nfacct = false;
  else if (version && atLeast(version, NFACCT_SINCE)) {
    nfacct = true;
    notes.push(
      `nfacct counters assumed from kube-proxy ${version.text} on ${node} (it creates them where the kernel has nfnetlink_acct); --no-nfacct if not`,
    );
  } else if (!version)
    notes.push(
      `kube-proxy's version on ${node} is unknown: no nfacct counter rules (--nfacct for kube-proxy 1.31+)`,
    );
  return { options: { nfacct, config }, notes };
}

/** Knobs the dump itself tells (so a node without nfacct is not drift). */
export function optionsFromDump(rs: Ruleset): ExpectOptions {
  const nat = rs.table('nat');
  const filter = rs.table('filter');
  const rules = (t: typeof nat, chain: string) => t?.chain(chain)?.rules ?? [];
  const post = rules(nat, 'KUBE-POSTROUTING');
  const forward = rules(filter, 'KUBE-FORWARD');
  const masquerade = post.find((r) => r.target?.kind === 'masquerade');
  // the localhost counter is among KUBE-NODEPORTS' first rules: 50 are typed, not thousands
  const nodePorts = nat?.chain('KUBE-NODEPORTS');
  const first = nodePorts
    ? Array.from({ length: Math.min(50, nodePorts.ruleCount) }, (_, k) =>
        nat!.rule(nodePorts.ruleId(k)),
      )
    : [];
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

interface Version {
  text: string;
  major: number;
  minor: number;
}

const parseVersion = (s: string | undefined): Version | undefined => {
  const m = /^v?(\d+)\.(\d+)(?:[.+-]|$)/.exec(s ?? '');
  return m ? { text: `v${m[1]}.${m[2]}`, major: Number(m[1]), minor: Number(m[2]) } : undefined;
};

const atLeast = (v: Version, [major, minor]: readonly [number, number]) =>
  v.major > major || (v.major === major && v.minor >= minor);

/** kube-proxy's version from its /metrics (kubernetes_build_info{git_version="v1.33.1",...}). */
function versionOf(metrics: string): Version | undefined {
  return parseVersion(/^kubernetes_build_info\{[^}]*git_version="([^"]+)"/m.exec(metrics)?.[1]);
}

/** The tag of the kube-proxy image running on the node (registry.k8s.io/kube-proxy:v1.33.1). */
function imageVersion(view: ClusterView | undefined, node: string): Version | undefined {
  const pod = view?.pods.find((p) => isKubeProxyPod(p) && p.nodeName === node);
  const spec = pod?.raw['spec'] as { containers?: { image?: string }[] } | undefined;
  const image = spec?.containers?.map((c) => c.image ?? '').find((i) => /kube-proxy/.test(i));
  return parseVersion(image?.split('@')[0]?.split(':').pop());
}
