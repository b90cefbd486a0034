// Ctrl-C (and SIGTERM) in text mode, the built CLI against the fake API server: the exit code
// is 128 + the signal, and debug Pods are mentioned only when the run had made some, with how
// many. A run without any says nothing, as kubectl does (the other cleanups are silent).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { KubeObject } from '../../src/core/model.js';
import { hermetic, ROOT } from '../support/cli.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';

const DEMO = `${ROOT}/snapshots/nginx-svc`; // two nodes: vm-12-7-centos and vm-12-11-centos

/** The built CLI; `signal` once `ready()` holds; resolves with its exit code and stderr. */
async function interrupted(
  fake: FakeApi,
  args: string[],
  signal: NodeJS.Signals,
  ready: () => boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      'bin/kdebug.js',
      ...args,
      '-o',
      'text',
      '--kubeconfig',
      fake.kubeconfig({ namespace: 'default' }),
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: hermetic()['HOME'], NO_COLOR: '1' },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  const until = Date.now() + 20_000;
  while (!ready() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.ok(ready(), `the run never got there; stderr: ${stderr}`);
  child.kill(signal);
  return { code: await exited, stdout, stderr };
}

describe('kdebug interrupted in text mode (built CLI)', () => {
  let objects: KubeObject[];
  before(async () => {
    if (!existsSync(`${ROOT}/dist/cli.js`)) throw new Error('no build: run node scripts/build.js');
    objects = (await readSnapshot(DEMO)).objects;
  });

  describe('before any debug Pod exists: the EndpointSlices never come', () => {
    let fake: FakeApi;
    before(async () => {
      fake = await startFakeApi({ objects, stall: (r) => r.path.includes('endpointslices') });
    });
    after(() => fake.close());
    /** This run (its requests from `from` on) is waiting for the EndpointSlices. */
    const stalled = (from: number) => () =>
      fake.requests.slice(from).some((r) => r.path.includes('endpointslices'));

    // one line per run that holds cleanups but no Pod: nothing to say about Pods
    for (const [what, args] of [
      ['no debug Pod channel', ['--via', 'kube-proxy']],
      ['a debug Pod channel that never made a Pod', ['--via', 'pod', '--yes']],
    ] as const)
      it(`${what}: SIGINT exits 130 and says nothing`, async () => {
        const from = fake.requests.length;
        const r = await interrupted(fake, ['svc', 'nginx-svc', ...args], 'SIGINT', stalled(from));
        assert.equal(r.code, 130, r.stderr);
        assert.equal(r.stderr, '');
        assert.equal(r.stdout, '');
      });
  });

  describe('with debug Pods on both nodes: every node command hangs', () => {
    let fake: FakeApi;
    const execd = new Set<string>(); // Pods a command was sent to
    before(async () => {
      fake = await startFakeApi({
        objects,
        exec: (req) => {
          execd.add(req.pod.metadata?.name ?? '');
          return new Promise(() => undefined);
        },
      });
    });
    after(() => fake.close());
    const debugPods = () =>
      fake.store
        .list(typeOfKind('Pod')!, 'kdebug')
        .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug');

    for (const [signal, code, said] of [
      ['SIGINT', 130, 'interrupted'],
      ['SIGTERM', 143, 'SIGTERM'],
    ] as const)
      it(`${signal}: exits ${code}, says it deletes the 2 Pods, and does`, async () => {
        execd.clear();
        const r = await interrupted(
          fake,
          ['svc', 'nginx-svc', '--via', 'pod', '--yes'],
          signal,
          () => execd.size === 2,
        );
        assert.equal(r.code, code, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(`^kdebug: ${said}: deleting the debug Pods kdebug created \\(2\\)$`, 'm'),
        );
        assert.deepEqual(debugPods(), []);
      });
  });
});
