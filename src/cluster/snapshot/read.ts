// Snapshot directories: Facts on disk. `objects.json` is what `kubectl get ... -o json` prints
// (a List, or a single object, or an array), `meta.json` is optional, and
// `nodes/<node>/<command>.txt` holds the raw stdout of each node command. The same tree packed
// in a .tar.gz reads the same. A snapshot comes from someone else: it is read as regular files
// under node names, each within its cap, no link followed (snapshot/files.ts). Writing goes to a
// temporary sibling renamed at the end, every path checked to stay inside it: a snapshot on disk
// is whole or absent, and nothing is written outside it.
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, constants } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import {
  ArchiveError,
  keptBound,
  MAX_EXPANDED,
  MAX_RATIO,
  tarGz,
  untarGz,
  type ArchiveEntry,
} from './archive.js';
import {
  checkFile,
  entryAt,
  isHidden,
  isNodeName,
  isStem,
  kindOf,
  LIMITS,
  MAX_OUTPUTS,
  quoted,
  readRegular,
  shown,
  sizeText,
  SnapshotError,
} from './files.js';
import { jsonErrorLine } from '../../core/json-position.js';
import { flattenObjects } from '../../core/kube/objects.js';
import type { Facts, KubeObject, NodeOutputs, SnapshotMeta } from '../../core/model.js';
import { typedMeta } from '../../core/facts/meta.js';
import type { NodeError } from '../../core/nodes/access.js';
import { inputBytes, inputText } from '../../core/facts/input-text.js';
import { jsonValues, MAX_JSON_VALUES, MAX_OBJECT_MEMBERS, objectWiderThan } from './json-values.js';

export { SnapshotError } from './files.js';

/** Whether anything (a file, a FIFO, a device) is at `path`. */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** A snapshot file as text, read whole in one go (fs/promises reads big files 512 KiB at a time,
 * a thread-pool round trip each: 150 ms of waiting for a 34 MB dump). */
function readText(file: string, max: number): string | undefined {
  const bytes = readRegular(file, max);
  return bytes && inputText(bytes);
}

/** Nodes by name, with no inherited keys: a node "constructor" or "__proto__" is just a name. */
const nodeMap = (): Facts['nodes'] => Object.create(null) as Facts['nodes'];

/** A snapshot archive by its name: what `snapshot save --archive` writes. */
export const isArchiveName = (path: string) => /\.(tar\.gz|tgz)$/.test(path);

const OBJECTS_MISSING =
  'missing: a snapshot needs at least objects.json (kubectl get svc,endpointslices,pods,nodes,cm -A -o json)';
const NOT_A_NODE = 'is not a Kubernetes node name (a DNS-1123 subdomain); not read';
const NOT_A_STEM = "is not a node command's file name (letters, digits and ._:-); not read";

/** A snapshot directory, or a .tar.gz of one; `objectsOnly`: its node outputs left unread (names
 * for TAB completion need no rules dump). */
export async function readSnapshot(dir: string, objectsOnly = false): Promise<Facts> {
  if (isArchiveName(dir) && !(await isDir(dir))) return readArchive(dir);
  if (!(await isDir(dir)))
    throw (await exists(dir))
      ? new SnapshotError(
          dir,
          'not a snapshot: a snapshot is a directory (kdebug snapshot save DIR) or a .tar.gz of one',
        )
      : new SnapshotError(dir, 'no such snapshot directory', true);
  const objectsFile = join(dir, 'objects.json');
  const bytes = readRegular(objectsFile, LIMITS.objects);
  if (bytes === undefined) throw new SnapshotError(objectsFile, OBJECTS_MISSING);
  const objects = parseObjects(objectsFile, bytes);
  const metaFile = join(dir, 'meta.json');
  const metaText = readText(metaFile, LIMITS.meta);
  const meta = metaText === undefined ? {} : parseMeta(metaFile, metaText);
  if (objectsOnly) return { objects, nodes: nodeMap(), meta };
  const { nodes, tooBig } = await readNodes(join(dir, 'nodes'));
  return { objects, nodes, meta: withUnread(meta, tooBig) };
}

