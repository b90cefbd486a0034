// A `cilium service list` (its frontends "10.96.0.10:53/TCP") and a `bpf lb list` of a release
// before 1.17 (its entries "10.96.0.10:53", no protocol: the service map's key holds none there)
// from one node: an entry without a protocol is the map entry of every protocol's frontend on its
// address and port, so it fills in each of them, and the paste says which protocol's it is is not
// shown; never a second frontend of its own.
//
// IP conventions: web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 and 10.244.1.6; kube-dns
// 10.96.0.10 with 10.244.0.9; 203.0.113.9 a client outside the cluster.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { dumpWarnings } from '../../../src/output/rules/warnings.js';
import { ciliumCluster, facts } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const LIST = [
  'ID   Frontend            Service Type   Backend',
  '1    10.96.0.50:80/TCP   ClusterIP      1 => 10.244.0.5:8080/TCP (active)',
  '                                        2 => 10.244.1.6:8080/TCP (active)',
  '2    10.96.0.10:53/TCP   ClusterIP      1 => 10.244.0.9:53/TCP (active)',
  '3    10.96.0.10:53/UDP   ClusterIP      1 => 10.244.0.9:53/UDP (active)',
];
const BPF = [
  'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)',
  '10.96.0.50:80       0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
  '                    10.244.0.5:8080 (2) (1)',
  '                    10.244.1.6:8080 (2) (2)',
  '10.96.0.10:53       0.0.0.0:0 (3) (0) [ClusterIP, non-routable]',
  '                    10.244.0.9:53 (3) (1)',
  '10.96.0.77:443      0.0.0.0:0 (4) (0) [ClusterIP]',
];
const read = (listings: string[][]) =>
  parseCilium(
    listings
      .map((l) => ['# cilium ' + (l === LIST ? 'service list' : 'bpf lb list'), ...l].join('\n'))
      .join('\n') + '\n',
    'p',
  );
const shape = (t: ReturnType<typeof parseCilium>) =>
  t.frontends.map((f) => [
    `${f.ip}:${f.port}/${f.protocol ?? '?'}`,
    f.flags.join(),
    f.backends.length,
  ]);

describe('service list and a bpf lb list without protocols, one paste', () => {
  for (const [what, order] of [
    ['service list first', [LIST, BPF]],
    ['bpf lb list first', [BPF, LIST]],
  ] as const)
    it(`${what}: each entry fills in every protocol's frontend of its address and port`, () => {
      const t = read([...order]);
      // before: five frontends, 10.96.0.50:80 and 10.96.0.10:53 twice over, without protocol
      assert.deepEqual(shape(t).sort(), [
        ['10.96.0.10:53/tcp', 'non-routable', 1],
        ['10.96.0.10:53/udp', 'non-routable', 1],
        ['10.96.0.50:80/tcp', 'non-routable', 2],
        // an address no frontend of the other listing has: its own, its protocol not shown
        ['10.96.0.77:443/?', '', 0],
      ]);
      // where the protocol is not shown: the first entry read so
      assert.equal(t.protocolNotShown, order[0] === LIST ? 9 : 3);
      assert.ok(
        dumpWarnings(t).some(
          (w) =>
            w.line === t.protocolNotShown &&
            /prints no protocols \(bpf lb list before 1\.17\)/.test(w.message),
        ),
      );
    });
});

describe('trace with the two listings read from one node', () => {
  // cilium-config refused as read (both acceleration keys, different): its external-ClusterIP
  // setting is not in force, so the agent's own entry is what says it
  const refused = {
    'bpf-lb-acceleration': 'native',
    'node-port-acceleration': 'disabled',
    'bpf-lb-external-clusterip': 'true',
  };
  it("a ClusterIP from outside: the entry without protocol is the frontend's, its flags read", () => {
    const f = facts(ciliumCluster(refused), {
      'node-b': {
        'cilium-service-list': `${LIST.join('\n')}\n`,
        'cilium-bpf-lb-list': `${BPF.join('\n').replace('[ClusterIP, non-routable]', '[ClusterIP]')}\n`,
      },
    });
    const walk = new Analysis(f, { code: allModes }).node('node-b').trace({
      src: '203.0.113.9',
      dst: '10.96.0.50',
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    // the agent's own entry is routable (line 2): translated to web's backends; before, no entry
    // was found for 10.96.0.50:80/TCP and Cilium's default (off) was assumed: dropped
    assert.deepEqual(walk.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.5:8080',
      '10.244.1.6:8080',
    ]);
    assert.ok(
      walk.outcomes.every((o) => !o.assumptions.join().includes('bpf-lb-external-clusterip')),
    );
  });
});
