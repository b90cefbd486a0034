// The expected rules as text: what `kdebug expect` prints, in iptables-save's layout.
import type { ExpectedRules, RuleLine } from '../kube-proxy/expected.js';

/** Chains kube-proxy declares in each table besides the built-in ones (plus its canary). */
export function declaredChains(exp: ExpectedRules): { nat: string[]; filter: string[] } {
  const nat = ['KUBE-MARK-MASQ', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-PROXY-CANARY'];
  nat.push('KUBE-SERVICES');
  for (const sp of exp.servicePorts) {
    nat.push(...Object.values(sp.chains));
    nat.push(...sp.reachableEndpoints.map((e) => e.chain));
  }
  const filter = [
    'KUBE-EXTERNAL-SERVICES',
    // kube-proxy ensures it (and its INPUT/OUTPUT jumps) in both families on every full sync;
    // only IPv4 with localhost node ports fills it
    'KUBE-FIREWALL',
    'KUBE-FORWARD',
    'KUBE-NODEPORTS',
    'KUBE-PROXY-CANARY',
    'KUBE-PROXY-FIREWALL',
    'KUBE-SERVICES',
  ];
  // code-unit order is byte order for these ASCII names, as iptables-save sorts them
  return { nat: [...new Set(nat)].sort(), filter };
}

/** The built-in chains of each table, in iptables-save's order. */
export const BUILTINS = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
} as const;

/**
 * The expected rules as iptables-save prints them: filter then nat, built-in chains first, then
 * kube-proxy's chains in name order; rules grouped by chain; Service ports in name order (a real
 * node orders KUBE-SERVICES by Go map iteration, so compare that chain as a set).
 */
export function expectedSave(
  exp: ExpectedRules,
  options: { tables?: ('filter' | 'nat')[]; header?: boolean } = {},
): string {
  const out: string[] = [];
  const chains = declaredChains(exp);
  if (options.header !== false) {
    out.push(
      `# kdebug expect: the rules kube-proxy v1.${exp.release.minor} writes in iptables mode on node ${exp.node.name}`,
    );
    for (const n of exp.notes) out.push(`# note: ${n}`);
  }
  for (const table of options.tables ?? (['filter', 'nat'] as const)) {
    const rules = new Map<string, string[]>();
    const add = (l: RuleLine) => {
      const list = rules.get(l.chain);
      if (list) list.push(l.text);
      else rules.set(l.chain, [l.text]);
    };
    const fixed = exp.fixed[table];
    // per-Service rules come after the fixed ones, the node-ports rule stays last in KUBE-SERVICES
    const tail = fixed.filter((l) => l.chain === 'KUBE-SERVICES');
    fixed.filter((l) => l.chain !== 'KUBE-SERVICES').forEach(add);
    for (const sp of exp.servicePorts) sp[table].forEach(add);
    tail.forEach(add);
    out.push(`*${table}`);
    for (const b of BUILTINS[table]) out.push(`:${b} ACCEPT [0:0]`);
    for (const c of chains[table]) out.push(`:${c} - [0:0]`);
    for (const c of [...BUILTINS[table], ...chains[table]]) out.push(...(rules.get(c) ?? []));
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}
