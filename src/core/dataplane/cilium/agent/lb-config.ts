// bpf-lb-algorithm and bpf-lb-mode as the agent's release reads them from cilium-config, beside
// the deprecated keys they took over from, and the pairs of keys on which it refuses to start.
import { atLeast, type Version } from '../../../version.js';
import { releaseBehaviour } from './release-behaviour.js';

/** The deprecated key each of these took over from (through 1.19, which still reads it). */
const DEPRECATED_KEYS = {
  'bpf-lb-algorithm': 'node-port-algorithm',
  'bpf-lb-mode': 'node-port-mode',
};

/** bpf-lb-algorithm or bpf-lb-mode as the release reads its config: where it still reads the
 * deprecated key (nodePortKeys), that key, set, wins over the new one. */
export function lbSetting(
  config: (key: string) => string | undefined,
  key: keyof typeof DEPRECATED_KEYS,
  release: Version | undefined,
): string | undefined {
  return lbSettingRead(config, key, release)?.value;
}

/** lbSetting's value with the key it was read from (the deprecated one where that wins). */
export function lbSettingRead(
  config: (key: string) => string | undefined,
  key: keyof typeof DEPRECATED_KEYS,
  release: Version | undefined,
): { value: string; key: string } | undefined {
  const oldKey = DEPRECATED_KEYS[key];
  const old = releaseBehaviour(release).nodePortKeys ? config(oldKey) : undefined;
  // set means not empty, as the agent's check (!= "") has it
  if (old) return { value: old, key: oldKey };
  const value = config(key);
  return value === undefined ? undefined : { value, key };
}

/** Why the agent of `release` stops at start on cilium-config's bpf-lb-* and deprecated keys:
 * every release's populateLoadBalancerSettings log.Fatal's where both acceleration keys are set
 * and differ; 1.17's log.Fatalf's where both of a pair are set and differ; 1.18
 * and 1.19's loadbalancer.NewConfig fails where node-port-mode is set and bpf-lb-mode is not the
 * default snat (node-port-algorithm just wins); 1.20 reads neither deprecated key. */
export function lbConfigRefused(
  config: (key: string) => string | undefined,
  release: Version | undefined,
): string | undefined {
  // every release: populateLoadBalancerSettings stops where both acceleration keys differ
  const accel = config('bpf-lb-acceleration');
  const oldAccel = config('node-port-acceleration');
  if (accel !== undefined && oldAccel !== undefined && accel !== oldAccel)
    return 'cilium-config sets both bpf-lb-acceleration and node-port-acceleration, to different values: the agent stops at start (log.Fatal "Both --bpf-lb-acceleration and --node-port-acceleration were set")';
  if (!releaseBehaviour(release).nodePortKeys) return undefined;
  // the keys named, never their values: a value is the ConfigMap's text, of any form
  const both = (key: keyof typeof DEPRECATED_KEYS) =>
    `cilium-config sets both ${key} and ${DEPRECATED_KEYS[key]}`;
  if (release !== undefined && !atLeast(release, [1, 18])) {
    const key = (['bpf-lb-mode', 'bpf-lb-algorithm'] as const).find(
      (k) =>
        config(k) !== undefined &&
        config(DEPRECATED_KEYS[k]) !== undefined &&
        config(k) !== config(DEPRECATED_KEYS[k]),
    );
    return (
      key &&
      `${both(key)}: the agent stops at start (log.Fatalf "Both --${key} and --${DEPRECATED_KEYS[key]} were set")`
    );
  }
  if (!config('node-port-mode') || (config('bpf-lb-mode') ?? 'snat') === 'snat') return undefined;
  return `${both('bpf-lb-mode')}: the agent does not start (its load-balancer config fails: "both --bpf-lb-mode and --node-port-mode were set")`;
}
