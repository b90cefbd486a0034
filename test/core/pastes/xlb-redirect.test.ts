// kube-proxy before 1.24, externalTrafficPolicy Local: the KUBE-XLB chain redirects Pods' traffic
// to the Service chain ("Redirect pods trying to reach external loadbalancer VIP to clusterIP").
// Where that chain is not in the paste, it is said not to be, not passed over.
// Pods 10.1.0.0/16, node port 31610.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeProxyChain } from '../../../src/core/dataplane/kube-proxy/chain-names.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const N = 'default/web:http';
const SVC = kubeProxyChain('KUBE-SVC', N, 'tcp');
const XLB = kubeProxyChain('KUBE-XLB', N, 'tcp');

describe("an XLB chain's redirect of Pods to a Service chain the paste does not hold", () => {
  it('names that chain as not in the paste', () => {
    const got = readPaste(
      [
        '*nat',
        `:${XLB} - [0:0]`,
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 31610 -j ${XLB}`,
        `-A ${XLB} -s 10.1.0.0/16 -m comment --comment "Redirect pods trying to reach external loadbalancer VIP to clusterIP" -j ${SVC}`,
        `-A ${XLB} -m comment --comment "${N} has no local endpoints" -j KUBE-MARK-DROP`,
        'COMMIT',
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.ok(got.mode === 'iptables');
    const t = got.trees.services.find((s) => s.name === N);
    assert.deepEqual(t?.absentChains, [SVC]);
  });
});
