// Step 8: does a connection get through? The recorded probes from the nodes: TCP (or UDP) to
// ClusterIP:port and to each endpoint directly, ICMP echo to the ClusterIP. Then why ping and
// curl disagree in this cluster's proxy mode, with the rules (and the packet walk) as proof.
import { read, seen, stateSeen, unseen } from '../../evidence.js';
import type { Service, ServicePort } from '../../kube/objects.js';
import { MIXED_PROXY_MODES, type Evidence, type Finding } from '../../model.js';
import { kdebug, kubectl, valid, w } from '../../next-command.js';
import { parseIpBrief, type ProbeResult } from '../../nodes/outputs.js';
import {
  type Check,
  consequence,
  count,
  endpointSlicesOf,
  findingOf,
  labelText,
  list,
  listFew,
  noPodHas,
  otherWay,
  pending,
  podsWithAddress,
} from '../check.js';
import type { CheckContext } from '../context.js';
import { clusterMode } from '../kube-proxy/modes.js';
import { ciliumNodes, replacement } from '../kube-proxy/replacement.js';
import {
  connectProbe,
  idleProbers,
  PROBED_ENDPOINTS,
  probeSeen,
  probeText,
  probingNodes,
  type NodeProbe,
} from './probes.js';
import { treeOf } from '../rules/rules.js';
import { clientAdmitted, policiesFor, together } from './network-policy.js';
import { conntrackFindings } from './conntrack.js';
import { connectionFate, packetWalk, rejectedBy } from './packet-evidence.js';
import { hostPort } from '../../ipv6.js';
import { modeTraits } from '../../dataplane/dataplane.js';

const finding = findingOf('reachability');

/** Findings of earlier steps that explain a connection failing. */
const ENDPOINT_CAUSES = [
  'target-port-not-exposed',
  'port-protocol-mismatch',
  'endpoint-not-ready',
  'no-ready-endpoints',
  'selector-matches-no-pods',
];
const CLUSTERIP_CAUSES = [
  ...ENDPOINT_CAUSES,
  'kube-proxy-not-running',
  'service-rules-missing',
  'service-chain-missing',
  'endpoint-missing',
  'endpoint-stale',
  'no-endpoints-reject-missing',
  'local-policy-wrong',
  'no-local-endpoint',
];

interface Probed {
  node: string;
  probe: NodeProbe;
  result: ProbeResult;
}

function probed(ctx: CheckContext, probe: NodeProbe): Probed[] {
  return ctx.nodeNames().flatMap((node) => {
    const result = ctx.probe(node, probe);
    return result ? [{ node, probe, result }] : [];
  });
}

const line = (p: Probed) => probeSeen(p.node, p.probe, p.result);

/** Another port of the Service has this one's number (dns 53/UDP and dns-tcp 53/TCP): what is
 * said of each names its protocol, or the two read the same. */
const sharesNumber = (ctx: CheckContext, port: ServicePort) =>
  ctx.service!.ports.some((q) => q !== port && q.port === port.port);

/** "10.1.0.10:53", or "10.1.0.10:53/UDP" where another port of the Service has that number. */
const addressOf = (ctx: CheckContext, port: ServicePort, ip: string, n = port.port) =>
  `${hostPort(ip, n)}${sharesNumber(ctx, port) ? `/${port.protocol}` : ''}`;
/** A probe that ran and saw something: its tool was there and it gave an answer or an error. */
const observed = (p: Probed) => p.result.status !== 'unknown';

