// A frontend a Cilium Local Redirect Policy takes, as `cilium-dbg bpf lb list` prints it: its
// Service entry's flags are the type alone ("[LocalRedirect]": ServiceFlags.String gives the
// SVCType, and a LocalRedirect frontend is routable, so no "non-routable"), its backend slots the
// policy's node-local Pods. Read as the service list's LocalRedirect row is: drift's
// cilium-local-redirect note, never the Pods taken for the Service's stale or missing backends.
// The form is real: cilium#35211's `bpf lb list` map, "172.20.0.10:53:[100.64.26.149:53 (378)
// (1) 0.0.0.0:0 (378) (0) [LocalRedirect] ]".
//
// IP conventions: web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 (node-a) and 10.244.1.6
// (node-b); kube-dns 10.96.0.10. The redirect Pod: 10.244.1.99.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { ciliumCluster, facts, run } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

/** bpf lb list of 1.16 (the Service column once) and of 1.17 on (with the slot on every row). */
const LISTINGS = {
  '1.16': [
    'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)',
    '10.96.0.50:80       0.0.0.0:0 (3) (0) [LocalRedirect]',
    '                    10.244.1.99:8080 (3) (1)',
    '10.96.0.10:53       0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
    '                    10.244.0.2:53 (2) (1)',
    '',
  ].join('\n'),
  '1.17': [
    'SERVICE ADDRESS               BACKEND ADDRESS (REVNAT_ID) (SLOT)',
    '10.96.0.50:80/TCP (0)         0.0.0.0:0 (3) (0) [LocalRedirect]',
    '10.96.0.50:80/TCP (1)         10.244.1.99:8080/TCP (3) (1)',
    '10.96.0.10:53/UDP (0)         0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
    '10.96.0.10:53/UDP (1)         10.244.0.2:53/UDP (2) (1)',
    '',
  ].join('\n'),
};

/** db/show frontends of 1.18 on, web's ClusterIP redirected (its RedirectTo column). */
const FRONTENDS = [
  'Address            Type       ServiceName           PortName  Backends              RedirectTo                      Status  Since  Error',
  '10.96.0.50:80/TCP  ClusterIP  default/web           http      10.244.1.99:8080/TCP  default/web-lrp:local-redirect  Done    5m',
  '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                                     Done    5m',
  '',
].join('\n');

describe('a Local Redirect Policy frontend in bpf lb list', () => {
  // 1.18's reconciler writes a redirected frontend's entry with the type LocalRedirect
  // (bpf_reconciler.go: fe.RedirectTo != nil) and the policy's Pods as its backends
  it("beside the agent's table (RedirectTo): its map entry agrees, one note, no map drift", () => {
    const f = facts(ciliumCluster({}), {
      'node-b': { 'cilium-frontends': FRONTENDS, 'cilium-bpf-lb-list': LISTINGS['1.17'] },
    });
    const d = new Analysis(f, { code: allModes }).node('node-b').drift();
    assert.equal(d.cilium?.read, 'both');
    assert.deepEqual(
      d.findings.map((x) => x.id),
      [],
    );
    assert.deepEqual(
      d.notes?.map((n) => n.title),
      [
        '10.96.0.50:80/TCP is redirected by Local Redirect Policy default/web-lrp:local-redirect to 10.244.1.99:8080/TCP',
      ],
    );
  });

  for (const [release, listing] of Object.entries(LISTINGS)) {
    describe(release, () => {
      it('reads the type LocalRedirect and the policy Pod as its backend', () => {
        const t = parseCilium(listing, 'bpf.txt');
        const fe = t.frontends.find((f) => f.ip === '10.96.0.50')!;
        assert.equal(fe.type, 'LocalRedirect');
        assert.deepEqual(fe.flags, []);
        assert.deepEqual(
          fe.backends.map((b) => `${b.ip}:${b.port}`),
          ['10.244.1.99:8080'],
        );
      });

      const f = facts(ciliumCluster({}), { 'node-b': { 'cilium-bpf-lb-list': listing } });
      it('drift: the cilium-local-redirect note, nothing missing or stale', () => {
        const d = new Analysis(f, { code: allModes }).node('node-b').drift();
        assert.deepEqual(
          d.findings.map((x) => x.id),
          [],
        );
        const note = d.notes?.find((n) => n.id === 'cilium-local-redirect');
        assert.match(
          note?.title ?? '',
          // 1.16 prints no protocol: none is said
          release === '1.16'
            ? /^10\.96\.0\.50:80 is redirected by a Local Redirect Policy to 10\.244\.1\.99:8080$/
            : /^10\.96\.0\.50:80\/TCP is redirected by a Local Redirect Policy to 10\.244\.1\.99:8080\/TCP$/,
        );
      });

      it('the Rules step warns with it on node-b, never a match there', () => {
        const said = run(rulesCheck, f)
          .filter((x) => x.node === 'node-b' || x.nodes?.includes('node-b'))
          .map((x) => `${x.id} ${x.status}`);
        assert.ok(said.includes('cilium-local-redirect warn'), said.join(', '));
        assert.ok(!said.some((i) => i.startsWith('rules-match')), said.join(', '));
      });
    });
  }
});
