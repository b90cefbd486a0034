// A LoadBalancer Service's loadBalancerSourceRanges that Cilium's agent ignores: from 1.18 its
// control plane parses each as written with Go's netip.ParsePrefix and skips one that does not
// parse (pkg/loadbalancer/reflectors/conversions.go convertService); the API server lets through
// a range padded with spaces or with a leading zero (ParseCIDRSloppy after a trim). expect, drift
// and the Rules step say which and why (a note), where they used to drop them unsaid.
import { severityOf } from '../../../src/core/dataplane/drift.js';
import { settingsSaid } from '../../../src/core/dataplane/cilium/agent/provenance.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { prefixRejected } from '../../../src/core/dataplane/cilium/expected/source-ranges.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import {
  aService,
  anEndpointSlice,
  facts,
  kubeDns,
  run,
  twoNodes,
  webPods,
} from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

describe('a range as netip.ParsePrefix reads it', () => {
  it('rejects what Go 1.26 rejects, saying why, and reads the rest', () => {
    // each answer as `netip.ParsePrefix` gives it (run against Go 1.26)
    const cases: [string, string | undefined][] = [
      ['10.0.0.0/8', undefined],
      ['10.0.0.1/8', undefined],
      ['fd00::/64', undefined],
      ['::ffff:10.0.0.0/104', undefined],
      [' 10.0.0.0/8', 'spaces around it'],
      ['10.0.0.0/8 ', 'spaces around it'],
      ['010.0.0.0/8', 'an octet with a leading zero'],
      ['10.0.0.0/08', 'a prefix length with a leading zero'],
      ['10.0.0.0', 'no prefix length'],
      ['fe80::%eth0/64', 'an IPv6 zone'],
      ['10.0.0.0/33', 'not a prefix length of its family'],
      ['10.0.0.0/8/8', 'not an address'],
    ];
    for (const [range, why] of cases) assert.equal(prefixRejected(range), why, range);
  });
});

const RANGES = [' 10.0.0.0/8', '192.168.0.0/16', '010.1.0.0/16'];
const FRONTENDS = [
  'Address            Type       ServiceName  PortName  Backends             Status',
  '10.96.0.50:80/TCP  ClusterIP  default/web  http      10.244.0.5:8080/TCP  Done',
  '',
].join('\n');
const web = (ranges: string[]): KubeObject => ({
  ...aService({
    spec: {
      type: 'LoadBalancer',
      loadBalancerSourceRanges: ranges,
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
    },
  }),
  status: { loadBalancer: { ingress: [{ ip: '198.51.100.7' }] } },
});
/** node-a's agent of `tag` with cilium-config `config`, its frontends table read (the
 * ClusterIP's only: enough to compare), or `listed`. */
const analysis = (
  tag: string,
  ranges = RANGES,
  config: Record<string, string> = {},
  listed: Record<string, string> = { 'cilium-frontends': FRONTENDS },
) =>
  new Analysis(
    facts(
      [
        web(ranges),
        anEndpointSlice(),
        ...webPods(),
        ...twoNodes(),
        ...kubeDns(),
        aCiliumAgent('node-a', `quay.io/cilium/cilium:${tag}`),
        aCiliumConfig(config),
      ],
      { 'node-a': listed },
    ),
    { code: allModes },
  );
const SAID =
  'Cilium\'s agent ignores " 10.0.0.0/8" (spaces around it), "010.1.0.0/16" (an octet with a leading zero) of the loadBalancerSourceRanges of default/web: it parses each as written (netip.ParsePrefix), so its frontends check the source against 192.168.0.0/16 only';

