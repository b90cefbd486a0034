// A ping to a Service address where Cilium replaces kube-proxy: its BPF programs translate TCP,
// UDP (and SCTP) to a frontend; an ICMP echo meets no Service lookup and goes on unchanged, from
// wherever it is sent. Read in bpf/lib/lb.h, bpf/bpf_lxc.c, bpf/lib/nodeport.h, bpf/bpf_host.c
// and bpf/bpf_sock.c of v1.16.19, v1.18.6, v1.19.7 and v1.20.2, alike in each: no release up to
// 1.20 answers it (cilium#47130 proposes that).
import type { PingExplained, PingFacts } from '../ping.js';

/** Where an echo is sent from, as the walk tells its sender (trace-source.ts). */
export type IcmpFrom = 'pod' | 'host' | 'network';

/** Why the echo meets no Service lookup, by where it is sent from: a Pod's interface and the
 * node's device extract the tuple and skip the lookup on DROP_UNSUPP_SERVICE_PROTO; the host's
 * packets get no per-packet lookup at all (bpf_host.c runs nodeport_lb4 only `if (!from_host)`),
 * only the socket hook, which takes TCP and UDP alone (sock_proto_enabled). */
const skipped = (at: string) =>
  `bpf/lib/lb.h gives DROP_UNSUPP_SERVICE_PROTO for it, which ${at} take${at.includes(' and ') ? '' : 's'} as "skip the lookup"`;
const SKIPPED: Record<IcmpFrom | 'pod or network', string> = {
  pod: skipped('bpf_lxc.c at the Pod'),
  network: skipped('nodeport.h at the device'),
  'pod or network': skipped('bpf_lxc.c at a Pod and nodeport.h at the device'),
  host: "the host's socket hook translates TCP and UDP only (bpf_sock.c sock_proto_enabled), and bpf_host.c looks up no Service for a packet the host sends (it runs nodeport_lb4 only for traffic not from the host)",
};

/** Why an echo sent from `from` meets no Service lookup, in one clause. */
const unlooked = (from: keyof typeof SKIPPED) =>
  `an ICMP echo ${from === 'host' ? 'from the node itself meets no Service lookup' : 'skips the service lookup'} (${SKIPPED[from]})`;

/** What Cilium's datapath does with an ICMP echo to a Service address sent from `from`. */
export const ciliumIcmp = (from: IcmpFrom) =>
  `${unlooked(from)}: Cilium neither translates nor drops it`;

export function ciliumPing(p: PingFacts): PingExplained {
  return {
    title: p.answered
      ? p.title('unusual where Cilium replaces kube-proxy')
      : p.title('Cilium does not load-balance ICMP, and nothing owns a Service address'),
    text: `Where Cilium replaces kube-proxy no interface owns ${p.ip} either: Cilium's BPF programs translate ${p.protocol} to a Service's frontend (at the socket when a Pod or the node connects, at the node's device for traffic from outside), but ${unlooked('pod or network')}, and ${unlooked('host')}: Cilium neither translates nor drops it. The echo is routed on toward ${p.ip}, which nothing answers (it may circle between node and gateway until its TTL runs out, cilium#14118). No Cilium release up to 1.20 answers an echo to a Service address (1.16 to 1.20 do alike here; an opt-in responder is proposed, not released: cilium#47130)${p.answered ? '; the answer recorded here came from something else that owns the address' : ''}. ${p.curl} is translated to a backend: that is the test that counts.`,
  };
}
