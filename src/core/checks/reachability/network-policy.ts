// NetworkPolicies that select the Service's Pods for ingress (the Debug Services page asks about
// them first): with one in place, only the sources its rules allow can connect, and everyone
// else's packets are dropped silently, which looks like a timeout, never like a refusal. Each
// policy is read as the API server defines it (networking/v1): its podSelector (matchLabels and
// matchExpressions), then, for the Service's port, which sources its ingress rules admit, said
// as a finding (a warning where they admit nothing, or not the client asked about).
import { read, unseen } from '../../findings/evidence.js';
import { contains } from '../../ipv4.js';
import type { Pod, ServicePort } from '../../kube/objects.js';
import type { Finding, KubeObject } from '../../model.js';
import { kubectl, valid } from '../../findings/next-command.js';
import { count, findingOf, labelText, list, listFew } from '../check.js';
import type { CheckContext } from '../context.js';

const finding = findingOf('reachability');

type J = Record<string, unknown>;
const obj = (v: unknown): J => (v !== null && typeof v === 'object' ? (v as J) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** What a policy admits to one Service port: nothing, some sources (said), or every source. */
export type Admits = { kind: 'nothing' } | { kind: 'some'; sources: string[] } | { kind: 'all' };

export interface AppliedPolicy {
  name: string;
  /** What it admits to the Service's target port, on the Pods it selects. */
  admits: Admits;
  /** The Service's Pods it selects, by name: a policy applies to each Pod it selects alone. */
  pods: string[];
  /** Whether it admits the client the person named (--from pod/NAME) to that port: true, false,
   * or why it cannot be told. */
  client?: boolean | { unknown: string };
  /** The policy's own lines that say so ("ingress[0].from[0]: podSelector app=web"). */
  lines: string[];
  /** A rule of it names the Service's port where the Pods serve another: it admits nothing there. */
  namesServicePort: boolean;
}

/** A LabelSelector as the API server evaluates it; an empty one selects everything. */
function labelSelectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  const sel = obj(selector);
  const byLabel = Object.entries(obj(sel['matchLabels'])).every(([k, v]) => labels[k] === v);
  return (
    byLabel &&
    arr(sel['matchExpressions']).every((raw) => {
      const e = obj(raw);
      const key = String(e['key'] ?? '');
      const values = arr(e['values']).map(String);
      const has = Object.hasOwn(labels, key);
      switch (e['operator']) {
        case 'In':
          return has && values.includes(labels[key]!);
        case 'NotIn':
          return !has || !values.includes(labels[key]!);
        case 'Exists':
          return has;
        case 'DoesNotExist':
          return !has;
        default:
          return false; // an operator the API server would have refused
      }
    })
  );
}

/** A selector as a person reads it: "app=web, tier in (a,b)", or "every Pod" when empty. */
function selectorText(selector: unknown, all: string): string {
  const sel = obj(selector);
  const parts = [
    ...Object.entries(obj(sel['matchLabels'])).map(([k, v]) => `${k}=${String(v)}`),
    ...arr(sel['matchExpressions']).map((raw) => {
      const e = obj(raw);
      const values = arr(e['values']).map(String).join(',');
      return `${String(e['key'])} ${String(e['operator'])}${values ? ` (${values})` : ''}`;
    }),
  ];
  return parts.length > 0 ? parts.join(', ') : all;
}

/** Whether a policy restricts ingress: without policyTypes, every policy does. */
function ingress(spec: J): boolean {
  const types = spec['policyTypes'];
  return Array.isArray(types) ? types.includes('Ingress') : true;
}

/** The ports the Pods serve the Service port on, by number and by the name their container gives
 * it: a policy may name either, whatever the Service's targetPort says. */
function targetPorts(port: ServicePort, pods: Pod[]): { number: number; name?: string }[] {
  const tp = port.targetPort;
  const declared = pods
    .flatMap((p) => p.containers.flatMap((c) => c.ports))
    .filter((c) => c.protocol === port.protocol && (c.name === tp || c.containerPort === tp))
    .map((c) => ({ number: c.containerPort, ...(c.name ? { name: c.name } : {}) }));
  return typeof tp === 'number' ? [{ number: tp }, ...declared] : declared;
}

/** Whether one rule's `ports` admit the target port (empty: every port). */
function portAdmitted(
  ports: unknown[],
  protocol: string,
  target: { number: number; name?: string }[],
) {
  if (ports.length === 0) return true;
  return ports.some((raw) => {
    const p = obj(raw);
    if (String(p['protocol'] ?? 'TCP') !== protocol) return false;
    const at = p['port'];
    if (at === undefined) return true; // every port of that protocol
    if (typeof at === 'string') return target.some((t) => t.name === at);
    if (typeof at !== 'number') return false;
    const end = typeof p['endPort'] === 'number' ? p['endPort'] : at;
    return target.some((t) => t.number >= at && t.number <= end);
  });
}

