// kdebug's model of Cilium against Cilium itself: its load-balancer control plane (v1.20.2, run
// by test/support/cilium on real BPF maps) on the lab's truth matrix, recorded in
// test/fixtures/cilium/reference. The frontends kdebug expects are the ones Cilium holds, with
// the same backends; and a node whose agent lists exactly that has no drift, its BPF maps included.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { fromDump, fromModel } from '../../support/cilium-maps.js';
import { allModes } from '../../support/modes.js';

const REF = new URL('../../fixtures/cilium/reference/', import.meta.url).pathname;
const OBJECTS = new URL('../../fixtures/releases/37/iptables/objects.json', import.meta.url)
  .pathname;
const objects = (JSON.parse(readFileSync(OBJECTS, 'utf8')) as { items: KubeObject[] }).items;
const view = clusterView(objects);
const recorded = readdirSync(REF).filter((d) => /^node-/.test(d));
// the address each recording gave Cilium as its node's NodePort address (RECORDED)
const ADDRESS: Record<string, string> = { 'node-a': '192.0.2.21', 'node-b': '192.0.2.22' };

/** A recording's node and the agent settings it ran with, as cilium-config and kdebug say them. */
function recording(dir: string) {
  const node = dir.replace(/-(maglev|healthserver)$/, '');
  const health = dir.endsWith('-healthserver');
  return {
    node,
    config: {
      ...(dir.endsWith('-maglev') ? { 'bpf-lb-algorithm': 'maglev' } : {}),
      ...(health ? { 'enable-health-check-loadbalancer-ip': 'true' } : {}),
    },
    options: { ...CILIUM_DEFAULTS, ipv6: false, healthCheckLoadBalancerIP: health },
    // the agent's status names its NodePort address: the health server's backend
    status: `KubeProxyReplacement:  True  [eth0  ${ADDRESS[node]}]\n`,
  };
}

describe("Cilium's own control plane on the truth matrix", () => {
  it('was recorded for both nodes, with both selection algorithms and the health server on', () =>
    assert.deepEqual(recorded, [
      'node-a',
      'node-a-healthserver',
      'node-a-maglev',
      'node-b',
      'node-b-healthserver',
      'node-b-maglev',
    ]));

  for (const dir of recorded) {
    const { node, config, options, status } = recording(dir);
    const file = (f: string) => `${REF}${dir}/${f}`;
    it(`${dir}: kdebug expects the frontends and backends Cilium holds`, () => {
      const labels = view.nodes.find((n) => n.name === node)?.labels ?? {};
      const got = expectedCilium(
        view,
        { name: node, labels, nodePortAddresses: [ADDRESS[node]!] },
        options,
      ).map(
        (f) =>
          `${frontendKey(f)} ${f.type} ${f.service} -> ${f.backends.map(formatAddress).sort().join(', ')}`,
      );
      const want = parseCilium(
        readFileSync(file('frontends.txt'), 'utf8'),
        'frontends.txt',
      ).frontends.map(
        (f) =>
          `${frontendKey(f)} ${f.type} ${f.service} -> ${f.backends.map(formatAddress).sort().join(', ')}`,
      );
      assert.deepEqual(got.sort(), want.sort());
      // the health server's, on the three LoadBalancer IPs of Services with a Local policy
      const health = want.filter((w) => w.includes(':healthserver'));
      assert.equal(health.length, dir.endsWith('-healthserver') ? 3 : 0);
    });

    it(`${dir}: an agent that lists what Cilium holds has no drift, its maps included`, () => {
      const facts: Facts = {
        // where Cilium replaces kube-proxy, no kube-proxy runs
        objects: [
          ...objects.filter((o) => !/^kube-proxy/.test(o.metadata?.name ?? '')),
          aCiliumAgent(node, 'quay.io/cilium/cilium:v1.20.2'),
          // the recording's own settings: drift compares the Maglev tables with them
          aCiliumConfig(config),
        ],
        nodes: {
          [node]: {
            'cilium-status': status,
            'cilium-frontends': readFileSync(file('frontends.txt'), 'utf8'),
            'cilium-backends': readFileSync(file('backends.txt'), 'utf8'),
            'cilium-bpf-lb-list': readFileSync(file('maps.txt'), 'utf8'),
          },
        },
        meta: {},
      };
      const d = new Analysis(facts, { code: allModes }).node(node).drift();
      assert.deepEqual(
        d.findings.map((f) => `${f.id} ${f.title}`),
        [],
      );
      assert.equal(d.cilium?.read, 'both');
      assert.ok(d.servicePorts >= 20, `${d.servicePorts}`);
      // every frontend compared, the health server's included
      assert.deepEqual(d.notRead ?? [], []);
    });
  }
});

