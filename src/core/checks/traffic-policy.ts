// Step 9: externalTrafficPolicy / internalTrafficPolicy Local. Local keeps the client's source
// IP (or keeps traffic on its node) by using only the node's own endpoints: a node without one
// drops the traffic. Which nodes have a local ready endpoint, and which will drop.
import { rulesCompared } from './rules/compared.js';
import { read, stateSeen, unseen } from '../findings/evidence.js';
import { categorize, portEndpoints } from '../dataplane/kube-proxy/endpoints.js';
import { proxiedSlicesOf } from '../dataplane/kube-proxy/endpoint-source.js';
import type { Service, ServicePort } from '../kube/objects.js';
import type { FindingId } from '../findings/finding-ids.js';
import type { Evidence, Finding } from '../model.js';
import { kubectl, valid } from '../findings/next-command.js';
import {
  type Cause,
  type Check,
  consequence,
  count,
  findingOf,
  foldNodes,
  list,
  listFew,
  pending,
  podsOf,
  serviceRef,
} from './check.js';
import type { CheckContext } from './context.js';
import { hostPort } from '../ipv6.js';
import { modeTraits } from '../dataplane/mode-traits.js';
import { type DriftId, NOT_FORWARDED } from '../dataplane/drift.js';
import { namedFew } from '../nodes/access.js';

const finding = findingOf('traffic-policy');

const externallyAccessible = (svc: Service) =>
  svc.type === 'NodePort' ||
  svc.type === 'LoadBalancer' ||
  svc.externalIPs.length > 0 ||
  svc.ports.some((p) => p.nodePort);

interface NodeLocal {
  node: string;
  local: string[];
}

/** Each node's endpoints of the port on itself, from the objects its kube-proxy reads (the legacy
 * Endpoints before 1.19), as the Rules step expects them. */
function localEndpoints(ctx: CheckContext, svc: Service, port: ServicePort): NodeLocal[] {
  return ctx.nodeNames().map((node) => {
    const from = ctx.analysis.node(node).expected(ctx.scope).endpointsFrom;
    const slices = proxiedSlicesOf(ctx.view, svc, from);
    const cat = categorize(portEndpoints(slices, port, node), { cluster: true, local: true });
    return { node, local: cat.local.map((e) => e.address) };
  });
}

/** What a node without a local endpoint does with the port's traffic, as its dataplane shows it. */
function dropRules(ctx: CheckContext, node: string, spn: string): Evidence[] {
  const n = ctx.analysis.node(node);
  const dp = n.dataplane();
  const tree = n.trees(ctx.scope)?.services.find((t) => t.name === spn);
  return (dp?.noLocalEndpointLines(tree) ?? []).map((l) => stateSeen(node, l));
}

/** How nodes without a local endpoint fail external traffic, as their proxy mode does: what their
 * rules hold, or what kube-proxy would do (`would`) where the Rules step did not compare them. */
function dropsHow(ctx: CheckContext, nodes: NodeLocal[], entry: string[], would = false): string {
  const verb = (now: string, then: string) => (would ? `would ${then}` : now);
  const forwarding = nodes.filter(
    (n) =>
      modeTraits(ctx.analysis.node(n.node).mode())?.withoutLocalEndpoint ===
      'forward-unmasqueraded',
  );
  if (forwarding.length === 0)
    return `kube-proxy there ${verb('drops', 'drop')} new connections to ${list(entry)} (a filter DROP rule)`;
  return `kube-proxy ${forwarding.length === nodes.length ? 'there' : `on ${list(forwarding.map((n) => n.node))}`} (IPVS mode) ${verb('sends', 'send')} ${list(entry)} to endpoints on other nodes without masquerading them (kubernetes#97081), so the replies come from the Pod's address and the client discards them${forwarding.length < nodes.length ? `; the others ${verb('drop', 'drop')} new connections (a filter DROP rule)` : ''}`;
}

/** Nodes without a local endpoint whose rules the Rules step did not compare: what the API implies there (`would`,
 * what kube-proxy would do), said as not observed, never as a drop. */
function rulesUnread(
  ctx: CheckContext,
  which: 'externalTrafficPolicy' | 'internalTrafficPolicy',
  nodes: NodeLocal[],
  would: string,
  spn: string,
): Finding[] {
  if (nodes.length === 0) return [];
  const names = nodes.map((n) => n.node);
  const one = names.length === 1;
  return [
    finding(
      'traffic-policy-not-observed',
      'skip',
      `${which} Local: ${list(names)} ${one ? 'has' : 'have'} no local endpoint; what ${one ? 'it does' : 'they do'} is not observed (rules not compared)`,
      {
        explanation: `The API lists no ready endpoint of this Service on ${list(names)}, so with ${which}: Local ${would}. ${one ? 'Its' : 'Their'} rules were not compared, so whether ${one ? 'it does' : 'they do'} is not observed (the Rules step says why).`,
        evidence: [
          ...names.map((n) => read(`${n}: no local endpoint`)),
          ...names.map((n) =>
            unseen(`${n}: rules of its ${ctx.analysis.node(n).mode()} mode not compared`, n),
          ),
        ],
        service: spn,
        ...(one ? { node: names[0] } : { nodes: names }),
      },
    ),
  ];
}

