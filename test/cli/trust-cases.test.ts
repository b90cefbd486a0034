// Every claim kdebug makes, end to end: each case runs the built CLI on a bundled snapshot, on a
// copy changed the way the case needs, on a stand-in server or on a fake API whose nodes cannot
// be read, and asserts together the step's mark, its line, the kind of evidence behind the
// finding, and the exit code. The checks' own tests hold the details of each.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/core/model.js';
import { kdebug, kdebugAsync, ROOT, type CliResult } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';

const WIDE = { COLUMNS: '200' };

interface ReportJson {
  steps: {
    id: string;
    findings: { id: string; status: string; evidence: { kind: string; text: string }[] }[];
  }[];
}

interface Claim {
  /** The step, as its line names it ("Rules", "Traffic policy"). */
  step: string;
  mark: '✓' | '✗' | '!' | '?' | '◐' | '-';
  line: RegExp;
  /** The finding the line stands on, its step's id, and the kinds of evidence it carries. */
  finding: { step: string; id: string; kinds: string[] };
  exit: number;
}

/** The mark and the line of one step, from text printed on a wide terminal. */
function stepLine(text: string, title: string): { mark: string; line: string } {
  const at = text
    .split('\n')
    .map((l) => /^ (\S) +\d+ (\S+(?: \S+)*) {2,}(.*)$/.exec(l))
    .find((m) => m?.[2] === title);
  assert.ok(at, `no step line for ${title} in:\n${text}`);
  return { mark: at[1]!, line: at[3]! };
}

/** The claim holds in text (mark, line, exit) and in JSON (the finding's evidence kinds, exit). */
function assertClaim(text: CliResult, json: CliResult, c: Claim): void {
  assert.equal(text.code, c.exit, text.stderr);
  assert.equal(json.code, c.exit, json.stderr);
  const { mark, line } = stepLine(text.stdout, c.step);
  assert.equal(mark, c.mark, `${c.step}: ${line}`);
  assert.match(line, c.line);
  const report = JSON.parse(json.stdout) as ReportJson;
  const found = report.steps
    .find((s) => s.id === c.finding.step)
    ?.findings.filter((f) => f.id === c.finding.id);
  assert.ok(found?.length, `no ${c.finding.id} in step ${c.finding.step}`);
  const kinds = [...new Set(found.flatMap((f) => f.evidence.map((e) => e.kind)))].sort();
  assert.deepEqual(kinds, [...c.finding.kinds].sort(), c.finding.id);
}

const svcOn =
  (dir: string, ...more: string[]) =>
  (output: string) =>
    kdebug(['svc', '--snapshot', dir, '-o', output, ...more], { env: WIDE });

