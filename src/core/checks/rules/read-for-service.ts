// What the Rules step says where a node's rules were read for this Service only (kdebug svc on a
// large cluster), one home for every mode: iptables mode's nat chains by name, IPVS mode's virtual
// servers and ipset entries by address; and where such a read gave way to the node's whole dump,
// on which node and why. The rest of the node was not seen, so nothing is said about it.
import { seen } from '../../findings/evidence.js';
import type { IPFamily } from '../../ipv6.js';
import { thousands, type Finding } from '../../model.js';
import { entryRulesNotKeptOf, rulesReadWholeOf } from '../../facts/not-read.js';
import { count, findingOf, listFew } from '../check.js';
import type { CheckContext } from '../context.js';

const finding = findingOf('rules');

/** iptables mode: where only the Service's own chains were read (by name), say so. */
export function byName(ctx: CheckContext, nodes: string[]): string {
  let filterWhole = false;
  const byNameOn: string[] = [];
  const read = nodes.flatMap((n) => {
    const chains = ctx.analysis.node(n).chainsRead();
    if (chains && !ctx.analysis.node(n).chainsRead('filter')) filterWhole = true;
    if (chains) byNameOn.push(n);
    return chains ? [`${n} (${count(chains.size, 'chain')})`] : [];
  });
  const notKept = entryRulesNotKeptOf(ctx.facts);
  const dropped = byNameOn.reduce(
    (n, node) => n + Object.values(notKept[node] ?? {}).reduce((a, b) => a + b, 0),
    0,
  );
  return read.length === 0
    ? ''
    : ` On ${listFew(read)} kdebug read the nat chains this Service reaches by name (iptables -t nat -S CHAIN) and ${filterWhole ? 'the filter table whole' : "kube-proxy's filter chains by name"}; the rest ${filterWhole ? 'of the nat table ' : ''}was not read.${dropped > 0 ? ` Of KUBE-SERVICES and KUBE-NODEPORTS it kept this Service's rules and those of no Service: ${thousands(dropped)} rules of other Services, which cannot take its packets, were not kept.` : ''}`;
}

/** IPVS mode: where only the Service's own virtual servers and ipset entries were read (by
 * address), say so. */
export function byAddress(ctx: CheckContext, node: string, family: IPFamily): string {
  const read = ctx.analysis.node(node, undefined, family).ipvsReadByAddress();
  if (!read) return '';
  const tested = read.entries !== undefined;
  const sets = tested
    ? ` and ${count(read.entries!, 'ipset entry', 'ipset entries')} (ipset test SET ENTRY)`
    : read.ipsetsWhole
      ? ", and kube-proxy's ipsets whole"
      : '';
  return ` On ${node} kdebug read this Service's IPVS state by address: its ${count(read.virtualServers, 'virtual server')} (ipvsadm -Ln -t|-u|--sctp-service IP:PORT)${sets}; the node's other virtual servers${tested ? ' and ipset entries' : ''} were not read.`;
}

/** Nodes where a read of this Service's rules alone (by name or by address) gave way to the whole
 * dump, and why: an info on every such node, whatever its rules hold. */
export function readWhole(ctx: CheckContext): Finding[] {
  const whole = rulesReadWholeOf(ctx.facts);
  const nodes = Object.keys(whole).filter((n) => ctx.nodeNames().includes(n));
  if (nodes.length === 0) return [];
  const one = nodes.length === 1;
  return [
    finding(
      'rules-read-whole',
      'pass',
      `${one ? nodes[0] : `${nodes.length} nodes`}: the whole dump read, not this Service's rules alone`,
      {
        explanation: `kdebug read the whole dump instead of this Service's rules alone (its chains by name, its virtual servers and ipset entries by address) on ${listFew(nodes)}: ${nodes
          .slice(0, 5)
          .map((n) => `${one ? '' : `${n}: `}${whole[n]}`)
          .join('; ')}${nodes.length > 5 ? `; and ${nodes.length - 5} more` : ''}.`,
        evidence: nodes.map((n) => seen(`${n}: read whole: ${whole[n]}`, { node: n })),
        info: true,
        folded: true,
        ...(one ? { node: nodes[0]! } : { nodes }),
      },
    ),
  ];
}
