// What a Service chain does with the shares no endpoint takes, as the kernel walks it: a chain
// that ends without a verdict returns to its caller, so a KUBE-SEP chain with no DNAT rule hands
// its packets back to the next rule of the Service chain, and past the Service chain's last rule
// they leave it not DNATed.
import { percent } from '../../../../model.js';
import { chainLines, nat, syncNext, vip, type DriftContext } from '../context.js';
import { podOf } from '../../../kube-proxy/endpoints.js';
import type { ExpectedEndpoint, ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { TreeEndpoint } from '../../../trees.js';

/** Shares below this are rounding, not traffic. */
const NONE = 0.0005;

/** An endpoint chain the dump holds in full with no DNAT rule (not one whose DNAT is unreadable). */
export const dnatMissing = (a: TreeEndpoint) =>
  !a.address &&
  !a.inferredIP &&
  !a.quirk &&
  !a.chainMissing &&
  !a.chainPartial &&
  !a.shareUnknown &&
  !a.hostStart;

export interface Walked {
  /** Each DNATing endpoint's share of new connections. */
  share: Map<TreeEndpoint, number>;
  /** The share that leaves the Service chain not DNATed. */
  fallThrough: number;
}

/** The chain's endpoints in jump order walked with their rules' probabilities, the chains in
 * `returning` taking nothing (their packets go on to the next rule). */
export function walk(actual: TreeEndpoint[], returning: ReadonlySet<TreeEndpoint>): Walked {
  const share = new Map<TreeEndpoint, number>();
  let remaining = 1;
  for (const a of actual) {
    // reached by no balancing jump (an affinity rule alone), or a jump that hands packets back
    if (a.probability === 0 || returning.has(a)) continue;
    const s = remaining * (a.ruleProbability ?? 1);
    share.set(a, s);
    remaining -= s;
  }
  return { share, fallThrough: remaining < NONE ? 0 : remaining };
}

/** Whether any share of the chain is not known (a cut paste): then nothing falls through. */
export const sharesKnown = (actual: TreeEndpoint[]) =>
  actual.every((a) => a.shareUnknown === undefined && a.chainPartial === undefined);

const who = (e: ExpectedEndpoint) =>
  `${e.address}, ${podOf(e) ? `Pod ${podOf(e)}` : 'an endpoint'}, ${e.ready ? 'ready' : 'terminating'}`;

/** A KUBE-SEP chain without DNAT: its share goes to the rules after its jump. */
export function endpointDnatMissing(
  sp: ExpectedServicePort,
  a: TreeEndpoint,
  e: ExpectedEndpoint | undefined,
  chain: string,
  walked: Walked,
  traffic: string,
  c: DriftContext,
): void {
  const after = [...walked.share].filter(([x]) => x.line > a.line);
  const takers = after.map(([x, s]) => `${x.address ?? x.chain} gets ${percent(s)}`).join(', ');
  const then =
    after.length > 0
      ? `the rules after its jump take them: of all new connections ${takers}`
      : `no rule after its jump takes them, so they leave ${chain} not DNATed`;
  c.add({
    id: 'endpoint-dnat-missing',
    service: sp.name,
    ...(e ? { endpoint: e.address } : {}),
    title: `${a.chain}${e ? ` (${e.address})` : ''} has no DNAT rule`,
    message:
      `node ${c.node}'s ${a.chain}, ${e ? `the chain of endpoint ${who(e)}` : 'a chain no endpoint of the Service hashes to'}, has no DNAT rule: it returns the ${percent(a.probability)} of new connections to ${sp.name}${traffic} that ${chain} sends it, and ${then}. ${e ? `${e.address} gets none of them from this node.` : ''}`.trimEnd(),
    expected: e
      ? nat(
          sp.nat.filter((l) => l.chain === e.chain || (l.chain === chain && l.target === e.chain)),
        )
      : [],
    actual: [
      ...chainLines(c.nat, chain).filter((l) => l.endsWith(` ${a.chain}`)),
      ...chainLines(c.nat, a.chain),
    ],
    ...syncNext(c),
  });
}

/** The Service chain lets a share of new connections through without DNAT: `missing` are the
 * endpoints it has no jump to, `returning` the chains without DNAT it jumps to. */
export function fallsThrough(
  sp: ExpectedServicePort,
  missing: ExpectedEndpoint[],
  returning: TreeEndpoint[],
  fallThrough: number,
  chain: string,
  path: 'cluster IP' | 'external',
  c: DriftContext,
): void {
  const traffic = path === 'external' ? "'s external traffic" : '';
  const lacks = missing.map(
    (e) =>
      `no jump to ${e.chain} (${who(e)}${c.nat.chain(e.chain) ? `; the dump holds that chain` : ''})`,
  );
  const why = [
    ...lacks,
    ...(returning.length > 0
      ? [`jumps to ${returning.map((a) => a.chain).join(', ')}, with no DNAT rule`]
      : []),
  ];
  const where =
    path === 'cluster IP'
      ? `${vip(sp.clusterIP, sp.port, sp.protocol)} unchanged`
      : 'the address they were sent to unchanged';
  c.add({
    id: 'service-chain-falls-through',
    service: sp.name,
    ...(missing.length === 1 ? { endpoint: missing[0]!.address } : {}),
    title: `${lacks.length > 0 ? `${chain} has ${lacks.length === 1 ? `no jump to ${missing[0]!.chain}` : `no jump to ${lacks.length} endpoints`}: ` : ''}${percent(fallThrough)} of new connections fall through it`,
    message: `node ${c.node}'s ${chain} ${why.length > 0 ? `has ${why.join(', and ')}: ` : 'ends with a jump that does not take every packet: '}${percent(fallThrough)} of new connections to ${sp.name}${traffic} from this node match none of its endpoint rules, leave it not DNATed and go on to ${where}, where no endpoint answers.`,
    // the chain as kube-proxy writes it, and the chains of the endpoints the dump lacks as well
    expected: nat([
      ...sp.nat.filter((l) => l.chain === chain),
      ...sp.nat.filter((l) => missing.some((e) => l.chain === e.chain && !c.nat.chain(e.chain))),
    ]),
    actual: chainLines(c.nat, chain),
    ...syncNext(c),
  });
}
