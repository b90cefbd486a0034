// The Service tree where a Local Redirect Policy takes one of the Service's frontends on the node:
// that frontend is a tree of its own, its entry marked redirected (to the policy's Pods on the
// node), and its backends are never given as the Service's endpoints; the Service's other
// frontends (here its NodePort) keep the Service's endpoints.
//
// IP conventions: web's ClusterIP 10.96.0.50, node port 30080, its Pods 10.244.0.5 (node-a) and
// 10.244.1.6 (node-b); kube-dns 10.96.0.10. The redirect Pod: 10.244.1.99.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { buildCiliumTrees } from '../../../src/core/dataplane/cilium/trees.js';
import { treeText } from '../../../src/output/rules/tree-text.js';

const WEB = '10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP';
/** A table's rows, each column padded as the agent's table writer pads it (two spaces apart). */
const table = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]! + 2))
      .join('')
      .trimEnd(),
  );
};
/** 1.18's db/show frontends: the ClusterIP redirected (RedirectTo), the NodePort not. */
const FRONTENDS = [
  ...table([
    [
      'Address',
      'Type',
      'ServiceName',
      'PortName',
      'Backends',
      'RedirectTo',
      'Status',
      'Since',
      'Error',
    ],
    [
      '10.96.0.50:80/TCP',
      'ClusterIP',
      'default/web',
      'http',
      '10.244.1.99:8080/TCP',
      'default/web-lrp:local-redirect',
      'Done',
      '5m',
      '',
    ],
    ['0.0.0.0:30080/TCP', 'NodePort', 'default/web', 'http', WEB, '', 'Done', '5m', ''],
    [
      '10.96.0.10:53/UDP',
      'ClusterIP',
      'kube-system/kube-dns',
      'dns',
      '10.244.0.2:53/UDP',
      '',
      'Done',
      '5m',
      '',
    ],
  ]),
  '',
].join('\n');
/** service list before 1.17: the LocalRedirect row in the ClusterIP's stead. */
const SERVICE_LIST = [
  'ID   Frontend              Service Type    Backend',
  '1    10.96.0.50:80/TCP     LocalRedirect   1 => 10.244.1.99:8080/TCP (active)',
  '2    0.0.0.0:30080/TCP     NodePort        1 => 10.244.0.5:8080/TCP (active)',
  '                                           2 => 10.244.1.6:8080/TCP (active)',
  '',
].join('\n');

const KNOWN = new Map([
  ['10.96.0.50:80/TCP', 'default/web:http'],
  ['nodeport 30080/TCP', 'default/web:http'],
]);

for (const [form, listing, policy] of [
  ['db/show frontends (RedirectTo)', FRONTENDS, 'default/web-lrp:local-redirect'],
  ['service list (LocalRedirect)', SERVICE_LIST, undefined],
] as const)
  describe(`a redirected frontend in the trees: ${form}`, () => {
    const trees = buildCiliumTrees(parseCilium(listing, 'cilium.txt'), KNOWN).services.filter(
      (t) => t.name === 'default/web:http',
    );
    // before: one tree, its endpoints the policy's Pod (the ClusterIP frontend's backends)
    it("the Service's endpoints are its own; the redirect's Pods a tree of their own", () => {
      assert.equal(trees.length, 2);
      const [redirect, service] = [
        trees.find((t) => t.entries.some((e) => e.redirect))!,
        trees.find((t) => !t.entries.some((e) => e.redirect))!,
      ];
      assert.deepEqual(
        service.endpoints.map((e) => e.address),
        ['10.244.0.5:8080', '10.244.1.6:8080'],
      );
      assert.deepEqual(
        service.entries.map((e) => e.kind),
        ['node-port'],
      );
      assert.deepEqual(
        redirect.endpoints.map((e) => e.address),
        ['10.244.1.99:8080'],
      );
      assert.equal(redirect.id, '10.96.0.50:80/TCP (local redirect)');
      assert.deepEqual(redirect.entries[0]!.redirect, policy ? { policy } : {});
      assert.equal(redirect.entries[0]!.label, 'local redirect');
    });

    it('rules text says the frontend is redirected, not to the Service endpoints', () => {
      const redirect = trees.find((t) => t.entries.some((e) => e.redirect))!;
      const text = treeText(redirect, 'dump').join('\n');
      assert.match(
        text,
        new RegExp(
          `entry {2}local redirect 10\\.96\\.0\\.50:80/tcp {2}\\(cilium line 2${policy ? ', status Done' : ''}\\) {2}-> redirected by ${policy ? `Local Redirect Policy ${policy}` : 'a Local Redirect Policy'} to its Pods on this node, not the Service's endpoints`,
          'i',
        ),
      );
    });
  });
