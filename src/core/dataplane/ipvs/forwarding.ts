// How the kernel sends a packet to the real server IPVS picked, by the real server's forwarding
// method (net/netfilter/ipvs/ip_vs_xmit.c): Masq rewrites the destination to the real server
// (ip_vs_nat_xmit); Route, direct routing, sends the packet as it is with the real server as the
// next hop, so only its MAC changes (ip_vs_dr_xmit); Tunnel puts it inside a new IP header to the
// real server (ip_vs_tunnel_xmit); Local, a real server at the node's own address, passes it up
// unchanged. kube-proxy writes Masq only; LVS nodes use the others.
import type { IpvsRealServer } from './read/listing.js';
import type { TraceOutcome } from '../trace/trace.js';
import { hostAndPort } from './read/addresses.js';

/** Each method's flag as ipvsadm-save writes it (fwd_switch: Local is saved as -g). */
export const FORWARD_FLAG: Readonly<Record<string, string>> = {
  Masq: '-m',
  Route: '-g',
  Tunnel: '-i',
  Local: '-g',
};

/** What becomes of the packet a real server is picked for: the outcome's fields, the effect of
 * its line, and what the walk takes as so without the listing showing it. */
export interface Sent {
  outcome: Pick<TraceOutcome, 'destination' | 'dnat' | 'forward' | 'delivery' | 'masquerade'>;
  effect: string;
  assumptions: string[];
}

/** The packet from `src` for `to` (the virtual server's IP:PORT) sent to real server `r`;
 * `marked`: why kube-proxy's nat rules mark it for masquerading before IPVS, where they do. */
export function sentTo(
  r: IpvsRealServer,
  { src, to }: { src: string; to: string },
  marked: string | undefined,
): Sent {
  const host = hostAndPort(r.address)?.host ?? r.address;
  const vip = hostAndPort(to)?.host ?? to;
  // KUBE-LOOP-BACK matches the real server as the destination: a DNAT to the sender itself
  const masquerade = host === src ? 'KUBE-LOOP-BACK: a Pod sent to itself' : marked;
  const masqueraded = (why: string | undefined) => (why ? `, masqueraded (${why})` : '');
  const notChecked = 'not in the listing: kdebug does not check it';
  switch (r.forward) {
    case 'Route':
      return {
        outcome: {
          destination: r.address,
          forward: 'route',
          delivery: 'forward',
          masquerade: !!marked,
        },
        effect: `direct routing to ${host}: destination ${to} kept, only the MAC rewritten${masqueraded(marked)}`,
        assumptions: [
          `${host} holds ${vip} (on lo, say) to take the packet, still addressed to ${vip}, and is on a network this node reaches without a router (only the MAC is rewritten): ${notChecked}`,
        ],
      };
    case 'Tunnel':
      // the inner packet keeps the client's address: the new header's source is this node's
      return {
        outcome: {
          destination: r.address,
          forward: 'tunnel',
          delivery: 'forward',
          masquerade: false,
        },
        effect: `IP-in-IP to ${host}: the packet, destination ${to} and source kept, inside a new IP header from this node`,
        assumptions: [
          `${host} takes IP-in-IP (a tunnel device up) and holds ${vip} to take the packet inside: ${notChecked}; ipvsadm -L prints Tunnel for its GUE and GRE tunnels too (--tun-type), taken here as IPIP, its default`,
        ],
      };
    case 'Local':
      return {
        outcome: { destination: r.address, forward: 'local', delivery: 'local', masquerade: false },
        effect: `${host} is this node's own address: passed up unchanged, destination ${to} kept`,
        assumptions: [],
      };
    default:
      return {
        outcome: {
          destination: r.address,
          dnat: r.address,
          delivery: 'forward',
          masquerade: !!masquerade,
        },
        effect: `DNAT ${r.address}${masqueraded(masquerade)}`,
        assumptions:
          r.forward === 'Masq'
            ? []
            : [
                r.forward === undefined
                  ? 'the forwarding method is not in this view: taken as masquerading (DNAT), the only one kube-proxy writes'
                  : `forwarding ${r.forward} is none of the kernel's (DPVS's ipvsadm prints it): taken as masquerading (DNAT)`,
              ],
      };
  }
}
