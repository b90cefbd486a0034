// The packet walk (dataplane/trace/) as evidence lines: what kube-proxy's rules on a node do to one
// packet a process on that node sends, e.g. an ICMP echo or a TCP SYN to a ClusterIP.
import {
  rejectRuleOn,
  shareText,
  type TraceOutcome,
  type TraceProtocol,
} from '../../dataplane/trace/trace.js';
import type { Traced } from '../../dataplane/trace/answer.js';
import type { CheckContext } from '../context.js';
import { hostPort, type IPFamily } from '../../ipv6.js';
import { computed } from '../../findings/evidence.js';
import type { Evidence } from '../../model.js';

export interface WalkRequest {
  dst: string;
  port?: number;
  proto: string;
}

/** The node's rules of the destination's family: an IPv6 packet walks the IPv6 rules. */
const familyOf = (ip: string): IPFamily => (ip.includes(':') ? 'IPv6' : 'IPv4');
const rulesFor = (ctx: CheckContext, node: string, dst: string) =>
  ctx.analysis.node(node, undefined, familyOf(dst));

/** The walk of one packet from the node itself, where its rules were read: from the node's own
 * address of the destination's family, through that family's rules; with `fromPod`, from a Pod
 * on that node (through nat PREROUTING), where the objects place one there. */
function walk(
  ctx: CheckContext,
  node: string,
  r: WalkRequest,
  fromPod = false,
): ({ src: string } & Traced) | undefined {
  const family = familyOf(r.dst);
  const src = fromPod
    ? ctx.view.pods
        .filter((p) => p.nodeName === node && !p.hostNetwork)
        .flatMap((p) => p.podIPs)
        .find((ip) => familyOf(ip) === family)
    : ctx.view.nodes.find((n) => n.name === node)?.ips.find((ip) => familyOf(ip) === family);
  const n = rulesFor(ctx, node, r.dst);
  if (!n.dataplane() || !src) return undefined;
  try {
    // the walk trace shows: where the rules were not wholly read, it stops there
    const walked = n.traced({
      src,
      dst: r.dst,
      dport: r.port,
      protocol: r.proto as TraceProtocol,
      fromHost: !fromPod,
    });
    return { src, ...walked };
  } catch {
    return undefined; // the walk is supporting evidence; its absence is not a finding
  }
}

/** "walked: on NODE, icmp 10.0.12.7 -> 10.1.190.219: no rule matched it: routed unchanged". */
export function packetWalk(
  ctx: CheckContext,
  node: string,
  r: WalkRequest,
  fromPod = false,
): Evidence[] {
  const w = walk(ctx, node, r, fromPod);
  if (!w) return [];
  const { src, result, stop } = w;
  const head = `on ${node}, ${r.proto} ${src} -> ${r.port !== undefined && r.proto !== 'icmp' ? hostPort(r.dst, r.port) : r.dst}:`;
  const outcomes = result.outcomes.map((o, i) =>
    // past what a cut hid the packet's fate was not read: never "the node answers it"
    stop?.partly[i]?.length
      ? `not known: the walk stops at ${stop.partly[i].join(', ')}, which the rules read (cut short) do not hold whole`
      : absentOf(o)
        ? `${result.outcomes.length > 1 ? `${shareText(o)} ` : ''}not known: it jumps to ${absentOf(o)}, which the rules read do not hold`
        : o.destination === null
          ? o.delivery === 'local'
            ? 'delivered to the node itself, which answers it'
            : 'no rule matched it: routed unchanged'
          : `${result.outcomes.length > 1 ? `${shareText(o)} ` : ''}${o.destination === 'REJECT' || o.destination === 'DROP' ? o.destination : o.dnat ? `DNAT to ${o.dnat}` : `sent to ${o.destination}`}${o.masquerade ? ', masqueraded' : ''}${o.assumptions.length > 0 ? ` (assumes: ${o.assumptions.join('; ')})` : ''}`,
  );
  // computed over the node's observed rules: it explains, it does not prove
  return [computed(`${head} ${outcomes.join('; ') || 'no outcome'}`, 'walked')];
}

