// A packet walked through a node in IPVS mode, as the kernel handles it: routing first (IPVS sees
// only packets for a local address: a node address, or a VIP kube-proxy bound to kube-ipvs0),
// then the virtual server of the packet's protocol and address, which picks a real server by its
// share (schedulers.ts: one each for rr, by weight for wrr, none fixed for the others) and sends
// it on by the real server's forwarding method (forwarding.ts: kube-proxy's Masq rewrites the
// destination); no real server: the kernel answers ICMP port unreachable. A local address no virtual server takes is the node's
// own: it answers a ping itself. Masquerading follows kube-proxy's nat rules for the ipsets.
import { IPVS_SERVICE_FLAG } from '../../../nodes/commands.js';
import type { IpvsRead } from '../dataplane.js';
import { containsAny, hostPort } from '../../../ipv6.js';
import { percent } from '../../../model.js';
import { serverKey } from '../read/by-address.js';
import {
  rejectRuleOn,
  type MatchedRule,
  type NodeNetwork,
  type TraceOutcome,
  type TracePacket,
  type TraceResult,
} from '../../trace/trace.js';
import { sharesOf } from '../schedulers.js';
import { FORWARD_FLAG, sentTo } from '../forwarding.js';

export interface IpvsTraceOptions {
  /** kube-proxy's clusterCIDR: traffic from outside it to a Service is masqueraded. */
  clusterCIDR?: string;
  masqueradeAll: boolean;
}

// ipvsadm's flag for a virtual server of each protocol, and of a firewall mark
const FLAG = { ...IPVS_SERVICE_FLAG, fwmark: '-f' } as const;

