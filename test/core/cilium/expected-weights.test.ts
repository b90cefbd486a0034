// Each backend's weight as Cilium's agent should hold it (issue 34): an EndpointSlice's
// service.cilium.io/weight from 1.20 (v1.20.2 pkg/k8s/endpoints.go ParseEndpointSliceV1: a 16-bit
// decimal number, 0 putting the slice's backends in maintenance, anything else ignored), else
// loadbalancer.DefaultBackendWeight, 100 (reflectors/conversions.go). Maglev fills a frontend's
// table by those weights (pkg/maglev computeLookupTable), so the entries each backend gets are
// known from them; drift says a weight, or a Maglev share, the agent holds that differs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import {
  expectedCiliumText,
  weightLines,
} from '../../../src/core/dataplane/cilium/expected/render.js';
import { maglevEntries } from '../../../src/core/dataplane/cilium/expected/maglev.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/read/listing.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import type { KubeObject } from '../../../src/core/model.js';
import { listing, setup, vectors } from '../../support/cilium-vectors.js';
import { drift, edited } from '../../support/cilium-drift.js';
import { allModes } from '../../support/modes.js';
import { aCiliumAgent } from '../../support/builders.js';
import { ciliumCluster, facts } from '../checks/builders.js';

const WEIGHTED = '64-v120-endpointslice-weights-70-30';
const DRAINED = '65-v120-endpointslice-weight-zero-maintenance';

describe("a backend's weight as Cilium's agent should hold it", () => {
  it('vector 64: the slices weighted 70 and 30 give their backends 70 and 30', () => {
    const s = setup(WEIGHTED);
    const [fe] = expectedCilium(s.view, s.node, s.options).filter((f) => f.port === 8081);
    assert.deepEqual(
      fe!.backends.map((b) => `${formatAddress(b)} ${b.state} ${b.weight}`),
      [
        '10.244.0.112:8081/TCP active 70',
        '10.244.0.113:8081/TCP active 70',
        '10.244.0.122:8081/TCP active 30',
        '10.244.0.123:8081/TCP active 30',
      ],
    );
  });

  it('vector 65: a slice weighted 0 puts its backends in maintenance with weight 0', () => {
    const s = setup(DRAINED);
    const [fe] = expectedCilium(s.view, s.node, s.options).filter((f) => f.port === 8081);
    assert.deepEqual(
      fe!.backends.map((b) => `${b.ip} ${b.state} ${b.weight}`),
      [
        '10.244.0.112 maintenance 0',
        '10.244.0.113 maintenance 0',
        '10.244.0.122 active 30',
        '10.244.0.123 active 30',
      ],
    );
  });

  it('before 1.20, or where the annotation is no 16-bit number, it is ignored: 100', () => {
    const s = setup(WEIGHTED);
    const weights = (o: typeof s.options, value?: string) => {
      const view = {
        ...s.view,
        endpointSlices: s.view.endpointSlices.map((sl) =>
          value === undefined
            ? sl
            : {
                ...sl,
                raw: {
                  ...sl.raw,
                  metadata: { annotations: { 'service.cilium.io/weight': value } },
                },
              },
        ),
      };
      return expectedCilium(view, s.node, o)
        .find((f) => f.port === 8081)!
        .backends.map((b) => b.weight);
    };
    assert.deepEqual(weights({ ...s.options, sliceWeights: false }), [100, 100, 100, 100]);
    for (const bad of ['65536', '-5', '7.5', 'heavy', ''])
      assert.deepEqual(weights(s.options, bad), [100, 100, 100, 100], bad);
    assert.deepEqual(weights(s.options, '65535'), [65535, 65535, 65535, 65535]);
  });

  it("every vector's Maglev table shares its entries as the expected weights give them", () => {
    const compared: string[] = [];
    for (const v of vectors) {
      const dump = listing(v, 'expected-maps.txt');
      if (!dump?.includes('MAGLEV:')) continue;
      const s = setup(v);
      const model = expectedMaps(expectedCilium(s.view, s.node, s.options), {
        services: s.view.services,
        ...s.maps,
      });
      for (const f of parseCilium(dump, v).frontends) {
        const table = f.backends.filter((b) => b.maglev !== undefined);
        if (table.length === 0) continue;
        const e = model.find(
          (m) => frontendKey({ ...m.frontend, ip: m.ip }) === frontendKey(f) && m.maglev,
        );
        assert.ok(e, `${v} ${frontendKey(f)}: no Maglev entry expected`);
        const counted = e.backends.slice(0, e.count);
        const size = table.reduce((n, b) => n + b.maglev!, 0);
        const want = maglevEntries(counted, size);
        assert.deepEqual(
          counted.map((b, i) => `${formatAddress(b)} ${want[i]}`).sort(),
          table
            .map(
              (b) => `${formatAddress({ ...b, protocol: b.protocol ?? f.protocol })} ${b.maglev}`,
            )
            .sort(),
          `${v} ${frontendKey(f)}`,
        );
        compared.push(v);
      }
    }
    // the weighted vectors are among them, and they are not the even shares
    assert.ok(compared.includes(WEIGHTED) && compared.includes(DRAINED), compared.join(', '));
    assert.ok(new Set(compared).size >= 5, compared.join(', '));
  });
});

