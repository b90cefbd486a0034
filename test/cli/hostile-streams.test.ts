// What a compromised node, cluster or input can throw at kdebug: output that never ends, and bytes a
// terminal obeys. The built CLI reads at most --max-output-mib of any of it, stops the sender,
// fails that one read in one line, and lets no escape sequence reach stderr.
// IP conventions: the demo snapshot's (the demo cluster): nodes 10.0.12.7 and 10.0.12.11,
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, nginx-svc 10.1.190.219:8080.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeApiError } from '../../src/cluster/kube/errors.js';
import type { KubeObject } from '../../src/core/model.js';
import { hermetic, kdebugAsync, ROOT } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';

const MIB = 1024 * 1024;

// what a hostile runtime, name or path may carry: a window title, a clipboard write, a screen
// clear (as ESC [ and as the C1 CSI byte) and a right-to-left override
const ESCAPES = '\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b2J\u202e';
/** What a terminal could obey, or show reordered: ESC, BEL and every other C0/C1 control, BIDI. */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/**
 * The built CLI with stdin fed forever (as `yes | kdebug ...`), until it exits. Also its peak
 * memory (VmHWM), sampled while it runs.
 */
function feedForever(args: string[]): Promise<{
  code: number | null;
  stderr: string;
  ms: number;
  peakMib: number;
}> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['bin/kdebug.js', ...args], {
      cwd: ROOT,
      env: { ...hermetic(), NO_COLOR: '1' },
    });
    let stderr = '';
    let peakMib = 0;
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.stdin.on('error', () => undefined); // it stopped reading: that is the point
    const chunk = Buffer.alloc(64 * 1024, 'y\n');
    const pour = () => {
      while (child.stdin.writable && child.stdin.write(chunk));
      if (child.stdin.writable) child.stdin.once('drain', pour);
    };
    pour();
    const sample = setInterval(() => {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readStatus(child.pid))?.[1];
      if (hwm) peakMib = Math.max(peakMib, Number(hwm) / 1024);
    }, 20);
    child.on('close', (code) => {
      clearInterval(sample);
      resolve({ code, stderr, ms: Date.now() - started, peakMib });
    });
  });
}

const readStatus = (pid: number | undefined) => {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return ''; // it has just exited
  }
};

