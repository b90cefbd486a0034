// The composition root: flags, where the facts come from, which presentation. The only place that
// reads argv and the environment, writes to stdout/stderr, or sets the exit code.
import { Command, CommanderError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeDump, recordedNodes } from './core/facts.js';
import { IptablesParseError, NoRulesError, parseIptables, type Ruleset } from './core/iptables.js';
import { clusterView, servicePortName } from './core/kube.js';
import { diagnose, type Target } from './core/diagnose.js';
import { parseServiceRef } from './core/service-ref.js';
import type { Facts, Report } from './core/model.js';
import { buildSearchIndex } from './core/search.js';
import { buildServiceTrees } from './core/service-tree.js';
import { DriftInputError, isDrift, recordedNodeDrift } from './core/drift.js';
import { nodeKnobs } from './core/expected/knobs.js';
import { expectedRules, expectedSave } from './core/expected.js';
import { isIPv4 } from './core/ipv4.js';
import { nodeNetwork, tracePacket, type TraceProtocol } from './core/trace.js';
import type { KubeCluster } from './cluster/kube-cluster.js';
import type { NodeAccessFlags } from './cluster/node-flags.js';
import { DEFAULT_DEBUG_IMAGE, type DebugPodConsent } from './cluster/node-pod.js';
import { SnapshotError, readSnapshot } from './cluster/snapshot.js';
import { KubeApiError } from './cluster/kube/errors.js';
import { nodeAccessLine, rulesReadError, type NodeAccess } from './core/node-access.js';
import { escapeControls } from './core/sanitize.js';
import { reportJson } from './output/json.js';
import { rulesJson, rulesText, searchJson, searchText, type RulesSource } from './output/rules.js';
import { reportText } from './output/text.js';
import { driftJson, driftText } from './output/drift.js';
import { labelsFor, traceBlocked, traceJson, traceText } from './output/trace.js';
import { questions } from './tui/questions.js';
import { colorEnabled } from './tui/theme.js';

import type { TuiInput } from './tui/App.js';

declare const KDEBUG_VERSION: string;
declare const KDEBUG_COMMIT: string;
const VERSION = typeof KDEBUG_VERSION === 'string' ? KDEBUG_VERSION : 'dev';
/** The git commit the bundle was built from. */
const COMMIT = typeof KDEBUG_COMMIT === 'string' ? KDEBUG_COMMIT : 'unknown';

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

/** What a command can print, and what it says when asked for something else. */
const OUTPUTS: Record<string, { formats: Format[]; refusal?: string }> = {
  svc: { formats: ['tui', 'text', 'json'] },
  rules: { formats: ['tui', 'text', 'json'] },
  drift: { formats: ['text', 'json'] },
  trace: { formats: ['text', 'json'] },
  version: { formats: ['text', 'json'] },
  expect: { formats: ['text'], refusal: 'expect prints iptables-save text; use -o text' },
  snapshot: { formats: ['text'], refusal: 'snapshot save writes a directory; use -o text' },
  cleanup: { formats: ['text'], refusal: 'cleanup prints what it deleted as text; use -o text' },
  completion: { formats: ['text'], refusal: 'completion prints a shell script; use -o text' },
};

/** The presentation: -o when the command has it (else a refusal), the TUI on a terminal (stdin
 * and stdout: Ink reads keys from stdin), text otherwise. */