/** meta with the node outputs not read beside the capture's own failed commands: each is said on
 * its node as not observed, with its file and why, as a live run says an output over its limit. */
function withUnread(meta: Facts['meta'], tooBig: NodeError[]): Facts['meta'] {
  if (tooBig.length === 0) return meta;
  const recorded = Array.isArray(meta['nodeErrors']) ? (meta['nodeErrors'] as unknown[]) : [];
  return { ...meta, nodeErrors: [...recorded, ...tooBig] };
}

/** A folder of the snapshot to list: a directory. Absent, or a file in its place (a README
 * beside the node folders), is no folder; a link or a device is refused, never followed. */
function isFolder(path: string, s = entryAt(path)): boolean {
  if (!s || s.isFile()) return false;
  if (s.isDirectory()) return true;
  throw new SnapshotError(
    path,
    `${kindOf(s)}; a snapshot holds directories and regular files only`,
  );
}

/** nodes/<node>/<stem>.txt, read now (links, devices and bad names refused): the core gets plain
 * text and never reads a file. */
async function readNodes(
  nodesDir: string,
): Promise<{ nodes: Facts['nodes']; tooBig: NodeError[] }> {
  const nodes = nodeMap();
  // an output over the cap is one node command not read, not the whole snapshot
  const tooBig: NodeError[] = [];
  if (!isFolder(nodesDir)) return { nodes, tooBig };
  let count = 0;
  for (const node of (await readdir(nodesDir)).sort()) {
    const nodeDir = join(nodesDir, node);
    const s = isHidden(node) ? undefined : entryAt(nodeDir);
    if (!s || s.isFile()) continue;
    if (!isNodeName(node)) throw new SnapshotError(nodesDir, `${quoted(node)} ${NOT_A_NODE}`);
    if (!isFolder(nodeDir, s)) continue;
    const outputs: NodeOutputs = (nodes[node] = {});
    for (const name of (await readdir(nodeDir)).sort()) {
      if (isHidden(name) || !name.endsWith('.txt')) continue;
      const stem = name.slice(0, -4);
      if (!isStem(stem)) throw new SnapshotError(nodeDir, `${quoted(name)} ${NOT_A_STEM}`);
      if (++count > MAX_OUTPUTS)
        throw new SnapshotError(nodesDir, `more than ${MAX_OUTPUTS} node outputs, not read`);
      const file = join(nodeDir, name);
      const f = entryAt(file);
      if (f?.isFile() && f.size > LIMITS.output) {
        const error = `${shown(file)}: over ${sizeText(LIMITS.output)}, not read`;
        tooBig.push({ node, command: stem, exitCode: null, error });
        continue;
      }
      if (f) checkFile(file, f, LIMITS.output);
      const text = readText(file, LIMITS.output);
      if (text === undefined) throw new SnapshotError(file, 'removed while the snapshot was read');
      outputs[stem] = text;
    }
  }
  return { nodes, tooBig };
}

/** Where a kept archive entry sits in a snapshot, and so its cap; other entries are skipped. */
function archiveCap(path: string): number | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (name === 'objects.json') return LIMITS.objects;
  if (name === 'meta.json') return LIMITS.meta;
  return isNodeOutput(path) ? LIMITS.output : undefined;
}

/** nodes/<node>/<stem>.txt, anywhere in an archive. */
const isNodeOutput = (path: string) => /(?:^|\/)nodes\/[^/]+\/[^/]+\.txt$/.test(path);

/** The archive file the person named (a link they made is theirs), if a regular file; its size. */
function openArchive(file: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SnapshotError(
      file,
      code === 'ENOENT' ? 'no such snapshot archive' : `cannot read (${(e as Error).message})`,
    );
  }
  const s = fstatSync(fd);
  if (!s.isFile() || s.size > MAX_EXPANDED) {
    closeSync(fd);
    throw new SnapshotError(
      file,
      s.isFile()
        ? `over ${sizeText(MAX_EXPANDED)}, not read`
        : `${kindOf(s)}; a snapshot archive is a regular file`,
    );
  }
  return { fd, size: s.size };
}

