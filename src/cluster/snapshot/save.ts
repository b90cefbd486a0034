// `kdebug snapshot save DIR`: collect Facts from the live cluster and write them as a snapshot
// directory that `--snapshot DIR` replays. Returns what was written; cli.ts prints it.
import type { Analysis } from '../../core/nodes/analysis.js';
import { readdir, stat } from 'node:fs/promises';
import type { Facts, SnapshotMeta } from '../../core/model.js';
import type { NodeAccess } from '../../core/nodes/access.js';
import { nodeErrorsOf, type NodeErrorGroup } from '../../core/nodes/errors.js';
import { notRead, readErrorsOf, type NotRead } from '../../core/facts/not-read.js';
import { redactFacts, type Redaction } from '../../core/redact/redact.js';
import {
  collect,
  collectAll,
  type CollectOptions,
  type CollectProgress,
  type ReadError,
  diagnosisCommands,
  nodeBasics,
} from '../collect.js';
import { KubeCluster, type KubeClusterOptions } from '../kube-cluster.js';
import { isArchiveName, writeSnapshot, writeSnapshotArchive, type WriteOptions } from './read.js';

/** Bad input to `snapshot save` (exit code 2, like every "could not do its job"). */
export class SnapshotSaveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotSaveError';
  }
}

export interface SnapshotSaveOptions extends KubeClusterOptions, WriteOptions {
  /** A directory to write, and/or... */
  dir?: string;
  /** ...one .tar.gz file (--archive). */
  archive?: string;
  /** -n; default: the context's namespace. */
  namespace?: string;
  /** --service NAME */
  service?: string;
  /** --all: every Service in the namespace... */
  all?: boolean;
  /** ...or, with -A, in the cluster. */
  allNamespaces?: boolean;
  kdebugVersion?: string;
  /** What to run on each node; `"diagnosis"`: what `kdebug svc` runs for --service, the basics for --all. */
  nodeCommands?: CollectOptions['nodeCommands'] | 'diagnosis';
  /** Take secrets out before writing (core/redact/redact.ts); default true. */
  redact?: boolean;
  onProgress?: (p: CollectProgress) => void;
}

export interface SnapshotSaveResult {
  /** What was written: the directory and/or the archive. */
  written: string[];
  objects: number;
  nodes: number;
  meta: SnapshotMeta;
  readErrors: ReadError[];
  /** The node commands that failed, nodes that failed the same way together. */
  nodeErrors: readonly NodeErrorGroup[];
  /** How each node was reached. */
  nodeAccess: NodeAccess[];
  /** What was taken out; undefined when not redacted. */
  redaction?: Redaction;
  /** The context read, as the kubeconfig names it (meta.json holds its hash when redacted). */
  context?: string;
  /** What the capture began to read and lost (recorded in meta.json too): the snapshot is partial. */
  notRead: NotRead[];
}

/** An archive is a new file named .tar.gz or .tgz (the name is how --snapshot knows it). */
async function checkArchive(file: string): Promise<void> {
  if (!isArchiveName(file))
    throw new SnapshotSaveError(`${file}: an archive's name ends in .tar.gz or .tgz`);
  if (
    await stat(file).then(
      () => true,
      () => false,
    )
  )
    throw new SnapshotSaveError(`${file} exists; snapshot save writes a new archive`);
}

/** A snapshot goes into a new or empty directory: stale node files from another capture would be read back. */
async function checkTarget(dir: string): Promise<void> {
  let s;
  try {
    s = await stat(dir);
  } catch {
    return;
  }
  if (!s.isDirectory()) throw new SnapshotSaveError(`${dir} exists and is not a directory`);
  if ((await readdir(dir)).length > 0)
    throw new SnapshotSaveError(
      `${dir} is not empty; snapshot save writes into a new or empty directory`,
    );
}

export async function saveSnapshot(o: SnapshotSaveOptions): Promise<SnapshotSaveResult> {
  if (o.service && o.all) throw new SnapshotSaveError('choose one: --service NAME or --all');
  if (!o.service && !o.all)
    throw new SnapshotSaveError('say what to capture: --service NAME, or --all for every Service');
  if (o.allNamespaces && !o.all) throw new SnapshotSaveError('-A/--all-namespaces goes with --all');
  if (o.allNamespaces && o.namespace)
    throw new SnapshotSaveError('choose one: -n NAMESPACE or -A/--all-namespaces');
  if (!o.dir && !o.archive)
    throw new SnapshotSaveError('say where to write: a directory, --archive FILE.tar.gz, or both');
  if (o.dir) await checkTarget(o.dir);
  if (o.archive) await checkArchive(o.archive);
  const cluster = await KubeCluster.connect(o);
  try {
    const namespace = o.namespace ?? cluster.defaultNamespace;
    const target = o.service ? { namespace, service: o.service } : undefined;
    const options = {
      onProgress: o.onProgress,
      nodeCommands:
        o.nodeCommands === 'diagnosis'
          ? target
            ? (f: Facts, a: Analysis) => diagnosisCommands(f, target, false, a)
            : (f: Facts, a: Analysis) => nodeBasics(f, { view: a.view })
          : o.nodeCommands,
      meta: o.kdebugVersion ? { kdebugVersion: o.kdebugVersion } : {},
    };
    const facts = target
      ? await collect(cluster, target, options)
      : await collectAll(cluster, { namespace: o.allNamespaces ? undefined : namespace }, options);
    const access = cluster.nodeAccess();
    if (access.length > 0) facts.meta['nodeAccess'] = access;
    const redacted = o.redact === false ? undefined : redactFacts(facts);
    const written = redacted?.facts ?? {
      ...facts,
      meta: { ...facts.meta, redaction: { redacted: false } },
    };
    if (o.dir) await writeSnapshot(o.dir, written, o);
    if (o.archive) await writeSnapshotArchive(o.archive, written, o);
    const errors = nodeErrorsOf(facts);
    return {
      written: [o.dir, o.archive].filter((x): x is string => x !== undefined),
      objects: facts.objects.length,
      nodes: Object.keys(facts.nodes).length,
      meta: written.meta,
      readErrors: readErrorsOf(facts),
      nodeErrors: errors.groups,
      nodeAccess: access,
      redaction: redacted?.redaction,
      context: facts.meta.context,
      notRead: notRead(facts, errors),
    };
  } finally {
    await cluster.close();
  }
}
