// The Service trees every dataplane reads its rules back into: Service port -> entry points ->
// its chains -> endpoints with their shares, masquerading and verdicts. Every screen, JSON field
// and check reads these, whatever the mode.
import type { ServicePortName } from '../model.js';
import type { IPFamily } from '../ipv6.js';

/** 'virtual-server': an address a listing alone does not say the kind of (an IPVS virtual server;
 * an address kube-proxy's rules send to a Service port's external chain, with a label);
 * 'frontend': the same of a Cilium frontend (`cilium service get` before 1.14 prints no type). */
export type EntryKind =
  'cluster-ip' | 'external-ip' | 'load-balancer' | 'node-port' | 'virtual-server' | 'frontend';

/** What an address sent to a Service port's external chain is, where nothing says which. */
export const EXTERNAL_OR_LB = 'external or load-balancer IP (a listing does not say which)';

/** An entry that is an external or a load-balancer IP, the listing not saying which. */
export const externalOrLb = (e: EntryPoint) =>
  e.kind === 'virtual-server' && e.label === EXTERNAL_OR_LB;

/** What a person calls each kind of entry. */
export const ENTRY_KIND_TEXT: Record<EntryKind, string> = {
  'cluster-ip': 'cluster IP',
  'external-ip': 'external IP',
  'load-balancer': 'load-balancer IP',
  'node-port': 'node port',
  'virtual-server': 'virtual server (its kind not in the listing)',
  frontend: 'frontend (its type not in the listing)',
};

/** A rule in KUBE-SERVICES or KUBE-NODEPORTS that sends traffic into a Service port's chains. */
export interface EntryPoint {
  kind: EntryKind;
  /** The VIP without its /32, absent for node ports. */
  address?: string;
  port?: number;
  protocol: string;
  /** The chain it jumps to (KUBE-SVC-, KUBE-EXT-, KUBE-FW-, ...). */
  chain: string;
  /** KUBE-SERVICES / KUBE-NODEPORTS, a userspace-mode portal chain, or an nftables map. */
  from: EntryChain;
  /** Userspace mode: the port kube-proxy itself listens on, where the portal sends traffic. */
  proxyPort?: number;
  /** Cilium: a frontend flagged l7-load-balancer, whose new connections the datapath sends to its
   * L7 proxy (Envoy) on the node, at `port` where the listing prints it: no backend is picked from
   * the map, Envoy's own configuration picks the upstream. */
  l7Proxy?: { port?: number };
  /** Cilium: a frontend a Local Redirect Policy takes (db/show frontends' RedirectTo, the
   * LocalRedirect type): its backends are the policy's Pods on the node, not the Service's
   * endpoints; `policy` as the listing names it. */
  redirect?: { policy?: string };
  /** Cilium: the frontend's reconcile status in the agent's load-balancer table (db/show
   * frontends' Status: "Done", "Pending", "Error: ..."), where the listing prints it. */
  status?: string;
  /** Cilium: a frontend of the internal scope ("/i"), which Cilium adds beside the external one
   * where a Service's two traffic policies differ (externalTrafficPolicy or
   * internalTrafficPolicy Local): traffic from inside the cluster uses it, from outside the other,
   * each with its own backends. */
  scope?: 'internal';
  /** A node port entry on the node's loopback (127.0.0.0/8, ::1): kube-proxy's localhost node
   * port rule (-d 127.0.0.0/8 under --iptables-localhost-nodeports), or IPVS's virtual server on
   * 127.0.0.1 where nodePortAddresses holds it. */
  localhost?: true;
  /** What it is where the kind's word would misname it or its listing cannot tell: Cilium's host
   * ports and local redirects, an IPVS firewall mark, an IPVS Service IP of unknown kind. */
  label?: string;
  /** A template's placeholders its author typed where the listing prints the address or port
   * (`{{ node's external ip }}`): what the entry shows for them, no value being known. */
  placeholder?: { address?: string; port?: string };
  line: number;
}

export type EntryChain =
  | 'KUBE-SERVICES'
  | 'KUBE-NODEPORTS'
  | (typeof PORTAL_CHAINS)[number]
  // nftables mode: the verdict maps the services chain looks packets up in
  | 'service-ips'
  | 'service-nodeports'
  // IPVS mode: a virtual server
  | 'ipvs'
  // Cilium: a frontend of its agent's load balancer
  | 'cilium';

