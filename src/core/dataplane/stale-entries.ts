// A Service port's entries a node has for another port (a cluster IP: or address) than the API's.
// kube-proxy names a Service port's chains (iptables' KUBE-SVC-…, nftables' service-…) after its
// ServicePortName, which holds neither, so until it applies a change the entry for the port (or
// cluster IP) it replaced still leads into them: drift names that entry as what the node does, and
// which of the two changed.
import { hostPort } from '../ipv6.js';
import { externalOrLb, type EntryPoint, type ServiceTree } from './trees.js';

/** The tree's entries of `want`'s kind at another port (a cluster IP: or address) than `want`'s. */
export function entriesElsewhere(
  t: ServiceTree | undefined,
  want: Pick<EntryPoint, 'kind' | 'address' | 'protocol'> & { port: number },
): EntryPoint[] {
  const external = want.kind === 'external-ip' || want.kind === 'load-balancer';
  return (t?.entries ?? []).filter(
    (e) =>
      (e.kind === want.kind || (external && externalOrLb(e))) &&
      e.protocol === want.protocol &&
      (want.kind === 'cluster-ip' || e.address === want.address) &&
      (e.port !== want.port || e.address !== want.address),
  );
}

/** "10.96.0.1:443/tcp", "node port 30080/tcp": where an entry sends from. */
export const entryAt = (x: EntryPoint): string =>
  x.address === undefined
    ? `node port ${x.port}/${x.protocol}`
    : `${hostPort(x.address, x.port ?? '')}/${x.protocol}`;

/** Where each entry sends from, in a list: no line in the words, so nodes with the same stale
 * entry say the same and are one finding (the line is in the rules shown). */
export const entriesAt = (entries: EntryPoint[]): string => entries.map(entryAt).join(', ');

/** What differs between the entries and the Service port's own in the API. */
export type EntryChange = 'port' | 'address' | 'address and port';

/** The Service port's own entry, as the API has it. */
export type ApiEntry = { address?: string; port: number };

/** What differs between `moved` and `want`: their port, their address (a cluster IP's), or both. */
export function changeOf(want: ApiEntry, moved: EntryPoint[]): EntryChange {
  const address = moved.some((e) => e.address !== want.address);
  const port = moved.some((e) => e.port !== want.port);
  return address && port ? 'address and port' : address ? 'address' : 'port';
}

/** What keeps a Service port's chains under an entry of the change: a cluster IP is immutable,
 * so another is the Service deleted and created again under its name. */
const CAUSE: Record<EntryChange, string> = {
  port: 'a port change keeps them',
  address: 'a Service deleted and created again, which gets a new cluster IP, keeps them',
  'address and port': 'a Service created again with a new cluster IP and port keeps them',
};

/** What the entries hold that the API does not, for one entry and for several. */
const WHAT: Record<EntryChange, readonly [string, string]> = {
  port: ['a port', 'ports'],
  address: ['an address', 'addresses'],
  'address and port': ['an address and port', 'addresses and ports'],
};

/** "a port change", "an address change". */
export const changeText = (change: EntryChange): string =>
  `${change === 'port' ? 'a' : 'an'} ${change} change`;

/** Why the Service port's chains still take the entries of the change. */
export const keptBy = (change: EntryChange): string =>
  `the chains' names hold no ${change === 'address and port' ? 'address or port' : change}: ${CAUSE[change]}`;

/** What the entries are to the Service port in the API, and why its chains still take them. */
export function notInApi(want: ApiEntry, moved: EntryPoint[]): string {
  const change = changeOf(want, moved);
  const what = WHAT[change][moved.length === 1 ? 0 : 1];
  return `${what} the Service port does not have in the API (${keptBy(change)})`;
}
