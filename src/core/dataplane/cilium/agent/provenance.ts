// Where each of the agent's Service settings was read: a line of its own status (observed), a key
// of cilium-config (read from the API), its release (which fixes it whatever that says), or
// nowhere (Cilium's default taken, not known to be what the agent runs with). An output that
// states a setting names its own source, never the agent's status for a line the status lacks.
import type { Version } from '../../../version.js';
import { agentName, type CiliumAgent, type CiliumSettings } from './agent.js';
import { lbSettingRead } from './lb-config.js';
import { parseNodePortRange } from './node-port-range.js';
import { SETTING_NOT_KNOWN } from './refused.js';
import { releaseBehaviour } from './release-behaviour.js';
import type { StatusFields } from './status.js';

/** Every setting whose source an output names where it states them, in the order outputs state
 * them: its name as Cilium's users know it (its cilium-config key, the status's fields aside),
 * and whether the agent's status may print it on a line of its own (status.ts reads those). The
 * one list of them: the others are what only cilium-config or the release says. */
const SETTINGS = {
  kubeProxyReplacement: { name: 'kube-proxy-replacement', status: true },
  socketLB: { name: 'bpf-lb-sock', status: true },
  hostnsOnly: { name: 'bpf-lb-sock-hostns-only', status: true },
  algorithm: { name: 'bpf-lb-algorithm', status: true },
  forwarding: { name: 'bpf-lb-mode', status: true },
  sessionAffinity: { name: 'enable-session-affinity', status: true },
  // no status prints it, though it is told beside the status's settings
  noBackend: { name: 'service-no-backend-response', status: false },
  nodePortRange: { name: 'node-port-range', status: true },
  externalClusterIP: { name: 'bpf-lb-external-clusterip', status: false },
  sourceRangeCheck: { name: 'enable-svc-source-range-check', status: false },
  sourceRangeTypes: { name: 'bpf-lb-source-range-all-types', status: false },
  // the operator's LB-IPAM option, read from the same ConfigMap
  lbServiceIPAM: { name: 'default-lb-service-ipam', status: false },
  wildcardEntries: { name: 'bpf-lb-enable-wildcard-entries', status: false },
  forwardingAnnotation: { name: 'bpf-lb-mode-annotation', status: false },
  algorithmAnnotation: { name: 'bpf-lb-algorithm-annotation', status: false },
  serviceTopology: { name: 'enable-service-topology', status: false },
  healthCheckNodePort: { name: 'enable-health-check-nodeport', status: false },
  healthCheckLoadBalancerIP: { name: 'enable-health-check-loadbalancer-ip', status: false },
  serviceProxyName: { name: 'k8s-service-proxy-name', status: false },
  ipv4: { name: 'enable-ipv4', status: false },
  ipv6: { name: 'enable-ipv6', status: false },
} as const satisfies Record<string, { name: string; status: boolean }>;

export type SourcedSetting = keyof typeof SETTINGS;
/** The settings whose source an output names where it states them, in their order. */
export const SOURCED_SETTINGS = Object.keys(SETTINGS) as readonly SourcedSetting[];
/** Those a status may print, each on a line of its own. */
export type StatusSetting = {
  [K in SourcedSetting]: (typeof SETTINGS)[K]['status'] extends true ? K : never;
}[SourcedSetting];
export const STATUS_SETTINGS = SOURCED_SETTINGS.filter(
  (k): k is StatusSetting => SETTINGS[k].status,
);
/** Those only cilium-config or the release says (no status line prints them). */
// noBackend is told beside the status's settings, though no status prints it
type ConfigOnlySourced = Exclude<SourcedSetting, StatusSetting | 'noBackend'>;

export type SettingSource =
  /** Its status printed it, on the line of that field ("Socket LB"). */
  | { from: 'status'; field: string }
  /** cilium-config's key, as the release reads it. */
  | { from: 'cilium-config'; key: string }
  /** The release sets it whatever cilium-config says, or another setting read turns it on. */
  | { from: 'release'; why: string }
  /** Not read: Cilium's default is taken, which the agent need not run with. */
  | { from: 'not read'; assumed: string };

