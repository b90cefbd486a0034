// The addresses ipvsadm prints: "host:port", IPv6 as "[host]:port", and in its names view
// (`ipvsadm -l` without -n) host and port names, which it may cut at its columns' widths.

/** "10.96.0.10:53" -> "10.96.0.10" and "53"; "[fd00::a]:53" -> "fd00::a" and "53"; `ipvsadm -l`'s
 * "node-a:https" -> "node-a" and "https", its cut "host:" -> "host" and ""; undefined without a ":". */
export function hostAndPort(address: string): { host: string; port: string } | undefined {
  const m = /^\[?(.+?)\]?:([^:\]]*)$/.exec(address);
  return m ? { host: m[1]!, port: m[2]! } : undefined;
}

/** Whether a host as printed is a name, not an IPv4 address: a DNS label may start with a digit
 * ("10-244-1-7.kube-dns.kube-system"), so only dotted parts of digits are an address (or its
 * start), one redacted by hand ("10.96.0.x", "10.96.x.x") as well; a name holds a letter or
 * digit ("_" alone is none). */
export const nameHost = (host: string): boolean =>
  /^[\w.-]+$/.test(host) && /[a-z0-9]/i.test(host) && !(/^[\dx.]+$/i.test(host) && /\d/.test(host));

/** Whether an address's host is a name (several addresses may resolve to it), not a number. */
export const hostName = (address: string): boolean =>
  !address.startsWith('[') && nameHost(hostAndPort(address)?.host ?? address);

/** `ipvsadm -l` without -n prints names: "kube-dns.kube-system:domain", "node-a:https". */
export function isName(address: string): boolean {
  // "<ipv4-public-prefix>.20:3129": an address redacted by hand, not a name; "[(null)]:5001": an
  // address ipvsadm could not print (C's printf of a NULL string), not a name either
  if (/<[^>]*>|\(null\)/.test(address)) return false;
  const a = hostAndPort(address);
  if (!a) return nameHost(address); // a name cut before its port
  if (a.port === '') return nameHost(a.host); // a name whose port ipvsadm's cut took
  return !/^\d+$/.test(a.port) || !/^[\d.]+$|:/.test(a.host);
}
