// One Service's analysis must say exactly what the whole node's says about that Service: the
// scoped trees and expected rules are compared with the full ones, on generated clusters and on
// every recorded snapshot. IP conventions: those of test/bench/cluster-dump.ts (Pod CIDR
// 10.128.0.0/9, Service CIDR 172.30.0.0/16, nodes 192.0.2.10-12).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { analyze } from '../../src/tui/data.js';
import { expectedRules, rulesOf } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { clusterDump, clusterObjects, NODE } from '../bench/cluster-dump.js';
import { allModes } from '../support/modes.js';

const snapshots = new URL('../../snapshots/', import.meta.url);
const recordedDumps = readdirSync(snapshots).flatMap((dir) => {
  const nodes = new URL(`${dir}/nodes/`, snapshots);
  if (!existsSync(nodes)) return [];
  return (
    readdirSync(nodes)
      .map((n) => new URL(`${n}/iptables-save.txt`, nodes))
      // a node in IPVS mode keeps its Services out of iptables
      .filter((f) => existsSync(f) && !existsSync(new URL('ipvsadm-save.txt', f)))
      .map((f) => ({ label: f.pathname.split('/snapshots/')[1]!, text: readFileSync(f, 'utf8') }))
  );
});

describe('scoped Service trees', () => {
  const cases = [
    { label: 'generated 200 x 3', text: clusterDump({ services: 200, endpoints: 3 }) },
    ...recordedDumps,
  ];
  for (const { label, text } of cases)
    it(`${label}: each named tree built alone equals its tree in the whole build`, () => {
      const all = buildServiceTrees(parseIptables(text));
      const named = all.services.filter((t) => t.name);
      assert.ok(named.length > 0, 'the dump has named trees');
      for (const tree of named) {
        const one = buildServiceTrees(parseIptables(text), {
          only: [{ name: tree.name!, protocol: tree.protocol }],
        });
        assert.deepEqual(
          one.services.map((t) => t.id),
          [tree.id],
        );
        assert.deepEqual(one.services[0], tree, tree.id);
        assert.deepEqual(one.orphans, []);
      }
    });
});

describe('scoped expected rules', () => {
  // 100 x 10 is kube-proxy's threshold exactly (1000 endpoints: not large); 101 x 10 is over it
  for (const services of [20, 100, 101, 140])
    it(`${services} Services x 10 endpoints: one Service's rules and large-cluster mode as in the whole node's`, () => {
      const view = clusterView(clusterObjects({ services, endpoints: 10 }));
      const full = expectedRules(view, NODE);
      for (const svc of view.services.filter((_, i) => i % 7 === 0)) {
        const one = expectedRules(view, NODE, {}, { only: [svc] });
        assert.equal(one.largeClusterMode, full.largeClusterMode);
        const want = full.servicePorts.filter(
          (p) => p.service === svc.name && p.namespace === svc.namespace,
        );
        assert.deepEqual(
          one.servicePorts.map((p) => rulesOf(one, p)),
          want.map((p) => rulesOf(full, p)),
          `${svc.namespace}/${svc.name}`,
        );
        assert.ok(want.length > 0);
      }
    });
});

describe('the analysis of a snapshot', () => {
  it('parses each node dump once, whoever asks: the command, the diagnosis and the TUI', async () => {
    const facts = await readSnapshot(new URL('nginx-svc', snapshots).pathname);
    const a = new Analysis(facts, { code: allModes });
    const node = Object.keys(facts.nodes)[0]!;
    const ruleset = a.node(node).rules()?.ruleset;
    assert.ok(ruleset);
    const target = { namespace: 'default', service: 'nginx-svc' };
    diagnose(facts, target, { analysis: a });
    const tui = analyze(a, { target });
    assert.equal(tui.analysis, a);
    assert.equal(tui.analysis.node(node).rules()?.ruleset, ruleset);
    const svc = a.view.services.find((s) => s.name === 'nginx-svc')!;
    assert.equal(a.node(node).drift([svc]), a.node(node).drift([svc]));
    // an analysis of other facts is a bug in the caller, never silently used
    assert.throws(() => diagnose({ ...facts }, target, { analysis: a }), /other facts/);
  });

  // but the spelling of its rules (rule-text-differs): one Service's answer does not read that
  it('one Service drift has the findings the whole-node drift has for that Service', async () => {
    for (const dir of readdirSync(snapshots)) {
      const facts = await readSnapshot(new URL(dir, snapshots).pathname);
      const a = new Analysis(facts, { code: allModes });
      for (const node of Object.keys(facts.nodes)) {
        const n = a.node(node);
        if (!n.rules()?.ruleset || n.driftUnavailable()) continue;
        const whole = n.drift();
        for (const svc of a.view.services) {
          const names = new Set(
            svc.ports.map((p) => `${svc.namespace}/${svc.name}${p.name ? `:${p.name}` : ''}`),
          );
          const mine = (f: { id: string; service?: string }) =>
            f.service !== undefined && names.has(f.service) && f.id !== 'rule-text-differs';
          assert.deepEqual(
            n.drift([svc]).findings.filter(mine),
            whole.findings.filter(mine),
            `${dir} ${node} ${svc.namespace}/${svc.name}`,
          );
        }
      }
    }
  });
});

describe('the TUI, reading a live run in parts: each dump parsed once', () => {
  const NGINX = { namespace: 'default', service: 'nginx-svc' };
  it("a fuller read's analysis takes the dumps parsed before; a dump that changed is parsed anew", async () => {
    const full = await readSnapshot('snapshots/nginx-svc');
    const [a, b] = Object.keys(full.nodes) as [string, string];
    // the first part: node a read; the second: node b too, and a's dump unchanged
    const first = { ...full, nodes: { [a]: { ...full.nodes[a]! } } };
    const earlier = analyze({ facts: first, code: allModes }, { target: NGINX }).analysis;
    const before = earlier.node(a).rules()!.ruleset!;
    const second = analyze({ facts: full, code: allModes }, { target: NGINX }, earlier).analysis;
    assert.equal(second.node(a).rules()!.ruleset, before, 'the same parse, not a new one');
    assert.ok(second.node(b).rules()!.ruleset, 'the new node parsed');
    // a ctrl-r that read a different dump for node a: parsed again
    const changed = {
      ...full,
      nodes: {
        ...full.nodes,
        [a]: { ...full.nodes[a]!, 'iptables-save': `${full.nodes[a]!['iptables-save']!}\n` },
      },
    };
    const third = analyze({ facts: changed, code: allModes }, { target: NGINX }, second).analysis;
    assert.notEqual(third.node(a).rules()!.ruleset, before);
    assert.equal(third.node(b).rules()!.ruleset, second.node(b).rules()!.ruleset);
  });
});
