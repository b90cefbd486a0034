// Snapshot directories: Facts on disk. `objects.json` is what `kubectl get ... -o json` prints
// (a List, or a single object, or an array), `meta.json` is optional, and
// `nodes/<node>/<command>.txt` holds the raw stdout of each node command. The same tree packed
// in a .tar.gz reads the same. Writing goes to a temporary sibling renamed at the end: a
// snapshot on disk is whole or absent.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ArchiveError, tarGz, untarGz, type ArchiveEntry } from './archive.js';
import { jsonErrorLine } from '../core/json-position.js';
import { flattenObjects } from '../core/kube.js';
import type { Facts, KubeObject, SnapshotMeta } from '../core/model.js';

/** A snapshot that cannot be read, with the file and what is wrong with it. */
export class SnapshotError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'SnapshotError';
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** A file read in one go: fs/promises reads big files 512 KiB at a time, a thread-pool round
 * trip each (150 ms of waiting for a 34 MB dump). */
const readText = (file: string) => readFileSync(file, 'utf8');

/** A node output read on first use: a big dump parsed on a worker is never read here. */
function lazyText(outputs: Record<string, string>, stem: string, file: string): void {
  const settle = (value: string) =>
    Object.defineProperty(outputs, stem, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  Object.defineProperty(outputs, stem, {
    enumerable: true,
    configurable: true,
    get() {
      const text = readText(file);
      settle(text);
      return text;
    },
    set: settle,
  });
}

/** A snapshot archive by its name: what `snapshot save --archive` writes. */
export const isArchiveName = (path: string) => /\.(tar\.gz|tgz)$/.test(path);

const OBJECTS_MISSING =
  'missing: a snapshot needs at least objects.json (kubectl get svc,endpointslices,pods,nodes,cm -A -o json)';

/** A snapshot directory, or a .tar.gz of one. */
export async function readSnapshot(dir: string): Promise<Facts> {
  if (isArchiveName(dir) && !(await isDir(dir))) return readArchive(dir);
  if (!(await isDir(dir))) throw new SnapshotError(dir, 'no such snapshot directory');
  const objectsFile = join(dir, 'objects.json');
  let text: string;
  try {
    text = readText(objectsFile);
  } catch {
    throw new SnapshotError(objectsFile, OBJECTS_MISSING);
  }
  const objects = parseObjects(objectsFile, text);
  let meta: SnapshotMeta = {};
  const metaFile = join(dir, 'meta.json');
  try {
    meta = JSON.parse(readText(metaFile)) as SnapshotMeta;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new SnapshotError(metaFile, `not valid JSON: ${(e as Error).message}`);
  }
  const nodes: Facts['nodes'] = {};
  const nodesDir = join(dir, 'nodes');
  if (await isDir(nodesDir)) {
    for (const node of (await readdir(nodesDir)).sort()) {
      if (!(await isDir(join(nodesDir, node)))) continue;
      nodes[node] = {};
      for (const file of (await readdir(join(nodesDir, node))).sort()) {
        if (!file.endsWith('.txt')) continue;
        lazyText(nodes[node]!, file.slice(0, -4), join(nodesDir, node, file));
      }
    }
  }
  return { objects, nodes, meta };
}

/** The archive's files, the tree under the (shallowest) objects.json read as a directory. */
async function readArchive(file: string): Promise<Facts> {
  let files: Map<string, Buffer>;
  try {
    files = untarGz(readFileSync(file), file);
  } catch (e) {
    if (e instanceof ArchiveError) throw new SnapshotError(file, e.message.slice(file.length + 2));
    const code = (e as NodeJS.ErrnoException).code;
    throw new SnapshotError(
      file,
      code === 'ENOENT' ? 'no such snapshot archive' : (e as Error).message,
    );
  }
  const objectsPath = [...files.keys()]
    .filter((p) => p === 'objects.json' || p.endsWith('/objects.json'))
    .sort((a, b) => a.split('/').length - b.split('/').length)[0];
  if (!objectsPath) throw new SnapshotError(`${file}: objects.json`, OBJECTS_MISSING);
  const root = objectsPath.slice(0, -'objects.json'.length);
  const where = (p: string) => `${file}: ${p}`;
  const objects = parseObjects(where(objectsPath), files.get(objectsPath)!.toString('utf8'));
  let meta: SnapshotMeta = {};
  const metaBytes = files.get(`${root}meta.json`);
  if (metaBytes)
    try {
      meta = JSON.parse(metaBytes.toString('utf8')) as SnapshotMeta;
    } catch (e) {
      throw new SnapshotError(where(`${root}meta.json`), `not valid JSON: ${(e as Error).message}`);
    }
  const nodes: Facts['nodes'] = {};
  const prefix = `${root}nodes/`;
  for (const [path, data] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const m = path.startsWith(prefix)
      ? /^([^/]+)\/([^/]+)\.txt$/.exec(path.slice(prefix.length))
      : null;
    if (!m) continue;
    (nodes[m[1]!] ??= {})[m[2]!] = data.toString('utf8');
  }
  return { objects, nodes, meta };
}

function parseObjects(file: string, text: string): KubeObject[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const line = jsonErrorLine(text);
    throw new SnapshotError(
      line ? `${file}:${line}` : file,
      `not valid JSON: ${(e as Error).message}`,
    );
  }
  // Lists (kubectl get -o json) are flattened: Facts hold one object per item, kind filled in
  if (Array.isArray(parsed)) return flattenObjects(parsed as KubeObject[]);
  if (parsed !== null && typeof parsed === 'object') return flattenObjects([parsed as KubeObject]);
  throw new SnapshotError(file, 'expected a Kubernetes List, an object or an array of objects');
}

