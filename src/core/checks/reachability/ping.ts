// Why ping to the ClusterIP and a connection to its port behave differently in each proxy mode the
// nodes run, with their probes, state and packet walks as proof.
import { seen, stateSeen } from '../../findings/evidence.js';
import { DEFAULT_MODE, type Service, type ServicePort } from '../../kube/objects.js';
import { MIXED_PROXY_MODES, type Evidence, type Finding } from '../../model.js';
import { parseIpBrief } from '../../nodes/outputs.js';
import { findingOf, list, listFew } from '../check.js';
import type { CheckContext } from '../context.js';
import { clusterMode } from '../kube-proxy/modes.js';
import { connectProbe, observed, probed, probedEvidence } from './probes.js';
import { treeOf } from '../rules/summary.js';
import { connectionFate, packetWalk } from './packet-evidence.js';
import { hostPort } from '../../ipv6.js';
import { modeTraits } from '../../dataplane/mode-traits.js';

const finding = findingOf('reachability');

/** Who owns the ClusterIP on each of these nodes, from `ip -br addr`, and the nodes whose
 * interfaces were read and none holds it. */
function owners(
  ctx: CheckContext,
  ip: string,
  among: ReadonlySet<string>,
): { evidence: Evidence[]; notHeldOn: string[] } {
  const notHeldOn: string[] = [];
  const evidence = ctx.nodeNames().flatMap((node) => {
    const text = among.has(node) ? ctx.output(node, 'ip-addr') : undefined;
    if (text === undefined) return [];
    const dev = parseIpBrief(text).find((i) => i.addresses.some((a) => a.split('/')[0] === ip));
    if (!dev) notHeldOn.push(node);
    return [
      seen(
        dev
          ? `${node}: ${ip} is bound to ${dev.name} (ip -br addr)`
          : `${node}: no interface holds ${ip} (ip -br addr)`,
        { node, source: `nodes/${node}/ip-addr.txt` },
      ),
    ];
  });
  return { evidence, notHeldOn };
}

/** Why ping to the ClusterIP and a connection to its port behave differently, for each proxy mode
 * the nodes are seen to run: one finding a mode, beside its own nodes' probes, state and packet
 * walks; where one mode is seen, in the mode of the node whose state is shown. */
export function pingExplained(ctx: CheckContext, svc: Service): Finding[] {
  const port = svc.ports[0];
  if (!port) return [];
  const family = svc.clusterIP!.includes(':') ? 'IPv6' : 'IPv4';
  const modeOf = (n: string) => ctx.analysis.node(n, undefined, family).mode();
  const cluster = clusterMode(ctx);
  if (cluster !== MIXED_PROXY_MODES) {
    const nodes = ctx.nodeNames();
    const shown = shownNode(ctx, svc.clusterIP!, port, nodes);
    // no node's state read: the mode the nodes run, as their states say it
    const mode = shown ? modeOf(shown) : (cluster ?? (nodes[0] ? modeOf(nodes[0]) : DEFAULT_MODE));
    if (!modeTraits(mode)) return [];
    // nodes their state puts in another mode (kube-proxy's default assumed is not a mode said):
    // the explanation is the shown node's, said as such
    const differs = (n: string) =>
      modeOf(n) !== mode &&
      !!modeTraits(modeOf(n)) &&
      ctx.analysis.state(n).mode.from !== 'default';
    const others = shown ? nodes.filter(differs) : [];
    const whose =
      others.length > 0
        ? { node: shown!, others, modes: [...new Set(others.map(modeOf))] }
        : undefined;
    return [pingInMode(ctx, svc, port, mode, nodes, false, whose)];
  }
  // nodes seen in different modes: one explanation a mode, beside its own nodes' evidence
  const byMode = new Map<string, string[]>();
  for (const n of ctx.nodeNames()) {
    const m = modeOf(n);
    if (modeTraits(m)) byMode.set(m, [...(byMode.get(m) ?? []), n]);
  }
  // a mode nothing was observed in is said nowhere: its nodes were not read
  return [...byMode]
    .map(([m, nodes]) => pingInMode(ctx, svc, port, m, nodes, true))
    .filter((f) => f.evidence.length > 0);
}

