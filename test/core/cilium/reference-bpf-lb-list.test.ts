// `cilium-dbg bpf lb list` as Cilium's own code prints it from the real BPF maps its control plane
// programmed for the truth matrix (test/support/cilium, recorded in
// test/fixtures/cilium/reference): kdebug reads it to the Service trees the agent's frontends
// table gives, drift is clean on it; and on the maps cilium-ref broke after Cilium reconciled
// (faults-node-a: test/support/cilium/faults.ts), drift names each fault.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { ciliumForm } from '../../../src/core/dataplane/cilium/read/which-listing.js';
import {
  formatAddress,
  frontendKey,
  type CiliumFrontend,
} from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { kdebug } from '../../support/cli.js';
import { allModes } from '../../support/modes.js';
import { FAULTS } from '../../support/cilium/faults.js';

const REF = new URL('../../fixtures/cilium/reference/', import.meta.url).pathname;
const OBJECTS = new URL('../../fixtures/releases/37/iptables/objects.json', import.meta.url)
  .pathname;
const objects = (JSON.parse(readFileSync(OBJECTS, 'utf8')) as { items: KubeObject[] }).items;
const recorded = readdirSync(REF).filter((d) => /^node-/.test(d));

interface Tree {
  id: string;
  entries: { kind: string; address?: string; port: number; protocol: string }[];
  endpoints: { address: string }[];
}
/** `kdebug rules --file` on a listing: each Service tree's frontend entries and backends (their
 * addresses: `bpf lb list` prints no backend state). */
function trees(file: string): Map<string, { entries: string[]; endpoints: string[] }> {
  const r = kdebug(['rules', '--file', file, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { form: string; services: Tree[] };
  return new Map(
    doc.services.map((s) => [
      s.id,
      {
        entries: s.entries.map((e) => `${e.kind} ${e.address ?? '*'}:${e.port}/${e.protocol}`),
        endpoints: s.endpoints.map((e) => e.address).sort(),
      },
    ]),
  );
}

/** Drift on node-a's agent as the listings show it (Cilium replacing kube-proxy there). */
function drift(node: string, listings: Record<string, string>) {
  return new Analysis(
    {
      objects: [
        ...objects.filter((o) => !/^kube-proxy/.test(o.metadata?.name ?? '')),
        aCiliumAgent(node, 'quay.io/cilium/cilium:v1.20.2'),
        aCiliumConfig(),
      ],
      nodes: { [node]: listings },
      meta: {},
    },
    { code: allModes },
  )
    .node(node)
    .drift();
}

describe("bpf lb list printed from Cilium's own BPF maps", () => {
  for (const dir of recorded) {
    const file = (f: string) => `${REF}${dir}/${f}`;
    const text = readFileSync(file('bpf-lb-list.txt'), 'utf8');

    it(`${dir}: is a bpf lb list, with every service map entry of the maps dump`, () => {
      assert.equal(ciliumForm(text), 'bpf-lb-list');
      assert.match(text, /^SERVICE ADDRESS {3,}BACKEND ADDRESS \(REVNAT_ID\) \(SLOT\)\n/);
      const svc = readFileSync(file('maps.txt'), 'utf8').match(/^SVC: /gm)?.length ?? 0;
      assert.equal(text.trimEnd().split('\n').length - 1, svc);
    });

    it(`${dir}: rules --file reads it to the trees of the maps dump`, () => {
      const listed = trees(file('bpf-lb-list.txt'));
      // the same maps, read from either listing: the same trees
      assert.deepEqual(listed, trees(file('maps.txt')));
      assert.ok(listed.size >= 30, `${listed.size}`);
    });

    it(`${dir}: each frontend of the agent's table is in it, with the table's backends`, () => {
      const backends = (f: CiliumFrontend) => f.backends.map(formatAddress).sort();
      const listed = new Map(
        parseCilium(text, 'bpf-lb-list.txt').frontends.map((f) => [frontendKey(f), backends(f)]),
      );
      const table = parseCilium(readFileSync(file('frontends.txt'), 'utf8'), 'frontends.txt');
      for (const f of table.frontends)
        assert.deepEqual(listed.get(frontendKey(f)), backends(f), frontendKey(f));
      assert.ok(table.frontends.length >= 40, `${table.frontends.length}`);
    });

    // (the Maglev and health server recordings' drift needs their settings: reference.test.ts)
    if (/-(maglev|healthserver)$/.test(dir)) continue;
    it(`${dir}: an agent whose maps list so has no drift`, () => {
      const d = drift(dir, {
        'cilium-frontends': readFileSync(file('frontends.txt'), 'utf8'),
        'cilium-backends': readFileSync(file('backends.txt'), 'utf8'),
        'cilium-bpf-lb-list': text,
      });
      assert.deepEqual(
        d.findings.map((f) => `${f.id} ${f.title}`),
        [],
      );
      assert.equal(d.cilium?.read, 'both');
      assert.deepEqual(d.notRead ?? [], []);
    });
  }
});

describe('faults cilium-ref made in the real BPF maps after Cilium reconciled', () => {
  const file = (f: string) => readFileSync(`${REF}faults-node-a/${f}`, 'utf8');
  // each fault, as drift names it: the datapath's maps against the agent's table
  const named = [
    ['cilium-bpf-map-differs', 'default/kubernetes:https'],
    ['cilium-bpf-map-differs', 'kube-system/kube-dns:metrics'],
    ['cilium-bpf-map-differs', 'matrix/cluster-ip:http'],
    ['cilium-bpf-map-differs', 'matrix/multi-port:https'],
  ];

  it('made each fault asked for, and only the maps changed', () => {
    assert.equal(file('faults.txt').trimEnd().split('\n').length, FAULTS.length);
    assert.equal(file('frontends.txt'), readFileSync(`${REF}node-a/frontends.txt`, 'utf8'));
    assert.notEqual(file('bpf-lb-list.txt'), readFileSync(`${REF}node-a/bpf-lb-list.txt`, 'utf8'));
  });

  for (const listing of ['bpf-lb-list.txt', 'maps.txt']) {
    it(`drift names each, read from ${listing}`, () => {
      const d = drift('node-a', {
        'cilium-frontends': file('frontends.txt'),
        'cilium-backends': file('backends.txt'),
        'cilium-bpf-lb-list': file(listing),
      });
      assert.deepEqual(
        d.findings.map((f) => [f.id, f.service]).sort(),
        named,
        JSON.stringify(d.findings.map((f) => f.title)),
      );
    });
  }
});
