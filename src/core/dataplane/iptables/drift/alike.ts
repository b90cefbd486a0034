// Lines of a finding that differ in text only: kube-proxy's line and the node's that act the same
// (a comment, a probability spelled otherwise, the masquerade rule where releases before 1.21 put
// it). The evidence shows neither as a difference.
import type { DriftLines } from '../../drift.js';
import { chainLines, entryLines, type DriftContext } from './context.js';

/** A rule as it acts: comments do not match packets, and the kernel keeps round(p * 2^31). */
export function acting(line: string): string {
  return line
    .replace(/ -m comment --comment (?:"(?:[^"\\]|\\.)*"|\S+)/g, '')
    .replace(
      / --probability (\S+)/,
      (_, p: string) => ` --probability ${Math.round(Number(p) * 0x80000000)}`,
    )
    .trim();
}

/** A per-Service chain of a line (small: read whole; the shared chains hold every Service's). */
const chainOf = (line: string) =>
  /^-t nat -A (KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP)-\S+) /.exec(line)?.[1];

/** The expected lines of a finding the node holds acting alike, each with the node's line. */
export function alikeLines(
  c: DriftContext,
  service: string | undefined,
  expected: string[],
): NonNullable<DriftLines['alike']> {
  const out: NonNullable<DriftLines['alike']> = [];
  const sp = service === undefined ? undefined : c.exp.servicePorts.find((x) => x.name === service);
  const tree = sp && c.trees.get(sp.hash);
  const read = new Map<string, string[]>();
  for (const line of expected) {
    const chain = chainOf(line);
    if (!chain) continue;
    const want = acting(line);
    let lines = read.get(chain);
    if (!lines) read.set(chain, (lines = chainLines(c.nat, chain)));
    const held = lines.find((l) => l !== line && acting(l) === want);
    if (held) {
      out.push({ expected: line, actual: held });
      continue;
    }
    // before 1.21 the cluster IP's masquerade rule is in KUBE-SERVICES, just before its jump
    if (!sp || !tree || chain !== sp.internalChain || !line.endsWith(' -j KUBE-MARK-MASQ'))
      continue;
    const there = tree.masquerade.some(
      (m) => m.chain === 'KUBE-SERVICES' && m.condition === sp.clusterIPMasquerade,
    );
    const rule = there && entryLines(c, sp).find((l) => l.endsWith(' -j KUBE-MARK-MASQ'));
    if (rule) out.push({ expected: line, actual: rule });
  }
  return out;
}
