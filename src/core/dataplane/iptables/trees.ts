// A rules dump read back into Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees, one per Service
// port. Trees come from following the jumps; comments only name them (large clusters have none on
// the SVC -> SEP jumps, and old dumps none at all).
import type { Ruleset, Table } from './read/parse.js';
import type { ServicePortName } from '../../model.js';
import { hostPort } from '../../ipv6.js';
import { kubeProxyChain } from '../kube-proxy/chain-names.js';
import { natInPart } from '../orphans.js';
import {
  PORTAL_CHAINS,
  type OrphanChain,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../trees.js';
import { append, OWN_SLOT, TreeIndex } from './trees/tree-index.js';
import { absentKind, ENDPOINT_COMMENT, nameFromComments, stripHost } from './trees/comments.js';
import { entries, portals } from './trees/entries.js';
import { verdicts } from './trees/filter-verdicts.js';
import {
  absentEndpoint,
  KubeSepChains,
  resolveEndpointJumps,
  SEP,
  SEP_CHAIN,
  SEP_REACHED,
  SEP_STRIDE,
} from './trees/endpoint-chains.js';

export interface TreeOptions {
  /** Service ports the caller knows (from API objects): names trees of dumps without comments;
   * `hash`, their chains' suffix, saves hashing the name again. */
  servicePorts?: { name: ServicePortName; protocol: string; hash?: string }[];
  /** Build only the trees of these Service ports (one Service's answer): the rest of the dump
   * is not walked, and no orphan chains are looked for. */
  only?: { name: ServicePortName; protocol: string; hash?: string }[];
}

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

/** A tree whose own chain the paste may not hold in full claims nothing about its endpoints: no
 * share of the Service (rules above the paste would take theirs first, rules past it the rest). */
function markPartial(nat: Table, tree: ServiceTree): void {
  const own = tree.chains.svc ?? tree.chains.svl ?? tree.chains.xlb;
  const why = own === undefined ? undefined : nat.partial.get(own);
  if (why === undefined) return;
  tree.partial = why;
  for (const ep of [...tree.endpoints, ...(tree.localEndpoints ?? [])]) ep.shareUnknown = why;
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

class TreeBuilder extends TreeIndex {
  private readonly visited: Uint8Array; // by nat chain index
  private readonly sepTargets = new Map<string, TreeEndpoint>(); // absent KUBE-SEP chains, by name
  private readonly seps = new KubeSepChains();

  private readonly natPart: boolean;

  constructor(rs: Ruleset, options: TreeOptions) {
    super(rs, options);
    this.natPart = natInPart(rs);
    const chains = this.nat?.chainCount ?? 0;
    this.visited = new Uint8Array(chains);
  }

  build(): ServiceTrees {
    const nat = this.nat;
    let entered = 0; // trees from entry points; the ones unreached() adds after them may be reached by none
    if (nat) {
      entries(this, nat, 'KUBE-SERVICES');
      entries(this, nat, 'KUBE-NODEPORTS');
      for (const portal of PORTAL_CHAINS) portals(this, nat, portal);
      entered = this.trees.length;
      this.seps.sep = new Int32Array(nat.chainCount * SEP_STRIDE);
      this.seps.sepAddress = new Array<string | undefined>(nat.chainCount);
      if (this.only) this.unreachedOf(nat, this.only);
      else {
        this.unreached(nat);
        for (let c = 0; c < nat.chainCount; c++) this.seps.readSep(nat, c);
        resolveEndpointJumps(nat);
      }
      const own = this.only ? this.ownChainsOf(nat) : this.ownChains(nat);
      this.trees.forEach((tree, i) => {
        if (tree.hash) this.follow(nat, tree, own.subarray(i * 5, i * 5 + 5));
      });
      // chains pasted without KUBE-SERVICES, from a table held in part: a whole one proves them orphans
      if (!this.only && this.natPart && nat.indexOf('KUBE-SERVICES') < 0) this.endpointsAlone(nat);
    }
    if (this.filter) {
      for (const chain of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL'])
        verdicts(this, this.filter, chain);
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
      if (this.only && sep >= 0) this.seps.readSep(nat, sep);
      const at = sep * SEP_STRIDE;
      let ep: TreeEndpoint;
      if (sep < 0 || (this.seps.sep[at + SEP.flags]! & SEP_CHAIN) === 0) {
        const target = nat.target(id);
        if (target === 'KUBE-MARK-DROP') drops(tree, nat, chain, id);
        // a Service chain the paste does not hold (XLB's redirect of Pods to SVC before 1.24):
        // where that traffic goes is not known
        const kind = sep < 0 && target !== undefined ? absentKind(target) : undefined;
        if (kind && kind !== 'KUBE-SEP' && !tree.absentChains?.includes(target!))
          tree.absentChains = append(tree.absentChains ?? [], target!);
        if (sep >= 0 || !target?.startsWith('KUBE-SEP-')) continue;
        // a KUBE-SEP chain not in this paste: its share is known from the jumps, not its target
        const known = this.sepTargets.get(target);
        if (known && endpoints.includes(known)) ep = known;
        else {
          ep = absentEndpoint(target, nat.line(id), nat.comment(id));
          this.sepTargets.set(target, ep);
          endpoints.push(ep);
        }
      } else if (this.seps.sep[at + SEP.call] === call) {
        // affinity rules come first: the jump after one reaches the same endpoint
        ep = endpoints[this.seps.sep[at + SEP.position]!]!;
      } else {
        ep = this.seps.endpoint(nat, sep, nat.line(id));
        // a DNAT target iptables 1.4 cannot print: kube-proxy's comment on the jump names it
        const said = ep.quirk && ENDPOINT_COMMENT.exec(nat.comment(id) ?? '')?.[1];
        if (said) Object.assign(ep, { address: said, addressFromComment: true });
        this.seps.sep[at + SEP.call] = call;
        this.seps.sep[at + SEP.position] = endpoints.length;
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

  /** A paste of KUBE-SEP chains without their Service's chain: each an endpoint of the Service
   * port its comments name, whose KUBE-SVC chain (kube-proxy's hash of that name and the DNAT
   * rule's protocol) is not in the paste, so no share is known. */
  private endpointsAlone(nat: Table): void {
    for (let c = 0; c < nat.chainCount; c++) {
      const flags = this.seps.sep[c * SEP_STRIDE + SEP.flags]!;
      if ((flags & SEP_CHAIN) === 0 || (flags & SEP_REACHED) !== 0) continue;
      const said = sepServicePort(nat, c);
      if (!said) continue;
      const svc = kubeProxyChain('KUBE-SVC', said.name, said.protocol);
      if (nat.indexOf(svc) >= 0) continue; // its Service chain is here and does not jump to it
      const known = this.byHash(svc.slice(-16));
      const tree = known ?? this.tree(undefined, said.name, said.protocol);
      if (!known) {
        tree.chains.svc = svc;
        tree.partial = `${svc} is not in the paste, only endpoint chains whose comments name its Service port: their shares, and whether it has others, are not known`;
      }
      const ep = this.seps.endpoint(nat, c, nat.line(nat.ruleIdOf(c, 0)));
      ep.shareUnknown = `${tree.chains.svc ?? svc} is not in the paste`;
      tree.endpoints.push(ep);
    }
  }

  /** A KUBE-MARK-MASQ rule of the tree's own chains. */
  private masquerades(tree: ServiceTree, nat: Table, chain: number, id: number): void {
    tree.masquerade = append(tree.masquerade, {
      chain: nat.nameOf(chain),
      ...this.masquerade(nat, id),
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

  /** Chains no entry point reaches: KUBE-SEP chains no tree jumps to, and the own chains of
   * the trees built for them (`unreached`), each with its tree. */
  private orphans(unreached: ServiceTree[]): OrphanChain[] {
    const out: OrphanChain[] = [];
    if (!this.nat) return out;
    const nat = this.nat;
    for (let c = 0; c < nat.chainCount; c++) {
      const reached = (this.seps.sep[c * SEP_STRIDE + SEP.flags]! & SEP_REACHED) !== 0;
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
}

/** A jump to KUBE-MARK-DROP (old kube-proxy: "has no local endpoints", KUBE-FW). */
function drops(tree: ServiceTree, nat: Table, chain: number, id: number): void {
  const condition = fallThroughSources(nat, chain, id);
  tree.verdicts.push({
    kind: 'drop',
    table: 'nat',
    chain: nat.nameOf(chain),
    comment: nat.comment(id),
    line: nat.line(id),
    ...(condition ? { condition } : {}),
  });
}

/** Which packets reach a KUBE-FW chain's drop: those from no source the rules above it send on
 * (kube-proxy writes one `-s RANGE -j` jump per loadBalancerSourceRanges entry, then the drop).
 * Undefined where a rule above is not such a jump, or the chain's rules above may lie outside
 * the paste. */
function fallThroughSources(nat: Table, chain: number, id: number): string | undefined {
  const name = nat.nameOf(chain);
  if (!name.startsWith('KUBE-FW-') || nat.partial.has(name)) return undefined;
  const sources: string[] = [];
  const to = new Set<string>();
  for (let k = 0; k < nat.ruleCountOf(chain); k++) {
    const above = nat.ruleIdOf(chain, k);
    if (above === id) break;
    if (nat.marksForMasquerade(above)) continue;
    const source = nat.rule(above).source;
    const target = nat.target(above);
    if (!source || source.negated || !target || target === 'KUBE-MARK-DROP') return undefined;
    sources.push(source.cidr);
    to.add(target);
  }
  if (sources.length === 0) return undefined;
  // its declaration not read (a paste's part of the chain): ranges above its first rule here may
  // be left out
  const above =
    nat.chainLine(chain) === undefined
      ? `; the chain's declaration is not among the lines read, so a range above line ${nat.line(nat.ruleIdOf(chain, 0))} may be left out`
      : '';
  return `from a source outside ${sources.join(', ')} (${sources.length === 1 ? 'that source goes' : 'those go'} to ${[...to].join(', ')} first: the Service's loadBalancerSourceRanges${above})`;
}

/** The Service port a KUBE-SEP chain's comments name ("ns/svc:port", as kube-proxy writes on
 * each of its rules) and its DNAT rule's protocol; undefined where either is not in the paste. */
function sepServicePort(nat: Table, c: number): { name: string; protocol: string } | undefined {
  let name: string | undefined;
  let protocol: string | undefined;
  for (let k = 0; k < nat.ruleCountOf(c); k++) {
    const id = nat.ruleIdOf(c, k);
    const comment = nat.comment(id);
    if (comment !== undefined && /^[^ /]+\/[^ /]+$/.test(comment)) name ??= comment;
    if (nat.isDnat(id)) protocol ??= nat.protocol(id);
  }
  return name !== undefined && protocol ? { name, protocol } : undefined;
}

function affinitySeconds(t: Table, id: number): number | undefined {
  for (const m of t.rule(id).matches) if (m.kind === 'recent') return m.seconds;
  return undefined;
}
