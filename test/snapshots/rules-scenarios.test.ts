// The scenario snapshots of issue 3 (stale-endpoint, missing-service-rules,
// nodeport-local-no-endpoint, orphan-chains): every file is exactly what
// test/support/scenarios.ts makes (regenerate with `npx tsx test/support/make-scenarios.ts`),
// the objects agree with each other, and every node's dump loads with the real iptables-restore
// in a private network namespace and reads back unchanged.
//
// IP conventions: as the demo, nodes vm-12-7-centos 10.0.12.7 and vm-12-11-centos 10.0.12.11.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { clusterView } from '../../src/core/kube/objects.js';
import { SNAPSHOTS, scenarioFiles } from '../support/make-scenarios.js';
import { SCENARIOS } from '../support/scenarios.js';
import { skipWithout } from '../support/skip.js';

const made = SCENARIOS.map((make) => make());

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
  );

describe('scenario snapshots', () => {
  for (const s of made) {
    it(`${s.name}: the files are what the generator makes`, () => {
      const files = scenarioFiles(s);
      const dir = join(SNAPSHOTS, s.name);
      assert.deepEqual(walk(dir).sort(), [...files.keys()].sort());
      for (const [path, text] of files)
        assert.equal(readFileSync(join(dir, path), 'utf8'), text, `${s.name}/${path}`);
    });

    it(`${s.name}: objects that agree with each other`, () => {
      const v = clusterView(s.facts.objects);
      assert.deepEqual(v.nodes.map((n) => n.name).sort(), ['vm-12-11-centos', 'vm-12-7-centos']);
      const podIPs = new Set(v.pods.map((p) => p.podIP));
      for (const slice of v.endpointSlices) {
        assert.ok(
          v.services.some(
            (svc) => svc.namespace === slice.namespace && svc.name === slice.serviceName,
          ),
          `${slice.name} has its Service`,
        );
        for (const e of slice.endpoints) {
          if (slice.serviceName === 'kubernetes') continue;
          assert.ok(podIPs.has(e.addresses[0]), `${slice.name}: ${e.addresses[0]} is a Pod`);
          const pod = v.pods.find((p) => p.podIP === e.addresses[0])!;
          assert.equal(pod.nodeName, e.nodeName, `${e.addresses[0]} on its node`);
        }
      }
      // kube-proxy's configuration, or Cilium's where it replaces kube-proxy
      const proxy = v.configMaps.find((c) => c.name === 'kube-proxy');
      const cilium = v.configMaps.find((c) => c.name === 'cilium-config');
      if (proxy) assert.match(proxy.data['config.conf']!, /clusterCIDR: 10\.244\.0\.0\/16/);
      else assert.equal(cilium?.data['kube-proxy-replacement'], 'true');
      assert.equal(
        v.pods.some((p) => p.labels['k8s-app'] === 'kube-proxy'),
        proxy !== undefined,
      );
      assert.ok(s.readme.startsWith('# Scenario: '));
      assert.match(s.readme, /\*\*Fault: /);
    });
  }
});

const ns = `kd-scenario-${process.pid}`;
const root = process.getuid?.() === 0;
const tools =
  spawnSync('sh', [
    '-c',
    'command -v ip && command -v iptables-restore && command -v iptables-save && command -v ipset',
  ]).status === 0;
const missing = !root ? 'not root' : !tools ? 'ip, iptables or ipset missing' : '';
if (missing && process.env['CI'] === 'true')
  throw new Error(`real-iptables tests cannot run in CI: ${missing}`);

describe(
  'scenario dumps against the real iptables',
  skipWithout(missing && `${missing} (needs root, iproute2, iptables and ipset)`),
  () => {
    before(() => execFileSync('ip', ['netns', 'add', ns]));
    after(() => {
      spawnSync('ip', ['netns', 'del', ns]);
    });
    const inNs = (cmd: string, args: string[], input?: string) =>
      execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8', input });
    const rules = (text: string) =>
      text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('-A ') ||
            (l.startsWith(':') && !/^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(l)),
        );

    for (const s of made)
      for (const [node, outputs] of Object.entries(s.facts.nodes).filter(
        ([, o]) => 'iptables-save' in o,
      ))
        it(`${s.name} ${node}: loads and reads back unchanged`, () => {
          const dump = outputs['iptables-save']!;
          // IPVS mode's rules match kube-proxy's ipsets: the node's own, loaded by the real ipset
          // (the sets a previous node's rules match go first: a set in use cannot be destroyed)
          if (outputs['ipset-save'])
            inNs(
              'sh',
              ['-c', 'iptables -t nat -F && iptables -t nat -X && ipset destroy; ipset restore'],
              outputs['ipset-save'],
            );
          inNs('iptables-restore', [], dump);
          // the tables the dump has: a nat-only dump leaves the filter table as it was
          const tables = [...dump.matchAll(/^\*(\w+)$/gm)].flatMap((m) => ['-t', m[1]!]);
          const saved =
            tables.length > 2 ? inNs('iptables-save', []) : inNs('iptables-save', tables);
          assert.deepEqual(rules(saved).sort(), rules(dump).sort());
        });
  },
);
