// A kube-proxy replacement short of full as cilium-config alone says it, where no status of the
// agent was recorded: kube-proxy-replacement's value and the per-feature keys, each read as the
// agent's release reads them (daemon/cmd/kube_proxy_replacement.go through 1.17, pkg/kpr in 1.18;
// 1.19's pkg/kpr has neither the values nor the keys).
import { atLeast, type Version } from '../../../version.js';
import type { ServiceKind } from './status.js';

/** What cilium-config makes of the replacement: the kinds the agent serves (ClusterIP always: its
 * datapath translates its Pods' traffic whatever the value), `probed` where the kernel's probes
 * decide them (before 1.13's "probe"). */
export interface ConfigPartial {
  /** kube-proxy-replacement as cilium-config sets it, or the release's default where unset. */
  value: string;
  /** Undefined where the kernel's probes decide them ("probe"). */
  handles?: ServiceKind[];
  leaves?: ServiceKind[];
  /** The keys that said it ("kube-proxy-replacement, enable-node-port"). */
  keys: string[];
}

const KINDS: readonly ServiceKind[] = [
  'ClusterIP',
  'NodePort',
  'LoadBalancer',
  'externalIPs',
  'HostPort',
];

/** The values `release` takes other than a full replacement's, each keeping the per-feature keys
 * as set ("disabled" turns them all off: disableNodePort): "partial" (and before 1.13 "probe")
 * through 1.15; "false" from 1.14 to 1.18. An unknown release takes any of them. */
function keepsKeys(value: string, release: Version | undefined): boolean {
  const before = (v: readonly [number, number]) => release === undefined || !atLeast(release, v);
  const from = (v: readonly [number, number]) => release === undefined || atLeast(release, v);
  if (value === 'partial') return before([1, 16]);
  if (value === 'probe') return before([1, 13]);
  if (value === 'false') return from([1, 14]) && before([1, 19]);
  return false;
}

/** kube-proxy-replacement's default where cilium-config lacks it: "partial" through 1.13
 * (daemon_main.go), "false" from 1.14. */
const defaultValue = (release: Version | undefined) =>
  release !== undefined && !atLeast(release, [1, 14]) ? 'partial' : 'false';

/** The partial replacement cilium-config sets for an agent of `release`: undefined where it sets a
 * full one, none ("disabled", 1.19's false), one the release refuses, or where "false" leaves
 * NodePort off (then Cilium serves the ClusterIP only, as with no replacement). */
export function configPartial(
  config: (key: string) => string | undefined,
  release: Version | undefined,
): ConfigPartial | undefined {
  const set = config('kube-proxy-replacement');
  const value = set ?? defaultValue(release);
  if (!keepsKeys(value, release)) return undefined;
  const keys = set !== undefined ? ['kube-proxy-replacement'] : [];
  // each a boolean as viper's GetBool reads it (cast.ToBool: ParseBool, else false)
  const flag = (key: string, unset: boolean) => {
    const v = config(key);
    if (v !== undefined) keys.push(key);
    return v === undefined ? unset : ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
  };
  if (value === 'probe') return { value, keys };
  const nodePort = flag('enable-node-port', false);
  // on by default through 1.13; without NodePort every release turns it off (disableNodePort)
  const hostPort =
    flag('enable-host-port', release !== undefined && !atLeast(release, [1, 14])) && nodePort;
  // "false" with NodePort off: nothing beyond the ClusterIP, as no replacement at all
  if (value === 'false' && !nodePort) return undefined;
  // NodePort brings the LoadBalancer and ExternalIPs frontends (ParseService through 1.17, 1.18's
  // ExtConfig.KubeProxyReplacement); enable-external-ips only says so in the status
  const handles = KINDS.filter(
    (k) => k === 'ClusterIP' || (k === 'HostPort' ? hostPort : nodePort),
  );
  return {
    value,
    handles,
    leaves: KINDS.filter((k) => !handles.includes(k)),
    keys,
  };
}

/** Go's strconv.ParseBool words, as 1.19's boolean option is decoded from cilium-config. */
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** The values of kube-proxy-replacement `release` takes (exactly as written), each with whether
 * it replaces kube-proxy: 1.13's daemon/cmd/kube_proxy_replacement.go strict, partial, disabled;
 * 1.14 and 1.15 add true and false (strict, partial, disabled deprecated, still read); 1.16 to 1.18
 * (initKubeProxyReplacementOptions, 1.18's kpr.NewKPRConfig) true and false only; 1.19 on, a
 * boolean option (hive's decoder, strconv.ParseBool; empty is false). Undefined before 1.13 or
 * for an unknown release: not modelled. */
function taken(release: Version | undefined): Map<string, boolean> | undefined {
  if (release === undefined || !atLeast(release, [1, 13])) return undefined;
  if (atLeast(release, [1, 19]))
    return new Map([
      ...GO_TRUE.map((v) => [v, true] as const),
      ...GO_FALSE.map((v) => [v, false] as const),
      ['', false],
    ]);
  if (atLeast(release, [1, 16]))
    return new Map([
      ['true', true],
      ['false', false],
    ]);
  const old = new Map([
    ['strict', true],
    ['partial', false],
    ['disabled', false],
  ]);
  if (!atLeast(release, [1, 14])) return old;
  return new Map([...old, ['true', true], ['false', false]]);
}

/** Whether cilium-config's kube-proxy-replacement (trimmed, as the agent reads it) replaces
 * kube-proxy in `release`; undefined where the release refuses it (kprRefused says why). Unset,
 * the release's default (off); an unmodelled release, "true" and "strict" replace. */
export function replacesIn(
  value: string | undefined,
  release: Version | undefined,
): boolean | undefined {
  if (value === undefined) return false;
  const values = taken(release);
  if (!values) return value === 'true' || value === 'strict';
  return values.get(value);
}

/** The words kdebug repeats of a value: Cilium's own (any release's), never a ConfigMap's other
 * text, which may be of any form. */
const NAMED = ['strict', 'partial', 'probe', 'disabled', 'true', 'false'];

/** Why the agent of `release` does not start with kube-proxy-replacement set to `value`, or
 * undefined where it takes it: each release errors out of its start on a value it does not take
 * (newDaemon's "unable to initialize kube-proxy replacement options" through 1.17, 1.18's
 * kpr.NewKPRConfig, 1.19's config decoding), so the agent exits. */
export function kprRefused(
  value: string | undefined,
  release: Version | undefined,
): string | undefined {
  const values = taken(release);
  if (value === undefined || !values || values.has(value)) return undefined;
  const said = NAMED.includes(value) ? `"${value}"` : 'a value it does not know';
  const takes = [...values.keys()].filter((v) => v !== '').map((v) => `"${v}"`);
  const bool = atLeast(release!, [1, 19]);
  return `cilium-config sets kube-proxy-replacement to ${said}, which Cilium ${release!.major}.${release!.minor} refuses (it takes ${bool ? 'a boolean' : `${takes.slice(0, -1).join(', ')} or ${takes.at(-1)}`}${bool ? '' : ' only'}): the agent does not start (${bool ? 'its configuration does not decode: "cannot parse \'KubeProxyReplacement\' as bool"' : release!.minor === 18 ? 'kpr.NewKPRConfig: "invalid value for kube-proxy-replacement"' : '"Invalid value for --kube-proxy-replacement"'})`;
}
