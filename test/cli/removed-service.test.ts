// A node still routing a Service the API no longer has: kube-proxy deletes a removed Service's
// chains and entry rules on its next sync, so drift says them (orphan-chain, as IPVS says a
// leftover virtual server), and `svc IP:PORT` says the nodes still route the address.
//
// IP conventions: the demo cluster (nodes vm-12-7-centos 10.0.12.7, vm-12-11-centos 10.0.12.11;
// Pod CIDR 10.244.0.0/16; nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80, 10.244.1.7:80), and the
// nftables lab's node-a (support/nft-lab.ts: Service CIDR 10.96.0.0/16, kubernetes 10.96.0.1).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/core/model.js';
import { kdebug } from '../support/cli.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';

type Finding = { id: string; service?: string; message: string; node: string };

/** What `snapshot save` writes in meta.json for each capture: --service NAME, --all (-n), -A. */
const CAPTURED = {
  service: (name: string) => ({ namespace: 'default', service: name }),
  namespace: { namespace: 'default' },
  all: {},
};

/** The demo with the Services `drop` keeps (by name) removed from objects.json, as captured by
 * `meta` (default: --all in namespace default). */
function demoWithout(
  drop: (name: string) => boolean,
  meta: Record<string, string> = CAPTURED.namespace,
): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-removed-svc-'));
  cpSync('snapshots/nginx-svc', dir, { recursive: true });
  const file = join(dir, 'objects.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
  list.items = list.items.filter((o) => o.kind !== 'Service' || !drop(o.metadata?.name ?? ''));
  writeFileSync(file, JSON.stringify(list));
  const metaFile = join(dir, 'meta.json');
  const {
    namespace: _,
    service: __,
    ...rest
  } = JSON.parse(readFileSync(metaFile, 'utf8')) as {
    [k: string]: unknown;
  };
  writeFileSync(metaFile, JSON.stringify({ ...rest, ...meta }));
  return dir;
}

/** vm-12-7-centos also routing 10.1.5.5:8080 for kube-system/metrics-server (nginx-svc's rules,
 * renamed), a Service the demo's objects do not have. */
function withMetricsServer(dir: string): void {
  const file = join(dir, 'nodes/vm-12-7-centos/iptables-save.txt');
  const renamed = (l: string) =>
    l
      .replace(/(ELCM5PCEQWBT|SMDVMBZNJPO5|FNO4E6JYD7EG)[A-Z0-9]{4}/g, '$1ZZZZ')
      .replace('default/nginx-svc:http', 'kube-system/metrics-server:https')
      .replace('10.1.190.219', '10.1.5.5');
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = lines.flatMap((l) =>
    /ELCM5PCEQWBTUJ2I|SMDVMBZNJPO5AA7R|FNO4E6JYD7EGUHTP|nginx-svc:http cluster IP/.test(l)
      ? [l, renamed(l)]
      : [l],
  );
  writeFileSync(file, out.join('\n'));
}

const orphans = (dir: string, ...args: string[]) =>
  drift(dir, ...args).findings.filter((f) => f.id === 'orphan-chain');

const drift = (dir: string, ...args: string[]) => {
  const r = kdebug(['drift', '--snapshot', dir, ...args, '-o', 'json']);
  return { code: r.code, findings: (JSON.parse(r.stdout) as { findings: Finding[] }).findings };
};