describe('a weight the agent holds that differs', () => {
  it('vector 64 as Cilium checks it: no weight drift', () => {
    const d = drift(WEIGHTED);
    assert.deepEqual(
      d.findings.filter((f) => f.id === 'cilium-backend-weight-differs'),
      [],
    );
  });

  it('a Maglev table shared evenly where the slices weigh 70 and 30: drift, at the MAGLEV line', () => {
    // what an agent that did not apply the annotation writes: four backends of weight 100
    const maps = edited(WEIGHTED, [
      /^MAGLEV: ID=1 INNER=.*$/m,
      'MAGLEV: ID=1 INNER=[1(256), 2(255), 3(255), 4(255)]',
    ]);
    const found = drift(WEIGHTED, maps).findings;
    assert.deepEqual(
      found.map((f) => [f.id, f.service]),
      [['cilium-backend-weight-differs', 'test/eps-weight-svc']],
    );
    const f = found[0]!;
    assert.match(f.title, /10\.244\.0\.112:8081\/TCP 256, expected 358/);
    assert.ok(f.drift.expected.includes('10.244.0.122:8081/TCP weight 30: 153 of 1021 entries'));
    assert.match(
      f.drift.actual[0]!,
      /cilium-bpf-lb-list\.txt:\d+: MAGLEV .*10\.244\.0\.112:8081\/TCP \(256\)/,
    );
  });

  // web's slice weighted 70 on a 1.20.2 agent; service list -o json shows each backend's weight
  const objects = (): KubeObject[] =>
    ciliumCluster().map((o) => {
      if (o.kind === 'EndpointSlice' && o.metadata?.name === 'web-abcde')
        return {
          ...o,
          metadata: { ...o.metadata, annotations: { 'service.cilium.io/weight': '70' } },
        };
      if (o.kind === 'Pod' && o.metadata?.name === 'cilium-node-b')
        return aCiliumAgent('node-b', 'quay.io/cilium/cilium:v1.20.2');
      return o;
    });
  const json = (weight: number) =>
    JSON.stringify([
      {
        spec: {
          id: 1,
          'frontend-address': { ip: '10.96.0.50', port: 80, protocol: 'TCP', scope: 'external' },
          'backend-addresses': ['10.244.0.5', '10.244.1.6'].map((ip) => ({
            ip,
            port: 8080,
            protocol: 'TCP',
            state: 'active',
            weight,
          })),
          flags: { name: 'web', namespace: 'default', type: 'ClusterIP', trafficPolicy: 'Cluster' },
        },
      },
    ]);
  const weightFindings = (weight: number) =>
    new Analysis(facts(objects(), { 'node-b': { 'cilium-service-list': json(weight) } }), {
      code: allModes,
    })
      .node('node-b')
      .drift()
      .findings.filter((f) => f.id === 'cilium-backend-weight-differs');

  it("service list -o json's weight 100 where the slice says 70: drift, at the backend's line", () => {
    const found = weightFindings(100);
    assert.deepEqual(
      found.map((f) => f.title),
      [
        '10.96.0.50:80/TCP: backend 10.244.0.5:8080/TCP weight 100, expected 70',
        '10.96.0.50:80/TCP: backend 10.244.1.6:8080/TCP weight 100, expected 70',
      ],
    );
    assert.deepEqual(found[0]!.drift.expected, ['10.244.0.5:8080/TCP (active) weight 70']);
    assert.match(
      found[0]!.drift.actual[0]!,
      /cilium-service-list\.txt:\d+: 10\.244\.0\.5:8080\/TCP \(active\) weight 100$/,
    );
  });

  it('the weight the slice gives: no drift', () => {
    assert.deepEqual(weightFindings(70), []);
  });
});

describe('kdebug expect says the weights', () => {
  it('vector 64: the backends weighted 70 and 30, under db/show backends', () => {
    const s = setup(WEIGHTED);
    const text = expectedCiliumText(expectedCilium(s.view, s.node, s.options), [], {
      node: 'testnode',
      agent: 'kube-system/cilium-x',
      settings: 'test',
    });
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('# weights'));
    assert.ok(at > lines.indexOf('# cilium-dbg shell -- db/show backends'), text);
    assert.deepEqual(lines.slice(at, at + 6), [
      "# weights (service list -o json's weight; Maglev fills a frontend's table by them): 100 each but",
      'Address                 Weight',
      '10.244.0.112:8081/TCP   70',
      '10.244.0.113:8081/TCP   70',
      '10.244.0.122:8081/TCP   30',
      '10.244.0.123:8081/TCP   30',
    ]);
  });

  it('a Service without the annotation: 100 each, on one line', () => {
    const s = setup(WEIGHTED);
    const o = { ...s.options, sliceWeights: false };
    assert.deepEqual(weightLines(expectedCilium(s.view, s.node, o)), [
      "# weights (service list -o json's weight; Maglev fills a frontend's table by them): 100 each",
    ]);
  });
});
