// The built `kdebug rules` against the seed dumps and the demo snapshot (SEEDS.md section 3:
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, nginx-svc 10.1.190.219:8080).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const SEED_NAT = 'test/fixtures/seed-nat-S.txt';
const DEMO = 'snapshots/nginx-svc';

describe('kdebug rules', () => {
  it('prints the tree of a dump as text', () => {
    const r = kdebug(['rules', '--file', SEED_NAT, '-o', 'text']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^default\/nginx-svc:http {2}10\.1\.190\.219:8080\/tcp$/m);
    assert.match(
      r.stdout,
      /├─ 50\.0% {2}KUBE-SEP-SMDVMBZNJPO5AA7R {2}DNAT -> 10\.244\.0\.3:80 {2}\(hairpin masquerade\)/,
    );
    assert.match(r.stdout, /└─ 50\.0% {2}KUBE-SEP-FNO4E6JYD7EGUHTP {2}DNAT -> 10\.244\.1\.7:80/);
    assert.match(r.stdout, /masquerade {2}! -s 10\.244\.0\.0\/16 {2}\(KUBE-SERVICES line 19\)/);
  });

  it('reads stdin with --file -', () => {
    const r = kdebug(['rules', '--file', '-', '-o', 'json'], {
      input: readFileSync(SEED_NAT, 'utf8'),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).services[0].name, 'default/nginx-svc:http');
  });

  it('prints a node of a snapshot as JSON with the documented fields', () => {
    const r = kdebug(['rules', '--snapshot', DEMO, '--node', 'vm-12-11-centos', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.schemaVersion, 1);
    assert.equal(doc.node, 'vm-12-11-centos');
    assert.deepEqual(Object.keys(doc.counts), ['tables', 'chains', 'rules']);
    const svc = doc.services.find((s: { name: string }) => s.name === 'default/nginx-svc:http');
    assert.deepEqual(
      [svc.protocol, svc.clusterIP, svc.port, svc.nodePort, svc.externalIPs, svc.loadBalancerIPs],
      ['tcp', '10.1.190.219', 8080, null, [], []],
    );
    assert.equal(svc.chains.svc, 'KUBE-SVC-ELCM5PCEQWBTUJ2I');
    assert.deepEqual(
      svc.endpoints.map((e: { address: string; chain: string; probability: number }) => [
        e.address,
        e.chain,
        e.probability,
      ]),
      [
        ['10.244.0.3:80', 'KUBE-SEP-SMDVMBZNJPO5AA7R', 0.5],
        ['10.244.1.7:80', 'KUBE-SEP-FNO4E6JYD7EGUHTP', 0.5],
      ],
    );
    assert.deepEqual(doc.orphans, []);
  });

  it('searches with --search', () => {
    const r = kdebug([
      'rules',
      '--snapshot',
      DEMO,
      '--node',
      'vm-12-7-centos',
      '--search',
      '10.244.1.7',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const best = JSON.parse(r.stdout).hits[0];
    assert.deepEqual(
      [best.kind, best.text, best.service],
      ['endpoint', '10.244.1.7:80', 'default/nginx-svc:http'],
    );
    const text = kdebug(['rules', '--file', SEED_NAT, '--search', 'ELCM']);
    assert.match(
      text.stdout,
      /^ {2}chain {4}KUBE-SVC-ELCM5PCEQWBTUJ2I {3}Service default\/nginx-svc:http$/m,
    );
  });

  const failures: [string, string[], string | undefined, RegExp][] = [
    [
      'a dump it cannot read, as FILE:LINE',
      ['rules', '--file', '-'],
      '-N KUBE-X\n-A KUBE-X -m comment --comment "x\n',
      /^<stdin>:2: unterminated quoted string\n {2}-A KUBE-X -m comment --comment "x\n$/,
    ],
    [
      'a missing file',
      ['rules', '--file', 'no/such/dump.txt'],
      undefined,
      /^kdebug: no\/such\/dump\.txt: no such file\n$/,
    ],
    [
      'a snapshot with two nodes and no --node',
      ['rules', '--snapshot', DEMO],
      undefined,
      /pick a node with --node \(recorded: vm-12-11-centos, vm-12-7-centos\)/,
    ],
    [
      'an unknown node',
      ['rules', '--snapshot', DEMO, '--node', 'vm-1'],
      undefined,
      /no rules recorded for node "vm-1"/,
    ],
    [
      'a missing snapshot',
      ['rules', '--snapshot', 'no/such/dir', '--node', 'x'],
      undefined,
      /no\/such\/dir: no such snapshot directory/,
    ],
    ['no source and no kubeconfig', ['rules'], undefined, /^kdebug: no kubeconfig: /],

    [
      'a bad --output',
      ['rules', '--file', SEED_NAT, '-o', 'yaml'],
      undefined,
      /argument 'yaml' is invalid/,
    ],
  ];
  for (const [what, args, input, message] of failures) {
    it(`exits 2 with a one-line reason for ${what}`, () => {
      const r = kdebug(args, { input });
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /); // never a stack trace
    });
  }
});
