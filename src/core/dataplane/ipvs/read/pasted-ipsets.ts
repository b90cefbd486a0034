// `ipset list` pasted beside an ipvsadm listing: kube-proxy's IPVS-mode sets, each "Name: ...",
// its header lines, "Members:", one entry a line, a blank line after. KUBE-LOOP-BACK says which
// real servers are masqueraded when they reach themselves (hairpin); its lines are named, not
// called prose.
import { parseIpvs, type IpvsTable } from './listing.js';
import { buildIpvsTrees } from '../trees.js';
import type { ServiceTrees } from '../../trees.js';
import { parseIpsets, type Ipset } from './ipset.js';

/** The sets a paste holds in `ipset list`'s plain form, and the lines they are on (1-based). */
export interface PastedIpsets {
  sets: Map<string, Ipset>;
  lines: number[];
}

/** The header lines `ipset list` prints between a set's Name and its Members. */
const HEADER = /^(?:Type|Revision|Header|Size in memory|References|Number of entries):/;

export function pastedIpsets(text: string): PastedIpsets | undefined {
  const raw = text.split('\n').map((l) => l.replace(/\r$/, '').trim());
  const lines: number[] = [];
  let inSet = false;
  let members = false;
  raw.forEach((t, i) => {
    if (/^Name: \S+$/.test(t)) [inSet, members] = [true, false];
    else if (!inSet || t === '' || /^```/.test(t)) return void (inSet = false);
    else if (t === 'Members:') members = true;
    else if (!(members ? /^\S+$/.test(t) : HEADER.test(t))) return void (inSet = false);
    lines.push(i + 1);
  });
  if (lines.length === 0) return undefined;
  const kept = new Set(lines);
  // the sets' own lines alone, each on its line (the rest blank), for the set reader
  const sets = parseIpsets(raw.map((t, i) => (kept.has(i + 1) ? t : '')).join('\n'));
  return sets.size > 0 ? { sets, lines } : undefined;
}

/** The listing with the sets' lines no longer among its skipped ones, and the sets named. */
export function withIpsets(t: IpvsTable, p: PastedIpsets | undefined): IpvsTable {
  if (!p) return t;
  const lines = new Set(p.lines);
  return {
    ...t,
    skipped: t.skipped.filter((n) => !lines.has(n)),
    ipsets: { lines: p.lines, names: [...p.sets.keys()] },
  };
}

/** An ipvsadm paste read with the `ipset list` output beside it: the listing, and its trees with
 * each real server's hairpin from KUBE-LOOP-BACK where the paste holds it. */
export function readIpvsPaste(
  text: string,
  file: string,
): { dump: IpvsTable; trees: ServiceTrees } {
  const ipsets = pastedIpsets(text);
  const dump = withIpsets(parseIpvs(text, file), ipsets);
  const loopBack = ipsets?.sets.get('KUBE-LOOP-BACK')?.entries;
  return { dump, trees: buildIpvsTrees(dump, loopBack ? { loopBack } : {}) };
}
