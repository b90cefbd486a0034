// OpenSSH's known_hosts, read the way ssh reads it: plain and hashed (|1|salt|hmac) host
// patterns, wildcards and negation, [host]:port for ports other than 22, and @revoked keys.
// ssh2 accepts any host key unless told otherwise; this is what tells it.
import { createHash, createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';

export interface KnownHost {
  file: string;
  line: number;
  marker?: 'revoked' | 'cert-authority';
  /** The host field as written: "a,b,[c]:2222" or "|1|salt|hash". */
  hosts: string;
  keyType: string;
  /** The public-key blob: the base64-decoded key field, what the server sends. */
  key: Buffer;
}

/** Every well-formed entry; comments, blank and malformed lines are skipped, as ssh does. */
export function parseKnownHosts(text: string, file = 'known_hosts'): KnownHost[] {
  const entries: KnownHost[] = [];
  text.split('\n').forEach((raw, i) => {
    const fields = raw.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return;
    let marker: KnownHost['marker'];
    if (fields[0] === '@revoked' || fields[0] === '@cert-authority')
      marker = fields.shift()!.slice(1) as KnownHost['marker'];
    const [hosts, keyType, b64] = fields;
    if (!hosts || !keyType || !b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return;
    const key = Buffer.from(b64, 'base64');
    if (keyTypeOf(key) !== keyType) return;
    entries.push({ file, line: i + 1, ...(marker ? { marker } : {}), hosts, keyType, key });
  });
  return entries;
}

/** Reads the files that exist, in order; a missing file is simply empty. */
export async function loadKnownHosts(files: readonly string[]): Promise<KnownHost[]> {
  const all: KnownHost[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new Error(`cannot read ${file}: ${(e as Error).message}`);
    }
    all.push(...parseKnownHosts(text, file));
  }
  return all;
}

/** The name ssh looks up: "host" on port 22, "[host]:port" otherwise. */
export function hostKeyName(host: string, port: number): string {
  return port === 22 ? host.toLowerCase() : `[${host.toLowerCase()}]:${port}`;
}

/** OpenSSH pattern: `*` and `?` wildcards, case-insensitive. */
function globMatch(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${re}$`, 'i').test(name);
}

/** Does this entry's host field cover `name` (from hostKeyName)? A matching `!pattern` wins. */
export function entryMatches(entry: Pick<KnownHost, 'hosts'>, name: string): boolean {
  if (entry.hosts.startsWith('|1|')) {
    const [, , salt, hash] = entry.hosts.split('|');
    if (!salt || !hash) return false;
    const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  let matched = false;
  for (const pattern of entry.hosts.split(',')) {
    if (pattern.startsWith('!')) {
      if (globMatch(pattern.slice(1), name)) return false;
    } else if (globMatch(pattern, name)) matched = true;
  }
  return matched;
}

export type HostKeyCheck =
  | { status: 'known'; entry: KnownHost }
  | { status: 'revoked'; entry: KnownHost }
  /** Entries for this host hold another key of the same type: possibly an attack, or a reinstall. */
  | { status: 'changed'; entries: KnownHost[] }
  /** No entry for this host with this key; `otherTypes` lists key types that are known. */
  | { status: 'unknown'; otherTypes: string[] };

export function checkHostKey(
  entries: readonly KnownHost[],
  host: string,
  port: number,
  key: Buffer,
): HostKeyCheck {
  const name = hostKeyName(host, port);
  const mine = entries.filter((e) => e.marker !== 'cert-authority' && entryMatches(e, name));
  const revoked = mine.find((e) => e.marker === 'revoked' && e.key.equals(key));
  if (revoked) return { status: 'revoked', entry: revoked };
  const plain = mine.filter((e) => e.marker === undefined);
  const known = plain.find((e) => e.key.equals(key));
  if (known) return { status: 'known', entry: known };
  const type = keyTypeOf(key);
  const sameType = plain.filter((e) => e.keyType === type);
  if (sameType.length > 0) return { status: 'changed', entries: sameType };
  return { status: 'unknown', otherTypes: [...new Set(plain.map((e) => e.keyType))] };
}

/** Key types known for this host, so the client can ask the server for one of them first. */
export function knownKeyTypes(entries: readonly KnownHost[], host: string, port: number): string[] {
  const name = hostKeyName(host, port);
  return [
    ...new Set(
      entries.filter((e) => e.marker === undefined && entryMatches(e, name)).map((e) => e.keyType),
    ),
  ];
}

/** The key type inside an SSH public-key blob ("ssh-ed25519", "ssh-rsa", ...), or "" if malformed. */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return '';
  const len = key.readUInt32BE(0);
  if (len === 0 || len > 64 || 4 + len > key.length) return '';
  return key.subarray(4, 4 + len).toString('latin1');
}

/** OpenSSH's fingerprint: "SHA256:" and unpadded base64 of the blob's SHA-256. */
export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The line to append to known_hosts to trust this key for this host. */
export function knownHostsLine(host: string, port: number, key: Buffer): string {
  return `${hostKeyName(host, port)} ${keyTypeOf(key)} ${key.toString('base64')}`;
}
