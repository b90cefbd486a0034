// `kdebug version -o json` against a server that answers 200 but is not a Kubernetes API server
// (issue 31): its serverError says so, as every other command's one line does; never "server":
// null with no word, nor whatever string the server put where gitVersion goes. A stand-in server
// on 127.0.0.1 answers every path with one body; the built CLI runs against it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebugAsync } from '../support/cli.js';

interface VersionDoc {
  server: string | null;
  serverError?: string;
}

describe('version -o json against a server that is not the Kubernetes API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-version-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `version -o json` against a server that answers every path 200 with `body`. */
  async function versionAgainst(type: string, body: string) {
    const server = createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': type }).end(body),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kubeconfig = join(dir, `kubeconfig-${(server.address() as AddressInfo).port}.yaml`);
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'edge', cluster: { server: url } }],
        users: [{ name: 'me', user: { token: 'a-token' } }],
        contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'me' } }],
        'current-context': 'edge',
      }),
    );
    try {
      const r = await kdebugAsync(['version', '-o', 'json', '--kubeconfig', kubeconfig]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      return { url, doc: JSON.parse(r.stdout) as VersionDoc };
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }
  const notKubernetes = (url: string, why: string) =>
    `the server at ${url} (context "edge") is not a Kubernetes API server, or not at that path: GET /version answered JSON without a Kubernetes release (${why}); check the server: URL in the kubeconfig (its host, port and path)`;

  // before: "server": null, and no serverError
  it('JSON that is not build info: not a Kubernetes API server, said', async () => {
    const { url, doc } = await versionAgainst('application/json', '{"ok":true}');
    assert.deepEqual(
      [doc.server, doc.serverError],
      [null, notKubernetes(url, 'gitVersion missing')],
    );
  });

  // before: "server": "v1\u001b[31mred"
  it("a gitVersion that is no release: not taken as the server's version", async () => {
    const { url, doc } = await versionAgainst(
      'application/json',
      '{"gitVersion":"v1\\u001b[31mred"}',
    );
    assert.deepEqual(
      [doc.server, doc.serverError],
      [null, notKubernetes(url, 'gitVersion not of the form v1.30.2')],
    );
  });

  it('a web page: a web site, not a Kubernetes API server', async () => {
    const { doc } = await versionAgainst('text/html', '<html><title>Sign in</title></html>');
    assert.equal(doc.server, null);
    assert.match(
      doc.serverError ?? '',
      /is a web site, not a Kubernetes API server: GET \/version answered 200 with a web page \("Sign in"\)/,
    );
  });

  it("a kube-apiserver's build info: its release", async () => {
    for (const version of ['v1.30.2', 'v1.29.4+k3s1', 'v1.31.0-eks-a737599']) {
      const { doc } = await versionAgainst(
        'application/json',
        JSON.stringify({ major: '1', minor: '30', gitVersion: version }),
      );
      assert.deepEqual([doc.server, doc.serverError], [version, undefined]);
    }
  });
});
