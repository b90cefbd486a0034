// A rules dump read back into Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees, one per Service
// port. Trees come from following the jumps; comments only name them (large clusters have none on
// the SVC -> SEP jumps, and old dumps none at all).
import { hash16 } from '../kube-proxy/chain-names.js';
import type { Ruleset, Table } from './read/parse.js';
import { DNAT_QUIRK } from './read/rule.js';
import { unreadText } from './read/paste/list-view/unread.js';
import type { ServicePortName } from '../../model.js';
import { hostPort } from '../../ipv6.js';
import {
  emptyTree,
  EXTERNAL_OR_LB,
  PORTAL_CHAINS,
  type EntryKind,
  type OrphanChain,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../trees.js';

export interface TreeOptions {
  /** Service ports the caller knows (from API objects): names trees of dumps without comments;
   * `hash`, their chains' suffix, saves hashing the name again. */
  servicePorts?: { name: ServicePortName; protocol: string; hash?: string }[];
  /** Build only the trees of these Service ports (one Service's answer): the rest of the dump
   * is not walked, and no orphan chains are looked for. */
  only?: { name: ServicePortName; protocol: string; hash?: string }[];
}

const COMMENT_KIND: [string, EntryKind][] = [
  [' cluster IP', 'cluster-ip'],
  [' external IP', 'external-ip'],
  [' loadbalancer IP', 'load-balancer'],
];

/** kube-proxy's comment on a KUBE-SVC -> KUBE-SEP jump: "ns/svc:port -> 10.0.0.5:80". */
const ENDPOINT_COMMENT = / -> (\[[0-9a-fA-F:.]+\]:\d+|[\d.]+:\d+)$/;

/** The protocol its endpoints' DNAT rules match (`-p udp ... -j DNAT`), for a tree no entry
 * rule or comment names it for. */
function dnatProtocol(nat: Table, tree: ServiceTree): string | undefined {
  for (const ep of tree.endpoints) {
    const c = nat.indexOf(ep.chain);
    for (let k = 0; c >= 0 && k < nat.ruleCountOf(c); k++) {
      const id = nat.ruleIdOf(c, k);
      if (nat.isDnat(id)) return nat.protocol(id);
    }
  }
  return undefined;
}

/** A tree whose own chain the paste may not hold in full claims nothing about its endpoints. */
function markPartial(nat: Table, tree: ServiceTree): void {
  const own = tree.chains.svc ?? tree.chains.svl ?? tree.chains.xlb;
  const why = own === undefined ? undefined : nat.partial.get(own);
  if (why === undefined) return;
  tree.partial = why;
  // rules above the paste would take their shares first: then no share is known
  const above = nat.cutAbove.has(own!);
  for (const ep of [...tree.endpoints, ...(tree.localEndpoints ?? [])])
    if (above || (ep.probability === 0 && !ep.affinity)) ep.shareUnknown = why;
}

/** The address of a host CIDR ("10.0.0.1/32" is 10.0.0.1). */
function stripHost(cidr: string | undefined): string | undefined {
  if (cidr?.endsWith('/32')) return cidr.slice(0, -3);
  return cidr?.endsWith('/128') ? cidr.slice(0, -4) : cidr;
}

export function buildServiceTrees(rs: Ruleset, options: TreeOptions = {}): ServiceTrees {
  const families = rs.families();
  if (families.length < 2 && families[0] !== 'IPv6') return new TreeBuilder(rs, options).build();
  // ip6tables' tables beside iptables' (or alone): each family's trees from its own tables, said so
  const out: ServiceTrees = { services: [], orphans: [] };
  for (const family of families) {
    const trees = new TreeBuilder(rs.ofFamily(family), options).build();
    for (const t of trees.services) t.family = family;
    for (const o of trees.orphans) {
      o.family = family;
      if (o.tree) o.tree.family = family;
    }
    out.services.push(...trees.services);
    out.orphans.push(...trees.orphans);
  }
  return out;
}

class TreeBuilder {
  private readonly nat: Table | undefined;
  private readonly filter: Table | undefined;
  private readonly trees: ServiceTree[] = [];
  private readonly positions = new Map<string, number>(); // chain hash -> position in trees
  private readonly byVip = new Map<string, ServiceTree>(); // "10.1.0.1:443/tcp"
  private readonly visited: Uint8Array; // by nat chain index
  private readonly names = new Map<string, { name: ServicePortName; protocol: string }>(); // by hash
  private readonly sepTargets = new Map<string, TreeEndpoint>(); // absent KUBE-SEP chains, by name
  private readonly only: Set<string> | undefined; // chain hashes of the trees asked for
  private readonly onlyNames: Set<string> | undefined;

  constructor(rs: Ruleset, options: TreeOptions) {
    this.nat = rs.table('nat');
    this.filter = rs.table('filter');
    const chains = this.nat?.chainCount ?? 0;
    this.visited = new Uint8Array(chains);
    for (const sp of options.servicePorts ?? []) {
      const protocol = sp.protocol.toLowerCase();
      this.names.set(sp.hash ?? hash16(sp.name + protocol), { name: sp.name, protocol });
    }
    if (options.only) {
      this.only = new Set();
      this.onlyNames = new Set();
      for (const sp of options.only) {
        const protocol = sp.protocol.toLowerCase();
        const hash = sp.hash ?? hash16(sp.name + protocol);
        this.names.set(hash, { name: sp.name, protocol });
        this.only.add(hash);
        this.onlyNames.add(sp.name);
      }
    }
  }

  build(): ServiceTrees {
    const nat = this.nat;
    let entered = 0; // trees from entry points; the ones unreached() adds after them may be reached by none
    if (nat) {
      this.entries(nat, 'KUBE-SERVICES');
      this.entries(nat, 'KUBE-NODEPORTS');
      for (const portal of PORTAL_CHAINS) this.portals(nat, portal);
      entered = this.trees.length;
      this.sep = new Int32Array(nat.chainCount * SEP_STRIDE);
      this.sepAddress = new Array<string | undefined>(nat.chainCount);
      if (this.only) this.unreachedOf(nat, this.only);
      else {
        this.unreached(nat);
        for (let c = 0; c < nat.chainCount; c++) this.readSep(nat, c);
        resolveEndpointJumps(nat);
      }
      const own = this.only ? this.ownChainsOf(nat) : this.ownChains(nat);
      this.trees.forEach((tree, i) => {
        if (tree.hash) this.follow(nat, tree, own.subarray(i * 5, i * 5 + 5));
      });
    }
    if (this.filter) {
      for (const chain of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL'])
        this.verdicts(this.filter, chain);
    }
    if (nat)
      for (const t of this.trees) {
        markPartial(nat, t);
        if (!t.protocol) t.protocol = dnatProtocol(nat, t) ?? '';
      }
    for (const t of this.trees)
      t.id =
        t.name ??
        (t.clusterIP
          ? `${hostPort(t.clusterIP, t.port ?? '?')}/${t.protocol}`
          : `${t.hash ?? t.entries[0]?.address}${t.protocol ? `/${t.protocol}` : ''}`);
    // a paste without KUBE-SERVICES: its Service chains are trees whose entry is not in it
    const entryPasted = nat !== undefined && nat.indexOf('KUBE-SERVICES') >= 0;
    const unreached = this.trees.filter(
      (t, i) => i >= entered && t.entries.length === 0 && t.verdicts.length === 0,
    );
    if (!entryPasted) for (const t of unreached) t.entryAbsent = true;
    const byId = (a: ServiceTree, b: ServiceTree) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const apart = new Set(unreached);
    const services = entryPasted ? this.trees.filter((t) => !apart.has(t)) : this.trees;
    const orphans = this.only ? [] : this.orphans(entryPasted ? unreached : []);
    return { services: services.sort(byId), orphans };
  }

  /** The tree of a chain hash (or of a Service port name), created on first sight. */
  private tree(hash: string | undefined, name: string | undefined, protocol: string): ServiceTree {
    name ??= hash ? this.names.get(hash)?.name : undefined;
    if (!hash && name) hash = hash16(name + protocol);
    let tree = this.byHash(hash);
    if (!tree) {
      tree = emptyTree({ name, id: '', hash, protocol });
      if (hash) this.positions.set(hash, this.trees.length);
      this.trees.push(tree);
    }
    tree.name ??= name;
    return tree;
  }

  /** The tree of a chain hash, if there is one yet. */
  private byHash(hash: string | undefined): ServiceTree | undefined {
    const at = hash === undefined ? undefined : this.positions.get(hash);
    return at === undefined ? undefined : this.trees[at];
  }

  /** Entry rules of KUBE-SERVICES / KUBE-NODEPORTS. */
  private entries(nat: Table, from: 'KUBE-SERVICES' | 'KUBE-NODEPORTS'): void {
    const chain = nat.chain(from);
    if (!chain) return;
    const masq: number[] = [];
    // the asked trees' own chains by index: the other Services' rules are passed without a name
    const wanted = this.only && this.ownIndexes(nat, this.only);
    const only = this.only && [...this.only];
    for (let k = 0; k < chain.ruleCount; k++) {
      const id = chain.ruleId(k);
      if (nat.marksForMasquerade(id)) {
        masq.push(id);
        continue;
      }
      // another Service's rule by its target's bytes, before the target is looked up
      if (only && !only.some((hash) => nat.targetEndsWith(id, hash))) continue;
      const tc = nat.targetIndex(id);
      if (wanted && tc >= 0 && !wanted.has(tc)) continue;
      const target = tc >= 0 ? nat.nameOf(tc) : nat.target(id);
      // a name the paste's end cut short (Table.partial holds it): its chain is not in the paste
      const cut = tc < 0 && target !== undefined && nat.partial.has(target);
      const tkind = tc >= 0 ? nat.kindOf(tc) : cut ? cutKind(target) : absentKind(target);
      if (!tkind || tkind === 'KUBE-SEP' || target === undefined) continue;
      // a whole name ends in its 16-character hash; a cut one's tree is named by its comment
      const hash = cut ? undefined : target.slice(-16);
      if (this.only && (hash === undefined || !this.only.has(hash))) continue;
      const comment = nat.comment(id);
      const protocol = nat.protocol(id) ?? 'tcp';
      const address = stripHost(nat.destination(id));
      const dport = nat.dport(id);
      const port = dport === undefined ? undefined : Number(dport);
      const named = comment === undefined ? undefined : commentName(comment, from);
      const tree = this.tree(hash, named?.name, protocol);
      if (tc < 0 && !tree.absentChains?.includes(target))
        tree.absentChains = append(tree.absentChains ?? [], target);
      let kind: EntryKind = named?.kind ?? (from === 'KUBE-NODEPORTS' ? 'node-port' : 'cluster-ip');
      if (!named && from === 'KUBE-SERVICES') {
        // no comment: the first VIP jumping to SVC/SVL is the ClusterIP, FW means a load balancer;
        // before 1.24 a later one to SVC is an external IP (load balancers went to FW), from 1.24
        // external and load-balancer IPs alike go to EXT
        if (tkind === 'KUBE-FW') kind = 'load-balancer';
        else if (tkind === 'KUBE-EXT') kind = 'virtual-server';
        else if (tree.clusterIP !== undefined) kind = 'external-ip';
      }
      tree.entries = append(tree.entries, {
        kind,
        ...(kind === 'virtual-server' ? { label: EXTERNAL_OR_LB } : {}),
        address,
        port,
        protocol,
        chain: target!,
        from,
        line: nat.line(id),
      });
      if (kind === 'cluster-ip' && tree.clusterIP === undefined) {
        tree.clusterIP = address;
        tree.port = port;
        this.byVip.set(`${address}:${port}/${protocol}`, tree);
      } else if (kind === 'external-ip' && address && !tree.externalIPs.includes(address))
        tree.externalIPs = append(tree.externalIPs, address);
      else if (kind === 'load-balancer' && address && !tree.loadBalancerIPs.includes(address))
        tree.loadBalancerIPs = append(tree.loadBalancerIPs, address);
      else if (kind === 'node-port' && port !== undefined && !tree.nodePorts.includes(port))
        tree.nodePorts = append(tree.nodePorts, port);
    }
    // old kube-proxy (<= 1.20) marked Service traffic in KUBE-SERVICES / KUBE-NODEPORTS itself
    for (const id of masq) {
      const comment = nat.comment(id);
      const protocol = nat.protocol(id) ?? 'tcp';
      const named = comment === undefined ? undefined : commentName(comment, from);
      const tree = named
        ? this.byHash(hash16(named.name + protocol))
        : this.byVip.get(`${stripHost(nat.destination(id))}:${nat.dport(id)}/${protocol}`);
      if (tree)
        tree.masquerade = append(tree.masquerade, {
          chain: from,
          condition: this.condition(nat, id),
          line: nat.line(id),
        });
    }
  }

  /** Each tree's SVC / SVL / EXT / FW / XLB chain indexes (-1: none), five per tree in tree
   * order: one pass over the chains, whose names end in their tree's hash. */
  private ownChains(nat: Table): Int32Array {
    const own = new Int32Array(this.trees.length * 5).fill(-1);
    for (let c = 0; c < nat.chainCount; c++) {
      const slot = OWN_SLOT[nat.kindOf(c) ?? ''];
      if (slot === undefined) continue;
      const i = this.positions.get(nat.nameOf(c).slice(-16));
      if (i === undefined) continue;
      own[i * 5 + slot] = c;
      this.visited[c] = 1;
    }
    return own;
  }

  /** The indexes of the SVC / SVL / EXT / FW / XLB chains of these hashes that are in the table. */
  private ownIndexes(nat: Table, hashes: Set<string>): Set<number> {
    const out = new Set<number>();
    for (const hash of hashes)
      for (const kind of Object.keys(OWN_SLOT)) {
        const c = nat.indexOf(`${kind}-${hash}`);
        if (c >= 0) out.add(c);
      }
    return out;
  }

  /** ownChains for the trees asked for, found by name. */
  private ownChainsOf(nat: Table): Int32Array {
    const own = new Int32Array(this.trees.length * 5).fill(-1);
    this.trees.forEach((tree, i) => {
      if (!tree.hash) return;
      for (const [kind, slot] of Object.entries(OWN_SLOT)) {
        const c = nat.indexOf(`${kind}-${tree.hash}`);
        if (c < 0) continue;
        own[i * 5 + slot] = c;
        this.visited[c] = 1;
      }
    });
    return own;
  }

  /** Walks a tree's SVC / SVL / EXT / FW / XLB chains and their KUBE-SEP chains. */
  private follow(nat: Table, tree: ServiceTree, own: Int32Array): void {
    const name = (c: number) => (c >= 0 ? nat.nameOf(c) : undefined);
    const [svc = -1, svl = -1, ext = -1, fw = -1, xlb = -1] = own;
    tree.chains = { svc: name(svc), svl: name(svl), ext: name(ext), fw: name(fw), xlb: name(xlb) };
    if (svc >= 0) {
      const r = this.endpoints(nat, tree, svc);
      tree.endpoints = r.endpoints;
      tree.fallThrough = r.fallThrough;
    }
    const local = svl >= 0 ? svl : xlb;
    if (local >= 0) tree.localEndpoints = this.endpoints(nat, tree, local).endpoints;
    if (ext >= 0) this.sideRules(nat, tree, ext);
    if (fw >= 0) this.sideRules(nat, tree, fw);
  }

  /** Masquerade and drop rules in EXT / FW chains. */
  private sideRules(nat: Table, tree: ServiceTree, chain: number): void {
    for (let k = 0; k < nat.ruleCountOf(chain); k++) {
      const id = nat.ruleIdOf(chain, k);
      if (nat.marksForMasquerade(id)) this.masquerades(tree, nat, chain, id);
      else if (nat.target(id) === 'KUBE-MARK-DROP') drops(tree, nat, chain, id);
      else if (nat.targetIndex(id) < 0) {
        const target = nat.target(id)!;
        if (absentKind(target) && !tree.absentChains?.includes(target))
          tree.absentChains = append(tree.absentChains ?? [], target);
      }
    }
  }

  private call = 0; // numbers the calls of endpoints(), for its dedupe

  /** The endpoint jumps of one SVC/SVL/XLB chain with their effective shares. */
  private endpoints(
    nat: Table,
    tree: ServiceTree,
    chain: number,
  ): { endpoints: TreeEndpoint[]; fallThrough: number } {
    const endpoints: TreeEndpoint[] = [];
    const call = ++this.call;
    let remaining = 1;
    const count = nat.ruleCountOf(chain);
    for (let k = 0; k < count; k++) {
      const id = nat.ruleIdOf(chain, k);
      if (nat.marksForMasquerade(id)) {
        this.masquerades(tree, nat, chain, id);
        this.clusterIPOfMasquerade(tree, nat, id);
        continue;
      }
      const sep = nat.targetIndex(id);
      if (this.only && sep >= 0) this.readSep(nat, sep);
      const at = sep * SEP_STRIDE;
      let ep: TreeEndpoint;
      if (sep < 0 || (this.sep[at + SEP.flags]! & SEP_CHAIN) === 0) {
        const target = nat.target(id);
        if (target === 'KUBE-MARK-DROP') drops(tree, nat, chain, id);
        if (sep >= 0 || !target?.startsWith('KUBE-SEP-')) continue;
        // a KUBE-SEP chain not in this paste: its share is known from the jumps, not its target
        const known = this.sepTargets.get(target);
        if (known && endpoints.includes(known)) ep = known;
        else {
          ep = this.absentEndpoint(target, nat.line(id), nat.comment(id));
          this.sepTargets.set(target, ep);
          endpoints.push(ep);
        }
      } else if (this.sep[at + SEP.call] === call) {
        // affinity rules come first: the jump after one reaches the same endpoint
        ep = endpoints[this.sep[at + SEP.position]!]!;
      } else {
        ep = this.endpoint(nat, sep, nat.line(id));
        this.sep[at + SEP.call] = call;
        this.sep[at + SEP.position] = endpoints.length;
        endpoints.push(ep);
      }
      if (nat.checksRecent(id)) {
        ep.affinity = true;
        tree.affinitySeconds ??= affinitySeconds(nat, id);
        continue;
      }
      const p = nat.probability(id);
      const share = remaining * (p ?? 1);
      ep.probability += share;
      ep.ruleProbability = p;
      ep.line = nat.line(id);
      remaining -= share;
    }
    return { endpoints, fallThrough: remaining < 1e-9 ? 0 : remaining };
  }

  /** A jump to a KUBE-SEP chain the paste does not have; kube-proxy (v1.28 on) names the
   * endpoint in the jump's comment ("ns/svc:port -> 10.0.0.5:80"), which is read as such. */
  private absentEndpoint(name: string, line: number, comment?: string): TreeEndpoint {
    const said = comment === undefined ? undefined : ENDPOINT_COMMENT.exec(comment)?.[1];
    return {
      address: said,
      ...(said !== undefined ? { addressFromComment: true } : {}),
      chain: name,
      probability: 0,
      hairpinMasquerade: null,
      affinity: false,
      chainMissing: true,
      line,
    };
  }

  // What every KUBE-SEP chain says, read once in the dump's own order and kept by chain index:
  // its numbers side by side in `sep` (see SEP: the jumps come in random order, and each
  // separate array would be a cache miss) and its DNAT address.
  private sep = new Int32Array(0);
  private sepAddress: (string | undefined)[] = [];
  private readonly sepInferredIP = new Map<number, string>();

  /** Reads KUBE-SEP chain c once (the whole dump in its own order, or on first jump to it). */
  private readSep(nat: Table, c: number): void {
    const at = c * SEP_STRIDE + SEP.flags;
    if ((this.sep[at]! & SEP_READ) !== 0) return;
    this.sep[at] = SEP_READ;
    if (nat.kindOf(c) !== 'KUBE-SEP') return;
    let address: string | undefined;
    let f = SEP_CHAIN | SEP_READ;
    let hairpin = -1;
    const count = nat.ruleCountOf(c);
    for (let k = 0; k < count; k++) {
      const id = nat.ruleIdOf(c, k);
      if (nat.isDnat(id)) {
        // the first DNAT translates: a rule after it is never reached
        address ??= nat.to(id);
        if (nat.hidesDnatTarget(id)) f |= SEP_QUIRK;
      } else if (nat.marksForMasquerade(id) && nat.hasSource(id)) hairpin = id;
      // a masquerade whose source an `iptables -L` paste printed as a name: maybe the hairpin
      else if (
        nat.marksForMasquerade(id) &&
        nat.rule(id).matches.some((m) => unreadText(m) !== undefined)
      )
        f |= SEP_UNSURE;
      else if (nat.hasSource(id) && nat.target(id) === 'MARK' && OLD_HAIRPIN.test(nat.text(id)))
        hairpin = id; // kube-proxy v1.1: the masquerade mark set in the KUBE-SEP chain itself
    }
    if (hairpin >= 0) f |= SEP_HAIRPIN;
    if (f & SEP_QUIRK && address === undefined && hairpin >= 0)
      this.sepInferredIP.set(c, stripHost(nat.source(hairpin))!);
    this.sep[at] = f;
    this.sepAddress[c] = address;
    nat.nameOf(c); // decoded here, in the dump's order; endpoints read the table's cache
  }

  /** A new endpoint for the KUBE-SEP chain at index c, jumped to from `line`. */
  private endpoint(nat: Table, c: number, line: number): TreeEndpoint {
    const f = (this.sep[c * SEP_STRIDE + SEP.flags]! |= SEP_REACHED);
    const ep: TreeEndpoint = {
      address: this.sepAddress[c],
      ruleProbability: undefined,
      chain: nat.nameOf(c),
      probability: 0,
      // kube-proxy writes it in every KUBE-SEP chain: its absence is said only of a chain the
      // paste declares (a grep'd paste keeps some of a chain's rules, not its declaration)
      hairpinMasquerade:
        (f & SEP_HAIRPIN) !== 0
          ? true
          : nat.chainLine(c) !== undefined && (f & SEP_UNSURE) === 0
            ? false
            : null,
      affinity: false,
      line,
    };
    // a chain the paste holds only in part: what it does not show may be past the cut
    const partial = nat.partial.get(ep.chain);
    if (partial !== undefined) {
      ep.chainPartial = partial;
      if (ep.hairpinMasquerade === false) ep.hairpinMasquerade = null;
    }
    if ((f & SEP_QUIRK) !== 0) {
      ep.quirk = DNAT_QUIRK;
      const ip = this.sepInferredIP.get(c);
      if (ip !== undefined) ep.inferredIP = ip;
    }
    return ep;
  }

  /** A KUBE-MARK-MASQ rule of the tree's own chains. */
  private masquerades(tree: ServiceTree, nat: Table, chain: number, id: number): void {
    tree.masquerade = append(tree.masquerade, {
      chain: nat.nameOf(chain),
      condition: this.condition(nat, id),
      line: nat.line(id),
    });
  }

  /** kube-proxy (1.27 on) marks cluster IP traffic from outside the Pod network in the KUBE-SVC
   * chain, with the cluster IP's comment: where the paste lacks KUBE-SERVICES, it gives the IP. */
  private clusterIPOfMasquerade(tree: ServiceTree, nat: Table, id: number): void {
    if (tree.clusterIP !== undefined || !nat.comment(id)?.endsWith(' cluster IP')) return;
    const address = stripHost(nat.destination(id));
    if (address === undefined || address.includes('/')) return;
    tree.clusterIP = address;
    const port = Number(nat.dport(id));
    if (Number.isInteger(port) && port > 0) tree.port = port;
    if (!tree.protocol) tree.protocol = nat.protocol(id) ?? '';
  }

  // thousands of rules share a few conditions ("! -s 10.244.0.0/16"): one string for each
  private readonly conditions = new Map<string, string>();

  private condition(nat: Table, id: number): string {
    const c = masqueradeCondition(nat, id);
    const known = this.conditions.get(c);
    if (known !== undefined) return known;
    this.conditions.set(c, c);
    return c;
  }

  /** REJECT / DROP rules kube-proxy writes in filter for Services without (local) endpoints. */
  private verdicts(filter: Table, name: string): void {
    const chain = filter.chain(name);
    if (!chain) return;
    for (let k = 0; k < chain.ruleCount; k++) {
      const id = chain.ruleId(k);
      const target = filter.target(id);
      if (target !== 'REJECT' && target !== 'DROP') continue;
      const comment = filter.comment(id);
      const protocol = filter.protocol(id) ?? 'tcp';
      const address = stripHost(filter.destination(id));
      const dport = filter.dport(id);
      const port = dport === undefined ? undefined : Number(dport);
      const m = comment ? VERDICT_COMMENT.exec(comment) : null;
      if (!m && (address === undefined || port === undefined)) continue; // not a per-Service rule
      const vip = `${address}:${port}/${protocol}`;
      if (this.onlyNames && (m ? !this.onlyNames.has(m[1]!) : !this.byVip.has(vip))) continue;
      const tree = m
        ? this.tree(undefined, m[1], protocol)
        : (this.byVip.get(vip) ?? this.tree(undefined, undefined, protocol));
      tree.verdicts.push({
        kind: target === 'REJECT' ? 'reject' : 'drop',
        table: 'filter',
        chain: name,
        comment,
        address,
        port,
        line: filter.line(id),
      });
      if (name === 'KUBE-SERVICES' && address && tree.clusterIP === undefined) {
        tree.clusterIP = address;
        tree.port = port;
        this.byVip.set(vip, tree);
      }
      // to a local address, on a port: the Service's node port (kube-proxy 1.25 on writes it
      // so), read from here only where the paste has no KUBE-NODEPORTS to read it from, or
      // where the port has no endpoints (kube-proxy then writes no nat rule for it at all)
      if (
        name === 'KUBE-EXTERNAL-SERVICES' &&
        (this.nat === undefined ||
          this.nat.indexOf('KUBE-NODEPORTS') < 0 ||
          m?.[0].endsWith(' has no endpoints') === true) &&
        address === undefined &&
        port !== undefined &&
        filter
          .rule(id)
          .matches.some(
            (m) =>
              m.kind === 'addrtype' &&
              m.dstType?.negated === false &&
              m.dstType.types.includes('LOCAL'),
          ) &&
        !tree.nodePorts.includes(port)
      )
        tree.nodePorts = append(tree.nodePorts, port);
    }
  }

  /** Chains no entry point reaches: KUBE-SEP chains no tree jumps to, and the own chains of
   * the trees built for them (`unreached`), each with its tree. */
  private orphans(unreached: ServiceTree[]): OrphanChain[] {
    const out: OrphanChain[] = [];
    if (!this.nat) return out;
    const nat = this.nat;
    for (let c = 0; c < nat.chainCount; c++) {
      const reached = (this.sep[c * SEP_STRIDE + SEP.flags]! & SEP_REACHED) !== 0;
      if (this.visited[c] === 0 && !reached && nat.kindOf(c) !== undefined) {
        const partial = nat.partial.get(nat.nameOf(c));
        out.push({
          chain: nat.nameOf(c),
          rules: nat.ruleCountOf(c),
          ...(partial ? { partial } : {}),
        });
      }
    }
    const seps = new Set<string>();
    for (const tree of unreached) {
      for (const chain of Object.values(tree.chains))
        if (chain) {
          const partial = nat.partial.get(chain);
          out.push({
            chain,
            rules: nat.chain(chain)!.ruleCount,
            tree,
            ...(partial ? { partial } : {}),
          });
        }
      for (const ep of [...tree.endpoints, ...(tree.localEndpoints ?? [])])
        if (!ep.chainMissing && !seps.has(ep.chain)) {
          seps.add(ep.chain);
          out.push({ chain: ep.chain, rules: nat.chain(ep.chain)!.ruleCount });
        }
    }
    return out.sort((a, b) => (a.chain < b.chain ? -1 : 1));
  }

  /** Trees for the Service chains no entry point reached (a paste of `grep KUBE-SVC`, or chains
   * kube-proxy left behind): named from the known Service ports or from their comments. */
  private unreached(nat: Table): void {
    const reached = new Set(this.positions.keys());
    for (let c = 0; c < nat.chainCount; c++) {
      const kind = nat.kindOf(c);
      if (kind === undefined || kind === 'KUBE-SEP') continue;
      const hash = nat.nameOf(c).slice(-16);
      if (reached.has(hash)) continue;
      const known = this.names.get(hash) ?? nameFromComments(nat, c, hash);
      // no entry rule and no comment: the protocol is not in the paste
      this.tree(hash, known?.name, known?.protocol ?? '');
    }
  }

  /** unreached() for the trees asked for: their chains, found by name. */
  private unreachedOf(nat: Table, only: Set<string>): void {
    for (const hash of only) {
      if (this.positions.has(hash)) continue;
      if (!Object.keys(OWN_SLOT).some((kind) => nat.indexOf(`${kind}-${hash}`) >= 0)) continue;
      const known = this.names.get(hash)!;
      this.tree(hash, known.name, known.protocol);
    }
  }

  /** Userspace-mode portals: each rule sends a Service port's traffic to kube-proxy itself. */
  private portals(nat: Table, from: (typeof PORTAL_CHAINS)[number]): void {
    const chain = nat.chain(from);
    if (!chain) return;
    for (let k = 0; k < chain.ruleCount; k++) {
      const id = chain.ruleId(k);
      const comment = nat.comment(id);
      const m = /(?:--to-ports |--to-destination [^ ]*:)(\d+)/.exec(nat.text(id));
      if (!comment || !m || this.onlyNames?.has(comment) === false) continue;
      const protocol = nat.protocol(id) ?? 'tcp';
      const nodePort = from.startsWith('KUBE-NODEPORT-');
      const dport = nat.dport(id);
      const port = dport === undefined ? undefined : Number(dport);
      const address = stripHost(nat.destination(id));
      const tree = this.tree(undefined, comment, protocol);
      tree.entries = append(tree.entries, {
        kind: nodePort ? 'node-port' : 'cluster-ip',
        address: nodePort ? undefined : address,
        port,
        protocol,
        chain: from,
        from,
        proxyPort: Number(m[1]),
        line: nat.line(id),
      });
      if (nodePort && port !== undefined && !tree.nodePorts.includes(port))
        tree.nodePorts = append(tree.nodePorts, port);
      if (!nodePort && tree.clusterIP === undefined) {
        tree.clusterIP = address;
        tree.port = port;
      }
    }
  }
}

/** Resolves the jumps of every KUBE-SVC / SVL chain in the dump's order: the rules are then read
 * in sequence, where following the trees would read them scattered (15% of the trees' time). */
function resolveEndpointJumps(nat: Table): void {
  for (let c = 0; c < nat.chainCount; c++) {
    const kind = nat.kindOf(c);
    if (kind !== 'KUBE-SVC' && kind !== 'KUBE-SVL') continue;
    const n = nat.ruleCountOf(c);
    for (let k = 0; k < n; k++) nat.targetIndex(nat.ruleIdOf(c, k));
  }
}

/** Where ownChains keeps each kind of a tree's own chains. */
const OWN_SLOT: Record<string, number> = {
  'KUBE-SVC': 0,
  'KUBE-SVL': 1,
  'KUBE-EXT': 2,
  'KUBE-FW': 3,
  'KUBE-XLB': 4,
};

/** A KUBE-SEP chain's numbers: the endpoints() call that last reached it and its endpoint's
 * position in that call's list (the dedupe), and SEP_* flags. */
const SEP = { call: 0, position: 1, flags: 2 } as const;
const SEP_STRIDE = 3;
const SEP_CHAIN = 1; // the chain is a KUBE-SEP chain
const SEP_HAIRPIN = 2;

/** Adds an item to a tree's list: short lists are copied at their exact size (a push onto []
 * reserves 17 slots, and most trees' lists hold one or two items). */
function append<T>(list: T[], item: T): T[] {
  if (list.length < 4) return list.concat([item]);
  list.push(item);
  return list;
}
const SEP_QUIRK = 4;
const SEP_REACHED = 8; // a jump reached it (not an orphan)
const SEP_READ = 16; // readSep has read it
const SEP_UNSURE = 32; // a masquerade rule with a match not read: its hairpin rule unknown

/** kube-proxy's hairpin rule from before its KUBE-MARK-MASQ chain, the mark set in the KUBE-SEP
 * chain itself: v1.1's `--set-xmark 0x4d415351/0xffffffff`, or a mark that is its own mask
 * (`--set-xmark 0x00004000/0x00004000`, as the old Debug Services page quotes it). */
const OLD_HAIRPIN =
  / --set-x?mark (?:0x4d415351(?:\/0xffffffff)?|0x0*([1-9a-f]0*)\/0x0*\1)(?: |$)/i;

/** The kube-proxy chain kind a name that is not in the paste has, by its shape (its hash perhaps
 * redacted by hand, digits and all). */
function absentKind(name: string | undefined): string | undefined {
  const m =
    name === undefined ? null : /^(KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP))-[A-Z0-9]{16}$/.exec(name);
  return m?.[1];
}

/** The kube-proxy chain kind of a name cut short of its hash. */
const cutKind = (name: string) => /^(KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP))-/.exec(name)?.[1];

