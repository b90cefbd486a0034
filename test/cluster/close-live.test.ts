// A live run's close deletes its debug Pods; a Ctrl-C while it does must still find that close
// among the signal's cleanups (and wait for it), not an empty set that lets kdebug exit with the
// Pods half deleted; the signal's call joins the close under way rather than deleting twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closeLive, type SourceContext } from '../../src/cluster/facts-source.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';

function slowCluster() {
  let finish!: () => void;
  const calls = { transport: 0, api: 0 };
  const api = { config: {}, close: () => void calls.api++ };
  const transport = {
    close: () => {
      calls.transport++;
      return new Promise<void>((r) => (finish = r));
    },
  };
  const Make = KubeCluster as unknown as new (a: unknown, t: unknown) => KubeCluster;
  return { cluster: new Make(api, transport), calls, finish: () => finish() };
}

describe('closeLive', () => {
  it('keeps the close among the signal cleanups until the Pods are deleted', async () => {
    const { cluster, calls, finish } = slowCluster();
    const release = new Set<() => Promise<void>>([() => cluster.close()]);
    const c = { release } as unknown as SourceContext;
    const closing = closeLive(cluster, c);
    await new Promise((r) => setImmediate(r));
    // the window a Ctrl-C lands in: the signal handler runs what release holds
    assert.equal(release.size, 1);
    const bySignal = Promise.all([...release].map((f) => f()));
    finish();
    await Promise.all([closing, bySignal]);
    assert.deepEqual(calls, { transport: 1, api: 1 });
    assert.equal(release.size, 0);
  });
});
