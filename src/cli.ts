// The composition root: flags, where the facts come from, which presentation. The only place that
// reads argv and the environment, writes to stdout/stderr, or sets the exit code.
import { Command, CommanderError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeDump, recordedNodes } from './core/facts.js';
import { IptablesParseError, parseIptables, type Ruleset } from './core/iptables.js';
import { clusterView, servicePortName } from './core/kube.js';
import type { Facts } from './core/model.js';
import { buildSearchIndex } from './core/search.js';
import { buildServiceTrees } from './core/service-tree.js';
import { SnapshotError, readSnapshot } from './cluster/snapshot.js';
import { KubeApiError } from './cluster/kube-errors.js';
import { rulesJson, rulesText, searchJson, searchText, type RulesSource } from './output/rules.js';

declare const KDEBUG_VERSION: string;
const VERSION = typeof KDEBUG_VERSION === 'string' ? KDEBUG_VERSION : 'dev';

/** Exit codes: 0 healthy, 1 a problem was found, 2 kdebug could not do its job. */
export const EXIT = { ok: 0, problem: 1, failed: 2 } as const;

/** Bad input or no access: the message says which; exit 2, no stack trace. */
export class UsageError extends Error {}

type Format = 'tui' | 'text' | 'json';

interface GlobalOptions {
  namespace?: string;
  context?: string;
  kubeconfig?: string;
  output?: Format;
  color: boolean;
}

/** The bundled demo snapshot, found next to the installed package. */
export const DEMO_SNAPSHOT = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  '..',
  'snapshots',
  'nginx-svc',
);

function format(opts: GlobalOptions): Format {
  return opts.output ?? (process.stdout.isTTY ? 'tui' : 'text');
}

function write(text: string): void {
  process.stdout.write(text);
}

async function readInput(path: string): Promise<Buffer> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  try {
    return await readFile(path);
  } catch (e) {
    throw new UsageError(
      `${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
}

/** The node of a snapshot to read: the one asked for, or the only one recorded. */
function pickNode(facts: Facts, dir: string, node: string | undefined): string {
  const nodes = recordedNodes(facts).filter((n) => nodeDump(facts, n));
  if (node !== undefined) {
    if (!nodeDump(facts, node)) {
      throw new UsageError(
        `${dir}: no rules recorded for node "${node}"${nodes.length ? ` (recorded: ${nodes.join(', ')})` : ''}`,
      );
    }
    return node;
  }
  if (nodes.length === 1) return nodes[0]!;
  throw new UsageError(
    nodes.length === 0
      ? `${dir}: no node rules recorded (nodes/<node>/iptables-save.txt)`
      : `${dir}: pick a node with --node (recorded: ${nodes.join(', ')})`,
  );
}

/** Service port names from a snapshot's objects: they name trees in dumps without comments. */
function servicePortsOf(facts: Facts) {
  return clusterView(facts.objects).services.flatMap((s) =>
    s.ports.map((p) => ({ name: servicePortName(s, p), protocol: p.protocol })),
  );
}

interface RulesOptions {
  file?: string;
  snapshot?: string;
  node?: string;
  table?: string;
  search?: string;
}

async function loadRules(
  o: RulesOptions,
): Promise<{ rs: Ruleset; source: RulesSource; facts?: Facts }> {
  if (o.file !== undefined && o.snapshot !== undefined)
    throw new UsageError('give either --file or --snapshot, not both');
  if (o.file !== undefined) {
    const file = o.file === '-' ? '<stdin>' : o.file;
    return {
      rs: parseIptables(await readInput(o.file), { file, table: o.table }),
      source: { label: `file ${file}` },
    };
  }
  if (o.snapshot !== undefined) {
    const facts = await readSnapshot(o.snapshot);
    const node = pickNode(facts, o.snapshot, o.node);
    const dump = nodeDump(facts, node)!;
    const rs = parseIptables(dump.text, { file: join(o.snapshot, dump.source), table: o.table });
    return { rs, source: { label: `node ${node}`, node }, facts };
  }
  throw new UsageError(
    'give the rules to read: --file PATH (or - for stdin), or --snapshot DIR --node NODE',
  );
}

async function rulesCommand(o: RulesOptions, g: GlobalOptions): Promise<number> {
  const { rs, source, facts } = await loadRules(o);
  const trees = buildServiceTrees(rs, { servicePorts: facts ? servicePortsOf(facts) : undefined });
  const json = format(g) === 'json';
  if (o.search !== undefined) {
    const hits = buildSearchIndex(rs, trees).search(o.search);
    write(json ? searchJson(o.search, hits) : searchText(o.search, hits));
  } else {
    write(json ? rulesJson(rs, trees, source) : rulesText(rs, trees, source));
  }
  return EXIT.ok;
}

async function demoCommand(g: GlobalOptions): Promise<number> {
  const facts = await readSnapshot(DEMO_SNAPSHOT);
  for (const node of recordedNodes(facts).filter((n) => nodeDump(facts, n))) {
    await rulesCommand({ snapshot: DEMO_SNAPSHOT, node }, g);
  }
  return EXIT.ok;
}

interface SnapshotSaveFlags {
  service?: string;
  all?: boolean;
  allNamespaces?: boolean;
}

async function snapshotSaveCommand(
  dir: string,
  o: SnapshotSaveFlags,
  g: GlobalOptions,
): Promise<number> {
  // client-node and the live-cluster code load only here, never for offline commands
  const { saveSnapshot, SnapshotSaveError } = await import('./cluster/snapshot-save.js');
  try {
    const r = await saveSnapshot({
      dir,
      namespace: g.namespace,
      service: o.service,
      all: o.all,
      allNamespaces: o.allNamespaces,
      context: g.context,
      kubeconfig: g.kubeconfig,
      kdebugVersion: VERSION,
    });
    for (const e of r.readErrors)
      process.stderr.write(`kdebug: warning: could not read ${e.what}: ${e.error}\n`);
    const nodes = r.nodes ? ` and the output of commands on ${r.nodes} nodes` : '';
    write(`saved ${r.objects} objects${nodes} from context ${r.meta.context} to ${dir}\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof SnapshotSaveError) throw new UsageError(e.message);
    throw e;
  }
}

