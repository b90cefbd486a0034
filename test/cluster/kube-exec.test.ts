// Exec in a Pod over WebSocket (v5.channel.k8s.io) through client-node, against the fake API
// server's pods/exec: output channels, exit codes from the status channel, and each way it fails.
// IP conventions: see objects.ts (Pods 10.244.0.0/16, nodes 192.0.2.10/11).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { execOutcome, KubeApi } from '../../src/cluster/kube-api.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { aPod } from './objects.js';

// what each fake command does: argv[0] picks the behaviour
const handler: ExecHandler = (req) => {
  const [cmd, ...args] = req.command;
  switch (cmd) {
    case 'echo':
      return { stdout: `${args.join(' ')}\n`, exitCode: 0 };
    case 'fail':
      return {
        stdout: 'partial\n',
        stderr: 'iptables-save: permission denied (you must be root)\n',
        exitCode: Number(args[0]),
      };
    case 'big':
      return { stdout: 'x'.repeat(Number(args[0])), exitCode: 0 };
    case 'big-stderr':
      return { stderr: 'e'.repeat(Number(args[0])), exitCode: 1 };
    case 'sh':
      return spawn('sh', ['-c', args[0]!]);
    case 'hang':
      return new Promise(() => undefined);
    case 'whoami':
      return {
        stdout: `${req.user} ${req.namespace}/${req.pod.metadata?.name}/${req.container} ${req.protocol}`,
        exitCode: 0,
      };
    default:
      throw new Error(`exec: "${cmd}": executable file not found in $PATH: unknown`);
  }
};

const MIB = 1024 * 1024;

async function until(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((done) => setTimeout(done, 20));
  }
}

const pods = [
  aPod('web-1'),
  aPod('two-containers', 'default', { containers: ['app', 'sidecar'] }),
  { ...aPod('unscheduled'), spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } },
  aPod('kube-proxy-7xk2p', 'kube-system', { labels: { 'k8s-app': 'kube-proxy' } }),
];

