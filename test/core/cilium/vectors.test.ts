// Cilium's own load-balancer script tests, as data (../shared/cilium-vectors is copied into
// test/fixtures/cilium/vectors): the objects and options of each checked state, and the frontends
// table Cilium's control plane holds there. kdebug's model of that control plane must give the
// same frontends with the same backends; its readers must read every expected listing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/analysis.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { UNMODELLED, setup, vectorFile as file, vectors } from '../../support/cilium-vectors.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read.js';

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
