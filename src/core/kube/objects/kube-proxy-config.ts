// What kube-proxy runs with, as the objects and kube-proxy itself say it: its ConfigMap's file,
// its /configz answer, and the flags of its Pod on top.
import { load as loadYaml } from 'js-yaml';
import type { KubeObject } from '../../model.js';
import type { ClusterView } from '../objects.js';
import { arr, nameOf, namespaceOf, num, obj, str, strMap, type J } from './fields.js';
import { isKubeProxyPod, type Pod } from './pod.js';

export interface ConfigMap {
  namespace: string;
  name: string;
  data: Record<string, string>;
  raw: KubeObject;
  /** Its data read as kube-proxy's configuration, kept once read: every node's state, the
   * dataplane and the expected rules ask for it (kubeProxyConfigOf). */
  proxyConfig?: KubeProxyConfig;
}

/** kube-proxy's mode where its configuration names none: its default on Linux. */
export const DEFAULT_MODE = 'iptables';

/** What kube-proxy was configured with (the kube-proxy ConfigMap's config.conf). */
export interface KubeProxyConfig {
  mode: 'iptables' | 'ipvs' | 'nftables' | 'kernelspace' | 'userspace' | string;
  clusterCIDR?: string;
  detectLocalMode: 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix' | string;
  bridgeInterface?: string;
  interfaceNamePrefix?: string;
  masqueradeAll: boolean;
  masqueradeBit: number;
  localhostNodePorts: boolean;
  nodePortAddresses: string[];
  /** IPVS mode's scheduler (`ipvs.scheduler`; kube-proxy's default, rr, when unset). */
  ipvsScheduler?: string;
  /** The feature gates set (`featureGates`, `--feature-gates`): each gate named, on or off. */
  featureGates: Record<string, boolean>;
  /** Where the values came from, for evidence. */
  source: string;
  /** Where no configuration file was read (no ConfigMap, or one that does not parse): why, and
   * the settings only it tells that no flag of the Pod told either, which are then not known
   * (the values here are kube-proxy's defaults, never to be compared or decided from). */
  unread?: {
    why: string;
    unknown: UnknownSetting[];
    /** k3s gave kube-proxy its flags from its own configuration on the node: no API object holds them. */
    embeddedIn?: 'k3s';
  };
  /** Where `unread` leaves the masquerade condition unknown: the one condition the node's own
   * rules hold ("! -s 10.244.0.0/16", "all"), taken as what kube-proxy there runs with. */
  masqueradeShown?: string;
}

/** A setting only kube-proxy's configuration tells: its mode, and the cluster IP masquerade
 * condition (masqueradeAll, clusterCIDR, detectLocalMode). */
export type UnknownSetting = 'mode' | 'masquerade';

/** Whether the configuration tells this setting: read from a file, or set by a flag. */
export const configTells = (c: KubeProxyConfig, setting: UnknownSetting): boolean =>
  !c.unread?.unknown.includes(setting);

export function toConfigMap(raw: KubeObject): ConfigMap {
  return { namespace: namespaceOf(raw), name: nameOf(raw), data: strMap(raw['data']), raw };
}

/**
 * kube-proxy's configuration from its ConfigMap (kubeadm's `config.conf`, a
 * KubeProxyConfiguration in YAML). Throws with a message naming the key when it cannot be read.
 */
export function toKubeProxyConfig(cm: ConfigMap): KubeProxyConfig {
  const key =
    cm.data['config.conf'] !== undefined
      ? 'config.conf'
      : Object.keys(cm.data).find((k) => /conf/.test(k));
  const source = `ConfigMap ${cm.namespace}/${cm.name}${key ? ` key ${key}` : ''}`;
  let c: J = {};
  if (key) {
    try {
      c = obj(loadYaml(cm.data[key]!));
    } catch (e) {
      // js-yaml's mark counts lines from 0
      const { reason, mark } = e as { reason?: string; mark?: { line: number } };
      const at = mark ? ` at line ${mark.line + 1}` : '';
      throw new Error(
        `${source}: not valid YAML${at}: ${reason ?? (e as Error).message.split('\n')[0]}`,
      );
    }
  }
  return configFrom(c, source);
}

