// Drift of a VIP's wildcard entry (Cilium 1.19 on: port 0, protocol ANY, no backends), which drops
// traffic from outside to the address's ports no Service uses: one the agent should write and the
// BPF maps lack, one they hold that no Service makes (the reconciler's isWildcardClass,
// default-lb-service-ipam, 1.20's bpf-lb-enable-wildcard-entries), and those whose options are
// not known, said not compared.
import { quote, type AddFinding, type DriftFinding } from '../../drift.js';
import type { ExpectedMapEntry } from '../maps/expected.js';
import { frontendKey, isDropEntry, type CiliumTable } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { frontendLine, infoNote } from './words.js';
import { SETTING_NOT_KNOWN } from '../agent/refused.js';

/** The wildcard entries of `bpf` against those expected (`entries`, maps/expected.ts): where the
 * listing is whole and prints protocols, and the release and cilium-config were read. */
export function wildcards(
  input: CiliumDriftInput,
  bpf: CiliumTable,
  entries: readonly ExpectedMapEntry[],
  add: AddFinding,
  notRead: DriftFinding[],
) {
  if (!input.mapExpectations?.known.wildcards) return;
  // a listing cut short, or without protocols (before 1.17, no wildcard entry), shows no absence
  if (bpf.cut || bpf.unreadFrom !== undefined) return;
  if (!bpf.frontends.some((f) => f.protocol !== undefined)) return;
  const drops = entries.filter((e) => e.frontend.port === 0 && e.frontend.protocol === 'any');
  const notKnown = drops.filter((e) => e.wildcardNotKnown);
  const listed = new Map(
    bpf.frontends.filter((f) => !f.internal && isDropEntry(f)).map((f) => [f.ip, f]),
  );
  for (const e of drops.filter((x) => !x.wildcardNotKnown && !listed.has(x.ip)))
    add('cilium-bpf-map-differs', {
      title: `no wildcard entry for ${e.ip}`,
      message: `The BPF service map on ${input.node} has no wildcard entry for ${e.ip} (${frontendKey(e.frontend)}), which Cilium's agent writes for the ${e.frontend.type} address of ${e.frontend.service}: traffic from outside the node to that address's ports no Service uses is not dropped by Cilium and goes on to the node's own stack.`,
      expected: [frontendLine(e.frontend)],
      actual: [`${bpf.source}: no entry`],
    });
  if (input.scoped) return;
  // a leftover is said only where the address is no frontend's the listing holds unexpected
  // (a stale frontend's own wildcard goes with it, said as stale)
  const expectedAt = new Set(drops.map((e) => e.ip));
  const anyAt = new Set(entries.map((e) => e.ip));
  for (const [ip, f] of listed) {
    if (expectedAt.has(ip)) continue;
    const others = bpf.frontends.filter((x) => x.ip === ip && !isDropEntry(x));
    if (others.some((x) => !entries.some((e) => e.ip === x.ip && e.frontend.port === x.port)))
      continue;
    add('cilium-bpf-map-differs', {
      title: `wildcard entry ${frontendKey(f)} not expected`,
      message: `The BPF service map on ${input.node} holds a wildcard entry for ${ip}, which drops traffic from outside the node to every port of that address no Service uses, but ${anyAt.has(ip) ? `none of the Services at ${ip} makes the agent write one (no loadBalancerClass of Cilium's own, default-lb-service-ipam as read, or the node's own address)` : `no Service has a ClusterIP or LoadBalancer IP ${ip}`}: left from an earlier state, it may drop connections to that address.`,
      actual: [quote(bpf.source, f.line, frontendLine(f))],
    });
  }
  if (notKnown.length > 0)
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `${notKnown.length} wildcard ${notKnown.length === 1 ? 'entry' : 'entries'} not compared`,
        message: `Whether Cilium's agent on ${input.node} writes the wildcard ${notKnown.length === 1 ? 'entry' : 'entries'} of ${notKnown.map((e) => e.ip).join(', ')} rests on ${[...new Set(notKnown.flatMap((e) => e.wildcardNotKnown ?? []))].join(', ')}, ${SETTING_NOT_KNOWN}: ${notKnown.length === 1 ? 'it is' : 'they are'} not compared.`,
      }),
    );
}
