// The expressions of kube-proxy's rules as nft -j writes them, built in this one place: the text
// and script readers (table-parts.ts) build them from what they read, the expected table
// (../expected/script.ts) from what it writes, so a rule kube-proxy should write and the one read
// from a node compare as equals.
import type { NftExpr } from './listing.js';

/** A jump or goto to a chain, or a verdict without one (drop, accept, return, continue). */
export function verdictExpr(kind: string, target?: string): NftExpr {
  return target !== undefined ? { [kind]: { target } } : { [kind]: null };
}

/** `numgen random mod N vmap { 0 : goto X, ... }`: one of the chains picked at random. */
export function numgenVmapExpr(mod: number, targets: [number, NftExpr][]): NftExpr {
  return { vmap: { key: { numgen: { mode: 'random', mod } }, data: { set: targets } } };
}

/** `dnat ip addr . port to numgen random mod N map { 0 : IP . PORT, ... }` (1.33 on). */
export function numgenDnatExpr(
  family: string,
  mod: number,
  targets: [number, (string | number)[]][],
): NftExpr {
  const set = targets.map(([k, parts]) => [k, { concat: parts }]);
  return {
    dnat: { family, addr: { map: { key: { numgen: { mode: 'random', mod } }, data: { set } } } },
  };
}

/** `dnat to IP:PORT` (an IPv6 address without its brackets). */
export const dnatExpr = (addr: string, port: number): NftExpr => ({ dnat: { addr, port } });

/** `mark set mark or 0x4000`: the masquerade mark. */
export function markOrExpr(mark: number): NftExpr {
  return {
    mangle: {
      key: { meta: { key: 'mark' } },
      value: { '|': [{ meta: { key: 'mark' } }, mark] },
    },
  };
}

/** `update @SET { ip saddr }`: the client remembered in an affinity set. */
export function updateSaddrExpr(protocol: string, set: string): NftExpr {
  return { set: { op: 'update', elem: { payload: { protocol, field: 'saddr' } }, set } };
}

/** The matches before a rule's statement: `ip saddr @affinity-...` read as a set lookup (the
 * trees follow those), every other kept as its text. */
export function matchExprs(t: string): NftExpr[] {
  const out: NftExpr[] = [];
  const rest = t.trim();
  // one match per left-hand side: "ip daddr @cluster-ips ip saddr != 10.0.0.0/8" is two
  LEFT.lastIndex = 1; // the first piece starts at 0, whatever it starts with
  for (let from = 0; from < rest.length;) {
    const at = LEFT.exec(rest)?.index ?? rest.length;
    const piece = rest.slice(from, at).trim();
    from = at;
    // an address looked up in a named set, as nft's JSON has it (affinity, cluster-ips …)
    const m = /^(ip6?) ([sd]addr) (@\S+)$/.exec(piece);
    if (m)
      out.push({
        match: { op: '==', left: { payload: { protocol: m[1], field: m[2] } }, right: m[3] },
      });
    else out.push({ match: { text: piece } });
  }
  return out;
}

/** Where a match starts: its left-hand side. */
const LEFT = /(?:^| )(?=(?:ip6? [sd]addr|meta [a-z0-9]+|fib [a-z]+ type|ct [a-z]+|th [sd]port)\b)/g;
