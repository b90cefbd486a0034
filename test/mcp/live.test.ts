// `kdebug mcp` against a cluster (the fake API server): read-only unless allowed, snapshots
// saved redacted and only where allowed, and a cancelled call leaving no debug Pod behind, as
// Ctrl-C does on the command line.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  existsSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { KubeObject } from '../../src/core/model.js';
import { ROOT } from '../support/cli.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { assertMatchesSchema } from '../support/schema.js';
import { startServer, textOf, type Server } from './client.js';

const DEMO = `${ROOT}/snapshots/nginx-svc`; // two nodes: vm-12-7-centos and vm-12-11-centos

const debugPods = (fake: FakeApi) =>
  fake.store
    .list(typeOfKind('Pod')!, 'kdebug')
    .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug');

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(ok(), `never: ${what}`);
}

describe('kdebug mcp against a cluster (fake API server)', () => {
  let objects: KubeObject[];
  before(async () => {
    objects = (await readSnapshot(DEMO)).objects;
  });

  describe('every node command hangs', () => {
    let fake: FakeApi;
    const execd = new Set<string>();
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

    it('with --allow-debug-pods: a cancelled svc deletes the debug Pods it made; the server goes on', async () => {
      const server = await startServer([
        '--allow-debug-pods',
        '--kubeconfig',
        fake.kubeconfig({ namespace: 'default' }),
      ]);
      try {
        const cancel = new AbortController();
        const call = server.client.callTool(
          { name: 'svc', arguments: { name: 'nginx-svc', via: 'pod' } },
          undefined,
          { signal: cancel.signal },
        );
        await until('a debug Pod on each node runs a command', () => execd.size === 2);
        assert.equal(debugPods(fake).length, 2);
        cancel.abort();
        await assert.rejects(call, /abort/i);
        await until('the debug Pods are deleted', () => debugPods(fake).length === 0);
        const next = (await server.client.callTool({
          name: 'scenarios',
          arguments: {},
        })) as CallToolResult;
        assert.ok(!next.isError, textOf(next));
      } finally {
        await server.close();
      }
    });

    it('a server stopped by SIGTERM mid-call deletes the debug Pods first, as the CLI does', async () => {
      execd.clear();
      const server = await startServer([
        '--allow-debug-pods',
        '--kubeconfig',
        fake.kubeconfig({ namespace: 'default' }),
      ]);
      const call = server.client.callTool({
        name: 'svc',
        arguments: { name: 'nginx-svc', via: 'pod' },
      });
      await until('a debug Pod on each node runs a command', () => execd.size === 2);
      process.kill(server.pid, 'SIGTERM');
      await assert.rejects(call, /closed/i);
      await until('the debug Pods are deleted', () => debugPods(fake).length === 0);
      await server.close();
    });

    it('without it: no debug Pod is ever created, whatever the call asks', async () => {
      const from = fake.requests.length;
      const server = await startServer(['--kubeconfig', fake.kubeconfig({ namespace: 'default' })]);
      try {
        const r = (await server.client.callTool({
          name: 'svc',
          arguments: { name: 'nginx-svc', 'node-timeout': 5 },
        })) as CallToolResult;
        // the nodes stay unread: the report says so, and nothing was created to read them
        assert.ok(!r.isError, textOf(r));
        assertMatchesSchema(r.structuredContent, 'svc on the live cluster');
        // (an access review asks, it stores nothing)
        const writes = fake.requests
          .slice(from)
          .filter((q) => q.method !== 'GET' && !q.path.endsWith('/selfsubjectaccessreviews'));
        assert.deepEqual(
          writes.map((q) => `${q.method} ${q.path}`),
          [],
        );
        assert.deepEqual(debugPods(fake), []);
      } finally {
        await server.close();
      }
    });
  });

  describe('snapshots', () => {
    let fake: FakeApi;
    let tmp: string;
    let server: Server;
    before(async () => {
      fake = await startFakeApi({ objects });
      tmp = mkdtempSync(join(tmpdir(), 'kdebug-mcp-'));
      mkdirSync(join(tmp, 'allowed'));
      mkdirSync(join(tmp, 'elsewhere'));
      symlinkSync(join(tmp, 'elsewhere'), join(tmp, 'allowed', 'out'));
      server = await startServer([
        '--snapshot-dir',
        join(tmp, 'allowed'),
        '--via',
        'kube-proxy',
        '--kubeconfig',
        fake.kubeconfig({ namespace: 'default' }),
      ]);
    });
    after(async () => {
      await server.close();
      await fake.close();
      rmSync(tmp, { recursive: true, force: true });
    });
    const call = async (name: string, args: Record<string, unknown>) =>
      (await server.client.callTool({ name, arguments: args })) as CallToolResult;

    it('snapshot_save writes a redacted snapshot under --snapshot-dir, which the tools replay', async () => {
      const r = await call('snapshot_save', { dir: 'nginx', service: 'nginx-svc' });
      assert.ok(!r.isError, textOf(r));
      assert.match(textOf(r), /^redacted: kept only the fields kdebug reads/m);
      const dir = join(tmp, 'allowed', 'nginx');
      const text = ['objects.json', 'meta.json']
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('');
      assert.ok(!text.includes(fake.url));
      const saved = await readSnapshot(dir);
      assert.equal((saved.meta['redaction'] as { redacted: boolean }).redacted, true);
      const svc = await call('svc', { name: 'nginx-svc', snapshot: dir });
      assert.ok(!svc.isError, textOf(svc));
      assertMatchesSchema(svc.structuredContent, 'svc on the saved snapshot');
    });

    it('refuses a path out of --snapshot-dir, by .. or a symbolic link, and writes nothing there', async () => {
      for (const [args, said] of [
        [
          { dir: '../escaped', service: 'nginx-svc' },
          /^kdebug: dir \.\.\/escaped: not inside the directory this server may write to/,
        ],
        [{ dir: 'out/escaped', service: 'nginx-svc' }, /^kdebug: dir out\/escaped: not inside/],
        [
          { archive: '/tmp/x.tar.gz', service: 'nginx-svc' },
          /^kdebug: archive \/tmp\/x\.tar\.gz: not inside/,
        ],
        [{ service: 'nginx-svc' }, /^kdebug: give dir, archive or both/],
      ] as const) {
        const r = await call('snapshot_save', args);
        assert.equal(r.isError, true, textOf(r));
        assert.match(textOf(r), said);
      }
      assert.ok(!existsSync(join(tmp, 'escaped')));
      assert.deepEqual(readdirSync(join(tmp, 'elsewhere')), []);
    });

    it("services: the live cluster's Services of the namespace", async () => {
      const r = await call('services', {});
      assert.ok(!r.isError, textOf(r));
      const names = (r.structuredContent as { services: { name: string }[] }).services.map(
        (s) => s.name,
      );
      assert.deepEqual(names.sort(), ['kubernetes', 'nginx-svc']);
    });
  });
});
