// Kubeconfig files for a fake API server: token, client-certificate and exec-plugin users, CA
// as data or as a file next to the kubeconfig (relative paths, as people write them).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import type { Certs } from './certs.js';

export interface KubeconfigOptions {
  /** The user name the server will see. Default "admin". */
  user?: string;
  auth?: 'token' | 'cert' | 'cert-files' | 'exec' | 'none';
  /** Default: the first token the server maps to `user`. */
  token?: string;
  namespace?: string;
  /** Context name. Default "fake". */
  context?: string;
  /** Cluster entry name. Default "fake-cluster". */
  cluster?: string;
  /** Name of the user entry. Default: the user name. */
  userEntry?: string;
  tls?: 'ca-data' | 'ca-file' | 'insecure' | 'none';
  /** Override the server URL (e.g. an address nothing listens on). */
  server?: string;
  /** tls-server-name: the name the server certificate is checked against. */
  tlsServerName?: string;
  /** File name inside the server's directory. */
  file?: string;
  /** Write current-context. Default true. */
  setCurrent?: boolean;
  /** For auth "exec": the plugin exits 1 with this on stderr. */
  execFails?: string;
  /** For auth "exec": add an expirationTimestamp so client-node caches the credential. */
  execExpires?: boolean;
}

export interface ServerInfo {
  url: string;
  certs: Certs;
  tokens: Record<string, string>;
  dir: string;
}

let n = 0;

/** The plugin records KUBERNETES_EXEC_INFO per run in exec-plugin.log, so tests can count runs. */
function execPlugin(dir: string, token: string, o: KubeconfigOptions): string {
  const script = join(dir, `exec-plugin-${n}.cjs`);
  const status = o.execExpires
    ? { token, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() }
    : { token };
  writeFileSync(
    script,
    [
      `require('node:fs').appendFileSync(${JSON.stringify(join(dir, 'exec-plugin.log'))}, (process.env.KUBERNETES_EXEC_INFO || '-') + '\\n');`,
      o.execFails
        ? `process.stderr.write(${JSON.stringify(o.execFails)}); process.exit(1);`
        : `process.stdout.write(${JSON.stringify(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status }))});`,
    ].join('\n'),
  );
  return script;
}

export function writeKubeconfig(server: ServerInfo, o: KubeconfigOptions = {}): string {
  n++;
  const userName = o.user ?? 'admin';
  const file = join(server.dir, o.file ?? `kubeconfig-${n}.yaml`);
  const tls = o.tls ?? 'ca-data';
  const cluster: Record<string, unknown> = { server: o.server ?? server.url };
  if (tls === 'ca-data')
    cluster['certificate-authority-data'] = Buffer.from(server.certs.ca.cert).toString('base64');
  if (tls === 'ca-file') {
    writeFileSync(join(server.dir, `ca-${n}.crt`), server.certs.ca.cert);
    cluster['certificate-authority'] = `ca-${n}.crt`;
  }
  if (tls === 'insecure') cluster['insecure-skip-tls-verify'] = true;
  if (o.tlsServerName) cluster['tls-server-name'] = o.tlsServerName;
  const token =
    o.token ??
    Object.entries(server.tokens).find(([, u]) => u === userName)?.[0] ??
    'no-such-token';
  const user: Record<string, unknown> = {};
  const auth = o.auth ?? 'token';
  if (auth === 'token') user['token'] = token;
  if (auth === 'cert') {
    const pair = server.certs.client(userName);
    user['client-certificate-data'] = Buffer.from(pair.cert).toString('base64');
    user['client-key-data'] = Buffer.from(pair.key).toString('base64');
  }
  if (auth === 'cert-files') {
    const pair = server.certs.client(userName);
    writeFileSync(join(server.dir, `client-${n}.crt`), pair.cert);
    writeFileSync(join(server.dir, `client-${n}.key`), pair.key);
    user['client-certificate'] = `client-${n}.crt`;
    user['client-key'] = `client-${n}.key`;
  }
  if (auth === 'exec') {
    user['exec'] = {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: process.execPath,
      args: [execPlugin(server.dir, token, o)],
      interactiveMode: 'Never',
    };
  }
  const clusterName = o.cluster ?? 'fake-cluster';
  const contextName = o.context ?? 'fake';
  const userEntry = o.userEntry ?? userName;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: clusterName, cluster }],
    users: [{ name: userEntry, user }],
    contexts: [
      {
        name: contextName,
        context: {
          cluster: clusterName,
          user: userEntry,
          ...(o.namespace ? { namespace: o.namespace } : {}),
        },
      },
    ],
    ...(o.setCurrent === false ? {} : { 'current-context': contextName }),
  };
  writeFileSync(file, dump(doc));
  return file;
}