export function traceIpvsPacket(
  read: Pick<IpvsRead, 'table' | 'bound' | 'byAddress'>,
  net: NodeNetwork,
  packet: TracePacket,
  o: IpvsTraceOptions,
): TraceResult {
  const { dst, src, protocol } = packet;
  const notes = [
    "IPVS mode: the node's virtual servers and its addresses are walked; the nat table's rules only mark what is masqueraded",
  ];
  const assumptions: string[] = [];
  const bound = read.bound?.has(dst);
  if (read.bound === undefined)
    assumptions.push(
      `the addresses of kube-ipvs0 were not read: the virtual servers' addresses are taken as bound there, as kube-proxy binds them`,
    );
  const address = hostPort(dst, packet.dport ?? 0);
  const vs =
    protocol === 'icmp'
      ? undefined
      : read.table.services.find((s) => s.protocol === protocol && s.address === address);
  const name = `${protocol.toUpperCase()} ${address}`;
  // a listing cut short: the virtual server may be past the cut (and its address bound for it)
  const pastCut = !vs && protocol !== 'icmp' ? read.table.cut : undefined;
  const owned = bound || net.localAddresses.includes(dst) || (read.bound === undefined && !!vs);
  const local = owned || (read.bound === undefined && pastCut !== undefined);
  const routing: MatchedRule = {
    table: 'routing',
    chain: 'local',
    line: 0,
    rule: bound
      ? `${dst} is bound to kube-ipvs0 (ip -br addr)`
      : owned
        ? `${dst} is an address of this node`
        : local
          ? `${dst} is bound to kube-ipvs0 if a virtual server past the cut has it (kube-ipvs0 not read)`
          : `${dst} is not an address of this node`,
    effect: local ? 'delivered locally: IPVS sees it' : 'routed on: IPVS never sees it',
  };
  const outcome = (o: Partial<TraceOutcome> & Pick<TraceOutcome, 'rules'>): TraceOutcome => ({
    probability: 1,
    destination: null,
    masquerade: false,
    verdict: 'ACCEPT',
    delivery: 'local',
    mark: 0,
    assumptions,
    ...o,
  });
  const enters = 'routing, then the IPVS virtual servers at local delivery';
  if (!local)
    return {
      packet,
      enters,
      notes,
      outcomes: [outcome({ delivery: 'forward', rules: [routing] })],
    };
  // read by address, or a listing cut short: a virtual server not read may be there or not
  const unread =
    protocol === 'icmp' || vs
      ? undefined
      : read.byAddress && !read.byAddress.virtualServers.has(serverKey({ protocol, address }))
        ? `the virtual server ${name} was not read (only the Service's own were, by address)`
        : pastCut !== undefined
          ? `the listing is cut at line ${pastCut}: the virtual server ${name} may be past it, not read`
          : undefined;
  if (unread) {
    assumptions.push(`${unread}: what IPVS does with the packet is not known`);
    const rule: MatchedRule = {
      table: 'ipvs',
      chain: '',
      line: 0,
      rule: `virtual server ${name} not read`,
      effect: 'skipped',
    };
    return { packet, enters, notes, outcomes: [outcome({ rules: [routing, rule] })] };
  }
  if (!vs) {
    const rule: MatchedRule = {
      table: 'ipvs',
      chain: '',
      line: 0,
      rule: `no virtual server ${protocol === 'icmp' ? 'takes icmp' : `${protocol.toUpperCase()} ${address}`}`,
      effect:
        protocol === 'icmp'
          ? 'the node answers the echo itself'
          : 'delivered to the node itself, where nothing of the Service listens',
    };
    return { packet, enters, notes, outcomes: [outcome({ rules: [routing, rule] })] };
  }
  const vsRule = (effect: string): MatchedRule => ({
    table: 'ipvs',
    chain: `${vs.protocol.toUpperCase()} ${vs.address}`,
    line: vs.line,
    rule: `-A ${FLAG[vs.protocol]} ${vs.address}${vs.scheduler !== undefined ? ` -s ${vs.scheduler}` : ''}${vs.persistent !== undefined ? ` -p ${vs.persistent}` : ''}`,
    effect,
  });
  // a weight not in the listing (--stats, --rate, a row without its columns) may be live
  const live = vs.realServers.filter((r) => r.weight === undefined || r.weight > 0);
  if (live.length === 0)
    return {
      packet,
      enters,
      notes,
      outcomes: [
        outcome({
          destination: 'REJECT',
          verdict: 'REJECT',
          rules: [routing, vsRule('no real server: the kernel answers ICMP port unreachable')],
        }),
      ],
    };
  // with a weight not in the listing no real server's share is known, a lone one's included (at
  // weight 0 it takes nothing)
  const unweighed = live.some((r) => r.weight === undefined);
  const picked = sharesOf(
    vs.scheduler,
    live.map((r) => r.weight ?? 0),
  );
  // a virtual server read in part (cut inside its real servers, filtered): more may take a share
  const shareUnknown = unweighed
    ? 'weight not in the listing'
    : (vs.partial ?? ('unknown' in picked ? picked.unknown : undefined));
  if (vs.partial)
    assumptions.push(`${vs.partial}: real servers not read may take a share, so none is known`);
  if (unweighed)
    assumptions.push(
      `a real server's weight is not in the listing: the share of each is not known`,
    );
  const fromOutside = o.clusterCIDR === undefined || !containsAny(o.clusterCIDR, src);
  const marked =
    o.masqueradeAll || fromOutside
      ? `KUBE-CLUSTER-IP: ${o.masqueradeAll ? 'masqueradeAll' : `from outside ${o.clusterCIDR ?? 'the cluster CIDR (not configured)'}`}`
      : undefined;
  return {
    packet,
    enters,
    notes,
    outcomes: live.map((r, i) => {
      const p = shareUnknown || !('shares' in picked) ? 0 : picked.shares[i]!;
      const sent = sentTo(r, { src, to: address }, marked);
      const flag = r.forward !== undefined ? FORWARD_FLAG[r.forward] : undefined;
      return outcome({
        probability: p,
        ...(shareUnknown ? { shareUnknown } : {}),
        ...sent.outcome,
        assumptions: [...assumptions, ...sent.assumptions],
        rules: [
          routing,
          vsRule(
            shareUnknown
              ? `${live.length === 1 ? 'one real server' : 'a branch'}, its share not known: ${shareUnknown}`
              : live.length === 1
                ? 'one real server'
                : `${percent(p)} branch`,
          ),
          {
            table: 'ipvs',
            chain: `${vs.protocol.toUpperCase()} ${vs.address}`,
            line: r.line,
            rule: `-a ${FLAG[vs.protocol]} ${vs.address} -r ${r.address}${flag ? ` ${flag}` : ''}${r.weight !== undefined ? ` -w ${r.weight}` : ''}`,
            effect: sent.effect,
          },
        ],
      });
    }),
  };
}

/** What rejected a connection the walk rejected: the virtual server it ended at, without a real
 * server, else (a rule of kube-proxy's iptables beside it) the REJECT rule. */
export function ipvsRejectedBy(walked: TraceResult, node: string): string {
  const last = walked.outcomes[0]?.rules.at(-1);
  return last?.table === 'ipvs'
    ? `by the IPVS virtual server ${last.chain} on ${node}, which has ${last.effect}`
    : rejectRuleOn(node);
}