/** kube-proxy's answer on /configz ({"kubeproxy.config.k8s.io": {...}}): what it runs with, or
 * undefined when the text is not such an answer (kube-proxy down, an older version). */
export function configFromConfigz(text: string, node: string): KubeProxyConfig | undefined {
  // not read (most nodes of a large cluster): no document, and no exception to make of it
  if (text.trim() === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const c = obj(versionedNames(obj(doc)['kubeproxy.config.k8s.io']));
  if (Object.keys(c).length === 0) return undefined;
  // 1.31-1.35's internal type keeps the cluster CIDRs under detectLocal and masqueradeAll under
  // linux, for every mode
  const cidrs = arr(obj(c['detectLocal'])['clusterCIDRs']).map(str).filter(Boolean);
  if (!str(c['clusterCIDR']) && cidrs.length > 0) c['clusterCIDR'] = cidrs.join(',');
  const all = obj(c['linux'])['masqueradeAll'];
  if (typeof all === 'boolean')
    for (const mode of ['iptables', 'nftables']) c[mode] = { ...obj(c[mode]), masqueradeAll: all };
  return configFrom(c, `/configz of kube-proxy on ${node}`);
}

/** The internal type's Go field names whose JSON name is not the name with its first letter
 * lowered (kube-proxy/config/v1alpha1). */
const INTERNAL_NAMES: Record<string, string> = {
  IPTables: 'iptables',
  IPVS: 'ipvs',
  NFTables: 'nftables',
};

/** kube-proxy up to 1.35 serves its internal configuration type on /configz, with Go's field
 * names ("ClusterCIDR", "IPTables"; kubernetes/kubernetes#136044): read as the versioned names. */
function versionedNames(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(versionedNames);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => {
      const name = INTERNAL_NAMES[k] ?? `${k.charAt(0).toLowerCase()}${k.slice(1)}`;
      // a map's keys are data, not field names: the feature gates keep theirs
      return [name, name === 'featureGates' ? x : versionedNames(x)];
    }),
  );
}

/** A KubeProxyConfiguration document (the ConfigMap's file, or /configz) as the model. */
function configFrom(c: J, source: string): KubeProxyConfig {
  const mode = str(c['mode']) || DEFAULT_MODE;
  // the masquerade knobs live in the section of the mode kube-proxy runs in
  const ipt = obj(c[mode === 'nftables' ? 'nftables' : 'iptables']);
  const cidr = str(c['clusterCIDR']);
  const scheduler = str(obj(c['ipvs'])['scheduler']);
  return {
    mode,
    clusterCIDR: cidr || undefined,
    detectLocalMode: str(c['detectLocalMode']) || 'ClusterCIDR',
    bridgeInterface: str(obj(c['detectLocal'])['bridgeInterface']),
    interfaceNamePrefix: str(obj(c['detectLocal'])['interfaceNamePrefix']),
    masqueradeAll: ipt['masqueradeAll'] === true,
    masqueradeBit: num(ipt['masqueradeBit']) ?? 14,
    localhostNodePorts: obj(c['iptables'])['localhostNodePorts'] !== false,
    nodePortAddresses: arr(c['nodePortAddresses'])
      .map(str)
      .filter((x): x is string => !!x),
    ...(scheduler ? { ipvsScheduler: scheduler } : {}),
    featureGates: gates(c['featureGates']),
    source,
  };
}

/** A featureGates map as the configuration file holds it (`Gate: true`, YAML's "true" too). */
const gates = (v: unknown): Record<string, boolean> =>
  Object.fromEntries(
    Object.entries(obj(v)).flatMap(([k, x]): [string, boolean][] =>
      x === true || x === 'true' ? [[k, true]] : x === false || x === 'false' ? [[k, false]] : [],
    ),
  );

/** The default when a cluster has no kube-proxy ConfigMap (k3s, managed clusters). */
export const DEFAULT_KUBE_PROXY_CONFIG: KubeProxyConfig = {
  mode: DEFAULT_MODE,
  detectLocalMode: 'ClusterCIDR',
  masqueradeAll: false,
  masqueradeBit: 14,
  localhostNodePorts: true,
  nodePortAddresses: [],
  featureGates: {},
  source: 'defaults (no kube-proxy ConfigMap)',
  unread: {
    why: "no ConfigMap; kube-proxy may run with flags, or with EKS's kube-proxy-config",
    unknown: ['mode', 'masquerade'],
  },
};