/** The pings to the address recorded on these nodes: only what a probe saw counts (a ping that
 * could not run answered nothing). */
const pingsOn = (ctx: CheckContext, ip: string, among: ReadonlySet<string>) =>
  probed(ctx, { kind: 'icmp-echo', ip }).filter((p) => observed(p) && among.has(p.node));

/** The node whose state the explanation shows, among `nodes` (in `mode` where given): one whose
 * state was read, one the probes ran from (its Service port programmed) first, so the lines, the
 * walk and the recorded results tell one story. */
function shownNode(
  ctx: CheckContext,
  ip: string,
  port: ServicePort,
  nodes: string[],
  mode?: string,
): string | undefined {
  const family = ip.includes(':') ? 'IPv6' : 'IPv4';
  const pinged = new Set(pingsOn(ctx, ip, new Set(nodes)).map((p) => p.node));
  const read = nodes.filter((n) => {
    const dataplane = ctx.analysis.node(n, undefined, family).dataplane();
    return dataplane !== undefined && (mode === undefined || dataplane.mode === mode);
  });
  const programmed = read.filter((n) => treeOf(ctx, n, port));
  const first = (among: string[]) => among.find((n) => pinged.has(n)) ?? among[0];
  return first(programmed) ?? first(read);
}

/** The ping explanation of one mode, from what the nodes in it recorded and hold. */
function pingInMode(
  ctx: CheckContext,
  svc: Service,
  port: ServicePort,
  mode: string,
  nodes: string[],
  mixed: boolean,
  /** Where some nodes are in another mode: the node whose mode this is, and those others. */
  whose?: { node: string; others: string[]; modes: string[] },
): Finding {
  const ip = svc.clusterIP!;
  const explain = modeTraits(mode)!.ping;
  const among = new Set(nodes);
  const pings = pingsOn(ctx, ip, among);
  const connect = connectProbe(ip, port.port, port.protocol);
  const conns = connect ? probed(ctx, connect).filter((p) => observed(p) && among.has(p.node)) : [];
  const held = owners(ctx, ip, among);
  const evidence = [...pings.map(probedEvidence), ...conns.map(probedEvidence), ...held.evidence];
  const family = ip.includes(':') ? 'IPv6' : 'IPv4';
  const node = shownNode(ctx, ip, port, nodes, mode);
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
  // the title follows the recorded connects: where some node's failed, it names those that got
  // through, never "connects" beside a failure in its own evidence
  const through = [...new Set(conns.filter((p) => p.result.status === 'pass').map((p) => p.node))];
  const connects = !connected
    ? ''
    : conns.every((p) => p.result.status === 'pass')
      ? `, ${curl} connects`
      : `, ${curl} connects from ${listFew(through, 3)} only`;
  // nodes in different modes: each finding says whose it is
  const on = mixed ? `${listFew(nodes, 3)}: ` : whose ? `${whose.node}: ` : '';
  const m = explain({
    ip,
    protocol: proto,
    port: port.port,
    ports: svc.ports.map((p) => ({ port: p.port, protocol: p.protocol })),
    pinged: pings.length > 0,
    answered,
    silent: !answered && pings.some((p) => p.result.failure === 'silent'),
    notHeldOn: held.notHeldOn,
    ...(connection ? { connection } : {}),
    curl,
    title: (normal) => `${on}${ping}${connects}: ${normal}`,
  });
  // worth reading at once only where the recorded ping and connect disagree
  const disagree = pings.length > 0 && conns.length > 0 && answered !== connected;
  // an explanation from the nodes' state is no verdict: only a recorded ping passes
  return finding('ping-clusterip-explained', pings.length > 0 ? 'pass' : 'skip', m.title, {
    explanation: whose
      ? `${m.text} This is ${whose.node}'s mode, ${mode}, whose state is shown; the node state puts ${listFew(whose.others, 3)} in ${list(whose.modes)} mode.`
      : m.text,
    evidence,
    info: true,
    ...(disagree ? {} : { folded: true }),
    ...(mixed ? (nodes.length === 1 ? { node: nodes[0] } : { nodes }) : {}),
  });
}
