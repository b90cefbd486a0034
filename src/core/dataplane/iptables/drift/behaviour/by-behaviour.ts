// A dump spelled by a release kdebug does not model (../text.ts finds it): each Service port whose
// rules read differently is compared by where its packets go (behaviour.ts), ports alike sharing
// one walk.
import type { DriftContext, IdSaid } from '../context.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { Ruleset } from '../../read/parse.js';
import { releaseRange } from '../../../kube-proxy/releases.js';
import {
  behaviourDiffers,
  behaviourKeys,
  portsMeeting,
  refusedText,
  sharedRules,
  wantedRules,
  type BehaviourDiff,
  type KeyOf,
} from './behaviour.js';

/** A rule only one side has: its table, chain and text ("-A CHAIN ..."), kept apart until the
 * finding says it (`said`). */
export interface DiffLine {
  table: 'nat' | 'filter';
  chain: string;
  text: string;
}

/** The lines of one owner (a Service port, '' the node) only one side has. */
export interface Diff {
  expected: DiffLine[];
  actual: DiffLine[];
}

/** A diff line as findings say it: "-t nat -A ...". */
export const said = (l: DiffLine): string => `-t ${l.table} ${l.text}`;

/** The node's own chains, as the owner of their differences. */
const NODE = '';

/** A chain's rules as the node's dump holds them, in order, as the drift's lines spell them. */
function chainRules(c: DriftContext, table: string, chain: string): string[] {
  const t = table === 'nat' ? c.nat : table === 'filter' ? c.filter : undefined;
  const x = t?.chain(chain);
  return x ? x.ruleIds.map((id) => t!.text(id)) : [];
}

/** How many ports are walked through their own part of kube-proxy's rules before all of them
 * are parsed once (a few distinct shapes on most nodes; every port where none fold). */
const FEW_WALKS = 32;

export interface Other {
  who: string;
}

/**
 * A dump spelled by an unmodelled release: each Service port whose rules read differently is
 * compared by where its packets go; the same walk is spelling (one info for the node), a
 * different one is `rule-behaviour-differs`, or `service-traffic-diverted` where the node drops
 * or rejects what kube-proxy would deliver.
 */
export function foldByBehaviour(
  c: DriftContext,
  diffs: Map<string, Diff>,
  flagged: Set<string>,
  other: Other,
): void {
  let rules = 0;
  let ports = 0;
  walkPorts(c, diffs, flagged, (owner, sp, n, walks) => {
    if (walks.length === 0) {
      rules += n;
      if (sp && n > 0) ports++;
      return false;
    }
    const refused = walks.find((w) => w.refused);
    if (refused) c.add(refusedFinding(c, owner, walks, refused));
    else
      c.add({
        id: 'rule-behaviour-differs',
        service: owner,
        title: `${walks.length === 1 ? '1 packet goes' : `${walks.length} packets go`} elsewhere than kube-proxy would send ${walks.length === 1 ? 'it' : 'them'}`,
        message: `walked through node ${c.node}'s rules, ${walks[0]!.packet} ends ${walks[0]!.actual || 'nowhere'}; through the rules kube-proxy v1.${c.exp.release.minor} writes it ends ${walks[0]!.expected || 'nowhere'}`,
        ...lists(walks),
      });
    return true;
  });
  if (rules === 0) return;
  c.add({
    id: 'rule-text-differs',
    title: `written as ${other.who} writes it; kdebug models ${releaseRange()}: compared by behaviour`,
    message: `node ${c.node}'s rules are spelled by ${other.who}: ${rules} rules${ports ? ` of ${ports} Service port${ports === 1 ? '' : 's'}` : ''} and kube-proxy's own chains read differently from what kube-proxy v1.${c.exp.release.minor} writes; every packet walked through them goes where kube-proxy would send it`,
    expected: [],
    actual: [],
  });
}

/**
 * A modelled release's dump whose own chains read differently (KUBE-MARK-MASQ's mark, a rule in
 * KUBE-FIREWALL): the ports' packets are walked, and one the node drops or rejects where
 * kube-proxy would deliver it is `service-traffic-diverted` (its name added to `flagged`),
 * whichever rule does it; other differences are said as the text checks say them.
 */
