// What ipvsadm's printing does to the names of its names view (`ipvsadm -l` without -n), as its
// print_service_entry writes each line: an IPv4 virtual server's "PROTO  host:port" is cut at 33
// characters and a real server's "host:port" at 28 (IPv6 ones are not cut), and two addresses that
// resolve to one host name print the same. Numbers never reach those widths.

/** The width ipvsadm cuts an IPv4 real server's "host:port" at. */
const REAL_SERVER_WIDTH = 28;
/** The width it cuts an IPv4 virtual server's "PROTO  host:port" at. */
const VIRTUAL_SERVER_WIDTH = 33;

/** Whether ipvsadm may have cut this virtual server's printed address (its port lost or short):
 * it fills the width (a name that ended exactly there is not told from a cut one). */
export const virtualNameCut = (protocol: string, address: string): boolean =>
  !address.startsWith('[') && `${protocol}  ${address}`.length >= VIRTUAL_SERVER_WIDTH;

/** The same of a real server's printed address. */
export const realNameCut = (address: string): boolean =>
  !address.startsWith('[') && address.length >= REAL_SERVER_WIDTH;
