// Policy Cluster: any node forwards to any ready endpoint, as each node's rules show; a node the
// Rules step found wrong is said as that step's consequence.
import { rulesCompared } from '../rules/compared.js';
import { read, stateSeen, unseen } from '../../findings/evidence.js';
import type { Service } from '../../kube/objects.js';
import type { FindingId } from '../../findings/finding-ids.js';
import type { Evidence, Finding } from '../../model.js';
import {
  type Cause,
  consequence,
  count,
  findingOf,
  foldNodes,
  list,
  listFew,
  serviceRef,
} from '../check.js';
import type { CheckContext } from '../context.js';
import { type DriftId, NOT_FORWARDED } from '../../dataplane/drift.js';
import { namedFew } from '../../nodes/access.js';
import { proxiesOf, wouldOn } from './who.js';

const finding = findingOf('traffic-policy');

/** Whether the Service takes traffic from outside the cluster: node ports, external IPs. */
export const externallyAccessible = (svc: Service) =>
  svc.type === 'NodePort' ||
  svc.type === 'LoadBalancer' ||
  svc.externalIPs.length > 0 ||
  svc.ports.some((p) => p.nodePort);

/** Whether a Rules-step finding says the node does not send the Service's traffic to its ready
 * endpoints: a drift id NOT_FORWARDED marks (whatever the step made its status, a consequence's
 * warn included). */
const notForwarding = (id: FindingId): boolean =>
  Object.hasOwn(NOT_FORWARDED, id) && NOT_FORWARDED[id as DriftId];

/** The Rules step's finding that the node does not forward the Service's traffic, if it said one. */
const notForwardedOn = (ctx: CheckContext, node: string): Cause | undefined =>
  ctx.earlier.find(
    (c) =>
      c.step === 'Rules' &&
      notForwarding(c.finding.id) &&
      (c.finding.node === node || c.finding.nodes?.includes(node) === true),
  );

/** Policy Cluster: what every node does is what each node's rules show. A node whose rules were
 * read and not found wrong passes with them; one the Rules step found wrong does not (that step
 * holds the fault); one whose rules it did not compare is what its proxy would do, not observed. */
export function cluster(ctx: CheckContext, svc: Service): Finding[] {
  const ext = externallyAccessible(svc);
  // what a node does under the policy, as a verb said of one node and of several
  const [does, doAll] = ext
    ? [
        'accepts the node port and forwards to any ready endpoint, on any node',
        'accept the node port and forward to any ready endpoint, on any node',
      ]
    : [
        'sends the ClusterIP traffic to any ready endpoint, on any node',
        'send the ClusterIP traffic to any ready endpoint, on any node',
      ];
  const why = ext
    ? " The connection is masqueraded on the way, so the Pod sees the node's address instead of the client's. externalTrafficPolicy: Local keeps the client IP, at the cost of dropping traffic on nodes without a local Pod."
    : '';
  const spec = [
    ...(ext ? [`spec.externalTrafficPolicy: ${svc.externalTrafficPolicy}`] : []),
    `spec.internalTrafficPolicy: ${svc.internalTrafficPolicy}`,
  ].map((l) => read(l, serviceRef(svc)));
  const wrong: [string, Cause][] = [];
  const shown: [string, Evidence[]][] = [];
  const unread: string[] = [];
  const rejected: [string, { lines: Evidence[]; toNone: string[] }][] = [];
  // without the EndpointSlices the Rules step compared nothing: no node's rules are known right
  const compared = ctx.slices().length > 0 || !ctx.slicesNotCaptured(svc);
  for (const node of ctx.nodeNames()) {
    // rules the Rules step did not compare say nothing of the node, its wrong finding either
    if (!compared || !rulesCompared(ctx, node)) {
      unread.push(node);
      continue;
    }
    const cause = notForwardedOn(ctx, node);
    const read = cause ? undefined : entryLines(ctx, svc, node);
    if (cause) wrong.push([node, cause]);
    else if (read && read.toNone.length > 0) rejected.push([node, read]);
    else if (read) shown.push([node, read.lines]);
    else unread.push(node);
  }
  const out: Finding[] = [];
  if (shown.length > 0) {
    const nodes = shown.map(([n]) => n);
    const all = nodes.length === ctx.nodeNames().length;
    out.push(
      finding(
        'traffic-policy-cluster',
        'pass',
        all
          ? 'policy Cluster: any node forwards to any ready endpoint'
          : `policy Cluster: ${listFew(nodes, 3)} forward${nodes.length === 1 ? 's' : ''} to any ready endpoint`,
        {
          explanation: `${all ? `Every node ${does}` : `${list(nodes)} ${nodes.length === 1 ? does : doAll}`}, as ${all || nodes.length > 1 ? 'their' : 'its'} rules show.${why}`,
          evidence: [...spec, ...shown.flatMap(([, lines]) => lines)],
          nodes,
        },
      ),
    );
  }
  out.push(...toNoEndpoint(ctx, svc, spec, rejected));
  // the Rules step holds the fault: said here as its consequence, never as a second root
  const notMet = wrong.map(([node, cause]) =>
    consequence(
      finding(
        'traffic-policy-not-met',
        'warn',
        `policy Cluster: not met on ${node}, whose rules do not forward as it says (step 7)`,
        {
          explanation: `With this policy every node ${does}. The Rules step found that ${node} does not: ${cause.finding.title}.`,
          evidence: [...spec, ...cause.finding.evidence.filter((e) => e.kind === 'observed')],
          node,
          ...(cause.finding.next ? { next: cause.finding.next } : {}),
        },
      ),
      cause,
    ),
  );
  out.push(
    ...foldNodes(
      notMet,
      (nodes) =>
        `policy Cluster: not met on ${namedFew(nodes)}, whose rules do not forward as it says (step 7)`,
    ),
  );
  if (unread.length > 0)
    out.push(
      finding(
        'traffic-policy-not-observed',
        'skip',
        `policy Cluster: what ${count(unread.length, 'node')} ${unread.length === 1 ? 'does' : 'do'} is not observed (rules not compared)`,
        {
          explanation: `${wouldOn(ctx, unread, doAll)}. ${unread.length === 1 ? 'Its' : 'Their'} rules for the Service were not compared, so whether ${unread.length === 1 ? 'it does' : 'they do'} is not observed (the Rules step says why).`,
          evidence: [
            ...spec,
            ...unread.map((n) => unseen(`${n}: rules for the Service not compared`, n)),
          ],
          ...(unread.length === 1 ? { node: unread[0] } : { nodes: unread }),
        },
      ),
    );
  return out;
}

