// Each node's kube-proxy, decided once per run: its OS, proxy mode, version and configuration,
// each with where it came from. The checks, the commands, expect and the TUI ask this, never
// the raw outputs, so every step sees the same mode and configuration for a node.
import { read, seen, unseen } from '../findings/evidence.js';
import {
  DEFAULT_KUBE_PROXY_CONFIG,
  configFromConfigz,
  configTells,
  isKubeProxyPod,
  isWindows,
  kubeProxyConfigOf,
  type ClusterView,
  type KubeProxyConfig,
  type Node,
  type Pod,
} from '../kube/objects.js';
import type { Evidence, Facts } from '../model.js';
import { parseProxyMode } from './outputs.js';
import { podReady } from '../checks/pod-health.js';
import {
  CILIUM_STEMS,
  ciliumAgentOn,
  ciliumConfig,
  fullReplacement,
  isCiliumAgentPod,
  knows,
  partialText,
  recordedAgentOn,
  replaces,
  type AgentPod,
  type CiliumAgent,
} from '../dataplane/cilium/agent/agent.js';
import { SETTING_NOT_KNOWN } from '../dataplane/cilium/agent/refused.js';
import { fromStatus } from '../dataplane/cilium/agent/status.js';
import { sourceText } from '../dataplane/cilium/agent/provenance.js';
import type { ViewIndex } from '../kube/view-index.js';
import { parseVersion, type Version } from '../version.js';

/** A value kdebug settled on, with what it rests on; `from` says which input, typed. */
export interface Decided<T, From extends string> {
  value: T;
  from: From;
  /** Where it came from, in words: "/proxyMode on node-a", "ConfigMap kube-system/kube-proxy". */
  source: string;
  evidence: Evidence;
}

export interface NodeState {
  node: string;
  windows: boolean;
  /** The proxy mode; `stale` when the answer came from a kube-proxy that is not running now. */
  mode: Decided<string, 'proxyMode' | 'rules' | 'agent' | ConfigFrom> & { stale?: boolean };
  /** The configuration kube-proxy on this node runs with; `error` when its ConfigMap did not
   * read (the defaults then stand in). */
  config: Decided<KubeProxyConfig, ConfigFrom> & { error?: string };
  /** k3s runs kube-proxy inside its own process, with no kube-proxy Pod (RKE2 runs a static Pod). */
  embeddedIn?: 'k3s';
  /** The Cilium agent on the node, where one runs: mode `cilium` when it replaces kube-proxy. */
  cilium?: AgentPod;
  /** A node of a Cilium cluster with neither a Cilium agent Pod nor a kube-proxy Pod in the API:
   * `ran` where its recorded agent status shows Cilium replacing kube-proxy there anyway, and
   * then `agent`, that agent as its recorded status says it (no Pod), whose recorded listings
   * are compared. Its mode is `cilium` (no kube-proxy rules are expected of it). */
  agentMissing?: { ran: boolean; agent?: CiliumAgent };
  /** kube-proxy's release on this node, when anything recorded says it. */
  version?: Decided<Version, 'metrics' | 'image' | 'nodeInfo' | 'embedded'> & {
    /** A lesser source that names another minor release ("the image … of Pod … says v1.34.4"). */
    disagrees?: string;
  };
}

/** kube-proxy's version as read for a node, in words: what expect and drift say beside the
 * release they model. */
export interface VersionRead {
  version: string;
  /** "its /metrics", "the image registry.k8s.io/kube-proxy:v1.34.4 of Pod …". */
  source: string;
  /** A lesser source that names another minor release. */
  disagrees?: string;
}

export const versionRead = ({ version: v }: Pick<NodeState, 'version'>): VersionRead | null =>
  v
    ? {
        version: v.value.text,
        source: v.source,
        ...(v.disagrees ? { disagrees: v.disagrees } : {}),
      }
    : null;

/** A version read, as expect's note and drift's line say it. */
export const versionReadText = (node: string, r: VersionRead | null): string =>
  r
    ? `kube-proxy ${r.version} read on ${node}, from ${r.source}${r.disagrees ? `; ${r.disagrees}` : ''}`
    : `kube-proxy's version on ${node} was not read`;