/** The archive's files, the tree under the (shallowest) objects.json read as a directory. */
async function readArchive(file: string): Promise<Facts> {
  let files: Map<string, Buffer>;
  // a node output over its cap is that command not read, not the whole archive
  const tooBig = new Map<string, number>();
  const outputOnly = (path: string, cap: number) =>
    cap === LIMITS.output && isNodeOutput(path) && tooBig.set(path, cap) !== undefined;
  try {
    const { fd, size } = openArchive(file);
    const input = createReadStream('', { fd });
    // a small archive whose files are a hundred times its size is a bomb, not a snapshot
    const bytes = keptBound(size);
    const said = `${sizeText(bytes)}, over ${MAX_RATIO} times the archive's size`;
    const maxKept = { bytes, said };
    files = await untarGz(input, file, { keep: archiveCap, tooBig: outputOnly, maxKept });
  } catch (e) {
    if (e instanceof ArchiveError) throw new SnapshotError(file, e.reason);
    throw e;
  }
  const objectsPath = [...files.keys()]
    .filter((p) => p === 'objects.json' || p.endsWith('/objects.json'))
    .sort((a, b) => a.split('/').length - b.split('/').length)[0];
  if (!objectsPath) throw new SnapshotError(`${file}: objects.json`, OBJECTS_MISSING);
  const root = objectsPath.slice(0, -'objects.json'.length);
  const where = (p: string) => `${file}: ${shown(p)}`;
  const objects = parseObjects(where(objectsPath), files.get(objectsPath)!);
  const metaBytes = files.get(`${root}meta.json`);
  const meta = metaBytes ? parseMeta(where(`${root}meta.json`), inputText(metaBytes)) : {};
  const unread = [...tooBig].flatMap(([path, cap]): NodeError[] => {
    const m = /^([^/]+)\/([^/]+)\.txt$/.exec(path.slice(`${root}nodes/`.length));
    if (!path.startsWith(`${root}nodes/`) || !m || !isNodeName(m[1]!) || !isStem(m[2]!)) return [];
    const error = `${where(path)}: over ${sizeText(cap)}, not read`;
    return [{ node: m[1]!, command: m[2]!, exitCode: null, error }];
  });
  const nodes = archiveNodes(files, `${root}nodes/`, where);
  return { objects, nodes, meta: withUnread(meta, unread) };
}

/** nodes/<node>/<stem>.txt of an archive, as text. */
function archiveNodes(
  files: Map<string, Buffer>,
  prefix: string,
  where: (p: string) => string,
): Facts['nodes'] {
  const nodes = nodeMap();
  for (const [path, data] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const m = path.startsWith(prefix)
      ? /^([^/]+)\/([^/]+)\.txt$/.exec(path.slice(prefix.length))
      : null;
    const [node, stem] = [m?.[1] ?? '', m?.[2] ?? ''];
    if (!m || isHidden(node) || isHidden(stem)) continue;
    if (!isNodeName(node))
      throw new SnapshotError(where(prefix.slice(0, -1)), `${quoted(node)} ${NOT_A_NODE}`);
    if (!isStem(stem))
      throw new SnapshotError(where(`${prefix}${node}`), `${quoted(`${stem}.txt`)} ${NOT_A_STEM}`);
    (nodes[node] ??= {})[stem] = inputText(data);
  }
  return nodes;
}

/** JSON.parse's complaint on one line: it quotes the text around the error, newlines and all. */
const notJson = (e: unknown) => `not valid JSON: ${(e as Error).message.replace(/\s+/g, ' ')}`;

function parseMeta(file: string, text: string): SnapshotMeta {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new SnapshotError(file, notJson(e));
  }
  if (!isObject(parsed)) throw new SnapshotError(file, 'expected a JSON object');
  return typedMeta(parsed);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Lists nested no deeper than this: flattening them recurses. */
const MAX_LIST_DEPTH = 16;

/** Every item an object, in Lists nested no deeper than MAX_LIST_DEPTH: what flattening takes. */
function objectsOnly(items: unknown[], depth = 0): boolean {
  return (
    depth < MAX_LIST_DEPTH &&
    items.every(
      (o) => isObject(o) && (!Array.isArray(o['items']) || objectsOnly(o['items'], depth + 1)),
    )
  );
}

