// The REJECT and DROP rules kube-proxy writes in the filter table for Service ports without
// (local) endpoints, read into their trees, with the cluster IPs and node ports they name.
import type { Table } from '../read/parse.js';
import { type TreeIndex, append } from './tree-index.js';
import { stripHost } from './comments.js';

// the KUBE-FW chain it names as written: a paste may hide its hash (KUBE-FW-xxxx)
const VERDICT_COMMENT =
  /^(.*) (?:has no endpoints|has no local endpoints|traffic not accepted by KUBE-FW-\S+)$/;

/** REJECT / DROP rules kube-proxy writes in filter for Services without (local) endpoints. */
export function verdicts(ix: TreeIndex, filter: Table, name: string): void {
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
    if (ix.onlyNames && (m ? !ix.onlyNames.has(m[1]!) : !ix.byVip.has(vip))) continue;
    const tree = m
      ? ix.tree(undefined, m[1], protocol)
      : (ix.byVip.get(vip) ?? ix.tree(undefined, undefined, protocol));
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
      ix.byVip.set(vip, tree);
    }
    // to a local address, on a port: the Service's node port (kube-proxy 1.25 on writes it
    // so), read from here only where the paste has no KUBE-NODEPORTS to read it from, or
    // where the port has no endpoints (kube-proxy then writes no nat rule for it at all)
    if (
      name === 'KUBE-EXTERNAL-SERVICES' &&
      (ix.nat === undefined ||
        ix.nat.indexOf('KUBE-NODEPORTS') < 0 ||
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
