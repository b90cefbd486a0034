// A ping to a Service address where Cilium replaces kube-proxy: its BPF programs translate TCP
// and UDP to a frontend and drop an ICMP echo (no release up to 1.20 answers it).
import type { PingExplained, PingFacts } from '../ping.js';

export function ciliumPing(p: PingFacts): PingExplained {
  return {
    title: p.answered
      ? p.title('unusual where Cilium replaces kube-proxy')
      : p.title('Cilium drops ICMP to a Service address'),
    text: `Where Cilium replaces kube-proxy no interface owns ${p.ip} either: Cilium's BPF programs translate ${p.protocol} to a Service's frontend (at the socket when a Pod or the node connects, at the node's device for traffic from outside) and drop an ICMP echo to a Service address as an unsupported protocol (no Cilium release up to 1.20 answers it)${p.answered ? '; the answer recorded here came from something else that owns the address' : ''}. ${p.curl} is translated to a backend: that is the test that counts.`,
  };
}
