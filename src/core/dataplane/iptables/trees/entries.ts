// The entry points of the trees: the rules of KUBE-SERVICES and KUBE-NODEPORTS that send a
// Service port's traffic to its chains (cluster, external and load-balancer IPs, node ports), and
// the userspace-mode portals that send it to kube-proxy itself.
import { hash16 } from '../../kube-proxy/chain-names.js';
import type { Table } from '../read/parse.js';
import {
  type PORTAL_CHAINS,
  EXTERNAL_OR_LB,
  type EntryKind,
  type EntryPoint,
  onLoopback,
} from '../../trees.js';
import { type TreeIndex, append, ownIndexes } from './tree-index.js';
import { placeholderOf } from '../read/paste/list-view/unread.js';
import { absentKind, commentName, cutKind, stripHost } from './comments.js';

/** Entry rules of KUBE-SERVICES / KUBE-NODEPORTS. */
export function entries(ix: TreeIndex, nat: Table, from: 'KUBE-SERVICES' | 'KUBE-NODEPORTS'): void {
  const chain = nat.chain(from);
  if (!chain) return;
  const masq: number[] = [];
  // the asked trees' own chains by index: the other Services' rules are passed without a name
  const wanted = ix.only && ownIndexes(nat, ix.only);
  const only = ix.only && [...ix.only];
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
    if (ix.only && (hash === undefined || !ix.only.has(hash))) continue;
    const comment = nat.comment(id);
    const protocol = nat.protocol(id) ?? 'tcp';
    const address = stripHost(nat.destination(id));
    const dport = nat.dport(id);
    const port = dport === undefined ? undefined : Number(dport);
    const named = comment === undefined ? undefined : commentName(comment, from);
    const tree = ix.tree(hash, named?.name, protocol);
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
    const placeholder =
      address === undefined || port === undefined ? placeholders(nat, id) : undefined;
    tree.entries = append(tree.entries, {
      kind,
      ...(kind === 'virtual-server' ? { label: EXTERNAL_OR_LB } : {}),
      ...(kind === 'node-port' && onLoopback(address) ? { localhost: true as const } : {}),
      address,
      port,
      protocol,
      chain: target!,
      from,
      ...(placeholder ? { placeholder } : {}),
      line: nat.line(id),
    });
    if (kind === 'cluster-ip' && tree.clusterIP === undefined) {
      tree.clusterIP = address;
      tree.port = port;
      ix.byVip.set(`${address}:${port}/${protocol}`, tree);
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
      ? ix.byHash(hash16(named.name + protocol))
      : ix.byVip.get(`${stripHost(nat.destination(id))}:${nat.dport(id)}/${protocol}`);
    if (tree)
      tree.masquerade = append(tree.masquerade, {
        chain: from,
        ...ix.masquerade(nat, id),
        line: nat.line(id),
      });
  }
}

/** Userspace-mode portals: each rule sends a Service port's traffic to kube-proxy itself. */
export function portals(ix: TreeIndex, nat: Table, from: (typeof PORTAL_CHAINS)[number]): void {
  const chain = nat.chain(from);
  if (!chain) return;
  for (let k = 0; k < chain.ruleCount; k++) {
    const id = chain.ruleId(k);
    const comment = nat.comment(id);
    const m = /(?:--to-ports |--to-destination [^ ]*:)(\d+)/.exec(nat.text(id));
    if (!comment || !m || ix.onlyNames?.has(comment) === false) continue;
    const protocol = nat.protocol(id) ?? 'tcp';
    const nodePort = from.startsWith('KUBE-NODEPORT-');
    const dport = nat.dport(id);
    const port = dport === undefined ? undefined : Number(dport);
    const address = stripHost(nat.destination(id));
    const tree = ix.tree(undefined, comment, protocol);
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

/** The template placeholders an entry rule's author typed for its address and port, if any. */
function placeholders(nat: Table, id: number): EntryPoint['placeholder'] {
  // a placeholder is an `unread` module, one of the other matches: most rules are not typed
  if (!nat.hasOtherMatches(id)) return undefined;
  const out: NonNullable<EntryPoint['placeholder']> = {};
  for (const m of nat.rule(id).matches) {
    const p = placeholderOf(m);
    if (p?.of === 'destination') out.address = p.value;
    else if (p?.of === 'dport') out.port = p.value;
  }
  return out.address !== undefined || out.port !== undefined ? out : undefined;
}
