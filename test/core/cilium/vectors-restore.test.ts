// Cilium v1.20.2's scripts of its load-balancer control plane re-reading its inputs (vectors
// 161-167, test/fixtures/cilium/vectors, each with its src.txt): file.txtar (the state from
// --lb-state-file), migrate-backend.txtar (a backend moved between EndpointSlices), reuse.txtar
// (a ClusterIP passed between two Services) and resync.txtar (a re-list that finds the slices,
// then the Services, gone). What each script asserts its tables hold is no drift on kdebug's
// reading; the table of the state before, still held after the script's change, is the drift the
// script guards against, named by its finding and Service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drift } from '../../support/cilium-drift.js';
import { listing } from '../../support/cilium-vectors.js';

const V = {
  file: '161-v120-state-file-loadbalancer',
  slice1: '162-v120-migrate-backend-first-slice',
  slice2: '163-v120-migrate-backend-second-slice',
  echo: '164-v120-reuse-clusterip-echo',
  echo2: '165-v120-reuse-clusterip-echo2',
  start: '166-v120-resync-start',
  gone: '167-v120-resync-services-gone',
};

const found = (d: ReturnType<typeof drift>) => d.findings.map((f) => `${f.id} ${f.service ?? '-'}`);

describe("Cilium 1.20's re-read scripts: what each asserts is no drift", () => {
  for (const v of Object.values(V))
    it(v, () => {
      const d = drift(v);
      assert.deepEqual(found(d), []);
      assert.equal(d.drifted, false);
      // 161 alone checks the BPF maps beside its tables
      assert.equal(d.cilium?.read, listing(v, 'expected-maps.txt') ? 'both' : 'table');
    });
});

describe("Cilium 1.20's re-read scripts: the table before the change, held after it", () => {
  const before = (v: string) => listing(v, 'expected-frontends.txt');

  it("migrate-backend: the first slice's table after the move lacks the added backend", () => {
    const d = drift(V.slice2, undefined, before(V.slice1));
    assert.deepEqual(found(d), ['cilium-backend-missing bar/foo:http']);
    assert.equal(d.findings[0]!.title, '10.96.50.104:80/TCP: backend 10.244.1.2:80/TCP missing');
  });

  // before: no drift, the frontend matched by its address whatever Service it named
  it("reuse: the ClusterIP still test/echo's after test/echo2 took it", () => {
    const d = drift(V.echo2, undefined, before(V.echo));
    assert.deepEqual(found(d), ['cilium-frontend-missing test/echo2:http']);
    assert.match(
      d.findings[0]!.explanation,
      /holds 10\.96\.50\.104:80\/TCP for test\/echo, not for test\/echo2, which the objects give it: .* connections to it go to the earlier Service's backends/,
    );
    assert.deepEqual(d.findings[0]!.drift.actual, [
      'nodes/testnode/cilium-frontends.txt:2: 10.96.50.104:80/TCP',
    ]);
    // the script's own state, test/echo's table with test/echo's objects, stays no drift
    assert.deepEqual(found(drift(V.echo, undefined, before(V.echo))), []);
  });

  it('resync: the frontend of a Service gone, kept after the re-list', () => {
    // every namespace's Services listed (a snapshot kdebug captured): test/echo is known gone
    const d = drift(V.gone, undefined, before(V.start), {}, { capturedAt: '2026-12-07T00:00:00Z' });
    assert.deepEqual(found(d), ['cilium-frontend-stale test/echo:http']);
    // the Services not listed whole: whether test/echo is gone is not known, nothing said
    assert.deepEqual(found(drift(V.gone, undefined, before(V.start))), []);
  });

  it('resync: the frontends emptied while the Service stands', () => {
    const d = drift(V.start, undefined, before(V.gone));
    assert.deepEqual(found(d), ['cilium-frontend-missing test/echo:http']);
  });
});
