// Snapshot directories: Facts on disk. `objects.json` is what `kubectl get ... -o json` prints
// (a List, or a single object, or an array), `meta.json` is optional, and
// `nodes/<node>/<command>.txt` holds the raw stdout of each node command.
import { readFileSync } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

export async function readSnapshot(dir: string): Promise<Facts> {
  if (!(await isDir(dir))) throw new SnapshotError(dir, 'no such snapshot directory');
  const objectsFile = join(dir, 'objects.json');
  let text: string;
  try {
    text = readText(objectsFile);
  } catch {
    throw new SnapshotError(
      objectsFile,
      'missing: a snapshot needs at least objects.json (kubectl get svc,endpointslices,pods,nodes,cm -A -o json)',
    );
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

/** Writes Facts as a snapshot directory that readSnapshot gives back unchanged. */
export async function writeSnapshot(dir: string, facts: Facts): Promise<void> {
  await mkdir(dir, { recursive: true });
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: facts.objects,
  };
  await writeFile(join(dir, 'objects.json'), JSON.stringify(list, null, 2) + '\n');
  await writeFile(join(dir, 'meta.json'), JSON.stringify(facts.meta, null, 2) + '\n');
  for (const [node, outputs] of Object.entries(facts.nodes)) {
    await mkdir(join(dir, 'nodes', node), { recursive: true });
    for (const [stem, stdout] of Object.entries(outputs)) {
      await writeFile(join(dir, 'nodes', node, `${stem}.txt`), stdout);
    }
  }
}
