// `ipset list` pasted with iptables rules: its sets are called kube-proxy's only where a line names
// one kube-proxy's IPVS mode makes (pkg/proxy/ipvs ipsetInfo: KUBE-CLUSTER-IP, KUBE-LOOP-BACK ...,
// IPv6's KUBE-6-...), never for another set ("test", a CNI's).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const RULES = '*filter\n:FOO - [0:0]\n-A FOO -m set --match-set SET dst -j LOG\nCOMMIT\n';
const list = (name: string) =>
  `$ ipset list\nName: ${name}\nType: hash:ip,port\nRevision: 5\nHeader: family inet hashsize 1024 maxelem 65536\nMembers:\n\n${RULES.replace('SET', name)}`;

const said = (text: string) =>
  parseIptables(text, { file: 'p.txt' }).warnings.find((w) => w.kind === 'foreign')?.message ?? '';

describe('an ipset listing beside iptables rules', () => {
  const cases: [string, boolean][] = [
    ['test', false],
    ['cali40all-hosts-net', false],
    ['KUBE-CUSTOM', false],
    ['KUBE-CLUSTER-IP', true],
    ['KUBE-LOOP-BACK', true],
    ['KUBE-6-NODE-PORT-LOCAL-SCTP-HAS', true],
  ];
  for (const [name, kubeProxy] of cases)
    it(`a set named ${name}: ${kubeProxy ? '' : 'not '}called kube-proxy's`, () => {
      const message = said(list(name));
      assert.match(message, /`ipset list` output/);
      if (kubeProxy) assert.match(message, /naming sets kube-proxy's IPVS mode makes/);
      else assert.match(message, /none it names is one of kube-proxy's/);
    });
});