/** kube-proxy's /configz on the node, the API objects (ConfigMap, Pod flags), or its defaults. */
type ConfigFrom = 'configz' | 'objects' | 'default';

/** What deciding a node's state may ask of the analysis: the mode its iptables rules show. */
export interface StateInputs {
  facts: Facts;
  view: ClusterView;
  /** The view's Pods and Nodes by node name. */
  index: ViewIndex;
  /** The mode the node's iptables dump shows, and that dump's file. */
  shownMode(node: string): { mode: string; source: string } | undefined;
}

/** The node's kube-proxy state, each part decided once from the best evidence recorded. */
export function resolveNode(node: string, inputs: StateInputs): NodeState {
  const { facts, view, index } = inputs;
  const outputs = facts.nodes[node] ?? {};
  const pod = index.kubeProxyPod(node);
  const found = index.node(node);
  const windows = found !== undefined && isWindows(found);
  const info = nodeInfoOf(found);
  const kubelet = info?.kubeletVersion;
  const embeddedIn = !pod && /\+k3s\d*$/.test(kubelet ?? '') ? 'k3s' : undefined;
  const config = flaggedBy(
    embeddedIn,
    configOf(node, outputs['proxy-configz'], view, pod, index.kubeProxyMounts),
  );
  const version = versionOf(node, outputs['proxy-metrics'], info, pod, embeddedIn);
  const cilium = ciliumAgentOn(view, index.ciliumAgentPod(node), outputs[CILIUM_STEMS.status]);
  const proxy = () => modeOf(node, outputs, config, pod, () => inputs.shownMode(node));
  // a refused cilium-config says nothing of the replacement: kube-proxy's own answer or rules,
  // where observed, say it runs; else the agent is taken to, and the mode line says why
  const replaces =
    cilium !== undefined &&
    // a full replacement takes every Service packet before kube-proxy's rules (its socket LB,
    // forced on, and tc at the devices): the agent answers even beside a kube-proxy Pod
    (fullReplacement(cilium) ||
      (!pod &&
        // a partial replacement with no kube-proxy there (nor kube-proxy's own answer observed):
        // Cilium is what programs its Services
        (cilium.replacesKubeProxy ||
          (cilium.replacement !== undefined && proxy().evidence.kind !== 'observed') ||
          (!knows(cilium.settings, 'kubeProxyReplacement') &&
            proxy().evidence.kind !== 'observed'))));
  // no agent Pod and no kube-proxy Pod: the node's recorded status says what ran, else the
  // cluster's Cilium is what should program it (never kube-proxy's defaults, assumed)
  const missing =
    !cilium && !pod && !windows && !embeddedIn
      ? agentMissing(node, view, outputs[CILIUM_STEMS.status], () => proxy().evidence.kind)
      : undefined;
  return {
    node,
    windows,
    ...(embeddedIn ? { embeddedIn } : {}),
    mode: replaces ? ciliumMode(node, cilium, pod) : (missing?.mode ?? proxy()),
    ...(missing ? { agentMissing: missingAgent(node, view, missing.ran, outputs) } : {}),
    config,
    ...(cilium ? { cilium } : {}),
    ...(version ? { version } : {}),
  };
}

/** A node's missing agent, and where its recorded status shows it ran, that agent as recorded. */
function missingAgent(
  node: string,
  view: ClusterView,
  ran: boolean,
  outputs: Record<string, string>,
): NonNullable<NodeState['agentMissing']> {
  const agent = ran ? recordedAgentOn(view, node, outputs[CILIUM_STEMS.status]) : undefined;
  return { ran, ...(agent ? { agent } : {}) };
}

/** Cilium replaces kube-proxy here: as its agent's status said (observed), or its ConfigMap's key
 * (read), each as that setting's own source says; where the agent refuses that ConfigMap, its
 * agent and no kube-proxy Pod are what is read, and whether it replaces kube-proxy is said not
 * known. */
