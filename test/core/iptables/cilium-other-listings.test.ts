// Cilium's listings that hold no Service, pasted where rules were asked for: its endpoint list
// (the Pods it manages) and its connection tracking table (connections, a Service's by backend
// ID): each named as Cilium's, with the listing of its Services to run instead.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoRulesError, parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const refusal = (text: string) => {
  try {
    parseIptables(text, { file: 'p.txt' });
  } catch (e) {
    if (e instanceof NoRulesError) return e;
    throw e;
  }
  assert.fail('read as rules');
};

describe("Cilium's listings of no Service", () => {
  const cases: [string, string, string][] = [
    [
      'cilium endpoint list, a label on a line of its own',
      'ENDPOINT   POLICY (ingress)   POLICY (egress)   IDENTITY   LABELS (source:key[=value])   IPv6   IPv4   STATUS\n' +
        '           ENFORCEMENT        ENFORCEMENT\n' +
        '706        Disabled           Disabled          4          reserved:health     f00d::a0a:100:0:8b57   10.10.1.96    ready\n' +
        '1340       Disabled           Disabled          100        k8s:io.cilium.k8s.policy.cluster=default   f00d::a0a:100:0:c03a   10.10.1.12   ready\n' +
        '                                                           k8s:io.kubernetes.pod.namespace=kube-system\n',
      'cilium-endpoints',
    ],
    [
      'cilium bpf ct list global',
      'TCP OUT 10.244.0.62:55394 -> 10.96.0.1:443 expires=158116 RxPackets=0 RxBytes=0 TxPackets=1 TxBytes=74 Flags=0x0000 RevNAT=1 SourceSecurityID=0 IfIndex=0\n' +
        'TCP SVC 10.244.0.62:55394 -> 10.96.0.1:443 expires=158116 RxPackets=0 RxBytes=0 TxPackets=0 TxBytes=0 Flags=0x0000 RevNAT=1 SourceSecurityID=0 IfIndex=0 BackendID=1\n',
      'cilium-ct',
    ],
  ];
  for (const [name, text, kind] of cases)
    it(`${name}: named as Cilium's, its Service listing to run`, () => {
      const e = refusal(text);
      assert.equal(e.foreign, kind);
      assert.match(e.message, /^p\.txt: this is Cilium's .*cilium-dbg service list/);
    });
});
