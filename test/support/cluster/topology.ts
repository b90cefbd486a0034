// The lab cluster's addresses. Everything exists only inside network namespaces `up` creates:
//   switch       <prefix>.sw: a bridge joining the others on 192.0.2.0/24 (TEST-NET-1)
//   control plane <prefix>.cp 192.0.2.10: etcd, kube-apiserver :6443, controller-manager, scheduler
//   client       <prefix>.ws 192.0.2.100: where kdebug and kubectl run
//   nodes        <prefix>.node-a 192.0.2.21, node-b .22, node-c .23: lab-kubelet and kube-proxy
//   Pods         10.244.0.0/16, a /24 per node on its cni0 bridge; Services 10.96.0.0/16
// Dual-stack adds 2001:db8::/64 (the documentation prefix) beside TEST-NET-1 (the same last
// digits: 2001:db8::10 is the control plane), Pods fd00:10:244:<n>::/64, Services fd00:10:96::/112.
export type ProxyMode = 'iptables' | 'nftables';
export type Families = 'ipv4' | 'dual';

export interface ClusterNode {
  name: string;
  ip: string;
  podCIDR: string;
  /** Dual-stack only. */
  ip6?: string;
  podCIDR6?: string;
}

export interface Topology {
  prefix: string;
  mode: ProxyMode;
  families: Families;
  nodes: ClusterNode[];
}

export const SWITCH_IP = '192.0.2.1';
export const API_IP = '192.0.2.10';
export const CLIENT_IP = '192.0.2.100';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const SERVICE_CIDR = '10.96.0.0/16';
/** The API server's address inside the cluster: the first address of the Service CIDR. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

export const SWITCH_IP6 = '2001:db8::1';
export const CLUSTER_CIDR6 = 'fd00:10:244::/48';
export const SERVICE_CIDR6 = 'fd00:10:96::/112';

/** An IPv4 address and its IPv6 twin of the lab ("192.0.2.21" -> "2001:db8::21"). */
export const twin = (ip: string) => `2001:db8::${ip.split('.')[3]}`;

export function topology(
  prefix = 'kdc',
  mode: ProxyMode = 'iptables',
  count = 2,
  families: Families = 'ipv4',
): Topology {
  const names = ['node-a', 'node-b', 'node-c'].slice(0, count);
  return {
    prefix,
    mode,
    families,
    nodes: names.map((name, i) => {
      const ip = `192.0.2.${21 + i}`;
      return {
        name,
        ip,
        podCIDR: `10.244.${i + 1}.0/24`,
        ...(families === 'dual' ? { ip6: twin(ip), podCIDR6: `fd00:10:244:${i + 1}::/64` } : {}),
      };
    }),
  };
}