/** Probes that did not observe anything, said as such: neither reachable nor unreachable. */
function notObserved(
  ctx: CheckContext,
  what: string,
  blind: Probed[],
  port: ServicePort,
): Finding[] {
  if (blind.length === 0) return [];
  const nodes = [...new Set(blind.map((p) => p.node))];
  return [
    finding('probe-not-observed', 'skip', `${what}: not observed on ${listFew(nodes, 3)}`, {
      explanation: `The probe could not run there (${blind[0]!.result.detail}), so kdebug does not know whether ${what} answers from ${nodes.length === 1 ? 'that node' : 'those nodes'}. Run it with an image that has nc and bash (kdebug's default debug image does), or reach the node over SSH (--via ssh).`,
      evidence: blind.map(line),
      // another way than the one that could not probe
      next: otherWay(ctx, ctx.service!).next,
      service: ctx.servicePortName(port),
      ...(nodes.length === 1 ? { node: nodes[0] } : { nodes }),
    }),
  ];
}
const refused = (p: Probed) => p.result.failure === 'refused';

function endpointProbes(
  ctx: CheckContext,
  port: ServicePort,
): {
  findings: Finding[];
  all: Probed[];
  blind: Probed[];
  unprobed: Unprobed[];
  beyond: string[];
} {
  const findings: Finding[] = [];
  const all: Probed[] = [];
  const blind: Probed[] = [];
  const unprobed: Unprobed[] = [];
  const beyond: string[] = [];
  const probing = probingNodes(ctx);
  const cause = ctx.causedBy(...ENDPOINT_CAUSES);
  const policies = policiesFor(ctx, port);
  for (const [i, e] of ctx.endpoints(port).entries()) {
    const probe = connectProbe(e.ip, e.port, port.protocol);
    if (!probe) continue;
    const ran = probed(ctx, probe);
    blind.push(...ran.filter((p) => !observed(p)));
    const by = new Set(ran.map((p) => p.node));
    const missing = probing.filter((n) => !by.has(n));
    // past the plan's first endpoints none is probed, by design: counted, said apart
    if (ran.length === 0 && i >= PROBED_ENDPOINTS) beyond.push(addressOf(ctx, port, e.ip, e.port));
    else if (missing.length > 0)
      unprobed.push({ target: addressOf(ctx, port, e.ip, e.port), nodes: missing });
    const got = ran.filter(observed);
    all.push(...got);
    const failed = got.filter((p) => p.result.status === 'fail');
    if (failed.length === 0) continue;
    const who = e.podName ? `Pod ${e.podName}${e.nodeName ? ` on ${e.nodeName}` : ''}` : e.ip;
    const r = failed.find(refused);
    const from = [...new Set(failed.map((p) => p.node))];
    // an address no Pod has: said before any network cause is offered
    const nobody = !e.podName && noPodHas(ctx, e.ip);
    findings.push(
      consequence(
        finding(
          'endpoint-unreachable',
          'fail',
          `endpoint ${addressOf(ctx, port, e.ip, e.port)}: ${failed[0]!.result.detail}`,
          {
            explanation: nobody
              ? `No Pod and no node has ${e.ip}: the EndpointSlice lists an address written by hand, and the connection to it ${r ? 'was refused' : `got no answer from ${list(failed.map((p) => p.node))}`}. Whatever holds ${e.ip} (outside the cluster's Pods, or nothing at all) does not ${r ? 'listen on' : 'answer on'} port ${e.port}: check the address in the EndpointSlice before the network.`
              : r
                ? `The connection straight to ${who}, bypassing the Service, was refused: the Pod is there, but nothing listens on port ${e.port} in it. Either the application listens on another port (check targetPort) or it only listens on 127.0.0.1.`
                : `The connection straight to ${who}, bypassing the Service, got no answer from ${list(failed.map((p) => p.node))}: the packets are lost between the node and the Pod (the Pod network or overlay between nodes, a NetworkPolicy, or a host firewall), or the Pod is hung.${policies.length > 0 ? ` NetworkPolicy ${list(policies.map((x) => x.name))} selects this Pod: traffic its rules do not allow is dropped like this.` : ''}`,
            evidence: got.map(line),
            next: nobody
              ? endpointSlicesOf(ctx.service!, 'yaml')
              : e.podName
                ? // an ephemeral busybox shares the Pod's network: its netstat shows what listens
                  kubectl(
                    ctx.service!.namespace,
                    'debug',
                    '-it',
                    valid.name(e.podName),
                    '--image=busybox',
                    w`--target=${valid.name(e.pod?.containers[0]?.name ?? 'app')}`,
                    '--',
                    'netstat',
                    '-tln',
                  )
                : podsWithAddress(e.ip),
            // where it was observed, as for every probe: the endpoint's node is in the text
            ...(from.length === 1 ? { node: from[0] } : { nodes: from }),
            service: ctx.servicePortName(port),
          },
        ),
        cause,
      ),
    );
  }
  return { findings, all, blind, unprobed, beyond: probing.length > 0 ? beyond : [] };
}