/** A copy of a bundled snapshot, changed by `edit` (its objects, or its node dumps). */
function changed(
  name: string,
  edit: (dir: string, objects: KubeObject[]) => void,
): { dir: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-trust-'));
  cpSync(join(ROOT, 'snapshots', name), dir, { recursive: true });
  const file = join(dir, 'objects.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
  edit(dir, list.items);
  writeFileSync(file, JSON.stringify(list));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('claims on the bundled snapshots', () => {
  const cases: [string, string, Claim][] = [
    [
      'a hairpin ✓ its own KUBE-LOOP-BACK finding contradicts is a warning from that node',
      'ipvs-stale-real-server',
      {
        step: 'Hairpin',
        mark: '!',
        line: /^nginx-55fc968d9-w7x2q cannot reach itself through the Service: vm-12-11-centos does not masquerade it \(IPVS mode\)$/,
        finding: { step: 'hairpin', id: 'hairpin-masquerade-missing', kinds: ['observed'] },
        exit: 1,
      },
    ],
    [
      'hairpin on a node whose IPv6 rules are missing is not checked there, and the line says so',
      'dual-stack-ipv6-rules-missing',
      {
        step: 'Hairpin',
        mark: '◐',
        line: /^3 of 4 endpoints: .*; hairpin of nginx-55fc968d9-4pddn \(IPv6\) not checked \(--verbose explains\)$/,
        finding: { step: 'hairpin', id: 'hairpin-not-observed', kinds: ['not-observed'] },
        exit: 1,
      },
    ],
    [
      'the expected DNS records are computed evidence, and no recorded lookup is not a ✓',
      'headless',
      {
        step: 'DNS',
        mark: '◐',
        line: /^vm-12-7-centos: nginx-headless\.default\.svc\.cluster\.local A -> 10\.244\.1\.7, 10\.244\.0\.3; A lookup of nginx-headless\.default\.svc\.cluster\.local not recorded on vm-12-11-centos$/,
        finding: { step: 'dns', id: 'dns-names', kinds: ['computed'] },
        exit: 0,
      },
    ],
    [
      'CoreDNS up is read from the API; no recorded lookup leaves DNS not a ✓',
      'ipvs-stale-real-server',
      {
        step: 'DNS',
        mark: '◐',
        line: /^CoreDNS up: kube-dns 10\.1\.0\.10 has 2 ready endpoints; no recorded lookup of the Service name \(--verbose explains\)$/,
        finding: { step: 'dns', id: 'dns-lookup-not-recorded', kinds: ['not-observed'] },
        exit: 1,
      },
    ],
    [
      'headless: endpoints answering directly pass for what was probed, the rest is not probed',
      'headless',
      {
        step: 'Reachability',
        mark: '◐',
        line: /^2 endpoints answer directly on the targetPort; no probe from vm-12-11-centos \(--verbose explains\)$/,
        finding: { step: 'reachability', id: 'probe-not-observed', kinds: ['not-observed'] },
        exit: 0,
      },
    ],
    [
      "the root cause's step fails, from what the API says of the Pod and a node's probe of it",
      'pods-not-ready',
      {
        step: 'Endpoints',
        mark: '✗',
        line: /^Pod nginx-55fc968d9-kh24k is not ready: readiness probe failing/,
        finding: { step: 'endpoints', id: 'endpoint-not-ready', kinds: ['observed', 'read'] },
        exit: 1,
      },
    ],
    [
      'a stale IPVS real server fails Rules on the node that has it, from the line of its dump',
      'ipvs-stale-real-server',
      {
        step: 'Rules',
        mark: '✗',
        line: /^vm-12-11-centos: 10\.1\.190\.219:8080: real server 10\.244\.1\.7:80 is no longer an endpoint/,
        finding: { step: 'rules', id: 'endpoint-stale', kinds: ['observed'] },
        exit: 1,
      },
    ],
  ];
  for (const [name, snapshot, claim] of cases)
    it(name, () => {
      const run = svcOn(join('snapshots', snapshot));
      assertClaim(run('text'), run('json'), claim);
    });

  it('--verbose shows computed records as "expected:", never like an answer', () => {
    const r = svcOn('snapshots/headless', '--verbose')('text');
    assert.match(r.stdout, /^ +expected: nginx-headless\.default\.svc\.cluster\.local A -> /m);
    assert.doesNotMatch(
      r.stdout,
      // a node's recorded lookup names the name it asked ("vm-12-7-centos: NAME A -> ..."): an answer
      /^ +(?!expected:)(?!.*\bvm-12-\d+-centos: nginx-headless)\S.*nginx-headless\.default\.svc\.cluster\.local A -> /m,
    );
  });

  it("the summary's Next is the root cause's: the failing readiness probe, not the slices", () => {
    const r = svcOn('snapshots/pods-not-ready')('text');
    assert.match(r.stdout, /^Problem at step 4 \(Endpoints\): .*\[endpoint-not-ready\]$/m);
    assert.match(r.stdout, /^Next: kubectl -n default describe pod nginx-55fc968d9-kh24k$/m);
  });

  // before: the node with drift lost its note, only vm-12-7-centos's was said
  it('IPVS: a part of the state not compared is said on every node, drift found or not', () => {
    const r = svcOn('snapshots/ipvs-stale-real-server')('json');
    const { unobserved } = JSON.parse(r.stdout) as { unobserved: string[] };
    assert.ok(
      unobserved.includes(
        'Rules: 2 nodes (vm-12-11-centos, vm-12-7-centos): part of the IPVS state not compared',
      ),
      unobserved.join('\n'),
    );
    // the second node is "the same as" the first: not observed there either, never observed
    assert.deepEqual(evidenceOf(r, 'rules', 'rules-ipvs-not-observed'), [
      'not-observed: vm-12-11-centos: its iptables filter table was not read, so it was not compared',
      'not-observed: vm-12-7-centos: the same as vm-12-11-centos',
    ]);
  });

  it("an IPVS node that did not sync: Next is its kube-proxy's log, not ipvsadm", () => {
    const r = svcOn('snapshots/ipvs-stale-real-server')('text');
    assert.match(r.stdout, /^Next: kubectl -n kube-system logs kube-proxy-n2jtl$/m);
  });
});

describe('claims on a snapshot changed for the case', () => {
  it("one node's dumps removed: Rules speaks for the node it read, not a plain ✓", () => {
    const s = changed('nginx-svc', (dir) =>
      rmSync(join(dir, 'nodes', 'vm-12-11-centos'), { recursive: true }),
    );
    try {
      const run = svcOn(s.dir);
      const claim: Claim = {
        step: 'Rules',
        mark: '◐',
        line: /^1 of 2 nodes: 8080\/TCP -> 2 endpoints, as expected; vm-12-11-centos: rules not observed \(--verbose explains\)$/,
        finding: { step: 'rules', id: 'rules-not-observed', kinds: ['not-observed'] },
        // a node of the capture not read: the run could not check it (as a read it lost)
        exit: 2,
      };
      const json = run('json');
      assertClaim(run('text'), json, claim);
      // no step failed, and the answer is not a plain pass: the fields say so for a script
      const doc = JSON.parse(json.stdout) as {
        status: string;
        verdict: string;
        partial: boolean;
        notRead: { what: string }[];
      };
      assert.deepEqual([doc.status, doc.verdict, doc.partial], ['pass', 'partial', true]);
      assert.deepEqual(
        doc.notRead.map((n) => n.what),
        ['node vm-12-11-centos'],
      );
      const whole = JSON.parse(svcOn('snapshots/nginx-svc')('json').stdout) as typeof doc;
      assert.equal(whole.verdict, 'pass');
    } finally {
      s.done();
    }
  });

  it('a NetworkPolicy that admits nothing to the Service port is a warning, from the policy read', () => {
    const s = changed('nginx-svc', (_dir, objects) =>
      objects.push({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'deny-all', namespace: 'default' },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      }),
    );
    try {
      const run = svcOn(s.dir);
      assertClaim(run('text'), run('json'), {
        step: 'Reachability',
        mark: '!',
        line: /^NetworkPolicy deny-all admits no connection to 8080\/TCP: every client times out$/,
        finding: { step: 'reachability', id: 'network-policy-applies', kinds: ['read'] },
        exit: 1,
      });
    } finally {
      s.done();
    }
  });

  it('an endpoint address no Pod has is said as such, from the slice read', () => {
    const s = changed('nginx-svc', (dir, objects) => {
      const slice = objects.find(
        (o) =>
          o.kind === 'EndpointSlice' &&
          o.metadata?.labels?.['kubernetes.io/service-name'] === 'nginx-svc',
      ) as KubeObject & { endpoints: unknown[] };
      slice.endpoints.push({ addresses: ['10.244.1.99'], conditions: { ready: true } });
      // the legacy Endpoints the slice mirrors, edited by hand the same way
      const legacy = objects.find(
        (o) => o.kind === 'Endpoints' && o.metadata?.name === 'nginx-svc',
      ) as KubeObject & { subsets: { addresses: { ip: string }[] }[] };
      legacy.subsets[0]!.addresses.push({ ip: '10.244.1.99' });
      // the capture looked the address up: no Pod in any namespace has it
      const meta = join(dir, 'meta.json');
      const m = JSON.parse(readFileSync(meta, 'utf8')) as Record<string, unknown>;
      writeFileSync(meta, JSON.stringify({ ...m, podIPLookups: ['10.244.1.99'] }));
    });
    try {
      const run = svcOn(s.dir);
      const text = run('text');
      assertClaim(text, run('json'), {
        step: 'Endpoints',
        mark: '✓',
        line: /^8080\/TCP: 3 of 3 endpoints ready$/,
        finding: { step: 'endpoints', id: 'endpoint-not-a-pod', kinds: ['read'] },
        exit: 1,
      });
      assert.match(text.stdout, /^ +i 10\.244\.1\.99 is no Pod's address$/m);
    } finally {
      s.done();
    }
  });
});

/** vm-12-11-centos's iptables-save.txt of nginx-svc, its lines changed by `edit`. */
const dumpChanged = (edit: (lines: string[]) => void) =>
  changed('nginx-svc', (dir) => {
    const file = join(dir, 'nodes', 'vm-12-11-centos', 'iptables-save.txt');
    const lines = readFileSync(file, 'utf8').split('\n');
    edit(lines);
    writeFileSync(file, lines.join('\n'));
  });

/** The evidence texts of a step's findings of one id, from JSON. */
const evidenceOf = (json: CliResult, step: string, id: string) =>
  (JSON.parse(json.stdout) as ReportJson).steps
    .find((s) => s.id === step)!
    .findings.filter((f) => f.id === id)
    .flatMap((f) => f.evidence.map((e) => `${e.kind}: ${e.text}`));

describe("a node's dump read in part", () => {
  // before: a line skipped inside the dump left Rules a plain ✓ for both nodes, the line unsaid
  it('a line skipped inside the dump is said not read, at its line: Rules passes in part', () => {
    const s = dumpChanged((lines) => lines.splice(95, 0, 'this line is not a rule'));
    try {
      const run = svcOn(s.dir);
      const json = run('json');
      assertClaim(run('text'), json, {
        step: 'Rules',
        mark: '◐',
        line: /^1 of 2 nodes: 8080\/TCP -> 2 endpoints, as expected; vm-12-11-centos: 1 line of the rules dump not read \(--verbose explains\)$/,
        finding: { step: 'rules', id: 'rules-not-observed', kinds: ['not-observed'] },
        exit: 0,
      });
      assert.deepEqual(evidenceOf(json, 'rules', 'rules-not-observed'), [
        'not-observed: nodes/vm-12-11-centos/iptables-save.txt:96: not a line of iptables-save or iptables -S output, skipped: "this line is not a rule"',
      ]);
    } finally {
      s.done();
    }
  });

  // before: the whole dump was unreadable, a warning (exit 1) whose only evidence was its name
  it('a rule after the last COMMIT is said not read, the tables before it compared', () => {
    const s = dumpChanged((lines) =>
      lines.push('-A KUBE-SERVICES -d 10.9.9.9/32 -p tcp -m tcp --dport 80 -j ACCEPT'),
    );
    try {
      const run = svcOn(s.dir);
      const json = run('json');
      assertClaim(run('text'), json, {
        step: 'Rules',
        mark: '◐',
        line: /^1 of 2 nodes: 8080\/TCP -> 2 endpoints, as expected; vm-12-11-centos: 1 line of the rules dump not read \(--verbose explains\)$/,
        finding: { step: 'rules', id: 'rules-not-observed', kinds: ['not-observed'] },
        exit: 0,
      });
      assert.match(
        evidenceOf(json, 'rules', 'rules-not-observed').join('\n'),
        /^not-observed: nodes\/vm-12-11-centos\/iptables-save\.txt:\d+: a line outside any \*table \.\.\. COMMIT block, not read, skipped: "-A KUBE-SERVICES -d 10\.9\.9\.9/,
      );
    } finally {
      s.done();
    }
  });

  // before: '!', "Warning at step 7", exit 1, the file's name its only (observed) evidence
  it('a dump that does not read is not checked there, from why, with the dump to save again', () => {
    const s = dumpChanged((lines) => lines.splice(95, 0, '-A KUBE-SERVICES -j'));
    try {
      const run = svcOn(s.dir);
      const json = run('json');
      assertClaim(run('text'), json, {
        step: 'Rules',
        mark: '◐',
        line: /^1 of 2 nodes: 8080\/TCP -> 2 endpoints, as expected; vm-12-11-centos: the rules dump cannot be read \(--verbose explains\)$/,
        finding: { step: 'rules', id: 'rules-unreadable', kinds: ['not-observed'] },
        exit: 0,
      });
      assert.match(
        evidenceOf(json, 'rules', 'rules-unreadable').join('\n'),
        /^not-observed: nodes\/vm-12-11-centos\/iptables-save\.txt:96: /,
      );
      const unreadable = (
        JSON.parse(json.stdout) as { steps: { findings: { id: string; next?: string }[] }[] }
      ).steps
        .flatMap((st) => st.findings)
        .find((f) => f.id === 'rules-unreadable')!;
      assert.match(
        unreadable.next ?? '',
        /-- chroot \/host iptables-save > .*vm-12-11-centos\/iptables-save\.txt$/,
      );
    } finally {
      s.done();
    }
  });
});

describe('claims on a live run whose nodes cannot be read', () => {
  let fake: FakeApi;
  let kubeconfig: string;
  before(async () => {
    const objects = (
      JSON.parse(readFileSync(join(ROOT, 'snapshots/nginx-svc/objects.json'), 'utf8')) as {
        items: KubeObject[];
      }
    ).items;
    // every command on every node fails: the kube-proxy image lacks it
    fake = await startFakeApi({
      objects,
      exec: () => ({ stderr: 'iptables-save: command not found', exitCode: 127 }),
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
  });
  after(() => fake.close());
  const run = (output: string) =>
    kdebugAsync(
      ['svc', 'nginx-svc', '--kubeconfig', kubeconfig, '--via', 'kube-proxy', '-o', output],
      WIDE,
    );

  it('Rules: the nodes not read are a warning from the failed read, never "the other nodes are"', async () => {
    const [text, json] = [await run('text'), await run('json')];
    // the same failure in each node's own kube-proxy Pod: one finding for both
    assertClaim(text, json, {
      step: 'Rules',
      mark: '!',
      line: /^rules not read on 2 nodes: vm-12-11-centos, vm-12-7-centos$/,
      finding: { step: 'rules', id: 'rules-not-read', kinds: ['observed'] },
      exit: 1,
    });
    assert.doesNotMatch(text.stdout, /the other nodes are/);
  });

  it('Reachability: no probe ran, said as a live run says it', async () => {
    const [text, json] = [await run('text'), await run('json')];
    assertClaim(text, json, {
      step: 'Reachability',
      mark: '?',
      line: /^no probe ran: no node could run one$/,
      finding: { step: 'reachability', id: 'probes-not-recorded', kinds: ['not-observed'] },
      exit: 1,
    });
    assert.doesNotMatch(text.stdout, /no probe results recorded/);
  });
});

describe('a server that is not the Kubernetes API', () => {
  it('a 404 everywhere: one line naming the URL and context, exit 2, no step marked', async () => {
    const server = createServer((_req, res) => res.writeHead(404).end('404 page not found\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-trust-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'edge', cluster: { server: url } }],
          users: [{ name: 'u', user: { token: 't' } }],
          contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'u' } }],
          'current-context': 'edge',
        }),
      );
      for (const output of ['text', 'json']) {
        const r = await kdebugAsync(['svc', 'nginx-svc', '--kubeconfig', kubeconfig, '-o', output]);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stdout, '');
        const lines = r.stderr.split('\n').filter(Boolean);
        assert.equal(lines.length, 1, r.stderr);
        assert.match(lines[0]!, /not a Kubernetes API server/);
        assert.ok(lines[0]!.includes(url) && lines[0]!.includes('edge'), lines[0]);
        assert.doesNotMatch(r.stderr, /does not exist/);
      }
    } finally {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
