// A packet walk over an iptables dump cut short: a chain the walk left by a rule it matched (a
// REJECT, a DNAT ...) was left before the cut, so rules past the cut there cannot come first;
// only a chain it passed through to its end may hold, past the cut, a rule that would. A refusal
// is withheld only then, and the text says through which chain.
// Small dumps: node 192.0.2.10, Pods 10.244.0.0/16, Services 10.96.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { tracePacket } from '../../src/core/dataplane/iptables/trace/trace.js';
import { readStop } from '../../src/core/dataplane/iptables/trace/trace-cut.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { traceText } from '../../src/output/trace.js';
import { aService } from '../support/builders.js';

const NET = { localAddresses: ['192.0.2.10'], interfaces: [] };
const PACKET = {
  src: '10.244.0.3',
  dst: '10.96.0.20',
  dport: 80,
  protocol: 'tcp' as const,
  fromHost: false,
};

const FILTER = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable
`;

const NAT = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment "default/other:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA
`;

const walk = (dump: string) => {
  const rs = parseIptables(dump);
  const result = tracePacket(rs, NET, PACKET);
  const stop = readStop(rs, 'dump.txt', result.outcomes);
  return { stop, answer: traceAnswer(result, clusterView([]), 'node', stop) };
};

describe('a walk over a dump cut short', () => {
  it('a REJECT matched before the cut, in the chain the cut is in: its chain is no "read in part", the refusal stands', () => {
    const { stop, answer } = walk(`${NAT}COMMIT\n${FILTER}`);
    assert.ok(stop);
    assert.deepEqual(stop.partly, [[]]);
    assert.equal(answer.blocked, true);
    assert.doesNotMatch(traceText(answer), /read in part/);
  });

  it('a chain passed through to its end before the cut: read in part, the refusal withheld and said why', () => {
    const { stop, answer } = walk(`${FILTER}COMMIT\n${NAT}`);
    assert.deepEqual(stop?.partly, [['KUBE-SERVICES']]);
    assert.equal(answer.blocked, false);
    assert.match(
      traceText(answer),
      /not known: the rules read REJECT it, but it fell through KUBE-SERVICES, which the dump holds only up to its cut/,
    );
  });

  it('a Service chain cut after its first branch: the answer speaks per share, not for the whole packet', () => {
    const nat = `*nat
:PREROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]
:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp -j DNAT --to-destination 10.244.0.7:80
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB
`;
    const rs = parseIptables(nat);
    const result = tracePacket(rs, NET, PACKET);
    const view = clusterView([aService('default/web', { clusterIP: '10.96.0.20' })]);
    const answer = traceAnswer(result, view, 'node', readStop(rs, 'dump.txt', result.outcomes));
    assert.match(
      answer.unmatched ?? '',
      /^Of new connections to tcp port 80 of 10\.96\.0\.20, 50% are DNATed to 10\.244\.0\.7:80; for the other 50% no rule read changed the destination, but the rules were not wholly read/,
    );
  });
});
