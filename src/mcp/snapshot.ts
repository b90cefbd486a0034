// The snapshot_save tool: `kdebug snapshot save` itself, always redacted, writing only under the
// directory the person gave `kdebug mcp --snapshot-dir` (a path that leaves it, by .. or by a
// symbolic link, is refused).
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { NodeAccessFlags } from '../cluster/nodes/flags.js';
import { UsageError } from '../commands/common/io.js';
import { snapshotSaveCommand } from '../commands/snapshot.js';
import type { inputs, Zod } from './inputs.js';
import { runCommand, type Extra } from './run.js';
import type { ServerOptions } from './tools.js';

export const snapshotInput = (z: Zod, { namespace, access }: ReturnType<typeof inputs>) => ({
  dir: z
    .string()
    .min(1)
    .optional()
    .describe("the snapshot directory to create, relative to the server's --snapshot-dir"),
  archive: z
    .string()
    .min(1)
    .optional()
    .describe('also (or instead of dir) one .tar.gz file, relative to --snapshot-dir'),
  service: z.string().min(1).optional().describe('the Service to capture'),
  all: z.boolean().optional().describe('every Service in the namespace'),
  'all-namespaces': z.boolean().optional().describe('with all: every Service in the cluster'),
  namespace,
  ...access,
});

type Input = {
  dir?: string;
  archive?: string;
  service?: string;
  all?: boolean;
  'all-namespaces'?: boolean;
  namespace?: string;
};

/** `path` with its deepest existing part resolved as the file system does (links followed). */
async function existing(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const up = dirname(path);
    return up === path ? path : resolve(await existing(up), relative(up, path));
  }
}

/** `path` under the allowed directory, or a refusal naming it. */
async function allowed(root: string, path: string, flag: string): Promise<string> {
  const full = await existing(resolve(root, path));
  const rel = relative(root, full);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new UsageError(
      `${flag} ${path}: not inside the directory this server may write to (${root})`,
    );
  return full;
}

export async function saveSnapshot(
  i: Input,
  s: ServerOptions,
  access: NodeAccessFlags,
  extra: Extra,
): Promise<CallToolResult> {
  if (s.snapshotDir === undefined)
    throw new UsageError(
      'this server saves no snapshots: start it with kdebug mcp --snapshot-dir DIR to allow them under DIR',
    );
  if (i.dir === undefined && i.archive === undefined)
    throw new UsageError("give dir, archive or both (relative to the server's --snapshot-dir)");
  const dir = i.dir === undefined ? undefined : await allowed(s.snapshotDir, i.dir, 'dir');
  const archive =
    i.archive === undefined ? undefined : await allowed(s.snapshotDir, i.archive, 'archive');
  const o = {
    ...access,
    service: i.service,
    all: i.all,
    allNamespaces: i['all-namespaces'],
    archive,
    redact: true, // never --no-redact: a snapshot from here may end up anywhere
  };
  const g = {
    ...s.g,
    namespace: i.namespace ?? s.g.namespace,
    output: 'text' as const,
    color: false,
  };
  const ran = await runCommand(extra, 'snapshot save', () => snapshotSaveCommand(dir, o, g));
  const lost = ran.lines.filter(
    (l) => l.startsWith('lost: ') || l.startsWith('the snapshot is partial'),
  );
  return {
    content: [{ type: 'text', text: [ran.out.trim(), ...lost].join('\n') }],
    ...(ran.code === 0 ? {} : { isError: true }),
  };
}
