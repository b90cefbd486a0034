// kube-proxy's localhost node port rules, said as what kube-proxy means by them: the node port
// reached on the node's loopback addresses (-d 127.0.0.0/8 ... -m nfacct, v1.30+ under
// --iptables-localhost-nodeports), the masquerade of its loopback clients (-s 127.0.0.0/8 in
// KUBE-NODEPORTS, externalTrafficPolicy Local before 1.24) and of traffic the node itself sends
// (--src-type LOCAL). Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, node port 30080.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeProxyChain } from '../../../src/core/dataplane/kube-proxy/chain-names.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const N = 'default/web:http';
const SVC = kubeProxyChain('KUBE-SVC', N, 'tcp');
const EXT = kubeProxyChain('KUBE-EXT', N, 'tcp');
const XLB = kubeProxyChain('KUBE-XLB', N, 'tcp');
const SEP = 'KUBE-SEP-AAAAAAAAAAAAAAA1';
const ENDPOINT = [
  `-A ${SVC} -m comment --comment "${N} -> 10.244.1.5:80" -j ${SEP}`,
  `-A ${SEP} -p tcp -m comment --comment "${N}" -m tcp -j DNAT --to-destination 10.244.1.5:80`,
];
const LOCALHOST =
  "on 127.0.0.0/8 (localhost: the node port reached on the node's loopback addresses)";

const text = (lines: string[]) => {
  const got = readPaste(lines.join('\n'), { file: 'p.txt' });
  assert.ok(got.mode === 'iptables');
  return rulesText(got.dump, got.trees, { label: 'p' });
};
const entries = (t: string) => t.split('\n').filter((l) => l.startsWith('  entry '));

describe("kube-proxy's localhost node port rules", () => {
  it('iptables-save: the -d 127.0.0.0/8 nfacct rule is the node port on localhost, the next one on every address', () => {
    const t = text([
      `-A KUBE-NODEPORTS -d 127.0.0.0/8 -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -m nfacct --nfacct-name  localhost_nps_accepted_pkts -j ${EXT}`,
      `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${EXT}`,
      `-A ${EXT} -j ${SVC}`,
      ...ENDPOINT,
    ]);
    const [local, all] = entries(t);
    assert.ok(local?.includes(`node port 30080/tcp ${LOCALHOST}  (KUBE-NODEPORTS line 1`), t);
    assert.ok(all?.includes('node port 30080/tcp  (KUBE-NODEPORTS line 2'), t);
  });

  it('iptables -L: loopback/8 and the nfacct-name match read as the same rule, nothing left unread', () => {
    const t = text([
      'Chain KUBE-NODEPORTS (1 references)',
      'target     prot opt source               destination',
      `${EXT}  tcp  --  anywhere             loopback/8           /* ${N} */ tcp dpt:30080 nfacct-name  localhost_nps_accepted_pkts`,
      `${EXT}  tcp  --  anywhere             anywhere             /* ${N} */ tcp dpt:30080`,
    ]);
    assert.ok(entries(t)[0]?.includes(`node port 30080/tcp ${LOCALHOST}`), t);
    assert.doesNotMatch(t, /not read/);
  });

  it('before 1.24: the -s 127.0.0.0/8 masquerade in KUBE-NODEPORTS is of clients on the loopback', () => {
    const t = text([
      `-A KUBE-NODEPORTS -s 127.0.0.0/8 -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j KUBE-MARK-MASQ`,
      `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${XLB}`,
      `-A ${XLB} -m comment --comment "masquerade LOCAL traffic for ${N} LB IP" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
      `-A ${XLB} -m comment --comment "Balancing rule 0 for ${N}" -j ${SEP}`,
      ...ENDPOINT,
    ]);
    assert.match(
      t,
      /masquerade {2}-s 127\.0\.0\.0\/8 \(clients on the node's loopback: their replies must come back through it, not from the Pod\) {2}\(KUBE-NODEPORTS line 1\)/,
    );
    assert.match(
      t,
      /masquerade {2}--src-type LOCAL \(traffic sent from the node itself: its own addresses, host processes and hostNetwork Pods\) {2}\(KUBE-XLB-\w+ line 3\)/,
    );
    assert.ok(entries(t)[0]?.includes('node port 30080/tcp  (KUBE-NODEPORTS line 2'), t);
  });

  it('the trees carry them typed (localhost, why), as rules -o json gives them', () => {
    const got = readPaste(
      [
        `-A KUBE-NODEPORTS -d 127.0.0.0/8 -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${XLB}`,
        `-A KUBE-NODEPORTS -s 127.0.0.0/8 -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j KUBE-MARK-MASQ`,
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${XLB}`,
        `-A ${XLB} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${XLB} -m comment --comment "Balancing rule 0 for ${N}" -j ${SEP}`,
        ...ENDPOINT,
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.ok(got.mode === 'iptables');
    const tree = got.trees.services.find((t) => t.masquerade.length > 0)!;
    assert.deepEqual(
      tree.entries.map((e) => e.localhost ?? false),
      [true, false],
    );
    assert.deepEqual(
      tree.masquerade.map((m) => m.why),
      ['localhost-clients', 'node-local'],
    );
  });
});
