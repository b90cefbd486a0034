// kdebug trace on an nftables node whose entry into a Service's rules is missing (issue 31, the
// reviewer's fault): the element of map service-ips for the Service port, or nat-prerouting's jump
// to chain services. The trace says which entry is missing, as the iptables walk says a missing
// jump to KUBE-SERVICES, never "kube-proxy has not written this Service" or the rejecting rule
// alone (cluster-ips-check's reject reads as a port the ClusterIP does not serve).
// The listing: node-a's table as the real kube-proxy v1.37.2 wrote it (support/nft-lab.ts), one
// line deleted; the TUI's Trace screen walks the same (TuiData.trace is NodeAnalysis.traced).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Facts } from '../../src/core/model.js';
import { analyze } from '../../src/tui/data.js';
import { kdebug } from '../support/cli.js';
import { clusterIpObjects, labListing, NODE_A_TABLE } from '../support/nft-lab.js';
import { allModes } from '../support/modes.js';

const ELEMENT = '10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http,';
const objects = () => clusterIpObjects(['10.244.1.4', '10.244.2.2']);

describe('trace: an nftables Service entry missing', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** A snapshot of node-a whose listing lacks its first line that reads `line` (none: whole). */
  const without = (line?: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-nft-entry-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'nodes/node-a'), { recursive: true });
    writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
    writeFileSync(
      join(dir, 'nodes/node-a/nft-ip-kube-proxy-text.txt'),
      line ? labListing(line, '').text : readFileSync(`${NODE_A_TABLE}.txt`, 'utf8'),
    );
    writeFileSync(join(dir, 'objects.json'), JSON.stringify({ kind: 'List', items: objects() }));
    return dir;
  };
  const trace = (dir: string, ...from: string[]) => {
    const r = kdebug([
      'trace',
      ...['--snapshot', dir, '--node', 'node-a', '--dst', '10.96.33.216:80', '--no-color'],
      ...from,
    ]);
    return { ...r, flat: r.stdout.replace(/\s+/g, ' ') };
  };

  // before: "REJECTED" by cluster-ips-check, and no word of why
  it("service-ips without the Service port's element: the entry is said missing, exit 1", () => {
    const dir = without(ELEMENT);
    for (const from of [['--src', '10.244.1.9'], ['--from-host']]) {
      const r = trace(dir, ...from);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.flat,
        /On node node-a, map service-ips of table ip kube-proxy holds no element for 10\.96\.33\.216 \. tcp \. 80: this Service port's entry/,
      );
      assert.match(r.flat, /Then ip kube-proxy cluster-ips-check line 1 rejects it/);
      assert.match(r.flat, /next: kdebug drift --node node-a/);
      assert.doesNotMatch(r.flat, /has not written this Service|does not jump/);
    }
  });

  it("nat-prerouting without its jump to services: said for Pods' packets, not the node's", () => {
    const dir = without('jump services');
    const pod = trace(dir, '--src', '10.244.1.9');
    assert.equal(pod.code, 1, pod.stderr);
    assert.match(
      pod.flat,
      /On node node-a, chain nat-prerouting does not jump to chain services: packets from Pods and the network never reach the Service's rules/,
    );
    assert.doesNotMatch(pod.flat, /has not written this Service|holds no element/);
    // nat-output still jumps: the node's own packets are DNATed, and nothing is said missing
    const host = trace(dir, '--from-host');
    assert.equal(host.code, 0, host.stderr);
    assert.match(host.flat, /DNAT to 10\.244\.1\.4:80/);
    assert.doesNotMatch(host.flat, /does not jump|holds no element/);
  });

  it('the whole table: nothing is said missing', () => {
    const r = trace(without(), '--src', '10.244.1.9');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.flat, /does not jump|holds no element/);
  });

  it("the TUI's Trace screen walks the same: the entry missing is in its walk", () => {
    const facts: Facts = {
      objects: objects(),
      nodes: {
        'node-a': {
          'nft-ip-kube-proxy-text': labListing(ELEMENT, '').text,
          'proxy-mode': 'nftables',
        },
      },
      meta: {},
    };
    const { result } = analyze({ facts, code: allModes })
      .nodes.find((n) => n.name === 'node-a')!
      .trace({
        src: '10.244.1.9',
        dst: '10.96.33.216',
        dport: 80,
        protocol: 'tcp',
        fromHost: false,
      });
    assert.deepEqual(result.entryMissing, {
      map: 'map service-ips of table ip kube-proxy',
      key: '10.96.33.216 . tcp . 80',
    });
    assert.deepEqual(
      result.outcomes.map((o) => o.verdict),
      ['REJECT'],
    );
  });
});
