// Entry rules for a port (or address) the Service port no longer has in the API: kube-proxy
// names its chains for the ServicePortName, which holds no port, so until it applies a port
// change the rule for the port it replaced still jumps into the chains the new one should.
import { chainLines, nat, syncNext, vip, type DriftContext } from './context.js';
import type { ExpectedServicePort } from '../../kube-proxy/expected.js';
import type { EntryPoint } from '../../trees.js';

/** Each entry's rule as drift shows a rule ("-t nat -A KUBE-SERVICES ..."). */
export const entryRules = (c: DriftContext, entries: EntryPoint[]): string[] =>
  entries
    .map((e) => c.nat.ruleAtLine(e.line))
    .filter((id) => id >= 0)
    .map((id) => `-t nat ${c.nat.text(id)}`);

/** "10.1.190.219:8080/tcp": where each entry sends from; its line is in the actual rules, so
 * nodes with the same stale port say the same and are one finding. */
export const entriesAt = (entries: EntryPoint[]): string =>
  entries
    .map((e) =>
      e.address === undefined
        ? `node port ${e.port}/${e.protocol}`
        : vip(e.address, e.port ?? 0, e.protocol),
    )
    .join(', ');

/** The clause that says where the node sends the Service port's chains traffic from instead. */
export const elsewhere = (moved: EntryPoint[]): string =>
  moved.length === 0
    ? ''
    : `; it sends ${entriesAt(moved)} into the Service port's chains instead, a port the Service port does not have in the API (the chains' names hold no port: a port change keeps them)`;

/** The cluster IP rule of the Service port is for another port or address than the API's. */
export function clusterIPElsewhere(
  sp: ExpectedServicePort,
  moved: EntryPoint[],
  c: DriftContext,
): void {
  const where = vip(sp.clusterIP, sp.port, sp.protocol);
  const chains = [...new Set(moved.map((e) => e.chain))];
  const at = moved.map((e) => vip(e.address ?? '', e.port ?? 0, e.protocol)).join(', ');
  c.add({
    id: 'service-rules-missing',
    service: sp.name,
    title: `the cluster IP rule is for ${at}, not ${where}`,
    message: `node ${c.node} sends ${entriesAt(moved)} to ${chains.join(', ')}, the chain of ${sp.name}, whose cluster IP and port are ${where} in the API: no rule sends ${where} there, so connections to it from this node and its Pods are not redirected to any endpoint, while those to ${at} are sent there (the chain's name is a hash of the ServicePortName, which holds no port: a port change keeps it).`,
    expected: nat(
      sp.nat.filter((l) => l.chain === 'KUBE-SERVICES' || l.chain === sp.internalChain),
    ),
    actual: [...entryRules(c, moved), ...chains.flatMap((ch) => chainLines(c.nat, ch))],
    ...syncNext(c),
  });
}
