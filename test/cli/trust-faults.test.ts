// Faults a reviewer made by hand in a bundled snapshot (r145), made here in a copy: each case runs
// the built CLI and asserts the root cause, the next command and the marks a run may claim.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/core/model.js';
import { kdebug, ROOT, type CliResult } from '../support/cli.js';

const WIDE = { COLUMNS: '200' };

const svc = (dir: string, ...more: string[]) =>
  kdebug(['svc', '--snapshot', dir, '--no-color', ...more], { env: WIDE });

/** Runs `test` on a copy of a bundled snapshot changed by `edit` (its objects, its files). */
function withFault(
  name: string,
  edit: (dir: string, objects: KubeObject[]) => void,
  test: (dir: string) => void,
): void {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-fault-'));
  try {
    cpSync(join(ROOT, 'snapshots', name), dir, { recursive: true });
    const file = join(dir, 'objects.json');
    const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
    edit(dir, list.items);
    writeFileSync(file, JSON.stringify(list));
    test(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The mark and the line of one step, as a wide terminal prints it. */
function step(r: CliResult, title: string): string {
  const line = r.stdout.split('\n').find((l) => new RegExp(`^ \\S +\\d+ ${title} {2,}`).test(l));
  assert.ok(line, `no ${title} step in:\n${r.stdout}${r.stderr}`);
  return line.replace(/^ (\S) +\d+ \S+(?: \S+)*? {2,}/, '$1 ');
}

describe('r145 faults', () => {
  // before: "there are no CoreDNS Pods at all", Next: scale deployment coredns (changes nothing)
  it("kube-dns's selector matching no CoreDNS Pod is the root, and the patch its next", () =>
    withFault(
      'nginx-svc',
      (_dir, objects) => {
        const dns = objects.find(
          (o) => o.kind === 'Service' && o.metadata?.name === 'kube-dns',
        ) as KubeObject & { spec: { selector: Record<string, string> } };
        dns.spec.selector = { 'k8s-app': 'kube-dns-x' };
        // the endpoint controller then empties its slices
        for (const o of objects)
          if (
            o.kind === 'EndpointSlice' &&
            o.metadata?.labels?.['kubernetes.io/service-name'] === 'kube-dns'
          )
            (o as KubeObject & { endpoints: unknown[] }).endpoints = [];
      },
      (dir) => {
        const r = svc(dir);
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          step(r, 'DNS'),
          /^✗ kube-dns has no endpoints: its selector k8s-app=kube-dns-x matches none of the CoreDNS Pods\b/,
        );
        assert.doesNotMatch(r.stdout, /no CoreDNS Pods at all|scale deployment/);
        assert.match(r.stdout, /Pod coredns-5c98db65d4-gtwn8: Ready, labels k8s-app=kube-dns,/);
        assert.match(
          r.stdout,
          /^Next: kubectl -n kube-system patch service kube-dns --type=merge -p '\{"spec":\{"selector":\{"k8s-app":"kube-dns"\}\}\}'$/m,
        );
      },
    ));

  // before: "✗ Service foo/nginx-svc does not exist … NXDOMAIN", exit 1, JSON partial false
  it('a Service a one-Service snapshot did not capture is not read: exit 2, named in notRead', () => {
    const r = kdebug([
      'svc',
      'nginx-svc',
      '-n',
      'foo',
      '--snapshot',
      'snapshots/nginx-svc',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 2, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      partial: boolean;
      notRead: { what: string; why: string }[];
      steps: { findings: { id: string; status: string; evidence: { kind: string }[] }[] }[];
    };
    assert.equal(doc.partial, true);
    assert.deepEqual(
      doc.notRead.map((n) => n.what),
      ['Service foo/nginx-svc'],
    );
    assert.match(doc.notRead[0]!.why, /taken for default\/nginx-svc/);
    const [f] = doc.steps[0]!.findings;
    assert.deepEqual(
      [f!.id, f!.status, f!.evidence.map((e) => e.kind)],
      ['service-not-captured', 'skip', ['not-observed']],
    );
  });

  // before: "✓ 5 DNS vm-12-7-centos: …", "✓ 8 Reachability … answers from vm-12-7-centos"
  it('a node whose outputs a snapshot left out is said by every step that probes from the nodes', () =>
    withFault(
      'nginx-svc',
      (dir) => rmSync(join(dir, 'nodes', 'vm-12-11-centos'), { recursive: true }),
      (dir) => {
        const r = svc(dir);
        assert.match(
          step(r, 'DNS'),
          /^◐ .*not recorded on vm-12-11-centos \(--verbose explains\)$/,
        );
        assert.match(
          step(r, 'Reachability'),
          /^◐ ClusterIP 10\.1\.190\.219:8080 answers from vm-12-7-centos; no probe from vm-12-11-centos \(--verbose explains\)$/,
        );
      },
    ));

  // before: JSON "verdict":"partial" beside "partial":false, "notRead":[], exit 0
  it('a node whose outputs a snapshot left out is named in notRead: partial, exit 2', () =>
    withFault(
      'nginx-svc',
      (dir) => rmSync(join(dir, 'nodes', 'vm-12-11-centos'), { recursive: true }),
      (dir) => {
        const r = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
        assert.equal(r.code, 2, r.stderr);
        const doc = JSON.parse(r.stdout) as { partial: boolean; notRead: { what: string }[] };
        assert.equal(doc.partial, true);
        assert.deepEqual(
          doc.notRead.map((n) => n.what),
          ['node vm-12-11-centos'],
        );
      },
    ));

  /** nginx-svc with the rules of vm-12-11-centos's dump that `drop` matches deleted. */
  const withoutRule = (drop: RegExp, test: (dir: string) => void) =>
    withFault(
      'nginx-svc',
      (dir) => {
        const file = join(dir, 'nodes', 'vm-12-11-centos', 'iptables-save.txt');
        const lines = readFileSync(file, 'utf8').split('\n');
        const kept = lines.filter((l) => !drop.test(l));
        assert.equal(kept.length, lines.length - 1, 'one rule deleted');
        writeFileSync(file, kept.join('\n'));
      },
      test,
    );

  // before: "✓ 10 Hairpin a Pod reaching itself through the Service is masqueraded" beside Rules' finding
  for (const [name, drop, lacks] of [
    [
      'the masquerade of marked packets',
      /^-A KUBE-POSTROUTING .*--mark 0x4000\/0x4000 -j MASQUERADE/,
      /vm-12-11-centos does not masquerade the packets KUBE-MARK-MASQ marks/,
    ],
    [
      "Pods' entry jump",
      /^-A PREROUTING .*-j KUBE-SERVICES/,
      /nat PREROUTING on vm-12-11-centos does not jump to KUBE-SERVICES/,
    ],
  ] as const)
    it(`hairpin on a node without ${name} is not a pass there`, () =>
      withoutRule(drop, (dir) => {
        const r = svc(dir);
        assert.equal(r.code, 1, r.stderr);
        const line = step(r, 'Hairpin');
        assert.match(line, /^! nginx-55fc968d9-4pddn cannot reach itself through the Service: /);
        assert.match(line, lacks);
      }));

  // before (r147's T1): "◐ 5 DNS", "✓ CoreDNS up", the expected records, nothing of the zone
  it("a Corefile zone other than kubelet's clusterDomain warns with no lookup recorded", () =>
    withFault(
      'nginx-svc',
      (dir, objects) => {
        const coredns = objects.find(
          (o) => o.kind === 'ConfigMap' && o.metadata?.name === 'coredns',
        ) as KubeObject & { data: { Corefile: string } };
        coredns.data.Corefile = coredns.data.Corefile.replace(
          'kubernetes cluster.local',
          'kubernetes cluster.lcoal',
        );
        for (const node of ['vm-12-11-centos', 'vm-12-7-centos'])
          rmSync(
            join(
              dir,
              'nodes',
              node,
              'dns-lookup_A_nginx-svc.default.svc.cluster.local_10.1.0.10.txt',
            ),
          );
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          step(r, 'DNS'),
          /^! CoreDNS serves cluster\.lcoal, Pods search cluster\.local: nginx-svc\.default\.svc\.cluster\.local would be NXDOMAIN/,
        );
        assert.match(r.stdout, /kubelet configuration: clusterDomain: cluster\.local/);
        assert.match(r.stdout, /^Next: kubectl -n kube-system get configmap coredns -o yaml$/m);
      },
    ));

  it('the same zones, no lookup recorded: no zone warning', () =>
    withFault(
      'nginx-svc',
      (dir) => {
        for (const node of ['vm-12-11-centos', 'vm-12-7-centos'])
          rmSync(
            join(
              dir,
              'nodes',
              node,
              'dns-lookup_A_nginx-svc.default.svc.cluster.local_10.1.0.10.txt',
            ),
          );
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.doesNotMatch(r.stdout, /dns-zone-mismatch|would be NXDOMAIN/);
      },
    ));

  // before: "◐ 5 DNS … A lookup of nginx-svc.default.svc.cluster.lan not recorded", exit 0
  it("a Corefile zone other than kubelet's clusterDomain fails DNS from the NXDOMAIN recorded", () =>
    withFault(
      'nginx-svc',
      (dir, objects) => {
        const coredns = objects.find(
          (o) => o.kind === 'ConfigMap' && o.metadata?.name === 'coredns',
        ) as KubeObject & { data: { Corefile: string } };
        coredns.data.Corefile = coredns.data.Corefile.replace(
          'kubernetes cluster.local',
          'kubernetes cluster.lan',
        );
        // what dig printed on a node of that cluster (r145's f15): CoreDNS has no such name
        for (const node of ['vm-12-11-centos', 'vm-12-7-centos'])
          writeFileSync(
            join(
              dir,
              'nodes',
              node,
              'dns-lookup_A_nginx-svc.default.svc.cluster.local_10.1.0.10.txt',
            ),
            ';; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 33909\n;; flags: qr aa rd; QUERY: 1, ANSWER: 0, AUTHORITY: 0, ADDITIONAL: 0\n\nkdebug-probe dns-lookup tool=dig exit=0\n',
          );
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          step(r, 'DNS'),
          /^✗ nginx-svc\.default\.svc\.cluster\.local A -> NXDOMAIN: no such name, expected 10\.1\.190\.219/,
        );
        assert.match(
          r.stdout,
          /CoreDNS serves cluster\.lan .*kubelet gives Pods the cluster domain cluster\.local/s,
        );
        assert.match(r.stdout, /kubelet configuration: clusterDomain: cluster\.local/);
        assert.doesNotMatch(r.stdout, /svc\.cluster\.lan/);
        assert.match(r.stdout, /^Next: kubectl -n kube-system get configmap coredns -o yaml$/m);
      },
    ));

  /** A probe from `node` to `target` (an nginx-svc probe file's name part) that timed out. */
  const timedOut = (dir: string, node: string, target: string) => {
    const [ip, port] = target.split('_');
    writeFileSync(
      join(dir, 'nodes', node, `tcp-connect_${target}.txt`),
      `nc: connect to ${ip} port ${port} (tcp) timed out: Operation now in progress\nkdebug-probe tcp-connect tool=nc exit=1\n`,
    );
  };

  // before: "or the Pod is hung", Next: kubectl debug … the Pod … netstat -tln
  it('a Pod that answers from its own node and times out from another: the path between them', () =>
    withFault(
      'nginx-svc',
      (dir) => {
        timedOut(dir, 'vm-12-7-centos', '10.244.1.7_80');
        timedOut(dir, 'vm-12-7-centos', '10.1.190.219_8080');
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.equal(r.code, 1, r.stderr);
        const flat = r.stdout.replace(/\s+/g, ' ');
        assert.match(
          flat,
          /connects from vm-12-11-centos, its own node, and got no answer from vm-12-7-centos: the Pod is up and listens on port 80, so the packets are lost between vm-12-7-centos and vm-12-11-centos, on the Pod network's path between the nodes/,
        );
        assert.doesNotMatch(flat, /the Pod is hung|netstat/);
        assert.match(
          r.stdout,
          /^Next: kubectl debug node\/vm-12-7-centos -it --image=\S+ --profile=sysadmin -- ip route get 10\.244\.1\.7$/m,
        );
      },
    ));

  it('a Pod that times out from its own node too: not said to be the path between nodes', () =>
    withFault(
      'nginx-svc',
      (dir) => {
        for (const node of ['vm-12-7-centos', 'vm-12-11-centos'])
          timedOut(dir, node, '10.244.1.7_80');
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.equal(r.code, 1, r.stderr);
        const flat = r.stdout.replace(/\s+/g, ' ');
        assert.match(flat, /or the Pod is hung/);
        assert.doesNotMatch(flat, /path between the nodes|ip route get/);
      },
    ));

  /** nginx-svc made selector-less, its endpoints one address no Pod has (a hand-made slice). */
  const handMade = (dir: string, objects: KubeObject[], everyPodRead: boolean) => {
    for (const o of objects) {
      const any = o as KubeObject & Record<string, unknown>;
      if (o.kind === 'Service' && o.metadata?.name === 'nginx-svc')
        delete (any['spec'] as { selector?: unknown }).selector;
      if (o.kind === 'EndpointSlice' && o.metadata?.name === 'nginx-svc-7c6vz')
        any['endpoints'] = [{ addresses: ['10.244.1.99'], conditions: { ready: true } }];
      if (o.kind === 'Endpoints' && o.metadata?.name === 'nginx-svc') {
        const [subset] = any['subsets'] as { ports: unknown }[];
        any['subsets'] = [{ addresses: [{ ip: '10.244.1.99' }], ports: subset!.ports }];
      }
    }
    const meta = join(dir, 'meta.json');
    writeFileSync(
      meta,
      JSON.stringify({ ...JSON.parse(readFileSync(meta, 'utf8')), everyPodRead }),
    );
  };

  // before: "- 10 Hairpin  no ready endpoints" beside "4 Endpoints  1 of 1 endpoint ready"
  it('hairpin speaks of an endpoint no Pod is known to have as the Endpoints step does', () =>
    withFault(
      'nginx-svc',
      (dir, objects) => handMade(dir, objects, false),
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.match(
          step(r, 'Endpoints'),
          /1 of 1 endpoint ready; 10\.244\.1\.99: no Pod named, and whether one holds it is not known$/,
        );
        assert.match(step(r, 'Hairpin'), /^\? hairpin of 10\.244\.1\.99:80 not checked$/);
        assert.match(
          r.stdout,
          /not observed: 10\.244\.1\.99:80: no Pod named, and whether one holds it is not known \(.*\), so neither is its node/,
        );
        assert.doesNotMatch(r.stdout, /no ready endpoints/);
      },
    ));

  it('hairpin of an endpoint no Pod or node has, every Pod listed: none to check, said so', () =>
    withFault(
      'nginx-svc',
      (dir, objects) => handMade(dir, objects, true),
      (dir) => {
        const r = svc(dir);
        assert.match(step(r, 'Endpoints'), /^✓ 8080\/TCP: 1 of 1 endpoint ready$/);
        assert.match(r.stdout, /10\.244\.1\.99 is no Pod's address/);
        assert.match(
          step(r, 'Hairpin'),
          /^- its endpoint is not a Pod \(no Pod or node has it\): no Pod can be sent to itself$/,
        );
      },
    ));

  // before: "✓ 8 Reachability  ClusterIP … answers from vm-12-11-centos and vm-12-7-centos (on
  // vm-12-11-centos for the node itself only …)": a pass its own evidence contradicts for Pods
  it("a probe from a node whose nat PREROUTING skips the Service rules: not a pass for Pods, Rules' symptom", () =>
    withoutRule(/^-A PREROUTING .*-j KUBE-SERVICES/, (dir) => {
      const r = svc(dir, '--verbose');
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        step(r, 'Reachability'),
        /^! ClusterIP 10\.1\.190\.219:8080: Pods' connections on vm-12-11-centos are not translated \(nat PREROUTING does not jump to KUBE-SERVICES\); the node's own probe answers$/,
      );
      const flat = r.stdout.replace(/\s+/g, ' ');
      assert.match(
        flat,
        /The probe from vm-12-11-centos is the node's own connection: it enters through nat OUTPUT, reaches the Service's rules and was answered\. Connections from Pods and from outside clients enter vm-12-11-centos through nat PREROUTING, which does not jump to KUBE-SERVICES/,
      );
      assert.match(flat, /This follows from entry-jump-missing \(Rules\): fix that first\./);
      // the other node's answer still passes, for it alone
      assert.match(flat, /✓ ClusterIP 10\.1\.190\.219:8080 answers from vm-12-7-centos \[/);
      assert.match(
        flat,
        /Problem at step 7 \(Rules\): vm-12-11-centos: nat PREROUTING does not jump/,
      );
      const json = kdebug(['svc', '--snapshot', dir, '-o', 'json'], { env: WIDE });
      assert.equal(json.code, 1);
      const reach = (
        JSON.parse(json.stdout) as {
          steps: {
            id: string;
            status: string;
            findings: {
              id: string;
              status: string;
              node?: string;
              evidence: { kind: string; text: string }[];
            }[];
          }[];
        }
      ).steps.find((s) => s.id === 'reachability')!;
      assert.equal(reach.status, 'warn');
      const f = reach.findings.find((x) => x.id === 'clusterip-unreachable')!;
      assert.deepEqual([f.status, f.node], ['warn', 'vm-12-11-centos']);
      // observed: the node's own probe and the chain's rules where the jump should be; computed:
      // the walk from a Pod there
      const kinds = f.evidence.map((e) => `${e.kind} ${e.text}`);
      assert.ok(
        kinds.includes('observed vm-12-11-centos: TCP connect 10.1.190.219:8080: connected'),
      );
      assert.ok(
        kinds.includes('observed -t nat -A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER'),
        kinds.join('\n'),
      );
      assert.ok(
        kinds.includes(
          'computed on vm-12-11-centos, tcp 10.244.1.7 -> 10.1.190.219:8080: no rule matched it: routed unchanged',
        ),
        kinds.join('\n'),
      );
    }));

  it('with the jump there, the probe from the node is not said to speak for the node only', () => {
    const r = svc(join(ROOT, 'snapshots', 'nginx-svc'));
    assert.match(step(r, 'Reachability'), /answers from vm-12-11-centos and vm-12-7-centos$/);
    assert.doesNotMatch(r.stdout, /for the node itself only/);
  });

  // before: Next "kubectl get endpoints,endpointslices -l kubernetes.io/service-name=nginx-svc",
  // which lists no Endpoints object (they do not carry that label)
  it('Endpoints and EndpointSlices that disagree: a next command that lists both, by name', () =>
    withFault(
      'nginx-svc',
      (_dir, objects) => {
        const legacy = objects.find(
          (o) => o.kind === 'Endpoints' && o.metadata?.name === 'nginx-svc',
        ) as KubeObject & { subsets: { addresses: unknown[] }[] };
        legacy.subsets[0]!.addresses = legacy.subsets[0]!.addresses.slice(0, 1);
      },
      (dir) => {
        const r = svc(dir, '--verbose');
        assert.match(r.stdout, /\[endpoints-disagree\]/);
        assert.match(
          r.stdout,
          /^ +kubectl -n default get endpoints\/nginx-svc endpointslice\/nginx-svc-7c6vz -o wide$/m,
        );
        assert.doesNotMatch(r.stdout, /endpoints,endpointslices/);
      },
    ));

  // before: "- -t nat -A PREROUTING …" (kdebug's expectation) beside "+ -t nat -A PREROUTING …" (the
  // node's rule), told apart by the sign alone
  it("a drift's computed lines say they are expected; the node's own lines stay as read", () =>
    withoutRule(/^-A PREROUTING .*-j KUBE-SERVICES/, (dir) => {
      const r = svc(dir);
      assert.match(
        r.stdout,
        /^ +- expected: -t nat -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES$/m,
      );
      assert.match(r.stdout, /^ +\+ -t nat -A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER$/m);
      assert.doesNotMatch(r.stdout, /^ +- -t nat/m);
    }));
});
