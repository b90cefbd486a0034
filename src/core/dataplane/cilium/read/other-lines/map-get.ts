// `cilium map get cilium_lb4_services_v2` (and _backends, _reverse_nat): the agent's map API prints
// each entry's String(). Through 1.8 lbmap's String() printed the port as the BPF map stores it, in
// network byte order (pkg/maps/lbmap/ipv4.go at v1.8.0 and v1.8.4: "%s:%d" of k.Port); 1.9.0
// converts it first (ToHost, cilium#13244) and brackets an IPv6 address (net.JoinHostPort). So an
// IPv6 key without brackets is 1.8's, its ports swapped; one with them 1.9's, as printed; IPv4 alone
// does not tell the two apart, and both readings are said.

/** A services entry ("ADDR:PORT[/i]  ID (REVNAT) [FLAGS: 0x..]  sync"), a backend's value
 * ("ID  PROTO://ADDR:PORT  sync") and a reverse-NAT value ("ID  ADDR:PORT  sync"). */
const SERVICE = /^\s*(\S+):(\d+)(?:\/i)?\s+\d+ \(\d+\) \[FLAGS: 0x[\da-f]+\]/;
const BACKEND = /^\s*\d+\s+[A-Z]+:\/\/(\S+):(\d+)\s/;
const REV_NAT = /^\s*\d+\s+(\S+):(\d+)\s+\w+\s*$/;

const swapped = (port: number) => ((port & 0xff) << 8) | (port >> 8);

/** What kdebug says of the ports a paste of `cilium map get` of the load-balancer maps prints:
 * byte-swapped (1.8 and before) or as printed (1.9 on), each printed port with its swap; undefined
 * where it holds no such entry, or its form proves the ports converted. */
export function mapGetPortsSaid(text: string): string | undefined {
  const printed: number[] = [];
  let bracketed = false;
  let bare = false;
  for (const line of text.split('\n')) {
    const m = SERVICE.exec(line) ?? BACKEND.exec(line) ?? REV_NAT.exec(line);
    if (!m) continue;
    const address = m[1]!;
    // an IPv6 address: in brackets from 1.9 (JoinHostPort), bare through 1.8
    if (address.startsWith('[')) bracketed = true;
    else if (address.includes(':')) bare = true;
    const port = Number(m[2]);
    if (!printed.includes(port)) printed.push(port);
  }
  if (printed.length === 0 || (bracketed && !bare)) return undefined;
  const pairs = printed
    .filter((p) => swapped(p) !== p)
    .map((p) => `${p} is ${swapped(p)}`)
    .join(', ');
  if (pairs === '') return undefined;
  const why =
    "Cilium through 1.8 printed these maps' ports as the BPF map stores them, in network byte order (1.9 converts them, cilium#13244)";
  return bare
    ? `${why}, and its IPv6 addresses without brackets are 1.8's: on a little-endian node (x86, most arm64) ${pairs}`
    : `${why}; IPv4 entries do not show which printed these: from 1.8 or earlier on a little-endian node (x86, most arm64) ${pairs}, from 1.9 on the ports are as printed`;
}
