// An agent whose release refuses cilium-config as read (both acceleration keys set, to different
// values), its listing read: it runs on an earlier configuration, so enable-ipv4, enable-ipv6 and
// enable-service-topology as read are in force nowhere. A family is taken as on where the agent
// lists a frontend of it (observed), else its frontends are not compared and said so; the
// backends topology would select are taken as the listing holds them where it holds that
// selection exactly. Before, each came from the refused ConfigMap as if known.
//
// IP conventions: node-b 192.0.2.11 in zone-b; web's ClusterIPs 10.96.0.50 and fd00::50, its
// Pods 10.244.0.5 (node-a, zone-a) and 10.244.1.6 (node-b, zone-b); kube-dns 10.96.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import type { KubeObject } from '../../../src/core/model.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { ciliumCluster, facts } from '../checks/builders.js';
import { aService } from '../../support/builders.js';
import { allModes } from '../../support/modes.js';

const REFUSED = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
const HEADER =
  'Address            Type       ServiceName           PortName  Backends                                  Status';
const DNS =
  '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                        Done';
const row = (address: string, backends: string) =>
  `${address}  ClusterIP  default/web           http      ${backends}  Done`;
const BOTH = '10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP';

/** The objects, web changed by `edit`. */
function objects(config: Record<string, string>, edit: (o: KubeObject) => void): KubeObject[] {
  const all = structuredClone(ciliumCluster({ ...REFUSED, ...config }));
  for (const o of all)
    if (o.metadata?.name === 'web' || o.metadata?.name?.startsWith('web-a')) edit(o);
  return all;
}
const dualStack = (o: KubeObject) => {
  if (o.kind !== 'Service') return;
  const spec = o.spec as Record<string, unknown>;
  spec['clusterIPs'] = ['10.96.0.50', 'fd00::50'];
  spec['ipFamilies'] = ['IPv4', 'IPv6'];
  spec['ipFamilyPolicy'] = 'PreferDualStack';
};
// `whole`: every namespace's Services listed (a capture of all, as snapshot save --all -A writes)
const driftOf = (all: KubeObject[], listed: string[], whole = false) => {
  const f = facts(all, { 'node-b': { 'cilium-frontends': `${[HEADER, ...listed].join('\n')}\n` } });
  if (whole) f.meta.capturedAt = '2026-12-07T00:00:00Z';
  return new Analysis(f, { code: allModes }).node('node-b').drift();
};
const ids = (d: ReturnType<typeof driftOf>) => d.findings.map((f) => `${f.id} ${f.title}`);

describe('refused cilium-config: the families as the listing shows them', () => {
  it('no IPv6 frontend listed: the IPv6 ClusterIP is not compared, said; enable-ipv6 "true" taken from nothing', () => {
    const d = driftOf(objects({ 'enable-ipv6': 'true' }, dualStack), [
      DNS,
      row('10.96.0.50:80/TCP', BOTH),
    ]);
    // before: cilium-frontend-missing "no frontend [fd00::50]:80/TCP ClusterIP"
    assert.deepEqual(ids(d), []);
    const note = d.notRead?.find((n) => n.title === '1 IPv6 frontend not compared');
    assert.match(
      note?.explanation ?? '',
      /lists no IPv6 frontend, and whether it runs IPv6 \(enable-ipv6\) is not known: cilium-config as read is refused.*\[fd00::50\]:80\/TCP/,
    );
  });

  it('an IPv6 frontend listed: IPv6 is on as observed, enable-ipv6 "false" as read ignored', () => {
    const v6 = row('[fd00::50]:80/TCP', '10.244.1.9:8080/TCP                     ');
    const d = driftOf(objects({ 'enable-ipv6': 'false' }, dualStack), [
      DNS,
      row('10.96.0.50:80/TCP', BOTH),
      v6,
    ]);
    // before: the refused "false" made fd00::50 no frontend of web: said stale, its backend unread
    assert.deepEqual(ids(d), [
      'cilium-backend-stale [fd00::50]:80/TCP: stale backend 10.244.1.9:8080/TCP',
    ]);
    assert.equal(d.notRead?.some((n) => /IPv6 frontend/.test(n.title)) ?? false, false);
  });
});

describe('refused cilium-config: which Services the agent handles, as the listing shows it', () => {
  const plain = () => objects({ 'k8s-service-proxy-name': 'other' }, () => {});
  it("it lists web's ClusterIP: web's label (none) is its name, k8s-service-proxy-name as read ignored", () => {
    const d = driftOf(plain(), [DNS, row('10.96.0.50:80/TCP', BOTH)]);
    // before: the refused "other" left every Service unhandled, web's frontend said stale
    assert.deepEqual(ids(d), []);
  });

  it("it lists no Service's ClusterIP: none compared, said; the one it lists is stale", () => {
    // every namespace's Service list read: default/gone is known gone
    const d = driftOf(
      [...objects({}, () => {}), aService('default/kubernetes', { clusterIP: '10.96.0.1' })],
      [
        '10.96.0.99:80/TCP  ClusterIP  default/gone           http      10.244.1.9:8080/TCP                       Done',
      ],
      true,
    );
    // before: cilium-frontend-missing for web and kube-dns, as if the unset name were in force
    assert.deepEqual(ids(d), [
      'cilium-frontend-stale frontend 10.96.0.99:80/TCP ClusterIP not in the objects',
    ]);
    assert.match(
      d.notRead?.find((n) => n.title === '3 Services not compared')?.explanation ?? '',
      /lists none of the ClusterIPs of default\/web, kube-system\/kube-dns, default\/kubernetes\b/,
    );
  });
});