function ciliumMode(node: string, agent: AgentPod, kubeProxy: Pod | undefined): NodeState['mode'] {
  const known = knows(agent.settings, 'kubeProxyReplacement');
  const kpr = agent.sources.kubeProxyReplacement;
  const source = known ? sourceText(agent, kpr) : `ConfigMap ${agent.configMap}`;
  const beside = kubeProxy
    ? `; kube-proxy's Pod ${kubeProxy.namespace}/${kubeProxy.name} runs there too, after the agent`
    : '';
  const text = agent.replacement
    ? `${node}: cilium (${partialText(agent.replacement)}, and no kube-proxy Pod there; from ${agent.replacement.source})`
    : known
      ? `${node}: cilium (kube-proxy replacement, from ${source}${beside})`
      : `${node}: cilium (its agent ${agent.pod.namespace}/${agent.pod.name} and no kube-proxy Pod there; kube-proxy replacement ${SETTING_NOT_KNOWN})`;
  return {
    value: 'cilium',
    from:
      kpr.from === 'status'
        ? 'agent'
        : kpr.from === 'cilium-config' || !known
          ? 'objects'
          : 'default',
    source,
    evidence:
      kpr.from === 'status'
        ? seen(text, { node, source: `nodes/${node}/${CILIUM_STEMS.status}.txt` })
        : kpr.from === 'cilium-config' || !known
          ? read(text)
          : unseen(text),
  };
}

/** A node with no Cilium agent Pod and no kube-proxy Pod in a cluster whose Services Cilium
 * handles (cilium-config's kube-proxy-replacement on, or agent Pods and no kube-proxy Pod at all):
 * its mode is `cilium`, observed where its recorded agent status says the replacement runs, else
 * not observed; undefined where the cluster is no such one, or kube-proxy itself answered there. */
function agentMissing(
  node: string,
  view: ClusterView,
  status: string | undefined,
  proxySeen: () => Evidence['kind'],
): { mode: NodeState['mode']; ran: boolean } | undefined {
  const file = `nodes/${node}/${CILIUM_STEMS.status}.txt`;
  const said = status === undefined ? undefined : fromStatus(status);
  if (said?.kubeProxyReplacement) {
    const field = said.fields.kubeProxyReplacement!;
    const source = `the "${field}" line of ${file}`;
    return {
      ran: true,
      mode: {
        value: 'cilium',
        from: 'agent',
        source,
        evidence: seen(
          `${node}: cilium (kube-proxy replacement, from ${source}; no Cilium agent Pod on ${node} in the API)`,
          { node, source: file },
        ),
      },
    };
  }
  const cfg = ciliumConfig(view)?.data['kube-proxy-replacement'];
  const cluster =
    cfg !== undefined
      ? replaces(cfg.trim())
      : view.pods.some(isCiliumAgentPod) && !view.pods.some(isKubeProxyPod);
  // a status saying no replacement, or kube-proxy answering on the node: its own mode stands
  if (!cluster || said?.kubeProxyReplacement === false || proxySeen() === 'observed')
    return undefined;
  const why =
    cfg !== undefined
      ? `ConfigMap cilium-config: kube-proxy-replacement: ${cfg}`
      : 'Cilium agent Pods on other nodes, no kube-proxy Pod';
  return {
    ran: false,
    mode: {
      value: 'cilium',
      from: cfg !== undefined ? 'objects' : 'default',
      source: why,
      evidence: unseen(
        `${node}: no Cilium agent Pod and no kube-proxy Pod in the API (the cluster's Services are Cilium's: ${why})`,
        node,
      ),
    },
  };
}

/** k3s gives the kube-proxy it runs its flags from its own configuration, never through the API:
 * where nothing else was read, that is said as why its settings are unknown. */
