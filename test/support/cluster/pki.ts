// The lab cluster's certificates: one CA it generates, and a key and certificate per component
// and user, made with openssl (EC P-256: fast). Kubernetes reads the user from CN, groups from O.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Identity {
  /** File stem: <stem>.crt, <stem>.key. */
  stem: string;
  cn: string;
  groups?: string[];
  /** Subject alternative names of a server: IPs and DNS names. */
  ips?: string[];
  dns?: string[];
  server?: boolean;
}

function openssl(args: string[], dir: string): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.trim()}`);
}

/** Writes ca.crt/ca.key, the service account key pair, and one pair per identity, into `dir`. */
export function makePki(dir: string, identities: Identity[]): void {
  mkdirSync(dir, { recursive: true });
  const key = (stem: string) =>
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${stem}.key`], dir);
  key('ca');
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-subj',
      '/CN=kdebug-lab-ca',
      '-days',
      '30',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  // service account tokens are signed with this key and checked with its public half
  key('sa');
  openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  for (const id of identities) {
    key(id.stem);
    const subject = `/CN=${id.cn}${(id.groups ?? []).map((g) => `/O=${g}`).join('')}`;
    openssl(
      ['req', '-new', '-key', `${id.stem}.key`, '-subj', subject, '-out', `${id.stem}.csr`],
      dir,
    );
    const san = [
      ...(id.ips ?? []).map((ip) => `IP:${ip}`),
      ...(id.dns ?? []).map((d) => `DNS:${d}`),
    ];
    const ext = [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${id.server ? 'serverAuth,clientAuth' : 'clientAuth'}`,
      ...(san.length > 0 ? [`subjectAltName=${san.join(',')}`] : []),
    ];
    writeFileSync(join(dir, `${id.stem}.ext`), ext.join('\n') + '\n');
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${id.stem}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '30',
        '-extfile',
        `${id.stem}.ext`,
        '-out',
        `${id.stem}.crt`,
      ],
      dir,
    );
  }
}

/** A kubeconfig for one identity against the API server at `server`. */
export function kubeconfig(pki: string, server: string, stem: string, user: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: kdebug-lab',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority: ${join(pki, 'ca.crt')}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    client-certificate: ${join(pki, `${stem}.crt`)}`,
    `    client-key: ${join(pki, `${stem}.key`)}`,
    'contexts:',
    `- name: ${user}@kdebug-lab`,
    '  context:',
    '    cluster: kdebug-lab',
    `    user: ${user}`,
    `current-context: ${user}@kdebug-lab`,
    '',
  ].join('\n');
}