/** A Service chain's name from its rules' comments ("ns/svc:port -> 10.244.0.3:80", or the bare
 * name of older versions), checked against the chain's hash for each protocol. */
function nameFromComments(
  nat: Table,
  c: number,
  hash: string,
): { name: string; protocol: string } | undefined {
  const said = new Set<string>();
  for (let k = 0; k < nat.ruleCountOf(c); k++) {
    const comment = nat.comment(nat.ruleIdOf(c, k));
    // "ns/svc:port -> 10.0.0.5:80", "ns/svc:port loadbalancer IP": the name before what follows
    const name = comment && (commentName(comment, '')?.name ?? comment.replace(/ -> .*$/, ''));
    if (!name || !name.includes('/')) continue;
    for (const protocol of ['tcp', 'udp', 'sctp'])
      if (hash16(name + protocol) === hash) return { name, protocol };
    if (/^[^ /]+\/[^ /:]+:[^ ]*$/.test(name)) said.add(name);
  }
  // kube-proxy's comment is the Service port's name even where the hash of an old release does
  // not check out: taken when its rules agree on one, the protocol left unknown
  return said.size === 1 ? { name: [...said][0]!, protocol: '' } : undefined;
}

// the KUBE-FW chain it names as written: a paste may hide its hash (KUBE-FW-xxxx)
const VERDICT_COMMENT =
  /^(.*) (?:has no endpoints|has no local endpoints|traffic not accepted by KUBE-FW-\S+)$/;