function flaggedBy(
  embeddedIn: NodeState['embeddedIn'],
  config: NodeState['config'],
): NodeState['config'] {
  const unread = config.value.unread;
  if (!embeddedIn || config.from !== 'default' || !unread) return config;
  const why = `${embeddedIn} runs kube-proxy inside its own process: its flags come from ${embeddedIn}'s configuration on the node, cluster-cidr and kube-proxy-arg, not from the API`;
  return { ...config, value: { ...config.value, unread: { ...unread, why, embeddedIn } } };
}

/** The configuration kube-proxy runs with cluster-wide: the first of these nodes' served one
 * (/configz), else what the objects say (the ConfigMap, the first kube-proxy Pod's flags). */
export function clusterConfig(
  states: readonly NodeState[],
  view: ClusterView,
): NodeState['config'] {
  return states.find((s) => s.config.from === 'configz')?.config ?? configInObjects(view);
}

/** The configuration the API objects give kube-proxy (its ConfigMap, the first kube-proxy Pod's
 * flags), else its defaults: what collect reads by before any node answered. */
export const configInObjects = (view: ClusterView): NodeState['config'] =>
  configOf('', undefined, view, undefined);

/** What kube-proxy serves on /configz is what it runs with: first; then the ConfigMap its Pod
 * mounts with that Pod's flags on top; then kube-proxy's defaults, assumed. */
function configOf(
  node: string,
  configz: string | undefined,
  view: ClusterView,
  pod: Pod | undefined,
  mounted?: ReadonlySet<string>,
): NodeState['config'] {
  const served = configFromConfigz(configz ?? '', node);
  if (served)
    return {
      value: served,
      from: 'configz',
      source: served.source,
      evidence: seen(served.source, { node, source: `nodes/${node}/proxy-configz.txt` }),
    };
  try {
    const config = kubeProxyConfigOf(view, pod, mounted);
    const assumed = config === DEFAULT_KUBE_PROXY_CONFIG;
    return {
      value: config,
      from: assumed ? 'default' : 'objects',
      source: config.source,
      evidence: (assumed ? unseen : read)(config.source),
    };
  } catch (e) {
    // unreadable: as if none were there (its Pod's flags alone), and said why
    const error = (e as Error).message;
    const flagged = kubeProxyConfigOf({ ...view, configMaps: [] }, pod, mounted);
    const assumed = flagged === DEFAULT_KUBE_PROXY_CONFIG;
    const source = assumed ? error : `${flagged.source} (${error})`;
    return {
      value: { ...flagged, source, unread: { ...flagged.unread!, why: error } },
      from: assumed ? 'default' : 'objects',
      source,
      evidence: unseen(`kube-proxy's configuration: ${error}`),
      error,
    };
  }
}

/** kube-proxy's own /proxyMode answer; else its configuration where one was read; else what the
 * rules show (no ConfigMap: k3s, some managed clusters); else the default, assumed. */
function modeOf(
  node: string,
  outputs: Record<string, string>,
  config: NodeState['config'],
  pod: Pod | undefined,
  shown: () => { mode: string; source: string } | undefined,
): NodeState['mode'] {
  const mode = (
    value: string,
    from: NodeState['mode']['from'],
    source: string,
    as: (t: string) => Evidence,
  ) => ({ value, from, source, evidence: as(`${node}: ${value} (${source})`) });
  const said = 'proxy-mode' in outputs ? parseProxyMode(outputs['proxy-mode']!) : undefined;
  if (said) {
    // a stale answer is evidence of nothing now: shown, never counted
    if (pod && !(pod.phase === 'Running' && podReady(pod)))
      return {
        ...mode(
          said,
          'proxyMode',
          `/proxyMode on ${node}, answered before kube-proxy stopped running (stale)`,
          unseen,
        ),
        stale: true,
      };
    return mode(said, 'proxyMode', `/proxyMode on ${node}`, (t) =>
      seen(t, { node, source: `nodes/${node}/proxy-mode.txt` }),
    );
  }
  // the configuration names kube-proxy's default mode where it names none (kube-proxy-config.ts)
  const configured = config.value.mode;
  // what kube-proxy serves on /configz is what runs on the node: observed there
  if (config.from === 'configz')
    return mode(configured, 'configz', config.source, (t) =>
      seen(t, { node, source: `nodes/${node}/proxy-configz.txt` }),
    );
  // the rules are observed: where they disagree with the configuration, they say what runs
  const rules = shown();
  if (rules)
    return mode(rules.mode, 'rules', `the rules in ${rules.source}`, (t) =>
      seen(t, { node, source: rules.source }),
    );
  // the configuration kube-proxy reads is read from the API; a mode it does not tell, not known
  const told = config.from !== 'default' && configTells(config.value, 'mode');
  return mode(configured, config.from, config.source, told ? read : unseen);
}

