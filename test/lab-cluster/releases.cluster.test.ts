// The oldest modelled kube-proxy of each mode, live: the lab runs kube-proxy 1.30 (iptables) and
// 1.31 (nftables, its first release there) beside the 1.37 control plane, creates the truth matrix,
// and `kdebug expect` must equal what that real kube-proxy wrote on every node, `drift` finds
// nothing, and a rule deleted for real is found, as is a kube-proxy stopped while its Service
// changed (its node's rules stale, the other node's current). The newest (1.37) is proven by
// the other lab tests; every release in between, from its recording (test/versions).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, VIA_POD, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, DIR, down, up } from '../support/cluster/cluster.js';
import { applyMatrix, MATRIX_NAMESPACE } from '../support/cluster/matrix.js';
import type { ProxyMode } from '../support/cluster/topology.js';
import {
  differences,
  nftDifferences,
  nftRoundTrip,
  roundTrip,
  scratchNamespace,
} from '../support/cluster/truth.js';
import { hasCommand, skipWithout } from '../support/skip.js';
import { LATEST_PATCH } from '../versions/record.js';

const PREFIX = 'kdr';
const OLDEST: { minor: number; mode: ProxyMode }[] = [
  { minor: 30, mode: 'iptables' },
  { minor: 31, mode: 'nftables' },
];

const why =
  goUnavailable() ?? clusterUnavailable() ?? (hasCommand('nft') ? '' : 'nft (nftables) is missing');

