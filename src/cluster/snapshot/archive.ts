// A snapshot as one .tar.gz to attach to a ticket: POSIX ustar (a PAX header for long names), so
// `tar xzf` unpacks it anywhere. Reading follows no link and writes nothing: an archive is data,
// never paths. It is inflated as a stream and its headers parsed as the chunks arrive, every
// field checked and every size bounded before the bytes are inflated: memory stays near what is
// kept, the cursor only moves forward, and a signal is handled between two chunks.
import { Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import { LIMITS, MAX_OUTPUTS, quoted, sizeText } from './files.js';

export interface ArchiveEntry {
  path: string;
  data: Buffer;
}

/** An archive that cannot be read: the file and what is wrong, in one line. */
export class ArchiveError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'ArchiveError';
  }
}

const BLOCK = 512;
const MiB = 1024 ** 2;
/** What an archive may expand to: a 10,000-Service snapshot is a few tens of MB. */
export const MAX_EXPANDED = 1024 * MiB;
/** What the files read from an archive may add up to per byte of it: snapshot save's archive of
 * the bench's 5,000 Nodes and 10,000 Services, objects much alike, holds 40 times its size (66 MB
 * from 1.6 MB), 15 times with 50,000 Pods besides; 300 MiB of one Pod repeated packs in 1.8 MB
 * (172 times). What is read is held, and objects.json parsed: a bomb is stopped at the header. */
export const MAX_RATIO = 100;
/** Up to this, any ratio: a small snapshot's tar is mostly zero padding, and costs little. */
const RATIO_FLOOR = 64 * MiB;

/** What the files read from an archive of `size` bytes may add up to: a whole number of MiB. */
export const keptBound = (size: number): number =>
  Math.max(RATIO_FLOOR, Math.ceil((MAX_RATIO * size) / MiB) * MiB);

/** Headers a snapshot's archive may hold: each node output, a PAX header for a long name, and
 * the folders. Each costs a parse, whatever its size: the bound on the time a small archive takes. */
const MAX_ENTRIES = 3 * MAX_OUTPUTS;
/** A PAX or GNU long-name record holds a path: never more than this. */
const MAX_RECORD = MiB;
/** Inflated a MiB at a time: few round trips to the thread pool (1 GiB in 0.7 s), little held. */
const CHUNK = MiB;
/** Past the end-of-archive block, tar pads to its record size (10 KiB by default): what is read
 * beyond this is not a tar's, and is left uninflated. */
const MAX_TRAILER = MiB;

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

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

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
      parts.push(
        header('PaxHeader', pax.length, 'x', mtime),
        pax,
        Buffer.alloc(padding(pax.length)),
      );
    }
    const short = Buffer.from(e.path).subarray(0, 100).toString('utf8');
    parts.push(
      header(short, e.data.length, '0', mtime),
      e.data,
      Buffer.alloc(padding(e.data.length)),
    );
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(parts));
}

const cString = (b: Buffer, at: number, len: number) => {
  const raw = b.subarray(at, at + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? len : end).toString('utf8');
};

const [SPACE, NUL, ZERO, SEVEN] = [32, 0, 48, 55];

/** A numeric field: octal digits only (spaces before, spaces or NULs after); else undefined. */
function octalField(h: Buffer, at: number, len: number): number | undefined {
  const end = at + len;
  let i = at;
  while (i < end && h[i] === SPACE) i++;
  const digits = i;
  let n = 0;
  for (; i < end && h[i]! >= ZERO && h[i]! <= SEVEN; i++) n = n * 8 + h[i]! - ZERO;
  if (i === digits) return undefined;
  for (; i < end; i++) if (h[i] !== NUL && h[i] !== SPACE) return undefined;
  return n;
}

/** The size field: octal, or GNU's base-256 for 8 GiB and more (beyond any cap); -1 when invalid. */
function sizeField(h: Buffer): number {
  const first = h[124]!;
  if (first & 0x80) {
    if (first & 0x40) return -1; // negative
    let n = first & 0x3f;
    for (let i = 125; i < 136; i++) n = n * 256 + h[i]!;
    return n;
  }
  return octalField(h, 124, 12) ?? -1;
}

/** The stored checksum matches the header's bytes (the field counted as spaces; tar accepts the
 * signed sum some old writers used). */
function checksumOk(h: Buffer): boolean {
  let unsigned = 8 * SPACE;
  let high = 0; // bytes over 127, each 256 less in the signed sum
  for (let i = 0; i < BLOCK; i++) {
    if (i === 148) i = 156;
    unsigned += h[i]!;
    high += h[i]! >> 7;
  }
  const stored = octalField(h, 148, 8);
  return stored === unsigned || stored === unsigned - 256 * high;
}

