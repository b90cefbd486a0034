// What kdebug expect says a node in IPVS mode holds, against what a real kube-proxy programmed
// there (the IPVS VM's recording): one line per difference, [] when they agree. Both proxiers
// where the node has IPv6 (kube-proxy runs its IPv6 one there even in a single-stack cluster).
import type { Analysis } from '../../../src/core/nodes/analysis.js';
import {
  expectedIpvs,
  ipsetSaveLines,
  ipvsadmSaveLines,
  ipvsIptablesSave,
} from '../../../src/core/dataplane/ipvs/expected/expected.js';
import type { IPFamily } from '../../../src/core/ipv6.js';
import { differences } from '../cluster/truth.js';

const lines = (text = '') => text.split('\n').filter((l) => l && !l.startsWith('#'));

/** What is in `want` but not `got` and the reverse, as "missing: x" / "extra: x". */
function setDifferences(what: string, want: string[], got: string[]): string[] {
  const w = new Set(want);
  const g = new Set(got);
  return [
    ...[...w].filter((x) => !g.has(x)).map((x) => `${what} missing: ${x}`),
    ...[...g].filter((x) => !w.has(x)).map((x) => `${what} extra:   ${x}`),
  ];
}

export function ipvsDifferences(analysis: Analysis, node: string): string[] {
  const files = analysis.facts.nodes[node] ?? {};
  const addresses = /^kube-ipvs0\s+\S+\s+(.*)$/m.exec(files['ip-addr'] ?? '')?.[1] ?? '';
  const families: IPFamily[] = /\s[0-9a-f:]*:[0-9a-f:]*\/\d+/i.test(files['ip-addr'] ?? '')
    ? ['IPv4', 'IPv6']
    : ['IPv4'];
  const each = families.map((family) => {
    const n = analysis.node(node, undefined, family);
    return expectedIpvs(n.expected(), n.ipvsOptions());
  });
  const out = [
    ...setDifferences(
      'ipvsadm-save -n',
      each.flatMap(ipvsadmSaveLines),
      lines(files['ipvsadm-save']),
    ),
    // the kernel's ipset adds options of its own to what kube-proxy created: bucketsize, initval
    ...setDifferences(
      'ipset save',
      each.flatMap(ipsetSaveLines),
      lines(files['ipset-save']).map((l) => l.replace(/ bucketsize \d+ initval 0x[0-9a-f]+$/, '')),
    ),
    ...setDifferences(
      'kube-ipvs0',
      each.flatMap((e) => e.bound.map((ip) => `${ip}/${e.family === 'IPv6' ? 128 : 32}`)),
      addresses.trim().split(/\s+/).filter(Boolean),
    ),
  ];
  for (const e of each) {
    const stem = e.family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
    const d = differences(`${ipvsIptablesSave(e).join('\n')}\n`, files[stem] ?? '');
    out.push(...d.map((x) => `${stem}: ${x}`));
  }
  return out;
}