for (const { minor, mode } of OLDEST)
  describe(`kube-proxy ${LATEST_PATCH[minor]} (${mode}), live`, skipWithout(why), () => {
    let c: ClusterClient;
    before(async () => {
      c = new ClusterClient(
        await up({ prefix: PREFIX, nodes: 2, mode, kubeProxy: LATEST_PATCH[minor] }),
      );
      await applyMatrix(c);
    });
    after(() => down());

    const rules = (node: string) =>
      c.onNode(
        node,
        mode === 'nftables' ? ['nft', 'list', 'table', 'ip', 'kube-proxy'] : ['iptables-save'],
      ).stdout;

    /** What `kdebug expect` (on a fresh live snapshot) gets wrong about each node's real rules. */
    const wrong = (scratch: string) => {
      const dir = mkdtempSync(join(tmpdir(), `${PREFIX}-snapshot-`));
      rmSync(dir, { recursive: true });
      try {
        const saved = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--via', 'kube-proxy']);
        assert.equal(saved.code, 0, saved.stderr);
        return c.info.nodes.flatMap((n) => {
          const e = c.kdebug(['expect', '--snapshot', dir, '--node', n.name]);
          assert.equal(e.code, 0, e.stderr);
          assert.match(e.stdout, new RegExp(`v1\\.${minor}\\b`), 'expect models the release read');
          const d =
            mode === 'nftables'
              ? nftDifferences(
                  nftRoundTrip(scratch, e.stdout),
                  nftRoundTrip(scratch, rules(n.name)),
                )
              : differences(roundTrip(scratch, e.stdout), roundTrip(scratch, rules(n.name)));
          return d.length > 0 ? [`${n.name}:`, ...d] : [];
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    it('kdebug expect equals what this kube-proxy wrote on every node; drift finds nothing', async () => {
      const scratch = scratchNamespace(PREFIX);
      const drift = () => c.kdebug(['drift', '--all-nodes', '--via', 'kube-proxy', '-o', 'json']);
      // kube-proxy catches up with the API in its own time (an endpoint turning ready after the
      // snapshot): its rules must come to equal expect, and drift to find nothing, within a minute
      let d = wrong(scratch);
      let r = drift();
      for (
        const end = Date.now() + 60_000;
        (d.length > 0 || r.code !== 0) && Date.now() < end;
        d = wrong(scratch), r = drift()
      )
        await new Promise((done) => setTimeout(done, 2000));
      assert.deepEqual(d, [], `kdebug expect differs from kube-proxy's rules:\n${d.join('\n')}`);
      assert.equal(r.code, 0, r.stdout + r.stderr);
    });

    it('a Service rule deleted for real on one node is found there, as on 1.37', () => {
      const node = c.info.nodes[0]!.name;
      if (mode === 'nftables') {
        // the cluster IP's element of the service-ips map, deleted by hand
        const element = /(\S+ \. tcp \. 80) : goto service-\S+-matrix\/cluster-ip\/tcp\/http/.exec(
          rules(node),
        )?.[1];
        assert.ok(element, 'the cluster-ip Service has its map element');
        const del = c.onNode(node, [
          'nft',
          'delete',
          'element',
          'ip',
          'kube-proxy',
          'service-ips',
          `{ ${element} }`,
        ]);
        assert.equal(del.code, 0, del.stderr);
      } else {
        const rule = /^-A KUBE-SERVICES .*"matrix\/cluster-ip:http cluster IP".*$/m.exec(
          rules(node),
        )?.[0];
        assert.ok(rule, 'the cluster-ip Service has its KUBE-SERVICES rule');
        const del = c.deleteRule(node, rule);
        assert.equal(del.code, 0, del.stderr);
      }
      const r = c.kdebug([
        'svc',
        'cluster-ip',
        '-n',
        MATRIX_NAMESPACE,
        '--via',
        'kube-proxy',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 1, r.stderr);
      const rulesStep = (
        JSON.parse(r.stdout) as {
          steps: { id: string; findings: { id: string; status: string; node?: string }[] }[];
        }
      ).steps.find((s) => s.id === 'rules')!;
      assert.ok(
        rulesStep.findings.some(
          (f) => f.id === 'service-rules-missing' && f.status === 'fail' && f.node === node,
        ),
        JSON.stringify(rulesStep.findings.map((f) => [f.id, f.status, f.node])),
      );
    });

    it('kube-proxy stopped on one node, then the Deployment scaled: not running there, its rules stale there only, as on 1.37', async () => {
      const [kept, stopped] = c.info.nodes.map((n) => n.name) as [string, string];
      // the lab's kubelet stops a node's kube-proxy while this file is there
      const stop = join(DIR, 'nodes', stopped, 'kube-proxy.stopped');
      writeFileSync(stop, '');
      try {
        await c.until(`kube-proxy on ${stopped} to stop`, () =>
          /False/.test(
            c.kubectl([
              ...['-n', 'kube-system', 'get', 'pods', '--field-selector'],
              `spec.nodeName=${stopped}`,
              ...['-l', 'k8s-app=kube-proxy', '-o'],
              'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}',
            ]),
          ),
        );
        c.kubectl(['-n', MATRIX_NAMESPACE, 'scale', 'deployment', 'web', '--replicas=3']);
        const web = () => c.podIPs(MATRIX_NAMESPACE, 'app=web');
        await c.until(
          '3 ready web Pods',
          () => c.readiness(MATRIX_NAMESPACE, 'app=web').filter((r) => r === 'True').length === 3,
          120_000,
        );
        // each mode's DNAT to an endpoint, as this release writes it
        const to = (ip: string) =>
          mode === 'nftables' ? `dnat to ${ip}:` : `--to-destination ${ip}:`;
        // node-port's own rules: each Service's EndpointSlice takes the new Pod on its own, so an
        // address DNATed for another Service of app=web says nothing of node-port's yet
        const ofNodePort = (lines: string[], ip: string) =>
          lines.some(
            (l) =>
              /matrix\/node-port[:/"]/.test(l) && (l.includes(to(ip)) || l.includes(`__${ip}/`)),
          );
        await c.until(`${kept} to write the new endpoint`, () => {
          const lines = rules(kept).split('\n');
          return web().every((ip) => ofNodePort(lines, ip));
        });
        assert.ok(!web().every((ip) => rules(stopped).includes(to(ip))), `${stopped} is stale`);
        // its kube-proxy Pod takes no exec while it is down: the nodes are read by debug Pods
        const r = c.kdebug(['svc', 'node-port', '-n', MATRIX_NAMESPACE, '-o', 'json', ...VIA_POD]);
        assert.equal(r.code, 1, r.stderr);
        const doc = JSON.parse(r.stdout) as SvcJson;
        const at = (step: string) =>
          doc.steps
            .find((x) => x.id === step)!
            .findings.map((f) => `${f.id}:${f.status}${f.node ? `@${f.node}` : ''}`);
        const said = JSON.stringify(doc.steps.map((x) => [x.id, at(x.id)]));
        assert.ok(at('kube-proxy').includes(`kube-proxy-not-running:fail@${stopped}`), said);
        assert.ok(at('rules').includes(`endpoint-missing:warn@${stopped}`), said);
        assert.ok(
          !at('rules').some((f) => f.endsWith(`@${kept}`) && /:(warn|fail)@/.test(f)),
          said,
        );
      } finally {
        rmSync(stop, { force: true });
        c.kubectl(['-n', MATRIX_NAMESPACE, 'scale', 'deployment', 'web', '--replicas=2']);
      }
    });
  });
