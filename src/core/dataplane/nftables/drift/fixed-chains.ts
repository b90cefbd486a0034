// Drift of what every sync writes in nftables mode whatever the Services: the base chains and
// their hooks, the dispatch, masquerading and check chains' rules, the node-port addresses, and
// map elements that lead to a chain the table lacks.
import { quote, type DriftId } from '../../drift.js';
import type { NftTable } from '../read/listing.js';
import { ruleText } from '../render.js';
import { portChain } from '../trees/port-chain.js';
import { keyText, ruleAt, type PortCheck } from './context.js';
import { signature } from './rule-signature.js';
import { MASQUERADE_CHAINS, masqueradePath } from './masquerade-path.js';

/** Which finding a difference in one of the table's fixed chains is. */
const FIXED_ID: Record<string, DriftId> = {
  services: 'entry-jump-missing',
  masquerading: 'masquerade-missing',
  'mark-for-masquerade': 'masquerade-missing',
  'cluster-ips-check': 'no-endpoints-reject-missing',
  'service-endpoints-check': 'no-endpoints-reject-missing',
  'nodeport-endpoints-check': 'no-endpoints-reject-missing',
  'reject-chain': 'no-endpoints-reject-missing',
  'firewall-check': 'firewall-missing',
};

/** The chains every sync writes (base chains, dispatch, masquerading, the checks): each rule
 * kube-proxy writes there, by what it matches and where it goes, and each base chain's hook;
 * the node-port addresses. */
export function fixedChains(want: NftTable, c: PortCheck): void {
  // a chain or set with a line not read may hold what it seems to lack
  const blind = (kind: string, name: string) =>
    c.unread.some((u) => u.block?.kind === kind && u.block.name === name);
  // the mark and its masquerade are judged by what they do, however spelled
  masqueradePath(c);
  for (const w of want.chains) {
    if (portChain(w.name)) continue;
    const a = c.table.chain(w.name);
    const byBehaviour = MASQUERADE_CHAINS.has(w.name);
    if (byBehaviour && !a) continue;
    const id = FIXED_ID[w.name] ?? (w.hook ? 'entry-jump-missing' : 'no-endpoints-reject-missing');
    const hook = (x: typeof w) =>
      x.hook ? `type ${x.type} hook ${x.hook} priority ${x.prio}` : '';
    const unseen = blind('chain', w.name);
    if (!a || (hook(a) !== hook(w) && !(unseen && !a.hook))) {
      c.add(id, {
        title: !a ? `chain ${w.name} missing` : `${w.name} hooked as ${hook(a) || 'no base chain'}`,
        message: `kube-proxy's table on ${c.node} ${!a ? `has no chain ${w.name}` : `has ${w.name} as ${hook(a) || 'a regular chain'}, not ${hook(w)}`}: what it does for every Service is not done there.`,
        expected: c.script().filter((l) => l.includes(` ${w.name} `)),
      });
      continue;
    }
    if (unseen) continue;
    const have = a.rules.map(signature);
    for (const r of w.rules) {
      const s = signature(r);
      // the hairpin-connections lookup (1.36 on) is per endpoint, not the marked path
      if (byBehaviour && !s.includes('@hairpin-connections')) continue;
      const i = have.indexOf(s);
      if (i >= 0) {
        have.splice(i, 1);
        continue;
      }
      const masq = w.name === 'services' && /\bmangle\b/.test(s);
      c.add(masq ? 'masquerade-missing' : id, {
        title: `${w.name}: no rule ${ruleText(r)}`,
        message: `kube-proxy's table on ${c.node} lacks the rule "${ruleText(r)}" in ${w.name}${masq ? ': cluster IP traffic from outside the cluster is not masqueraded' : ''}.`,
        expected: [`add rule ${want.family} kube-proxy ${w.name} ${ruleText(r)}`],
        // the chain's rules beside the one it lacks, as kube-proxy writes them
        actual: a.rules.map((x) => ruleAt(c.source, x, true)),
      });
    }
  }
  const wantIPs = (want.set('nodeport-ips')?.elements ?? []).map(keyText);
  const gotIPs = new Set((c.table.set('nodeport-ips')?.elements ?? []).map(keyText));
  if (blind('set', 'nodeport-ips')) return;
  for (const ip of wantIPs.filter((x) => !gotIPs.has(x)))
    c.add('nodeport-missing', {
      title: `node ports not answered on ${ip}`,
      message: `kube-proxy's table on ${c.node} has no nodeport-ips element ${ip}: no Service's node port answers on that address.`,
      expected: [`add element ${want.family} kube-proxy nodeport-ips { ${ip} }`],
    });
}

/** Map elements whose chain the table lacks (nft itself refuses to load such a table). */
export function elementTargets(c: PortCheck, only: Set<string> | undefined): void {
  for (const map of ['service-ips', 'service-nodeports', 'firewall-ips'])
    for (const e of c.table.set(map)?.elements ?? []) {
      const target = e.verdict?.target;
      if (!target || c.table.chain(target)) continue;
      // read only for an element whose chain is missing: most elements' chains are there
      const port = portChain(target);
      if (only && !(port && only.has(port.name))) continue;
      c.add('element-chain-missing', {
        ...(port ? { service: port.name } : {}),
        title: `${map} sends ${keyText(e)} to ${target}, which is missing`,
        message: `kube-proxy's table on ${c.node} has the ${map} element ${keyText(e)} : goto ${target}, but no chain ${target}: nft refuses such a table, so the paste or listing lacks it, or it was deleted by hand.`,
        actual: [quote(c.source, e.line, `${map} ${keyText(e)} : goto ${target}`)],
      });
    }
}