function external(ctx: CheckContext, svc: Service): Finding[] {
  const out: Finding[] = [];
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    const per = localEndpoints(ctx, svc, port);
    const none = per.filter((n) => n.local.length === 0);
    // a drop is said of the nodes whose rules were read; the others are not observed
    const without = none.filter((n) => rulesCompared(ctx, n.node));
    const unread = none.filter((n) => !without.includes(n));
    const entry = [
      ...(port.nodePort ? [`node port ${port.nodePort}`] : []),
      ...svc.externalIPs.map((ip) => hostPort(ip, port.port)),
      ...svc.loadBalancerIPs.map((ip) => hostPort(ip, port.port)),
    ];
    const evidence = per.map((n) =>
      read(
        `${n.node}: ${n.local.length > 0 ? `local endpoint ${n.local.join(', ')}` : 'no local endpoint'}`,
      ),
    );
    out.push(
      ...rulesUnread(ctx, 'externalTrafficPolicy', unread, dropsHow(ctx, unread, entry, true), spn),
    );
    if (unread.length > 0 && without.length === 0) continue;
    if (without.length === 0) {
      out.push(
        finding(
          'local-endpoints-everywhere',
          'pass',
          `externalTrafficPolicy Local: every node has a local endpoint for ${port.port}/${port.protocol}`,
          {
            explanation: `Traffic arriving on ${list(entry)} of any node is sent to a Pod on that same node, keeping the client's source IP.`,
            evidence,
            service: spn,
          },
        ),
      );
      continue;
    }
    const lb = svc.type === 'LoadBalancer';
    out.push(
      finding(
        'no-local-endpoint',
        lb ? 'warn' : 'fail',
        `externalTrafficPolicy Local: ${list(without.map((n) => n.node))} ${without.length === 1 ? 'has' : 'have'} no local endpoint and drop${without.length === 1 ? 's' : ''} ${list(entry)}`,
        {
          explanation: `With externalTrafficPolicy: Local a node only forwards external traffic to Pods running on itself, so that the Pod sees the client's real IP. ${list(without.map((n) => n.node))} ${without.length === 1 ? 'runs' : 'run'} no ready Pod of this Service, so ${dropsHow(ctx, without, entry)}: a client sent to ${without.length === 1 ? 'that node' : 'those nodes'} times out. ${lb ? `A load balancer that honours the health check node port ${svc.healthCheckNodePort ?? ''} avoids such nodes by design; check that it does.` : 'Clients of a NodePort choose the node themselves, so some of them fail.'} Fix: run a Pod on every node that receives traffic (a DaemonSet, or more replicas spread across nodes), send clients only to nodes with a Pod, or use externalTrafficPolicy: Cluster if the client IP does not matter.`,
          evidence: [...evidence, ...without.flatMap((n) => dropRules(ctx, n.node, spn))],
          next: podsOf(svc),
          service: spn,
          node: without.length === 1 ? without[0]!.node : undefined,
        },
      ),
    );
  }
  return out;
}

