// What every diagnostic step reads: the typed cluster view, the target Service, each node's
// parsed rules and recorded probes (parsed once, on first use), and the findings of the steps
// before it, so a step can say "this follows from step 3" instead of failing a second time.
import { seen } from '../findings/evidence.js';
import type { IPFamily } from '../ipv6.js';
import { Analysis } from '../nodes/analysis.js';
import type { DataplaneCode } from '../dataplane/modes.js';
import type { ReadRules, Scope } from '../nodes/node-reads.js';
import { nodeDump } from '../facts/facts.js';
import type { ApiRead } from '../facts/not-read.js';
import { notCaptured, readFailed, type CapturedKind } from '../facts/captured.js';
import type { Invocation } from '../findings/next-command.js';
import { recordedChoice, type NodeChoice } from '../nodes/choice.js';
import {
  isWindows,
  selectorMatches,
  servicePortName,
  slicesOf,
  type ClusterView,
  type EndpointSlice,
  type KubeProxyConfig,
  type Pod,
  type Service,
  type ServicePort,
  findService,
} from '../kube/objects.js';
import type { Evidence, Facts } from '../model.js';
import type { Cause } from './check.js';
import { narrowed } from '../kube/service-ref.js';
import { parseProbe, type ProbeResult } from '../nodes/outputs.js';
import type { ServiceTrees } from '../dataplane/trees.js';
import { canonicalEndpoint, replacesCopy } from '../dataplane/kube-proxy/endpoints.js';
import { nodeEndpoints, type NodeEndpoints } from '../dataplane/kube-proxy/endpoint-source.js';
import { probeStem, type NodeProbe } from './reachability/probes.js';

/** The Service a diagnosis is about (the JSON keeps calling it "target"). */
export interface DiagnosedService {
  namespace: string;
  service: string;
  /** `NAME:PORT`: the one port (number or name) diagnosed; the others are left out. */
  port?: string;
}

/** What the steps read the nodes through: the run's analysis of these facts (dumps parsed once,
 * shared with the command and the TUI), or the code of the modes the run loaded, for a new one. */
export type AnalysisGiven = { analysis: Analysis } | { code: DataplaneCode };

export type DiagnoseOptions = DiagnoseSettings & AnalysisGiven;

interface DiagnoseSettings {
  /**
   * Facts still arriving (live runs): a step whose input is missing is pending rather than
   * skipped. `objects`: the API reads are not done; `nodes`: the node commands are not done.
   */
  collecting?: { objects?: boolean; nodes?: boolean };
  /** Services with a similar name, when the API said the target does not exist (live 404). */
  suggestions?: { namespace: string; name: string }[];
  /** How the person ran kdebug: the "next" commands carry the same snapshot and context. */
  invocation?: Invocation;
  /** The client whose connection fails, as the person named it (--from pod/NAME, node/NAME). */
  client?: { kind: 'pod' | 'node'; namespace?: string; name: string };
}

/** One endpoint of one Service port, as the EndpointSlices say, with the Pod behind it. */
export interface PortEndpoint {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  nodeName?: string;
  /** The endpoint's hostname (StatefulSet Pods, hostname + subdomain). */
  hostname?: string;
  podName?: string;
  pod?: Pod;
  slice: string;
}

/** A node's rules of one family that the Rules step compared for the Service and passed as
 * expected, and the Service's cluster IP of that family they hold. */
export interface RulesMatched {
  node: string;
  family: IPFamily;
  clusterIP: string;
}

/** An endpoint copy as the steps see it, from no node: none is local. */
const anyNode = (x: { ready: boolean }) => ({ local: false, ready: x.ready });

export class CheckContext {
  /** The node dataplanes, parsed and analysed once for all the steps. */
  readonly analysis: Analysis;
  readonly view: ClusterView;
  /** What the analysis is asked about: the diagnosed Service. */
  readonly scope: Scope;
  readonly service: Service | undefined;
  /** Fail and warn findings of the steps already run, in order, with their step. */
  readonly earlier: Cause[] = [];
  /** Each node's rules of each family that the Rules step passed as expected for the Service
   * (checks/rules/compared.ts): what a later step's explanation may rule out as a cause. */
  readonly rulesMatched: RulesMatched[] = [];

  constructor(
    readonly facts: Facts,
    readonly target: DiagnosedService,
    readonly options: DiagnoseOptions,
  ) {
    this.analysis =
      'analysis' in options ? options.analysis : new Analysis(facts, { code: options.code });
    if (this.analysis.facts !== facts) throw new Error('the analysis given is of other facts');
    this.view = this.analysis.view;
    this.service = narrowed(findService(this.view, target.namespace, target.service), target.port);
    this.scope = this.service && [this.service];
    this.choice = recordedChoice(facts.meta);
  }