describe("the BPF maps kdebug expects on the truth matrix are Cilium's, by behaviour", () => {
  for (const dir of recorded) {
    const { node, config, status } = recording(dir);
    it(dir, () => {
      const analysis = new Analysis(
        {
          objects: [
            ...objects.filter((o) => !/^kube-proxy/.test(o.metadata?.name ?? '')),
            aCiliumAgent(node, 'quay.io/cilium/cilium:v1.20.2'),
            aCiliumConfig(config),
          ],
          nodes: { [node]: { 'cilium-status': status } },
          meta: {},
        },
        { code: allModes },
      );
      const order = <T extends { key: string }>(l: T[]) =>
        [...l].sort((a, b) => a.key.localeCompare(b.key));
      const got = analysis
        .node(node)
        .ciliumMaps()!
        .map((e) => fromModel(e, true));
      // 1.20's wildcard entries (port 0, any protocol) included: they drop what a Service
      // address does not serve
      const want = parseCilium(
        readFileSync(`${REF}${dir}/maps.txt`, 'utf8'),
        'maps.txt',
      ).frontends.map((f) => fromDump(f, true));
      assert.deepEqual(order(got), order(want));
      assert.ok(want.length >= 50, `${want.length}`);
    });
  }
});

describe("faults made on Cilium's own listings", () => {
  const file = (f: string) => readFileSync(`${REF}node-a/${f}`, 'utf8');
  const drift = (listings: Record<string, string>) =>
    new Analysis(
      {
        objects: [
          ...objects.filter((o) => !/^kube-proxy/.test(o.metadata?.name ?? '')),
          aCiliumAgent('node-a', 'quay.io/cilium/cilium:v1.20.2'),
          aCiliumConfig(),
        ],
        nodes: { 'node-a': listings },
        meta: {},
      },
      { code: allModes },
    )
      .node('node-a')
      .drift();
  const clean = {
    'cilium-frontends': file('frontends.txt'),
    'cilium-backends': file('backends.txt'),
    'cilium-bpf-lb-list': file('maps.txt'),
  };

  it('a backend gone from the BPF map but still in the table', () => {
    const maps = clean['cilium-bpf-lb-list']
      .replace(/^(SVC: ID=\d+ ADDR=10\.96\.128\.212:80\/TCP SLOT=0 .*)COUNT=2/m, '$1COUNT=1')
      .replace(/^SVC: ID=\d+ ADDR=10\.96\.128\.212:80\/TCP SLOT=2 .*\n/m, '');
    assert.notEqual(maps, clean['cilium-bpf-lb-list']);
    const d = drift({ ...clean, 'cilium-bpf-lb-list': maps });
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.service]),
      [['cilium-bpf-map-differs', 'matrix/cluster-ip:http']],
    );
    assert.match(d.findings[0]!.explanation, /lacks 10\.244\.2\.2:80/);
  });

  it("a frontend missing from the agent's table", () => {
    const table = clean['cilium-frontends'].replace(/^10\.96\.128\.212:80\/TCP .*\n/m, '');
    const d = drift({ ...clean, 'cilium-frontends': table });
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.service]),
      [['cilium-frontend-missing', 'matrix/cluster-ip:http']],
    );
  });

  it('a frontend whose reconciliation failed', () => {
    const table = clean['cilium-frontends'].replace(
      /^(10\.96\.128\.212:80\/TCP .*)Done {5}$/m,
      '$1Error   map update failed: no space left',
    );
    assert.notEqual(table, clean['cilium-frontends']);
    const d = drift({ ...clean, 'cilium-frontends': table });
    assert.deepEqual(
      d.findings.map((f) => f.id),
      ['cilium-frontend-not-reconciled'],
    );
  });

  it("a Service's session affinity missing from its map entry", () => {
    const maps = clean['cilium-bpf-lb-list'].replace(
      /^(SVC: ID=\d+ ADDR=10\.96\.25\.212:80\/TCP SLOT=0 .*)\+sessionAffinity/m,
      '$1',
    );
    assert.notEqual(maps, clean['cilium-bpf-lb-list']);
    const d = drift({ ...clean, 'cilium-bpf-lb-list': maps });
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.service]),
      [['cilium-affinity-differs', 'matrix/affinity:http']],
    );
  });
});