/** The files of a snapshot, as paths under its root. */
function snapshotFiles(facts: Facts): ArchiveEntry[] {
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: facts.objects,
  };
  const files: ArchiveEntry[] = [
    { path: 'objects.json', data: Buffer.from(JSON.stringify(list, null, 2) + '\n') },
    { path: 'meta.json', data: Buffer.from(JSON.stringify(facts.meta, null, 2) + '\n') },
  ];
  for (const [node, outputs] of Object.entries(facts.nodes))
    for (const [stem, stdout] of Object.entries(outputs))
      files.push({ path: `nodes/${node}/${stem}.txt`, data: Buffer.from(stdout) });
  return files;
}

/** A temporary name beside `target` (same filesystem, so the rename is atomic). */
const temporary = (target: string) =>
  join(dirname(target), `.${basename(target)}.partial-${randomBytes(4).toString('hex')}`);

export interface WriteOptions {
  /** Where to register the removal of the temporary file (Ctrl-C); removed again when done. */
  release?: Set<() => Promise<void>>;
}

/** Writes to a temporary sibling, renamed to `target` once whole; removed on any failure or
 * interruption (`go` throws once the removal began, so nothing is written after it). */
async function atomically(
  target: string,
  write: (tmp: string, go: () => void) => Promise<void>,
  o: WriteOptions,
): Promise<void> {
  const tmp = temporary(target);
  let removing = false;
  const remove = () => ((removing = true), rm(tmp, { recursive: true, force: true }));
  const go = () => {
    if (removing) throw new Error(`${target}: interrupted`);
  };
  o.release?.add(remove);
  try {
    await write(tmp, go);
    go();
    await rename(tmp, target);
  } catch (e) {
    await remove();
    throw e;
  } finally {
    o.release?.delete(remove);
  }
}

/** Writes Facts as a snapshot directory that readSnapshot gives back unchanged. */
export async function writeSnapshot(
  dir: string,
  facts: Facts,
  o: WriteOptions = {},
): Promise<void> {
  await atomically(
    dir,
    async (tmp, go) => {
      for (const f of snapshotFiles(facts)) {
        go();
        await mkdir(dirname(join(tmp, f.path)), { recursive: true });
        await writeFile(join(tmp, f.path), f.data);
      }
    },
    o,
  );
}

/** Writes Facts as one .tar.gz (a directory named after the file inside) that readSnapshot reads. */
export async function writeSnapshotArchive(
  file: string,
  facts: Facts,
  o: WriteOptions = {},
): Promise<void> {
  const root = basename(file).replace(/\.(tar\.gz|tgz)$/, '') || 'snapshot';
  const entries = snapshotFiles(facts).map((f) => ({ ...f, path: `${root}/${f.path}` }));
  await atomically(file, (tmp) => writeFile(tmp, tarGz(entries)), o);
}
