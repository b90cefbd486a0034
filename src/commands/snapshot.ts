// `kdebug snapshot save DIR`: the cluster's facts written as a directory --snapshot replays.
import { quietWhenRefused } from '../core/facts/not-read.js';
import { nodeTransport, tellNodeAccess, type SourceFlags } from '../cluster/facts-source.js';
import {
  EXIT,
  format,
  sourceContext,
  tell,
  UsageError,
  VERSION,
  write,
  type GlobalOptions,
} from './common/io.js';
import { nodeAccessOptions, type Define } from './common/flags.js';

export interface SnapshotSaveFlags extends SourceFlags {
  service?: string;
  all?: boolean;
  allNamespaces?: boolean;
  /** false with --no-redact */
  redact?: boolean;
  /** --archive FILE.tar.gz */
  archive?: string;
}

export async function snapshotSaveCommand(
  dir: string | undefined,
  o: SnapshotSaveFlags,
  g: GlobalOptions,
): Promise<number> {
  format(g, 'snapshot');
  // client-node and the live-cluster code load only here, never for offline commands
  const { saveSnapshot, SnapshotSaveError } = await import('../cluster/snapshot/save.js');
  const c = sourceContext(g);
  const transport = await nodeTransport(o, c, (t) => c.release.add(() => t.close()));
  try {
    const r = await saveSnapshot({
      transport,
      nodeCommands: 'diagnosis',
      dir,
      archive: o.archive,
      release: c.release,
      namespace: g.namespace,
      service: o.service,
      all: o.all,
      allNamespaces: o.allNamespaces,
      redact: o.redact !== false,
      context: g.context,
      kubeconfig: g.kubeconfig,
      kdebugVersion: VERSION,
    });
    const lost = new Set(r.notRead.map((n) => n.what));
    for (const e of r.readErrors)
      if (!lost.has(e.what) && !quietWhenRefused(e))
        tell(`warning: could not read ${e.what}: ${e.error}`);
    for (const n of r.notRead) tell(`lost: ${n.what}: ${n.why}`);
    tellNodeAccess(r.nodeAccess, c);
    const nodes = r.nodes ? ` and the output of commands on ${r.nodes} nodes` : '';
    write(
      `saved ${r.objects} objects${nodes} from context ${r.context ?? r.meta.context} to ${r.written.join(' and ')}\n`,
    );
    write(
      r.redaction
        ? 'redacted: kept only the fields kdebug reads; context, user and server replaced by salted hashes (listed in meta.json; --no-redact keeps everything)\n'
        : 'not redacted (--no-redact): it holds env values, annotations and ConfigMap data as the API returned them\n',
    );
    if (r.notRead.length > 0) {
      // whole on disk, partial in content: scripts must not take it for a full capture
      tell(
        `the snapshot is partial: ${r.notRead.length} ${r.notRead.length === 1 ? 'read was' : 'reads were'} lost (listed in meta.json); replaying it says so`,
      );
      return EXIT.failed;
    }
    return EXIT.ok;
  } catch (e) {
    if (e instanceof SnapshotSaveError) throw new UsageError(e.message);
    throw e;
  } finally {
    c.release.clear();
  }
}

/** `kdebug snapshot save`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  const snapshot = parent
    .command('snapshot')
    .description('capture cluster facts into a directory that --snapshot replays');
  nodeAccessOptions(
    snapshot
      .command('save [dir]')
      .description('read a Service (or every Service) from the cluster and save it as a snapshot')
      .option('--service <name>', 'the Service to capture')
      .option('--all', 'every Service in the namespace (-n, default: the context namespace)')
      .option('-A, --all-namespaces', 'with --all: every Service in the cluster')
      .option(
        '--archive <file.tar.gz>',
        'also (or instead of a directory) one file to attach; --snapshot reads it',
      )
      .option(
        '--no-redact',
        'keep every field of every object and the context, user and server names (by default only the fields kdebug reads are kept and the names hashed)',
      ),
  ).action((dir: string | undefined, o: SnapshotSaveFlags) =>
    run(snapshotSaveCommand(dir, o, g())),
  );
};