function internal(ctx: CheckContext, svc: Service): Finding[] {
  return svc.ports.flatMap((port) => {
    const spn = ctx.servicePortName(port);
    const per = localEndpoints(ctx, svc, port);
    const none = per.filter((n) => n.local.length === 0);
    const without = none.filter((n) => rulesCompared(ctx, n.node));
    const unread = rulesUnread(
      ctx,
      'internalTrafficPolicy',
      none.filter((n) => !without.includes(n)),
      'kube-proxy there would drop the traffic of its Pods to the ClusterIP (filter KUBE-SERVICES DROP "has no local endpoints")',
      spn,
    );
    if (unread.length > 0 && without.length === 0) return unread;
    const evidence = per.map((n) =>
      read(
        `${n.node}: ${n.local.length > 0 ? `local endpoint ${n.local.join(', ')}` : 'no local endpoint'}`,
      ),
    );
    if (without.length === 0)
      return [
        finding(
          'local-endpoints-everywhere',
          'pass',
          `internalTrafficPolicy Local: every node has a local endpoint for ${port.port}/${port.protocol}`,
          {
            explanation: 'Pods reach the ClusterIP on their own node everywhere.',
            evidence,
            service: spn,
          },
        ),
      ];
    return [
      ...unread,
      finding(
        'no-local-endpoint',
        'warn',
        `internalTrafficPolicy Local: Pods on ${list(without.map((n) => n.node))} cannot reach ${hostPort(svc.clusterIP ?? '', port.port)}`,
        {
          explanation: `With internalTrafficPolicy: Local, a Pod reaching the ClusterIP is only sent to an endpoint on its own node. ${list(without.map((n) => n.node))} ${without.length === 1 ? 'has' : 'have'} none, so kube-proxy there drops the traffic (filter KUBE-SERVICES DROP "has no local endpoints"). This suits node-local agents run as a DaemonSet; anything else should use Cluster.`,
          evidence: [...evidence, ...without.flatMap((n) => dropRules(ctx, n.node, spn))],
          next: kubectl(
            svc.namespace,
            'patch',
            'service',
            valid.name(svc.name),
            '-p',
            JSON.stringify({ spec: { internalTrafficPolicy: 'Cluster' } }),
          ),
          service: spn,
        },
      ),
    ];
  });
}

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
 * holds the fault); one whose rules it did not compare is what kube-proxy would do, not observed. */
function cluster(ctx: CheckContext, svc: Service): Finding[] {
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
  out.push(...toNoEndpoint(svc, spec, rejected));
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
          explanation: `kube-proxy on ${listFew(unread)} would ${doAll}. ${unread.length === 1 ? 'Its' : 'Their'} rules for the Service were not compared, so whether ${unread.length === 1 ? 'it does' : 'they do'} is not observed (the Rules step says why).`,
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
    // a port without endpoints is rejected by a filter rule in iptables mode, its entry's own
    const verdicts =
      tree && n.mode() === 'iptables'
        ? tree.verdicts.flatMap((v) => ctx.lineEvidence(node, v.table, v.line) ?? [])
        : [];
    if (entry.length + verdicts.length === 0) return undefined;
    // a tree read in part claims no "no endpoints"
    const endpoints = [...tree!.endpoints, ...(tree!.localEndpoints ?? [])];
    if (endpoints.length === 0 && !tree!.partial) toNone.push(`${port.port}/${port.protocol}`);
    lines.push(...entry, ...verdicts);
  }
  return { lines, toNone };
}

/** Nodes whose rules, as the Rules step expects them, send a port to no endpoint: there is no
 * ready endpoint for the policy to choose among, so what it does is not checked (the Endpoints
 * step says why there is none). */
function toNoEndpoint(
  svc: Service,
  spec: Evidence[],
  nodes: [string, { lines: Evidence[]; toNone: string[] }][],
): Finding[] {
  if (nodes.length === 0) return [];
  const names = nodes.map(([n]) => n);
  const ports = [...new Set(nodes.flatMap(([, r]) => r.toNone))];
  const one = names.length === 1;
  return [
    finding(
      'traffic-policy-not-checked',
      'skip',
      `no ready endpoint to forward ${list(ports)} to: ${listFew(names, 3)} ${one ? 'rejects' : 'reject'} it, as kube-proxy does`,
      {
        explanation: `The traffic policy chooses among ${svc.name}'s ready endpoints, and ${list(ports)} has none (the Endpoints step says why), so kube-proxy writes only the rule that rejects its traffic. Nothing is forwarded there, so whether ${one ? 'the node forwards' : 'the nodes forward'} as the policy says is not checked.`,
        evidence: [...spec, ...nodes.flatMap(([, r]) => r.lines)],
        ...(one ? { node: names[0] } : { nodes: names }),
      },
    ),
  ];
}

export const trafficPolicyCheck: Check<'traffic-policy'> = {
  id: 'traffic-policy',
  title: 'Traffic policy',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'traffic-policy-not-used',
    title: 'no virtual IP, no traffic policy',
    explanation: 'Traffic policies apply to the ClusterIP and node ports that kube-proxy programs.',
  },
  run(ctx) {
    const svc = ctx.service!;
    if (ctx.waiting('objects')) return pending('reading the Nodes and EndpointSlices');
    const etpLocal = svc.externalTrafficPolicy === 'Local' && externallyAccessible(svc);
    const itpLocal = svc.internalTrafficPolicy === 'Local';
    const out = [...(etpLocal ? external(ctx, svc) : []), ...(itpLocal ? internal(ctx, svc) : [])];
    if (out.length > 0) return out;
    // policy Cluster rests on the nodes' rules: pending while they are read
    return ctx.waiting('nodes') ? pending('waiting for the node rules') : cluster(ctx, svc);
  },
};
