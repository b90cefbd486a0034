// Cilium's own load-balancer control plane (test/support/cilium: github.com/cilium/cilium's
// pkg/loadbalancer, built from its module, on real BPF maps in a private namespace) run live on
// the truth matrix: its tables are the ones recorded in test/fixtures/cilium/reference, kdebug
// expects exactly its frontends, and a backend its health checker marks unhealthy is a note,
// never drift. `bpf lb list`, printed from the real maps, reads to the frontends table's trees
// and drift is clean on it; faults made in the real maps after Cilium reconciled (faults.ts)
// are each named by drift. The run leaves no BPF object behind (run.sh checks and says so).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
} from '../../src/core/dataplane/cilium/expected/expected.js';
import { formatAddress, frontendKey } from '../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../src/core/dataplane/cilium/read/read.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { goUnavailable } from '../support/cluster/build.js';
import { buildCiliumRef, runCiliumRef } from '../support/cilium/build.js';
import { FAULTS } from '../support/cilium/faults.js';
import { skipWithout } from '../support/skip.js';
import { aCiliumAgent, aCiliumConfig } from '../support/builders.js';
import { allModes } from '../support/modes.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const OBJECTS = join(ROOT, 'test/fixtures/releases/37/iptables/objects.json');
const REF = join(ROOT, 'test/fixtures/cilium/reference/node-a');
/** Cilium's control plane on the truth matrix with node-a as its node, its tables into `out`. */
const onNodeA = (out: string, more: string[] = []) =>
  runCiliumRef([
    ...['--objects', OBJECTS, '--node', 'node-a', '--node-address', '192.0.2.21'],
    ...more,
    ...['--out', out],
  ]);
// Cilium's defaults, as kdebug's: no health server frontend on a LoadBalancer IP in either
const rows = (text: string) =>
  parseCilium(text, 'frontends')
    .frontends.map(
      (f) => `${frontendKey(f)} ${f.service} -> ${f.backends.map(formatAddress).sort().join(', ')}`,
    )
    .sort();
const agentOnNodeA = () => [
  ...(JSON.parse(readFileSync(OBJECTS, 'utf8')) as { items: KubeObject[] }).items.filter(
    (o) => !/^kube-proxy/.test(o.metadata?.name ?? ''),
  ),
  aCiliumAgent('node-a', 'quay.io/cilium/cilium:v1.20.2'),
  aCiliumConfig(),
];
/** Drift on node-a with the agent's tables and `bpf lb list` as cilium-ref wrote them in `dir`. */
const driftOf = (dir: string) =>
  new Analysis(
    {
      objects: agentOnNodeA() as KubeObject[],
      nodes: {
        'node-a': {
          'cilium-frontends': readFileSync(join(dir, 'frontends.txt'), 'utf8'),
          'cilium-backends': readFileSync(join(dir, 'backends.txt'), 'utf8'),
          'cilium-bpf-lb-list': readFileSync(join(dir, 'bpf-lb-list.txt'), 'utf8'),
        },
      },
      meta: {},
    },
    { code: allModes },
  )
    .node('node-a')
    .drift();