describe('input that never ends', () => {
  it('rules --file - stops reading stdin at --max-output-mib and says so in one line', async () => {
    const r = await feedForever(['rules', '--file', '-', '-o', 'text', '--max-output-mib', '1']);
    assert.deepEqual([r.code, r.stderr], [2, 'kdebug: stdin: over 1 MiB, not read\n']);
    assert.ok(r.ms < 10_000, `it took ${r.ms} ms`);
  });

  it('rules --file - is held to 256 MiB without the flag, in bounded memory', async () => {
    const r = await feedForever(['rules', '--file', '-', '-o', 'text']);
    assert.deepEqual([r.code, r.stderr], [2, 'kdebug: stdin: over 256 MiB, not read\n']);
    assert.ok(r.ms < 30_000, `it took ${r.ms} ms`);
    assert.ok(r.peakMib < 768, `it grew to ${Math.round(r.peakMib)} MiB`);
  });

  const dir = mkdtempSync(join(tmpdir(), 'kdebug-hostile-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rules --file refuses a file over the limit by its size, before reading it', async () => {
    const sparse = join(dir, 'iptables-save.txt');
    writeFileSync(sparse, '');
    truncateSync(sparse, 4096 * MIB); // 4 GiB of nothing: reading it would be slow and fail
    const started = Date.now();
    const r = await kdebugAsync(['rules', '--file', sparse, '--max-output-mib', '1']);
    assert.deepEqual([r.code, r.stderr], [2, `kdebug: ${sparse}: over 1 MiB, not read\n`]);
    assert.ok(Date.now() - started < 10_000);
  });

  it('rules --file reads a device that has no size as it reads stdin', async () => {
    const r = await kdebugAsync(['rules', '--file', '/dev/zero', '--max-output-mib', '1']);
    assert.deepEqual([r.code, r.stderr], [2, 'kdebug: /dev/zero: over 1 MiB, not read\n']);
  });

  it('refuses a limit kdebug cannot hold in one string', async () => {
    const r = await kdebugAsync(['rules', '--file', '-', '--max-output-mib', '512']);
    assert.deepEqual(
      [r.code, r.stderr],
      [2, 'kdebug: --max-output-mib 512: give a whole number of MiB from 1 to 511\n'],
    );
  });
});

describe('a node that never stops writing', () => {
  let fake: FakeApi;
  let kubeconfig: string;
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-hostile-'));
  before(async () => {
    fake = await startFakeApi({
      objects: readSnapshotObjects(),
      // kube-proxy's image runs iptables-save: this one never ends
      floodExec: (req) => req.command.join(' ') === 'iptables-save',
      exec: () => ({ stdout: '', exitCode: 0 }),
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const live = (...args: string[]) => [
    ...args,
    '--kubeconfig',
    kubeconfig,
    '--via',
    'kube-proxy',
    '--max-output-mib',
    '1',
  ];

  /** Every endless exec was cut off by kdebug, after about the limit. */
  const allStopped = () => {
    assert.ok(fake.floods.length > 0, 'no exec was flooded');
    for (const f of fake.floods) {
      assert.ok(f.closed, `${f.path} is still open`);
      assert.ok(f.sent < 32 * MIB, `${f.path}: ${f.sent} bytes sent`);
    }
  };

  it('rules --node: the read fails with the reason, the exec socket is closed', async () => {
    const r = await kdebugAsync(live('rules', '--node', 'vm-12-11-centos', '-o', 'text'));
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^kdebug: context fake: could not read the rules of vm-12-11-centos \(exec kube-system\/kube-proxy-\w+: output over 1 MiB, not read \(--max-output-mib raises the limit\)\)$/m,
    );
    // said once: no line before it saying how the node was reached and failed
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
    allStopped();
  });

  it('--via auto does not try the next way: it would read the same', async () => {
    const args = live('rules', '--node', 'vm-12-11-centos', '-o', 'text');
    const r = await kdebugAsync(args.map((a) => (a === 'kube-proxy' ? 'auto' : a)));
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /could not read the rules of vm-12-11-centos \(exec kube-system\/kube-proxy-\w+: output over 1 MiB, not read/,
    );
    // not "cannot run iptables-save on node ...: kube-proxy Pod: ...; debug Pod: ...; SSH: ..."
    assert.doesNotMatch(r.stderr, /cannot run iptables-save/);
    allStopped();
  });

  it('snapshot save: the read is lost, not recorded as a half dump, and the snapshot is partial', async () => {
    const out = join(dir, 'snapshot');
    const r = await kdebugAsync(live('snapshot', 'save', out, '--service', 'nginx-svc'));
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^kdebug: lost: iptables-save on node vm-12-7-centos: exec kube-system\/kube-proxy-\w+: output over 1 MiB, not read/m,
    );
    // a few failed nodes: one entry per node and command, in its own words, as older kdebug reads
    const meta = JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as {
      nodeErrors: { node: string; command: string; error: string; lost?: boolean }[];
      nodeErrorGroups?: unknown;
    };
    assert.equal(meta.nodeErrorGroups, undefined);
    const capped = meta.nodeErrors.filter((e) => /over 1 MiB, not read/.test(e.error));
    assert.deepEqual(capped.map((e) => [e.node, e.command, e.lost]).sort(), [
      ['vm-12-11-centos', 'iptables-save', true],
      ['vm-12-7-centos', 'iptables-save', true],
    ]);
    assert.ok(meta.nodeErrors.every((e) => !e.error.includes('{node}')));
    for (const node of ['vm-12-11-centos', 'vm-12-7-centos'])
      assert.equal(existsSync(join(out, 'nodes', node, 'iptables-save.txt')), false);
    allStopped();
  });

  it('svc: the rules are not observed, and the report says why', async () => {
    const r = await kdebugAsync(live('svc', 'nginx-svc', '-o', 'json'));
    const report = JSON.parse(r.stdout) as { partial: boolean; notRead: { why: string }[] };
    assert.equal(report.partial, true);
    assert.equal(report.notRead.length, 2);
    for (const n of report.notRead) assert.match(n.why, /output over 1 MiB, not read/);
    allStopped();
  });
});

describe('an API server that never stops answering', () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: readSnapshotObjects(),
      flood: (r) => r.path === '/api/v1/pods',
    });
  });
  after(() => fake.close());
  const connect = (o: { maxBodyBytes: number; pageSize?: number }) =>
    KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {}, timeoutMs: 20_000, ...o });

  it('reads at most the limit of one answer, then hangs up', async () => {
    const api = await connect({ maxBodyBytes: MIB });
    await assert.rejects(
      api.list('/api/v1/pods'),
      (e: unknown) =>
        e instanceof KubeApiError &&
        e.reason === 'server' &&
        /answered GET \/api\/v1\/pods with over 1 MiB, not read$/.test(e.message),
    );
    const flood = fake.floods.at(-1)!;
    await until(() => flood.closed);
    assert.ok(flood.sent < 32 * MIB, `${flood.sent} bytes sent`);
  });

  it("holds a list's pages together to the same limit", async () => {
    // ten kube-system Pods of 3 to 5 KiB, a page each: together they pass 16 KiB
    const path = '/api/v1/namespaces/kube-system/pods';
    const api = await connect({ maxBodyBytes: 16 * 1024, pageSize: 1 });
    await assert.rejects(api.list(path), /not read$/);
    const whole = await connect({ maxBodyBytes: MIB, pageSize: 1 });
    assert.equal((await whole.list(path)).items.length, 10);
  });
});