function parseObjects(file: string, bytes: Buffer): KubeObject[] {
  // UTF-16 (a byte order mark said so) is counted as UTF-8; UTF-8 in place
  const b = inputBytes(bytes).bytes;
  const utf8 =
    typeof b === 'string' ? Buffer.from(b) : Buffer.from(b.buffer, b.byteOffset, b.length);
  // counted before it is parsed (the heap it takes grows with its values, not its bytes); a value
  // takes a byte at least, so a text no longer than the bound is within it
  if (utf8.length > MAX_JSON_VALUES && jsonValues(utf8) > MAX_JSON_VALUES)
    throw new SnapshotError(
      file,
      `more than ${MAX_JSON_VALUES.toLocaleString('en')} JSON values (a 5,000-node snapshot holds ~3 million), not read`,
    );
  // a text too short to hold such an object is not scanned
  if (utf8.length > 4 * MAX_OBJECT_MEMBERS && objectWiderThan(utf8))
    throw new SnapshotError(
      file,
      `an object with more than ${MAX_OBJECT_MEMBERS.toLocaleString('en')} fields (the API server stores none over 3 MiB), not read`,
    );
  const text = inputText(bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const line = jsonErrorLine(text);
    throw new SnapshotError(line ? `${file}:${line}` : file, notJson(e));
  }
  // Lists (kubectl get -o json) are flattened: Facts hold one object per item, kind filled in
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (!objectsOnly(items))
    throw new SnapshotError(file, 'expected a Kubernetes List, an object or an array of objects');
  return flattenObjects(items as KubeObject[]);
}

/** Refuses a node or stem that is not a name kdebug writes: a Node "../../x" from a hostile API
 * server must not become a path outside the snapshot. Keys only: no lazy output is read. */
function checkNames(target: string, facts: Facts): void {
  for (const node of Object.keys(facts.nodes)) {
    const bad = (what: string) => new SnapshotError(target, `${what}; nothing written`);
    if (!isNodeName(node))
      throw bad(`node ${quoted(node)} is not a Kubernetes node name (a DNS-1123 subdomain)`);
    for (const stem of Object.keys(facts.nodes[node]!))
      if (!isStem(stem))
        throw bad(
          `output ${quoted(stem)} of node ${node} is not a node command's file name (letters, digits and ._:-)`,
        );
  }
}

/** The files of a snapshot, as paths under its root; each node output read as it is written. */
function* snapshotFiles(facts: Facts): Generator<ArchiveEntry> {
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: facts.objects,
  };
  yield { path: 'objects.json', data: Buffer.from(JSON.stringify(list, null, 2) + '\n') };
  yield { path: 'meta.json', data: Buffer.from(JSON.stringify(facts.meta, null, 2) + '\n') };
  for (const [node, outputs] of Object.entries(facts.nodes))
    for (const stem of Object.keys(outputs))
      yield { path: `nodes/${node}/${stem}.txt`, data: Buffer.from(outputs[stem]!) };
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

/** `path` under `tmp`, its directory made; refused if it would resolve outside (a second guard
 * behind checkNames). */
async function inside(target: string, tmp: string, path: string): Promise<string> {
  const file = resolve(tmp, path);
  if (!file.startsWith(resolve(tmp) + sep))
    throw new SnapshotError(target, `${quoted(path)} is outside the snapshot; nothing written`);
  await mkdir(dirname(file), { recursive: true });
  return file;
}

/** Writes Facts as a snapshot directory that readSnapshot gives back unchanged. */
export async function writeSnapshot(
  dir: string,
  facts: Facts,
  o: WriteOptions = {},
): Promise<void> {
  checkNames(dir, facts);
  await atomically(
    dir,
    async (tmp, go) => {
      for (const f of snapshotFiles(facts)) {
        go();
        await writeFile(await inside(dir, tmp, f.path), f.data);
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
  checkNames(file, facts);
  const root = basename(file).replace(/\.(tar\.gz|tgz)$/, '') || 'snapshot';
  const entries = [...snapshotFiles(facts)].map((f) => ({ ...f, path: `${root}/${f.path}` }));
  await atomically(file, (tmp) => writeFile(tmp, tarGz(entries)), o);
}
