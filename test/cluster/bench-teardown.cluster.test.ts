// `npm run bench:cluster` killed while its lab is up leaves nothing behind: no namespace of the
// lab, no process it started (control plane, kubelets, kube-proxy, Pods, the reaper), whichever
// way it is ended: `timeout`'s SIGTERM to its process group, Ctrl-C's SIGINT, a hang-up, or a
// SIGKILL of the bench's own process, where no code of it can run (reaper.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { clusterUnavailable, DIR, down, ROOT } from '../support/cluster/cluster.js';
import { skipWithout } from '../support/skip.js';

/** The bench's lab prefix (cluster-scale.ts runs `up` with the default). */
const PREFIX = 'kdc';

const labNamespaces = () =>
  existsSync('/run/netns')
    ? readdirSync('/run/netns').filter((n) => n.startsWith(`${PREFIX}.`))
    : [];

/** Every process in these process groups. */
function inGroups(groups: number[]): number[] {
  const ps = spawnSync('ps', ['-eo', 'pid=,pgid='], { encoding: 'utf8' }).stdout;
  return ps
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([, pgid]) => groups.includes(pgid!))
    .map(([pid]) => pid!);
}

/** What the lab and the bench run now: the processes `up` started and their groups, the reaper,
 * every process inside a lab namespace (Pods), and the bench's own process group. */
function running(bench: number): number[] {
  const p = JSON.parse(readFileSync(join(DIR, 'pids.json'), 'utf8')) as {
    pids: number[];
    reaper?: number;
  };
  assert.ok(p.reaper !== undefined && alive(p.reaper), 'the reaper runs while the lab is up');
  const inNamespaces = labNamespaces().flatMap((n) =>
    spawnSync('ip', ['netns', 'pids', n], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .map(Number),
  );
  return [...new Set([...inGroups([...p.pids, p.reaper, bench]), ...inNamespaces])];
}

/** Whether pid runs: a zombie (ended, its exit not yet collected by init) does not. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The bench started as npm starts it (tsx, which runs it in a child node), in its own process
 * group like a command `timeout` runs, at a size that is quick to make. */
function startBench(): { bench: ChildProcess; exited: Promise<void>; out: () => string } {
  let out = '';
  const bench = spawn(
    join(ROOT, 'node_modules/.bin/tsx'),
    ['test/bench/cluster-scale.ts', '--nodes', '2', '--services', '2', '--svc-only'],
    { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  bench.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  bench.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((done) => bench.once('exit', () => done()));
  return { bench, exited, out: () => out.slice(-2000) };
}

describe(
  'bench:cluster ended while its lab is up',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    after(() => down());

    const cases: { signal: NodeJS.Signals; to: 'group' | 'tsx' | 'bench'; how: string }[] = [
      { signal: 'SIGTERM', to: 'group', how: 'timeout: SIGTERM to its process group' },
      { signal: 'SIGINT', to: 'tsx', how: 'SIGINT to tsx alone, which relays it' },
      { signal: 'SIGHUP', to: 'group', how: 'a hang-up: SIGHUP to its process group' },
      { signal: 'SIGKILL', to: 'bench', how: "SIGKILL to the bench's own process alone" },
    ];
    for (const { signal, to, how } of cases)
      it(`${how}: no lab namespace, no process left`, async () => {
        const { bench, exited, out } = startBench();
        const tsx = bench.pid!;
        let gone = false;
        void exited.then(() => (gone = true));
        await until(
          'the lab to be up',
          () => {
            assert.ok(!gone, `the bench ended before its lab was up:\n${out()}`);
            return existsSync(join(DIR, 'cluster.json'));
          },
          600_000,
        );
        const before = running(tsx);
        assert.ok(
          labNamespaces().length > 0 && before.length > 5,
          `lab up: ${before.length} processes`,
        );
        const node = Number(
          spawnSync('ps', ['-o', 'pid=', '--ppid', String(tsx)], {
            encoding: 'utf8',
          }).stdout.trim(),
        );
        assert.ok(node > 0, 'the bench runs in a child of tsx');
        process.kill(to === 'group' ? -tsx : to === 'tsx' ? tsx : node, signal);
        await exited;
        await until(
          'the lab to be torn down',
          () => labNamespaces().length === 0 && !before.some(alive),
          60_000,
        ).catch(() => undefined);
        assert.deepEqual(labNamespaces(), [], `lab namespaces left after ${how}`);
        const left = before.filter(alive).map((pid) =>
          spawnSync('ps', ['-o', 'pid=,args=', '-p', String(pid)], {
            encoding: 'utf8',
          }).stdout.trim(),
        );
        assert.deepEqual(left, [], `processes left after ${how}`);
        assert.equal(existsSync(DIR), false, `${DIR} left after ${how}`);
      });
  },
);
