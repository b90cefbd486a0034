// Where a walked packet is: the node's own addresses (addrtype LOCAL, fib type local) and the
// interface it arrives on or leaves by, from the node's recorded interfaces. Shared by the
// iptables and the nftables walks.
import type { NodeNetwork } from './trace.js';
import {
  anyCidr,
  formatAddress,
  holds,
  type Address,
  type AnyCidr,
  type PacketState,
} from './packet.js';

export class NodeRoutes {
  private readonly local: AnyCidr[];
  private readonly ifaces: { name: string; cidr: AnyCidr }[];

  constructor(private readonly net: NodeNetwork) {
    this.local = [...net.localAddresses.map((a) => a.split('/')[0]!), '127.0.0.0/8', '::1/128']
      .map(anyCidr)
      .filter((c): c is AnyCidr => c !== undefined);
    this.ifaces = net.interfaces.flatMap((i) =>
      i.cidrs.flatMap((c) => {
        const cidr = anyCidr(c);
        // a host address (/32, /128) is no network to route by
        return cidr && cidr.bits < ('v4' in cidr ? 32 : 128) ? [{ name: i.name, cidr }] : [];
      }),
    );
  }

  isLocal = (a: Address) => this.local.some((l) => holds(l, a));

  /** Sets the interface a packet arrives on or leaves by: the one whose network holds the
   * address, else the default one (a guess, noted when a rule looks at it), else unknown. */
  route(pkt: PacketState, side: 'in' | 'out', address: Address | undefined): void {
    const key = side === 'in' ? 'inInterface' : 'outInterface';
    if (pkt.guessed) delete pkt.guessed[side];
    if (address === undefined) {
      pkt[key] = 'lo';
      return;
    }
    const hit = this.ifaces
      .filter((i) => holds(i.cidr, address))
      .sort((a, b) => b.cidr.bits - a.cidr.bits)[0];
    if (hit) pkt[key] = hit.name;
    else if (this.net.defaultInterface) {
      pkt[key] = this.net.defaultInterface;
      pkt.guessed = {
        ...pkt.guessed,
        [side]: `${formatAddress(address)} is taken to be ${side === 'in' ? 'reached through' : 'reached by'} ${this.net.defaultInterface}, the interface of the node's own IP (routes are not recorded)`,
      };
    } else pkt[key] = '?';
  }
}