describe('escapes on stderr', () => {
  let fake: FakeApi;
  let kubeconfig: string;
  before(async () => {
    const objects = readSnapshotObjects().map(hostile);
    fake = await startFakeApi({
      objects,
      // the Pod that is gone may not be read: a refusal, said as a warning
      rbac: { deny: [{ verbs: ['get'], resources: ['pods'], namespaces: ['default'] }] },
      exec: (req) => {
        if (req.command[0]?.startsWith('iptables')) return { stdout: '', exitCode: 0 };
        // the container runtime's refusal, as the node sent it
        throw new Error(`oci runtime exec failed: ${ESCAPES}`);
      },
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
  });
  after(() => fake.close());

  const RUNS: [string, string[], RegExp][] = [
    [
      'node access lines and an exec error from the node',
      ['svc', 'nginx-svc', '--via', 'kube-proxy', '-o', 'text'],
      /^kdebug: vm-12-11-centos: rules via exec kube-system\/kube-proxy-evil.*oci runtime exec failed: /m,
    ],
    [
      '"could not read" warnings',
      ['snapshot', 'save', '--service', 'nginx-svc', '--via', 'kube-proxy'],
      /^kdebug: warning: could not read Pod default\/gone-/m,
    ],
    [
      'the top-level error, from a path',
      ['rules', '--file', `/nonexistent/${ESCAPES}`],
      /^kdebug: \/nonexistent\/.*: no such file$/m,
    ],
    [
      'the top-level error, from the kubeconfig',
      ['svc', 'nginx-svc', '--context', `prod${ESCAPES}`],
      /^kdebug: .*prod/m,
    ],
  ];
  for (const [path, args, said] of RUNS)
    it(`none reaches stderr through ${path}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kdebug-hostile-'));
      try {
        const out = args[0] === 'snapshot' ? [join(dir, 'snapshot')] : [];
        const r = await kdebugAsync([...args, ...out, '--kubeconfig', kubeconfig]);
        assert.match(r.stderr, said);
        assert.doesNotMatch(r.stderr, OBEYED);
        // each control shown escaped: the reader sees what the input holds
        assert.ok(r.stderr.includes('\\x1b]0;pwned\\x07'), r.stderr);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

/** The demo's objects (read once, synchronously, for the fakes' options). */
function readSnapshotObjects(): KubeObject[] {
  return (
    JSON.parse(readFileSync('snapshots/nginx-svc/objects.json', 'utf8')) as { items: KubeObject[] }
  ).items;
}

/**
 * The demo, turned hostile: a kube-proxy Pod whose name carries escapes, and an endpoint that
 * points at a Pod, also named with escapes, that is gone.
 */
function hostile(o: KubeObject): KubeObject {
  const name = o.metadata?.name ?? '';
  if (o.kind === 'Pod' && name.startsWith('kube-proxy-'))
    return {
      ...o,
      metadata: { ...o.metadata, name: `kube-proxy-evil${ESCAPES}${name.slice(-5)}` },
    };
  if (o.kind === 'EndpointSlice' && name.startsWith('nginx-svc')) {
    const endpoints = (o['endpoints'] as object[] | undefined) ?? [];
    const gone = {
      addresses: ['10.244.1.99'],
      conditions: { ready: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: `gone-${ESCAPES}` },
    };
    return { ...o, endpoints: [...endpoints, gone] };
  }
  return o;
}

async function until(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((done) => setTimeout(done, 20));
  }
}
