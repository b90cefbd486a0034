// A node whose kube-proxy is read as a newer release than its nftables table allows (the real
// v1.31 and v1.35 tables of test/fixtures/releases, the image retagged v1.37.2: an upgrade that
// did not resync, a table another kube-proxy left): svc says rules-release-disagrees with the
// version and where it was read beside the table's signs and where, as in iptables mode; drift
// compares the table with the newest release it allows, so a fault in it is still found.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { allModes } from '../support/modes.js';
import { kdebug } from '../support/cli.js';
import { recordings } from '../versions/record.js';

const nftables = recordings().filter((r) => r.mode === 'nftables');
const dirOf = (minor: number) => nftables.find((r) => r.release.minor === minor)!.dir;
const work = mkdtempSync(join(tmpdir(), 'kdebug-nft-disagrees-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** kube-proxy's image tag in the recording's objects, replaced. */
const retagged = (objects: string, tag: string) =>
  objects.replace(/(\/kube-proxy):v[0-9.]+"/g, `$1:${tag}"`);

/** A copy of the recording of `minor` on disk, kube-proxy's image tagged `tag`. */
function copied(minor: number, tag: string): string {
  const dir = join(work, `${minor}-${tag}`);
  cpSync(dirOf(minor), dir, { recursive: true });
  const objects = join(dir, 'objects.json');
  writeFileSync(objects, retagged(readFileSync(objects, 'utf8'), tag));
  return dir;
}

/** The recording of `minor` read, kube-proxy's image tagged `tag`. */
async function read(minor: number, tag: string): Promise<Facts> {
  const facts = await readSnapshot(dirOf(minor));
  for (const o of facts.objects) {
    const spec = o['spec'] as { containers?: { image?: string }[] } | undefined;
    for (const c of spec?.containers ?? [])
      if (c.image?.includes('/kube-proxy:')) c.image = c.image.replace(/:[^:/]+$/, `:${tag}`);
  }
  return facts;
}

interface Said {
  id: string;
  status: string;
  title: string;
  evidence: { kind: string; text: string; node?: string; source?: string }[];
}

/** Every finding of svc's JSON answer. */
function findingsOf(doc: unknown): Said[] {
  const out: Said[] = [];
  const walk = (o: unknown): void => {
    if (Array.isArray(o)) o.forEach(walk);
    else if (o && typeof o === 'object') {
      const f = o as Record<string, unknown>;
      if (typeof f['id'] === 'string' && typeof f['status'] === 'string') out.push(f as never);
      Object.values(f).forEach(walk);
    }
  };
  walk(doc);
  return out;
}

describe('nftables: kube-proxy read newer than its table allows', () => {
  it('svc says rules-release-disagrees: the version and where it was read, the sign and where', () => {
    const dir = copied(31, 'v1.37.2');
    const r = kdebug(['svc', '--snapshot', dir, '-n', 'matrix', 'cluster-ip', '-o', 'json']);
    const found = findingsOf(JSON.parse(r.stdout)).filter(
      (f) => f.id === 'rules-release-disagrees',
    );
    assert.equal(found.length, 1, r.stdout);
    const f = found[0]!;
    assert.equal(f.status, 'warn');
    assert.match(f.title, /kube-proxy v1\.37\.2 read, rules spelled as v1\.32 or earlier/);
    assert.deepEqual(
      f.evidence.slice(0, 2).map((e) => e.kind),
      ['read', 'observed'],
    );
    assert.match(
      f.evidence[0]!.text,
      /^kube-proxy v1\.37\.2 on node-a, from the image registry\.k8s\.io\/kube-proxy:v1\.37\.2 of Pod /,
    );
    // the table's sign, as the recording holds it: v1.31 hooks filter-input at dstnat - 10
    assert.equal(
      f.evidence[1]!.text,
      'nodes/node-a/nft-ip-kube-proxy.txt: kube-proxy 1.30-1.32 (filter-input at priority -110: 1.32 or earlier), by its table, not the v1.37 read for this node (a kube-proxy that is not the one running, or a fork): compared as v1.32',
    );
    assert.equal(f.evidence[1]!.source, 'nodes/node-a/nft-ip-kube-proxy.txt');
    // compared as the table's release, its Service routes as that release would: a pass beside
    assert.ok(
      findingsOf(JSON.parse(r.stdout)).some((x) => x.id === 'rules-match' && x.status === 'pass'),
    );
  });

  it('drift -o json names the disagreement per node and finds no drift in the healthy table', () => {
    const dir = copied(31, 'v1.37.2');
    const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
    assert.equal(r.code, 0, r.stdout);
    const doc = JSON.parse(r.stdout) as {
      nodes: { node: string; releaseDisagrees: unknown; writtenBy: string | null }[];
    };
    assert.deepEqual(
      doc.nodes.map((n) => [n.node, n.releaseDisagrees]),
      ['node-a', 'node-b'].map((n) => [n, { read: 'v1.37', upTo: 'v1.32', comparedAs: 'v1.32' }]),
    );
  });

  it('the release read agrees with its own table: null on every recording', async () => {
    for (const { release, dir } of nftables) {
      const a = new Analysis(await readSnapshot(dir), { code: allModes });
      for (const node of ['node-a', 'node-b']) {
        const d = a.node(node).drift();
        assert.equal(d.releaseDisagrees, null, `v1.${release.minor} ${node}`);
        assert.equal(d.release?.minor, release.minor, `v1.${release.minor} ${node}`);
      }
    }
  });

  it("v1.35's table read as v1.37.2, a service-ips element deleted: compared as v1.35, the fault found", async () => {
    const facts = await read(35, 'v1.37.2');
    const stem = nftStems('IPv4').json;
    const json = JSON.parse(facts.nodes['node-a']![stem]!) as {
      nftables: Record<string, unknown>[];
    };
    const map = json.nftables.find(
      (x) => (x['map'] as { name?: string } | undefined)?.name === 'service-ips',
    )!['map'] as { elem: unknown[] };
    map.elem = map.elem.filter((e) => !JSON.stringify(e).includes('matrix/cluster-ip/tcp/http'));
    facts.nodes['node-a']![stem] = JSON.stringify(json);
    const d = new Analysis(facts, { code: allModes }).node('node-a').drift();
    assert.equal(d.release?.minor, 35);
    assert.deepEqual(d.releaseDisagrees, { read: 'v1.37', upTo: 'v1.35', comparedAs: 'v1.35' });
    assert.deepEqual(
      d.findings.map((f) => `${f.id} ${f.service}`),
      ['service-rules-missing matrix/cluster-ip:http'],
    );
  });
});