export type SettingSources = Record<SourcedSetting, SettingSource>;

/** Each setting's name as Cilium's users know it: its cilium-config key, or its status field. */
export const SETTING_NAMES = Object.fromEntries(
  SOURCED_SETTINGS.map((k) => [k, SETTINGS[k].name]),
) as Record<SourcedSetting, string>;

/** Where `s` was read, in words: 'the "Socket LB" line of agent kube-system/cilium-x's status',
 * "ConfigMap kube-system/cilium-config bpf-lb-sock", "Cilium 1.19 keeps it on", "not read
 * (Cilium's default: off)". */
export function sourceText(
  agent: Pick<CiliumAgent, 'pod' | 'node' | 'configMap'>,
  s: SettingSource,
) {
  switch (s.from) {
    case 'status':
      return `the "${s.field}" line of ${agentName(agent)}'s status`;
    case 'cilium-config':
      return `ConfigMap ${agent.configMap ?? 'cilium-config'} ${s.key}`;
    case 'release':
      return s.why;
    case 'not read':
      return `not read (${s.assumed})`;
  }
}

/** Where those of `settings` that were read were read, said once for the agent: 'its status's
 * "Socket LB" and "KubeProxyReplacement" lines', 'ConfigMap kube-system/cilium-config
 * bpf-lb-sock'; undefined where none was. */
export function readSourcesText(
  agent: Pick<CiliumAgent, 'configMap' | 'sources'>,
  settings: readonly SourcedSetting[],
): string | undefined {
  const and = (xs: string[]) => xs.join(' and ');
  const fields = settings.flatMap((k) => {
    const s = agent.sources[k];
    return s.from === 'status' ? [`"${s.field}"`] : [];
  });
  const keys = settings.flatMap((k) => {
    const s = agent.sources[k];
    return s.from === 'cilium-config' ? [s.key] : [];
  });
  const said = [
    ...(fields.length > 0
      ? [`its status's ${and(fields)} line${fields.length > 1 ? 's' : ''}`]
      : []),
    ...(keys.length > 0 ? [`ConfigMap ${agent.configMap ?? 'cilium-config'} ${and(keys)}`] : []),
  ];
  return said.length > 0 ? and(said) : undefined;
}

/** Whether `s` was read where the agent or the API says it (its status, cilium-config). */
export const wasRead = (s: SettingSource) => s.from === 'status' || s.from === 'cilium-config';

/** Where the agent's settings were read, each source once with the settings it gave, those not
 * read last with the default each is assumed at: the header of `kdebug expect` ("bpf-lb-sock,
 * bpf-lb-mode from the status of agent ...; ...; not read, so assumed: bpf-lb-external-clusterip
 * (Cilium's default: off), ..."). */
export function settingsSaid(
  agent: Pick<CiliumAgent, 'pod' | 'node' | 'configMap' | 'sources'>,
): string {
  const bySource = new Map<string, string[]>();
  const assumed: string[] = [];
  for (const s of SOURCED_SETTINGS) {
    const src = agent.sources[s];
    if (src.from === 'not read') {
      assumed.push(`${SETTING_NAMES[s]} (${src.assumed})`);
      continue;
    }
    // a status line or a key is said with the setting itself, the release with its reason
    const where =
      src.from === 'status'
        ? `from the status of ${agentName(agent)}`
        : src.from === 'cilium-config'
          ? `from ConfigMap ${agent.configMap ?? 'cilium-config'}`
          : `: ${src.why}`;
    bySource.set(where, [...(bySource.get(where) ?? []), SETTING_NAMES[s]]);
  }
  return [
    ...[...bySource].map(([where, names]) =>
      where.startsWith(':') ? `${names.join(', ')}${where}` : `${names.join(', ')} ${where}`,
    ),
    ...(assumed.length > 0 ? [`not read, so assumed: ${assumed.join(', ')}`] : []),
  ].join('; ');
}

