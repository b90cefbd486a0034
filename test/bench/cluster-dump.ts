// A realistic current kube-proxy (1.28+) iptables-save dump for N Services x M endpoints, as one
// node (node-a) would hold it: a mix of ClusterIP, NodePort and externalTrafficPolicy=Local
// Services, some without endpoints, in large-cluster mode (> 1000 endpoints: no comments on the
// SVC -> SEP jumps and the SEP rules).
//
// IP conventions: Pod CIDR 10.128.0.0/9, Service CIDR 172.30.0.0/16, node-a 192.0.2.10.
import { kubeProxyChain, endpointChain } from '../../src/core/chain-names.js';

export interface DumpShape {
  services: number;
  endpoints: number;
}

export const CLUSTER_CIDR = '10.128.0.0/9';
const NODES = ['node-a', 'node-b', 'node-c'];

/** Probability as iptables-save prints it: kube-proxy's %0.10f, quantised to 1/2^31, %.11f. */
export function savedProbability(n: number): string {
  const payload = Number((1 / n).toFixed(10));
  return (Math.round(payload * 0x80000000) / 0x80000000).toFixed(11);
}

export interface GeneratedService {
  name: string; // ns/name:port
  clusterIP: string;
  nodePort?: number;
  local: boolean;
  endpoints: { ip: string; port: number; node: string }[];
}

export function services(shape: DumpShape): GeneratedService[] {
  const out: GeneratedService[] = [];
  for (let s = 0; s < shape.services; s++) {
    const kind = s % 10;
    const noEndpoints = s % 50 === 49;
    const endpoints = [];
    for (let e = 0; e < (noEndpoints ? 0 : shape.endpoints); e++) {
      const n = s * shape.endpoints + e;
      endpoints.push({
        ip: `10.${128 + ((n >> 16) & 127)}.${(n >> 8) & 255}.${n & 255}`,
        port: 8080,
        node: NODES[e % 3]!,
      });
    }
    endpoints.sort((a, b) => (`${a.ip}:${a.port}` < `${b.ip}:${b.port}` ? -1 : 1));
    out.push({
      name: `ns${s % 100}/svc-${s}:http`,
      clusterIP: `172.30.${(s >> 8) & 255}.${s & 255}`,
      nodePort: kind >= 6 ? 30000 + (s % 2768) : undefined,
      local: kind === 9,
      endpoints,
    });
  }
  return out;
}

export function clusterDump(shape: DumpShape): string {
  const svcs = services(shape);
  const largeCluster = svcs.reduce((n, s) => n + s.endpoints.length, 0) > 1000;
  const nat = new Map<string, string[]>();
  const add = (chain: string, rule: string) => {
    let rules = nat.get(chain);
    if (!rules) nat.set(chain, (rules = []));
    rules.push(`-A ${chain} ${rule}`);
  };
  const filter: string[] = [];
  for (const chain of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-MARK-MASQ', 'KUBE-POSTROUTING'])
    nat.set(chain, []);
  for (const s of svcs) {
    const svc = kubeProxyChain('KUBE-SVC', s.name, 'tcp');
    const svl = kubeProxyChain('KUBE-SVL', s.name, 'tcp');
    const ext = kubeProxyChain('KUBE-EXT', s.name, 'tcp');
    if (s.endpoints.length === 0) {
      filter.push(
        `-A KUBE-SERVICES -d ${s.clusterIP}/32 -p tcp -m comment --comment "${s.name} has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
      );
      if (s.nodePort) {
        filter.push(
          `-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${s.name} has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport ${s.nodePort} -j REJECT --reject-with icmp-port-unreachable`,
        );
      }
      continue;
    }
    add(
      'KUBE-SERVICES',
      `-d ${s.clusterIP}/32 -p tcp -m comment --comment "${s.name} cluster IP" -m tcp --dport 80 -j ${svc}`,
    );
    add(
      svc,
      `! -s ${CLUSTER_CIDR} -d ${s.clusterIP}/32 -p tcp -m comment --comment "${s.name} cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
    );
    const jumps = (chain: string, eps: GeneratedService['endpoints']) =>
      eps.forEach((ep, i) => {
        const sep = endpointChain(s.name, 'tcp', `${ep.ip}:${ep.port}`);
        const comment = largeCluster
          ? ''
          : ` -m comment --comment "${s.name} -> ${ep.ip}:${ep.port}"`;
        const stat =
          i < eps.length - 1
            ? ` -m statistic --mode random --probability ${savedProbability(eps.length - i)}`
            : '';
        add(chain, `${comment}${stat} -j ${sep}`.trimStart());
      });
    jumps(svc, s.endpoints);
    for (const ep of s.endpoints) {
      const sep = endpointChain(s.name, 'tcp', `${ep.ip}:${ep.port}`);
      const comment = largeCluster ? '' : ` -m comment --comment "${s.name}"`;
      add(sep, `-s ${ep.ip}/32${comment} -j KUBE-MARK-MASQ`);
      add(sep, `-p tcp${comment} -m tcp -j DNAT --to-destination ${ep.ip}:${ep.port}`);
    }
    if (s.nodePort) {
      add(
        'KUBE-NODEPORTS',
        `-p tcp -m comment --comment "${s.name}" -m tcp --dport ${s.nodePort} -j ${ext}`,
      );
      if (s.local) {
        const local = s.endpoints.filter((e) => e.node === 'node-a');
        add(
          ext,
          `-s ${CLUSTER_CIDR} -m comment --comment "pod traffic for ${s.name} external destinations" -j ${svc}`,
        );
        add(
          ext,
          `-m comment --comment "masquerade LOCAL traffic for ${s.name} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        );
        add(
          ext,
          `-m comment --comment "route LOCAL traffic for ${s.name} external destinations" -m addrtype --src-type LOCAL -j ${svc}`,
        );
        add(ext, `-j ${svl}`);
        jumps(svl, local);
      } else {
        add(
          ext,
          `-m comment --comment "masquerade traffic for ${s.name} external destinations" -j KUBE-MARK-MASQ`,
        );
        add(ext, `-j ${svc}`);
      }
    }
  }
  add(
    'KUBE-SERVICES',
    '-m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
  );
  add('KUBE-MARK-MASQ', '-j MARK --set-xmark 0x4000/0x4000');
  add('KUBE-POSTROUTING', '-m mark ! --mark 0x4000/0x4000 -j RETURN');
  add('KUBE-POSTROUTING', '-j MARK --set-xmark 0x4000/0x0');
  add(
    'KUBE-POSTROUTING',
    '-m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
  );
  const chains = [...nat.keys()].sort();
  const header = '# Generated by iptables-save v1.8.9 (nf_tables) on Sun Nov 29 08:56:34 2026';
  return [
    header,
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':KUBE-EXTERNAL-SERVICES - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    ...filter.filter((r) => r.startsWith('-A KUBE-EXTERNAL-SERVICES')),
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    ...filter.filter((r) => r.startsWith('-A KUBE-SERVICES')),
    'COMMIT',
    '# Completed on Sun Nov 29 08:56:34 2026',
    header,
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ...chains.map((c) => `:${c} - [0:0]`),
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    ...chains.flatMap((c) => nat.get(c)!),
    'COMMIT',
    '# Completed on Sun Nov 29 08:56:34 2026',
    '',
  ].join('\n');
}