export function refusedByNodeChains(
  c: DriftContext,
  diffs: Map<string, Diff>,
  flagged: Set<string>,
): void {
  const node = diffs.get(NODE);
  if (node === undefined || node.expected.length + node.actual.length === 0) return;
  walkPorts(c, diffs, flagged, (owner, _sp, _n, walks) => {
    const refused = walks.find((w) => w.refused);
    if (!refused) return false;
    flagged.add(owner);
    c.add(refusedFinding(c, owner, walks, refused));
    return true;
  });
}

/** The walks' packets and outcomes, as a finding's two lists. */
const lists = (walks: BehaviourDiff[]) => ({
  expected: walks.map((w) => `${w.packet}: ${w.expected}`),
  actual: walks.map((w) => `${w.packet}: ${w.actual}`),
});

/** A port whose packets the node drops or rejects where kube-proxy would deliver them: what
 * the walk met (the rule, its line, the mark the packet carried and who set it). */
function refusedFinding(
  c: DriftContext,
  owner: string,
  walks: BehaviourDiff[],
  w: BehaviourDiff,
): IdSaid {
  const o = w.got.find((x) => x.refused)!;
  const n = walks.filter((x) => x.refused).length;
  const verb = o.refused === 'REJECT' ? 'rejected' : 'dropped';
  return {
    id: 'service-traffic-diverted',
    service: owner,
    title: `${n === 1 ? '1 packet is' : `${n} packets are`} ${verb} on the node where kube-proxy would send ${n === 1 ? 'it' : 'them'} to the endpoints`,
    message: `walked through node ${c.node}'s rules, ${w.packet} ends ${w.actual}, ${refusedText(c.actual, c.source, c.exp.masqueradeMark, o)}; through the rules kube-proxy v1.${c.exp.release.minor} writes it ends ${w.expected || 'nowhere'}, so it never reaches the endpoints`,
    ...lists(walks),
  };
}

/**
 * Walks the Service ports whose rules read differently (every port, where the node's own chains
 * do) and calls `visit` with each one's walks that differ from kube-proxy's (none: the same),
 * which says whether it reported them; ports alike share a walk that reported nothing, and a
 * port with a finding already is not walked.
 */
function walkPorts(
  c: DriftContext,
  diffs: Map<string, Diff>,
  flagged: Set<string>,
  visit: (
    owner: string,
    sp: ExpectedServicePort | undefined,
    n: number,
    walks: BehaviourDiff[],
  ) => boolean,
): void {
  // ports whose rules and differences are the same but for their own names: one walk for all
  const walkedSame = new Set<string>();
  let keyOf: KeyOf | undefined;
  // kube-proxy's rules a walk needs: the port's own and those it meets, for the first few ports
  // walked; past those, all of them, parsed once
  let whole: Ruleset | undefined;
  let meeting: ((sp: ExpectedServicePort) => ExpectedServicePort[]) | undefined;
  let walked = 0;
  const want = (sp: ExpectedServicePort) =>
    whole ??
    (++walked > FEW_WALKS
      ? (whole = wantedRules(c.exp, c.actual))
      : wantedRules(c.exp, c.actual, (meeting ??= portsMeeting(c.exp))(sp)));
  const byName = new Map<string, ExpectedServicePort>(c.exp.servicePorts.map((x) => [x.name, x]));
  // where the node's own chains read differently, a port whose rules read alike may still meet
  // what differs there: every port is walked (ports alike share a walk)
  const node = diffs.get(NODE);
  const nodeDiffers = node !== undefined && node.expected.length + node.actual.length > 0;
  const all: [string, Diff][] = nodeDiffers
    ? [
        ...diffs,
        ...c.exp.servicePorts
          .filter((sp) => !diffs.has(sp.name))
          .map((sp): [string, Diff] => [sp.name, { expected: [], actual: [] }]),
      ]
    : [...diffs];
  for (const [owner, d] of all) {
    const n = Math.max(d.expected.length, d.actual.length);
    if (n === 0 && !nodeDiffers) continue;
    // a port with a finding already says what differs there
    if (flagged.has(owner)) continue;
    const sp = owner === NODE ? undefined : byName.get(owner);
    const key =
      sp &&
      (keyOf ??= behaviourKeys(c.exp, sharedRules(c.actual), (table, chain) =>
        chainRules(c, table, chain),
      ))(sp, d);
    const same = key !== undefined && walkedSame.has(key);
    const walks = !sp || same ? [] : behaviourDiffers(c.exp, want(sp), c.actual, sp);
    // a shape whose walk says nothing says nothing for every port of that shape
    if (!visit(owner, sp, n, walks) && key !== undefined) walkedSame.add(key);
  }
}
