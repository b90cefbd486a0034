// A ping to a Service address where Cilium replaces kube-proxy: its BPF programs translate TCP,
// UDP (and SCTP) to a frontend; an ICMP echo skips the service lookup and goes on unchanged.
// Read in bpf/lib/lb.h, bpf/bpf_lxc.c, bpf/lib/nodeport.h and bpf/bpf_sock.c of v1.16.19,
// v1.18.6, v1.19.3 and v1.20.2: no release up to 1.20 answers it (cilium#47130 proposes that).
import type { PingExplained, PingFacts } from '../ping.js';

/** What Cilium's datapath does with an ICMP echo to a Service address, in one clause. */
export const CILIUM_ICMP =
  'an ICMP echo skips the service lookup (bpf/lib/lb.h gives DROP_UNSUPP_SERVICE_PROTO for it, which bpf_lxc.c at the Pod and nodeport.h at the device take as "skip the lookup"; the socket hook serves TCP and UDP only): Cilium neither translates nor drops it';

export function ciliumPing(p: PingFacts): PingExplained {
  return {
    title: p.answered
      ? p.title('unusual where Cilium replaces kube-proxy')
      : p.title('Cilium does not load-balance ICMP, and nothing owns a Service address'),
    text: `Where Cilium replaces kube-proxy no interface owns ${p.ip} either: Cilium's BPF programs translate ${p.protocol} to a Service's frontend (at the socket when a Pod or the node connects, at the node's device for traffic from outside), but ${CILIUM_ICMP}. The echo is routed on toward ${p.ip}, which nothing answers (it may circle between node and gateway until its TTL runs out, cilium#14118). No Cilium release up to 1.20 answers an echo to a Service address (an opt-in responder is proposed, not released: cilium#47130)${p.answered ? '; the answer recorded here came from something else that owns the address' : ''}. ${p.curl} is translated to a backend: that is the test that counts.`,
  };
}
