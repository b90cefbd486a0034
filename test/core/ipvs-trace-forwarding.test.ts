// A packet walked to a real server by its forwarding method, as the kernel sends it
// (ip_vs_xmit.c): Masq DNATs; Route (direct routing) keeps the destination and rewrites only the
// MAC; Tunnel puts the packet inside an IP-in-IP header; Local passes it up unchanged. The rule
// line carries the real flag (ipvsadm-save's -m, -g, -i), none where the view shows no method.
// Addresses: VIP 192.0.2.80 (kube-ipvs0), real servers 198.51.100.0/24, client 203.0.113.7.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { traceIpvsPacket } from '../../src/core/dataplane/ipvs/trace/trace.js';
import { traceDoc, traceText } from '../../src/output/trace.js';
import { assertMatchesSchema } from '../support/schema.js';

const NET = { localAddresses: ['192.0.2.11'], interfaces: [] };
const PACKET = {
  src: '203.0.113.7',
  dst: '192.0.2.80',
  dport: 80,
  protocol: 'tcp',
  fromHost: false,
} as const;
const walk = (row: string) =>
  traceIpvsPacket(
    { table: parseIpvs(`TCP  192.0.2.80:80 rr\n  -> ${row}\n`), bound: new Set(['192.0.2.80']) },
    NET,
    PACKET,
    { clusterCIDR: '10.244.0.0/16', masqueradeAll: false },
  );
const answer = (row: string) => ({
  result: walk(row),
  node: 'lb-a',
  stale: [],
  blocked: false,
  unanswered: false,
});

describe('IPVS trace: the real server forwarding method', () => {
  const cases: [string, string, string, RegExp, RegExp][] = [
    // row, the rule line, the forward field, its effect, the text's summary
    [
      '198.51.100.1:80  Masq  1  0  0',
      '-a -t 192.0.2.80:80 -r 198.51.100.1:80 -m -w 1',
      '',
      /^DNAT 198\.51\.100\.1:80, masqueraded/,
      /DNAT to 198\.51\.100\.1:80, forwarded, masqueraded/,
    ],
    [
      '198.51.100.1:80  Route  1  0  0',
      '-a -t 192.0.2.80:80 -r 198.51.100.1:80 -g -w 1',
      'route',
      /^direct routing to 198\.51\.100\.1: destination 192\.0\.2\.80:80 kept, only the MAC rewritten/,
      /sent by direct routing \(only the MAC rewritten\) to 198\.51\.100\.1:80 \(destination 192\.0\.2\.80:80 kept\), forwarded/,
    ],
    [
      '198.51.100.1:80  Tunnel  1  0  0',
      '-a -t 192.0.2.80:80 -r 198.51.100.1:80 -i -w 1',
      'tunnel',
      /^IP-in-IP to 198\.51\.100\.1: the packet, destination 192\.0\.2\.80:80 and source kept/,
      /encapsulated in IP-in-IP to 198\.51\.100\.1:80 \(destination 192\.0\.2\.80:80 kept\), forwarded, not masqueraded/,
    ],
    [
      '192.0.2.11:80  Local  1  0  0',
      '-a -t 192.0.2.80:80 -r 192.0.2.11:80 -g -w 1',
      'local',
      /^192\.0\.2\.11 is this node's own address: passed up unchanged/,
      /taken by the node's own real server 192\.0\.2\.11:80 \(destination 192\.0\.2\.80:80 kept\), delivered to the node itself, not masqueraded/,
    ],
  ];
  for (const [row, line, forward, effect, summary] of cases)
    it(`${row.split(/\s+/)[1]}: ${line.split(' ').at(-3)}, ${forward || 'DNAT'}`, () => {
      const [o, ...more] = walk(row).outcomes;
      assert.equal(more.length, 0);
      const rs = o!.rules.at(-1)!;
      assert.equal(rs.rule, line);
      assert.match(rs.effect, effect);
      assert.equal(o!.forward ?? '', forward);
      assert.equal(o!.dnat !== undefined, forward === '');
      const text = traceText(answer(row));
      assert.match(text, summary);
      if (forward) assert.doesNotMatch(text, /DNAT|-m /);
      const doc = traceDoc(answer(row));
      assertMatchesSchema(doc);
      assert.equal(doc.outcomes[0]!.forward ?? '', forward);
    });

  it('direct routing and IP-in-IP say what the listing cannot show: the real server holds the VIP', () => {
    for (const row of ['198.51.100.1:80  Route  1  0  0', '198.51.100.1:80  Tunnel  1  0  0']) {
      const [o] = walk(row).outcomes;
      assert.ok(
        o!.assumptions.some((a) =>
          /198\.51\.100\.1 .*holds 192\.0\.2\.80.*kdebug does not check/.test(a),
        ),
        o!.assumptions.join('\n'),
      );
    }
    // IP-in-IP keeps the client's address inside: no masquerade of it
    assert.equal(walk('198.51.100.1:80  Tunnel  1  0  0').outcomes[0]!.masquerade, false);
  });

  it('a view without the method: no flag written, Masq taken as an assumption said', () => {
    const [o] = walk('198.51.100.1:80').outcomes;
    assert.equal(o!.rules.at(-1)!.rule, '-a -t 192.0.2.80:80 -r 198.51.100.1:80');
    assert.ok(o!.assumptions.some((a) => /forwarding method is not in this view/.test(a)));
  });
});
