// Each Cilium backend's weight and share of new connections (issue 34, r153-1). Cilium fills a
// frontend's Maglev table by its backends' weights (pkg/maglev at v1.20.2: an EndpointSlice's
// service.cilium.io/weight, else 100); random selection picks one of the COUNT slots evenly,
// weights aside (bpf/lib/lb.h lb4_select_backend_id_random). So the share is the table's where the
// listing shows it, else even; the weight is said wherever the listing shows it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { buildCiliumTrees } from '../../../src/core/dataplane/cilium/trees.js';
import { kdebug } from '../../support/cli.js';

// endpointslice-weight.txtar (v1.20.2): slices weighted 70 and 30, two backends each
const WEIGHTED =
  'test/fixtures/cilium/vectors/64-v120-endpointslice-weights-70-30/expected-maps.txt';

// service list -o json's REST model (pkg/loadbalancer frontend.go): two active backends weighted
// 100 and 3, one terminating
const JSON_LIST = JSON.stringify([
  {
    spec: {
      id: 9,
      'frontend-address': { ip: '10.96.0.20', port: 80, protocol: 'TCP', scope: 'external' },
      'backend-addresses': [
        { ip: '10.244.2.8', port: 8080, protocol: 'TCP', state: 'active', weight: 100 },
        { ip: '10.244.2.9', port: 8080, protocol: 'TCP', state: 'active', weight: 3 },
        { ip: '10.244.2.7', port: 8080, protocol: 'TCP', state: 'terminating', weight: 0 },
      ],
      flags: { name: 'web', namespace: 'default', type: 'ClusterIP', trafficPolicy: 'Cluster' },
    },
  },
]);

describe("a Cilium backend's weight and share", () => {
  it("a maps dump's Maglev table gives each backend its weighted share", () => {
    const text = readFileSync(WEIGHTED, 'utf8');
    // the table as the dump prints it: backend ID (entries)
    const inner = /^MAGLEV: ID=1 INNER=\[(.*)\]$/m.exec(text)![1]!;
    const entries = new Map(
      [...inner.matchAll(/(\d+)\((\d+)\)/g)].map((m) => [m[1]!, Number(m[2])]),
    );
    const total = [...entries.values()].reduce((a, b) => a + b, 0);
    const ids = new Map(
      [...text.matchAll(/^BE: ID=(\d+) ADDR=(\S+?)\/TCP/gm)].map((m) => [m[2]!, m[1]!]),
    );
    const tree = buildCiliumTrees(parseCilium(text, WEIGHTED), new Map()).services.find(
      (t) => t.port === 8081,
    )!;
    assert.equal(tree.endpoints.length, 4);
    for (const ep of tree.endpoints) {
      const n = entries.get(ids.get(ep.address!)!)!;
      assert.equal(ep.probability, n / total, ep.address);
      assert.deepEqual(ep.cilium?.maglev, { entries: n, of: total });
    }
    // the 70-weighted slice's backends take more than the 30's: not the even 25% each
    const shares = tree.endpoints.map((e) => e.probability);
    assert.ok(Math.min(...shares) < 0.2 && Math.max(...shares) > 0.3, String(shares));
  });

  it('rules --file says each share and its Maglev entries, in text and JSON', () => {
    const text = kdebug(['rules', '--file', WEIGHTED]).stdout;
    assert.match(
      text,
      /35\.1%\s+backend 10\.244\.0\.112:8081\s+\(active, 358 of 1021 Maglev entries\)/,
    );
    assert.match(
      text,
      /15%\s+backend 10\.244\.0\.123:8081\s+\(active, 153 of 1021 Maglev entries\)/,
    );
    const doc = JSON.parse(kdebug(['rules', '--file', WEIGHTED, '-o', 'json']).stdout) as {
      services: { endpoints: { address: string; maglev?: { entries: number; of: number } }[] }[];
    };
    const eps = doc.services.flatMap((s) => s.endpoints);
    assert.deepEqual(eps.find((e) => e.address === '10.244.0.122:8081')?.maglev, {
      entries: 153,
      of: 1021,
    });
  });

  it("service list -o json's weights are said; with no Maglev table shown, the share is even", () => {
    const table = parseCilium(JSON_LIST, 'list.json');
    const [tree] = buildCiliumTrees(table, new Map()).services;
    const by = new Map(tree!.endpoints.map((e) => [e.address, e]));
    assert.equal(by.get('10.244.2.8:8080')?.cilium?.weight, 100);
    assert.equal(by.get('10.244.2.9:8080')?.cilium?.weight, 3);
    assert.equal(by.get('10.244.2.8:8080')?.probability, 0.5);
    assert.equal(by.get('10.244.2.9:8080')?.probability, 0.5);
    assert.equal(by.get('10.244.2.7:8080')?.probability, 0);
    const text = kdebug(['rules', '--file', '-'], { input: JSON_LIST }).stdout;
    assert.match(text, /50%\s+backend 10\.244\.2\.9:8080\s+\(active, weight 3\)/);
    const doc = JSON.parse(
      kdebug(['rules', '--file', '-', '-o', 'json'], { input: JSON_LIST }).stdout,
    ) as {
      services: { endpoints: { address: string; weight?: number }[] }[];
    };
    const weights = doc.services[0]!.endpoints.map((e) => [e.address, e.weight]);
    assert.deepEqual(weights, [
      ['10.244.2.8:8080', 100],
      ['10.244.2.9:8080', 3],
      ['10.244.2.7:8080', 0],
    ]);
  });
});
