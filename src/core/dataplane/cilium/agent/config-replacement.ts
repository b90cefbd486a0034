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
