// Policy Local (externalTrafficPolicy / internalTrafficPolicy): only the node's own endpoints are
// used, so a node without one drops the traffic. Which nodes have a local ready endpoint, and
// which will drop.
import { rulesCompared } from '../rules/compared.js';
import { read, stateSeen, unseen } from '../../findings/evidence.js';
import type { Service, ServicePort } from '../../kube/objects.js';
import type { Evidence, Finding } from '../../model.js';
import { kubectl, valid } from '../../findings/next-command.js';
import { findingOf, list, podsOf } from '../check.js';
import type { CheckContext } from '../context.js';
import { hostPort } from '../../ipv6.js';
import { modeTraits } from '../../dataplane/mode-traits.js';
import { localDrops } from './who.js';

const finding = findingOf('traffic-policy');

interface NodeLocal {
  node: string;
  local: string[];
}

/** Each node's endpoints of the port its Local policy uses, from the objects its kube-proxy reads
 * (the legacy Endpoints before 1.19), as the Rules step expects them. */
function localEndpoints(ctx: CheckContext, port: ServicePort): NodeLocal[] {
  return ctx.nodeNames().map((node) => ({
    node,
    local: ctx.proxiedEndpoints(port, node).local.map((e) => e.address),
  }));
}

/** What a node without a local endpoint does with the port's traffic, as its dataplane shows it. */
function dropRules(ctx: CheckContext, node: string, spn: string): Evidence[] {
  const n = ctx.analysis.node(node);
  const dp = n.dataplane();
  const tree = n.trees(ctx.scope)?.services.find((t) => t.name === spn);
  return (dp?.noLocalEndpointLines(tree) ?? []).map((l) => stateSeen(node, l));
}

/** How nodes without a local endpoint fail external traffic, as their proxy mode does: what their
 * rules hold, or what their proxy would do (`would`) where the Rules step did not compare them. */
function dropsHow(ctx: CheckContext, nodes: NodeLocal[], entry: string[], would = false): string {
  return localDrops(
    ctx,
    nodes.map((n) => n.node),
    list(entry),
    (kp) =>
      kubeProxyDrops(
        ctx,
        nodes.filter((n) => kp.includes(n.node)),
        entry,
        would,
      ),
    !would,
  );
}

/** How kube-proxy on nodes without a local endpoint fails external traffic, as its mode does. */
function kubeProxyDrops(
  ctx: CheckContext,
  nodes: NodeLocal[],
  entry: string[],
  would: boolean,
): string {
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

export function external(ctx: CheckContext, svc: Service): Finding[] {
  const out: Finding[] = [];
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    const per = localEndpoints(ctx, port);
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

/** What nodes without a local endpoint do with their Pods' ClusterIP traffic under
 * internalTrafficPolicy Local, by what programs the Service there (`now`: as observed). */
const internalDrops = (ctx: CheckContext, nodes: NodeLocal[], svc: Service, now: boolean) =>
  localDrops(
    ctx,
    nodes.map((n) => n.node),
    `the ClusterIP ${svc.clusterIP ?? ''}`.trimEnd(),
    (kp) =>
      `kube-proxy ${kp.length === nodes.length ? 'there' : `on ${list(kp)}`} ${now ? 'drops the traffic' : 'would drop the traffic of its Pods to the ClusterIP'} (filter KUBE-SERVICES DROP "has no local endpoints")`,
    now,
  );

export function internal(ctx: CheckContext, svc: Service): Finding[] {
  return svc.ports.flatMap((port) => {
    const spn = ctx.servicePortName(port);
    const per = localEndpoints(ctx, port);
    const none = per.filter((n) => n.local.length === 0);
    const without = none.filter((n) => rulesCompared(ctx, n.node));
    const unreadNodes = none.filter((n) => !without.includes(n));
    const unread = rulesUnread(
      ctx,
      'internalTrafficPolicy',
      unreadNodes,
      internalDrops(ctx, unreadNodes, svc, false),
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
          explanation: `With internalTrafficPolicy: Local, a Pod reaching the ClusterIP is only sent to an endpoint on its own node. ${list(without.map((n) => n.node))} ${without.length === 1 ? 'has' : 'have'} none, so ${internalDrops(ctx, without, svc, true)}. This suits node-local agents run as a DaemonSet; anything else should use Cluster.`,
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
