// A ping to a ClusterIP in IPVS mode: kube-proxy binds every ClusterIP to kube-ipvs0 on every
// node, so the node itself answers it (said beside what the recorded ping and connection saw).
import { hostPort } from '../../ipv6.js';
import type { ClusterIpQuery, StateLine } from '../dataplane.js';
import type { PingExplained, PingFacts } from '../ping.js';
import type { IpvsTable } from './read/listing.js';

export function ipvsPing(p: PingFacts): PingExplained {
  // what was recorded is said as it was: a ping with no reply is never "answered by the node"
  const unanswered = p.pinged && !p.answered;
  // a node whose kube-ipvs0 was read without the address would not answer: said, as step 7 says
  const missing = p.notHeldOn;
  const nodes = missing.length === 1 ? `node ${missing[0]}` : `nodes ${missing.join(', ')}`;
  return {
    title: p.title(
      unanswered
        ? 'unusual in IPVS mode, where the node answers a ping itself'
        : missing.length > 0
          ? `in IPVS mode a node answers a ping itself only where ${p.ip} is on kube-ipvs0, not on ${nodes}`
          : 'in IPVS mode the node itself answers a ping',
    ),
    text: `In IPVS mode kube-proxy binds every ClusterIP to the dummy interface kube-ipvs0 on every node, so a node that holds ${p.ip} there answers a ping to it itself: an answer proves nothing about the Pods. ${
      missing.length > 0
        ? `On ${nodes} no interface holds ${p.ip} (ip -br addr), so ${missing.length === 1 ? 'that node' : 'those nodes'} would not answer a ping to it. `
        : ''
    }${
      unanswered
        ? `The ping recorded here got no reply${p.silent ? ' at all' : ''}: the node did not answer for ${p.ip} as IPVS mode makes it (the address is not bound to kube-ipvs0, which the ip -br addr line shows where it was read, or something dropped the ping), or it is not in IPVS mode after all. `
        : ''
    }${p.curl} ${
      p.connection === 'forwarded'
        ? 'is forwarded to an endpoint'
        : p.connection === 'rejected'
          ? "is refused right now: the node's IPVS virtual server has no real server, so the kernel answers ICMP port unreachable; once it has some, it goes to one of them"
          : // the virtual server was not read: what kube-proxy writes, not what the node holds
            'goes through the IPVS virtual server kube-proxy writes to an endpoint (or is refused while the virtual server has no real server)'
    }: that is the test that counts.`,
  };
}

/** The virtual server of the Service port: it takes that port only (the node answers a ping
 * because it owns the address on kube-ipvs0, which the Reachability step shows). */
export function ipvsClusterIpLines(
  table: IpvsTable,
  source: string,
  q: ClusterIpQuery,
): StateLine[] {
  const address = hostPort(q.ip, q.port);
  const protocol = q.protocol.toLowerCase();
  const vs = table.services.find((s) => s.address === address && s.protocol === protocol);
  const n = vs?.realServers.length ?? 0;
  return [
    {
      text: vs
        ? `${source}:${vs.line}: virtual server ${vs.protocol.toUpperCase()} ${address} -> ${n} real server${n === 1 ? '' : 's'}`
        : `${source}: no virtual server ${q.protocol} ${address}`,
      source,
    },
  ];
}
