// Every "next" command runs as printed, and runs nothing else. kdebug's own commands of every
// scenario report run from the snapshot; every command of every bundled snapshot, with hostile
// names, labels, conntrack answers, contexts and snapshot paths, is run by bash in a PATH of
// stand-ins that record what they were called with: exactly the command's words reach exactly its
// programs (and, for a node's command, the line inside `sh -c` or ssh likewise), nothing more.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject, Report } from '../../src/core/model.js';
import {
  onNode,
  resolveNext,
  shellLine,
  type Invocation,
  type NextCommand,
} from '../../src/core/findings/next-command.js';
import { hermetic, kdebug, ROOT } from '../support/cli.js';
import { SCENARIOS, scenarioReport } from '../snapshots/svc-scenarios.test.js';
import { allModes } from '../support/modes.js';

describe('next commands run as printed', () => {
  it('each kdebug command of every scenario report runs from the snapshot (exit 0 or 1)', async () => {
    let ran = 0;
    for (const s of SCENARIOS) {
      const report = await scenarioReport(s);
      for (const f of report.steps.flatMap((step) => step.findings)) {
        const argv = f.next?.argv;
        // a live one (no --snapshot) needs a cluster
        if (argv?.[0] !== 'kdebug' || !argv.includes('--snapshot')) continue;
        const r = kdebug([...argv.slice(1), '-o', 'text']);
        assert.ok(
          r.code === 0 || r.code === 1,
          `${s.dir} [${f.id}]: ${shellLine(f.next!)} -> ${r.code}: ${r.stderr}`,
        );
        ran++;
      }
    }
    assert.ok(ran >= 4, `ran ${ran}`);
  });
});

describe("a live kdebug command of a snapshot's report", () => {
  const live = async (meta: Record<string, unknown>, context?: string) => {
    const facts = await readSnapshot('snapshots/cilium-stale-backend');
    facts.meta = { ...facts.meta, ...meta };
    const report = diagnose(
      facts,
      { namespace: 'default', service: 'nginx-svc' },
      {
        code: allModes,
        invocation: {
          snapshot: 'snapshots/cilium-stale-backend',
          ...(context ? { context } : {}),
        },
      },
    );
    return report.steps.flatMap((s) => s.findings).find((f) => f.id === 'probes-not-recorded')!
      .next!.argv;
  };
  it("carries the context the snapshot was captured from (its meta.json), as the README says kdebug's own commands do", async () => {
    assert.deepEqual(await live({}), [
      'kdebug',
      'svc',
      'nginx-svc',
      '-n',
      'default',
      '--context',
      'kubernetes-admin@kubernetes',
    ]);
    // --context given wins; a redacted snapshot's hash, or a context that is no string, is none
    assert.deepEqual((await live({}, 'prod')).slice(-2), ['--context', 'prod']);
    assert.ok(!(await live({ redaction: { redacted: true } })).includes('--context'));
    assert.ok(!(await live({ context: 42 })).includes('--context'));
  });
});