/** The Service port name and entry kind a kube-proxy comment gives. */
function commentName(comment: string, from: string): { name: string; kind: EntryKind } | undefined {
  for (const [suffix, kind] of COMMENT_KIND)
    if (comment.endsWith(suffix)) return { name: comment.slice(0, -suffix.length), kind };
  // node-port rules carry the bare name
  return from === 'KUBE-NODEPORTS' && /^[^ ]+\/[^ ]+$/.test(comment)
    ? { name: comment, kind: 'node-port' }
    : undefined;
}

/** A jump to KUBE-MARK-DROP (old kube-proxy: "has no local endpoints", KUBE-FW). */
function drops(tree: ServiceTree, nat: Table, chain: number, id: number): void {
  tree.verdicts.push({
    kind: 'drop',
    table: 'nat',
    chain: nat.nameOf(chain),
    comment: nat.comment(id),
    line: nat.line(id),
  });
}

/** What a KUBE-MARK-MASQ rule selects, in iptables words. */
function masqueradeCondition(t: Table, id: number): string {
  const src = t.addressMatch(id, 'source');
  if (src) return (src.negated ? '! -s ' : '-s ') + src.cidr;
  if (!t.hasOtherMatches(id)) return 'all';
  const rule = t.rule(id);
  const parts: string[] = [];
  if (rule.inInterface)
    parts.push(`${rule.inInterface.negated ? '! ' : ''}-i ${rule.inInterface.name}`);
  for (const m of rule.matches) {
    if (m.kind === 'addrtype' && m.srcType)
      parts.push(`${m.srcType.negated ? '! ' : ''}--src-type ${m.srcType.types.join(',')}`);
    if (m.kind === 'physdev') parts.push('physdev');
    // what an `iptables -L` paste printed and kdebug did not read: shown as printed
    const unread = unreadText(m);
    if (unread !== undefined) parts.push(`"${unread}" (not read)`);
  }
  return parts.length > 0 ? parts.join(' ') : 'all';
}

function affinitySeconds(t: Table, id: number): number | undefined {
  for (const m of t.rule(id).matches) if (m.kind === 'recent') return m.seconds;
  return undefined;
}