describe('ranges the agent ignores, said', () => {
  it('expect says them under its frontends (before: dropped unsaid)', () => {
    const node = analysis('v1.18.6').node('node-a');
    const text = expectedCiliumText(node.ciliumExpected() ?? [], [], {
      node: 'node-a',
      agent: 'kube-system/cilium-node-a',
      settings: 'ConfigMap kube-system/cilium-config',
    });
    assert.ok(text.includes(`\n# ${SAID}\n`), text);
    // 1.17 trims each range: it ignores none of these
    const old = analysis('v1.17.4').node('node-a').ciliumExpected() ?? [];
    assert.ok(old.every((f) => f.ignoredRanges === undefined));
  });

  it('drift notes them, once for the Service, not as drift', () => {
    const d = analysis('v1.20.2').node('node-a').drift();
    const notes = (d.notes ?? []).filter((n) => n.id === 'cilium-source-range-ignored');
    // a note of the whole Service (before: "default/web" given as a port's name), on its spec
    assert.deepEqual(
      notes.map((n) => [n.service, severityOf(n), n.title, n.explanation]),
      [
        [
          undefined,
          'info',
          'loadBalancerSourceRanges " 10.0.0.0/8", "010.1.0.0/16" ignored by Cilium\'s agent',
          `${SAID}.`,
        ],
      ],
    );
    assert.deepEqual(
      notes[0]!.evidence.map((e) => [e.kind, e.text, e.object]),
      [['read', `spec.loadBalancerSourceRanges: ${JSON.stringify(RANGES)}`, 'Service default/web']],
    );
    // every range ignored: no source is checked at all
    const none = analysis('v1.20.2', [' 10.0.0.0/8']).node('node-a').drift().notes ?? [];
    assert.match(none[0]?.explanation ?? '', /check no source: every client is let in\.$/);
  });

  it('the Rules step says them beside its comparison, as a note', () => {
    const f = run(rulesCheck, analysis('v1.18.6').facts).filter(
      (x) => x.id === 'cilium-source-range-ignored',
    );
    assert.deepEqual(
      f.map((x) => [x.status, x.node, x.explanation]),
      [['pass', 'node-a', `${SAID}.`]],
    );
    assert.deepEqual(
      f[0]!.evidence.map((e) => [e.kind, e.text]),
      [['read', `spec.loadBalancerSourceRanges: ${JSON.stringify(RANGES)}`]],
    );
  });
});

describe('ranges the agent ignores where it checks no source at all', () => {
  const UNCHECKED =
    "no source is checked (the agent's source-range check is off: enable-svc-source-range-check false, or NodePort off), so every client is let in";
  const OFF = { 'enable-svc-source-range-check': 'false' };

  it('1.18 with the check off: expect, drift and the Rules step say no source is checked', () => {
    const a = analysis('v1.18.6', RANGES, OFF);
    const node = a.node('node-a');
    const agent = a.state('node-a').cilium!;
    const text = expectedCiliumText(node.ciliumExpected() ?? [], [], {
      node: 'node-a',
      agent: 'kube-system/cilium-node-a',
      settings: 'ConfigMap kube-system/cilium-config',
      sourceRangeCheck: agent.settings.sourceRangeCheck,
    });
    // before: "so its frontends check the source against 192.168.0.0/16 only"
    assert.match(
      text,
      /of default\/web: it parses each as written \(netip\.ParsePrefix\), so no source/,
    );
    assert.ok(text.includes(UNCHECKED), text);
    const note = node.drift().notes?.find((n) => n.id === 'cilium-source-range-ignored');
    assert.ok(note?.explanation.endsWith(`${UNCHECKED}.`), note?.explanation);
    const f = run(rulesCheck, a.facts).filter((x) => x.id === 'cilium-source-range-ignored');
    // every client let in against the spec: a warn, not a note that passes
    assert.deepEqual(
      f.map((x) => [x.status, x.info ?? false]),
      [['warn', false]],
    );
    assert.ok(f[0]!.explanation.endsWith(`${UNCHECKED}.`));
  });

  it('1.18.3, whose ClusterIP frontends carry them too, with the check off: unchecked', () => {
    // 1.18.0 to 1.18.5 guard every type
    const a = analysis('v1.18.3', RANGES, OFF);
    const cluster = (a.node('node-a').ciliumExpected() ?? []).find((x) => x.type === 'ClusterIP');
    assert.equal(cluster?.ignoredRanges?.length, 2);
    const f = run(rulesCheck, a.facts).filter((x) => x.id === 'cilium-source-range-ignored');
    assert.ok(f[0]?.explanation.endsWith(`${UNCHECKED}.`), f[0]?.explanation);
  });

  it('checked but every range ignored: a warn; some range left: a note', () => {
    const open = run(rulesCheck, analysis('v1.20.2', [' 10.0.0.0/8']).facts).filter(
      (x) => x.id === 'cilium-source-range-ignored',
    );
    assert.deepEqual(
      open.map((x) => x.status),
      ['warn'],
    );
    assert.match(open[0]!.explanation, /check no source: every client is let in\.$/);
    const some = run(rulesCheck, analysis('v1.20.2').facts).filter(
      (x) => x.id === 'cilium-source-range-ignored',
    );
    assert.deepEqual(
      some.map((x) => [x.status, x.info]),
      [['pass', true]],
    );
  });
});

