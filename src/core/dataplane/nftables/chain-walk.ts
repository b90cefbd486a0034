// What some of kube-proxy's nftables chains do to one packet, each rule read as the trace's walk
// reads it (trace-rule.ts): for drift and hairpin, which ask it of the masquerade path only.
import type { PacketState } from '../trace/packet.js';
import type { NftChain, NftTable } from './read/listing.js';
import { ruleText } from './render.js';
import { NftTracer } from './trace.js';
import { RuleRun, tokens } from './trace-rule.js';

export interface ChainsRun {
  pkt: PacketState;
  end: 'ACCEPT' | 'DROP' | 'REJECT';
}

/** The packet after `chains` in turn (a hook's base chains, or one regular chain), jumps and
 * gotos followed; undefined where a rule branches (numgen) or looks up what the listing cut. */
export function throughChains(
  t: NftTable,
  chains: NftChain[],
  start: PacketState,
): ChainsRun | undefined {
  const tracer = new NftTracer(t, { localAddresses: [], interfaces: [] });
  let pkt = start;
  let steps = 0;
  for (const base of chains) {
    const stack = [{ chain: base, index: 0 }];
    while (stack.length > 0) {
      if (++steps > 10_000) return undefined; // a loop in the table
      const frame = stack[stack.length - 1]!;
      const rule = frame.chain.rules[frame.index++];
      if (!rule) {
        stack.pop();
        continue;
      }
      const walk = { p: 1, pkt, rules: [], assumptions: new Set<string>() };
      const results = new RuleRun(tokens(ruleText(rule)), walk, tracer).results();
      const [r] = results;
      if (!r || results.length > 1 || r.cut) return undefined;
      if (!r.matched) continue;
      pkt = r.pkt;
      const v = r.verdict;
      if (v?.kind === 'jump' || v?.kind === 'goto') {
        const to = t.chain(v.target!);
        if (!to) continue; // nft refuses such a table: elementTargets says so
        if (v.kind === 'goto') stack.pop();
        stack.push({ chain: to, index: 0 });
      } else if (v?.kind === 'return') stack.pop();
      else if (v?.kind === 'drop') return { pkt, end: 'DROP' };
      else if (v?.kind === 'reject') return { pkt, end: 'REJECT' };
      // accept ends this base chain; the hook's next one sees the packet
      else if (v?.kind === 'accept') stack.length = 0;
    }
  }
  return { pkt, end: 'ACCEPT' };
}

/** A hook's base chains in the order netfilter runs them: lowest priority first. */
export const hookChains = (t: NftTable, hook: string): NftChain[] =>
  t.chains.filter((c) => c.hook === hook).sort((a, b) => (a.prio ?? 0) - (b.prio ?? 0));