/** Userspace mode (kube-proxy before v1.2 by default, removed in v1.26): portals, no KUBE-SVC. */
export const PORTAL_CHAINS = [
  'KUBE-PORTALS-CONTAINER',
  'KUBE-PORTALS-HOST',
  'KUBE-NODEPORT-CONTAINER',
  'KUBE-NODEPORT-HOST',
] as const;

/** A backend's entries in its frontend's Maglev lookup table, of all the table's: its share. */
export interface MaglevShare {
  entries: number;
  of: number;
}

export interface TreeEndpoint {
  /** "10.244.0.3:80" as the DNAT rule says; undefined when the dump cannot show it. */
  address: string | undefined;
  /** The Pod IP read from the hairpin rule, when the DNAT target is unreadable. */
  inferredIP?: string;
  chain: string;
  /** Effective share of this Service port's new connections (chained probabilities applied). */
  probability: number;
  /** The probability written on the jump; undefined on the last, unconditional jump. */
  ruleProbability?: number;
  /** The KUBE-SEP chain marks a Pod reaching itself for masquerade (`-s podIP -j KUBE-MARK-MASQ`);
   * null when the chain is not in this paste. */
  hairpinMasquerade: boolean | null;
  /** Reached first by a `-m recent --rcheck` rule (sessionAffinity: ClientIP). */
  affinity: boolean;
  /** The jump names a chain that is not in this paste: address and hairpin rule unknown. */
  chainMissing?: boolean;
  /** Why the paste holds only part of the endpoint's chain (cut inside it, a rule not read): what
   * it does not show of it (no DNAT rule, no hairpin rule) is unknown, not absent. */
  chainPartial?: string;
  /** Why the paste cannot show this endpoint's share (a view without weights, a cut paste):
   * `probability` is then no claim. */
  shareUnknown?: string;
  /** Why the paste does not hold the endpoint's port (`ipvsadm -l` cut its name at the column's
   * width): `address` is its host alone, or undefined where `hostStart` is set. */
  portUnknown?: string;
  /** `ipvsadm -l` cut the endpoint's host:port before any ":": the host's start as printed (the
   * name may go on past it), `address` undefined. */
  hostStart?: string;
  /** The address was read from kube-proxy's comment on the jump ("ns/svc:port -> 10.0.0.5:80"),
   * not from a DNAT rule (the endpoint chain is not in the paste). */
  addressFromComment?: boolean;
  /** nftables: the address was read from the name kube-proxy gave the endpoint's chain
   * ("endpoint-HASH-ns/svc/proto/port__10.0.0.5/80"), not from a DNAT rule (the chain is not in
   * the paste). */
  addressFromName?: boolean;
  /** A backend of a Cilium frontend (no DNAT rule, no hairpin rule): its state where the
   * listing shows it (active, terminating, quarantined, maintenance ...). */
  /** A Cilium backend: its state, whether the Service's cluster-mesh affinity prefers it, its
   * weight and its entries in the frontend's Maglev table, where the listing shows them. */
  cilium?: { state?: string; preferred?: boolean; weight?: number; maglev?: MaglevShare };
  quirk?: string;
  /** IPVS: a real server reached by direct routing (Route) or IP-in-IP (Tunnel), as kube-router's
   * DSR and keepalived forward: the packet keeps the virtual address, no DNAT; 'unknown' where
   * the view prints no forwarding method (--stats, --rate), so NAT is not known either. */
  forward?: 'route' | 'tunnel' | 'unknown';
  line: number;
}

/** A masquerade (KUBE-MARK-MASQ) rule for this Service port's traffic. */
export interface MasqueradeRule {
  chain: string;
  /** What traffic it marks: "! -s 10.244.0.0/16", "all", "--src-type LOCAL" ... */
  condition: string;
  /** What kube-proxy marks with it, where its condition is one of its own cases: its localhost
   * node port clients (-s 127.0.0.0/8 in KUBE-NODEPORTS, before 1.24; their replies must come
   * back through loopback), and its node-local traffic (--src-type LOCAL: sent from one of the
   * node's own addresses). */
  why?: 'localhost-clients' | 'node-local';
  line: number;
}

