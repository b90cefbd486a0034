// A packet walk over an nftables listing cut inside a map: an element read that holds the packet
// decides it (a map's keys are each in it once), none read leaves it not known (the one that
// would may lie past the cut). nft lists sets before chains, so the map comes first in a real
// listing and the cut hides every chain; here its chains come first, as a listing joined from
// parts (or edited by hand) may have them, to reach the lookup. kube-proxy's base chains are all
// in it: one it lacks would stop the walk at its hook (test/cli/nft-trace-cut.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { traceNftPacket } from '../../src/core/dataplane/nftables/trace.js';
import { nftReadStop } from '../../src/core/dataplane/nftables/trace-cut.js';
import { BASE_CHAINS } from '../../src/core/dataplane/nftables/expected/base-chains.js';

const base = BASE_CHAINS.map(
  ([name, type, hook, prio]) =>
    `\tchain ${name} {\n\t\ttype ${type} hook ${hook} priority ${prio}; policy accept;\n${name === 'nat-prerouting' ? '\t\tjump services\n' : ''}\t}`,
);
const LISTING = `table ip kube-proxy {
${base.join('\n')}
\tchain services {
\t\tip daddr . meta l4proto . th dport vmap @service-ips
\t}
\tchain service-a {
\t\tmeta l4proto tcp dnat to 10.244.1.4:80
\t}
\tmap service-ips {
\t\ttype ipv4_addr . inet_proto . inet_service : verdict
\t\telements = { 10.96.0.20 . tcp . 80 : goto service-a,
`;

const table = parseNftText(LISTING, 'cut.txt').table('ip', 'kube-proxy')!;
const walk = (dst: string) => {
  const packet = { src: '10.244.0.3', dst, dport: 80, protocol: 'tcp' as const, fromHost: false };
  const result = traceNftPacket(table, { localAddresses: ['192.0.2.10'], interfaces: [] }, packet);
  return { result, stop: nftReadStop(table, 'cut.txt', result)! };
};

describe('an nft walk over a map the cut is inside', () => {
  it('an element read holds the packet: the walk goes on, its outcome known', () => {
    const { result, stop } = walk('10.96.0.20');
    assert.deepEqual(
      result.outcomes.map((o) => o.destination),
      ['10.244.1.4:80'],
    );
    assert.deepEqual(stop.partly, [[]]);
    assert.match(stop.why, /inside table ip kube-proxy, map service-ips/);
  });

  it('no element read holds it: the walk stops at the lookup, not "no rule matched"', () => {
    const { result, stop } = walk('10.96.0.30');
    assert.deepEqual(stop.partly, [['map service-ips']]);
    assert.match(stop.reached![0]!, /no element read of map service-ips holds it/);
    // the lookup's rule is the last it matched: nothing after it is walked
    assert.deepEqual(
      result.outcomes[0]!.rules.map((r) => r.chain),
      ['nat-prerouting', 'services'],
    );
    assert.equal(stop.known[0], 2);
  });
});
