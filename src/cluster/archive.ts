// A snapshot as one .tar.gz to attach to a ticket: POSIX ustar (a PAX header for long names), so
// `tar xzf` unpacks it anywhere. Reading keeps everything in memory and follows no link: an
// archive is data, never paths to write to.
import { gunzipSync, gzipSync } from 'node:zlib';

export interface ArchiveEntry {
  path: string;
  data: Buffer;
}

/** An archive that cannot be read, with what is wrong. */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

const BLOCK = 512;
/** What an archive may expand to: a 10,000-Service snapshot is a few hundred MB. */
export const MAX_EXPANDED = 2 * 1024 ** 3;

const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0') + '\0';

function header(name: string, size: number, type: string, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(mtime, 12), 136);
  h.write(' '.repeat(8), 148);
  h.write(type, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** A PAX record "LEN path=VALUE\n", LEN counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

/** The entries as a gzip'd tar, files only (their directories are implied). */
export function tarGz(entries: ArchiveEntry[], mtime = Math.floor(Date.now() / 1000)): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (Buffer.byteLength(e.path) > 100) {
      const pax = Buffer.from(paxRecord('path', e.path));
      parts.push(header('PaxHeader', pax.length, 'x', mtime), pax, padding(pax.length));
    }
    const short = Buffer.from(e.path).subarray(0, 100).toString('utf8');
    parts.push(header(short, e.data.length, '0', mtime), e.data, padding(e.data.length));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(parts));
}

const field = (h: Buffer, at: number, len: number) => {
  const raw = h.subarray(at, at + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? len : end).toString('utf8');
};

/** A path that stays inside the archive: relative, no "..", no empty part. */
function safePath(path: string): string | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (path.startsWith('/') || parts.some((p) => p === '..') || parts.length === 0) return undefined;
  return parts.join('/');
}

/** The regular files of a .tar.gz (ustar, GNU long names, PAX paths); links and devices are skipped. */
export function untarGz(bytes: Buffer, file: string, max = MAX_EXPANDED): Map<string, Buffer> {
  let tar: Buffer;
  try {
    tar = gunzipSync(bytes, { maxOutputLength: max });
  } catch (e) {
    const mib = max / 1024 ** 2;
    const why =
      (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        ? `expands beyond ${mib >= 1024 ? `${mib / 1024} GiB` : `${mib} MiB`}`
        : `not gzip data (${(e as Error).message})`;
    throw new ArchiveError(`${file}: ${why}`);
  }
  const files = new Map<string, Buffer>();
  let longName: string | undefined;
  for (let at = 0; at + BLOCK <= tar.length;) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const stored = parseInt(field(h, 148, 8).trim(), 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (stored !== sum)
      throw new ArchiveError(`${file}: not a tar archive (bad header at byte ${at})`);
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(h[156]!);
    const data = tar.subarray(at + BLOCK, at + BLOCK + size);
    if (data.length < size)
      throw new ArchiveError(`${file}: cut short (an entry runs past the end)`);
    at += BLOCK + size + padding(size).length;
    if (type === 'x') {
      const path = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
      longName = path ?? longName;
      continue;
    }
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    const prefix = field(h, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    longName = undefined;
    if (type !== '0' && type !== '\0') continue; // directories, links, devices: not data
    const path = safePath(name);
    if (!path) throw new ArchiveError(`${file}: entry "${name}" points outside the archive`);
    files.set(path, data);
  }
  return files;
}
