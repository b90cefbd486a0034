// One agent for every connection to the API server: requests and execs resume the TLS session
// the first one made (no full handshake each), and a server that is not the kubeconfig's is
// still refused, as client-node's own agent refuses it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { KubeApi } from '../../../src/cluster/kube-api.js';
import { KubeApiError } from '../../../src/cluster/kube/errors.js';
import { startFakeApi, type FakeApi } from '../../support/fake-api/server.js';

/** An HTTPS server on `port` (0: any) that tells, for each TLS connection, whether it resumed a
 * session; it answers any GET with a Namespace and refuses every upgrade. */
async function resumingServer(pair: { key: string; cert: string }, port = 0) {
  const resumed: boolean[] = [];
  const asked: string[] = [];
  const server: Server = createServer({ ...pair }, (req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
  });
  server.on('secureConnection', (s: TLSSocket) => resumed.push(s.isSessionReused()));
  server.on('upgrade', (req, socket) => {
    asked.push(req.url ?? '');
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    resumed,
    asked,
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('connections to the API server share one agent', () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({ objects: [] });
  });
  after(() => fake.close());

  it('resumes the TLS session of the first connection for later requests and execs', async () => {
    const server = await resumingServer(fake.certs.server);
    try {
      const api = await KubeApi.connect({
        kubeconfig: fake.kubeconfig({ server: `https://127.0.0.1:${server.port}`, auth: 'cert' }),
        env: {},
      });
      for (let i = 0; i < 3; i++) await api.get('/api/v1/namespaces/default');
      // an exec the server refuses still made its TLS connection
      for (let i = 0; i < 2; i++) await api.exec('kube-system', 'p', 'c', ['true']);
      api.close();
      assert.equal(server.asked.length, 5);
      assert.deepEqual(server.resumed, [false, true, true, true, true]);
    } finally {
      await server.close();
    }
  });

  it("refuses a server whose certificate is not the kubeconfig's CA's, a session cached or not", async () => {
    const good = await resumingServer(fake.certs.server);
    const api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ server: `https://127.0.0.1:${good.port}` }),
      env: {},
    });
    await api.get('/api/v1/namespaces/default');
    await good.close();
    // another server at the same address, its certificate from another CA
    const other = await resumingServer(fake.certs.stranger, good.port);
    try {
      const e = await api.get('/api/v1/namespaces/default').then(
        () => assert.fail('the request was answered'),
        (x: unknown) => x,
      );
      assert.ok(e instanceof KubeApiError, String(e));
      assert.match(e.message, /certificate/);
      const exec = await api.exec('kube-system', 'p', 'c', ['true']);
      assert.match(exec.error ?? '', /certificate/);
      // no session resumed there, and neither got as far as a request
      assert.ok(!other.resumed.includes(true), String(other.resumed));
      assert.deepEqual(other.asked, []);
    } finally {
      api.close();
      await other.close();
    }
  });
});