function format(opts: GlobalOptions, command = 'svc'): Format {
  const can = OUTPUTS[command] ?? OUTPUTS['svc']!;
  const terminal = process.stdout.isTTY === true && process.stdin.isTTY === true;
  if (opts.output !== undefined && !can.formats.includes(opts.output))
    throw new UsageError(
      can.refusal ??
        `${command} has no ${opts.output} output; use ${can.formats.map((f) => `-o ${f}`).join(' or ')}`,
    );
  if (opts.output === 'tui' && !terminal)
    throw new UsageError(
      `-o tui needs a terminal on stdin and stdout (${!process.stdin.isTTY && !process.stdout.isTTY ? 'neither is one' : `${process.stdin.isTTY ? 'stdout' : 'stdin'} is not one`}): use -o text or -o json`,
    );
  return opts.output ?? (terminal && can.formats.includes('tui') ? 'tui' : 'text');
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
    const code = (e as NodeJS.ErrnoException).code;
    const why = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' };
    throw new UsageError(`${path}: ${why[code as keyof typeof why] ?? (e as Error).message}`);
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

interface RulesOptions extends LiveOptions {
  file?: string;
  snapshot?: string;
  node?: string;
  table?: string;
  search?: string;
  ssh?: string;
}

/** `rules --ssh`: a host's rules read straight over SSH, no cluster; the SSH code loads only here. */
async function sshRulesText(
  o: RulesOptions,
): Promise<{ text: string; label: string; file: string }> {
  const { readRulesOverSsh, sshOptionsFromFlags, SshError } =
    await import('./cluster/ssh/rules.js');
  try {
    const r = await readRulesOverSsh(o.ssh!, sshOptionsFromFlags(o, process.env));
    for (const note of r.notes) process.stderr.write(`kdebug: ${note}\n`);
    return { text: r.text, label: r.via, file: `${r.via}: ${r.stem}` };
  } catch (e) {
    if (e instanceof SshError) throw new UsageError(e.message);
    throw e;
  }
}

/** Where rules/expect/drift/trace read from: a snapshot, or (without --snapshot) the cluster. */
interface FactsOptions extends LiveOptions {
  snapshot?: string;
  node?: string;
  allNodes?: boolean;
}

/**
 * The facts of a snapshot, or of the live cluster read now: every Service, EndpointSlice and Node,
 * kube-proxy's configuration, and with `rules` the rules of the nodes asked for (--node, or
 * --all-nodes, or the only node). `label` names the source in messages.
 */
async function readFacts(
  o: FactsOptions,
  g: GlobalOptions,
  rules: boolean,
): Promise<{ facts: Facts; label: string }> {
  if (o.snapshot !== undefined) return { facts: await readSnapshot(o.snapshot), label: o.snapshot };
  const cluster = await connectLive(g, o);
  try {
    const { collectAll, NODE_BASICS } = await import('./cluster/collect.js');
    const facts = await collectAll(
      cluster,
      {},
      {
        meta: { kdebugVersion: VERSION },
        // a node that does not exist, or several nodes and none picked: nothing to run
        nodeCommands: (f) => {
          const nodes = clusterView(f.objects).nodes.map((n) => n.name);
          const picked =
            o.node !== undefined ? nodes.includes(o.node) : o.allNodes || nodes.length === 1;
          return rules && picked ? NODE_BASICS : [];
        },
        nodes: o.node !== undefined ? [o.node] : undefined,
      },
    );
    tellNodeAccess(cluster.nodeAccess());
    const label = `context ${cluster.meta.context ?? ''}`.trim();
    if (rules) checkLiveNodes(facts, label, o);
    return { facts, label };
  } finally {
    await closeLive(cluster);
  }
}

/** A live run's node choice, said in cluster words: which nodes exist, why one was not read. */
function checkLiveNodes(facts: Facts, label: string, o: FactsOptions): void {
  const nodes = clusterView(facts.objects).nodes.map((n) => n.name);
  const list = `(nodes: ${nodes.join(', ') || 'none'})`;
  if (o.node !== undefined && !nodes.includes(o.node))
    throw new UsageError(`${label}: no node "${o.node}" ${list}`);
  if (o.node === undefined && !o.allNodes && nodes.length !== 1)
    throw new UsageError(`${label}: pick a node with --node ${list}`);
  const unread = (o.node !== undefined ? [o.node] : nodes).filter((n) => !nodeDump(facts, n));
  if (unread.length > 0 && unread.length === (o.node !== undefined ? 1 : nodes.length))
    throw new UsageError(
      `${label}: could not read the rules of ${unread
        .map((n) => `${n} (${rulesReadError(facts, n) ?? 'not reached'})`)
        .join(', ')}`,
    );
}

/** The file name a node's dump is reported under: its snapshot path, or the node's command. */
const dumpFile = (o: FactsOptions, node: string, source: string) =>
  o.snapshot !== undefined ? join(o.snapshot, source) : `${node}: ${source.split('/').pop()}`;

async function loadRules(
  o: RulesOptions,
  g: GlobalOptions,
): Promise<{ rs: Ruleset; source: RulesSource; facts?: Facts }> {
  if ([o.file, o.snapshot, o.ssh].filter((x) => x !== undefined).length > 1)
    throw new UsageError('give one of --file, --snapshot or --ssh');
  if (o.ssh !== undefined) {
    const r = await sshRulesText(o);
    return {
      rs: parseIptables(r.text, { file: r.file, table: o.table }),
      source: { label: r.label },
    };
  }
  if (o.file !== undefined) {
    const file = o.file === '-' ? '<stdin>' : o.file;
    return {
      rs: parseIptables(await readInput(o.file), { file, table: o.table }),
      source: { label: `file ${file}` },
    };
  }
  // a snapshot's node, or without one the live cluster's
  const { facts, label } = await readFacts(o, g, true);
  const node = pickNode(facts, label, o.node);
  const dump = nodeDump(facts, node)!;
  const rs = parseIptables(dump.text, { file: dumpFile(o, node, dump.source), table: o.table });
  return { rs, source: { label: `node ${node}`, node }, facts };
}

/** The TUI, imported only now: text and JSON runs never load Ink and React. */
async function interactive(input: TuiInput, g: GlobalOptions): Promise<number> {
  // Ink draws only a last frame when CI is set (read as it loads); on a terminal, draw them all
  const ci = {
    CI: process.env['CI'],
    CONTINUOUS_INTEGRATION: process.env['CONTINUOUS_INTEGRATION'],
  };
  delete process.env['CI'];
  delete process.env['CONTINUOUS_INTEGRATION'];
  const { runTui } = await import('./tui/run.js').finally(() => {
    for (const [k, v] of Object.entries(ci)) if (v !== undefined) process.env[k] = v;
  });
  const color = colorEnabled(g.color, process.env);
  const r = await runTui({ ...input, color, stdin: process.stdin, stdout: process.stdout });
  if (r.failed) return EXIT.failed;
  return r.report ? exitFor(r.report) : EXIT.ok;
}

/** `rules` in the TUI: every node of a snapshot (--node first), or the one file. */
async function rulesTui(o: RulesOptions, g: GlobalOptions): Promise<number> {
  if ([o.file, o.snapshot, o.ssh].filter((x) => x !== undefined).length > 1)
    throw new UsageError('give one of --file, --snapshot or --ssh');
  const common = { start: 'rules' as const, node: o.node, search: o.search };
  if (o.file !== undefined || o.ssh !== undefined) {
    // one dump, no objects: the screens that need the cluster say so
    const read =
      o.file !== undefined
        ? {
            label: o.file === '-' ? '<stdin>' : o.file,
            text: (await readInput(o.file)).toString('utf8'),
          }
        : await sshRulesText(o);
    // input kdebug cannot read at all is said before a screen opens, as in text mode
    const ruleset = parseIptables(read.text, { file: read.label, table: o.table });
    const rules = { label: read.label, text: read.text, table: o.table, ruleset };
    const facts: Facts = { objects: [], nodes: {}, meta: {} };
    return interactive({ ...common, facts, rules, load: async () => facts }, g);
  }
  // a snapshot, or the live cluster (read again on ctrl-r)
  const read = async () => (await readFacts(o, g, true)).facts;
  const facts = await read();
  if (o.node !== undefined && o.snapshot !== undefined) pickNode(facts, o.snapshot, o.node);
  const snapshot = o.snapshot !== undefined ? `snapshot ${o.snapshot}` : undefined;
  return interactive({ ...common, facts, load: read, snapshot }, g);
}

async function rulesCommand(o: RulesOptions, g: GlobalOptions): Promise<number> {
  if (format(g, 'rules') === 'tui') return rulesTui(o, g);
  const { rs, source, facts } = await loadRules(o, g);
  const trees = buildServiceTrees(rs, { servicePorts: facts ? servicePortsOf(facts) : undefined });
  const json = format(g, 'rules') === 'json';
  if (o.search !== undefined) {
    const hits = buildSearchIndex(rs, trees).search(o.search);
    write(json ? searchJson(o.search, hits) : searchText(o.search, hits));
  } else {
    write(json ? rulesJson(rs, trees, source) : rulesText(rs, trees, source));
  }
  return EXIT.ok;
}

interface ExpectOptions extends FactsOptions {
  table?: 'nat' | 'filter';
  randomFully: boolean;
  nfacct?: boolean;
  tcpBeLiberal?: boolean;
}

/** A node of a snapshot to compute rules for: one of its Node objects or recorded nodes. */
function pickObjectNode(facts: Facts, dir: string, node: string | undefined): string {
  const names = clusterView(facts.objects).nodes.map((n) => n.name);
  const known = [...new Set([...names, ...recordedNodes(facts)])].sort();
  if (node !== undefined && known.includes(node)) return node;
  if (node === undefined && known.length === 1) return known[0]!;
  const list = known.length ? ` (nodes: ${known.join(', ')})` : '';
  throw new UsageError(
    node === undefined
      ? `${dir}: pick a node with --node${list}`
      : `${dir}: no node "${node}"${list}`,
  );
}

async function expectCommand(o: ExpectOptions, g: GlobalOptions): Promise<number> {
  format(g, 'expect');
  const { facts, label } = await readFacts(o, g, false);
  const node = pickObjectNode(facts, label, o.node);
  const view = clusterView(facts.objects);
  const dump = nodeDump(facts, node);
  const rules = dump ? readableRules(dump.text, dump.source) : undefined;
  const knobs = nodeKnobs(node, facts.nodes[node], rules, view);
  // a flag given on the command line wins over what the node's recordings tell
  const exp = expectedRules(view, node, {
    ...knobs.options,
    ...(o.randomFully === false ? { randomFully: false } : {}),
    ...(o.nfacct !== undefined ? { nfacct: o.nfacct } : {}),
    ...(o.tcpBeLiberal !== undefined ? { conntrackTcpBeLiberal: o.tcpBeLiberal } : {}),
  });
  if (o.nfacct === undefined) exp.notes.push(...knobs.notes);
  write(expectedSave(exp, { tables: o.table ? [o.table] : undefined }));
  return EXIT.ok;
}

/** A recorded dump to read knobs from; one that does not parse just tells nothing. */
function readableRules(text: string, file: string): Ruleset | undefined {
  try {
    return parseIptables(text, { file });
  } catch {
    return undefined;
  }
}

/** drift/trace --ssh: the snapshot's objects, with one node's rules read over SSH right now. */
interface SshRulesOptions extends FactsOptions {
  ssh?: string;
}

/**
 * Replaces the rules of the node behind `o.ssh` in `facts` by what its host holds now (a kubeadm
 * node whose API server is down); returns that node: --node, or the Node whose name or address
 * is the SSH host.
 */
async function readNodeOverSsh(
  facts: Facts,
  dir: string,
  o: SshRulesOptions,
): Promise<{ node: string; via: string }> {
  const { readRulesOverSsh, sshOptionsFromFlags, SshError } =
    await import('./cluster/ssh/rules.js');
  const { parseSshDestination } = await import('./cluster/ssh/config.js');
  let host: string;
  try {
    host = parseSshDestination(o.ssh!).host;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const nodes = clusterView(facts.objects).nodes;
  const node =
    o.node ??
    nodes.find((n) => n.name === host || n.addresses.some((a) => a.address === host))?.name;
  if (node === undefined)
    throw new UsageError(
      `${dir}: which node is ${host}? give --node (nodes: ${nodes.map((n) => n.name).join(', ') || 'none'})`,
    );
  try {
    const r = await readRulesOverSsh(o.ssh!, sshOptionsFromFlags(o, process.env));
    for (const note of r.notes) process.stderr.write(`kdebug: ${note}\n`);
    const outputs = { ...facts.nodes[node] };
    for (const stem of ['iptables-save', 'iptables-nft-save', 'iptables-legacy-save'])
      delete outputs[stem];
    facts.nodes[node] = { ...outputs, [r.stem]: r.text };
    return { node, via: r.via };
  } catch (e) {
    if (e instanceof SshError) throw new UsageError(e.message);
    throw e;
  }
}

type DriftOptions = SshRulesOptions;

async function driftCommand(o: DriftOptions, g: GlobalOptions): Promise<number> {
  format(g, 'drift'); // a refused -o before anything is read
  if (o.node !== undefined && o.allNodes)
    throw new UsageError('give --node or --all-nodes, not both');
  if (o.ssh !== undefined && o.snapshot === undefined)
    throw new UsageError('--ssh takes the objects from a snapshot: give --snapshot DIR too');
  if (o.ssh !== undefined && o.allNodes)
    throw new UsageError('--ssh reads one node: give --node (or none), not --all-nodes');
  const { facts, label: dir } = await readFacts(o, g, o.ssh === undefined);
  const ssh = o.ssh !== undefined ? await readNodeOverSsh(facts, dir, o) : undefined;
  if (ssh) o.node = ssh.node;
  const recorded = recordedNodes(facts).filter((n) => nodeDump(facts, n));
  if (!o.allNodes && o.node === undefined && recorded.length > 1)
    throw new UsageError(
      `${dir}: pick a node with --node, or --all-nodes (recorded: ${recorded.join(', ')})`,
    );
  const nodes = o.allNodes ? recorded : [pickNode(facts, dir, o.node)];
  if (nodes.length === 0)
    throw new UsageError(`${dir}: no node rules recorded (nodes/<node>/iptables-save.txt)`);
  const view = clusterView(facts.objects);
  const results = nodes.map((n) => recordedNodeDrift(facts, view, n, dir));
  const from = o.snapshot !== undefined ? `snapshot ${dir}` : dir;
  const label = ssh ? `${from}, ${ssh.node}'s rules read now (${ssh.via})` : from;
  write(format(g, 'drift') === 'json' ? driftJson(label, results) : driftText(label, results));
  return results.some((r) => r.findings.some(isDrift)) ? EXIT.problem : EXIT.ok;
}

interface TraceOptions extends SshRulesOptions {
  src?: string;
  dst?: string;
  proto: TraceProtocol;
  fromHost?: boolean;
}

async function traceCommand(o: TraceOptions, g: GlobalOptions): Promise<number> {
  format(g, 'trace'); // a refused -o before anything is read
  const m = /^([^:]+)(?::(\d+))?$/.exec(o.dst ?? '');
  if (!m || !isIPv4(m[1]!)) throw new UsageError('give the destination as --dst IP:PORT (IPv4)');
  if (o.proto !== 'icmp' && m[2] === undefined)
    throw new UsageError(`--dst needs a port for ${o.proto}: IP:PORT`);
  if (o.ssh !== undefined && o.snapshot === undefined)
    throw new UsageError('--ssh takes the objects from a snapshot: give --snapshot DIR too');
  const { facts, label } = await readFacts(o, g, o.ssh === undefined);
  if (o.ssh !== undefined) o.node = (await readNodeOverSsh(facts, label, o)).node;
  const node = pickNode(facts, label, o.node);
  const dump = nodeDump(facts, node)!;
  const rs = parseIptables(dump.text, { file: dumpFile(o, node, dump.source) });
  const view = clusterView(facts.objects);
  const net = nodeNetwork(
    view.nodes.find((n) => n.name === node),
    facts.nodes[node]?.['ip-addr'],
  );
  const src = o.src ?? (o.fromHost ? view.nodes.find((n) => n.name === node)?.ips[0] : undefined);
  if (src === undefined || !isIPv4(src))
    throw new UsageError(
      o.src === undefined
        ? 'give the source: --src IP (a Pod IP, or a client outside the cluster; with --from-host it defaults to the node IP)'
        : `--src ${o.src} is not an IPv4 address`,
    );
  const packet = {
    src,
    dst: m[1]!,
    dport: m[2] ? Number(m[2]) : undefined,
    protocol: o.proto,
    fromHost: !!o.fromHost,
  };
  const result = tracePacket(rs, net, packet);
  const labels = labelsFor(view, node, packet);
  write(format(g, 'trace') === 'json' ? traceJson(result, labels) : traceText(result, labels));
  return traceBlocked(result) ? EXIT.problem : EXIT.ok;
}

interface SvcOptions extends LiveOptions {
  snapshot?: string;
  verbose?: boolean;
  /** How the text header names the snapshot (default: "snapshot DIR"). */
  label?: string;
}

/** Exit code of a diagnosis: 1 when a step failed or warned, else 0. */
function exitFor(report: Report): number {
  return report.steps.some((s) => s.status === 'fail' || s.status === 'warn')
    ? EXIT.problem
    : EXIT.ok;
}

type Progress = (p: { what: string; node?: string; state: 'start' | 'done' | 'failed' }) => void;

/** What to release when kdebug is interrupted (debug Pods above all). */
const onInterrupt = new Set<() => Promise<void>>();
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/**
 * Ctrl-C, SIGTERM and SIGHUP delete what kdebug created, then exit with 128 + the signal number.
 * A second Ctrl-C leaves at once (activeDeadlineSeconds and `kdebug cleanup` remain).
 */
function cleanUpOnSignals(): void {
  let cleaning = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT[signal] ?? 1;
    if (cleaning) {
      if (signal !== 'SIGINT') return; // the TUI re-raises SIGTERM/SIGHUP after restoring the screen
      process.stderr.write(
        'kdebug: interrupted again: leaving now (kdebug cleanup removes what is left)\n',
      );
      process.exit(code);
    }
    cleaning = true;
    if (onInterrupt.size === 0) process.exit(code);
    process.stderr.write(
      `kdebug: ${signal === 'SIGINT' ? 'interrupted' : signal}: deleting the debug Pods kdebug created\n`,
    );
    void Promise.allSettled([...onInterrupt].map((f) => f())).then((results) => {
      for (const r of results)
        if (r.status === 'rejected')
          process.stderr.write(`kdebug: ${(r.reason as Error).message}\n`);
      process.exit(code);
    });
  };
  for (const s of Object.keys(SIGNAL_EXIT)) process.on(s, handler);
}

type LiveOptions = NodeAccessFlags;

/** The node transport of --via and its flags; `created` hands it back to describe and close it. */
/**
 * The node transport of --via and its flags; `created` hands it back so a signal can close it.
 * `confirm` asks the person before a debug Pod is created (the TUI's hook: DebugPodConsent in,
 * yes or no out); without it, and without --yes, no debug Pod is created.
 */
async function nodeTransport(
  o: LiveOptions,
  created: (t: { close(): Promise<void> }) => void,
  confirm?: (q: DebugPodConsent) => Promise<boolean>,
) {
  const { nodeAccess } = await import('./cluster/node-transport.js');
  const { nodeAccessOptions, NodeFlagsError } = await import('./cluster/node-flags.js');
  try {
    return nodeAccess(nodeAccessOptions(o, process.env, confirm), created);
  } catch (e) {
    if (e instanceof NodeFlagsError) throw new UsageError(e.message);
    throw e;
  }
}

/** The live cluster of --context / --kubeconfig; client-node loads only here. */
async function connectLive(
  g: GlobalOptions,
  o: LiveOptions = {},
  confirm?: (q: DebugPodConsent) => Promise<boolean>,
): Promise<KubeCluster> {
  const { KubeCluster } = await import('./cluster/kube-cluster.js');
  const transport = await nodeTransport(o, () => undefined, confirm);
  const cluster = await KubeCluster.connect({
    kubeconfig: g.kubeconfig,
    context: g.context,
    transport,
  });
  onInterrupt.add(() => cluster.close());
  return cluster;
}

async function closeLive(cluster: KubeCluster): Promise<void> {
  onInterrupt.clear();
  await cluster.close();
}

/** What the person is asked before kdebug creates debug Pods. */
function consentLines(q: DebugPodConsent): string[] {
  return [
    `Some nodes can only be read through a privileged debug Pod: kdebug would create one on each of them, in namespace ${q.namespace} (image ${q.image}), as kubectl debug node --profile=sysadmin does.`,
    `It reads the node's rules with the node's own iptables-save and runs the probes (TCP connect, ping, a DNS lookup); it changes nothing on the node.`,
    `Each Pod is deleted when kdebug ends (also on Ctrl-C) and stops by itself after ${q.lifetimeSeconds}s. --yes skips this question.`,
  ];
}

/** How each node was reached, one line each on stderr (stdout stays the report). */

function tellNodeAccess(access: NodeAccess[]): void {
  for (const a of access) process.stderr.write(`kdebug: ${nodeAccessLine(a)}\n`);
}

/**
 * A live diagnosis's facts: the API objects for the Service, then, on every node (a bounded
 * number at once), the basics and the probes the steps read. A node command that cannot run is
 * not recorded: the steps that need it say so. A Service that does not exist gives facts without
 * it and the API's suggestions, so the report can say "did you mean".
 */
async function readLive(
  cluster: KubeCluster,
  target: Target,
  progress?: Progress,
  partial?: (facts: Facts, collecting: { nodes: boolean }) => void,
): Promise<{ facts: Facts; suggestions?: { namespace: string; name: string }[] }> {
  const { collect, diagnosisCommands } = await import('./cluster/collect.js');
  const { ServiceNotFoundError } = await import('./cluster/kube/suggestions.js');
  try {
    const facts = await collect(cluster, target, {
      onProgress: progress,
      meta: { kdebugVersion: VERSION },
      nodeCommands: (f) => {
        // the API objects are in: the steps that need only them can finish now
        partial?.(f, { nodes: true });
        return diagnosisCommands(f, target);
      },
    });
    const access = cluster.nodeAccess();
    if (access.length > 0) facts.meta['nodeAccess'] = access;
    return { facts };
  } catch (e) {
    if (!(e instanceof ServiceNotFoundError)) throw e;
    // the API's "did you mean" travels with the facts, so the TUI's diagnosis says it too
    const meta = { ...cluster.meta, suggestions: e.suggestions };
    return { facts: { objects: [], nodes: {}, meta }, suggestions: e.suggestions };
  }
}

/** The terminal's width (COLUMNS first, as shells set it); a file is not cut, only wrapped. */
function textWidth(): { width: number; truncate: boolean } {
  const tty = process.stdout.isTTY === true;
  const columns = Number(process.env['COLUMNS']) || (tty ? process.stdout.columns : 0) || 80;
  return { width: Math.max(40, columns), truncate: tty };
}

function writeReport(report: Report, g: GlobalOptions, o: SvcOptions, source?: string): number {
  if (format(g) === 'json') write(reportJson(report));
  else
    write(
      reportText(report, {
        color: colorEnabled(g.color, process.env) && process.stdout.isTTY === true,
        ...textWidth(),
        verbose: o.verbose,
        source,
      }),
    );
  return exitFor(report);
}

async function svcCommand(arg: string, o: SvcOptions, given: GlobalOptions): Promise<number> {
  const ref = parseServiceRef(arg);
  if ('error' in ref) throw new UsageError(`${ref.error}; see kdebug svc --help`);
  if (ref.namespace && given.namespace && ref.namespace !== given.namespace)
    throw new UsageError(
      `"${arg}" is in namespace ${ref.namespace}, but -n says ${given.namespace}`,
    );
  const name = ref.name;
  const g = { ...given, namespace: ref.namespace ?? given.namespace };
  if (o.snapshot !== undefined) {
    const dir = o.snapshot;
    const facts = await readSnapshot(dir);
    const target = { namespace: g.namespace ?? facts.meta.namespace ?? 'default', service: name };
    const invocation = { snapshot: dir, context: g.context };
    if (format(g) === 'tui')
      return interactive(
        {
          start: 'diag',
          target,
          facts,
          invocation,
          snapshot: o.label ?? `snapshot ${dir}`,
          load: () => readSnapshot(dir),
        },
        g,
      );
    return writeReport(diagnose(facts, target, { invocation }), g, o, o.label ?? `snapshot ${dir}`);
  }
  // in the TUI a debug Pod is created only after the person says yes there (or --yes)
  const tui = format(g) === 'tui';
  const asks = questions();
  const cluster = await connectLive(g, o, tui ? (q) => asks.ask(consentLines(q)) : undefined);
  try {
    const target = { namespace: g.namespace ?? cluster.defaultNamespace, service: name };
    if (tui) {
      // no facts yet: the TUI shows the steps completing as they arrive
      const load: TuiInput['load'] = async (progress, partial) =>
        (await readLive(cluster, target, progress, partial)).facts;
      const invocation = { context: g.context };
      const deadlines = { apiMs: 15_000, nodeMs: 1000 * (Number(o.nodeTimeout) || 60) };
      return await interactive(
        { start: 'diag', target, load, questions: asks, invocation, deadlines },
        g,
      );
    }

    const { facts, suggestions } = await readLive(cluster, target);
    tellNodeAccess(cluster.nodeAccess());
    return writeReport(
      diagnose(facts, target, { suggestions, invocation: { context: g.context } }),
      g,
      o,
    );
  } finally {
    await closeLive(cluster);
  }
}

async function demoCommand(g: GlobalOptions): Promise<number> {
  const label = 'the demo snapshot';
  return svcCommand(
    'nginx-svc',
    { snapshot: DEMO_SNAPSHOT, label },
    { ...g, namespace: 'default' },
  );
}

interface SnapshotSaveFlags extends LiveOptions {
  service?: string;
  all?: boolean;
  allNamespaces?: boolean;
}

async function snapshotSaveCommand(
  dir: string,
  o: SnapshotSaveFlags,
  g: GlobalOptions,
): Promise<number> {
  format(g, 'snapshot');
  // client-node and the live-cluster code load only here, never for offline commands
  const { saveSnapshot, SnapshotSaveError } = await import('./cluster/snapshot-save.js');
  const transport = await nodeTransport(o, (t) => onInterrupt.add(() => t.close()));
  try {
    const r = await saveSnapshot({
      transport,
      nodeCommands: 'diagnosis',
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
    tellNodeAccess(r.nodeAccess);
    const nodes = r.nodes ? ` and the output of commands on ${r.nodes} nodes` : '';
    write(`saved ${r.objects} objects${nodes} from context ${r.meta.context} to ${dir}\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof SnapshotSaveError) throw new UsageError(e.message);
    throw e;
  } finally {
    onInterrupt.clear();
  }
}

/** kdebug's version; with -o json also Node's and, when a kubeconfig reaches one, the API server's. */
async function versionCommand(g: GlobalOptions): Promise<number> {
  if (format(g, 'version') !== 'json') {
    write(`kdebug ${VERSION} (commit ${COMMIT}, Node.js ${process.version})\n`);
    return EXIT.ok;
  }
  const doc: Record<string, string | null> = {
    kdebug: VERSION,
    commit: COMMIT,
    node: process.version,
    server: null,
  };
  try {
    const { KubeApi } = await import('./cluster/kube-api.js');
    const api = await KubeApi.connect({
      kubeconfig: g.kubeconfig,
      context: g.context,
      timeoutMs: 5000,
    });
    try {
      doc['server'] =
        ((await api.request('GET', '/version')) as { gitVersion?: string }).gitVersion ?? null;
    } finally {
      api.close();
    }
  } catch (e) {
    doc['serverError'] = (e as Error).message; // no cluster is not an error for `version`
  }
  write(JSON.stringify(doc, null, 2) + '\n');
  return EXIT.ok;
}

async function completionCommand(shell: string, g: GlobalOptions): Promise<number> {
  format(g, 'completion');
  const { completionScript } = await import('./completion.js');
  const script = completionScript(shell);
  if (!script) throw new UsageError(`no completion for "${shell}": give bash, zsh or fish`);
  write(script);
  return EXIT.ok;
}

/** What the completion scripts call: candidates one a line, then cobra's ":4" (no files). */
async function completeCommand(program: Command, words: string[]): Promise<number> {
  const { complete } = await import('./completion.js');
  const candidates = await complete(program, words.length > 0 ? words : ['']);
  write([...candidates, ':4'].join('\n') + '\n');
  return EXIT.ok;
}

async function cleanupCommand(g: GlobalOptions): Promise<number> {
  format(g, 'cleanup');
  const { KubeApi } = await import('./cluster/kube-api.js');
  const { cleanupDebugPods } = await import('./cluster/node-pod.js');
  const api = await KubeApi.connect({ kubeconfig: g.kubeconfig, context: g.context });
  try {
    const r = await cleanupDebugPods(api, { namespace: g.namespace });
    if (r.note) process.stderr.write(`kdebug: ${r.note}\n`);
    for (const d of r.deleted)
      write(
        `deleted Pod ${d.namespace}/${d.name}${d.node ? ` (node ${d.node}, ${d.phase})` : ''}\n`,
      );
    if (r.deleted.length === 0) write(`no kdebug debug Pods in ${r.scope}\n`);
    return EXIT.ok;
  } finally {
    api.close();
  }
}

/** --ssh-user ... --ssh-timeout: how SSH connects, wherever kdebug may use it. */
function sshOptions(c: Command): Command {
  return c
    .option(
      '--ssh-user <user>',
      'SSH login (default: User from ~/.ssh/config, then your user name)',
    )
    .option('--ssh-key <file>', 'SSH private key, tried before IdentityFile and ssh-agent')
    .option('--ssh-config <file>', 'ssh config file (default: ~/.ssh/config; "none" for none)')
    .option('--known-hosts <file>', 'known_hosts file (default: ~/.ssh/known_hosts)')
    .option('--ssh-timeout <seconds>', 'SSH connect timeout per hop (default: 10)');
}

/** How a live run reaches the nodes: --via and what each way needs. */
function nodeAccessOptions(c: Command): Command {
  return sshOptions(
    c
      .addOption(
        new Option(
          '--via <how>',
          'how to reach the nodes: auto tries exec in the kube-proxy Pod, then a debug Pod, then SSH',
        )
          .choices(['auto', 'kube-proxy', 'pod', 'ssh'])
          .default('auto'),
      )
      .option('--yes', 'create privileged debug Pods without asking')
      .option('--image <image>', `debug Pod image (default: ${DEFAULT_DEBUG_IMAGE})`)
      .option(
        '--debug-namespace <ns>',
        'namespace for debug Pods (default: the context namespace; needs Pod Security "privileged")',
      )
      .option(
        '--node-timeout <seconds>',
        'how long a debug Pod may take to start, and each command on a node (default: 60)',
      )
      .addOption(
        new Option('--ssh-address-type <type>', 'which Node address SSH connects to')
          .choices(['InternalIP', 'ExternalIP', 'Hostname'])
          .default('InternalIP'),
      ),
  );
}

/** Examples at the end of each command's --help. */
const EXAMPLES: Record<string, string[]> = {
  svc: [
    'kdebug svc nginx-svc                          # the current context and namespace',
    'kdebug svc shop/web --context prod -o json    # NS/NAME, like kubectl',
    'kdebug svc nginx-svc --snapshot DIR           # offline, from a snapshot',
  ],
  rules: [
    'sudo iptables-save | kdebug rules --file -',
    'kdebug rules --snapshot DIR --node node-a --search 10.244.1.7',
    'kdebug rules --ssh root@192.0.2.10',
  ],
  expect: ['kdebug expect --snapshot DIR --node node-a > expected.txt'],
  drift: ['kdebug drift --all-nodes', 'kdebug drift --snapshot DIR --node node-a -o json'],
  trace: ['kdebug trace --node node-a --src 10.244.0.5 --dst 10.96.0.10:53 --proto udp'],
  demo: ['kdebug demo', 'kdebug demo -o text'],
  cleanup: ['kdebug cleanup', 'kdebug cleanup -n kdebug'],
  completion: ['source <(kdebug completion bash)', 'kdebug completion fish | source'],
  version: ['kdebug version -o json'],
};

export function buildProgram(run: (code: Promise<number>) => void): Command {
  const program = new Command('kdebug')
    .description(
      "Why can't I reach my Service? kube-proxy's rules read back, checked and explained.",
    )
    .version(`kdebug ${VERSION} (commit ${COMMIT})`)
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
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  const g = () => program.opts<GlobalOptions>();

  nodeAccessOptions(
    program
      .command('rules')
      .description("the Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees of a node's rules")
      .option('--file <path>', 'iptables-save or iptables -S output ("-" for stdin)')
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node whose rules to read')
      .addOption(
        new Option(
          '--table <table>',
          'the table of iptables -S output without *table lines',
        ).choices(['nat', 'filter', 'mangle', 'raw', 'security']),
      )
      .option('--search <query>', 'fuzzy search chains, comments, IPs, ports and Service names')
      .option('--ssh <[user@]host[:port]>', "read this host's rules over SSH (no cluster needed)"),
  ).action((o: RulesOptions) => run(rulesCommand(o, g())));

  program
    .command('expect')
    .description(
      'the rules kube-proxy (1.28+, iptables mode) would write on a node, as iptables-save text',
    )
    .option(
      '--snapshot <dir>',
      'a snapshot directory: its objects.json (default: the live cluster)',
    )
    .option('--node <node>', 'the node to compute the rules for')
    .addOption(new Option('--table <table>', 'only this table').choices(['nat', 'filter']))
    .option(
      '--no-random-fully',
      'the iptables binary lacks MASQUERADE --random-fully (iptables < 1.6.2)',
    )
    .option('--nfacct', 'the node has nfacct counters (kube-proxy 1.31+ adds -m nfacct rules)')
    .option('--no-nfacct', 'the node has no nfacct counters (default: read from its recordings)')
    .option('--tcp-be-liberal', 'sysctl nf_conntrack_tcp_be_liberal=1 (no INVALID drop rule)')
    .action((o: ExpectOptions) => run(expectCommand(o, g())));

  nodeAccessOptions(
    program
      .command('drift')
      .description(
        "what each node's rules do differently from what kube-proxy would write (exit 1 on drift)",
      )
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node to check')
      .option('--all-nodes', 'every node')
      .option('--ssh <[user@]host[:port]>', "with --snapshot: that node's rules read over SSH now"),
  ).action((o: DriftOptions) => run(driftCommand(o, g())));

  nodeAccessOptions(
    program
      .command('trace')
      .description(
        "walk one packet through a node's rules: every outcome, its chance, the rules it matched",
      )
      .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
      .option('--node <node>', 'the node whose rules to walk')
      .option('--src <ip>', 'source address (a Pod IP, or a client outside the cluster)')
      .option(
        '--dst <ip:port>',
        'destination, e.g. a ClusterIP and port or a node IP and node port',
      )
      .addOption(
        new Option('--proto <protocol>', 'protocol')
          .choices(['tcp', 'udp', 'sctp', 'icmp'])
          .default('tcp'),
      )
      .option(
        '--from-host',
        'sent by a process on the node (nat OUTPUT) rather than a Pod or the network',
      )
      .option('--ssh <[user@]host[:port]>', "with --snapshot: that node's rules read over SSH now"),
  ).action((o: TraceOptions) => run(traceCommand(o, g())));

  nodeAccessOptions(
    program
      .command('svc <name>')
      .description('the guided diagnosis of one Service, step by step, with evidence')
      .option('--snapshot <dir>', 'a recorded snapshot directory instead of the live cluster')
      .option('-v, --verbose', 'text: expand every finding, not only the failing ones'),
  ).action((name: string, o: SvcOptions) => run(svcCommand(name, o, g())));

  program
    .command('demo')
    .description('kdebug on the bundled demo snapshot (the nginx-svc cluster), no cluster needed')
    .action(() => run(demoCommand(g())));

  const snapshot = program
    .command('snapshot')
    .description('capture cluster facts into a directory that --snapshot replays');
  nodeAccessOptions(
    snapshot
      .command('save <dir>')
      .description('read a Service (or every Service) from the cluster and save it as a snapshot')
      .option('--service <name>', 'the Service to capture')
      .option('--all', 'every Service in the namespace (-n, default: the context namespace)')
      .option('-A, --all-namespaces', 'with --all: every Service in the cluster'),
  ).action((dir: string, o: SnapshotSaveFlags) => run(snapshotSaveCommand(dir, o, g())));

  program
    .command('cleanup')
    .description(
      'delete the debug Pods a killed kdebug left behind (label app.kubernetes.io/managed-by=kdebug; all namespaces, or -n)',
    )
    .action(() => run(cleanupCommand(g())));

  program
    .command('version')
    .description('the version of kdebug (-o json: also of Node.js and the API server)')
    .action(() => run(versionCommand(g())));

  program
    .command('completion <shell>')
    .description('a completion script for bash, zsh or fish (Service names come from the cluster)')
    .action((shell: string) => run(completionCommand(shell, g())));

  for (const [name, lines] of Object.entries(EXAMPLES))
    program.commands
      .find((c) => c.name() === name)
      ?.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  // a wrong or missing argument: the reason and where to read more, not the whole help
  const path = (c: Command): string => (c.parent ? `${path(c.parent)} ${c.name()}` : c.name());
  const short = (c: Command): void => {
    c.showHelpAfterError(`see ${path(c)} --help`);
    c.commands.forEach(short);
  };
  short(program);
  return program;
}

/** A message to print: each of its lines with control characters shown escaped. */
const inert = (message: string) => message.split('\n').map(escapeControls).join('\n');

/** Turns any failure into a one-line message and exit 2; a stack trace only with KDEBUG_DEBUG. */
function fail(e: unknown): number {
  if (e instanceof IptablesParseError) {
    process.stderr.write(`${e.message}\n`); // FILE:LINE: message, then the line, escaped
  } else if (
    e instanceof SnapshotError ||
    e instanceof UsageError ||
    e instanceof NoRulesError ||
    e instanceof KubeApiError ||
    e instanceof DriftInputError
  ) {
    process.stderr.write(`kdebug: ${inert(e.message)}\n`); // names and paths are input
  } else {
    process.stderr.write(`kdebug: internal error: ${inert((e as Error)?.message ?? String(e))}\n`);
    if (process.env['KDEBUG_DEBUG']) process.stderr.write(`${(e as Error)?.stack}\n`);
  }
  return EXIT.failed;
}

export async function main(argv: string[]): Promise<number> {
  let pending: Promise<number> | undefined;
  const program = buildProgram((p) => (pending = p));
  // the completion scripts' question, words as typed: before commander reads any flag
  if (argv[2] === '__complete') return completeCommand(program, argv.slice(3));
  try {
    await program.parseAsync(argv);
    return pending ? await pending : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.failed;
    return fail(e);
  }
}

if (process.env['KDEBUG_NO_MAIN'] === undefined) {
  cleanUpOnSignals();
  // `kdebug ... | head`: the reader left; end quietly with what was decided so far
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw e;
  });
  process.exitCode = await main(process.argv);
}
