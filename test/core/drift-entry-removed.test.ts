// An entry the API took away (a NodePort Service made ClusterIP, an external IP removed, a
// load-balancer IP gone from status) while kube-proxy has not synced: the node still accepts that
// traffic and sends it to the endpoints. Each mode's drift says so (entry-stale), never "no drift"
// nor "spelled differently"; made on the real kube-proxy v1.36's recorded tables.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT } from '../support/cli.js';

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown> & { ports: Record<string, unknown>[] };
  status?: { loadBalancer?: { ingress?: unknown[] } };
};

interface Drift {
  summary: { drift: boolean };
  findings: { id: string; severity: string; service?: string; node: string; title: string }[];
}

/** drift --all-nodes -o json on a copy of a recorded release whose objects `edit` changed. */
function driftAfter(mode: string, edit: (services: Obj[]) => void): Drift {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-removed-'));
  try {
    cpSync(join(ROOT, 'test/fixtures/releases/36', mode), dir, { recursive: true });
    const file = join(dir, 'objects.json');
    const list = JSON.parse(readFileSync(file, 'utf8')) as { items: Obj[] };
    edit(list.items.filter((o) => o.kind === 'Service'));
    writeFileSync(file, JSON.stringify(list));
    const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
    assert.ok(r.stdout, r.stderr);
    return JSON.parse(r.stdout) as Drift;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const named = (services: Obj[], name: string) => services.find((s) => s.metadata.name === name)!;

const FAULTS: [string, string, (services: Obj[]) => void, RegExp][] = [
  [
    'a NodePort Service made ClusterIP',
    'matrix/node-port:http',
    (services) => {
      const s = named(services, 'node-port');
      s.spec.type = 'ClusterIP';
      delete s.spec['externalTrafficPolicy'];
      for (const p of s.spec.ports) delete p['nodePort'];
    },
    /^node port \d+\/tcp still leads to matrix\/node-port:http/,
  ],
  [
    'an external IP taken away',
    'matrix/external-ip:http',
    (services) => {
      delete named(services, 'external-ip').spec['externalIPs'];
    },
    /^203\.0\.113\.10:\d+\/tcp still leads to matrix\/external-ip:http/,
  ],
  [
    "a load-balancer IP gone from the Service's status",
    'matrix/lb:http',
    (services) => {
      named(services, 'lb').status = { loadBalancer: {} };
    },
    /^198\.51\.100\.\d+:\d+\/tcp still leads to matrix\/lb:http/,
  ],
];

describe('drift: an entry the API took away, kube-proxy not synced since', () => {
  for (const mode of ['iptables', 'nftables'])
    for (const [what, service, edit, title] of FAULTS)
      it(`${mode}: ${what}`, () => {
        const d = driftAfter(mode, edit);
        const stale = d.findings.filter((f) => f.id === 'entry-stale' && f.service === service);
        assert.deepEqual(
          stale.map((f) => f.node).sort(),
          ['node-a', 'node-b'],
          JSON.stringify(d.findings.map((f) => [f.id, f.service, f.title])),
        );
        for (const f of stale) {
          assert.equal(f.severity, 'warning');
          assert.match(f.title, title);
        }
        assert.equal(d.summary.drift, true);
        // not "routes as kube-proxy would, spelled differently"
        assert.ok(
          !d.findings.some((f) => f.id === 'rule-text-differs' && f.service === service),
          JSON.stringify(d.findings.filter((f) => f.id === 'rule-text-differs')),
        );
      });

  it('the recorded tables as they are: no entry-stale', () => {
    for (const mode of ['iptables', 'nftables'])
      assert.ok(!driftAfter(mode, () => undefined).findings.some((f) => f.id === 'entry-stale'));
  });
});
