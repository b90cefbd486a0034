// A ping to a ClusterIP in IPVS mode: kube-proxy binds every ClusterIP to kube-ipvs0 on every
// node, so the node itself answers it.
import { hostPort } from '../../ipv6.js';
import type { ClusterIpQuery, StateLine } from '../dataplane.js';
import type { PingExplained, PingFacts } from '../ping.js';
import type { IpvsTable } from './read/listing.js';

export function ipvsPing(p: PingFacts): PingExplained {
  return {
    title: p.title('in IPVS mode the node itself answers a ping'),
    text: `In IPVS mode kube-proxy binds every ClusterIP to the dummy interface kube-ipvs0 on every node, so the node owns ${p.ip} and answers the ping itself: the answer proves nothing about the Pods. ${p.curl} goes through the IPVS virtual server to an endpoint: that is the test that counts.`,
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
