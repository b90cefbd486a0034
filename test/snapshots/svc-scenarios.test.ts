// `kdebug svc` on every scenario snapshot: the step that fails and its finding id, no other
// failing step, and the whole text and JSON output against the goldens in test/golden/svc/
// (KDEBUG_UPDATE_GOLDEN=1 rewrites them; read every diff before committing it).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { golden } from '../support/golden.js';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import {
  ANY_STEP_IDS,
  STEP_FINDING_IDS,
  type FindingId,
  type StepId,
} from '../../src/core/findings/finding-ids.js';
import { SEVERITY } from '../../src/core/dataplane/drift.js';
import type { Report } from '../../src/core/model.js';
import { reportJson } from '../../src/output/json.js';
import { reportText } from '../../src/output/text.js';
import { allModes } from '../support/modes.js';

interface Scenario {
  dir: string;
  service: string;
  /** The one failing step and the finding that says why; undefined for a healthy scenario. */
  fails?: { step: string; id: FindingId };
  /** Other findings that must be there. */
  has?: FindingId[];
  /** Snapshots another issue provides: skipped, with the reason, until they exist. */
  from?: string;
}

export const SCENARIOS: Scenario[] = [
  {
    dir: 'nginx-svc',
    service: 'nginx-svc',
    has: ['rules-match', 'hairpin-masquerade-present', 'ping-clusterip-explained'],
  },
  {
    dir: 'selector-typo',
    service: 'nginx-svc',
    fails: { step: 'selector', id: 'selector-matches-no-pods' },
    has: ['no-ready-endpoints', 'clusterip-unreachable'],
  },
  {
    dir: 'target-port-wrong',
    service: 'nginx-svc',
    fails: { step: 'ports', id: 'target-port-not-exposed' },
    has: ['endpoint-unreachable', 'clusterip-unreachable', 'ping-clusterip-explained'],
  },
  {
    dir: 'pods-not-ready',
    service: 'nginx-svc',
    fails: { step: 'endpoints', id: 'endpoint-not-ready' },
    has: ['no-ready-endpoints'],
  },
  {
    dir: 'coredns-down',
    service: 'nginx-svc',
    fails: { step: 'dns', id: 'coredns-unavailable' },
    has: ['dns-answer-wrong', 'clusterip-reachable'],
  },
  {
    dir: 'headless',
    service: 'nginx-headless',
    has: ['service-headless', 'dns-answer-ok', 'endpoints-reachable'],
  },
  {
    dir: 'external-name',
    service: 'payments-api',
    has: ['service-external-name', 'dns-answer-ok'],
  },
  // kube-proxy crash-looping on one node is the cause; the stale rules it left are its consequence
  {
    dir: 'stale-endpoint',
    service: 'nginx-svc',
    fails: { step: 'kube-proxy', id: 'kube-proxy-not-running' },
    has: ['endpoint-stale'],
    from: 'issue 3',
  },
  {
    dir: 'missing-service-rules',
    service: 'nginx-svc',
    fails: { step: 'rules', id: 'service-rules-missing' },
    from: 'issue 3',
  },
  {
    dir: 'nodeport-local-no-endpoint',
    service: 'nginx-svc',
    fails: { step: 'traffic-policy', id: 'no-local-endpoint' },
    from: 'issue 3',
  },
  // works on IPv4 everywhere and on IPv6 from one node: the family is named where it fails
  // IPVS mode: the stale real server found from ipvsadm-save, the ping note from kube-ipvs0
  {
    dir: 'ipvs-stale-real-server',
    service: 'nginx-svc',
    fails: { step: 'rules', id: 'endpoint-stale' },
    has: ['endpoint-missing', 'ipset-entry-missing', 'ping-clusterip-explained'],
  },
  // Cilium replaces kube-proxy: the agent's table read, the ping note from Cilium's datapath
  {
    dir: 'cilium-stale-backend',
    service: 'nginx-svc',
    fails: { step: 'rules', id: 'cilium-backend-stale' },
    has: ['cilium-backend-missing', 'kube-proxy-replaced', 'ping-clusterip-explained'],
  },
  {
    dir: 'dual-stack-ipv6-rules-missing',
    service: 'nginx-svc',
    fails: { step: 'rules', id: 'service-rules-missing' },
    has: ['rules-match', 'dns-answer-ok', 'clusterip-reachable'],
  },
];

/** The ids StepFindingId<step> allows, at run time. */
function stepMayCarry(step: string, id: string): boolean {
  const own: readonly string[] = STEP_FINDING_IDS[step as StepId] ?? [];
  const drift = step === 'rules' ? Object.keys(SEVERITY) : [];
  return [...own, ...drift, ...ANY_STEP_IDS].includes(id);
}

