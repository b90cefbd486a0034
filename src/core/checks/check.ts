// The shape of one diagnostic step, and the small builders its findings are made with.
import type { FindingId, StepFindingId, StepId } from '../findings/finding-ids.js';
import { canonicalAddress, familyOf } from '../ipv6.js';
import type { Service } from '../kube/objects.js';
import { judged, unprovenPass } from '../findings/evidence.js';
import type { Evidence, Finding, Status } from '../model.js';
import { kdebug, kubectl, onNode, valid, w, type NextCommand } from '../findings/next-command.js';
import type { CheckContext } from './context.js';
import { namedFew } from '../nodes/access.js';
import { nodesAsRowsOf, podIPLookupsOf } from '../facts/not-read.js';

/** A step's input is not there yet (live runs): the step shows as pending. */
export interface Pending {
  pending: string;
}

/** Services a step may have nothing to check for: no virtual IP (headless) or no Pods at all. */
export type ServiceKind = 'ExternalName' | 'headless';

export interface Check<S extends StepId = StepId> {
  /** Stable step id: "service", "ports", ... */
  id: S;
  title: string;
  /** What must be read first: the Service (pending while it is read, "needs the Service" without
   * it); `run` is then called only with `ctx.service` set. */
  needs?: 'service'[];
  /** The kinds of Service this step does not apply to, and the skip it says for them. */
  skipFor?: {
    kinds: ServiceKind[];
    id: StepFindingId<S>;
    title: string | ((kind: ServiceKind) => string);
    explanation: string | ((svc: Service) => string);
  };
  run(ctx: CheckContext): Finding[] | Pending;
}

/** The kind of Service a step may skip, if it is one. */
export const serviceKind = (svc: Service): ServiceKind | undefined =>
  svc.type === 'ExternalName' ? 'ExternalName' : svc.headless ? 'headless' : undefined;

/** The skip of a step about kube-proxy's rules, for a Service it writes none for. */
export const noRulesFor = (kind: ServiceKind) =>
  `kube-proxy writes no rules for ${kind === 'ExternalName' ? 'an ExternalName' : 'a headless'} Service`;

export const pending = (why: string): Pending => ({ pending: why });
export const isPending = (r: Finding[] | Pending): r is Pending => !Array.isArray(r);

export interface FindingParts {
  explanation: string;
  evidence?: Evidence[];
  next?: NextCommand;
  advice?: string;
  node?: string;
  /** Several nodes in the same condition (then no node). */
  nodes?: string[];
  service?: string;
  /** An explanation worth reading even when nothing is wrong (shown expanded). */
  info?: boolean;
  /** An explanation text shows in one line unless --verbose. */
  folded?: boolean;
}

/** finding() for one step's checks: the ids it takes are that step's own (and any step's). */
export const findingOf =
  <S extends StepId>(_step: S) =>
  (id: StepFindingId<S>, status: Status, title: string, p: FindingParts): Finding =>
    finding(id, status, title, p);

/**
 * A finding, its status derived from its evidence: a verdict (pass, fail, warn) needs evidence
 * observed on a node or read from the API; one built on computed evidence alone, or on none, is
 * made a skip that says so, whatever the check meant.
 */
export function finding(id: FindingId, status: Status, title: string, p: FindingParts): Finding {
  const evidence = p.evidence ?? [];
  const unproven = judged(status, evidence) !== status;
  const partly =
    status === 'pass' && !p.info && !unproven
      ? unprovenPass(evidence, [...(p.node ? [p.node] : []), ...(p.nodes ?? [])])
      : undefined;
  return {
    id,
    status: unproven || partly ? 'skip' : status,
    // an explanation is no claim: its title stays; its status says it passed nothing
    title:
      unproven && !p.info
        ? `${title} (not observed: no evidence recorded)`
        : partly
          ? `${title} (not observed: ${partly})`
          : title,
    explanation: p.explanation,
    evidence: p.evidence ?? [],
    ...(p.next ? { next: p.next } : {}),
    ...(p.advice ? { advice: p.advice } : {}),
    ...(p.node ? { node: p.node } : {}),
    ...(p.nodes ? { nodes: p.nodes } : {}),
    ...(p.service ? { service: p.service } : {}),
    ...(p.info ? { info: true } : {}),
    ...(p.info && p.folded ? { folded: true } : {}),
  };
}