/** An address some nodes that ran probes did not probe: nothing is said of it from there. */
interface Unprobed {
  target: string;
  nodes: string[];
}

/** Addresses not probed from nodes that probed others (a probe lost, a family left out, the
 * endpoints past the first 16): a skip that names them, never passed over. */
function notProbed(
  ctx: CheckContext,
  what: string,
  items: Unprobed[],
  port: ServicePort,
): Finding[] {
  if (items.length === 0) return [];
  const nodes = [...new Set(items.flatMap((u) => u.nodes))];
  return [
    finding('probe-not-observed', 'skip', `${what} not probed from ${listFew(nodes, 3)}`, {
      explanation: `No probe of ${items.length === 1 ? items[0]!.target : `${count(items.length, 'address', 'addresses')}`} from ${listFew(nodes, 3)} was recorded, so nothing is said of how ${items.length === 1 ? 'it answers' : 'they answer'} from there.`,
      evidence: items.map((u) =>
        unseen(
          `${u.target}: not probed from ${listFew(u.nodes, 3)}`,
          u.nodes.length === 1 ? u.nodes[0] : undefined,
        ),
      ),
      service: ctx.servicePortName(port),
    }),
  ];
}

function clusterIpProbes(
  ctx: CheckContext,
  svc: Service,
  port: ServicePort,
  earlier: Finding[],
  ip: string,
): Finding[] {
  // a dual-stack Service's findings say which family they are about
  const family = svc.clusterIPs.length > 1 ? (ip.includes(':') ? 'IPv6: ' : 'IPv4: ') : '';
  const probe = connectProbe(ip, port.port, port.protocol);
  if (!probe) return [];
  const ran = probed(ctx, probe);
  // nodes that probed, but not this address (a family left out, a probe lost): said, never
  // passed over
  const by = new Set(ran.map((p) => p.node));
  const missing = probingNodes(ctx).filter((n) => !by.has(n));
  const unprobed = notProbed(
    ctx,
    `${family}ClusterIP ${addressOf(ctx, port, ip)}`,
    missing.length > 0 ? [{ target: addressOf(ctx, port, ip), nodes: missing }] : [],
    port,
  );
  if (ran.length === 0) return unprobed;
  const got = ran.filter(observed);
  const blind = [
    ...notObserved(
      ctx,
      `${family}ClusterIP ${addressOf(ctx, port, ip)}`,
      ran.filter((p) => !observed(p)),
      port,
    ),
    ...unprobed,
  ];
  if (got.length === 0) return blind;
  const spn = ctx.servicePortName(port);
  // internalTrafficPolicy Local: a node without a local endpoint drops it by design (step 9)
  const local = svc.internalTrafficPolicy === 'Local';
  const hasLocal = (node: string) =>
    ctx.endpoints(port).some((e) => e.nodeName === node && (e.ready || e.serving));
  const dropped = got.filter((p) => p.result.status === 'fail' && local && !hasLocal(p.node));
  const byDesign: Finding[] =
    dropped.length === 0
      ? []
      : [
          finding(
            'clusterip-unreachable',
            'warn',
            `${family}ClusterIP ${addressOf(ctx, port, ip)} dropped on ${list(dropped.map((p) => p.node))}, as internalTrafficPolicy Local does there`,
            {
              explanation: `With internalTrafficPolicy: Local kube-proxy sends ClusterIP traffic only to endpoints on the sender's own node, and ${list(dropped.map((p) => p.node))} ${dropped.length === 1 ? 'runs' : 'run'} none: it drops the connection, as designed. This is the traffic policy at work (step 9), not a broken Service.`,
              evidence: dropped.map(line),
              service: spn,
            },
          ),
        ];
  const failed = got.filter((p) => p.result.status === 'fail' && !dropped.includes(p));
  const answered = got.filter((p) => !dropped.includes(p));
  if (failed.length === 0 && answered.length === 0) return [...byDesign, ...blind];
  if (failed.length === 0)
    return [
      ...byDesign,
      finding(
        'clusterip-reachable',
        'pass',
        `${family}ClusterIP ${addressOf(ctx, port, ip)} answers from ${list(answered.map((p) => p.node))}`,
        {
          explanation: `A ${port.protocol} connection to the ClusterIP is translated to an endpoint and answered.`,
          evidence: answered.map(line),
          service: spn,
        },
      ),
      ...blind,
    ];
  const inStep = earlier.find((f) => f.id === 'endpoint-unreachable');
  const cause =
    // a node's fault explains only that node's failures: another node's missing rules do not
    // cause a refusal where the rules were read to DNAT it
    ctx.earlier.find((c) => {
      if (!CLUSTERIP_CAUSES.includes(c.finding.id)) return false;
      const on = [c.finding.node, ...(c.finding.nodes ?? [])].filter((n) => n !== undefined);
      return on.length === 0 || on.some((n) => failed.some((p) => p.node === n));
    }) ?? (inStep ? { finding: inStep, step: 'Reachability' } : undefined);
  const r = failed.find(refused);
  // who refused it, as the refusing node's rules show: never guessed from the API's endpoints
  const toPort = { dst: ip, port: port.port, proto: port.protocol.toLowerCase() };
  const fate = r && connectionFate(ctx, r.node, toPort);
  const explanation = r
    ? fate === 'forwarded'
      ? `The connection to ${hostPort(ip, port.port)} was refused. The rules on ${r.node} DNAT it to the Service's endpoints, and the Pod refused it: nothing listens on the targetPort there.`
      : fate === 'rejected'
        ? `The connection to ${hostPort(ip, port.port)} was refused at once, ${rejectedBy(ctx, r.node, toPort)}.`
        : `The connection to ${hostPort(ip, port.port)} was refused: either kube-proxy forwarded it to an endpoint where nothing listens on the targetPort, or rejected it itself, as it does for a Service without ready endpoints. ${fate ? `The rules on ${r.node} do not say which (kdebug trace walks them).` : `The rules on ${r.node} were not read to say which.`}`
    : `The connection to ${hostPort(ip, port.port)} got no answer from ${list(failed.map((p) => p.node))}. Either the node has no rule for it (so the packet leaves unchanged towards the default route, where nobody owns the ClusterIP), or it was forwarded to an endpoint that does not answer.`;
  return [
    consequence(
      finding(
        'clusterip-unreachable',
        'fail',
        `${family}ClusterIP ${addressOf(ctx, port, ip)}: ${failed[0]!.result.detail}`,
        {
          explanation: `${explanation}${failed.length < answered.length ? ` It works from ${list(answered.filter((p) => !failed.includes(p)).map((p) => p.node))}: compare that node's rules with the failing one's (Rules step).` : ''}`,
          evidence: [
            ...answered.map(line),
            ...(fate === 'forwarded' || fate === 'rejected'
              ? packetWalk(ctx, r!.node, toPort)
              : []),
          ],
          next: kdebug([
            'trace',
            '--node',
            valid.name(failed[0]!.node),
            '--dst',
            valid.ip(ip) && hostPort(ip, port.port),
            '--proto',
            valid.protocol(port.protocol),
            '--from-host', // from the node's own address, of the cluster IP's family
          ]),
          node: failed.length === 1 ? failed[0]!.node : undefined,
          service: spn,
        },
      ),
      cause,
    ),
    ...byDesign,
    ...blind,
  ];
}