/** The ConfigMaps a Pod mounts (for kube-proxy's Pod: where its configuration file is). */
export const configMapsMounted = (p: Pod): string[] =>
  arr(obj(p.raw['spec'])['volumes'])
    .map((v) => str(obj(obj(v)['configMap'])['name']) ?? '')
    .filter((n) => n !== '');

/** The names of the ConfigMaps kube-proxy's Pods mount. */
export function kubeProxyMounts(view: Pick<ClusterView, 'pods'>): Set<string> {
  return new Set(view.pods.filter(isKubeProxyPod).flatMap(configMapsMounted));
}

/**
 * What kube-proxy runs with, as far as the objects say: the ConfigMap its Pod mounts (else
 * kubeadm's "kube-proxy" or EKS's "kube-proxy-config" in kube-system), then the command-line
 * flags of its Pod on top (they override the file). DEFAULT_KUBE_PROXY_CONFIG when none is read.
 */
export function kubeProxyConfigOf(
  view: ClusterView,
  pod: Pod | undefined = view.pods.find(isKubeProxyPod),
  mounted: ReadonlySet<string> = kubeProxyMounts(view),
): KubeProxyConfig {
  const inSystem = view.configMaps.filter((c) => c.namespace === 'kube-system');
  const cm =
    inSystem.find((c) => mounted.has(c.name)) ??
    inSystem.find((c) => c.name === 'kube-proxy' || c.name === 'kube-proxy-config');
  const base = cm ? (cm.proxyConfig ??= toKubeProxyConfig(cm)) : DEFAULT_KUBE_PROXY_CONFIG;
  const flags = pod ? proxyFlags(pod) : {};
  if (Object.keys(flags).length === 0) return base;
  // with no file read, what the flags set is known, nothing else
  const unknown = base.unread?.unknown.filter((s) =>
    s === 'mode'
      ? !flags.mode
      : !flags.masqueradeAll && !flags.clusterCIDR && !flags.detectLocalMode,
  );
  return {
    ...base,
    ...flags,
    featureGates: { ...base.featureGates, ...flags.featureGates },
    source: `${cm ? `${base.source}, ` : ''}the flags of Pod kube-system/${pod!.name}`,
    ...(base.unread ? { unread: { ...base.unread, unknown: unknown ?? [] } } : {}),
  };
}

/** The kube-proxy flags that change its rules, from its container's command and args. */
function proxyFlags(pod: Pod): Partial<KubeProxyConfig> {
  const c = obj(arr(obj(pod.raw['spec'])['containers'])[0]);
  const words = [...arr(c['command']), ...arr(c['args'])].map(str).filter((x): x is string => !!x);
  const value = (name: string) => {
    for (let i = 0; i < words.length; i++) {
      if (words[i] === `--${name}`) return words[i + 1];
      if (words[i]!.startsWith(`--${name}=`)) return words[i]!.slice(name.length + 3);
    }
    return undefined;
  };
  const out: Partial<KubeProxyConfig> = {};
  const mode = value('proxy-mode');
  if (mode) out.mode = mode;
  const cidr = value('cluster-cidr');
  if (cidr) out.clusterCIDR = cidr;
  const local = value('detect-local-mode');
  if (local) out.detectLocalMode = local;
  if (words.includes('--masquerade-all') || value('masquerade-all') === 'true')
    out.masqueradeAll = true;
  const scheduler = value('ipvs-scheduler');
  if (scheduler) out.ipvsScheduler = scheduler;
  const bit = value('iptables-masquerade-bit');
  if (bit && /^\d+$/.test(bit)) out.masqueradeBit = Number(bit);
  // --feature-gates=A=true,B=false: kube-proxy takes the flag's gates over the file's
  const flagged = value('feature-gates');
  if (flagged)
    out.featureGates = gates(Object.fromEntries(flagged.split(',').map((g) => g.split('=', 2))));
  return out;
}
