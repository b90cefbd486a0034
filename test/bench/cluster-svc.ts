// One `kdebug svc` on bench:cluster's cluster, measured as a person meets it: the time to its
// complete report, the nodes it chose and read, the debug Pods it created (counted by a watch on
// their label from before the run: kdebug deletes them before it ends), the bytes it read from
// nodes and the API objects it kept (its KDEBUG_TIMINGS sizes line), and its peak memory.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEBUG_POD_SELECTOR } from '../../src/cluster/nodes/debug-pod/manifest.js';
import type { ClusterClient, Run, SvcJson } from '../support/cluster/client.js';
import { ROOT } from '../support/cluster/cluster.js';

export interface SvcRun {
  label: string;
  /** Wall time of each run, ms. */
  ms: number[];
  /** User + sys CPU of each run, s. */
  cpu: number[];
  code: number | null;
  /** Nodes chosen (the Rules step's list), or every node. */
  chosen: number;
  /** Nodes whose outputs came back. */
  read: number;
  /** Debug Pods created by one run (the most of any). */
  debugPods: number;
  nodeBytes: number;
  apiObjects: number;
  /** The bytes of the API's answers. */
  apiBytes: number;
  rssMiB: number;
  /** The Rules step's count of nodes not read, or why there is none. */
  unread: string;
  /** The last run's stderr (its timing lines). */
  stderr: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A watch on kdebug's debug Pods from now: the Pods created until stop(). */
function watchDebugPods(c: ClusterClient): { stop(): Promise<number> } {
  const selector = encodeURIComponent(DEBUG_POD_SELECTOR);
  const list = JSON.parse(
    c.kubectl(['get', '--raw', `/api/v1/pods?labelSelector=${selector}&limit=1`]),
  ) as { metadata: { resourceVersion: string } };
  const dir = mkdtempSync(join(tmpdir(), 'kdc-watch-'));
  const fd = openSync(join(dir, 'events'), 'w');
  // from the list's version: a Pod made before the watch is up is still told
  const path = `/api/v1/pods?watch=1&labelSelector=${selector}&resourceVersion=${list.metadata.resourceVersion}`;
  const child = spawn(
    'ip',
    [
      ...['netns', 'exec', c.info.clientNetns, c.info.kubectl],
      ...[`--kubeconfig=${resolve(ROOT, c.info.kubeconfig)}`, 'get', '--raw', path],
    ],
    { stdio: ['ignore', fd, 'ignore'] },
  );
  closeSync(fd);
  const exited = new Promise((done) => child.on('close', done));
  return {
    stop: async () => {
      await new Promise((r) => setTimeout(r, 2000)); // the last events on their way
      child.kill();
      await exited;
      const uids = new Set<string>();
      for (const line of readFileSync(join(dir, 'events'), 'utf8').split('\n')) {
        const e = line
          ? (JSON.parse(line) as { type: string; object: { metadata?: { uid?: string } } })
          : undefined;
        if (e?.type === 'ADDED' && e.object.metadata?.uid) uids.add(e.object.metadata.uid);
      }
      rmSync(dir, { recursive: true, force: true });
      return uids.size;
    },
  };
}

/** `kdebug svc NS/NAME ARGS -o json`, `times` times, with KDEBUG_TIMINGS=1. */
export async function measureSvc(
  c: ClusterClient,
  label: string,
  args: string[],
  times = 1,
): Promise<SvcRun> {
  const ms: number[] = [];
  const cpu: number[] = [];
  let r: (Run & { maxRssKiB: number; cpuSeconds: number }) | undefined;
  let debugPods = 0;
  process.env['KDEBUG_TIMINGS'] = '1';
  try {
    for (let i = 0; i < times; i++) {
      const watch = watchDebugPods(c);
      const t = performance.now();
      r = c.kdebugMeasured(['svc', ...args, '-o', 'json']);
      ms.push(performance.now() - t);
      cpu.push(r.cpuSeconds);
      debugPods = Math.max(debugPods, await watch.stop());
    }
  } finally {
    delete process.env['KDEBUG_TIMINGS'];
  }
  const doc = JSON.parse(r!.stdout || '{"steps":[]}') as SvcJson;
  const notRead = doc.steps
    .find((s) => s.id === 'rules')
    ?.findings.find((f) => f.id === 'rules-nodes-not-read');
  const sizes =
    /timing: sizes (\d+) bytes kept from nodes in \d+ outputs of (\d+) nodes; (\d+) API objects in (\d+) bytes/.exec(
      r!.stderr,
    );
  // every node chosen (--all-nodes): those said read and those said not reached, on stderr
  const said = [...r!.stderr.matchAll(/^kdebug: (\d+) nodes? (?:read|not reached)/gm)];
  const each = r!.stderr.split('\n').filter((l) => /^kdebug: (?!timing: )[^\s:]+: /.test(l));
  const every = said.length > 0 ? said.reduce((n, m) => n + Number(m[1]), 0) : each.length;
  return {
    label,
    ms,
    cpu,
    code: r!.code,
    chosen: notRead ? notRead.evidence.filter((e) => e.text.startsWith('read ')).length : every,
    read: Number(sizes?.[2] ?? 0),
    debugPods,
    nodeBytes: Number(sizes?.[1] ?? 0),
    apiObjects: Number(sizes?.[3] ?? 0),
    apiBytes: Number(sizes?.[4] ?? 0),
    rssMiB: Math.round(r!.maxRssKiB / 1024),
    unread:
      notRead?.title ?? (sizes ? 'every node chosen' : `no sizes told: ${r!.stderr.slice(-500)}`),
    stderr: r!.stderr,
  };
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;

/** One line for a run, as it ends. */
export function runLine(r: SvcRun): string {
  return `${r.label}: median ${Math.round(median(r.ms))} ms of ${r.ms.map(Math.round).join(', ')} (user+sys CPU ${r.cpu.map((s) => s.toFixed(2)).join(', ')} s); exit ${r.code}; nodes chosen ${r.chosen}, read ${r.read}; ${r.unread}; debug Pods created ${r.debugPods}; ${mb(r.nodeBytes)} kept from nodes; ${r.apiObjects} API objects (${mb(r.apiBytes)}); peak memory ${r.rssMiB} MiB`;
}

/** The runs side by side. */
export function runsTable(runs: SvcRun[]): string {
  return table([
    [
      '',
      'report in',
      'chosen',
      'read',
      'debug Pods',
      'kept from nodes',
      'API objects',
      'from the API',
      'peak memory',
      'exit',
    ],
    ...runs.map((r) => [
      r.label,
      secs(r),
      String(r.chosen),
      String(r.read),
      String(r.debugPods),
      mb(r.nodeBytes),
      String(r.apiObjects),
      mb(r.apiBytes),
      `${r.rssMiB} MiB`,
      String(r.code),
    ]),
  ]);
}

/** One cluster size's runs: svc while kube-proxy rolls out, then each of `runs` once settled. */
export interface SizeRuns {
  nodes: number;
  services: number;
  rolling: SvcRun;
  runs: SvcRun[];
}

/** Each size a row: every run's time and peak memory, and what it read, side by side. */
export function sizesTable(sizes: SizeRuns[]): string {
  const labels = ['svc rolling out', ...sizes[0]!.runs.map((r) => r.label)];
  return table([
    [
      'Nodes',
      'Services',
      ...labels.flatMap((l) => [l, 'memory']),
      'API (svc)',
      'read (--all-nodes)',
    ],
    ...sizes.map((s) => {
      const every = s.runs.find((r) => r.label.includes('--all-nodes'));
      return [
        String(s.nodes),
        String(s.services),
        ...[s.rolling, ...s.runs].flatMap((r) => [secs(r), `${r.rssMiB} MiB`]),
        mb(s.runs[0]!.apiBytes),
        every ? `${every.read} of ${every.chosen}` : '',
      ];
    }),
  ]);
}

const secs = (r: SvcRun) => `${(median(r.ms) / 1000).toFixed(1)} s`;

/** Rows in columns, the first left-aligned, the rest right-aligned. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, k) => Math.max(...rows.map((row) => row[k]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, k) => (k === 0 ? cell.padEnd(widths[k]!) : cell.padStart(widths[k]!)))
        .join('  '),
    )
    .join('\n');
}