/** web asks for topology (trafficDistribution PreferClose), its slice hints each zone's backend. */
function topology(o: KubeObject): void {
  if (o.kind === 'Service')
    (o.spec as Record<string, unknown>)['trafficDistribution'] = 'PreferClose';
  if (o.kind === 'EndpointSlice') {
    const eps = (o as { endpoints: Record<string, unknown>[] }).endpoints;
    eps.forEach((e, i) => {
      const zone = i === 0 ? 'zone-a' : 'zone-b';
      e['zone'] = zone;
      e['hints'] = { forZones: [{ name: zone }] };
    });
  }
}
const zoned = (config: Record<string, string>) =>
  objects(config, topology).map((o) =>
    o.kind === 'Node'
      ? {
          ...o,
          metadata: {
            ...o.metadata,
            labels: {
              ...(o.metadata?.labels as Record<string, string>),
              'topology.kubernetes.io/zone': o.metadata?.name === 'node-a' ? 'zone-a' : 'zone-b',
            },
          },
        }
      : o,
  );

describe('refused cilium-config: service topology as the listing shows it', () => {
  it("the listing holds the zone's backend only: taken as topology's selection, said", () => {
    const d = driftOf(zoned({ 'enable-service-topology': 'false' }), [
      DNS,
      row('10.96.0.50:80/TCP', '10.244.1.6:8080/TCP                     '),
    ]);
    // before: the refused "false" expected both: cilium-backend-missing 10.244.0.5:8080/TCP
    assert.deepEqual(ids(d), []);
    assert.ok(
      d.notRead?.some(
        (n) =>
          n.title === 'topology-aware backend selection not known for default/web' &&
          /enable-service-topology\) is not known: cilium-config as read is refused/.test(
            n.explanation,
          ),
      ),
    );
  });

  it('the listing holds neither selection: compared without topology, the missing one found', () => {
    const d = driftOf(zoned({ 'enable-service-topology': 'true' }), [
      DNS,
      row('10.96.0.50:80/TCP', '10.244.0.5:8080/TCP                     '),
    ]);
    // before: the refused "true" expected zone-b's 10.244.1.6 only: 10.244.0.5 said stale
    assert.deepEqual(ids(d), [
      'cilium-backend-missing 10.96.0.50:80/TCP: backend 10.244.1.6:8080/TCP missing',
    ]);
  });
});

describe('kdebug expect on an agent refusing cilium-config', () => {
  /** node-b's expected tables, its listing `listed`. */
  const expectText = (all: KubeObject[], listed: string[]) => {
    const node = new Analysis(
      facts(all, { 'node-b': { 'cilium-frontends': `${[HEADER, ...listed].join('\n')}\n` } }),
      { code: allModes },
    ).node('node-b');
    return expectedCiliumText(node.ciliumExpected() ?? [], node.ciliumMaps() ?? [], {
      node: 'node-b',
      agent: 'kube-system/cilium-node-b',
      settings: 'ConfigMap kube-system/cilium-config',
    });
  };

  it('says the IPv6 frontends and the topology selection apart, the tables without them', () => {
    const all = zoned({ 'enable-ipv6': 'true' }).map((o) => {
      if (o.metadata?.name === 'web') dualStack(o);
      return o;
    });
    const text = expectText(all, [DNS, row('10.96.0.50:80/TCP', BOTH)]);
    // before: [fd00::50]:80/TCP in the tables, and 10.244.1.6 alone as web's backend
    assert.match(
      text,
      /^# note: IPv6 \(enable-ipv6\) not known: .* so they are not in the tables below: \[fd00::50\]:80\/TCP ClusterIP default\/web -> no backends$/m,
    );
    assert.match(
      text,
      /^# note: service topology \(enable-service-topology\) not known: .* the tables below select backends without it, with it they are: 10\.96\.0\.50:80\/TCP -> 10\.244\.1\.6:8080\/TCP$/m,
    );
    assert.match(
      text,
      /^10\.96\.0\.50:80\/TCP +ClusterIP +default\/web +http +10\.244\.0\.5:8080\/TCP, 10\.244\.1\.6:8080/m,
    );
    assert.doesNotMatch(text, /^\[fd00::50\]:80\/TCP +ClusterIP/m);
  });
});