/** How the Service's traffic enters each of its ports' rules on the node, where every port has
 * them (undefined where one has none read), and the ports whose rules send it to no endpoint: with
 * none to send to, kube-proxy writes only the rule that rejects it, which is no forwarding. */
function entryLines(
  ctx: CheckContext,
  svc: Service,
  node: string,
): { lines: Evidence[]; toNone: string[] } | undefined {
  const n = ctx.analysis.node(node);
  const dp = n.dataplane();
  const trees = n.trees(ctx.scope)?.services ?? [];
  const lines: Evidence[] = [];
  const toNone: string[] = [];
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    const tree = trees.find((t) => t.name === spn);
    const entry = tree && dp ? dp.entryLines(tree).map((l) => stateSeen(node, l)) : [];
    if (entry.length === 0) return undefined;
    // a tree read in part claims no "no endpoints"
    const endpoints = [...tree!.endpoints, ...(tree!.localEndpoints ?? [])];
    if (endpoints.length === 0 && !tree!.partial) toNone.push(`${port.port}/${port.protocol}`);
    lines.push(...entry);
  }
  return { lines, toNone };
}

/** Nodes whose rules, as the Rules step expects them, send a port to no endpoint: there is no
 * ready endpoint for the policy to choose among, so what it does is not checked (the Endpoints
 * step says why there is none). */
function toNoEndpoint(
  ctx: CheckContext,
  svc: Service,
  spec: Evidence[],
  nodes: [string, { lines: Evidence[]; toNone: string[] }][],
): Finding[] {
  if (nodes.length === 0) return [];
  const names = nodes.map(([n]) => n);
  const ports = [...new Set(nodes.flatMap(([, r]) => r.toNone))];
  const one = names.length === 1;
  const who = proxiesOf(ctx, names);
  // Cilium's agent holds the frontend with no backend; kube-proxy writes a rejecting rule
  const how =
    who === 'kube-proxy'
      ? 'kube-proxy writes only the rule that rejects its traffic'
      : who === "Cilium's agent"
        ? "Cilium's agent holds its frontend with no backend, which rejects or drops its traffic (service-no-backend-response)"
        : "kube-proxy writes only the rule that rejects its traffic, and Cilium's agent holds its frontend with no backend";
  return [
    finding(
      'traffic-policy-not-checked',
      'skip',
      `no ready endpoint to forward ${list(ports)} to: ${listFew(names, 3)} ${one ? 'rejects' : 'reject'} it, as ${who} ${who.includes(' and ') ? 'do' : 'does'}`,
      {
        explanation: `The traffic policy chooses among ${svc.name}'s ready endpoints, and ${list(ports)} has none (the Endpoints step says why), so ${how}. Nothing is forwarded there, so whether ${one ? 'the node forwards' : 'the nodes forward'} as the policy says is not checked.`,
        evidence: [...spec, ...nodes.flatMap(([, r]) => r.lines)],
        ...(one ? { node: names[0] } : { nodes: names }),
      },
    ),
  ];
}
