// The Rules step groups nodes in the same condition by what their findings say with each node's
// own name set aside: only the name itself (or its facts' folder), never the same letters inside
// other words or other nodes' names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finding } from '../../src/core/checks/check.js';
import { byCondition } from '../../src/core/checks/rules/nodes.js';
import { rulesCheck } from '../../src/core/checks/rules/rules.js';
import { seen } from '../../src/core/findings/evidence.js';
import type { KubeObject } from '../../src/core/model.js';
import { aNode, dumpFor, facts, healthy, ids, run } from './checks/builders.js';

/** The healthy cluster with its nodes named `a` and `b`, and a third node `c`: names that are
 * letters of the findings' words. */
const abc = (): KubeObject[] => [
  ...(JSON.parse(
    JSON.stringify(healthy()).replaceAll('"node-a"', '"a"').replaceAll('"node-b"', '"b"'),
  ) as KubeObject[]),
  aNode('c', '192.0.2.12', '10.244.2.0/24'),
];

/** A dump without its first endpoint chain's rules: no hairpin masquerade for that Pod. */
const withoutFirstSep = (dump: string) => dump.replace(/^-A KUBE-SEP-.*\n/m, '');

describe('nodes in the same condition, named by short names', () => {
  it('nodes b and c missing the same rule are one finding, a (clean) apart', () => {
    const objects = abc();
    const found = run(
      rulesCheck,
      facts(objects, {
        a: { 'iptables-save': dumpFor(objects, 'a') },
        b: { 'iptables-save': withoutFirstSep(dumpFor(objects, 'b')) },
        c: { 'iptables-save': withoutFirstSep(dumpFor(objects, 'c')) },
      }),
    );
    assert.deepEqual(ids(found), ['rules-match:pass', 'masquerade-missing:warn']);
    const [clean, f] = [found[0]!, found[1]!];
    assert.equal(clean.title, 'a: 80/TCP -> 2 endpoints, as expected');
    assert.deepEqual(f.nodes, ['b', 'c']);
    assert.equal(f.title, '2 nodes (b, c): no hairpin masquerade for 10.244.0.5:8080 (unlike a)');
    assert.match(f.explanation, /^The same on 2 nodes\. On b: node b does not masquerade a Pod /);
  });

  it("a node's name inside another node's name is not its own: different conditions stay apart", () => {
    const on = (node: string, podOn: string) =>
      finding('endpoint-stale', 'fail', '80/TCP -> 10.244.0.5:8080, not a current endpoint', {
        explanation: `On ${node} the rules send default/web to 10.244.0.5:8080, a Pod once on ${podOn}.`,
        evidence: [
          seen(`${node}: -A KUBE-SEP-X -j DNAT --to-destination 10.244.0.5:8080`, { node }),
        ],
        node,
      });
    const items = [
      {
        node: 'node-1',
        family: 'IPv4' as const,
        label: '',
        named: true,
        finding: on('node-1', 'node-10'),
      },
      {
        node: 'node-10',
        family: 'IPv4' as const,
        label: '',
        named: true,
        finding: on('node-10', 'node-100'),
      },
    ];
    const out = byCondition(items, true);
    assert.deepEqual(
      out.map((f) => f.title),
      [
        'node-1: 80/TCP -> 10.244.0.5:8080, not a current endpoint',
        'node-10: 80/TCP -> 10.244.0.5:8080, not a current endpoint',
      ],
    );
    // the same words, each node's name (and its facts' folder) aside, are one condition
    const same = (node: string) =>
      finding('rules-not-observed', 'skip', 'nftables not read', {
        explanation: `kube-proxy on ${node} writes nftables and kdebug did not read it (nodes/${node}/nftables.txt is not in the facts).`,
        node,
      });
    const one = byCondition(
      ['node-1', 'node-10'].map((node) => ({
        node,
        family: 'IPv4' as const,
        label: '',
        named: true,
        finding: same(node),
      })),
      true,
    );
    assert.deepEqual(
      one.map((f) => f.nodes),
      [['node-1', 'node-10']],
    );
  });
});
