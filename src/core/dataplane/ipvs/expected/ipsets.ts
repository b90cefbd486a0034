// kube-proxy's ipsets in IPVS mode, as every release 1.30-1.37 makes them: their names per family,
// types, the comments its iptables rules carry for them (pkg/proxy/ipvs/ipset.go, proxier.go
// ipsetInfo) and the options it creates them with (pkg/proxy/ipvs/ipset/ipset.go createSet).
import type { IPFamily } from '../../../ipv6.js';

/** Each set kube-proxy creates (ipsetInfo's order), with its type and the comment of its rules. */
export const IPSETS = {
  'KUBE-LOOP-BACK': {
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose',
  },
  'KUBE-CLUSTER-IP': {
    type: 'hash:ip,port',
    comment: 'Kubernetes service cluster ip + port for masquerade purpose',
  },
  'KUBE-EXTERNAL-IP': {
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port for masquerade and filter purpose',
  },
  'KUBE-EXTERNAL-IP-LOCAL': {
    type: 'hash:ip,port',
    comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local',
  },
  'KUBE-LOAD-BALANCER': { type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  'KUBE-LOAD-BALANCER-FW': {
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange',
  },
  'KUBE-LOAD-BALANCER-LOCAL': {
    type: 'hash:ip,port',
    comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local',
  },
  'KUBE-LOAD-BALANCER-SOURCE-IP': {
    type: 'hash:ip,port,ip',
    comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose',
  },
  'KUBE-LOAD-BALANCER-SOURCE-CIDR': {
    type: 'hash:ip,port,net',
    comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose',
  },
  'KUBE-NODE-PORT-TCP': {
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport TCP port for masquerade purpose',
  },
  'KUBE-NODE-PORT-LOCAL-TCP': {
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local',
  },
  'KUBE-NODE-PORT-UDP': {
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport UDP port for masquerade purpose',
  },
  'KUBE-NODE-PORT-LOCAL-UDP': {
    type: 'bitmap:port',
    comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local',
  },
  'KUBE-NODE-PORT-SCTP-HASH': {
    type: 'hash:ip,port',
    comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
  },
  'KUBE-NODE-PORT-LOCAL-SCTP-HASH': {
    type: 'hash:ip,port',
    comment:
      "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'",
  },
  'KUBE-HEALTH-CHECK-NODE-PORT': {
    type: 'bitmap:port',
    comment: 'Kubernetes health check node port',
  },
  'KUBE-IPVS-IPS': { type: 'hash:ip', comment: 'Addresses on the ipvs interface' },
} as const;

export type IpsetBase = keyof typeof IPSETS;

/** An ipset's name in a family: IPv6 sets are KUBE-6-... (at most 31 characters). */
export const ipsetName = (name: string, family: IPFamily) =>
  family === 'IPv6' ? name.replace(/^KUBE-/, 'KUBE-6-').slice(0, 31) : name;

/** `ipset create` as kube-proxy runs it: a hash set's family and its default size (hashsize 1024,
 * maxelem 65536), a bitmap's whole port range. */
export function createLine(base: IpsetBase, family: IPFamily): string {
  const { type } = IPSETS[base];
  const options =
    type === 'bitmap:port'
      ? 'range 0-65535'
      : `family ${family === 'IPv6' ? 'inet6' : 'inet'} hashsize 1024 maxelem 65536`;
  return `create ${ipsetName(base, family)} ${type} ${options}`;
}