/** A finding of an earlier step (or of this one) that explains a later failure. */
export interface Cause {
  finding: Finding;
  /** The step it belongs to, by title. */
  step: string;
}

/**
 * A failure or warning that an earlier finding already explains is a warning that points at it,
 * so a report fails once, at the root cause.
 */
export function consequence(f: Finding, cause: Cause | undefined): Finding {
  // a symptom is graded no worse than a warning, and points at its cause whatever its grade
  if (!cause || (f.status !== 'fail' && f.status !== 'warn')) return f;
  return {
    ...f,
    status: 'warn',
    explanation: `${f.explanation} This follows from ${cause.finding.id} (${cause.step}): fix that first.`,
  };
}

/** The Service as the object its read evidence names. */
export const serviceRef = (svc: Service) => `Service ${svc.namespace}/${svc.name}`;

/** `kubectl get endpointslices` of the Service, in that output format. */
export const endpointSlicesOf = (svc: Service, output?: 'wide' | 'yaml') =>
  kubectl(
    svc.namespace,
    'get',
    'endpointslices',
    '-l',
    w`kubernetes.io/service-name=${valid.name(svc.name)}`,
    ...(output ? ['-o', output] : []),
  );

/** `kubectl get pods` of the Service's selector, wide (their nodes and IPs). */
export const podsOf = (svc: Service) =>
  kubectl(svc.namespace, 'get', 'pods', '-l', valid.selector(svc.selector), '-o', 'wide');

/** `kubectl get pods` in every namespace whose (first) address is `ip`. */
export const podsWithAddress = (ip: string) =>
  kubectl(
    undefined,
    'get',
    'pods',
    '-A',
    '-o',
    'wide',
    '--field-selector',
    w`status.podIP=${valid.ip(ip)}`,
  );

/** Whether a Pod or node holds an endpoint address that names no Pod (a hand-made EndpointSlice,
 * a selector-less Service): 'held', 'none', or why it is not known. The Pods read otherwise are
 * only those the Service names, so 'none' needs every Pod (meta.everyPodRead) or the run's lookup
 * by address (meta.podIPLookups). */
export function addressHolder(
  ctx: CheckContext,
  ip: string,
): 'held' | 'none' | { unknown: string } {
  const a = canonicalAddress(ip);
  if (
    ctx.view.pods.some((p) => p.podIPs.some((x) => canonicalAddress(x) === a)) ||
    ctx.view.nodes.some((n) => n.ips.some((x) => canonicalAddress(x) === a))
  )
    return 'held';
  const nodes = ctx.notCaptured('Node');
  if (nodes) return { unknown: nodes };
  const rows = nodesAsRowsOf(ctx.facts);
  if (rows.length > 0)
    return {
      unknown: `${rows.length} Node${rows.length === 1 ? ' was' : 's were'} listed as rows only, which show a node's first InternalIP and ExternalIP, not its other addresses (--all-nodes reads every Node whole)`,
    };
  if (ctx.facts.meta['everyPodRead'] === true && !ctx.notCaptured('Pod')) return 'none';
  if (!podIPLookupsOf(ctx.facts).some((x) => canonicalAddress(x) === a)) {
    const refused = ctx.readError((r) => r.podIP !== undefined && canonicalAddress(r.podIP) === a);
    return { unknown: refused ?? 'the run did not look up the Pods by that address' };
  }
  // the lookup sees a Pod's first address only: on a dual-stack cluster, the other family's
  // addresses are out of its sight
  const family = familyOf(a);
  const firsts = new Set([
    ...ctx.view.nodes.flatMap((n) => (n.podCIDRs.length > 1 ? [familyOf(n.podCIDRs[0]!)] : [])),
    ...ctx.view.pods.flatMap((p) => (p.podIPs.length > 1 ? [familyOf(p.podIPs[0]!)] : [])),
  ]);
  // a Service of both families says the cluster is dual-stack, not which family Pods have first
  const dual = ctx.view.services.some((s) => new Set(s.clusterIPs.map(familyOf)).size > 1);
  if ([...firsts].some((f) => f !== family) || (dual && firsts.size === 0))
    return {
      unknown: `a lookup by address sees a Pod's first address only, and this cluster's Pods have an ${family === 'IPv6' ? 'IPv4' : 'IPv6'} one first`,
    };
  return 'none';
}

