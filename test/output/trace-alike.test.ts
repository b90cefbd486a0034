// Two outcomes of one walk that end alike (a KUBE-SEP chain without its DNAT falls on to the next
// endpoint's) say which chain each passed, not the same line twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { tracePacket } from '../../src/core/dataplane/iptables/trace/trace.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { traceText } from '../../src/output/trace.js';

const NAT = `*nat
:PREROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]
:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]
:KUBE-SEP-CCCCCCCCCCCCCCCC - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A KUBE-SEP-CCCCCCCCCCCCCCCC -p tcp -m tcp -j DNAT --to-destination 10.244.1.7:80
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-CCCCCCCCCCCCCCCC
COMMIT
*filter
:FORWARD ACCEPT [0:0]
COMMIT
`;

describe('trace text: outcomes that end alike', () => {
  it('names the chain one passed and the other did not', () => {
    const packet = { src: '10.244.0.9', dst: '10.96.0.20', dport: 80, protocol: 'tcp' as const };
    const net = { localAddresses: ['192.0.2.10'], interfaces: [] };
    const result = tracePacket(parseIptables(NAT), net, { ...packet, fromHost: false });
    const text = traceText(traceAnswer(result, clusterView([]), 'node'));
    assert.match(
      text,
      /50% {2}DNAT to 10\.244\.1\.7:80, forwarded, not masqueraded \(through KUBE-SEP-BBBBBBBBBBBBBBBB, where no rule matched it\)\n/,
    );
    assert.match(
      text,
      /50% {2}DNAT to 10\.244\.1\.7:80, forwarded, not masqueraded \(not through KUBE-SEP-BBBBBBBBBBBBBBBB\)\n/,
    );
  });
});