/** kube-proxy's release, best first: its own build info on /metrics, the image tag of its Pod
 * (managed suffixes such as -eksbuild.3 or -gke.1200 kept in the text), the Node's
 * status.nodeInfo.kubeProxyVersion (deprecated, still filled by some kubelets), and on k3s,
 * which runs kube-proxy inside its own process, the kubelet's version. */
function versionOf(
  node: string,
  metrics: string | undefined,
  info: NodeInfo | undefined,
  pod: Pod | undefined,
  embeddedIn: NodeState['embeddedIn'],
): NodeState['version'] {
  const built = /^kubernetes_build_info\{[^}]*git_version="([^"]+)"/m.exec(metrics ?? '')?.[1];
  const fromMetrics = parseVersion(built);
  const image = podImage(pod);
  const fromImage = parseVersion(image?.split('@')[0]?.split(':').pop());
  const imageSource = `the image ${image} of Pod ${pod?.name}`;
  if (fromMetrics) {
    // managed builds spell the patch apart ("-eksbuild.1", "-eks-"): only another minor matters
    const other =
      fromImage && (fromImage.major !== fromMetrics.major || fromImage.minor !== fromMetrics.minor)
        ? `${imageSource} says ${fromImage.text}`
        : undefined;
    return version(
      fromMetrics,
      'metrics',
      `its /metrics`,
      (t) => seen(t, { node, source: `nodes/${node}/proxy-metrics.txt` }),
      other,
    );
  }
  if (fromImage) return version(fromImage, 'image', imageSource, read);
  const fromNode = parseVersion(info?.kubeProxyVersion);
  if (fromNode)
    return version(fromNode, 'nodeInfo', `Node ${node}'s status.nodeInfo.kubeProxyVersion`, read);
  const embedded = embeddedIn ? parseVersion(info?.kubeletVersion) : undefined;
  if (embedded)
    return version(
      embedded,
      'embedded',
      `the kubelet version ${info!.kubeletVersion} of Node ${node} (${embeddedIn} runs kube-proxy inside its own process)`,
      read,
    );
  return undefined;

  function version(
    v: Version,
    from: NonNullable<NodeState['version']>['from'],
    source: string,
    as: (t: string) => Evidence,
    disagrees?: string,
  ) {
    const also = disagrees ? ` (${disagrees}: the process answering is not the Pod's image)` : '';
    return {
      value: v,
      from,
      source,
      evidence: as(`kube-proxy ${v.text} on ${node}, from ${source}${also}`),
      ...(disagrees ? { disagrees } : {}),
    };
  }
}

interface NodeInfo {
  kubeProxyVersion?: string;
  kubeletVersion?: string;
}

/** The Node's status.nodeInfo versions. */
function nodeInfoOf(node: Node | undefined): NodeInfo | undefined {
  return (node?.raw as { status?: { nodeInfo?: NodeInfo } } | undefined)?.status?.nodeInfo;
}

/** The image of the Pod's kube-proxy container: the one of that name (RKE2 runs it from
 * rancher/hardened-kubernetes), else the one whose image names kube-proxy. */
function podImage(pod: Pod | undefined): string | undefined {
  const spec = pod?.raw['spec'] as { containers?: { name?: string; image?: string }[] } | undefined;
  const containers = spec?.containers ?? [];
  return (
    containers.find((c) => c.name === 'kube-proxy')?.image ??
    containers.map((c) => c.image ?? '').find((i) => /kube-proxy/.test(i))
  );
}