/** A path that stays inside the archive: relative, no "..", no empty part. */
function safePath(path: string): string | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (path.startsWith('/') || parts.some((p) => p === '..') || parts.length === 0) return undefined;
  return parts.join('/');
}

export interface UntarOptions {
  /** What the whole archive may expand to. */
  max?: number;
  /** The cap of a regular file to keep, by its path; undefined: skipped (counted, not kept).
   * Default: every file, each within a node output's cap. */
  keep?: (path: string) => number | undefined;
  /** A file over its cap: true skips it (the caller says it was not read), else the archive fails. */
  tooBig?: (path: string, cap: number) => boolean;
  /** The most entries (headers of any kind). */
  maxEntries?: number;
  /** What the files kept may add up to, and how that bound is said; default: no more than `max`. */
  maxKept?: { bytes: number; said: string };
}

/** The entry whose bytes are arriving: `data` when they are kept. */
interface Body {
  type: 'file' | 'pax' | 'longName' | 'skip';
  path: string;
  size: number;
  /** Data and padding still to come. */
  left: number;
  data?: Buffer;
}

/** A tar stream fed chunk by chunk: the regular files it keeps, by path. */
class TarReader {
  readonly files = new Map<string, Buffer>();
  /** Tar bytes seen, and the offset of the header being read. */
  private seen = 0;
  private at = 0;
  private readonly header = Buffer.alloc(BLOCK);
  private headerFill = 0;
  private body: Body | undefined;
  private ended = false;
  private longName: string | undefined;
  private paxSize: number | undefined;
  private entries = 0;
  /** Bytes of the files kept so far. */
  private kept = 0;

  constructor(
    private readonly file: string,
    private readonly o: Required<UntarOptions>,
  ) {}

  private fail(reason: string): never {
    throw new ArchiveError(this.file, reason);
  }

  /** Reads a chunk of tar; false once what follows is no longer wanted. */
  push(chunk: Buffer): boolean {
    this.seen += chunk.length;
    if (this.seen > this.o.max) this.fail(`expands beyond ${sizeText(this.o.max)}, not read`);
    for (let i = 0; i < chunk.length && !this.ended;)
      i += this.body ? this.feedBody(chunk, i) : this.feedHeader(chunk, i);
    // a tar's padding is still inflated, so gzip checks the whole; not a bomb after it
    return !this.ended || this.seen - this.at <= MAX_TRAILER;
  }

  end(): Map<string, Buffer> {
    if (!this.ended && (this.body || this.headerFill > 0))
      this.fail('cut short (an entry runs past the end)');
    return this.files;
  }

  private feedHeader(chunk: Buffer, i: number): number {
    // a header whole in the chunk is read in place; one split between two chunks is gathered
    if (this.headerFill === 0 && chunk.length - i >= BLOCK) {
      this.readHeader(chunk.subarray(i, i + BLOCK));
      return BLOCK;
    }
    const n = Math.min(BLOCK - this.headerFill, chunk.length - i);
    chunk.copy(this.header, this.headerFill, i, i + n);
    this.headerFill += n;
    if (this.headerFill === BLOCK) {
      this.headerFill = 0;
      this.readHeader(this.header);
    }
    return n;
  }

  private feedBody(chunk: Buffer, i: number): number {
    const body = this.body!;
    const n = Math.min(body.left, chunk.length - i);
    const done = body.size + padding(body.size) - body.left;
    if (body.data && done < body.size)
      chunk.copy(body.data, done, i, i + Math.min(n, body.size - done));
    body.left -= n;
    if (body.left === 0) this.finish(body);
    return n;
  }

  private readHeader(h: Buffer): void {
    if (h.every((b) => b === 0)) {
      this.ended = true;
      return;
    }
    const own = sizeField(h);
    if (own < 0 || !checksumOk(h)) this.fail(`not a tar archive (bad header at byte ${this.at})`);
    if (++this.entries > this.o.maxEntries)
      this.fail(`more than ${this.o.maxEntries} entries, not read`);
    const type = String.fromCharCode(h[156]!);
    const record = type === 'x' || type === 'L';
    const size = record ? own : (this.paxSize ?? own);
    // checked before a byte of it is inflated: a 1.2 GB entry in a 1 MB archive is refused here
    if (this.at + BLOCK + size > this.o.max)
      this.fail(`expands beyond ${sizeText(this.o.max)}, not read`);
    const body = record ? this.recordBody(type, size) : this.entryBody(h, type, size);
    this.body = body;
    if (body.left === 0) this.finish(body);
  }