describe('exec in a Pod', () => {
  let fake: FakeApi;
  let api: KubeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: pods,
      exec: handler,
      floodExec: (req) => req.command[0] === 'flood',
      rbac: {
        deny: [{ verbs: ['create'], resources: ['pods/exec'], namespaces: ['kube-system'] }],
      },
    });
    api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {}, timeoutMs: 5000 });
  });
  after(() => fake.close());

  const cases: [
    string,
    string[],
    { stdout: string; stderr: string; exitCode: number | null; error?: string },
  ][] = [
    [
      'stdout and exit code 0',
      ['echo', 'hello', 'world'],
      { stdout: 'hello world\n', stderr: '', exitCode: 0 },
    ],
    [
      'stderr and a non-zero exit code from NonZeroExitCode',
      ['fail', '3'],
      {
        stdout: 'partial\n',
        stderr: 'iptables-save: permission denied (you must be root)\n',
        exitCode: 3,
      },
    ],
    [
      'exit code 127',
      ['fail', '127'],
      {
        stdout: 'partial\n',
        stderr: 'iptables-save: permission denied (you must be root)\n',
        exitCode: 127,
      },
    ],
    [
      'a command the runtime cannot start (InternalError)',
      ['iptables-legacy-save'],
      {
        stdout: '',
        stderr: '',
        exitCode: null,
        error: 'exec: "iptables-legacy-save": executable file not found in $PATH: unknown',
      },
    ],
    [
      'a spawned process streaming both channels',
      ['sh', 'printf "out1 "; printf err >&2; printf out2; exit 5'],
      { stdout: 'out1 out2', stderr: 'err', exitCode: 5 },
    ],
    [
      'multi-byte UTF-8 split across frames',
      ['sh', `printf '\\342\\226'; sleep 0.05; printf '\\210 done'`],
      { stdout: '█ done', stderr: '', exitCode: 0 },
    ],
  ];
  for (const [name, command, want] of cases) {
    it(name, async () => {
      const r = await api.exec('default', 'web-1', 'app', command);
      assert.deepEqual(r, want);
    });
  }

  it('keeps a large output intact', async () => {
    const r = await api.exec('default', 'web-1', undefined, ['big', String(3 * 1024 * 1024)]);
    assert.deepEqual(
      [r.exitCode, r.stdout.length, /^x+$/.test(r.stdout)],
      [0, 3 * 1024 * 1024, true],
    );
  });

  it('keeps the head of a large stderr: only its first line is told', async () => {
    const r = await api.exec('default', 'web-1', 'app', ['big-stderr', String(MIB)]);
    assert.deepEqual([r.exitCode, r.stderr.length], [1, 64 * 1024]);
  });

  it('reads at most the limit of a node that never stops writing, then closes the socket', async () => {
    const capped = await KubeApi.connect({
      kubeconfig: fake.kubeconfig(),
      env: {},
      timeoutMs: 20_000,
      maxExecOutputBytes: MIB,
    });
    const rss = process.memoryUsage().rss;
    const started = Date.now();
    const r = await capped.exec('default', 'web-1', 'app', ['flood']);
    assert.deepEqual(
      { printed: r.stdout.length, exitCode: r.exitCode, lost: r.lost },
      { printed: 0, exitCode: null, lost: true },
    );
    assert.match(r.error ?? '', /^output over 1 MiB, not read \(--max-output-mib/);
    assert.ok(Date.now() - started < 10_000, 'it waited for the time limit');
    const flood = fake.floods.at(-1)!;
    await until(() => flood.closed);
    const stopped = flood.sent;
    await new Promise((done) => setTimeout(done, 300));
    assert.equal(flood.sent, stopped, 'the server kept writing after the socket closed');
    assert.ok(flood.sent < 32 * MIB, `the server wrote ${flood.sent} bytes`);
    assert.ok(process.memoryUsage().rss - rss < 200 * MIB, 'memory grew with the output');
  });

  it('sends the request the API expects: v5 subprotocol, tty=false, one command= per argv element', async () => {
    const before = fake.requests.length;
    const r = await api.exec('default', 'web-1', undefined, ['whoami', 'a b']);
    assert.equal(r.stdout, 'admin default/web-1/app v5.channel.k8s.io');
    const q = fake.requests[before]!.query;
    assert.deepEqual(
      [
        q.getAll('command'),
        q.get('tty'),
        q.get('stdin'),
        q.get('stdout'),
        q.get('stderr'),
        q.get('container'),
      ],
      [['whoami', 'a b'], 'false', 'false', 'true', 'true', ''],
    );
  });

  const failures: [string, string, string, string | undefined, string][] = [
    [
      'RBAC refusing pods/exec',
      'kube-system',
      'kube-proxy-7xk2p',
      undefined,
      'exec into pod kube-system/kube-proxy-7xk2p: access denied by RBAC: user "admin" cannot create pods/exec in namespace kube-system',
    ],
    [
      'a Pod that does not exist',
      'default',
      'nope',
      undefined,
      'exec into pod default/nope: pod "nope" not found in namespace default',
    ],
    [
      'a container that does not exist',
      'default',
      'web-1',
      'debugger',
      'exec into pod default/web-1: container debugger is not valid for pod web-1 (containers: app)',
    ],
    [
      'no container named in a Pod with two',
      'default',
      'two-containers',
      undefined,
      'exec into pod default/two-containers: a container name must be specified, choose one of: app, sidecar',
    ],
    [
      'a Pod not scheduled yet',
      'default',
      'unscheduled',
      'app',
      'exec into pod default/unscheduled: pod unscheduled does not have a node assigned yet',
    ],
  ];
  for (const [name, ns, pod, container, error] of failures) {
    it(`explains ${name}`, async () => {
      assert.deepEqual(await api.exec(ns, pod, container, ['echo', 'x']), {
        stdout: '',
        stderr: '',
        exitCode: null,
        error,
      });
    });
  }

  it('gives up on a command that does not finish in time', async () => {
    const quick = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {}, timeoutMs: 300 });
    const t = Date.now();
    const r = await quick.exec('default', 'web-1', 'app', ['hang']);
    assert.deepEqual(
      [r.exitCode, r.error],
      [null, 'command in pod default/web-1 did not finish within 0.3s'],
    );
    assert.ok(Date.now() - t < 3000);
  });

  it('reads exit codes from status payloads (INTEGRATION.md 2.6)', () => {
    const table: [Parameters<typeof execOutcome>[0], ReturnType<typeof execOutcome>][] = [
      [{ status: 'Success' }, { exitCode: 0 }],
      [
        {
          status: 'Failure',
          reason: 'NonZeroExitCode',
          message:
            'command terminated with non-zero exit code: error executing command [sh -c exit 2], exit code 2',
          details: { causes: [{ reason: 'ExitCode', message: '2' }] },
        },
        { exitCode: 2 },
      ],
      [
        {
          status: 'Failure',
          reason: 'InternalError',
          code: 500,
          message: 'container not running (0a1b)',
        },
        { exitCode: null, error: 'container not running (0a1b)' },
      ],
      [undefined, { exitCode: null, error: 'the exec stream closed without an exit status' }],
      // the API server could not hand the exec to the kubelet: its address and why, not the URL
      // (the message kube-apiserver v1.37 sent in the lab for a Node that does not exist)
      [
        {
          status: 'Failure',
          reason: 'InternalError',
          code: 500,
          message:
            'Internal error occurred: error sending request: Post "https://198.51.100.1:10250/exec/kube-system/kube-proxy-sim-0000/kube-proxy?command=iptables-nft&command=-t&command=nat&command=-S&error=1&output=1": dial tcp 198.51.100.1:10250: connect: network is unreachable',
        },
        {
          exitCode: null,
          error:
            "the API server could not connect to the node's kubelet at 198.51.100.1:10250: network is unreachable",
        },
      ],
      // older API servers (kubernetes/kubernetes#62511, #107186; a kubelet without its serving
      // certificate)
      [
        {
          status: 'Failure',
          message:
            'error dialing backend: dial tcp 192.168.1.14:10250: getsockopt: no route to host',
        },
        {
          exitCode: null,
          error:
            "the API server could not connect to the node's kubelet at 192.168.1.14:10250: no route to host",
        },
      ],
      [
        {
          status: 'Failure',
          message: 'error dialing backend: dial tcp 10.0.3.123:10250: i/o timeout',
        },
        {
          exitCode: null,
          error:
            "the API server could not connect to the node's kubelet at 10.0.3.123:10250: i/o timeout",
        },
      ],
      [
        { status: 'Failure', message: 'error dialing backend: remote error: tls: internal error' },
        {
          exitCode: null,
          error:
            "the API server could not reach the node's kubelet: remote error: tls: internal error",
        },
      ],
    ];
    for (const [status, want] of table) assert.deepEqual(execOutcome(status), want);
  });
});

describe('exec against an older API server (v4.channel.k8s.io)', () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: pods,
      exec: handler,
      execProtocols: ['v4.channel.k8s.io'],
    });
  });
  after(() => fake.close());

  it('still reads output and exit codes', async () => {
    const api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });
    assert.equal(
      (await api.exec('default', 'web-1', 'app', ['whoami'])).stdout,
      'admin default/web-1/app v4.channel.k8s.io',
    );
    assert.deepEqual(await api.exec('default', 'web-1', 'app', ['fail', '4']), {
      stdout: 'partial\n',
      stderr: 'iptables-save: permission denied (you must be root)\n',
      exitCode: 4,
    });
  });
});
