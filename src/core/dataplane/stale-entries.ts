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

/** What a Service port has in the API that its entries answer to. */
export type ApiEntries = { nodePort?: number; externalIPs: string[]; loadBalancerIPs: string[] };

/** The tree's entries of a kind or an address the Service port has no longer at all: a node port
 * after its type became ClusterIP, an external or load-balancer IP taken away. Until kube-proxy
 * applies the change they still lead into the Service port's chains (entriesElsewhere says those
 * moved to another port or address instead). */
export function entriesRemoved(t: ServiceTree | undefined, sp: ApiEntries): EntryPoint[] {
  const addresses = new Set([...sp.externalIPs, ...sp.loadBalancerIPs]);
  return (t?.entries ?? []).filter((e) =>
    e.kind === 'node-port'
      ? sp.nodePort === undefined
      : (e.kind === 'external-ip' || e.kind === 'load-balancer' || externalOrLb(e)) &&
        e.address !== undefined &&
        !addresses.has(e.address),
  );
}

/** The finding's words for entries the API took away, the same in every mode. */
export function removedText(
  node: string,
  service: string,
  removed: EntryPoint[],
): { title: string; message: string } {
  // the localhost rule of a node port is the same node port said again (its rules still show it)
  const said = removed.filter(
    (e) =>
      !e.localhost || !removed.some((x) => !x.localhost && x.kind === e.kind && x.port === e.port),
  );
  const at = entriesAt(said);
  return {
    title: `${at} still lead${said.length === 1 ? 's' : ''} to ${service}, which has no such entry in the API`,
    message: `node ${node} still sends ${at} into ${service}'s chains, but the Service port no longer has ${said.length === 1 ? 'it' : 'them'} in the API: kube-proxy has not applied the change that removed it (a type changed to ClusterIP, an external or load-balancer IP taken away), so the node still accepts that traffic and sends it to the endpoints.`,
  };
}