/** A `from` peer as a person reads it. */
function peerText(raw: unknown, namespace: string): string {
  const peer = obj(raw);
  const block = obj(peer['ipBlock']);
  if (block['cidr'])
    return `addresses ${String(block['cidr'])}${arr(block['except']).length > 0 ? ` except ${arr(block['except']).join(', ')}` : ''}`;
  const pods =
    peer['podSelector'] !== undefined ? selectorText(peer['podSelector'], 'every Pod') : undefined;
  const nss =
    peer['namespaceSelector'] !== undefined
      ? selectorText(peer['namespaceSelector'], 'every namespace')
      : undefined;
  if (nss !== undefined)
    return `${pods ?? 'every Pod'} in namespaces ${nss === 'every namespace' ? '(all)' : nss}`;
  return `Pods ${pods ?? '(all)'} in namespace ${namespace}`;
}

/** The Pods' port as a person reads it: "8080", "8080 (http)". */
function portsOnPods(target: { number: number; name?: string }[]): string {
  const names = new Map<number, string | undefined>();
  for (const t of target) names.set(t.number, names.get(t.number) ?? t.name);
  const said = [...names].map(([n, name]) => (name ? `${n} (${name})` : String(n)));
  return said.join(', ') || 'not known';
}

/** What one policy admits to the port, with its own lines. */
function admitted(
  spec: J,
  namespace: string,
  port: ServicePort,
  target: { number: number; name?: string }[],
): { admits: Admits; lines: string[]; namesServicePort: boolean } {
  const protocol = port.protocol;
  const rules = arr(spec['ingress']);
  const lines: string[] = [];
  const sources: string[] = [];
  let namesServicePort = false;
  if (rules.length === 0) lines.push('ingress: none (every connection to the Pods is dropped)');
  let all = false;
  rules.forEach((raw, i) => {
    const rule = obj(raw);
    const ports = arr(rule['ports']);
    const portsText =
      ports.length === 0
        ? 'every port'
        : ports
            .map(
              (p) =>
                `${String(obj(p)['protocol'] ?? 'TCP')}/${String(obj(p)['port'] ?? '*')}${obj(p)['endPort'] ? `-${String(obj(p)['endPort'])}` : ''}`,
            )
            .join(', ');
    const from = arr(rule['from']);
    const admits = portAdmitted(ports, protocol, target);
    // a policy matches the port on the Pod: the Service's own port number admits nothing
    const servicePortNamed =
      !admits && portAdmitted(ports, protocol, [{ number: port.port }]) && port.port > 0;
    if (servicePortNamed) namesServicePort = true;
    const why = admits
      ? ''
      : servicePortNamed
        ? ` (the Service's port: a policy matches the Pods' port, ${portsOnPods(target)})`
        : ` (not the Pods' port, ${portsOnPods(target)})`;
    lines.push(
      `ingress[${i}]: ${portsText} from ${from.length === 0 ? 'every source' : from.map((f) => peerText(f, namespace)).join('; ')}${why}`,
    );
    if (!admits) return;
    if (from.length === 0) all = true;
    else sources.push(...from.map((f) => peerText(f, namespace)));
  });
  const admits: Admits = all
    ? { kind: 'all' }
    : sources.length > 0
      ? { kind: 'some', sources }
      : { kind: 'nothing' };
  return { admits, lines, namesServicePort };
}

/** The label every namespace carries with its own name (Kubernetes 1.21+): the only namespace
 * label known without reading the Namespace. */
const NAMESPACE_NAME = 'kubernetes.io/metadata.name';

/** Whether a namespaceSelector selects `namespace`, told from its name alone, or why not. */
function namespaceSelected(selector: unknown, namespace: string): boolean | { unknown: string } {
  const sel = obj(selector);
  const keys = [
    ...Object.keys(obj(sel['matchLabels'])),
    ...arr(sel['matchExpressions']).map((e) => String(obj(e)['key'] ?? '')),
  ];
  if (keys.some((k) => k !== NAMESPACE_NAME))
    return {
      unknown: `it selects namespaces by labels kdebug did not read (${selectorText(selector, '')})`,
    };
  return labelSelectorMatches(selector, { [NAMESPACE_NAME]: namespace });
}