  /** A PAX header or a GNU long name: read whole, for the entry after it. */
  private recordBody(type: string, size: number): Body {
    if (size > MAX_RECORD) this.fail(`a long-name record over 1 MiB at byte ${this.at}, not read`);
    return newBody(type === 'x' ? 'pax' : 'longName', size, '', true);
  }

  private entryBody(h: Buffer, type: string, size: number): Body {
    // a PAX global header, a GNU long link name: read by no one, and the next entry keeps its name
    if (type === 'g' || type === 'K') return newBody('skip', size);
    const long = this.longName;
    this.longName = this.paxSize = undefined;
    // directories, links, devices: nothing to keep, and nothing followed
    if (type !== '0' && type !== '\0' && type !== '7') return newBody('skip', size);
    const name = long ?? headerName(h);
    const path = safePath(name);
    if (!path) this.fail(`entry ${quoted(name)} points outside the archive`);
    const cap = this.o.keep(path);
    if (cap === undefined) return newBody('skip', size);
    if (size > cap && this.o.tooBig?.(path, cap)) return newBody('skip', size);
    if (size > cap) this.fail(`entry ${quoted(path)}: over ${sizeText(cap)}, not read`);
    const most = this.o.maxKept;
    if (this.kept + size > most.bytes)
      this.fail(`entry ${quoted(path)}: what is read expands beyond ${most.said}, not read`);
    this.kept += size;
    return newBody('file', size, path, true);
  }

  private finish(body: Body): void {
    this.at += BLOCK + body.size + padding(body.size);
    this.body = undefined;
    const data = body.data;
    if (!data) return;
    if (body.type === 'file') this.files.set(body.path, data);
    else if (body.type === 'longName') this.longName = cString(data, 0, data.length);
    else if (body.type === 'pax') this.readPax(data.toString('utf8'));
  }

  /** A PAX header's path and size, for the entry after it. */
  private readPax(records: string): void {
    this.longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(records)?.[1] ?? this.longName;
    const size = /(?:^|\n)\d+ size=(\d+)\n/.exec(records)?.[1];
    if (size !== undefined) this.paxSize = Number(size);
  }
}

const newBody = (type: Body['type'], size: number, path = '', keep = false): Body => ({
  type,
  path,
  size,
  left: size + padding(size),
  data: keep ? Buffer.allocUnsafe(size) : undefined,
});

const USTAR = Buffer.from('ustar\0', 'latin1');

/** A ustar name: its prefix (ustar only; GNU keeps times there) and its name. */
function headerName(h: Buffer): string {
  const ustar = h.subarray(257, 263).equals(USTAR);
  const prefix = ustar ? cString(h, 345, 155) : '';
  return prefix ? `${prefix}/${cString(h, 0, 100)}` : cString(h, 0, 100);
}

/** What went wrong in the gzip layer, or reading the file under it. */
function streamProblem(e: NodeJS.ErrnoException): string {
  if (e.code === 'Z_BUF_ERROR') return `cut short (${e.message})`;
  if (e.code?.startsWith('Z_')) return `not gzip data (${e.message})`;
  return `cannot read (${e.message})`;
}

/**
 * The regular files of a .tar.gz (ustar, GNU long names, PAX paths) that `keep` asks for, each
 * within its cap; links and devices are skipped. `input` is the archive's bytes or a stream of them.
 */
export async function untarGz(
  input: Buffer | Readable,
  file: string,
  o: UntarOptions = {},
): Promise<Map<string, Buffer>> {
  const max = o.max ?? MAX_EXPANDED;
  const tar = new TarReader(file, {
    max,
    keep: o.keep ?? (() => Math.min(max, LIMITS.output)),
    tooBig: o.tooBig ?? (() => false),
    maxEntries: o.maxEntries ?? MAX_ENTRIES,
    maxKept: o.maxKept ?? { bytes: max, said: sizeText(max) },
  });
  const source = Buffer.isBuffer(input) ? Readable.from([input]) : input;
  const gunzip = createGunzip({ chunkSize: CHUNK });
  source.on('error', (e) => gunzip.destroy(e));
  source.pipe(gunzip);
  try {
    // one chunk at a time, awaited: the event loop (and a signal's handler) runs between two
    for await (const chunk of gunzip as AsyncIterable<Buffer>) if (!tar.push(chunk)) break;
  } catch (e) {
    if (e instanceof ArchiveError) throw e;
    throw new ArchiveError(file, streamProblem(e as NodeJS.ErrnoException));
  } finally {
    source.destroy();
  }
  return tar.end();
}