/** What `kdebug svc SERVICE --snapshot snapshots/DIR` prints. */
export async function scenarioReport(s: Scenario): Promise<Report> {
  const dir = join('snapshots', s.dir);
  const facts = await readSnapshot(dir);
  const target = { namespace: facts.meta.namespace ?? 'default', service: s.service };
  return diagnose(facts, target, { code: allModes, invocation: { snapshot: dir } });
}

describe('kdebug svc scenarios', () => {
  for (const s of SCENARIOS) {
    const missing = !existsSync(join('snapshots', s.dir, 'objects.json'));
    const skip =
      missing && s.from ? `snapshots/${s.dir} comes with ${s.from} and is not there yet` : false;
    it(
      `${s.dir}: ${s.fails ? `fails at ${s.fails.step} with ${s.fails.id}` : 'no step fails'}`,
      { skip },
      async () => {
        const report = await scenarioReport(s);
        const failing = report.steps.filter((step) => step.status === 'fail');
        assert.deepEqual(
          failing.map((step) => step.id),
          s.fails ? [s.fails.step] : [],
          'failing steps',
        );
        if (s.fails)
          assert.ok(
            failing[0]!.findings.some((f) => f.id === s.fails!.id && f.status === 'fail'),
            `${s.fails.id} fails`,
          );
        const all = report.steps.flatMap((step) => step.findings.map((f) => f.id));
        assert.ok(
          !all.includes('check-crashed'),
          JSON.stringify(report.steps.map((st) => st.findings[0]?.title)),
        );
        for (const id of s.has ?? []) assert.ok(all.includes(id), `${id} in ${all.join(' ')}`);
        // each finding under its own step: the ids finding-ids.ts gives that step
        for (const step of report.steps)
          for (const f of step.findings)
            assert.ok(stepMayCarry(step.id, f.id), `${step.id}: ${f.id}`);
        const text = reportText(report, { source: `snapshot snapshots/${s.dir}` });
        for (const line of text.split('\n'))
          assert.ok([...line].length <= 80, `wider than 80 columns: ${line}`);
        golden(join('test/golden/svc', `${s.dir}.txt`), text);
        golden(join('test/golden/svc', `${s.dir}.json`), reportJson(report));
      },
    );
  }
});

describe('an id says one verdict in a run: a script reading it gets one answer', () => {
  for (const s of SCENARIOS.filter((x) => existsSync(join('snapshots', x.dir, 'objects.json'))))
    it(s.dir, async () => {
      const report = await scenarioReport(s);
      const steps = new Map<string, Set<string>>();
      for (const step of report.steps)
        for (const f of step.findings)
          if (f.status === 'pass' || f.status === 'fail' || f.status === 'warn')
            steps.set(
              f.id,
              (steps.get(f.id) ?? new Set()).add(
                `${step.id}:${f.status === 'pass' ? 'pass' : 'problem'}`,
              ),
            );
      const mixed = [...steps].filter(
        ([, at]) => new Set([...at].map((a) => a.split(':')[1])).size > 1,
      );
      assert.deepEqual(
        mixed.map(([id, at]) => `${id}: ${[...at].join(', ')}`),
        [],
      );
    });
});

describe("the summary's Next is the command that shows or fixes the cause, not the symptom", () => {
  // the cause each scenario's explanation names, and the command that looks at it
  const causes: [string, RegExp][] = [
    ['pods-not-ready', /^kubectl -n default describe pod nginx-55fc968d9-kh24k$/],
    ['ipvs-stale-real-server', /^kubectl -n kube-system logs kube-proxy-\S+$/],
    [
      'cilium-stale-backend',
      /^kubectl -n kube-system logs cilium-lk8wz -c cilium-agent --tail=200$/,
    ],
    ['stale-endpoint', /^kubectl -n kube-system logs kube-proxy-\S+ --previous$/],
    ['coredns-down', /^kubectl -n kube-system logs coredns-\S+ --previous$/],
    ['selector-typo', /^kubectl -n default patch service nginx-svc --type=merge -p /],
  ];
  for (const [dir, want] of causes)
    it(dir, async () => {
      const s = SCENARIOS.find((x) => x.dir === dir)!;
      const report = await scenarioReport(s);
      const next = report.firstProblem?.finding.next;
      assert.ok(next, `${dir}: a Next command`);
      assert.match(next.argv.join(' ').replace(/'/g, ''), want);
    });
});
