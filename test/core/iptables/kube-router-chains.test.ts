// kube-router's network policy firewall (KUBE-ROUTER-INPUT/FORWARD/OUTPUT, each Pod's KUBE-POD-FW-*,
// each policy's KUBE-NWPLCY-*) writes KUBE- chains of its own: a paste of them, and no Service
// rule, says whose they are rather than leave them to be taken for kube-proxy's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';
import { buildServiceTrees } from '../../../src/core/dataplane/iptables/trees.js';
import { rulesText } from '../../../src/output/rules.js';

const text = (dump: string) => {
  const rs = parseIptables(dump, { file: 'p.txt' });
  return rulesText(rs, buildServiceTrees(rs), { label: 'p' }).replace(/\s+/g, ' ');
};

describe("kube-router's chains in a paste without Service rules", () => {
  it("its Pod firewall chains: named as kube-router's", () => {
    const out = text(
      '*filter\n:KUBE-ROUTER-FORWARD - [0:0]\n:KUBE-POD-FW-SM3UEAX754LZVIBB - [0:0]\n' +
        '-A KUBE-ROUTER-FORWARD -j KUBE-POD-FW-SM3UEAX754LZVIBB\n' +
        '-A KUBE-POD-FW-SM3UEAX754LZVIBB -m mark ! --mark 0x10000/0x10000 -j REJECT\nCOMMIT\n',
    );
    assert.match(out, /KUBE-ROUTER-FORWARD, KUBE-POD-FW-SM3UEAX754LZVIBB are kube-router's/);
  });

  it("kube-proxy's own filter chains alone: no component named", () => {
    const out = text('*filter\n:KUBE-FIREWALL - [0:0]\n-A KUBE-FIREWALL -j DROP\nCOMMIT\n');
    assert.doesNotMatch(out, /kube-router/);
  });
});