/** What a node's rules do to a new connection: every outcome DNATed to an endpoint (forwarded),
 * every one rejected, or something else; undefined where the rules of its mode were not read. */
export type ConnectionFate = 'forwarded' | 'rejected' | 'other';

export function connectionFate(
  ctx: CheckContext,
  node: string,
  r: WalkRequest,
): ConnectionFate | undefined {
  const n = rulesFor(ctx, node, r.dst);
  // another mode's rules (the iptables dump of an nftables node) say nothing of what it does
  if (n.dataplane()?.mode !== n.mode()) return undefined;
  const w = walk(ctx, node, r);
  const outcomes = w?.result.outcomes;
  if (!outcomes) return undefined;
  // an outcome past a cut is not known: neither forwarded nor rejected
  if (w?.stop?.partly.some((p) => p.length > 0)) return 'other';
  if (outcomes.length > 0 && outcomes.every((o) => o.dnat !== undefined && o.verdict === 'ACCEPT'))
    return 'forwarded';
  if (outcomes.length > 0 && outcomes.every((o) => o.verdict === 'REJECT')) return 'rejected';
  return 'other';
}

/** What rejected a connection the node's rules reject, in the words of its mode's walk: IPVS's
 * virtual server without a real server, or the REJECT rule kube-proxy writes (iptables,
 * nftables) for a Service port without ready endpoints. */
export function rejectedBy(ctx: CheckContext, node: string, r: WalkRequest): string {
  const walked = walk(ctx, node, r)?.result;
  const dataplane = rulesFor(ctx, node, r.dst).dataplane();
  return walked && dataplane ? dataplane.rejectedBy(walked, node) : rejectRuleOn(node);
}

/** Where a Pod's connection on `node` never reaches the Service rules a probe from the node
 * reaches (nat PREROUTING without its jump to KUBE-SERVICES): both walks' entries, and the
 * chain that lacks the jump. Undefined where it does reach them, or no Pod there to walk from. */
export function podEntrySkipped(
  ctx: CheckContext,
  node: string,
  r: WalkRequest,
): { pods: string; host: string; skipped: { from: string; to: string } } | undefined {
  const pod = walk(ctx, node, r, true);
  const skipped = pod?.result.servicesSkipped;
  if (!pod || !skipped || pod.stop) return undefined;
  const host = walk(ctx, node, r);
  return host && { pods: pod.result.enters, host: host.result.enters, skipped };
}

/** The share of new connections the node's own rules (from the node itself, and from a Pod
 * there) do not take to an endpoint: routed unchanged, rejected, dropped, or sent to a chain the
 * rules do not hold. Undefined where none is, or a walk was not made whole (a read cut short):
 * nothing is said of what was not walked. */
export function connectionsLost(
  ctx: CheckContext,
  node: string,
  r: WalkRequest,
): { share: number; unknown: boolean } | undefined {
  const walks = [walk(ctx, node, r), walk(ctx, node, r, true)].filter((w) => w !== undefined);
  if (walks.length === 0 || walks.some((w) => w.stop)) return undefined;
  // the worse of the two entries: a Pod's connections may take a path the node's do not
  const lost = walks
    .map((w) =>
      w.result.outcomes.filter(
        (o) => o.verdict !== 'ACCEPT' || isUnrouted(o) || absentOf(o) !== undefined,
      ),
    )
    .sort((a, b) => share(b) - share(a))[0]!;
  if (lost.length === 0) return undefined;
  return { share: share(lost), unknown: lost.some((o) => o.shareUnknown !== undefined) };
}

/** No rule changed it, and the node does not take it itself: it leaves for the default route. */
const isUnrouted = (o: TraceOutcome) => o.destination === null && o.delivery === 'forward';
/** It passed a jump to a chain the rules read do not hold: where it really goes is not shown. */
const absentOf = (o: TraceOutcome) => o.rules.find((m) => m.absent !== undefined)?.absent;
const share = (os: TraceOutcome[]) => os.reduce((n, o) => n + o.probability, 0);