describe('a Service removed from the API whose rules a node still holds', () => {
  it('iptables: drift says the rules (exit 1), not "no drift"', () => {
    const dir = demoWithout((n) => n === 'nginx-svc');
    try {
      const r = drift(dir, '--node', 'vm-12-11-centos');
      assert.equal(r.code, 1);
      const stale = r.findings.filter((f) => f.id === 'orphan-chain');
      assert.deepEqual(
        stale.map((f) => f.service),
        ['default/nginx-svc:http'],
      );
      assert.match(
        stale[0]!.message,
        /still routes 10\.1\.190\.219:8080\/tcp to 10\.244\.0\.3:80, 10\.244\.1\.7:80, but the API has no Service default\/nginx-svc and no Service with cluster IP 10\.1\.190\.219/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('svc IP:PORT says which nodes still route it, with the line read there (exit 2)', () => {
    const dir = demoWithout((n) => n === 'nginx-svc');
    try {
      const r = kdebug(['svc', '10.1.190.219:8080', '--snapshot', dir]);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        /no Service in \S+ has cluster IP 10\.1\.190\.219; yet vm-12-11-centos, vm-12-7-centos still route it \(observed on the node: nodes\/vm-12-11-centos\/iptables-save\.txt:\d+, the rules of default\/nginx-svc:http; nodes\/vm-12-7-centos\/iptables-save\.txt:\d+/,
      );
      // an address no node routes: as before
      const none = kdebug(['svc', '10.1.190.218:8080', '--snapshot', dir]);
      assert.match(none.stderr, /has cluster IP 10\.1\.190\.218\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("svc IP:PORT of a Service one Service's capture lacks: not said removed", () => {
    const dir = demoWithout((n) => n === 'kubernetes', CAPTURED.service('nginx-svc'));
    try {
      const r = kdebug(['svc', '10.1.0.1:443', '--snapshot', dir]);
      assert.match(
        r.stderr,
        /route it \(observed on the node: .*default\/kubernetes:https.*\): the snapshot holds no Service default\/kubernetes, and default's Services were not listed whole/,
      );
      assert.doesNotMatch(r.stderr, /no longer has/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("svc IP:PORT of a Service's external IP: says whose it is", () => {
    const dir = demoWithout(() => false);
    try {
      const file = join(dir, 'objects.json');
      const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
      const svc = list.items.find((o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc')!;
      (svc['spec'] as { externalIPs?: string[] }).externalIPs = ['192.0.2.10'];
      writeFileSync(file, JSON.stringify(list));
      const r = kdebug(['svc', '192.0.2.10:8080', '--snapshot', dir]);
      assert.match(
        r.stderr,
        /has cluster IP 192\.0\.2\.10; it is an external IP \(spec\.externalIPs\) of default\/nginx-svc/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a capture of one namespace (--all -n default): kube-system, read only for kube-dns, says nothing', () => {
    const dir = demoWithout(() => false);
    try {
      withMetricsServer(dir);
      assert.deepEqual(orphans(dir, '--node', 'vm-12-7-centos'), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a capture of every namespace (--all -A): a Service gone from kube-system is said', () => {
    const dir = demoWithout(() => false, CAPTURED.all);
    try {
      withMetricsServer(dir);
      assert.deepEqual(
        orphans(dir, '--node', 'vm-12-7-centos').map((f) => f.service),
        ['kube-system/metrics-server:https'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one Service captured (--service kubernetes): the others are not said removed', () => {
    const dir = demoWithout((n) => n === 'nginx-svc', CAPTURED.service('kubernetes'));
    try {
      assert.deepEqual(orphans(dir, '--all-nodes'), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a Service the API has without a cluster IP now: said so, not "the API has no Service"', () => {
    const dir = demoWithout(() => false, CAPTURED.service('nginx-svc'));
    try {
      const file = join(dir, 'objects.json');
      const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
      const svc = list.items.find((o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc')!;
      svc['spec'] = { type: 'ExternalName', externalName: 'example.com' };
      writeFileSync(file, JSON.stringify(list));
      const stale = orphans(dir, '--node', 'vm-12-7-centos');
      assert.deepEqual(
        stale.map((f) => f.service),
        ['default/nginx-svc:http'],
      );
      assert.match(
        stale[0]!.message,
        /but Service default\/nginx-svc has no cluster IP now \(type ExternalName\)/,
      );
      assert.doesNotMatch(stale[0]!.message, /the API has no Service/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one Service captured (no default/kubernetes): the others are not said removed', () => {
    const dir = demoWithout((n) => n !== 'nginx-svc', CAPTURED.service('nginx-svc'));
    try {
      const r = drift(dir, '--all-nodes');
      assert.deepEqual(
        r.findings.filter((f) => f.id === 'orphan-chain'),
        [],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('nftables: the map elements of Services the API does not have, in the namespaces read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-removed-nft-'));
    try {
      cpSync(`${NODE_A_TABLE}.json`, join(dir, 'nodes/node-a/nft-ip-kube-proxy.txt'));
      writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
      const kubernetes: KubeObject = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', namespace: 'default' },
        spec: {
          type: 'ClusterIP',
          clusterIP: '10.96.0.1',
          clusterIPs: ['10.96.0.1'],
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
        },
      };
      const items = [...clusterIpObjects(['10.244.1.4', '10.244.2.2']), kubernetes];
      writeFileSync(join(dir, 'objects.json'), JSON.stringify({ kind: 'List', items }));
      // as `snapshot save --all -n matrix` writes it
      const captured = { namespace: 'matrix', capturedAt: '2026-12-07T00:00:00Z' };
      writeFileSync(join(dir, 'meta.json'), JSON.stringify(captured));
      const r = drift(dir, '--node', 'node-a');
      assert.equal(r.code, 1);
      const said = r.findings.filter((f) => f.id === 'orphan-chain').map((f) => f.service);
      // matrix's other Services are gone from the API; kube-system's were not read
      assert.ok(said.includes('matrix/affinity:http'), said.join(', '));
      assert.ok(!said.some((s) => s?.startsWith('kube-system/')), said.join(', '));
      assert.ok(!said.includes('matrix/cluster-ip:http'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