/** Whether one `from` peer of a policy in `namespace` is the client Pod, or why it cannot be told. */
function peerIs(raw: unknown, namespace: string, client: Pod): boolean | { unknown: string } {
  const peer = obj(raw);
  const block = obj(peer['ipBlock']);
  if (block['cidr'] !== undefined) {
    const cidr = String(block['cidr']);
    const ips = client.podIPs.length > 0 ? client.podIPs : client.podIP ? [client.podIP] : [];
    const v4 = ips.filter((ip) => !ip.includes(':'));
    if (cidr.includes(':') || v4.length === 0)
      return { unknown: 'an ipBlock kdebug does not compare (IPv6, or a Pod without an IP)' };
    const inBlock = v4.some(
      (ip) => contains(cidr, ip) && !arr(block['except']).some((x) => contains(String(x), ip)),
    );
    // the API leaves ipBlock for Pod addresses to the network plugin (Cilium ignores it there)
    return inBlock
      ? {
          unknown: `its ipBlock ${cidr} holds the Pod's address, which network plugins treat differently`,
        }
      : false;
  }
  // a hostNetwork Pod's packets come from its node's address: selectors match it as the plugin does
  if (client.hostNetwork)
    return {
      unknown: "the client runs on its node's network, which network plugins treat differently",
    };
  // the Pod selector and the namespace selector of one peer must both hold
  if (
    peer['podSelector'] !== undefined &&
    !labelSelectorMatches(peer['podSelector'], client.labels)
  )
    return false;
  return peer['namespaceSelector'] === undefined
    ? client.namespace === namespace
    : namespaceSelected(peer['namespaceSelector'], client.namespace);
}

/** Whether one policy admits the client Pod to the port: some rule for the port whose peers
 * include it (no peers: everyone). */
function admitsClient(
  spec: J,
  namespace: string,
  protocol: string,
  target: { number: number; name?: string }[],
  client: Pod,
): boolean | { unknown: string } {
  let unknown: { unknown: string } | undefined;
  for (const raw of arr(spec['ingress'])) {
    const rule = obj(raw);
    if (!portAdmitted(arr(rule['ports']), protocol, target)) continue;
    const from = arr(rule['from']);
    if (from.length === 0) return true;
    for (const peer of from) {
      const is = peerIs(peer, namespace, client);
      if (is === true) return true;
      if (is !== false) unknown ??= is;
    }
  }
  return unknown ?? false;
}

/** The ingress NetworkPolicies of the Service's namespace that select any of its Pods, each with
 * what it admits to `port`. */
export function policiesFor(ctx: CheckContext, port: ServicePort, client?: Pod): AppliedPolicy[] {
  const svc = ctx.service;
  const pods = ctx.selectedPods();
  if (!svc || pods.length === 0) return [];
  const target = targetPorts(port, pods);
  return ctx.view.networkPolicies
    .filter((p: KubeObject) => (p.metadata?.namespace ?? 'default') === svc.namespace)
    .flatMap((p) => {
      const spec = obj(p['spec']);
      if (
        !ingress(spec) ||
        !pods.some((pod) => labelSelectorMatches(spec['podSelector'], pod.labels))
      )
        return [];
      const { admits, lines, namesServicePort } = admitted(spec, svc.namespace, port, target);
      const name = p.metadata?.name ?? '';
      return [
        {
          name,
          admits,
          namesServicePort,
          pods: pods
            .filter((pod) => labelSelectorMatches(spec['podSelector'], pod.labels))
            .map((pod) => pod.name),
          ...(client
            ? { client: admitsClient(spec, svc.namespace, port.protocol, target, client) }
            : {}),
          lines: [
            `podSelector: ${selectorText(spec['podSelector'], 'every Pod in the namespace')}`,
            ...lines,
          ].map((l) => `NetworkPolicy ${svc.namespace}/${name}: ${l}`),
        },
      ];
    });
}

/** Whether the client may reach the Service's Pods: each Pod on its own, by the policies that
 * select it (they add up; a Pod none selects takes everyone). Refused where any Pod refuses it. */
export type ClientVerdict =
  { admitted: true } | { refusedBy: string[]; of: number } | { unknown: string };

function clientAdmitted(policies: AppliedPolicy[], pods: Pod[]): ClientVerdict {
  const refusedBy: string[] = [];
  let unknown: string | undefined;
  for (const pod of pods) {
    const on = policies.filter((p) => p.pods.includes(pod.name));
    if (on.length === 0 || on.some((p) => p.client === true)) continue;
    const why = on.find((p) => typeof p.client === 'object')?.client;
    if (typeof why === 'object') unknown ??= why.unknown;
    else refusedBy.push(pod.name);
  }
  if (refusedBy.length > 0) return { refusedBy, of: pods.length };
  return unknown !== undefined ? { unknown } : { admitted: true };
}

/** What the policies admit together (they add up): every source, some, or none. */
export function together(policies: AppliedPolicy[]): Admits {
  if (policies.some((p) => p.admits.kind === 'all')) return { kind: 'all' };
  const sources = policies.flatMap((p) => (p.admits.kind === 'some' ? p.admits.sources : []));
  return sources.length > 0
    ? { kind: 'some', sources: [...new Set(sources)] }
    : { kind: 'nothing' };
}