/** What the agent's settings were decided from (agent.ts ciliumAgentOn), for their sources. */
export interface SettingInputs {
  /** The fields its status printed, where a status was read. */
  fields?: StatusFields;
  /** cilium-config's value of a key as the agent reads it; undefined where not set or not read. */
  config: (key: string) => string | undefined;
  release: Version | undefined;
  /** Kube-proxy replacement as decided: with it on, socket LB and session affinity follow. */
  kpr: boolean;
  /** The settings a refused cilium-config gave (agent.ts notKnown). */
  notKnown: readonly string[];
}

/** Each setting's source, as ciliumAgentOn decides its value: its status line, else its
 * cilium-config key (a deprecated one where the release reads that), else the release or
 * another setting read, else Cilium's default, not read. */
export function settingSources(o: SettingInputs): SettingSources {
  const byRelease = releaseBehaviour(o.release);
  const refused = { from: 'not read' as const, assumed: SETTING_NOT_KNOWN };
  const config = (s: SourcedSetting, key: string | undefined, assumed: string): SettingSource =>
    o.notKnown.includes(s)
      ? refused
      : key !== undefined
        ? { from: 'cilium-config', key }
        : { from: 'not read', assumed };
  const keyOf = (key: string) => (o.config(key) !== undefined ? key : undefined);
  const one = (s: keyof StatusFields, fromConfig: () => SettingSource): SettingSource => {
    const field = o.fields?.[s];
    return field !== undefined ? { from: 'status', field } : fromConfig();
  };
  const lbKey = (key: 'bpf-lb-algorithm' | 'bpf-lb-mode') =>
    lbSettingRead(o.config, key, o.release)?.key;
  return {
    kubeProxyReplacement: one('kubeProxyReplacement', () =>
      config('kubeProxyReplacement', keyOf('kube-proxy-replacement'), "Cilium's default: off"),
    ),
    socketLB: one('socketLB', () =>
      config(
        'socketLB',
        keyOf('bpf-lb-sock'),
        "Cilium's default: on with kube-proxy replacement, off without",
      ),
    ),
    hostnsOnly: one('hostnsOnly', () =>
      config('hostnsOnly', keyOf('bpf-lb-sock-hostns-only'), "Cilium's default: off"),
    ),
    algorithm: one('algorithm', () =>
      config('algorithm', lbKey('bpf-lb-algorithm'), "Cilium's default: random"),
    ),
    forwarding: one('forwarding', () =>
      config('forwarding', lbKey('bpf-lb-mode'), "Cilium's default: snat"),
    ),
    sessionAffinity: one('sessionAffinity', () =>
      byRelease.kprOptionsGone
        ? { from: 'release', why: 'Cilium 1.19 and later keep it on whatever cilium-config says' }
        : o.kpr && !o.notKnown.includes('kubeProxyReplacement')
          ? { from: 'release', why: 'kube-proxy replacement turns it on' }
          : config(
              'sessionAffinity',
              keyOf('enable-session-affinity'),
              `Cilium's default for its release: ${byRelease.sessionAffinityDefault ? 'on' : 'off'}`,
            ),
    ),
    noBackend: config(
      'noBackend',
      keyOf('service-no-backend-response'),
      "Cilium's default: reject, with ICMP port unreachable",
    ),
    nodePortRange: one('nodePortRange', () =>
      config(
        'nodePortRange',
        // empty, or one it would not start with: the default, as the agent does not run to say
        o.config('node-port-range') && parseNodePortRange(o.config('node-port-range')!)
          ? 'node-port-range'
          : undefined,
        "Cilium's default: 30000-32767",
      ),
    ),
    ...configOnlySources(o, config, keyOf),
  };
}

/** The sources of the settings only cilium-config (or the release) gives: no status line says
 * them. */