  /** Is this input still being collected (so its absence means "not yet", not "never")? */
  waiting(input: 'objects' | 'nodes'): boolean {
    return this.options.collecting?.[input] === true;
  }

  /** The first earlier fail/warn finding with one of these ids: the cause of what follows. */
  causedBy(...ids: string[]): Cause | undefined {
    return this.earlier.find((c) => ids.includes(c.finding.id));
  }

  /** kube-proxy's configuration cluster-wide (the analysis decides it: nodes/state.ts); a
   * ConfigMap that cannot be read falls back to the defaults, with the error. */
  kubeProxyConfig(): { config: KubeProxyConfig; error?: string } {
    const { value, error } = this.analysis.config(this.nodeNames());
    return { config: value, ...(error ? { error } : {}) };
  }

  /** "the read of X failed: why" for a read of the live run that failed (RBAC, say), if one did:
   * the first whose ApiRead `of` accepts. */
  readError(of: (read: ApiRead) => boolean): string | undefined {
    return readFailed(this.facts, of);
  }

  /** Why the objects of a kind were not captured (facts/captured.ts), or undefined when they
   * were: "no Pods" then means none exist. */
  notCaptured(kind: CapturedKind): string | undefined {
    return notCaptured(this.facts, this.view, kind);
  }

  /** Why the EndpointSlices of `svc` were not captured (the read of them, or of every slice of its
   * namespace, failed), or undefined: then "no EndpointSlice" means the controller wrote none. */
  slicesNotCaptured(svc: Pick<Service, 'namespace' | 'name'>): string | undefined {
    // its own slices, or every slice of its namespace or of the cluster
    const { namespace: ns, name } = svc;
    return this.readError(
      (r) =>
        r.resource === 'endpointslices' &&
        (r.service === `${ns}/${name}` ||
          (r.service === undefined && (r.namespace === undefined || r.namespace === ns))),
    );
  }

  /** Pods of the Service's namespace its selector matches (none without a selector). */
  selectedPods(): Pod[] {
    const svc = this.service;
    if (!svc?.selector) return [];
    return this.view.pods.filter(
      (p) => p.namespace === svc.namespace && selectorMatches(svc.selector!, p.labels),
    );
  }

  slices(): EndpointSlice[] {
    return this.service ? slicesOf(this.view, this.service) : [];
  }

  /** The client Pod the person named (--from pod/NAME, in the Service's namespace unless given),
   * where it was read. */
  clientPod(): Pod | undefined {
    const c = this.options.client;
    if (c?.kind !== 'pod' || !this.service) return undefined;
    return this.pod(c.namespace ?? this.service.namespace, c.name);
  }

  pod(namespace: string, name: string): Pod | undefined {
    return this.view.pods.find((p) => p.namespace === namespace && p.name === name);
  }

  /** The endpoints of one port of the target Service. */
  endpoints(port: ServicePort): PortEndpoint[] {
    return this.service ? this.endpointsOf(this.service, port) : [];
  }

  /** The endpoints of one Service port (slice ports matched by name and protocol, as kube-proxy
   * does), from its EndpointSlices or the `slices` given (those a node's kube-proxy reads). */
  endpointsOf(
    svc: Service,
    port: ServicePort,
    slices: EndpointSlice[] = slicesOf(this.view, svc),
  ): PortEndpoint[] {
    const out = new Map<string, PortEndpoint>();
    for (const slice of slices) {
      if (slice.addressType === 'FQDN') continue;
      const sp = slice.ports.find((p) => p.name === port.name && p.protocol === port.protocol);
      if (!sp?.port) continue;
      for (const e of slice.endpoints) {
        // one copy of an endpoint several slices list, the one the Rules step expects
        const raw = e.addresses[0];
        if (!raw) continue;
        // an address kube-proxy cannot read is still listed, as written
        const at = canonicalEndpoint(raw, sp.port, slice.addressType) ?? {
          ip: raw,
          address: `${raw}:${sp.port}`,
        };
        const prev = out.get(at.address);
        if (prev && !replacesCopy(anyNode(prev), anyNode(e.conditions))) continue;
        const ns = e.targetRef?.namespace || svc.namespace;
        const podName =
          e.targetRef?.kind === 'Pod' || !e.targetRef?.kind ? e.targetRef?.name : undefined;
        out.set(at.address, {
          ip: at.ip,
          port: sp.port,
          ...e.conditions,
          nodeName: e.nodeName,
          hostname: e.hostname,
          podName,
          pod: podName ? this.pod(ns, podName) : undefined,
          slice: slice.name,
        });
      }
    }
    return [...out.values()].sort((a, b) => (`${a.ip}:${a.port}` < `${b.ip}:${b.port}` ? -1 : 1));
  }

