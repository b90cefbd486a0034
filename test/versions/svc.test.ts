// `kdebug svc` on each modelled release's recording (test/fixtures/releases/<minor>/<mode>/, the
// lab's truth matrix as that release's real kube-proxy wrote it): the Services the lab diagnoses
// live pass through the real CLI, every Service of the truth matrix has its rules read on every
// node and no drift, and what does not pass is only what the recording did not hold (no probe,
// no DNS lookup). An IPVS recording's node-b is the lab's own, in iptables mode: its modes differ,
// which svc warns of, and nothing else. IP conventions (the lab, topology.ts): Pod CIDR
// 10.244.0.0/16, Service CIDR 10.96.0.0/16, nodes 192.0.2.21 and .22.
import { severityOf } from '../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { Facts, Finding, Report, Step } from '../../src/core/model.js';
import { kdebugAsync } from '../support/cli.js';
import { MATRIX_NAMESPACE } from '../support/cluster/matrix.js';
import { IPVS_NODE } from '../support/ipvs-vm/kube-proxy.js';
import { inVm, proxyModeOf, recordedBy, recordings } from './record.js';
import { allModes } from '../support/modes.js';

/** The Services the lab runs `kdebug svc` on against a live kube-proxy (releases, nftables). */
const DIAGNOSED = ['kube-system/kube-dns', `${MATRIX_NAMESPACE}/cluster-ip`];

const nodesOf = (dir: string) => readdirSync(join(dir, 'nodes')).sort();

/** The Rules step read every node's rules: each has observed evidence there, none failed. */
function assertRulesPass(rules: Step | undefined, nodes: string[], what: string): void {
  assert.ok(rules, `${what}: no Rules step`);
  const shown = rules.findings.map((f) => `${f.id}:${f.status} ${f.title}`);
  assert.equal(rules.status, 'pass', `${what}: ${shown.join('; ')}`);
  // a drift finding is a warning or failure; kube-proxy's by-design notes pass
  assert.deepEqual(
    rules.findings.filter((f) => f.status !== 'pass').map((f) => `${f.id}: ${f.title}`),
    [],
    what,
  );
  const read = new Set(
    rules.findings.flatMap((f) =>
      f.evidence.filter((e) => e.kind === 'observed').map((e) => e.node),
    ),
  );
  assert.deepEqual(
    nodes.filter((n) => !read.has(n)),
    [],
    `${what}: nodes whose rules were not read`,
  );
}

/** A step that does not pass only for what the recording lacks: a skip whose findings that do
 * not pass rest on nothing observed (not-observed evidence, or an explanation computed), or
 * the ping explanation, which without a recorded ping is a note, no verdict. */
function lacksOnly(step: Step): boolean {
  const unproven = (f: Finding) =>
    f.status === 'pass' ||
    (f.status === 'skip' &&
      (f.id === 'ping-clusterip-explained' ||
        (f.evidence.length > 0 &&
          f.evidence.every((e) => e.kind === 'not-observed' || e.kind === 'computed'))));
  return step.status === 'skip' && step.findings.every(unproven);
}

describe('kdebug svc on what each release really wrote (the lab recordings)', () => {
  for (const { release, mode, dir } of recordings())
    it(`v1.${release.minor} ${mode}: the Services the lab diagnoses pass, through the CLI`, async () => {
      const ran = recordedBy(dir) ?? assert.fail(`${dir}/RECORDED names no kube-proxy`);
      const nodes = nodesOf(dir);
      const held = clusterView((await readSnapshot(dir)).objects).services.map(
        (s) => `${s.namespace}/${s.name}`,
      );
      const services = DIAGNOSED.filter((s) => held.includes(s));
      assert.deepEqual(services, DIAGNOSED, `${dir} holds the Services the lab diagnoses`);
      const runs = await Promise.all(
        services.map((s) => kdebugAsync(['svc', s, '--snapshot', dir, '-o', 'json'])),
      );
      for (const [i, r] of runs.entries()) {
        const what = `v1.${release.minor} ${mode} ${services[i]}`;
        const mixed = inVm(mode);
        assert.equal(r.code, mixed ? 1 : 0, `${what}: ${r.stderr}`);
        const report = JSON.parse(r.stdout) as Report & { service?: { proxyMode?: string } };
        // the IPVS recordings' node-b is the lab's own node, in iptables mode: said mixed
        assert.equal(report.service?.proxyMode, mixed ? 'mixed' : proxyModeOf(mode), what);
        // the release it read, and where: the image of each node's kube-proxy Pod (the VM's
        // node-a: its /metrics)
        const version = report.steps
          .find((s) => s.id === 'kube-proxy')
          ?.findings.find((f) => f.id === 'kube-proxy-version');
        assert.equal(version?.title, `kube-proxy ${ran.version} on ${nodes.length} nodes`, what);
        for (const node of nodes)
          assert.ok(
            version.evidence.some((e) =>
              e.text.startsWith(
                `kube-proxy ${ran.version} on ${node}, from ${mixed && node === IPVS_NODE ? 'its /metrics' : 'the image '}`,
              ),
            ),
            `${what}: ${node}'s version source`,
          );
        assertRulesPass(
          report.steps.find((s) => s.id === 'rules'),
          nodes,
          what,
        );
        const others = report.steps.filter((s) => s.status !== 'pass' && !lacksOnly(s));
        assert.deepEqual(
          others.map((s) => s.id),
          mixed ? ['kube-proxy'] : [],
          what,
        );
        assert.deepEqual(
          others.flatMap((s) =>
            s.findings.filter((f) => f.status !== 'pass').map((f) => `${s.id} ${f.id}: ${f.title}`),
          ),
          mixed
            ? [
                'kube-proxy proxy-mode-differs: the nodes run different proxy modes: ipvs and iptables',
              ]
            : [],
          `${what}: steps that do not pass for another reason than what was not recorded`,
        );
      }
    });

  for (const { release, mode, dir } of recordings())
    it(`v1.${release.minor} ${mode}: every Service of the truth matrix has its rules read on every node, and no drift`, async () => {
      const facts: Facts = await readSnapshot(dir);
      const nodes = nodesOf(dir);
      const analysis = new Analysis(facts, { code: allModes });
      const matrix = analysis.view.services.filter((s) => s.namespace === MATRIX_NAMESPACE);
      assert.ok(matrix.length > 0, `${dir} holds the truth matrix`);
      for (const svc of matrix) {
        const what = `v1.${release.minor} ${mode} ${svc.namespace}/${svc.name}`;
        // one analysis for the recording, as a run shares it between its steps and commands
        const report = diagnose(
          facts,
          { namespace: svc.namespace, service: svc.name },
          { analysis },
        );
        assertRulesPass(
          report.steps.find((s) => s.id === 'rules'),
          nodes,
          what,
        );
        // what drift says of its ports on each node, as `kdebug drift` computes it
        for (const node of nodes)
          assert.deepEqual(
            analysis
              .node(node)
              .drift([svc])
              .findings.map((f) => `${severityOf(f)} ${f.id}: ${f.title}`),
            [],
            `${what}: drift on ${node}`,
          );
      }
    });
});
