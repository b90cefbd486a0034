// Speed of the parts that have targets: parse + trees against the floor of reading and splitting
// the same bytes, peak memory, and fuzzy query latency. Not a test: it reports numbers.
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { buildSearchIndex } from '../../src/core/dataplane/iptables/search.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { clusterDump } from './cluster-dump.js';
import { ciliumBpfList } from './cilium-dump.js';
import { parseCilium } from '../../src/core/dataplane/cilium/read/read.js';
import { buildCiliumTrees } from '../../src/core/dataplane/cilium/trees.js';
import { benchExpectDrift } from './expect-drift.js';
import { mb, median, ms, time } from './measure.js';

function writeDump(file: string, dump: string): { size: number; lines: number } {
  writeFileSync(file, dump);
  return { size: Buffer.byteLength(dump), lines: dump.split('\n').length };
}

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');

const child = args.get('child');
if (child) {
  // one measurement in a fresh process: peak RSS of exactly this work
  const file = args.get('file')!;
  if (child === 'floor') readFileSync(file, 'utf8').split('\n');
  if (child === 'trees') buildServiceTrees(parseIptables(readFileSync(file)));
  // VmHWM is this process's own peak (ru_maxrss would include the parent's, inherited at fork)
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))!;
  process.stdout.write(String(Number(hwm[1]) * 1024));
  process.exit(0);
}

const services = Number(args.get('services') ?? 10000);
const endpoints = Number(args.get('endpoints') ?? 10);
const runs = Number(args.get('runs') ?? 7);
// `--only expect-drift` (and `--case WORDS`, the cases whose name holds them): expect + drift
// alone, no dump written and no process run
if (args.get('only') === 'expect-drift') {
  benchExpectDrift({ services, endpoints }, runs, args.get('case'));
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'kdebug-bench-'));
const file = join(dir, 'iptables-save.txt');

