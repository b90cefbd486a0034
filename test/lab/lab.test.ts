// The lab itself: real kernel, real rules, real traffic (addresses: test/support/lab/lab.ts).
// From a node, curl to the ClusterIP reaches a Pod only through the DNAT rules, ping to it gets
// no answer, DNS through the kube-dns ClusterIP works where kube-proxy wrote its rules; and the
// host's own interfaces, routes and rules are exactly as before.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { hostNetworkState, labSuite, requireLab } from '../support/lab/harness.js';
import { Lab, PODS, SERVICES } from '../support/lab/lab.js';
import { expectedLabRules } from '../support/lab/rules.js';

const PREFIX = 'kdt-net';
const NGINX = SERVICES.find((s) => s.name === 'nginx-svc')!;
const NGINX_PODS = PODS.filter((p) => p.app === 'http').map((p) => p.name);
const URL_ = `http://${NGINX.clusterIP}:${NGINX.port}/`;

/** Running, not a zombie waiting for this process (the lab's parent) to reap it. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('the lab', labSuite(), () => {
  let lab: Lab;
  let hostBefore: string;

  before(async () => {
    requireLab();
    hostBefore = hostNetworkState();
    lab = await Lab.up(PREFIX);
  });
  after(async () => {
    await Lab.down(PREFIX);
  });

  for (const node of ['node-a', 'node-b', 'node-c']) {
    it(`${node}: curl to the ClusterIP reaches an nginx Pod`, () => {
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const r = lab.exec(node, ['curl', '-sS', '-m', '3', URL_]);
        assert.equal(r.code, 0, r.stderr);
        seen.add(r.stdout.trim());
      }
      assert.ok(
        [...seen].every((name) => NGINX_PODS.includes(name)),
        [...seen].join(', '),
      );
    });

    it(`${node}: ping to the ClusterIP gets no answer`, () => {
      const r = lab.exec(node, ['ping', '-n', '-c', '1', '-W', '1', NGINX.clusterIP]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /1 packets transmitted, 0 received/);
    });
  }

  it('the Pods are reached through the DNAT rules: without them the ClusterIP is dead', () => {
    lab.loadIptables('node-a', 'nft', '*nat\nCOMMIT\n');
    try {
      const r = lab.exec('node-a', ['curl', '-sS', '-m', '2', URL_]);
      assert.notEqual(r.code, 0, `answered without rules: ${r.stdout}`);
    } finally {
      lab.loadIptables('node-a', 'nft', expectedLabRules(lab.topology, 'node-a'));
    }
    assert.equal(lab.exec('node-a', ['curl', '-sS', '-m', '3', URL_]).code, 0);
  });

  it('DNS through the kube-dns ClusterIP answers where kube-proxy wrote its rules, not on the seed node', () => {
    const dig = (node: string) =>
      lab.exec(node, [
        'dig',
        '+short',
        '+time=1',
        '+tries=1',
        '@10.96.0.10',
        'nginx-svc.default.svc.cluster.local',
      ]);
    assert.equal(dig('node-a').stdout.trim(), NGINX.clusterIP);
    assert.equal(dig('node-c').stdout.trim(), NGINX.clusterIP);
    assert.equal(dig('node-b').code, 9, 'node-b has no kube-dns rules: no answer');
  });

  it('node-c keeps its rules in the legacy backend only', () => {
    assert.match(
      lab.exec('node-c', ['iptables-legacy-save', '-t', 'nat']).stdout,
      /^:KUBE-SERVICES/m,
    );
    assert.doesNotMatch(lab.exec('node-c', ['iptables-nft-save', '-t', 'nat']).stdout, /KUBE-/);
  });

  it('down stops every process of the lab and removes its namespaces; the host is unchanged', async () => {
    const namespaces = Lab.namespaces(PREFIX);
    assert.equal(namespaces.length, 3 + 2 + PODS.length, 'nodes, switch, workstation and Pods');
    const pids = namespaces.flatMap((ns) =>
      spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' })
        .stdout.split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
    // sshd may have a short-lived child for a probe connection: count only the servers
    const args = spawnSync('ps', ['-o', 'args=', '-p', pids.join(',')], {
      encoding: 'utf8',
    }).stdout;
    assert.equal(args.match(/\[listener\]/g)?.length, 3, args);
    assert.equal(args.match(/listen\(10249, '127\.0\.0\.1'\)/g)?.length, 3, args);
    assert.equal(args.match(/listen\(80\)|dns-server\.ts/g)?.length, PODS.length, args);
    await Lab.down(PREFIX);
    assert.deepEqual(Lab.namespaces(PREFIX), []);
    assert.deepEqual(pids.filter(alive), []);
    assert.equal(hostNetworkState(), hostBefore);
  });

  it('up removes the leftovers of a killed run with the same prefix', async () => {
    await Lab.up(PREFIX);
    const stale = `${PREFIX}.stale-from-a-killed-run`;
    spawnSync('ip', ['netns', 'add', stale]);
    assert.ok(Lab.namespaces(PREFIX).includes(stale));
    lab = await Lab.up(PREFIX);
    assert.ok(!Lab.namespaces(PREFIX).includes(stale));
    assert.equal(lab.exec('node-a', ['curl', '-sS', '-m', '3', URL_]).code, 0);
  });
});