describe('ranges the agent ignores, where it refuses cilium-config as read (its listing read)', () => {
  // every release stops on these: the agent ran on an earlier configuration, whose
  // enable-svc-source-range-check was not read
  const REFUSED = {
    'bpf-lb-acceleration': 'native',
    'node-port-acceleration': 'disabled',
    'enable-svc-source-range-check': 'false',
  };
  const NOT_KNOWN =
    'its frontends check the source against 192.168.0.0/16 only where its source-range check is on, which is not known: cilium-config as read is refused, so the agent runs on an earlier configuration kdebug did not read; where off, every client is let in';

  const a = analysis('v1.18.6', RANGES, REFUSED);

  it('the Rules step: a note that the check is not known (before: a warn, the refused off)', () => {
    const f = run(rulesCheck, a.facts).filter((x) => x.id === 'cilium-source-range-ignored');
    assert.deepEqual(
      f.map((x) => [x.status, x.info]),
      [['pass', true]],
    );
    assert.ok(f[0]!.explanation.endsWith(`${NOT_KNOWN}.`), f[0]!.explanation);
  });

  it('drift and expect say the check not known (before: "no source is checked")', () => {
    const note = a
      .node('node-a')
      .drift()
      .notes?.find((n) => n.id === 'cilium-source-range-ignored');
    assert.ok(note?.explanation.endsWith(`${NOT_KNOWN}.`), note?.explanation);
    const agent = a.state('node-a').cilium!;
    const text = expectedCiliumText(a.node('node-a').ciliumExpected() ?? [], [], {
      node: 'node-a',
      agent: 'kube-system/cilium-node-a',
      settings: settingsSaid(agent),
      sourceRangeCheck: agent.settings.sourceRangeCheck,
      notKnown: agent.settings.notKnown,
    });
    assert.ok(text.includes(`${NOT_KNOWN}\n`), text);
  });

  it('a maps dump without the source-range map: said not read, not taken as the check off', () => {
    // the LoadBalancer entry checks sources; the dump holds no SRCRANGE line
    const dump = [
      'BE: ID=1 ADDR=10.244.0.5:8080/TCP STATE=active',
      'REV: ID=1 ADDR=198.51.100.7:80',
      'SVC: ID=1 ADDR=198.51.100.7:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=LoadBalancer+check source-range',
      'SVC: ID=1 ADDR=198.51.100.7:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+check source-range',
      '',
    ].join('\n');
    const notes = (config: Record<string, string>) =>
      analysis('v1.18.6', RANGES, config, { 'cilium-bpf-lb-list': dump }).node('node-a').drift()
        .notRead ?? [];
    const notRead = (config: Record<string, string>) => notes(config).map((n) => n.title);
    const SAID = 'BPF maps dump: no SRCRANGE line, not compared';
    // the check off as read, not refused: the agent writes no such map
    assert.ok(!notRead({ 'enable-svc-source-range-check': 'false' }).includes(SAID));
    // before: left unsaid, the refused config's off taken as the agent's
    assert.ok(notRead(REFUSED).includes(SAID), notRead(REFUSED).join('\n'));
    // and the note of what the refusal leaves uncompared says the CIDRs rest on the dump
    const refused = notes(REFUSED).find((n) => n.title.startsWith('forwarding mode'));
    assert.match(
      refused?.explanation ?? '',
      /were not read; its session affinity \(enable-session-affinity\) is compared only where the listing shows the agent writes it \(a timeout, an affinity map\), and its source ranges' CIDRs \(enable-svc-source-range-check\) only where the dump holds the map the check writes\.$/,
    );
  });
});