try {
  let t = performance.now();
  // the generated text is dropped once written: the measurements below start from a clean heap
  const { size, lines } = writeDump(file, clusterDump({ services, endpoints }));
  console.log(
    `dump: ${services} Services x ${endpoints} endpoints, ${mb(size)}, ${lines} lines (generated in ${ms(performance.now() - t)})`,
  );

  const floor: number[] = [];
  const parse: number[] = [];
  const trees: number[] = [];
  for (let i = 0; i < runs; i++) {
    floor.push(time(() => readFileSync(file, 'utf8').split('\n')));
    parse.push(time(() => parseIptables(readFileSync(file))));
    trees.push(time(() => buildServiceTrees(parseIptables(readFileSync(file)))));
  }
  // median and best of the runs, each against the floor's: noise on a shared VM only adds time
  const f = median(floor);
  const fb = Math.min(...floor);
  const vs = (xs: number[]) =>
    `${ms(median(xs))} (${(median(xs) / f).toFixed(2)}x floor); best ${ms(Math.min(...xs))} (${(Math.min(...xs) / fb).toFixed(2)}x)`;
  console.log(`read + split (floor)  ${ms(f)}; best ${ms(fb)}`);
  console.log(`read + parse          ${vs(parse)}`);
  console.log(`read + parse + trees  ${vs(trees)}`);

  // Cilium: its bpf lb list of as many Services and backends, read into trees, against the
  // same floor of reading and splitting its bytes (the target: the iptables dump's ratio)
  {
    const bpf = join(dir, 'cilium-bpf-lb-list.txt');
    const { size: bpfSize } = writeDump(bpf, ciliumBpfList({ services, backends: endpoints }));
    const cFloor: number[] = [];
    const cTrees: number[] = [];
    for (let i = 0; i < runs; i++) {
      cFloor.push(time(() => readFileSync(bpf, 'utf8').split('\n')));
      cTrees.push(
        time(() => buildCiliumTrees(parseCilium(readFileSync(bpf, 'utf8'), bpf), new Map())),
      );
    }
    const cf = median(cFloor);
    console.log(
      `cilium bpf lb list (${mb(bpfSize)}): read + split ${ms(cf)}; read + parse + trees ${ms(median(cTrees))} = ${(median(cTrees) / cf).toFixed(2)}x floor (iptables: ${(median(trees) / f).toFixed(2)}x)`,
    );
  }

  // the median of three fresh processes: one process's peak varies by a few MB from run to run
  const rss = (what: string) =>
    median(
      [1, 2, 3].map(() =>
        Number(
          spawnSync(process.execPath, [
            process.argv[1]!,
            '--child',
            what,
            '--file',
            file,
          ]).stdout.toString(),
        ),
      ),
    );
  const base = rss('none');
  const floorRss = rss('floor') - base;
  const treesRss = rss('trees') - base;
  console.log(
    `peak memory (RSS above an idle node ${mb(base)}): floor ${mb(floorRss)}, parse + trees ${mb(treesRss)} = ${(treesRss / size).toFixed(2)}x the dump (target < 4x)`,
  );

  // each part in its own block: what one measures is garbage before the next one starts
  {
    const rs = parseIptables(readFileSync(file));
    const forest = buildServiceTrees(rs);
    t = performance.now();
    const index = buildSearchIndex(rs, forest);
    console.log(
      `search index: ${index.docs.length} documents, built in ${ms(performance.now() - t)}`,
    );
    const sample = forest.services[Math.floor(forest.services.length / 2)]!;
    const ep = sample.endpoints[0];
    const queries = [
      'nginx',
      'svc-4242',
      'ns17/svc-1717',
      'svc-99',
      sample.hash!.slice(0, 4),
      sample.chains.svc!,
      ep?.address ?? '10.128.0.1',
      '8080',
      '30080',
      sample.clusterIP!,
      'kube-sep',
      'nodeports',
      'masquerade',
      'sv-4242',
      'ns1/svc-1:http',
      '10.1',
      'KUBE-MARK-MASQ',
      'zzzzzz',
      'cluster ip',
      '172.30.1',
    ];
    for (const q of queries) index.search(q); // warm
    const lat: number[] = [];
    for (let i = 0; i < 3; i++) for (const q of queries) lat.push(time(() => index.search(q)));
    console.log(
      `fuzzy query over ${index.docs.length} documents: median ${ms(median(lat))}, worst ${ms(Math.max(...lat))} (targets 16 ms / 50 ms; ${lat.length} queries)`,
    );
  }

  // expect + drift per node (issue 3), for the releases it models and one it does not
  benchExpectDrift({ services, endpoints }, runs);
  {
    // whole processes on the 10,000-Service snapshot (issue 16): one Service's answer against a
    // process that only reads and JSON.parses objects.json and reads and splits the dump
    const { clusterObjects } = await import('./cluster-dump.js');
    const snap = join(dir, 'snapshot');
    mkdirSync(join(snap, 'nodes', 'node-a'), { recursive: true });
    writeFileSync(
      join(snap, 'objects.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: clusterObjects({ services, endpoints }),
      }),
    );
    copyFileSync(file, join(snap, 'nodes', 'node-a', 'iptables-save.txt'));
    writeFileSync(join(snap, 'meta.json'), '{}');
    const hwm = join(dir, 'hwm.mjs');
    // each process reports its peak RSS (VmHWM, worker threads included) on fd 3 as it exits
    writeFileSync(
      hwm,
      "import { readFileSync, writeSync } from 'node:fs';\nimport { isMainThread } from 'node:worker_threads';\nif (isMainThread) process.on('exit', () => writeSync(3, /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]));\n",
    );
    const floorJs = join(dir, 'floor.mjs');
    writeFileSync(
      floorJs,
      `import { readFileSync } from 'node:fs';\nJSON.parse(readFileSync(${JSON.stringify(join(snap, 'objects.json'))}, 'utf8'));\nreadFileSync(${JSON.stringify(join(snap, 'nodes', 'node-a', 'iptables-save.txt'))}, 'utf8').split('\\n');\n`,
    );
    const proc = (argv: string[]) => {
      globalThis.gc?.();
      const t = performance.now();
      const r = spawnSync(process.execPath, ['--import', hwm, ...argv], {
        stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      });
      return { ms: performance.now() - t, kb: Number(r.output[3]?.toString() ?? 0) };
    };
    const side = (a: string[], b: string[]) => {
      const xs: { ms: number; kb: number }[] = [];
      const ys: { ms: number; kb: number }[] = [];
      for (let i = 0; i < runs; i++) {
        xs.push(proc(a));
        ys.push(proc(b));
      }
      return { a: xs, b: ys };
    };
    const svcArgs = ['bin/kdebug.js', 'svc', 'svc-4242', '-n', 'ns42', '--snapshot', snap];
    const r = side([floorJs], [...svcArgs, '-o', 'text']);
    const fm = median(r.a.map((x) => x.ms));
    const sm = median(r.b.map((x) => x.ms));
    const fk = median(r.a.map((x) => x.kb));
    const sk = median(r.b.map((x) => x.kb));
    console.log(
      `kdebug svc on the ${services}-Service snapshot, whole process: ${ms(sm)} vs read + JSON.parse + split ${ms(fm)} = ${(sm / fm).toFixed(2)}x (target 2x); peak RSS ${mb(sk * 1024)} vs ${mb(fk * 1024)} = ${(sk / fk).toFixed(2)}x (target 2x)`,
    );
    // kdebug rules on the dump, JSON out, against iptables-restore --test (in a network namespace
    // of its own: it talks to the kernel) and against read + split
    const floorRules = join(dir, 'split.mjs');
    writeFileSync(
      floorRules,
      `import { readFileSync } from 'node:fs';\nreadFileSync(${JSON.stringify(file)}, 'utf8').split('\\n');\n`,
    );
    const rr = side([floorRules], ['bin/kdebug.js', 'rules', '--file', file, '-o', 'json']);
    const split = median(rr.a.map((x) => x.ms));
    const rules = median(rr.b.map((x) => x.ms));
    const restore: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const x = spawnSync('unshare', ['--net', 'iptables-restore', '--test', file], {
        stdio: 'ignore',
      });
      if (x.status !== 0) break;
      restore.push(performance.now() - t);
    }
    console.log(
      `kdebug rules --file (${mb(size)}) -o json, whole process: ${ms(rules)} = ${(rules / split).toFixed(2)}x read + split (${ms(split)}; target 6x); iptables-restore --test ${restore.length ? ms(median(restore)) : 'not run (needs root, unshare and iptables)'}`,
    );
    // the same on Cilium's bpf lb list of as many Services and backends (issue 34: within the
    // iptables dump's ratio to its read + split)
    const bpfFile = join(dir, 'cilium-bpf-lb-list.txt');
    writeFileSync(bpfFile, ciliumBpfList({ services, backends: endpoints }));
    const floorBpf = join(dir, 'bpf-split.mjs');
    writeFileSync(
      floorBpf,
      `import { readFileSync } from 'node:fs';\nreadFileSync(${JSON.stringify(bpfFile)}, 'utf8').split('\\n');\n`,
    );
    const cr = side([floorBpf], ['bin/kdebug.js', 'rules', '--file', bpfFile, '-o', 'json']);
    const bpfSplit = median(cr.a.map((x) => x.ms));
    const bpfRules = median(cr.b.map((x) => x.ms));
    console.log(
      `kdebug rules --file (cilium bpf lb list, ${mb(statSync(bpfFile).size)}) -o json, whole process: ${ms(bpfRules)} = ${(bpfRules / bpfSplit).toFixed(2)}x read + split (${ms(bpfSplit)}); iptables: ${(rules / split).toFixed(2)}x read + split`,
    );
    // kdebug rules on kube-proxy's nftables table of the same cluster (JSON listing), against
    // read + JSON.parse of that listing (issue 17): the same ratio as the iptables parser's
    const { nftListing } = await import('./nft-dump.js');
    const nftFile = join(dir, 'nft.json');
    writeFileSync(nftFile, nftListing({ services, endpoints }));
    const floorNft = join(dir, 'nft-floor.mjs');
    writeFileSync(
      floorNft,
      `import { readFileSync } from 'node:fs';\nJSON.parse(readFileSync(${JSON.stringify(nftFile)}, 'utf8'));\n`,
    );
    const nr = side([floorNft], ['bin/kdebug.js', 'rules', '--file', nftFile, '-o', 'json']);
    const nftParse = median(nr.a.map((x) => x.ms));
    const nftRules = median(nr.b.map((x) => x.ms));
    console.log(
      `kdebug rules --file (nftables JSON, ${mb(statSync(nftFile).size)}) -o json, whole process: ${ms(nftRules)} = ${(nftRules / nftParse).toFixed(2)}x read + JSON.parse (${ms(nftParse)}); iptables: ${(rules / split).toFixed(2)}x read + split`,
    );
    // the TUI: the demo's first frame (its steps pending) and its diagnosis on screen against a
    // Node.js program that prints a line (the issue's baseline; `node -e 0` beside it), and the
    // Diagnosis screen complete on the big snapshot against the svc floor, each in a
    // pseudo-terminal (script); the baselines run in the same terminal until they exit, so the
    // terminal's own start (script, stty) is on both sides
    const tty = (args: string[], until: 'first frame' | 'diagnosed' | 'exit' = 'diagnosed') =>
      new Promise<number>((done) => {
        const t = performance.now();
        const cmd = `stty cols 100 rows 30; exec ${[process.execPath, ...args].map((a) => `'${a}'`).join(' ')}`;
        const child = spawn('script', ['-qfc', cmd, '/dev/null'], {
          stdio: ['pipe', 'pipe', 'ignore'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (until !== 'exit' && shows(out, until)) {
            const took = performance.now() - t;
            child.kill('SIGTERM');
            done(took);
          }
        });
        child.on('exit', () => done(until === 'exit' ? performance.now() - t : Number.NaN));
      });
    /** The frame drawn: the steps (pending at first), or the last frame with none pending. */
    const shows = (out: string, until: 'first frame' | 'diagnosed') => {
      // eslint-disable-next-line no-control-regex
      const text = out.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '');
      if (until === 'first frame') return text.includes('10 Hairpin');
      const last = text.slice(text.lastIndexOf('kdebug ['));
      return last.includes('10 Hairpin') && !/diagnosing|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(last);
    };
    const bare: number[] = [];
    const line: number[] = [];
    const floor: number[] = [];
    const demo: number[] = [];
    const answered: number[] = [];
    const big: number[] = [];
    for (let i = 0; i < runs; i++) {
      bare.push(await tty(['-e', '0'], 'exit'));
      line.push(await tty(['-e', 'console.log("kdebug")'], 'exit'));
      demo.push(await tty(['bin/kdebug.js', 'demo'], 'first frame'));
      answered.push(await tty(['bin/kdebug.js', 'demo']));
      floor.push(await tty([floorJs], 'exit'));
      big.push(await tty(svcArgs));
    }
    const tf = median(floor);
    console.log(
      `TUI first frame (demo): ${ms(median(demo))} = ${(median(demo) / median(line)).toFixed(2)}x a Node.js program that prints a line in the same terminal (${ms(median(line))}; target 3x), ${(median(demo) / median(bare)).toFixed(2)}x node -e 0 (${ms(median(bare))}); its diagnosis on screen ${ms(median(answered))} = ${(median(answered) / median(line)).toFixed(2)}x; Diagnosis complete on the ${services}-Service snapshot: ${ms(median(big))} = ${(median(big) / tf).toFixed(2)}x the svc floor in the same terminal (${ms(tf)}; target 2x)`,
    );
  }
  {
    // whole processes: the npm-installed CLI against the single executable (npm run build:exe)
    const exe = 'release/kdebug-linux-x64';
    const whole = (cmd: string, argv: string[]) =>
      Array.from({ length: runs }, () =>
        time(() =>
          spawnSync(cmd, argv, { env: { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') } }),
        ),
      );
    const npm = whole(process.execPath, ['bin/kdebug.js', 'demo', '-o', 'text']);
    if (existsSync(exe)) {
      whole(exe, ['--version']); // the first run writes its files
      const single = whole(exe, ['demo', '-o', 'text']);
      console.log(
        `kdebug demo -o text, whole process: npm install ${ms(median(npm))}, single executable ${ms(median(single))}`,
      );
    } else
      console.log(
        `kdebug demo -o text, whole process: ${ms(median(npm))} (${exe}: npm run build:exe first)`,
      );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