describe('kdebug named as it was run', () => {
  it('as the kubectl plugin, every kdebug command it prints and its --help say kubectl kdebug', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-plugin-'));
    try {
      symlinkSync(join(ROOT, 'bin', 'kdebug.js'), join(dir, 'kubectl-kdebug'));
      const plugin = (args: string[]) =>
        spawnSync(process.execPath, [join(dir, 'kubectl-kdebug'), ...args], {
          cwd: ROOT,
          encoding: 'utf8',
          env: { ...hermetic(), NO_COLOR: '1' },
        });
      const r = plugin([
        'svc',
        'nginx-svc',
        '--snapshot',
        'snapshots/pods-not-ready',
        '-o',
        'json',
      ]);
      const nexts = (
        JSON.parse(r.stdout) as { steps: { findings: { next: string | null }[] }[] }
      ).steps
        .flatMap((s) => s.findings)
        .flatMap((f) => (f.next ? [f.next] : []));
      assert.ok(
        nexts.some((n) => n.startsWith('kubectl kdebug trace ')),
        nexts.join('\n'),
      );
      assert.ok(!nexts.some((n) => n.startsWith('kdebug ')), nexts.join('\n'));
      assert.match(plugin(['--help']).stdout, /^Usage: kubectl kdebug \[options\] \[command\]$/m);
      assert.match(plugin(['svc', '--help']).stdout, /^ {2}kubectl kdebug svc nginx-svc /m);
      // and every command a message or hint names
      const said = [
        plugin(['demo', '--list']).stdout,
        plugin(['demo', 'nope']).stderr,
        plugin(['--snapshot', 'snapshots/nginx-svc', 'svc', 'nginx-svc']).stderr,
        plugin(['svc', '-A', '--snapshot', 'snapshots/nginx-svc']).stderr,
        plugin(['svc', 'nginx-svc:8080/UDP', '--snapshot', 'snapshots/nginx-svc']).stderr,
      ];
      for (const text of said) {
        assert.match(text, /kubectl kdebug (?:demo|svc)\b/, text);
        assert.doesNotMatch(
          text.replace(/kubectl kdebug/g, ''),
          /(?<![\w-])kdebug (?:demo|svc|snapshot|rules|cleanup)\b/,
          text,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// --- the stand-in shell ---------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'kdebug-next-'));
after(() => rmSync(work, { recursive: true, force: true }));
const bin = join(work, 'bin');
const LOG = join(work, 'calls');
/** Every program a next command names, and what a payload would reach for. */
const PROGRAMS = [
  'kubectl',
  'kdebug',
  'conntrack',
  'nft',
  'ipset',
  'ipvsadm',
  'iptables-save',
  'ip6tables-save',
  'iptables-legacy-save',
  'ip6tables-legacy-save',
  'dig',
  'curl',
  'grep',
  'ssh',
  'sudo',
  'ip',
  'sh',
  'touch',
  'rm',
  'id',
  'cat',
  'wget',
  'nc',
  'bash',
  'chroot',
  'python3',
  'base64',
  'env',
];
// each stand-in records its name and arguments, NUL-separated, in a file of its own (piped
// programs run at once: one file each, so their records never interleave)
spawnSync('mkdir', ['-p', bin]);
for (const p of PROGRAMS) {
  writeFileSync(join(bin, p), `#!/bin/bash\nprintf '%s\\0' "\${0##*/}" "$@" > '${LOG}'/$$\n`);
  chmodSync(join(bin, p), 0o755);
}

/** What the programs of one shell line were called with, as bash ran it with the stand-ins. */
function run(line: string): string[][] {
  rmSync(LOG, { recursive: true, force: true });
  mkdirSync(LOG);
  const r = spawnSync('/bin/bash', ['-c', line], {
    cwd: work,
    env: { PATH: bin, HOME: work },
    encoding: 'utf8',
    timeout: 10_000,
  });
  assert.equal(r.signal, null, `${line}: ${r.stderr}`);
  return readdirSync(LOG).map((f) => readFileSync(join(LOG, f), 'utf8').split('\0').slice(0, -1));
}

const nexts = (r: Report) =>
  r.steps.flatMap((s) => s.findings).flatMap((f) => (f.next ? [f.next] : []));

const sorted = (calls: string[][]) => calls.map((c) => JSON.stringify(c)).sort();

/** How many lines inside `sh -c` and inside ssh were checked. */
const inners = { sh: 0, ssh: 0, resolved: 0 };

/** Bash runs exactly the command's programs with exactly its words; and the line it hands to
 * `sh -c` or to ssh on the node runs exactly the node's command. */
function assertRunsAsTyped(typed: NextCommand, how: Invocation): void {
  const c = resolveNext(typed, how);
  const line = shellLine(c);
  const want = [c.argv, ...(c.pipe ?? [])];
  assert.deepEqual(sorted(run(line)), sorted(want), line);
  if (c.saveTo) assert.ok(existsSync(join(work, c.saveTo)), `${line}: nothing saved`);
  const inner = innerLine(c);
  if (typed.node === undefined) {
    // resolved already (a report's): its inner line runs only a node's read-only programs
    if (inner) assertInert(inner.line);
    return;
  }
  if (!inner) return;
  inners[inner.via]++;
  const program = inner.via === 'ssh' ? ['sudo', ...typed.argv] : typed.argv;
  assert.deepEqual(sorted(run(inner.line)), sorted([program, ...(typed.pipe ?? [])]), inner.line);
}

/** The line a resolved node command hands on: to ssh, or to `sh -c` in the debug Pod. */
function innerLine(c: NextCommand): { via: 'ssh' | 'sh'; line: string } | undefined {
  if (c.argv[0] === 'ssh') return { via: 'ssh', line: c.argv.at(-1)! };
  if (c.argv.at(-3) === 'sh' && c.argv.at(-2) === '-c') return { via: 'sh', line: c.argv.at(-1)! };
  return undefined;
}

/** A line that runs what kdebug reads on a node, and nothing a payload would. */
function assertInert(line: string): void {
  const calls = run(line);
  assert.ok(calls.length > 0, line);
  for (const [program] of calls) assert.ok(!['touch', 'rm', 'id', 'wget'].includes(program!), line);
  inners.resolved++;
}

// --- hostile facts ----------------------------------------------------------------------------

const PAYLOADS = [
  'x$(touch PWNED)',
  "x';touch PWNED;'",
  'x`touch PWNED`',
  'x"; touch PWNED; "',
  'x\ntouch PWNED',
  'x|touch PWNED',
  'x && touch PWNED',
  'x\x1b]0;PWNED\x07',
];
/** Names every step looks up by their well-known value: poisoning them hides the steps. */
const KEEP = new Set(['kube-system', 'k8s-app', 'kube-proxy', 'kube-dns', 'coredns']);

/** Every name a next command may carry, renamed with the payload the same way everywhere. */
function poison(facts: Facts, payload: string): Facts {
  const names = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v !== '' && !KEEP.has(v)) names.add(v);
  };
  for (const o of facts.objects) {
    const md = o.metadata ?? {};
    add(md.name);
    add(md.namespace);
    for (const [k, v] of Object.entries({ ...md.labels, ...(selectorOf(o) ?? {}) })) {
      add(k);
      add(v);
    }
    const spec = (o['spec'] ?? {}) as Record<string, unknown>;
    add(spec['nodeName']);
    for (const c of (spec['containers'] ?? []) as { name?: string }[]) add(c.name);
  }
  Object.keys(facts.nodes).forEach(add);
  const rename = (s: string) => (names.has(s) ? `${s}${payload}` : s);
  const walk = (v: unknown): unknown =>
    typeof v === 'string'
      ? rename(v)
      : Array.isArray(v)
        ? v.map(walk)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [rename(k), walk(x)]))
          : v;
  return {
    objects: facts.objects.map((o) => walk(o) as KubeObject),
    nodes: Object.fromEntries(Object.entries(facts.nodes).map(([n, out]) => [rename(n), out])),
    meta: { ...facts.meta, namespace: rename(facts.meta.namespace ?? 'default') },
  };
}

const selectorOf = (o: KubeObject) =>
  ((o['spec'] ?? {}) as { selector?: Record<string, string> }).selector;

/** A conntrack answer whose reply sources are a stale address and a hostile "address". */
function hostileConntrack(facts: Facts, ip: string, port: number): Facts {
  const node = Object.keys(facts.nodes)[0]!;
  const entry = (src: string) =>
    `tcp      6 431999 ESTABLISHED src=10.0.12.7 dst=${ip} sport=40000 dport=${port} src=${src} dst=10.0.12.7 sport=80 dport=40000 [ASSURED] mark=0 use=1`;
  const out = [entry('10.244.9.9'), entry('10.244.9.8;$(touch${IFS}PWNED)')].join('\n');
  return {
    ...facts,
    nodes: { ...facts.nodes, [node]: { ...facts.nodes[node], [`conntrack_tcp_${ip}`]: out } },
  };
}

/** Invocations whose context, snapshot path and ssh lines a shell would otherwise read as code. */
function invocations(dir: string, nodes: string[]): Invocation[] {
  return [
    { snapshot: dir },
    { snapshot: `${dir}/it's $(touch PWNED)`, context: "prod';touch PWNED;'" },
    {
      context: 'arn:aws:eks:eu-west-1:000000000000:cluster/x $(touch PWNED)',
      self: ['kubectl', 'kdebug'],
    },
    {
      ssh: Object.fromEntries(nodes.map((n) => [n, ['ssh', '-p', '2222', 'core@192.0.2.10']])),
      via: 'pod',
    },
  ];
}

describe('hostile values in next commands', () => {
  const dirs = readdirSync('snapshots').filter((d) =>
    existsSync(join('snapshots', d, 'objects.json')),
  );

  it('every next command of every bundled snapshot, with hostile names, runs exactly its words', async () => {
    let commands = 0;
    let dropped = 0;
    for (const dir of dirs) {
      const base = await readSnapshot(join('snapshots', dir));
      const service = (base.meta.service as string | undefined) ?? 'nginx-svc';
      const variants = [base, ...PAYLOADS.map((p) => poison(base, p))];
      for (const [v, facts0] of variants.entries()) {
        const svc = facts0.objects.find(
          (o) => o.kind === 'Service' && o.metadata?.name?.startsWith(service),
        );
        const spec = (svc?.['spec'] ?? {}) as { clusterIP?: string; ports?: { port: number }[] };
        const facts =
          spec.clusterIP && spec.clusterIP !== 'None'
            ? hostileConntrack(facts0, spec.clusterIP, spec.ports?.[0]?.port ?? 80)
            : facts0;
        const target = {
          namespace: facts.meta.namespace ?? 'default',
          service: svc?.metadata?.name ?? service,
        };
        const typed: NextCommand[] = [];
        // the nodes' own drift, as `kdebug drift` shows it
        const analysis = new Analysis(facts, { code: allModes });
        for (const node of Object.keys(facts.nodes))
          try {
            typed.push(
              ...analysis
                .node(node)
                .drift()
                .findings.flatMap((f) => (f.next ? [f.next] : [])),
            );
          } catch {
            // a node kdebug cannot compare has no drift to show
          }
        for (const how of invocations(join('snapshots', dir), Object.keys(facts.nodes)))
          // the report's, resolved for this run, and the drift's, as kdebug drift resolves them
          for (const c of [
            ...nexts(diagnose(facts, target, { code: allModes, invocation: how })),
            ...typed,
          ]) {
            assertRunsAsTyped(c, how);
            commands++;
          }
        if (v > 0)
          dropped += diagnose(facts, target, { code: allModes })
            .steps.flatMap((s) => s.findings)
            .filter((f) => !f.next).length;
        assert.ok(!existsSync(join(work, 'PWNED')), `${dir}: a payload ran`);
      }
    }
    assert.ok(commands > 200, `ran ${commands} commands`);
    assert.ok(inners.resolved > 0, JSON.stringify(inners));
    assert.ok(dropped > 0, 'some hostile values were refused');
  });

  it('a node command with a pipe and a saved output runs whole inside sh -c and over ssh', () => {
    const before = { ...inners };
    const typed = [
      onNode('node-a', ['curl', '-s', 'http://127.0.0.1:10249/metrics'], {
        pipe: [['grep', 'kubeproxy_sync_proxy_rules']],
      }),
      onNode('node-a', ['iptables-legacy-save', '-t', 'nat'], {
        pipe: [['grep', '-c', "^-A KUBE-SEP 'quoted' $(touch PWNED)"]],
        hostBinaries: true,
      }),
      onNode('node-a', ['iptables-save'], {
        saveTo: 'nodes/node-a/iptables-save.txt',
        hostBinaries: true,
      }),
    ];
    for (const dir of ['snap dir', '.'])
      spawnSync('mkdir', ['-p', join(work, dir, 'nodes', 'node-a')]);
    for (const c of typed)
      for (const how of [
        { snapshot: 'snap dir', context: "it's" },
        { ssh: { 'node-a': ['ssh', 'core@192.0.2.10'] } },
      ])
        assertRunsAsTyped(c!, how);
    assert.deepEqual(
      { sh: inners.sh - before.sh, ssh: inners.ssh - before.ssh },
      { sh: 2, ssh: 3 },
    );
    assert.ok(!existsSync(join(work, 'PWNED')));
  });

  it('a hostile value is never a word: the command that would carry it is not offered', async () => {
    const base = await readSnapshot('snapshots/selector-typo');
    for (const payload of PAYLOADS) {
      const facts = poison(base, payload);
      const report = diagnose(
        facts,
        {
          namespace: facts.meta.namespace!,
          service: `nginx-svc${payload}`,
        },
        { code: allModes },
      );
      for (const f of report.steps.flatMap((s) => s.findings))
        for (const word of [...(f.next?.argv ?? []), ...(f.next?.pipe ?? []).flat()])
          assert.ok(!word.includes('PWNED'), `[${f.id}] ${shellLine(f.next!)}`);
    }
  });
});
