// kdebug trace on a node whose nftables listing was cut short: walked as far as it was read, and
// stopped at the first chain, set or map the cut hid, with trace's ReadStop contract (trace.v2
// readStopped, partlyRead, fateKnown false, nulls), as an IPVS listing's or an iptables dump's
// walk is. Exit 2: a partial answer; a refusal read before the cut stands (exit 1). svc's packet
// walks (its walked evidence) stop there too.
// The listing: node-a's table as the real kube-proxy v1.37.2 listed it (support/nft-lab.ts), its
// text cut after `lines` lines (its sets end at line 96, the base chains at 181, the chain
// services holds lines 196-198), or its nft -j listing cut inside its rules.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';

interface Doc {
  outcomes: {
    probability: number | null;
    destination: string | null;
    verdict: string | null;
    partlyRead?: string[];
    fateKnown?: false;
    rulesKnown?: number;
    rules: { chain: string }[];
  }[];
  readStopped?: { file: string; line: number | null; reason: string };
}

describe('trace: an nftables listing cut short', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** A snapshot of node-a whose listing is `listing` (the text one, or nft -j's). */
  const snapshot = (listing: string, json = false) => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-nft-cut-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'nodes/node-a'), { recursive: true });
    writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
    writeFileSync(join(dir, `nodes/node-a/nft-ip-kube-proxy${json ? '' : '-text'}.txt`), listing);
    const items = clusterIpObjects(['10.244.1.4', '10.244.2.2']);
    writeFileSync(join(dir, 'objects.json'), JSON.stringify({ kind: 'List', items }));
    return dir;
  };
  const textCut = (lines: number) =>
    snapshot(readFileSync(`${NODE_A_TABLE}.txt`, 'utf8').split('\n').slice(0, lines).join('\n'));
  const trace = (dir: string, dst: string, ...more: string[]) =>
    kdebug([
      'trace',
      ...['--snapshot', dir, '--node', 'node-a', '--src', '10.244.1.9', '--dst', dst],
      ...more,
    ]);
  const doc = (dir: string, dst: string, code = 2) => {
    const r = trace(dir, dst, '-o', 'json');
    assert.equal(r.code, code, r.stderr);
    return JSON.parse(r.stdout) as Doc;
  };
  const fates = (d: Doc) =>
    d.outcomes.map((o) => [o.destination, o.verdict, o.fateKnown, o.partlyRead, o.rulesKnown]);

  it('a walk wholly before the cut keeps its outcome; the stop is said (exit 2)', () => {
    const dir = textCut(300);
    const d = doc(dir, '10.96.0.10:53');
    assert.deepEqual(fates(d), [['10.244.1.2:53', 'ACCEPT', undefined, undefined, undefined]]);
    assert.equal(d.readStopped?.line, 300);
    assert.match(d.readStopped!.reason, /ends inside table ip kube-proxy/);
  });

  it('a refusal read before the cut stands: exit 1', () => {
    const r = trace(textCut(300), '10.96.33.216', '--proto', 'icmp');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /REJECTED/);
  });

  it('a goto to a chain past the cut: the walk stops there, its fate not known', () => {
    const dir = textCut(197);
    const d = doc(dir, '10.96.33.216:80');
    const chain = 'chain service-FN4G4LLS-matrix/cluster-ip/tcp/http';
    assert.deepEqual(fates(d), [[null, null, false, [chain], 3]]);
    assert.match(d.readStopped!.reason, /inside table ip kube-proxy, chain services/);
    const text = trace(dir, '10.96.33.216:80');
    assert.equal(text.code, 2, text.stderr);
    const said = text.stdout.replace(/\s+/g, ' ');
    assert.match(said, /it goes to chain service-FN4G4LLS\S+, which the listing does not hold/);
    // never "kube-proxy has not written this Service": the rules past the cut may hold it
    assert.doesNotMatch(said, /has not written/);
    assert.match(said, /No rule read changed tcp port 80 of 10\.96\.33\.216, but the rules/);
  });

  it('past the last rule read of the chain the cut is inside: not known', () => {
    // a node port: the chain services' third rule (line 198) is past the cut
    const d = doc(textCut(197), '192.0.2.21:32548');
    assert.deepEqual(fates(d), [[null, null, false, ['chain services'], 2]]);
  });

  it('cut before the chains: the walk stops at the first base chain kube-proxy writes', () => {
    // inside the map service-ips: no chain read
    const dir = textCut(70);
    const d = doc(dir, '10.96.33.216:80');
    assert.deepEqual(fates(d), [[null, null, false, ['chain filter-prerouting-pre-dnat'], 0]]);
    const said = trace(dir, '10.96.33.216:80').stdout.replace(/\s+/g, ' ');
    assert.match(said, /comes to the prerouting hook's chain filter-prerouting-pre-dnat/);
    // it passed no chain: never "no rule matched in any chain it passed"
    assert.doesNotMatch(said, /in any chain it passed/);
  });

  it("svc's walked evidence: not known past the cut, never 'the node answers it'", () => {
    const dir = textCut(197);
    const r = kdebug(['svc', 'cluster-ip', '-n', 'matrix', '--snapshot', dir, '-o', 'json']);
    const walked = [...r.stdout.matchAll(/"text": "(on node-a, [^"]*)"/g)].map((m) => m[1]);
    assert.ok(walked.length > 0, r.stdout + r.stderr);
    for (const w of walked) {
      assert.match(
        w!,
        /not known: the walk stops at chain \S+, which the rules read \(cut short\)/,
      );
      assert.doesNotMatch(w!, /answers it/);
    }
  });

  it('nft -j cut inside its rules: a chain whose rules lie past the cut is not known', () => {
    const json = readFileSync(`${NODE_A_TABLE}.json`, 'utf8');
    // up to the rule of the chain services that looks the packet up in service-ips
    const at = json.indexOf('"vmap"', json.indexOf('"chain": "services"'));
    const d = doc(snapshot(json.slice(0, at), true), '10.96.33.216:80');
    assert.deepEqual(fates(d), [[null, null, false, ['chain services'], 2]]);
    assert.match(d.readStopped!.reason, /the nft -j listing/);
  });
});