/** Linux nodes read (or tried) that ran no probe while others did: the step speaks for the
 * others only. */
function idleNodes(ctx: CheckContext): Finding[] {
  const idle = idleProbers(ctx);
  if (idle.length === 0) return [];
  return [
    finding('probe-not-observed', 'skip', `no probe from ${listFew(idle, 3)}`, {
      explanation: `The Service was probed from ${listFew(probingNodes(ctx), 3)} only, so nothing is said of how it answers from ${listFew(idle, 3)}.`,
      evidence: idle.map((n) => unseen(`${n}: no probe recorded`, n)),
      ...(idle.length === 1 ? { node: idle[0] } : { nodes: idle }),
    }),
  ];
}

/** Who owns the ClusterIP on each of these nodes, from `ip -br addr`. */
function owners(ctx: CheckContext, ip: string, among: ReadonlySet<string>): Evidence[] {
  return ctx.nodeNames().flatMap((node) => {
    const text = among.has(node) ? ctx.output(node, 'ip-addr') : undefined;
    if (text === undefined) return [];
    const dev = parseIpBrief(text).find((i) => i.addresses.some((a) => a.split('/')[0] === ip));
    return [
      seen(
        dev
          ? `${node}: ${ip} is bound to ${dev.name} (ip -br addr)`
          : `${node}: no interface holds ${ip} (ip -br addr)`,
        { node, source: `nodes/${node}/ip-addr.txt` },
      ),
    ];
  });
}

