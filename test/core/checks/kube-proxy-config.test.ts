// kube-proxy's configuration not read (a ConfigMap that does not parse, or none): said as not
// observed with the object and why, and nothing compared or decided from kube-proxy's defaults.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { diagnose } from '../../../src/core/diagnose.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { shownStepStatus, type Facts, type Report } from '../../../src/core/model.js';
import { allModes } from '../../support/modes.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };

/** The snapshot with kube-proxy's ConfigMap's file made unparseable YAML. */
async function unparseable(dir: string): Promise<Facts> {
  const facts = await readSnapshot(dir);
  for (const o of facts.objects)
    if (o.kind === 'ConfigMap' && o.metadata?.name === 'kube-proxy')
      (o['data'] as Record<string, string>)['config.conf'] = 'mode: [iptables\n';
  return facts;
}

/** The snapshot without kube-proxy's ConfigMap. */
async function withoutConfigMap(dir: string): Promise<Facts> {
  const facts = await readSnapshot(dir);
  facts.objects = facts.objects.filter(
    (o) => !(o.kind === 'ConfigMap' && o.metadata?.name === 'kube-proxy'),
  );
  return facts;
}

const findings = (r: Report) => r.steps.flatMap((s) => s.findings);

describe("kube-proxy's ConfigMap that does not parse", () => {
  it('is not observed, naming the object and the YAML error with its line', async () => {
    const r = diagnose(await unparseable('snapshots/nginx-svc'), TARGET, { code: allModes });
    const step = r.steps.find((s) => s.id === 'kube-proxy')!;
    const f = step.findings.find((x) => x.id === 'kube-proxy-config-unreadable')!;
    assert.equal(f.status, 'skip');
    assert.ok(f.evidence.some((e) => e.kind === 'not-observed'));
    assert.match(
      f.explanation,
      /^ConfigMap kube-system\/kube-proxy key config\.conf: not valid YAML at line 2: /,
    );
    assert.doesNotMatch(f.explanation, /assumes/);
    assert.equal(shownStepStatus(step), 'partial', 'the step passed only where it looked');
    assert.ok(r.unobserved?.includes(`kube-proxy: ${f.title}`), JSON.stringify(r.unobserved));
  });

  it('drift says the ConfigMap did not parse, not that there is none', async () => {
    const r = diagnose(await unparseable('snapshots/nginx-svc'), TARGET, { code: allModes });
    const masq = findings(r).find((f) => f.id === 'masquerade-differs')!;
    assert.match(
      masq.explanation,
      /configuration \(ConfigMap kube-system\/kube-proxy key config\.conf: not valid YAML at line 2/,
    );
    assert.doesNotMatch(masq.explanation, /no ConfigMap/);
  });

  for (const [name, facts] of [
    ['does not parse', () => unparseable('snapshots/stale-endpoint')],
    ['is not there', () => withoutConfigMap('snapshots/stale-endpoint')],
  ] as const)
    it(`${name}: kube-proxy's own masquerade rule is never unexpected`, async () => {
      const r = diagnose(await facts(), TARGET, { code: allModes });
      const unexpected = findings(r)
        .flatMap((f) => f.evidence)
        .filter((e) => e.diff === 'unexpected' && /cluster IP" .*-j KUBE-MARK-MASQ$/.test(e.text));
      assert.deepEqual(unexpected.map(evidenceText), []);
      // the endpoint findings still say the node's real difference
      assert.ok(findings(r).some((f) => f.id === 'endpoint-stale'));
    });
});
