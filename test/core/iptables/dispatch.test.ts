// A packet walk through a long chain visits only the rules that may match the packet (dispatch.ts):
// every rule the full matcher says matches must be among them, whatever its -d or --dport (a
// host, a CIDR, negated, a range, none), and a Service's packet skips the other Services' rules.
// IP conventions: Services 10.96.0.0/16, node 192.0.2.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipv4 } from '../../../src/core/ipv4.js';
import { ruleMatches } from '../../../src/core/dataplane/iptables/trace/match.js';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';
import type { PacketState, TraceProtocol } from '../../../src/core/dataplane/trace/packet.js';

/** One jump per Service (the first 80 Services' cluster IPs), with the rules an index must not
 * lose between them. */
const ODD = [
  '-d 10.96.0.0/24 -p tcp -m tcp --dport 81',
  '! -d 10.96.0.7/32 -p tcp -m tcp --dport 82',
  '-p tcp -m tcp --dport 30005',
  '-p tcp -m tcp ! --dport 30005',
  '-p tcp -m tcp --dport 30000:30010',
  '-d 10.96.0.9 -p udp -m udp --dport 53',
  '-p udp -m udp --destination-port 53',
  '-m addrtype --dst-type LOCAL',
  '-d 10.96.0.7/32',
];
const rules = Array.from({ length: 80 }, (_, i) => [
  `-A KUBE-SERVICES -d 10.96.0.${i}/32 -p tcp -m tcp --dport 80 -j X`,
  ...(i % 9 === 4 ? [`-A KUBE-SERVICES ${ODD[(i - 4) / 9]!} -j X`] : []),
]).flat();
const dump = ['*nat', ':KUBE-SERVICES - [0:0]', ':X - [0:0]', ...rules, 'COMMIT', ''].join('\n');

const packet = (dst: string, dport: number, protocol: TraceProtocol): PacketState => ({
  src: ipv4('10.244.0.5')!,
  dst: ipv4(dst)!,
  sport: 40000,
  dport,
  protocol,
  mark: 0,
  dnat: false,
  snat: false,
});

describe('a long chain walked by the rules that may match', () => {
  const nat = parseIptables(dump).table('nat')!;
  const chain = nat.chain('KUBE-SERVICES')!;
  const local = ipv4('192.0.2.10');
  const ctx = { isLocal: (a: unknown) => a === local, assume: () => undefined };
  const visited = (p: PacketState) => {
    const out: number[] = [];
    for (let k = 0; k < chain.ruleCount; k++) {
      k = nat.nextRuleFor(chain.index, k, p.dst as number, p.dport);
      if (k < chain.ruleCount) out.push(k);
    }
    return out;
  };

  it('holds every odd rule, one for each kind of -d and --dport', () =>
    assert.equal(chain.ruleCount, 80 + ODD.length));

  for (const dst of ['10.96.0.7', '10.96.0.9', '10.96.0.50', '10.96.1.1', '192.0.2.10'])
    for (const [dport, protocol] of [
      [80, 'tcp'],
      [81, 'tcp'],
      [82, 'tcp'],
      [30005, 'tcp'],
      [30003, 'tcp'],
      [53, 'udp'],
      [0, 'icmp'],
    ] as const)
      it(`${protocol} to ${dst}:${dport}: every matching rule is visited`, () => {
        const p = packet(dst, dport, protocol);
        const seen = new Set(visited(p));
        const matching = chain.ruleIds
          .map((id, k) => [k, ruleMatches(nat.rule(id), p, ctx)] as const)
          .filter(([, m]) => m > 0)
          .map(([k]) => k);
        assert.deepEqual(
          matching.filter((k) => !seen.has(k)),
          [],
        );
        // the other Services' jumps are not read
        assert.ok(seen.size <= ODD.length + 1, `${seen.size} rules visited`);
      });
});
