// What a snapshot may hold, and the one way kdebug opens a file in it. A snapshot comes attached
// to a ticket: every name, file type and size in it is the sender's choice. So a snapshot is
// regular files and directories under names kdebug writes, each file read up to a cap, opened
// without following a link or waiting on a FIFO (a link to ~/.aws/credentials is never read).
import { MAX_OUTPUT_MIB } from '../../core/facts/not-read.js';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
} from 'node:fs';

const MiB = 1024 ** 2;

/** Caps a 10,000-Service snapshot fits in many times (objects.json ~20 MB, a dump ~35 MB); each
 * under V8's longest string (2^29 - 24 characters), so a file that fits is read as one string. */
export const LIMITS = {
  objects: 500 * MiB,
  // the nodes' errors and access, a few KB a node: 5,000 nodes none of which answered are ~25 MB
  meta: 64 * MiB,
  // what snapshot save may write of one node output: --max-output-mib goes up to it
  output: MAX_OUTPUT_MIB * MiB,
} as const;

/** More node outputs than a capture writes (1,000 nodes x 100 commands): a bound on the listing. */
export const MAX_OUTPUTS = 100_000;

/** A snapshot that cannot be read, with the file and what is wrong with it. */
export class SnapshotError extends Error {
  constructor(
    readonly file: string,
    message: string,
    /** Nothing is at that path: perhaps a bundled scenario's name. */
    readonly missing = false,
  ) {
    super(`${file}: ${message}`);
    this.name = 'SnapshotError';
  }
}

/** "256 MiB", "1 GiB": a cap as people read it. */
export const sizeText = (bytes: number) =>
  bytes >= 1024 * MiB ? `${bytes / (1024 * MiB)} GiB` : `${bytes / MiB} MiB`;

/** A name from a snapshot in a message: quoted and escaped (one line whatever it holds), and
 * cut after 64 characters. */
export const quoted = (name: string) =>
  JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);

/** A path from a snapshot in a message: as it is, or quoted when it would break the line. */
export const shown = (path: string) =>
  [...path].some((c) => c < ' ' || c === '\x7f') ? quoted(path) : path;

/** A Kubernetes node name: a DNS-1123 subdomain, the name of a node's folder. */
export const isNodeName = (name: string) =>
  name.length <= 253 &&
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);

/** A node command's file stem (core/nodes/commands.ts: letters, digits, `._:-`, an IPv6 address's
 * colons), starting with a letter or digit; `<stem>.txt` fits a file name's 255 bytes. */
export const isStem = (stem: string) => /^[A-Za-z0-9][A-Za-z0-9._:-]{0,250}$/.test(stem);

/** Names kdebug never writes and a reader skips: `.DS_Store`, macOS's `._name` copies. */
export const isHidden = (name: string) => name.startsWith('.');

/** What a file system entry is, in a message. */
export function kindOf(s: Stats): string {
  if (s.isSymbolicLink()) return 'a symbolic link';
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isSocket()) return 'a socket';
  return 'a regular file';
}

/** The entry at `path` as it is (a link not followed), undefined when there is none. */
export function entryAt(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SnapshotError(path, `cannot read (${(e as Error).message})`);
  }
}

/** Refuses what is not a regular file of at most `max` bytes. */
export function checkFile(path: string, s: Stats, max: number): void {
  if (!s.isFile())
    throw new SnapshotError(path, `${kindOf(s)}; a snapshot holds regular files only`);
  if (s.size > max) throw new SnapshotError(path, `over ${sizeText(max)}, not read`);
}

// no link followed at the last step, and a FIFO opens without waiting for a writer
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * A regular file's bytes, at most `max`; undefined when there is no file. Checked before it is
 * opened (lstat), and the open file checked again (fstat, the same inode): a FIFO or a device is
 * never read, and a link put in its place between the two is refused, not followed.
 */
export function readRegular(path: string, max: number): Buffer | undefined {
  const before = entryAt(path);
  if (!before) return undefined;
  checkFile(path, before, max);
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw new SnapshotError(path, 'a symbolic link; a snapshot holds regular files only');
    throw new SnapshotError(path, `cannot read (${(e as Error).message})`);
  }
  try {
    const s = fstatSync(fd);
    if (s.ino !== before.ino || s.dev !== before.dev)
      throw new SnapshotError(path, 'replaced while being read, not read');
    checkFile(path, s, max);
    return readUpTo(fd, s.size);
  } finally {
    closeSync(fd);
  }
}

/** The first `size` bytes of an open file (fewer if it shrank; what it grew by is not read). */
function readUpTo(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const n = readSync(fd, buf, filled, size - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return filled < size ? buf.subarray(0, filled) : buf;
}
