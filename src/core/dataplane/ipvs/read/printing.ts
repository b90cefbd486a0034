// How ipvsadm prints its listings, for a reader to tell a cut from a line of its own (an
// author's elision is every reader's: ../../paste/elisions.ts):
// print_title prints each column title whole; print_service_entry cuts an IPv4 virtual server's
// "PROTO  host:port" at 33 characters and a real server's "host:port" at 28 (IPv6 ones are not cut),
// which only names (`ipvsadm -l` without -n) reach, and two addresses that resolve to one host name
// print the same.

/** The width ipvsadm cuts an IPv4 real server's "host:port" at. */
export const REAL_SERVER_WIDTH = 28;
/** The width it cuts an IPv4 virtual server's "PROTO  host:port" at. */
const VIRTUAL_SERVER_WIDTH = 33;

/** Whether ipvsadm may have cut this virtual server's printed address (its port lost or short):
 * it fills the width (a name that ended exactly there is not told from a cut one). */
export const virtualNameCut = (protocol: string, address: string): boolean =>
  !address.startsWith('[') && `${protocol}  ${address}`.length >= VIRTUAL_SERVER_WIDTH;

/** The same of a real server's printed address. */
export const realNameCut = (address: string): boolean =>
  !address.startsWith('[') && address.length >= REAL_SERVER_WIDTH;

/** The column titles ipvsadm's print_title prints, in every view (-L, --stats, --rate,
 * --thresholds, --persistent-conn, 1.31's --tun-info). */
const TITLES = new Set(
  'Scheduler Flags Forward Weight ActiveConn InActConn Conns InPkts OutPkts InBytes OutBytes CPS InPPS OutPPS InBPS OutBPS Uthreshold Lthreshold PersistConn TunnelInfo'.split(
    ' ',
  ),
);

/** A header's titles after its first, stopped inside the last ("... ActiveConn InActC"): the paste
 * was cut there, as ipvsadm prints each title whole. */
export const headerCut = (titles: string): boolean => {
  const last = titles.trim().split(/\s+/).pop() ?? '';
  return last !== '' && !TITLES.has(last) && [...TITLES].some((w) => w.startsWith(last));
};
