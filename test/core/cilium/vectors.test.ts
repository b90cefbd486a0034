// Cilium's own load-balancer script tests, as data (../shared/cilium-vectors is copied into
// test/fixtures/cilium/vectors): the objects and options of each checked state, and the frontends
// table Cilium's control plane holds there. kdebug's model of that control plane must give the
// same frontends with the same backends; its readers must read every expected listing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { load } from 'js-yaml';
import { Analysis } from '../../../src/core/analysis.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { CILIUM_DEFAULTS, expectedCilium } from '../../../src/core/dataplane/cilium/expected.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read.js';

const DIR = new URL('../../fixtures/cilium/vectors/', import.meta.url).pathname;
const vectors = readdirSync(DIR).filter((d) => /^\d\d-/.test(d));
const file = (v: string, f: string) => `${DIR}${v}/${f}`;

/** What the harness and the script set: the objects, flags, the local node's labels. */
function setup(v: string) {
  const config = readFileSync(file(v, 'config.txt'), 'utf8');
  const labels: Record<string, string> = {};
  const block = /Local node labels:\n((?: {2}\S.*\n?)+)/.exec(config)?.[1] ?? '';
  for (const m of block.matchAll(/^ {2}([^=\s]+)=(\S+)/gm)) labels[m[1]!] = m[2]!;
  const docs = readFileSync(file(v, 'objects.yaml'), 'utf8')
    .split(/^---$/m)
    .map((d) => load(d) as KubeObject | null)
    .filter((d): d is KubeObject => !!d);
  return {
    view: clusterView(docs),
    node: { name: 'testnode', labels },
    options: {
      ...CILIUM_DEFAULTS,
      serviceTopology: /--enable-service-topology\b/.test(config),
      // every vector is from a branch point before 1.18.1's zone-hint fallback
      zoneHintsFallback: false,
    },
  };
}

// Frontends kdebug does not model yet, by what makes them: HostPort frontends come from Pods,
// the health server's from a synthetic Service of Cilium's own.
const UNMODELLED = (row: { type?: string; service?: string }) =>
  row.type === 'HostPort' || (row.service ?? '').endsWith(':healthserver');

describe('Cilium vectors: the frontends table', () => {
  for (const v of vectors) {
    const table = file(v, 'expected-frontends.txt');
    if (!existsSync(table)) continue;
    it(v, () => {
      const { node, options, view } = setup(v);
      const got = expectedCilium(view, node, options).map((f) => ({
        key: frontendKey(f),
        type: f.type,
        service: f.service,
        backends: f.backends.map((b) => formatAddress(b)).sort(),
      }));
      const text = readFileSync(table, 'utf8');
      const want =
        text.trim() === ''
          ? []
          : parseCilium(text, table)
              .frontends.filter((f) => !UNMODELLED(f))
              .map((f) => ({
                key: frontendKey(f),
                type: f.type,
                service: f.service,
                backends: f.backendsNotShown
                  ? 'cut'
                  : f.backends.map((b) => formatAddress(b)).sort(),
              }));
      const sort = <T extends { key: string }>(a: T[]) =>
        [...a].sort((x, y) => x.key.localeCompare(y.key));
      const cut = new Set(want.filter((w) => w.backends === 'cut').map((w) => w.key));
      assert.deepEqual(
        sort(got).map((g) => (cut.has(g.key) ? { ...g, backends: 'cut' } : g)),
        sort(want),
      );
    });
  }
});

describe('Cilium vectors: each backend state', () => {
  let compared = 0;
  for (const v of vectors) {
    const table = file(v, 'expected-backends.txt');
    if (!existsSync(table) || readFileSync(table, 'utf8').trim() === '') continue;
    it(v, () => {
      const { node, options, view } = setup(v);
      const states = parseCilium(readFileSync(table, 'utf8'), table).backendStates!;
      const got = expectedCilium(view, node, options).flatMap((f) => f.backends);
      for (const b of got) {
        const want = states.get(formatAddress(b));
        // quarantine comes from the agent's own health checks, not from the objects
        if (want === 'quarantined') continue;
        assert.equal(b.state, want, `${formatAddress(b)} in ${v}`);
        compared++;
      }
    });
  }
  it('compares the states of the backends the frontends select', () =>
    assert.ok(compared >= 60, `${compared}`));
});

describe('Cilium vectors: the BPF maps', () => {
  it('reads which backends take new connections from the slots and counts', () => {
    const dump = readFileSync(
      file('11-v118-terminating-maglev-one-terminating', 'expected-maps.txt'),
      'utf8',
    );
    const [fe] = parseCilium(dump, 'maps').frontends;
    assert.deepEqual(
      fe!.backends.map((b) => [formatAddress(b), b.state, b.inRotation]),
      [
        ['10.244.0.113:8081/TCP', 'active', true],
        ['10.244.0.112:8081/TCP', 'terminating', false],
      ],
    );
  });
});

describe("Cilium vectors: a LoadBalancer's source ranges in the BPF map", () => {
  const v = '13-v118-lb-source-ranges-allow';
  const { view } = setup(v);
  const drift = (maps: string) =>
    new Analysis({
      objects: [
        ...view.services.map((x) => x.raw),
        ...view.endpointSlices.map((x) => x.raw),
        aCiliumAgent('testnode'),
        // the vectors' harness runs both families
        aCiliumConfig({ 'enable-ipv6': 'true' }),
      ],
      nodes: {
        testnode: {
          'cilium-frontends': readFileSync(file(v, 'expected-frontends.txt'), 'utf8'),
          'cilium-bpf-lb-list': maps,
        },
      },
      meta: {},
    })
      .node('testnode')
      .drift();
  const maps = readFileSync(file(v, 'expected-maps.txt'), 'utf8');

  it('the check Cilium wrote is no drift', () => assert.deepEqual(drift(maps).findings, []));

  it('a LoadBalancer entry without the check lets every source through', () => {
    const unchecked = maps.replace(
      /(ADDR=10\.0\.0\.2:80\/TCP SLOT=\d+ .*FLAGS=LoadBalancer)\+check source-range/g,
      '$1',
    );
    assert.notEqual(unchecked, maps);
    assert.deepEqual(
      drift(unchecked).findings.map((f) => [f.id, f.service]),
      [['cilium-source-range-missing', 'test/echo:http']],
    );
  });
});
