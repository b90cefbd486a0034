// A Cilium cluster whose agents refuse exec (GKE Autopilot's Warden, say) and whose cilium-config
// was not read: the Rules step says the agents' Service table was not read, and why, never that
// the step does not apply (issue 34; found by review r155).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../src/core/model.js';
import { ROOT, kdebug } from '../../support/cli.js';

const REFUSED =
  'pods "{pod}" is forbidden: admission webhook "warden-validating.common-webhooks.networking.gke.io" denied the request: exec into Pods in managed namespace kube-system is not allowed in Autopilot';

describe('Cilium agents that refuse exec, no cilium-config read', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-refused-'));
    cpSync(join(ROOT, 'snapshots/cilium-stale-backend'), dir, { recursive: true });
    const objects = JSON.parse(readFileSync(join(dir, 'objects.json'), 'utf8')) as {
      items: KubeObject[];
    };
    objects.items = objects.items.filter(
      (o) => !(o.kind === 'ConfigMap' && o.metadata?.name === 'cilium-config'),
    );
    writeFileSync(join(dir, 'objects.json'), JSON.stringify(objects));
    const nodeErrors = [];
    for (const node of readdirSync(join(dir, 'nodes')))
      for (const file of readdirSync(join(dir, 'nodes', node)).filter((f) =>
        f.startsWith('cilium-'),
      )) {
        rmSync(join(dir, 'nodes', node, file));
        const pod = objects.items.find(
          (o) =>
            o.kind === 'Pod' &&
            /cilium/.test(o.metadata?.name ?? '') &&
            (o['spec'] as { nodeName?: string }).nodeName === node,
        );
        nodeErrors.push({
          node,
          command: file.replace(/\.txt$/, ''),
          exitCode: null,
          error: REFUSED.replace('{pod}', pod?.metadata?.name ?? 'cilium'),
        });
      }
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as object;
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ ...meta, nodeErrors }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("says Cilium's table was not read, with each refused read as evidence", () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'json']);
    const report = JSON.parse(r.stdout) as {
      steps: {
        id: string;
        findings: { id: string; status: string; evidence: { kind: string; text: string }[] }[];
      }[];
    };
    const rules = report.steps.find((s) => s.id === 'rules')!.findings;
    assert.deepEqual(
      rules.map((f) => [f.id, f.status]),
      [['rules-not-observed', 'skip']],
    );
    const evidence = rules[0]!.evidence;
    assert.ok(evidence.length >= 2 && evidence.every((e) => e.kind === 'not-observed'));
    assert.ok(
      evidence.some((e) => /cilium-frontends: .*forbidden/.test(e.text)),
      JSON.stringify(evidence),
    );
  });

  it('the text report counts the Rules step among the checks not observed', () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'text']);
    assert.match(r.stdout, /Rules:\s+Cilium's Service table not read on any node/);
    assert.doesNotMatch(r.stdout, /not by iptables rules/);
  });
});
