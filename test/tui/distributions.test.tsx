// The Diagnosis screen on the k3s- and EKS-shaped scenarios (test/fixtures/distributions/, issue
// 38): its kube-proxy step says which kind of kube-proxy it found and where its version came from,
// as the text and JSON reports do (test/cli/distributions.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { App } from '../../src/tui/App.js';
import { diagnosed, press, render, settle } from './harness.js';
import { allModes } from '../support/modes.js';

const TARGET = { namespace: 'matrix', service: 'cluster-ip' };

/** The Findings pane of step 6 (kube-proxy) on the scenario's snapshot, at 120x40. */
async function kubeProxyStep(dir: string): Promise<string> {
  const coded = { facts: await readSnapshot(dir), code: allModes };
  const r = render(
    <App
      start="diag"
      target={TARGET}
      facts={coded}
      load={async () => coded}
      color={false}
      size={{ columns: 120, rows: 40 }}
    />,
  );
  await settle(30);
  await diagnosed(r);
  await press(r, 'down', 'down', 'down', 'down', 'down');
  const out = await press(r, 'enter');
  r.unmount();
  return out;
}

describe('the Diagnosis screen on kube-proxy outside a plain DaemonSet Pod', () => {
  it('k3s: kube-proxy inside k3s, its version from /metrics, never not running', async () => {
    const out = await kubeProxyStep('test/fixtures/distributions/k3s');
    assert.match(out, /›✓ +6 kube-proxy/);
    assert.match(out, /kube-proxy runs inside k3s on 2 nodes, not as a Pod/);
    assert.match(out, /kube-proxy v1\.33\.13 on node-a, from its \/metrics/);
    assert.doesNotMatch(out, /not running|no kube-proxy Pod on/);
  });

  it("EKS: kube-proxy's Pods running, its version read", async () => {
    const out = await kubeProxyStep('test/fixtures/distributions/eks');
    assert.match(out, /›✓ +6 kube-proxy/);
    assert.match(out, /kube-proxy running on 2 nodes/);
    assert.match(out, /kube-proxy v1\.33\.13 on 2 nodes/);
  });
});