/** An endpoint address no Pod and no node has, as the run's lookup by address shows. */
export const noPodHas = (ctx: CheckContext, ip: string) => addressHolder(ctx, ip) === 'none';

/** The node access this run did not try, to read the node another way. */
export function otherWay(ctx: CheckContext, svc: Service): Pick<Finding, 'next' | 'advice'> {
  const { via: tried, yes } = ctx.options.invocation ?? {};
  // without --via the kube-proxy Pod was tried first, then a debug Pod where --yes allowed it,
  // then SSH where a key was there to offer: the ways that need a flag are the ones to suggest
  const ways = tried
    ? ['pod', 'ssh', 'kube-proxy'].filter((v) => v !== tried)
    : [...(yes ? [] : ['pod']), 'ssh'];
  return {
    advice: `Read it another way: ${ways.map((v) => `--via ${v}${v === 'pod' ? ' --yes' : ''}`).join(' or ')}.`,
    next: kdebug(
      [
        'svc',
        valid.name(svc.name),
        '-n',
        valid.namespace(svc.namespace),
        '--via',
        ways[0]!,
        ...(ways[0] === 'pod' ? ['--yes'] : []),
      ],
      { live: true },
    ),
  };
}

/** A node command whose output is saved where a snapshot keeps it (nodes/NODE/STEM.txt). */
export const saveNodeOutput = (node: string, argv: string[], stem: string) =>
  onNode(node, argv, { saveTo: `nodes/${node}/${stem}.txt`, hostBinaries: true });

/** "1 Pod", "2 Pods". */
/** "IPv6: " or, for a dual-stack Service, "IPv4: ": what starts a finding of one family. */
export const familyLabel = (svc: { clusterIPs: string[] }, family: 'IPv4' | 'IPv6') =>
  family === 'IPv6' ? 'IPv6: ' : svc.clusterIPs.some((ip) => ip.includes(':')) ? 'IPv4: ' : '';

export const count = (n: number, word: string, plural = `${word}s`) =>
  `${n} ${n === 1 ? word : plural}`;

/** "a, b and c" (or "a, b or c"). */
export function list(items: string[], conjunction = 'and'): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

/** "a, b and c", or past `few` names "a, b, c and 4,993 more": a sentence that stays short. */
export const listFew = (items: string[], few = 10): string =>
  items.length <= few ? list(items) : namedFew(items, few);

/** "app=nginx,tier=web" */
export const labelText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** Nodes in the same condition past a few are one finding, so a step's findings do not grow with
 * the cluster: the per-node findings of one id fold into the first's, its title from the nodes,
 * every node in `nodes` and every node's evidence (text shows the first few). */
export function foldNodes(
  findings: Finding[],
  title: (nodes: string[]) => string,
  /** What to run for them all, where the first node's command speaks for it alone. */
  next?: NextCommand,
  few = FEW_NODES,
): Finding[] {
  if (findings.length <= few) return findings;
  // a pass is never folded with a warning: one fold per status
  const statuses = [...new Set(findings.map((f) => f.status))];
  if (statuses.length > 1)
    return statuses.flatMap((s) =>
      foldNodes(
        findings.filter((f) => f.status === s),
        title,
        next,
        few,
      ),
    );
  const [first, ...rest] = findings as [Finding, ...Finding[]];
  const nodes = findings.flatMap((f) => (f.node ? [f.node] : []));
  const { node: _one, ...shared } = first;
  return [
    {
      ...shared,
      title: title(nodes),
      explanation: `The same on ${nodes.length} nodes, each with its own numbers in the evidence. On ${first.node}, for one: ${first.explanation}`,
      evidence: [...first.evidence, ...rest.flatMap((f) => f.evidence)],
      ...(next ? { next } : {}),
      nodes,
    },
  ];
}

/** Per-node findings of one kind up to this many stay one a node. */
export const FEW_NODES = 3;
