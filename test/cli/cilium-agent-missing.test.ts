// The built `kdebug svc` and `expect` on the Cilium scenario (snapshots/cilium-stale-backend) made
// into one where vm-12-11-centos has no Cilium agent Pod in the API (deleted from objects.json):
// with its recorded agent listings left on disk, and with them removed too. Neither node runs a
// kube-proxy Pod.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

interface Item {
  kind: string;
  metadata: { name: string };
  spec?: { nodeName?: string };
}

const NODE = 'vm-12-11-centos';
const made: string[] = [];
function snapshot(listings: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-agent-missing-'));
  made.push(dir);
  cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
  const objects = JSON.parse(readFileSync(join(dir, 'objects.json'), 'utf8')) as {
    items: Item[];
  };
  objects.items = objects.items.filter(
    (o) =>
      !(o.kind === 'Pod' && o.metadata.name.startsWith('cilium-') && o.spec?.nodeName === NODE),
  );
  writeFileSync(join(dir, 'objects.json'), JSON.stringify(objects));
  if (!listings)
    for (const f of readdirSync(join(dir, 'nodes', NODE)))
      if (f.startsWith('cilium-')) rmSync(join(dir, 'nodes', NODE, f));
  return dir;
}
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Doc {
  steps: {
    id: string;
    status: string;
    findings: { id: string; status: string; node?: string; explanation: string }[];
  }[];
}
const step = (doc: Doc, id: string) => doc.steps.find((s) => s.id === id)!;

describe('a Cilium cluster node with no agent Pod', () => {
  it('its recorded status shows Cilium ran: a warning on that node, the step not ✓', () => {
    // before: "✓ no kube-proxy: Services are handled by Cilium", exit 0
    const dir = snapshot(true);
    const svc = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'json']);
    const kp = step(JSON.parse(svc.stdout) as Doc, 'kube-proxy');
    const missing = kp.findings.find((f) => f.id === 'cilium-agent-missing');
    assert.deepEqual([missing?.status, missing?.node], ['warn', NODE]);
    assert.notEqual(kp.status, 'pass');
    const text = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'text', '--verbose']);
    assert.match(text.stdout, /nodes\/vm-12-11-centos\/cilium-status\.txt; no Cilium agent Pod/);
    assert.doesNotMatch(text.stdout, /cilium-frontends\.txt is not in the facts/);
  });

  it('nothing recorded there: a failure, "nothing programs Services for its Pods"', () => {
    const dir = snapshot(false);
    const svc = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'json']);
    assert.notEqual(svc.code, 0);
    const kp = step(JSON.parse(svc.stdout) as Doc, 'kube-proxy');
    const missing = kp.findings.find((f) => f.id === 'cilium-agent-missing');
    assert.deepEqual([missing?.status, missing?.node], ['fail', NODE]);
  });

  it('expect prints no kube-proxy rules for that node', () => {
    // before: the iptables rules kube-proxy v1.30 writes, as if it ran there
    for (const listings of [true, false]) {
      const expect = kdebug(['expect', '--snapshot', snapshot(listings), '--node', NODE]);
      assert.doesNotMatch(expect.stdout, /KUBE-SERVICES/);
      assert.match(expect.stderr, /no Cilium agent Pod there/);
    }
  });

  // before: "Cilium mode, its Cilium agent's Service table not read" (a skip), the stale backend
  // the recorded table holds there never said
  it('its recorded listings are compared, and the absent Pod said beside them', () => {
    const dir = snapshot(true);
    const svc = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'json']);
    const rules = step(JSON.parse(svc.stdout) as Doc, 'rules').findings.filter(
      (f) => f.node === NODE,
    );
    const ids = rules.map((f) => `${f.id} ${f.status}`);
    assert.ok(ids.includes('cilium-backend-stale fail'), ids.join(', '));
    assert.ok(ids.includes('cilium-agent-pod-absent pass'), ids.join(', '));
    assert.ok(!ids.some((i) => i.startsWith('rules-cilium-not-observed')), ids.join(', '));
    const drift = kdebug(['drift', '--snapshot', dir, '--node', NODE, '-o', 'json']);
    const doc = JSON.parse(drift.stdout) as { notes: { id: string }[]; findings: unknown[] };
    assert.ok(doc.notes.some((n) => n.id === 'cilium-agent-pod-absent'));
    assert.ok(doc.findings.length > 0);
    // no Pod to name: its log is the DaemonSet's
    assert.doesNotMatch(drift.stdout, /logs cilium-/);
  });

  // before: "kube-proxy on vm-12-11-centos would send the ClusterIP traffic ...", where no
  // kube-proxy runs
  it('Traffic policy does not speak of kube-proxy on that node', () => {
    const svc = kdebug(['svc', 'nginx-svc', '--snapshot', snapshot(false), '-o', 'json']);
    const tp = step(JSON.parse(svc.stdout) as Doc, 'traffic-policy');
    const f = tp.findings.find((x) => x.id === 'traffic-policy-not-observed');
    assert.ok(f, JSON.stringify(tp.findings.map((x) => x.id)));
    assert.doesNotMatch(f.explanation, /kube-proxy on vm-12-11-centos/);
    assert.match(
      f.explanation,
      /^On vm-12-11-centos the API holds neither a Cilium agent Pod nor a kube-proxy Pod/,
    );
  });
});