/** The NetworkPolicies that select the Service's Pods, evaluated for its port: which sources they
 * admit together. None is a warning: every client's connection times out. */
export function networkPolicies(ctx: CheckContext, port: ServicePort): Finding[] {
  const svc = ctx.service!;
  const client = ctx.clientPod();
  const policies = policiesFor(ctx, port, client);
  if (policies.length === 0) return [];
  const admits = together(policies);
  // "NetworkPolicy a admits", "NetworkPolicies a and b admit": the policies judged together
  const one = policies.length === 1;
  const names = `${one ? 'NetworkPolicy' : 'NetworkPolicies'} ${list(policies.map((p) => p.name))}`;
  const admit = one ? 'admits' : 'admit';
  const what = `${port.port}/${port.protocol}`;
  const blind =
    "kdebug's probes come from the nodes, which NetworkPolicy may treat apart from Pods (that depends on the network plugin): they prove nothing about what a client Pod is allowed.";
  // the client the person named: where the policies leave it out, that is their answer
  const asked = ctx.options.client?.kind === 'pod' ? ctx.options.client : undefined;
  const named = asked && `Pod ${asked.namespace ?? svc.namespace}/${asked.name}`;
  const verdict = client ? clientAdmitted(policies, ctx.selectedPods()) : undefined;
  const refused =
    admits.kind !== 'nothing' && verdict && 'refusedBy' in verdict ? verdict : undefined;
  const where = refused
    ? refused.refusedBy.length === refused.of
      ? ''
      : ` on ${count(refused.refusedBy.length, 'Pod')} of ${refused.of} (${listFew(refused.refusedBy, 3)})`
    : '';
  const title =
    admits.kind === 'nothing'
      ? `${names} ${admit} no connection to ${what}: every client times out`
      : refused
        ? `${names} ${one ? 'does' : 'do'} not admit ${named} (--from) to ${what}${where}: its connections ${where ? 'there ' : ''}time out`
        : admits.kind === 'all'
          ? `${names} ${admit} every source to ${what}`
          : `${names} ${admit} only ${list(admits.sources)} to ${what}`;
  const labels = client && (labelText(client.labels) || 'none');
  const forClient = !named
    ? 'Check that the client is one of them.'
    : !client
      ? `${named} (--from) was not read, so kdebug cannot tell whether it is one of them.`
      : verdict && 'unknown' in verdict
        ? `Whether ${named} (--from) is one of them kdebug cannot tell: ${verdict.unknown}.`
        : `${named} (--from) is one of them.`;
  const explanation =
    admits.kind === 'nothing'
      ? policies.some((p) => p.namesServicePort)
        ? `${policies.length === 1 ? 'This NetworkPolicy selects' : 'These NetworkPolicies select'} the Service's Pods for ingress, and a rule names ${port.port}, the Service's port; a NetworkPolicy matches the port on the Pod after the Service's DNAT (${portsOnPods(targetPorts(port, ctx.selectedPods()))}), so no rule admits ${what}: connections to the Service and to the Pods directly are dropped silently, so clients time out. Name the Pods' port (or its name) in the rule.`
        : `${policies.length === 1 ? 'This NetworkPolicy selects' : 'These NetworkPolicies select'} the Service's Pods for ingress and no ingress rule allows ${what}: connections to the Service and to the Pods directly are dropped silently, so clients time out. Add an ingress rule for the clients that need it.`
      : refused
        ? `Each Pod takes only what the policies selecting it admit; ${named} (labels ${labels}, namespace ${client!.namespace}) matches none of the sources they admit to ${what}${where}, so its connections there, through the Service or to the Pods directly, are dropped silently and time out. Add an ingress rule that admits it, or label it as one of the admitted sources.`
        : admits.kind === 'all'
          ? `${policies.length === 1 ? 'This NetworkPolicy selects' : 'These NetworkPolicies select'} the Service's Pods and ${policies.length === 1 ? 'its' : 'their'} rules let any source reach ${what}.`
          : `Only these sources may connect to ${what}, to the Service or to the Pods directly; anyone else's connections are dropped silently and time out. ${forClient}`;
  const warn = admits.kind === 'nothing' || refused !== undefined;
  return [
    finding('network-policy-applies', warn ? 'warn' : 'pass', title, {
      explanation: `${explanation} ${blind}`,
      evidence: [
        ...policies.flatMap((p) =>
          p.lines.map((l) => read(l, `NetworkPolicy ${svc.namespace}/${p.name}`)),
        ),
        ...(client
          ? [read(`${named}: labels ${labels}`, named)]
          : named
            ? [unseen(`${named} (--from) was not read`)]
            : []),
      ],
      next: kubectl(svc.namespace, 'describe', 'networkpolicy', valid.name(policies[0]!.name)),
      service: ctx.servicePortName(port),
      ...(warn ? {} : { info: true }),
    }),
  ];
}
