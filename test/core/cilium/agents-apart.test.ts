// Listings of two Cilium agents in one paste (`kubectl exec` into cilium-aaaaa, then into
// cilium-bbbbb): another agent's listing is not a later run of the first, so a frontend only the
// first lists is not said deleted; the second is said apart, not read with it. Runs of one pod, or
// runs whose commands name none, are still compared.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'cilium', got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};

const HEADER = 'ID   Frontend            Service Type   Backend';
const KUBE = '1    10.96.0.1:443       ClusterIP      1 => 172.18.0.2:6443 (active)';
const WEB = '2    10.96.0.50:80       ClusterIP      1 => 10.0.1.5:8080 (active)';
const paste = (first: string, second: string) =>
  [first, HEADER, KUBE, WEB, second, HEADER, KUBE, ''].join('\n');

describe('service list run in two agent pods', () => {
  for (const [what, a, b, other] of [
    [
      'kubectl exec into two pods',
      '$ kubectl -n kube-system exec cilium-aaaaa -- cilium service list',
      '$ kubectl -n kube-system exec cilium-bbbbb -- cilium service list',
      'pod kube-system/cilium-bbbbb',
    ],
    [
      'one pod name, two contexts',
      '$ kubectl --context prod exec -n kube-system ds/cilium -c cilium-agent -- cilium-dbg service list',
      '$ kubectl --context=stage exec -n kube-system ds/cilium -c cilium-agent -- cilium-dbg service list',
      'pod stage/kube-system/ds/cilium',
    ],
    [
      'ssh to two nodes',
      '$ ssh -i ~/.ssh/k8s admin@node-a sudo cilium-dbg service list',
      '$ ssh -i ~/.ssh/k8s admin@node-b sudo cilium-dbg service list',
      'host node-b',
    ],
    [
      'prompts naming two hosts',
      'root@node-a:~# cilium-dbg service list',
      'root@node-b:~# cilium-dbg service list',
      'host node-b',
    ],
  ] as const)
    it(`${what}: the second is another agent's, no frontend said deleted`, () => {
      const { got, text } = read(paste(a, b));
      assert.equal(got.mode === 'cilium' && got.dump.runChanges, undefined);
      assert.doesNotMatch(text, /deleted/);
      assert.match(text.replace(/\s+/g, ' '), new RegExp(`a listing of another agent \\(${other}`));
      assert.match(text, /10\.96\.0\.50:80/);
    });

  it('two runs in one pod are still compared: the frontend the later lacks is deleted', () => {
    const a = '$ kubectl -n kube-system exec cilium-aaaaa -- cilium service list';
    const { got, text } = read(paste(a, a));
    assert.deepEqual(got.mode === 'cilium' && got.dump.runChanges?.[0]?.deleted, ['10.96.0.50:80']);
    assert.doesNotMatch(text, /another agent/);
  });
});
