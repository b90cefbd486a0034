// What of the agent's tables drift may compare with what kdebug expects, given its release and its
// settings as read (not assumed): its BPF map entries' flags, and the health server's frontends.
import { atLeast } from '../../../version.js';
import { knows, type CiliumAgent, type CiliumSettings, type ConfigOnlySetting } from './agent.js';
import { SETTING_NOT_KNOWN } from './refused.js';

/** Which BPF map entry flags and tables the agent's release and its settings as read (not
 * assumed) let drift compare with what kdebug expects. */
export interface KnownMapFlags {
  /** dsr: the forwarding mode and whether its annotation is honoured were read, in a
   * cilium-config the agent takes (not refused), and the release writes the flag (1.17 on; for hybrid only from 1.18.5, before
   * which hybrid wrote none). */
  forwarding: boolean;
  /** LBALG and the Maglev table: the algorithm and its annotation were read, not refused. */
  algorithm: boolean;
  /** deny: the release honours the source-range policy annotation (1.17 on). */
  sourceRangeDeny: boolean;
  /** The traffic-policy, affinity and source-range flags as kdebug models them (1.18 on: 1.17's
   * default control plane writes Local on fewer types, and heeds other settings). */
  flags: boolean;
  /** Which frontend types source ranges guard: bpf-lb-source-range-all-types was read. */
  sourceRangeTypes: boolean;
  /** Which addresses get a wildcard entry: the release (1.19 on) and cilium-config
   * (default-lb-service-ipam, 1.20's bpf-lb-enable-wildcard-entries) were read; a refused one's
   * entries are marked not known (maps/expected.ts wildcardNotKnown). */
  wildcards: boolean;
}

export function knownMapFlags(agent: CiliumAgent): KnownMapFlags {
  const since = (r: readonly [number, number, number?]) =>
    agent.release !== undefined && atLeast(agent.release, r);
  const hybrid = agent.settings.forwarding === 'hybrid';
  // a refused cilium-config is not the one the agent runs on (agent.ts notKnown)
  const known = (s: ConfigOnlySetting) => knows(agent.settings, s);
  return {
    // each with its Service annotation's option, which picks the entry's own where honoured
    forwarding:
      agent.configRead &&
      known('forwarding') &&
      known('forwardingAnnotation') &&
      since([1, 17]) &&
      (!hybrid || since([1, 18, 5])),
    algorithm: agent.configRead && known('algorithm') && known('algorithmAnnotation'),
    sourceRangeDeny: since([1, 17]),
    flags: since([1, 18]),
    sourceRangeTypes: agent.configRead && known('sourceRangeTypes'),
    wildcards: agent.configRead && agent.release !== undefined,
  };
}

/** The agent's source-range check (on by default), undefined where it is not known (a refused
 * cilium-config). */
export const sourceRangeCheckOf = (
  o: Partial<Pick<CiliumSettings, 'sourceRangeCheck' | 'notKnown'>>,
): boolean | undefined => (knows(o, 'sourceRangeCheck') ? o.sourceRangeCheck !== false : undefined);

/** What the health server's frontends need on (expected/health-server.ts). */
const HEALTH_SERVER_SETTINGS = [
  'kubeProxyReplacement',
  'healthCheckNodePort',
  'healthCheckLoadBalancerIP',
] as const satisfies readonly ConfigOnlySetting[];

/** Why the health server's frontends (expected/health-server.ts) are not compared on the agent's
 * node, or undefined where they are. */
export function healthServerUnknown(agent: CiliumAgent): string | undefined {
  const s = agent.settings;
  if (!agent.configRead)
    return 'cilium-config was not read, so whether enable-health-check-loadbalancer-ip is on (off by default) is not known';
  if (!agent.release)
    return "the agent's release is not known, and before 1.18 it made them otherwise";
  if (!atLeast(agent.release, [1, 18]))
    return `Cilium ${agent.version} makes them as releases before 1.18 do (ns/name-healthCheck, backed by the node's IP), which kdebug does not model`;
  // the health server needs kube-proxy replacement and both options, which a refused
  // cilium-config leaves unknown
  if (HEALTH_SERVER_SETTINGS.some((x) => !knows(s, x)))
    return `whether the agent makes them is not known: it does only with kube-proxy replacement, enable-health-check-nodeport and enable-health-check-loadbalancer-ip, each ${SETTING_NOT_KNOWN}`;
  const made = s.kubeProxyReplacement && s.healthCheckNodePort && s.healthCheckLoadBalancerIP;
  if (made && agent.nodePorts?.addresses === undefined)
    return "the agent's NodePort addresses were not read (its status), and each one's backend is the first of them";
  return undefined;
}

/** What drift compares only where the agent's own listing shows it on, that setting not known
 * (maps/drift.ts), worded to follow a sentence of what is not compared; "" where each is known. */
export function comparedOnEvidence(o: { notKnown?: readonly ConfigOnlySetting[] }): string {
  const said = [
    knows(o, 'sessionAffinity')
      ? ''
      : 'its session affinity (enable-session-affinity) is compared only where the listing shows the agent writes it (a timeout, an affinity map)',
    knows(o, 'sourceRangeCheck')
      ? ''
      : "its source ranges' CIDRs (enable-svc-source-range-check) only where the dump holds the map the check writes",
  ].filter(Boolean);
  return said.length > 0 ? `; ${said.join(', and ')}` : '';
}