/** The NetworkPolicies that select the Service's Pods, evaluated for its port: which sources they
 * admit together. None is a warning: every client's connection times out. */
function networkPolicies(ctx: CheckContext, port: ServicePort): Finding[] {
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
      ? `${policies.length === 1 ? 'This NetworkPolicy selects' : 'These NetworkPolicies select'} the Service's Pods for ingress and no ingress rule allows ${what}: connections to the Service and to the Pods directly are dropped silently, so clients time out. Add an ingress rule for the clients that need it.`
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

/** Why ping to the ClusterIP and a connection to its port behave differently, for each proxy mode
 * the nodes run: one finding a mode, beside its own nodes' probes, state and packet walks. */
function pingExplained(ctx: CheckContext, svc: Service): Finding[] {
  const port = svc.ports[0];
  if (!port) return [];
  const mode = ciliumNodes(ctx).length > 0 ? 'cilium' : (clusterMode(ctx) ?? 'iptables');
  if (mode !== MIXED_PROXY_MODES)
    return modeTraits(mode) ? [pingInMode(ctx, svc, port, mode, ctx.nodeNames(), false)] : [];
  // nodes seen in different modes: one explanation a mode, beside its own nodes' evidence
  const family = svc.clusterIP!.includes(':') ? 'IPv6' : 'IPv4';
  const byMode = new Map<string, string[]>();
  for (const n of ctx.nodeNames()) {
    const m = ctx.analysis.node(n, undefined, family).mode();
    if (modeTraits(m)) byMode.set(m, [...(byMode.get(m) ?? []), n]);
  }
  // a mode nothing was observed in is said nowhere: its nodes were not read
  return [...byMode]
    .map(([m, nodes]) => pingInMode(ctx, svc, port, m, nodes, true))
    .filter((f) => f.evidence.length > 0);
}

/** The ping explanation of one mode, from what the nodes in it recorded and hold. */
function pingInMode(
  ctx: CheckContext,
  svc: Service,
  port: ServicePort,
  mode: string,
  nodes: string[],
  mixed: boolean,
): Finding {
  const ip = svc.clusterIP!;
  const explain = modeTraits(mode)!.ping;
  const among = new Set(nodes);
  // only what a probe saw counts: a ping that could not run answered nothing
  const pings = probed(ctx, { kind: 'icmp-echo', ip }).filter(
    (p) => observed(p) && among.has(p.node),
  );
  const connect = connectProbe(ip, port.port, port.protocol);
  const conns = connect ? probed(ctx, connect).filter((p) => observed(p) && among.has(p.node)) : [];
  const evidence = [...pings.map(line), ...conns.map(line), ...owners(ctx, ip, among)];
  // one node in this mode whose state was read, one the probes ran from (its Service port
  // programmed) first: the lines, the walk and the recorded results tell one story
  const family = ip.includes(':') ? 'IPv6' : 'IPv4';
  const inMode = nodes.filter(
    (n) => ctx.analysis.node(n, undefined, family).dataplane()?.mode === mode,
  );
  const programmed = inMode.filter((n) => treeOf(ctx, n, port));
  const pinged = (n: string) => pings.some((p) => p.node === n);
  const node = programmed.find(pinged) ?? programmed[0] ?? inMode.find(pinged) ?? inMode[0];
  const toPort = { dst: ip, port: port.port, proto: port.protocol.toLowerCase() };
  if (node) {
    const lines = ctx.analysis
      .node(node, undefined, family)
      .dataplane()!
      .clusterIpLines({
        node,
        ip,
        port: port.port,
        protocol: port.protocol,
        tree: treeOf(ctx, node, port),
      });
    evidence.push(
      ...lines.map((l) => stateSeen(node, l)),
      ...packetWalk(ctx, node, { dst: ip, proto: 'icmp' }),
      ...packetWalk(ctx, node, toPort),
    );
  }
  const proto = port.protocol;
  const answered = pings.some((p) => p.result.status === 'pass');
  const connected = conns.some((p) => p.result.status === 'pass');
  // what the node's rules do to a connection, else what a probe saw: never the API's guess
  const fate = node ? connectionFate(ctx, node, toPort) : undefined;
  const connection =
    fate === 'forwarded' || fate === 'rejected' ? fate : connected ? 'forwarded' : undefined;
  const curl =
    proto === 'TCP'
      ? `curl ${ip.includes(':') ? `-g http://${hostPort(ip, port.port)}/` : hostPort(ip, port.port)}`
      : `a ${proto} client on port ${port.port}`;
  const ping =
    pings.length === 0
      ? `ping ${ip}`
      : answered
        ? `ping ${ip} answers`
        : `ping ${ip} gets no answer`;
  // nodes in different modes: each finding says whose it is
  const on = mixed ? `${listFew(nodes, 3)}: ` : '';
  const m = explain({
    ip,
    protocol: proto,
    port: port.port,
    ports: svc.ports.map((p) => ({ port: p.port, protocol: p.protocol })),
    pinged: pings.length > 0,
    answered,
    silent: !answered && pings.some((p) => p.result.failure === 'silent'),
    ...(connection ? { connection } : {}),
    curl,
    title: (normal) => `${on}${ping}${connected ? `, ${curl} connects` : ''}: ${normal}`,
  });
  // worth reading at once only where the recorded ping and connect disagree
  const disagree = pings.length > 0 && conns.length > 0 && answered !== connected;
  return finding('ping-clusterip-explained', 'pass', m.title, {
    explanation: m.text,
    evidence,
    info: true,
    ...(disagree ? {} : { folded: true }),
    ...(mixed ? (nodes.length === 1 ? { node: nodes[0] } : { nodes }) : {}),
  });
}

export const reachabilityCheck: Check<'reachability'> = {
  id: 'reachability',
  title: 'Reachability',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName'],
    id: 'reachability-not-checked',
    title: 'ExternalName: the external name is not probed',
    explanation: (svc) =>
      `Clients connect to ${svc.externalName} directly; kdebug does not probe addresses outside the cluster.`,
  },
  run(ctx) {
    const svc = ctx.service!;
    const out: Finding[] = [];
    for (const port of svc.ports) {
      // the endpoints are probed first: their failures explain the ClusterIP's, shown first
      const eps = endpointProbes(ctx, port);
      // each family's cluster IP is probed and judged on its own
      if (!svc.headless)
        for (const ip of svc.clusterIPs)
          out.push(...clusterIpProbes(ctx, svc, port, eps.findings, ip));
      out.push(...eps.findings);
      const of = sharesNumber(ctx, port) ? ` of ${port.port}/${port.protocol}` : '';
      out.push(...notObserved(ctx, `the endpoints${of}`, eps.blind, port));
      const unprobed = eps.unprobed;
      out.push(
        ...notProbed(
          ctx,
          unprobed.length === 1
            ? `endpoint ${unprobed[0]!.target}`
            : `${count(unprobed.length, 'endpoint')}${of}`,
          unprobed,
          port,
        ),
      );
      if (eps.beyond.length > 0)
        out.push(
          finding(
            'probe-not-observed',
            'skip',
            `${count(eps.beyond.length, 'endpoint')}${of} past the first ${PROBED_ENDPOINTS} not probed`,
            {
              explanation: `kdebug probes the first ${PROBED_ENDPOINTS} endpoints of each port from each node it reads; the other ${count(eps.beyond.length, 'endpoint')} of ${port.port}/${port.protocol} were not probed, so nothing is said of how they answer.`,
              evidence: [
                unseen(
                  `not probed: ${listFew(eps.beyond, 3)} (the first ${PROBED_ENDPOINTS} of each port are)`,
                ),
              ],
              service: ctx.servicePortName(port),
            },
          ),
        );
      // probes count node x endpoint: the title counts the endpoints
      const answering = new Set(eps.all.map((p) => probeText(p.probe))).size;
      if (eps.all.length > 0 && eps.findings.length === 0)
        out.push(
          finding(
            'endpoints-reachable',
            'pass',
            `${count(answering, 'endpoint')}${of} answer${answering === 1 ? 's' : ''} directly on the targetPort`,

            {
              explanation: 'Connections straight to the Pods, bypassing the Service, get through.',
              evidence: eps.all.map(line),
              service: ctx.servicePortName(port),
            },
          ),
        );
    }
    if (out.length === 0) {
      if (ctx.waiting('nodes')) return pending('waiting for the probes from the nodes');
      out.push(
        ctx.options.invocation?.snapshot !== undefined
          ? finding('probes-not-recorded', 'skip', 'no probe results recorded', {
              explanation:
                'kdebug probes the ClusterIP and each endpoint from the nodes when it can reach them; this snapshot holds no probe results.',
              evidence: [unseen('no probe results in the snapshot')],
              advice: 'Run it live, with access to the nodes, for the probes.',
              next: kdebug(['svc', valid.name(svc.name), '-n', valid.namespace(svc.namespace)], {
                live: true,
              }),
            })
          : finding('probes-not-recorded', 'skip', 'no probe ran: no node could run one', {
              explanation:
                'kdebug probes the ClusterIP and each endpoint from the nodes it can reach; it reached none that can run a probe (the lines on stderr say, per node, which way was tried and why it failed).',
              evidence: [unseen('no node ran a probe')],
            }),
      );
    }
    out.push(...idleNodes(ctx));
    out.push(...conntrackFindings(ctx, svc));
    for (const port of svc.ports) out.push(...networkPolicies(ctx, port));
    if (!svc.headless && (ciliumNodes(ctx).length > 0 || !replacement(ctx)))
      out.push(...pingExplained(ctx, svc));
    return out;
  },
};
