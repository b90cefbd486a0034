// `kdebug mcp` against the lab cluster, driven by the SDK's own client over stdio as an assistant
// drives it: svc and drift on a real kube-proxy's rules, their results valid against the
// published schemas; a svc cancelled while its debug Pods run leaves none behind.
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, VIA_POD } from '../support/cluster/client.js';
import { clusterUnavailable, down, ROOT, up } from '../support/cluster/cluster.js';
import { deployment, manifest, namespace, service } from '../support/cluster/objects.js';
import { assertMatchesSchema } from '../support/schema.js';
import { skipWithout } from '../support/skip.js';

const PREFIX = 'kdm';

const textOf = (r: CallToolResult) => (r.content[0]?.type === 'text' ? r.content[0].text : '');

describe(
  'kdebug mcp against the lab cluster',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    let c: ClusterClient;
    let client: Client;

    /** kdebug's debug Pods in namespace default (where this server makes them). */
    const debugPods = () =>
      c
        .kubectl([
          '-n',
          'default',
          'get',
          'pods',
          '-l',
          'app.kubernetes.io/managed-by=kdebug',
          '-o',
          'jsonpath={.items[*].metadata.name}',
        ])
        .split(' ')
        .filter(Boolean);

    before(async () => {
      c = new ClusterClient(await up({ prefix: PREFIX, nodes: 2 }));
      c.kubectl(['apply', '-f', '-'], {
        input: manifest(
          namespace('demo'),
          deployment('demo', 'nginx'),
          service(
            'demo',
            'nginx-svc',
            'selector: {app: nginx}\nports: [{name: http, port: 8080, targetPort: 80}]',
          ),
        ),
      });
      await c.until(
        'the nginx Pods ready',
        () => c.readiness('demo').filter((r) => r === 'True').length === 2,
      );
      await c.until('kube-proxy to write both endpoints', () => c.dnatEverywhere(c.podIPs('demo')));
      await c.until(
        'the legacy Endpoints to list both Pods',
        () => c.legacyEndpoints('demo', 'nginx-svc').length === 2,
      );
      // the server as a user on the client machine starts it, allowed to make debug Pods
      const transport = new StdioClientTransport({
        command: 'ip',
        args: [
          'netns',
          'exec',
          c.info.clientNetns,
          process.execPath,
          join(ROOT, 'bin/kdebug.js'),
          'mcp',
          `--kubeconfig=${resolve(ROOT, c.info.kubeconfig)}`,
          '--allow-debug-pods',
          '--debug-namespace',
          'default',
        ],
        cwd: ROOT,
        env: { ...(process.env as Record<string, string>), NO_COLOR: '1' },
        stderr: 'inherit',
      });
      client = new Client({ name: 'kdebug-lab', version: '1.0.0' });
      await client.connect(transport);
    });
    after(async () => {
      await client?.close();
      down();
    });

    const call = async (name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
      (await client.callTool({ name, arguments: args }, undefined, { signal })) as CallToolResult;

    it('svc: a healthy Service passes every step (probes from debug Pods), its report valid against the schema', async () => {
      const heard: string[] = [];
      const r = (await client.callTool(
        { name: 'svc', arguments: { name: 'demo/nginx-svc', via: 'pod' } },
        undefined,
        { onprogress: (p) => heard.push(p.message ?? ''), timeout: 180_000 },
      )) as CallToolResult;
      assert.ok(!r.isError, textOf(r));
      assertMatchesSchema(r.structuredContent, 'svc on the lab cluster');
      const report = r.structuredContent as {
        status: string;
        steps: { id: string; status: string }[];
      };
      assert.equal(report.status, 'pass', JSON.stringify(report.steps));
      await c.until('the debug Pods deleted', () => debugPods().length === 0);
      assert.ok(heard.includes('svc demo/nginx-svc: started'), heard.join('\n'));
      // the same diagnosis the command line gives
      const cli = JSON.parse(
        c.kdebug(['svc', 'demo/nginx-svc', ...VIA_POD, '-o', 'json']).stdout,
      ) as typeof report;
      assert.deepEqual(
        report.steps.map((s) => `${s.id} ${s.status}`),
        cli.steps.map((s) => `${s.id} ${s.status}`),
      );
    });

    it('drift: every node as kube-proxy wrote it, no drift', async () => {
      const r = await call('drift', { 'all-nodes': true, via: 'kube-proxy' });
      assert.ok(!r.isError, textOf(r));
      assertMatchesSchema(r.structuredContent, 'drift on the lab cluster');
      const doc = r.structuredContent as { nodes: unknown[]; summary: { drift: boolean } };
      assert.equal(doc.nodes.length, 2);
      assert.equal(doc.summary.drift, false, textOf(r));
    });

    it('a svc cancelled while its debug Pods run leaves none behind', async () => {
      assert.deepEqual(debugPods(), []);
      const cancel = new AbortController();
      const running = call('svc', { name: 'demo/nginx-svc', via: 'pod' }, cancel.signal);
      await c.until('a debug Pod', () => debugPods().length > 0, 60_000);
      cancel.abort();
      await assert.rejects(running, /abort/i);
      await c.until('no debug Pod left', () => debugPods().length === 0, 60_000);
      // the server is still there
      const next = await call('services', { namespace: 'demo' });
      assert.match(textOf(next), /demo\/nginx-svc/);
    });
  },
);
