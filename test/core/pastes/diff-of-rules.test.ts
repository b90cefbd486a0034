// Rules in a diff, as reviews quote kube-proxy's test expectations (proxier_test.go's
// iptables-restore text in a Go raw string, kubernetes#96600, #106497): the Go around them is no
// tool's listing, the "+" lines are the diff's new side (said as a diff, not as grep's prefix),
// the "-" lines its old one, and a filter-table REJECT stays in filter.
// Service CIDR 172.20.0.0/16, Pods 10.0.0.0/16, load-balancer source range 203.0.113.0/25.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const read = (lines: string[]) => {
  const got = readPaste(lines.join('\n'), { file: 'p.txt' });
  assert.ok(got.mode === 'iptables', got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p', file: 'p.txt' }) };
};

const GO = [
  'pkg/proxy/iptables/proxier_test.go:2810',
  '```diff',
  '+\t\t\tendpoints: []endpoint{',
  '+\t\t\t\t{"10.0.1.1", "host0"},',
  '+\t\t\t},',
  '+\t\t\texpectEndpointRule: false,',
  '+\t\t\texpectedIPTablesWithSlice: `*filter',
  '+:KUBE-SERVICES - [0:0]',
  '+:KUBE-EXTERNAL-SERVICES - [0:0]',
  '+-A KUBE-SERVICES -m comment --comment "ns1/svc1 has no endpoints" -m tcp -p tcp -d 172.20.1.1/32 --dport 80 -j REJECT',
  '```',
  'pkg/proxy/iptables/proxier_test.go:2920',
  '```diff',
  '+-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment ns1/svc1 -j KUBE-SEP-XGJFVO3L2O5SRFNT',
  '+-A KUBE-SEP-XGJFVO3L2O5SRFNT -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination 10.0.1.3:80',
  '```',
];

const FW = (sources: string[]) => [
  '```diff',
  '@@ -1021,11 +1024,11 @@ COMMIT',
  ...sources.map(
    (s) =>
      ` -A KUBE-FW-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 loadbalancer IP" -s ${s} -j KUBE-XLB-GNZBNJ2PO5MGZ6GT`,
  ),
  ' -A KUBE-FW-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 loadbalancer IP" -j KUBE-MARK-DROP',
  '--A KUBE-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j KUBE-XLB-GNZBNJ2PO5MGZ6GT',
  '+-A KUBE-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j KUBE-SVL-GNZBNJ2PO5MGZ6GT',
  '```',
];

describe('rules in a diff', () => {
  it("Go source around the rules is not nft's listing; the REJECT is read in filter", () => {
    const { got, text } = read(GO);
    assert.doesNotMatch(text, /nft list ruleset/, text);
    assert.doesNotMatch(text, /no Service entry in the paste: KUBE-SERVICES/, text);
    const filter = got.dump.tables.find((t) => t.name === 'filter');
    assert.ok(filter && filter.chain('KUBE-SERVICES')?.ruleCount === 1, text);
    assert.match(text, /REJECT {2}ns1\/svc1 has no endpoints {2}\(filter KUBE-SERVICES line 10\)/);
  });

  it('its "+" is said as a diff\'s new side, its "-" lines as not read, not as grep\'s prefix', () => {
    const { got, text } = read(FW(['203.0.113.0/25']));
    assert.doesNotMatch(text, /grep -n/, text);
    assert.match(
      text,
      /a diff: the rules it adds .* \(line 6\); the rule line it removes \("-"\) is not read \(line 5\)/,
    );
    // the new side's node port, not the old side's
    const tree = got.trees.services[0]!;
    assert.ok(tree.absentChains?.includes('KUBE-SVL-GNZBNJ2PO5MGZ6GT'), text);
  });

  it("a KUBE-FW chain's drop says whom it drops: sources outside the ranges jumped on above it", () => {
    for (const sources of [['203.0.113.0/25'], ['203.0.113.0/25', '198.51.100.7/32']]) {
      const { got, text } = read(FW(sources));
      const drop = got.trees.services[0]!.verdicts.find((v) => v.kind === 'drop');
      assert.match(
        drop?.condition ?? '',
        new RegExp(`^from a source outside ${sources.join(', ').replaceAll('.', '\\.')} \\(`),
        text,
      );
      assert.match(
        drop!.condition!,
        /loadBalancerSourceRanges; the chain's declaration is not among the lines read/,
      );
    }
  });
});
