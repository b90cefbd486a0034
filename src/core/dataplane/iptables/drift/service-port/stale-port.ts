// Entry rules for a port (or cluster IP) the Service port no longer has in the API, as iptables
// drift says them (../../../stale-entries.ts: why the chains still take them).
import { chainLines, nat, syncNext, vip, type DriftContext } from '../context.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { EntryPoint } from '../../../trees.js';
import {
  changeOf,
  changeText,
  entriesAt,
  entriesRemoved,
  keptBy,
  notInApi,
  removedText,
  type ApiEntry,
} from '../../../stale-entries.js';
import type { ServiceTree } from '../../../trees.js';

/** Each entry's rule as drift shows a rule ("-t nat -A KUBE-SERVICES ..."). */
export const entryRules = (c: DriftContext, entries: EntryPoint[]): string[] =>
  entries
    .map((e) => c.nat.ruleAtLine(e.line))
    .filter((id) => id >= 0)
    .map((id) => `-t nat ${c.nat.text(id)}`);

/** The clause that says where the node sends the Service port's chains traffic from instead of
 * `want`. */
export const elsewhere = (want: ApiEntry, moved: EntryPoint[]): string =>
  moved.length === 0
    ? ''
    : `; it sends ${entriesAt(moved)} into the Service port's chains instead, ${notInApi(want, moved)}`;

/** The cluster IP rule of the Service port is for another port or address than the API's. */
export function clusterIPElsewhere(
  sp: ExpectedServicePort,
  moved: EntryPoint[],
  c: DriftContext,
): void {
  const where = vip(sp.clusterIP, sp.port, sp.protocol);
  const chains = [...new Set(moved.map((e) => e.chain))];
  const at = entriesAt(moved);
  const change = changeOf({ address: sp.clusterIP, port: sp.port }, moved);
  c.add({
    id: 'service-rules-missing',
    service: sp.name,
    title: `the cluster IP rule is for ${at}, not ${where}`,
    message: `node ${c.node} sends ${at} to ${chains.join(', ')}, the chain of ${sp.name}, whose cluster IP and port are ${where} in the API: no rule sends ${where} there, so connections to it from this node and its Pods are not redirected to any endpoint, while those to ${at} are sent there (${changeText(change)} kube-proxy has not applied: ${keptBy(change)}).`,
    expected: nat(
      sp.nat.filter((l) => l.chain === 'KUBE-SERVICES' || l.chain === sp.internalChain),
    ),
    actual: [...entryRules(c, moved), ...chains.flatMap((ch) => chainLines(c.nat, ch))],
    ...syncNext(c),
  });
}

/** Entries of a kind or address the Service port has no longer in the API (a node port after the
 * type became ClusterIP, an external or load-balancer IP taken away): still routed, not synced. */
export function removedEntries(
  sp: ExpectedServicePort,
  t: ServiceTree | undefined,
  c: DriftContext,
): void {
  const removed = entriesRemoved(t, sp);
  if (removed.length === 0) return;
  c.add({
    id: 'entry-stale',
    service: sp.name,
    ...removedText(c.node, sp.name, removed),
    expected: [],
    actual: entryRules(c, removed),
    ...syncNext(c),
  });
}
