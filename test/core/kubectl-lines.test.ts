// `kubectl get ep` / `get endpointslices` pasted with a node's listing: the API server's objects,
// not the node's rules. Each reader names them as kubectl's output, never as prose skipped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const SLICES = `$ kubectl get endpointslices -A
NAMESPACE     NAME             ADDRESSTYPE   PORTS        ENDPOINTS               AGE
default       kubernetes       IPv4          6443         172.18.0.2              10d
kube-system   kube-dns-abcde   IPv4          53,9153,53   10.244.0.2,10.244.0.3   10d
`;

describe("kubectl's output beside a node's listing", () => {
  it('ipvsadm: the header and rows of get endpointslices -A are kubectl lines', () => {
    const t = parseIpvs(`${SLICES}$ ipvsadm -Ln
TCP  10.96.0.1:443 rr
  -> 172.18.0.2:6443              Masq    1      0          0
`);
    assert.deepEqual(t.kubectlLines, [2, 3, 4]);
    assert.deepEqual(t.kubectlKinds, ['kubectl-endpointslices']);
  });

  it('ipvsadm: get nodes beside it is named as get nodes, not endpoints or Services', () => {
    const got = readPaste(
      `$ kubectl get nodes
NAME        STATUS   ROLES           AGE   VERSION
control-1   Ready    control-plane   12d   v1.30.2
$ ipvsadm -Ln
TCP  10.96.0.1:443 rr
  -> 172.18.0.2:6443              Masq    1      0          0
`,
      { file: 'p' },
    );
    assert.equal(got.mode, 'ipvs');
    const text = rulesText(got.dump, got.trees, { label: 'p' });
    assert.match(text, /lines 2, 3: `kubectl get nodes` output: the\s+cluster's objects/);
    assert.doesNotMatch(text, /endpoints|EndpointSlices|Services/);
  });

  it('nft: the lines of get ep are named kubectl output, not skipped as prose, once, as a range', () => {
    const got = readPaste(
      `$ kubectl get ep -n kube-system
NAME       ENDPOINTS                     AGE
kube-dns   10.244.0.2:53,10.244.0.3:53   3d
metrics    10.244.0.4:443                3d
$ nft list table ip kube-proxy
table ip kube-proxy {
	chain services {
	}
}
`,
      { file: 'p' },
    );
    assert.equal(got.mode, 'nftables');
    if (got.mode !== 'nftables') return;
    assert.deepEqual(got.skipped, [1, 5]);
    const said = rulesText(got.dump, got.trees, { label: 'p' }).match(/kubectl get endpoints/g);
    assert.equal(said?.length, 1);
    assert.match(
      rulesText(got.dump, got.trees, { label: 'p' }),
      /line 2: lines 2-4: `kubectl get endpoints` output: /,
    );
  });
});