/** The node's loopback addresses (127.0.0.0/8, ::1), with or without a prefix. */
const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+(?:\/(?:[89]|[12]\d|3[0-2]))?|::1(?:\/128)?)$/;
export const onLoopback = (address: string | undefined) =>
  address !== undefined && LOOPBACK.test(address);

/** A filter (or old nat) rule that rejects or drops the Service port's traffic. */
export interface Verdict {
  kind: 'reject' | 'drop';
  table: string;
  chain: string;
  comment?: string;
  address?: string;
  port?: number;
  line: number;
  /** The packets it applies to, where the rules above it in its chain say ("from a source
   * outside 203.0.113.0/25 ..."): a KUBE-FW chain's drop. */
  condition?: string;
}

export interface ServiceTree {
  /** The ServicePortName ("ns/name:port"), from comments or from known Service ports. */
  name?: ServicePortName;
  /** Identity: the name, else "VIP:port/protocol", else the chain hash. */
  id: string;
  /** The 16-character hash its KUBE-SVC/SVL/EXT/FW chains share. */
  hash?: string;
  protocol: string;
  clusterIP?: string;
  port?: number;
  nodePorts: number[];
  externalIPs: string[];
  loadBalancerIPs: string[];
  entries: EntryPoint[];
  chains: { svc?: string; svl?: string; ext?: string; fw?: string; xlb?: string };
  masquerade: MasqueradeRule[];
  /** recent --seconds of the affinity rules, when sessionAffinity is ClientIP. */
  affinitySeconds?: number;
  /** Endpoints reached through KUBE-SVC (all endpoints). */
  endpoints: TreeEndpoint[];
  /** Endpoints reached through KUBE-SVL (or the old KUBE-XLB): this node's own. */
  localEndpoints?: TreeEndpoint[];
  /** Share of new connections that no endpoint jump takes (probabilities that do not add up). */
  fallThrough: number;
  verdicts: Verdict[];
  /** Chains its entry points jump to that are not in this paste. */
  absentChains?: string[];
  /** Its chains are in the paste but no entry point is (KUBE-SERVICES was not pasted). */
  entryAbsent?: boolean;
  /** The paste does not hold all of its endpoint rules (its chain lies past a cut, or only its
   * declaration was pasted): no "no endpoints", fall-through or share is claimed. Why. */
  partial?: string;
  /** The family of the tables it was read from, where they are ip6tables' or both families'. */
  family?: IPFamily;
  /** Cilium: its own entry (the frontend whose backends `endpoints` are, `chains.svc`) is sent
   * to the L7 proxy, as that entry's l7Proxy says: no endpoint takes its new connections. */
  l7Proxy?: { port?: number };
}

/** The endpoints a Service port's own traffic reaches on this node: through its service chain,
 * else (internalTrafficPolicy: Local, where kube-proxy writes no such chain) its local one's. */
export const clusterTrafficEndpoints = (t: ServiceTree): TreeEndpoint[] =>
  t.chains.svc ? t.endpoints : (t.localEndpoints ?? []);

export interface OrphanChain {
  chain: string;
  rules: number;
  /** Its rules may not all be in the paste: why (see Table.partial). */
  partial?: string;
  /** For a Service port's own chain (KUBE-SVC, SVL, EXT, FW, XLB): what it would do if reached. */
  tree?: ServiceTree;
  /** The family of its table, where the dump holds ip6tables' tables. */
  family?: IPFamily;
}

export interface ServiceTrees {
  services: ServiceTree[];
  /** Service and endpoint chains no entry point reaches. */
  orphans: OrphanChain[];
}

/** A Service port's tree before its rules are read: the one shape every dataplane fills in. */
export function emptyTree(o: Pick<ServiceTree, 'name' | 'id' | 'hash' | 'protocol'>): ServiceTree {
  return {
    name: o.name,
    id: o.id,
    hash: o.hash,
    protocol: o.protocol,
    nodePorts: [],
    externalIPs: [],
    loadBalancerIPs: [],
    entries: [],
    chains: {},
    masquerade: [],
    endpoints: [],
    fallThrough: 0,
    verdicts: [],
  };
}
