// A CA, a server certificate for 127.0.0.1/localhost and client certificates (CN = user name,
// O = group, as the apiserver reads them), made with openssl once per test process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface Certs {
  ca: KeyPair;
  server: KeyPair;
  /** A client certificate signed by the CA, for user `cn`. */
  client(cn: string, org?: string): KeyPair;
  /** A certificate from another CA: right shape, wrong issuer. */
  stranger: KeyPair;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function selfSigned(dir: string, name: string, subject: string): KeyPair {
  openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    subject,
  ]);
  return {
    cert: readFileSync(join(dir, `${name}.crt`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

function signed(dir: string, name: string, subject: string, ext: string): KeyPair {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
  return {
    cert: readFileSync(join(dir, `${name}.crt`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

let cached: Certs | undefined;

export function certs(): Certs {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-fake-ca-'));
  try {
    const ca = selfSigned(dir, 'ca', '/CN=fake-kubernetes-ca');
    const server = signed(
      dir,
      'server',
      '/CN=kube-apiserver',
      'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
    );
    const stranger = selfSigned(dir, 'stranger', '/CN=stranger');
    const clients = new Map<string, KeyPair>();
    let n = 0;
    const client = (cn: string, org?: string): KeyPair => {
      const id = `${cn}/${org ?? ''}`;
      let pair = clients.get(id);
      if (!pair) {
        const d = mkdtempSync(join(tmpdir(), 'kdebug-fake-client-'));
        writeFileSync(join(d, 'ca.crt'), ca.cert);
        writeFileSync(join(d, 'ca.key'), ca.key);
        try {
          pair = signed(
            d,
            `client${n++}`,
            `/CN=${cn}${org ? `/O=${org}` : ''}`,
            'extendedKeyUsage=clientAuth\n',
          );
        } finally {
          rmSync(d, { recursive: true, force: true });
        }
        clients.set(id, pair);
      }
      return pair;
    };
    cached = { ca, server, client, stranger };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