describe("Cilium's control plane, live", skipWithout(goUnavailable() ?? ''), () => {
  let out: string;
  let faulted: string;
  const stderr: string[] = [];
  const read = (f: string) => readFileSync(join(out, f), 'utf8');
  before(() => {
    buildCiliumRef((s) => process.stderr.write(`${s}\n`));
    out = mkdtempSync(join(tmpdir(), 'kdebug-cilium-'));
    stderr.push(onNodeA(out).stderr);
    faulted = mkdtempSync(join(tmpdir(), 'kdebug-cilium-faults-'));
    stderr.push(
      onNodeA(
        faulted,
        FAULTS.flatMap((f) => ['--fault', f]),
      ).stderr,
    );
  });
  after(() => {
    rmSync(out, { recursive: true, force: true });
    rmSync(faulted, { recursive: true, force: true });
  });

  it('leaves no pin and no BPF map or program behind', () => {
    // as root run.sh checks the private bpffs and the kernel's lists after the run
    if (process.getuid?.() === 0)
      for (const s of stderr)
        assert.match(
          s,
          /pins left in the private bpffs: 0; BPF maps\/programs alive that were not before the run: 0/,
        );
  });

  it("prints bpf lb list from its maps, read to the frontends table's Services", () => {
    const listed = parseCilium(read('bpf-lb-list.txt'), 'bpf-lb-list.txt');
    assert.equal(listed.form, 'bpf-lb-list');
    // each frontend of the table in the maps, with the table's backends
    const inMaps = new Map(
      listed.frontends.map((f) => [frontendKey(f), f.backends.map(formatAddress).sort()]),
    );
    for (const f of parseCilium(read('frontends.txt'), 'frontends').frontends)
      assert.deepEqual(
        inMaps.get(frontendKey(f)),
        f.backends.map(formatAddress).sort(),
        frontendKey(f),
      );
  });

  it('drift is clean on its tables and its bpf lb list', () => {
    assert.deepEqual(
      driftOf(out).findings.map((f) => `${f.id} ${f.title}`),
      [],
    );
  });

  it('drift names each fault made in its live BPF maps', () => {
    assert.equal(read('frontends.txt'), readFileSync(join(faulted, 'frontends.txt'), 'utf8'));
    assert.deepEqual(
      driftOf(faulted)
        .findings.map((f) => [f.id, f.service])
        .sort(),
      [
        ['cilium-bpf-map-differs', 'default/kubernetes:https'],
        ['cilium-bpf-map-differs', 'kube-system/kube-dns:metrics'],
        ['cilium-bpf-map-differs', 'matrix/cluster-ip:http'],
        ['cilium-bpf-map-differs', 'matrix/multi-port:https'],
      ],
    );
  });

  it('programs the tables recorded as its own', () => {
    assert.deepEqual(
      rows(read('frontends.txt')),
      rows(readFileSync(join(REF, 'frontends.txt'), 'utf8')),
    );
  });

  it('holds the frontends and backends kdebug expects', () => {
    const objects = (JSON.parse(readFileSync(OBJECTS, 'utf8')) as { items: KubeObject[] }).items;
    const view = clusterView(objects);
    const labels = view.nodes.find((n) => n.name === 'node-a')?.labels ?? {};
    const expected = expectedCilium(
      view,
      { name: 'node-a', labels },
      { ...CILIUM_DEFAULTS, ipv6: false },
    )
      .map(
        (f) =>
          `${frontendKey(f)} ${f.service} -> ${f.backends.map(formatAddress).sort().join(', ')}`,
      )
      .sort();
    assert.deepEqual(expected, rows(read('frontends.txt')));
  });

  it('a backend its health checker quarantines is a note in drift, not drift', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-q-'));
    try {
      onNodeA(dir, ['--unhealthy', 'matrix/cluster-ip=10.244.2.2:80/TCP']);
      const objects = (JSON.parse(readFileSync(OBJECTS, 'utf8')) as { items: KubeObject[] }).items;
      const facts = {
        objects: [
          ...objects.filter((o) => !/^kube-proxy/.test(o.metadata?.name ?? '')),
          aCiliumAgent('node-a', 'quay.io/cilium/cilium:v1.20.2'),
          aCiliumConfig(),
        ] as KubeObject[],
        nodes: {
          'node-a': {
            'cilium-frontends': readFileSync(join(dir, 'frontends.txt'), 'utf8'),
            'cilium-backends': readFileSync(join(dir, 'backends.txt'), 'utf8'),
            'cilium-bpf-lb-list': readFileSync(join(dir, 'maps.txt'), 'utf8'),
          },
        },
        meta: {},
      };
      const d = new Analysis(facts, { code: allModes }).node('node-a').drift();
      assert.deepEqual(
        d.findings.map((f) => f.id),
        [],
      );
      assert.ok(
        (d.notes ?? []).some(
          (n) => n.id === 'cilium-backend-state-differs' && /quarantined/.test(n.title),
        ),
        JSON.stringify(d.notes),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
