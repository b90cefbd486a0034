// `kdebug svc` and `kdebug demo` as a user runs them: the built CLI, its output and exit codes,
// offline on the scenario snapshots and live against the fake API server.
// IP conventions: the demo snapshot's (the demo cluster): nodes 10.0.12.7 and 10.0.12.11,
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, nginx-svc 10.1.190.219:8080.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { kdebug, kdebugAsync, ROOT } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';

const golden = (name: string) => readFileSync(join(ROOT, 'test/golden/svc', name), 'utf8');

const live = kdebugAsync;

describe('kdebug svc (built CLI)', () => {
  it('takes service and services as kubectl does, for svc', () => {
    const svc = kdebug(['svc', 'nginx-svc', '--snapshot', 'snapshots/nginx-svc', '-o', 'json']);
    for (const alias of ['service', 'services']) {
      const r = kdebug([alias, 'nginx-svc', '--snapshot', 'snapshots/nginx-svc', '-o', 'json']);
      assert.equal(r.code, svc.code, r.stderr);
      assert.equal(r.stdout, svc.stdout);
    }
  });

  it('prints the golden text for a healthy Service and exits 0', () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', 'snapshots/nginx-svc', '-o', 'text']);
    assert.deepEqual([r.code, r.stderr], [0, '']);
    assert.equal(r.stdout, golden('nginx-svc.txt'));
  });

  it('exits 1 with the golden JSON when a step fails', () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', 'snapshots/selector-typo', '-o', 'json']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, golden('selector-typo.json'));
  });

  // a capture of nginx-svc read Services by name: it cannot say ngnix-svc does not exist
  it('a Service a snapshot of another did not capture is not read, exit 2, pointing at the one it holds', () => {
    const r = kdebug([
      'svc',
      'ngnix-svc',
      '--snapshot',
      'snapshots/nginx-svc',
      '-o',
      'text',
      '--verbose',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /^ \? +1 Service +Service default\/ngnix-svc was not captured$/m);
    assert.doesNotMatch(r.stdout, /does not exist|Did you mean|NXDOMAIN/);
    assert.match(r.stdout, /^ +kdebug svc nginx-svc -n default --snapshot snapshots\/nginx-svc$/m);
  });

  // without --verbose too: the conclusion is "nothing checked" and the command for the one it holds
  it('a Service held in another namespace only: the conclusion points at it, never "no problem"', () => {
    const r = kdebug(['svc', 'kube-dns', '--snapshot', 'snapshots/nginx-svc', '-o', 'text']);
    assert.equal(r.code, 2);
    assert.doesNotMatch(r.stdout, /No problem found/);
    assert.match(r.stdout, /^Nothing checked: Service default\/kube-dns was not captured\./m);
    assert.match(r.stdout, /It holds kube-system\/kube-dns\./);
    assert.match(
      r.stdout,
      /^Next: kdebug svc kube-dns -n kube-system --snapshot snapshots\/nginx-svc$/m,
    );
  });

  it('NAME:PORT and NAME:PORTNAME diagnose that port alone; a port the Service lacks fails step 1', () => {
    const run = (arg: string) => {
      const r = kdebug(['svc', arg, '--snapshot', 'snapshots/nginx-svc', '-o', 'json']);
      const doc = JSON.parse(r.stdout);
      const step = (id: string) => doc.steps.find((s: { id: string }) => s.id === id);
      return { r, doc, step };
    };
    const byName = run('kube-system/kube-dns:dns-tcp');
    assert.equal(byName.r.code, 0, byName.r.stderr);
    assert.deepEqual(byName.doc.service.ports, ['dns-tcp 53/TCP -> 53']);
    // every finding is about 53/TCP only: no UDP, no metrics port (the Pods' own ports aside)
    const titles = byName.doc.steps.flatMap((s: { findings: { title: string }[] }) =>
      s.findings.map((f) => f.title),
    );
    assert.deepEqual(
      titles.filter((t: string) => /53\/UDP|9153/.test(t)),
      [],
    );
    assert.equal(byName.step('rules').status, 'pass');
    const byNumber = run('kube-dns.kube-system:53');
    assert.deepEqual(byNumber.doc.service.ports, ['dns 53/UDP -> 53', 'dns-tcp 53/TCP -> 53']);
    const dns = (name: string) =>
      kdebug(['svc', name, '-n', 'kube-system', '--snapshot', 'snapshots/nginx-svc']);
    const whole = dns('kube-dns');
    const lacking = dns('kube-dns:9999');
    assert.equal(lacking.code, 1);
    assert.match(lacking.stdout, /^kdebug svc kube-system\/kube-dns:9999$/m);
    assert.match(lacking.stdout, /✗ {2}1 Service +kube-system\/kube-dns has no port 9999/);
    // the rest is the whole Service's diagnosis, as without the port
    const steps = (out: string) => out.split('\n').filter((l) => /^ . {2}[2-9]|^ . 10/.test(l));
    assert.equal(steps(whole.stdout).length, 9);
    assert.deepEqual(steps(lacking.stdout), steps(whole.stdout));
  });

  it('IP:PORT and IP:PORTNAME diagnose as NAME:PORT and NAME:PORTNAME do, a missing port too', () => {
    const run = (arg: string) =>
      kdebug(['svc', arg, '--snapshot', 'snapshots/nginx-svc', '-o', 'text']);
    for (const port of ['8080', 'http', '9999', 'metrics']) {
      const byIP = run(`10.1.190.219:${port}`);
      const byName = run(`nginx-svc:${port}`);
      assert.deepEqual(
        [byIP.code, byIP.stderr, byIP.stdout],
        [byName.code, byName.stderr, byName.stdout],
        port,
      );
    }
    const lacking = run('10.1.190.219:9999');
    assert.equal(lacking.code, 1);
    assert.match(lacking.stdout, /✗ {2}1 Service +default\/nginx-svc has no port 9999/);
  });

  it('takes -n for the namespace', () => {
    const r = kdebug([
      'svc',
      'kube-dns',
      '-n',
      'kube-system',
      '--snapshot',
      'snapshots/nginx-svc',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(JSON.parse(r.stdout).target, {
      namespace: 'kube-system',
      service: 'kube-dns',
    });
  });

  it('-A finds the Service by its name in whichever namespace holds it; NS/NAME names it', () => {
    const target = (args: string[]) => {
      const r = kdebug(['svc', ...args, '-A', '--snapshot', 'snapshots/nginx-svc', '-o', 'json']);
      return r.code === 2 ? r.stderr : JSON.parse(r.stdout).target;
    };
    assert.deepEqual(target(['kube-dns']), { namespace: 'kube-system', service: 'kube-dns' });
    assert.deepEqual(target(['nginx-svc']), { namespace: 'default', service: 'nginx-svc' });
    // NS/NAME, as completion offers it after -A: that one
    assert.deepEqual(target(['kube-system/kube-dns']), {
      namespace: 'kube-system',
      service: 'kube-dns',
    });
    assert.equal(
      target(['nope']),
      'kdebug: no Service named nope in any namespace of snapshots/nginx-svc\n',
    );
    assert.equal(
      target(['kube-dns', '-n', 'default']),
      'kdebug: -A finds the Service in every namespace: give no namespace with it\n',
    );
  });

  it('a directory whose objects.json holds nothing a snapshot holds is said to be no snapshot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-notsnap-'));
    try {
      writeFileSync(join(dir, 'meta.json'), '{}');
      for (const [objects, why] of [
        ['[]', 'no objects'],
        ['[{"apiVersion":"v1","kind":"Service","spec":{}}]', 'a Service without metadata.name'],
      ]) {
        writeFileSync(join(dir, 'objects.json'), objects!);
        const r = kdebug(['svc', 'web', '--snapshot', dir, '-o', 'text']);
        assert.deepEqual(
          [r.code, r.stdout, r.stderr],
          [
            2,
            '',
            `kdebug: not a snapshot of a cluster: ${join(dir, 'objects.json')}: ${why} (kdebug snapshot save writes the Service, its Pods and the Nodes)\n`,
          ],
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 with one line when it cannot do its job', () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', 'snapshots/does-not-exist']);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'kdebug: snapshots/does-not-exist: no such snapshot directory; kdebug demo --list lists the bundled scenarios\n',
    );
    const none = kdebug(['svc', 'nginx-svc', '-o', 'text'], {
      env: { KUBECONFIG: join(ROOT, 'no-such-kubeconfig'), HOME: join(ROOT, 'no-such-home') },
    });
    assert.equal(none.code, 2);
    assert.equal(none.stderr.split('\n').filter(Boolean).length, 1, none.stderr);
    assert.match(none.stderr, /^kdebug: .*kubeconfig/i);
  });

  it('kdebug demo is svc nginx-svc on the bundled snapshot', () => {
    const r = kdebug(['demo', '-o', 'text']);
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      golden('nginx-svc.txt').replace('snapshot snapshots/nginx-svc', 'the demo snapshot'),
    );
    const json = kdebug(['demo', '-o', 'json']);
    assert.equal(json.stdout, golden('nginx-svc.json'));
  });

  it("kdebug demo --list names every bundled scenario with its README's first line; demo NAME runs it", () => {
    // wide enough for each scenario's line whole (narrower, they wrap: see widths.test.ts)
    const list = kdebug(['demo', '--list'], { env: { COLUMNS: '200' } });
    assert.equal(list.code, 0, list.stderr);
    const dirs = readdirSync(join(ROOT, 'snapshots')).sort();
    const lines = list.stdout.split('\n\n')[0]!.split('\n');
    assert.deepEqual(
      lines.map((l) => l.split(/\s+/)[0]),
      dirs,
    );
    for (const [i, dir] of dirs.entries()) {
      const head = readFileSync(join(ROOT, 'snapshots', dir, 'README.md'), 'utf8').split('\n')[0]!;
      assert.ok(head.endsWith(lines[i]!.slice(dir.length).trim()), `${dir}: ${lines[i]}`);
    }
    // a scenario by name is svc on its snapshot, for the Service its meta.json names
    const byName = kdebug(['demo', 'selector-typo', '-o', 'json']);
    const bySnapshot = kdebug([
      'svc',
      'nginx-svc',
      '--snapshot',
      'snapshots/selector-typo',
      '-o',
      'json',
    ]);
    assert.equal(byName.code, 1);
    // the same findings (their next commands name the snapshot's directory as each was given)
    const findings = (out: string) =>
      JSON.parse(out).steps.flatMap(
        (st: { findings: { id: string; status: string; title: string }[] }) =>
          st.findings.map((f) => `${f.status} ${f.id} ${f.title}`),
      );
    assert.deepEqual(findings(byName.stdout), findings(bySnapshot.stdout));
    const unknown = kdebug(['demo', 'selector-typ']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /^kdebug: no scenario "selector-typ"; kdebug demo --list lists them \(.*selector-typo/,
    );
    // the hint text gives (--verbose explains) is a flag demo takes
    assert.equal(kdebug(['demo', '--verbose', '-o', 'text']).code, 0);
  });

  it('refuses node flags it cannot use, one line each', () => {
    const cases: [string[], RegExp][] = [
      [['--max-nodes', '0'], /^kdebug: --max-nodes 0: give a whole number of nodes, 1 or more\n$/],
      [
        ['--from', 'deploy/web'],
        /^kdebug: --from "deploy\/web": give pod\/NAME, pod\/NAMESPACE\/NAME or node\/NAME\n$/,
      ],
      [['--nodes', 'a,B_'], /^kdebug: --nodes "a,B_": give node names, comma-separated\n$/],
      [['--nodes', 'a', '--all-nodes'], /^kdebug: --nodes and --all-nodes: give one of them\n$/],
      [
        ['--node-concurrency', '1000'],
        /^kdebug: --node-concurrency 1000: give a whole number from 1 to 256\n$/,
      ],
      [
        ['--all-nodes', '--snapshot', 'snapshots/nginx-svc'],
        /^kdebug: --nodes, --all-nodes, .* a snapshot holds the nodes it recorded\n$/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = kdebug(['svc', 'nginx-svc', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
  });

  it('svc --snapshot without a name diagnoses the Service the snapshot names; one that names none says so', () => {
    const named = kdebug(['svc', '--snapshot', 'snapshots/headless', '-o', 'json']);
    assert.equal(JSON.parse(named.stdout).target.service, 'nginx-headless');
    const tmp = mkdtempSync(join(tmpdir(), 'kdebug-svc-'));
    try {
      cpSync(join(ROOT, 'snapshots/nginx-svc'), tmp, { recursive: true });
      writeFileSync(join(tmp, 'meta.json'), '{"context": "x"}\n');
      const r = kdebug(['svc', '--snapshot', tmp]);
      assert.equal(r.code, 2);
      assert.equal(
        r.stderr,
        `kdebug: ${tmp}: its meta.json names no Service; give one: kdebug svc NAME --snapshot ${tmp}\n`,
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  describe('live, against the fake API server', () => {
    let fake: FakeApi;
    let kubeconfig: string;
    let tmp: string;
    before(async () => {
      fake = await startFakeApi({
        objects: (await readSnapshot('snapshots/pods-not-ready')).objects,
        tokens: { 'admin-token': 'admin' },
      });
      kubeconfig = fake.kubeconfig({ namespace: 'default' });
      tmp = mkdtempSync(join(tmpdir(), 'kdebug-svc-'));
    });
    after(async () => {
      await fake.close();
      rmSync(tmp, { recursive: true, force: true });
    });

    it('reads the Service and what it needs, and finds the same fault as offline', async () => {
      const r = await live(
        ['svc', 'nginx-svc', '--kubeconfig', kubeconfig, '-o', 'json', '--via', 'kube-proxy'],
        { HOME: tmp },
      );
      assert.equal(r.code, 1, r.stderr);
      const doc = JSON.parse(r.stdout);
      assert.equal(doc.context, 'fake');
      assert.deepEqual(
        doc.steps
          .filter((s: { status: string }) => s.status === 'fail')
          .map((s: { id: string }) => s.id),
        ['endpoints'],
      );
      const rules = doc.steps.find((s: { id: string }) => s.id === 'rules');
      // this fake server runs no exec: each node's rules are said to be unread, not guessed (one
      // finding: the same failure in each node's kube-proxy Pod)
      assert.deepEqual(
        rules.findings.map((f: { id: string; nodes?: string[] }) => `${f.id} ${f.nodes}`),
        ['rules-not-read vm-12-11-centos,vm-12-7-centos'],
      );
    });

    /** A live run as JSON, the nodes read through kube-proxy's Pods (this server runs no exec). */
    const viaKubeProxy = (args: string[]) =>
      live([...args, '--kubeconfig', kubeconfig, '-o', 'json', '--via', 'kube-proxy'], {
        HOME: tmp,
      });

    it('takes the address an application logs: the cluster IP (and port) finds the Service in any namespace', async () => {
      const byIP = await viaKubeProxy(['svc', '10.1.190.219:8080', '-n', 'kube-system']);
      assert.deepEqual(JSON.parse(byIP.stdout).target, {
        namespace: 'default',
        service: 'nginx-svc',
        port: '8080',
      });
      const none = await live(['svc', '10.1.9.9', '--kubeconfig', kubeconfig, '-o', 'json'], {
        HOME: tmp,
      });
      assert.deepEqual(
        [none.code, none.stderr],
        [2, 'kdebug: 10.1.9.9: no Service in context fake has cluster IP 10.1.9.9\n'],
      );
    });

    it('-A asks the API for the Service by name in every namespace', async () => {
      const r = await viaKubeProxy(['svc', 'kube-dns:dns-tcp', '-A']);
      const doc = JSON.parse(r.stdout);
      assert.deepEqual(doc.target, {
        namespace: 'kube-system',
        service: 'kube-dns',
        port: 'dns-tcp',
      });
      assert.deepEqual(doc.service.ports, ['dns-tcp 53/TCP -> 53']);
    });

    it('turns the API 404 into service-not-found with its suggestions', async () => {
      const r = await live(['svc', 'nginx', '--kubeconfig', kubeconfig, '-o', 'json'], {
        HOME: tmp,
      });
      assert.equal(r.code, 1, r.stderr);
      const f = JSON.parse(r.stdout).steps[0].findings[0];
      assert.equal(f.id, 'service-not-found');
      assert.match(f.explanation, /"nginx-svc"/);
    });
  });
});