  /** The endpoints of one port of the target Service on `node`, from the object that node's
   * kube-proxy reads (the legacy Endpoints before 1.19: endpoint-source.ts), as the Rules step
   * expects its rules: every one there, and those its Local policy holds. */
  proxiedEndpoints(port: ServicePort, node: string): NodeEndpoints {
    const svc = this.service;
    if (!svc) return { all: [], local: [] };
    const from = this.analysis.node(node).expected(this.scope).endpointsFrom;
    return nodeEndpoints(this.view, svc, port, node, from);
  }

  /** Every endpoint address of the Service, any port, once. */
  endpointAddresses(): PortEndpoint[] {
    const svc = this.service;
    if (!svc) return [];
    const seen = new Map<string, PortEndpoint>();
    for (const port of svc.ports)
      for (const e of this.endpoints(port)) seen.set(e.ip, seen.get(e.ip) ?? e);
    return [...seen.values()];
  }

  servicePortName(port: ServicePort): string {
    return servicePortName(this.service ?? { namespace: '', name: '' }, port);
  }

  /** Which nodes the capture chose to read (a large cluster: some of them), if it recorded it. */
  readonly choice: NodeChoice | undefined;

  /** The nodes the steps look at, sorted: those the capture read or chose to read, else every
   * Node and every node with recorded outputs. */
  nodeNames(): string[] {
    // the same for every step (the facts do not change under them): sorted once
    this.names ??= [
      ...new Set([
        ...(this.choice
          ? this.choice.chosen.map((c) => c.node)
          : this.view.nodes.map((n) => n.name)),
        ...Object.keys(this.facts.nodes),
      ]),
    ]
      .filter(Boolean)
      .sort();
    return [...this.names];
  }
  private names?: string[];

  /** Linux nodes of the cluster the capture chose not to read (none without a choice). */
  notChosen(): string[] {
    if (!this.choice || this.choice.policy === 'every') return [];
    const names = new Set(this.nodeNames());
    return this.view.nodes
      .filter((n) => !isWindows(n) && !names.has(n.name))
      .map((n) => n.name)
      .sort();
  }

  /** Nodes with a recorded rules dump. */
  nodesWithRules(): string[] {
    return this.nodeNames().filter((n) => nodeDump(this.facts, n));
  }

  /** The node's rules dump as read (node-reads.ts: parsed once per run); undefined when none was
   * recorded. */
  rules(node: string): ReadRules | undefined {
    return this.analysis.node(node).rules();
  }

  /** The Service's trees in the node's rules, where its rules dump was recorded. */
  trees(node: string): ServiceTrees | undefined {
    return this.rules(node) && this.analysis.node(node).trees(this.scope);
  }

  /** A chain's rules as evidence seen on the node: "nodes/n/iptables-save.txt:42: -A KUBE-SEP-...". */
  chainEvidence(node: string, table: string, chain: string, family: IPFamily = 'IPv4'): Evidence[] {
    const read = this.analysis.node(node, undefined, family).rules();
    const t = read?.ruleset?.table(table);
    const c = t?.chain(chain);
    if (!read || !t || !c) return [];
    const source = t.file ?? read.source;
    return c.ruleIds.map((id) =>
      seen(`${source}:${t.line(id)}: ${t.text(id)}`, { node, source, line: t.line(id) }),
    );
  }

  /** One rule line of a node's dump as evidence, found by its line number. */
  lineEvidence(node: string, table: string, line: number): Evidence | undefined {
    const r = this.rules(node);
    const t = r?.ruleset?.table(table);
    const id = t ? t.ruleAtLine(line) : -1;
    const source = t?.file ?? r?.source;
    return r && t && id >= 0
      ? seen(`${source}:${line}: ${t.text(id)}`, { node, source: source!, line })
      : undefined;
  }

  /** A recorded probe's outcome on a node, if that probe was run there. */
  probe(node: string, probe: NodeProbe): ProbeResult | undefined {
    const stdout = this.facts.nodes[node]?.[probeStem(probe)];
    return stdout === undefined ? undefined : parseProbe(probe.kind, stdout);
  }

  /** The raw stdout of a node command, by its stem ("proxy-mode", "ip-addr" ...). */
  output(node: string, stem: string): string | undefined {
    return this.facts.nodes[node]?.[stem];
  }
}
