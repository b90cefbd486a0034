// `kdebug mcp`: kdebug's commands as the tools of a Model Context Protocol server on stdio, for
// an assistant or a program. Read-only unless started with --allow-debug-pods (debug Pods) or
// --snapshot-dir (snapshots, only there); the SDK loads only when it starts (mcp/server.ts).
import { resolve } from 'node:path';
import { realpath, stat } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { DEFAULT_DEBUG_IMAGE } from '../cluster/debug-image.js';
import type { NodeAccessFlags } from '../cluster/nodes/flags.js';
import { serve } from '../mcp/server.js';
import { withExamples, type Define } from './common/flags.js';
import { UsageError, type GlobalOptions } from './common/io.js';

export interface McpFlags extends NodeAccessFlags {
  allowDebugPods?: boolean;
  snapshotDir?: string;
}

export async function mcpServe(o: McpFlags, g: GlobalOptions): Promise<number> {
  if (g.output !== undefined)
    throw new UsageError('mcp speaks JSON-RPC on stdio: -o does not apply');
  if (o.via === 'pod' && !o.allowDebugPods)
    throw new UsageError('--via pod creates debug Pods: give --allow-debug-pods too');
  let snapshotDir: string | undefined;
  if (o.snapshotDir !== undefined) {
    const dir = resolve(o.snapshotDir);
    const s = await stat(dir).catch(() => undefined);
    if (!s?.isDirectory()) throw new UsageError(`--snapshot-dir ${o.snapshotDir}: not a directory`);
    snapshotDir = await realpath(dir);
  }
  const { allowDebugPods, snapshotDir: _given, ...nodeAccess } = o;
  return serve({ g, nodeAccess, allowDebugPods: allowDebugPods === true, snapshotDir });
}

/** The `mcp` command, on the program that owns the global flags. */
export function mcpCommand(
  program: Command,
  run: (code: Promise<number>) => void,
  g: () => GlobalOptions,
): Command {
  const c = program
    .command('mcp')
    .description(
      "an MCP server on stdio: kdebug's commands as tools for an assistant (read-only by default)",
    )
    .addOption(
      new Option(
        '--via <how>',
        'how tools reach the nodes of the live cluster (a call may narrow it)',
      )
        .choices(['auto', 'kube-proxy', 'pod', 'ssh'])
        .default('auto'),
    )
    .option(
      '--allow-debug-pods',
      'let tools create privileged debug Pods on nodes they cannot read otherwise (never without this)',
    )
    .option('--image <image>', `debug Pod image (default: ${DEFAULT_DEBUG_IMAGE})`)
    .option('--debug-namespace <ns>', 'namespace for debug Pods (default: kdebug)')
    .option(
      '--node-timeout <seconds>',
      'how long a debug Pod may take to start, and each node command (default: 60)',
    )
    .option('--snapshot-dir <dir>', 'let snapshot_save write snapshots, only under this directory');
  return withExamples(c, [
    'kdebug mcp --context prod -n shop',
    'kdebug mcp --snapshot-dir ~/kdebug-snapshots --allow-debug-pods',
  ]).action((o: McpFlags) => run(mcpServe(o, g())));
}

/** `kdebug mcp`: its flags, help and action. */
export const define: Define = (parent, run, g) => void mcpCommand(parent, run, g);