export function buildProgram(run: (code: Promise<number>) => void): Command {
  const program = new Command('kdebug')
    .description(
      "Why can't I reach my Service? kube-proxy's rules read back, checked and explained.",
    )
    .version(VERSION)
    .option('-n, --namespace <ns>', 'namespace of the Service (default: the context namespace)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .addOption(
      new Option('-o, --output <format>', 'tui on a terminal, else text').choices([
        'tui',
        'text',
        'json',
      ]),
    )
    .option('--no-color', 'no colours (NO_COLOR is honoured too)')
    .showHelpAfterError()
    .exitOverride();
  const g = () => program.opts<GlobalOptions>();

  program
    .command('rules')
    .description("the Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees of a node's rules")
    .option('--file <path>', 'iptables-save or iptables -S output ("-" for stdin)')
    .option('--snapshot <dir>', 'a recorded snapshot directory')
    .option('--node <node>', 'the node whose rules to read (from the snapshot)')
    .addOption(
      new Option('--table <table>', 'the table of iptables -S output without *table lines').choices(
        ['nat', 'filter', 'mangle', 'raw', 'security'],
      ),
    )
    .option('--search <query>', 'fuzzy search chains, comments, IPs, ports and Service names')
    .action((o: RulesOptions) => run(rulesCommand(o, g())));

  program
    .command('demo')
    .description('kdebug on the bundled demo snapshot (the nginx-svc cluster), no cluster needed')
    .action(() => run(demoCommand(g())));

  program
    .command('snapshot')
    .description('capture cluster facts into a directory that --snapshot replays')
    .command('save <dir>')
    .description('read a Service (or every Service) from the cluster and save it as a snapshot')
    .option('--service <name>', 'the Service to capture')
    .option('--all', 'every Service in the namespace (-n, default: the context namespace)')
    .option('-A, --all-namespaces', 'with --all: every Service in the cluster')
    .action((dir: string, o: SnapshotSaveFlags) => run(snapshotSaveCommand(dir, o, g())));

  return program;
}

/** Turns any failure into a one-line message and exit 2; a stack trace only with KDEBUG_DEBUG. */
function fail(e: unknown): number {
  if (e instanceof IptablesParseError) {
    process.stderr.write(`${e.message}\n`); // FILE:LINE: message, then the line
  } else if (e instanceof SnapshotError || e instanceof UsageError || e instanceof KubeApiError) {
    process.stderr.write(`kdebug: ${e.message}\n`);
  } else {
    process.stderr.write(`kdebug: internal error: ${(e as Error)?.message ?? String(e)}\n`);
    if (process.env['KDEBUG_DEBUG']) process.stderr.write(`${(e as Error)?.stack}\n`);
  }
  return EXIT.failed;
}

export async function main(argv: string[]): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = buildProgram((p) => (pending = p));
  try {
    await program.parseAsync(argv);
    return pending ? await pending : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.failed;
    return fail(e);
  }
}

if (process.env['KDEBUG_NO_MAIN'] === undefined) {
  process.exitCode = await main(process.argv);
}