function configOnlySources(
  o: SettingInputs,
  config: (s: SourcedSetting, key: string | undefined, assumed: string) => SettingSource,
  keyOf: (key: string) => string | undefined,
): Pick<SettingSources, ConfigOnlySourced> {
  const byRelease = releaseBehaviour(o.release);
  const plain = (s: SourcedSetting, assumed: string) =>
    config(s, keyOf(SETTING_NAMES[s]), `Cilium's default: ${assumed}`);
  const guarded = byRelease.sourceRangeTypes;
  return {
    externalClusterIP: plain('externalClusterIP', 'off'),
    sourceRangeCheck: byRelease.kprOptionsGone
      ? { from: 'release', why: 'Cilium 1.19 and later always check them (the option is gone)' }
      : plain(
          'sourceRangeCheck',
          'on with kube-proxy replacement or enable-node-port, off without',
        ),
    // 1.18.0 to 1.18.5 read no such option: they guard every type (release-behaviour.ts)
    sourceRangeTypes:
      guarded === 'all'
        ? {
            from: 'release',
            why: 'Cilium 1.18.0 to 1.18.5 check every frontend type whatever bpf-lb-source-range-all-types says',
          }
        : plain('sourceRangeTypes', `off, so ${guarded.join(' and ')} frontends only`),
    lbServiceIPAM: plain('lbServiceIPAM', 'lbipam'),
    // the option is 1.20's; before, the release alone decides
    wildcardEntries: byRelease.wildcardOption
      ? plain('wildcardEntries', 'on')
      : o.release === undefined
        ? { from: 'not read', assumed: 'its release not known: taken as writing none' }
        : {
            from: 'release',
            why: byRelease.wildcardEntries
              ? "Cilium 1.19 writes wildcard entries (the option is 1.20's)"
              : "Cilium before 1.19 writes no wildcard entry (the option is 1.20's)",
          },
    forwardingAnnotation: plain('forwardingAnnotation', 'off'),
    algorithmAnnotation: plain('algorithmAnnotation', 'off'),
    serviceTopology: plain('serviceTopology', 'off'),
    healthCheckNodePort: plain('healthCheckNodePort', 'on'),
    healthCheckLoadBalancerIP: plain('healthCheckLoadBalancerIP', 'off'),
    serviceProxyName: plain(
      'serviceProxyName',
      'none, so only Services without service.kubernetes.io/service-proxy-name',
    ),
    ipv4: plain('ipv4', 'on'),
    ipv6: plain('ipv6', 'off'),
  };
}

/** One setting as the agent holds it and where that was read, for JSON: `value` null where it is
 * not known (a refused cilium-config); `assumed` where Cilium's default was taken. */
export interface SettingStated {
  /** Its cilium-config key ("bpf-lb-mode"). */
  setting: string;
  value: string | boolean | null;
  source: SettingSource;
  assumed: boolean;
}

/** Each setting's value as kdebug took it, from the agent's settings. */
function valueOf(s: CiliumSettings, k: SourcedSetting): string | boolean {
  switch (k) {
    case 'nodePortRange':
      return `${s.nodePortRange[0]}-${s.nodePortRange[1]}`;
    // the option is a boolean: every frontend type guarded, or the release's own
    case 'sourceRangeTypes':
      return s.sourceRangeTypes === 'all';
    default:
      return s[k];
  }
}

/** The agent's settings, each with its value and its source (drift's and expect's JSON). */
export function settingsStated(agent: Pick<CiliumAgent, 'settings' | 'sources'>): SettingStated[] {
  return SOURCED_SETTINGS.map((k) => {
    const source = agent.sources[k];
    const known = !(agent.settings.notKnown as readonly string[]).includes(k);
    return {
      setting: SETTING_NAMES[k],
      value: known ? valueOf(agent.settings, k) : null,
      source,
      assumed: source.from === 'not read',
    };
  });
}
