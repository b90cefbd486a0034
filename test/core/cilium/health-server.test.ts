// The health server's frontends Cilium's agent makes on LoadBalancer IPs (health-server.ts,
// after pkg/loadbalancer/healthserver/healthserver.go of 1.18 to 1.20): vector 30 holds the usual
// case; these are the rules around it, the settings and releases they turn on, and drift.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { healthServerUnknown } from '../../../src/core/dataplane/cilium/agent/comparable.js';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
  type CiliumExpectOptions,
  type CiliumNode,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../../src/core/dataplane/cilium/maps/expected.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import {
  backendsTable,
  expectedCiliumText,
  frontendsTable,
} from '../../../src/core/dataplane/cilium/expected/render.js';
import { buildCiliumTrees } from '../../../src/core/dataplane/cilium/trees.js';
import { clusterView, type Pod } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aCiliumAgent,
  aCiliumConfig,
  aService,
  anEndpointSlice,
  type ServiceOptions,
} from '../../support/builders.js';
import { allModes } from '../../support/modes.js';

const ON: CiliumExpectOptions = { ...CILIUM_DEFAULTS, healthCheckLoadBalancerIP: true };
const NODE = { name: 'testnode', labels: {}, nodePortAddresses: ['192.0.2.9', '192.0.2.5'] };

/** ns/echo, a LoadBalancer with externalTrafficPolicy Local and health check node port 32000. */
const echo = (o: ServiceOptions = {}) =>
  aService('ns/echo', {
    type: 'LoadBalancer',
    ports: [['http', 80, 'TCP', 30080]],
    loadBalancerIPs: ['198.51.100.7'],
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 32000,
    ...o,
  });
const slice = anEndpointSlice('ns/echo', [['10.244.1.1', { node: 'testnode' }]], [['http', 80]]);

const health = (objects: KubeObject[], o = ON, node: CiliumNode = NODE) =>
  expectedCilium(clusterView(objects), node, o)
    .filter((f) => f.service.endsWith(':healthserver'))
    .map(
      (f) =>
        `${f.ip}:${f.port}/${f.protocol} ${f.type} ${f.service}${f.oneOf ? ' (one of)' : ''} -> ${f.backends.map((b) => `${b.ip}:${b.port} ${b.state} ${b.nodeName}`).join(', ')}`,
    );

describe("the health server's frontend on a LoadBalancer IP", () => {
  it("one on the Service's LoadBalancer IP at its health check node port, backed by the node's lowest NodePort address", () =>
    assert.deepEqual(health([echo(), slice]), [
      '198.51.100.7:32000/tcp LoadBalancer ns/echo:healthserver -> 192.0.2.5:32000 active testnode',
    ]));

  it('one for all the ports, and none for the in-cluster scope (externalTrafficPolicy Local alone)', () => {
    const two = echo({
      ports: [
        ['http', 80, 'TCP', 30080],
        ['dns', 53, 'UDP', 30053],
      ],
      internalTrafficPolicy: 'Cluster',
    });
    assert.deepEqual(health([two, slice]), [
      '198.51.100.7:32000/tcp LoadBalancer ns/echo:healthserver -> 192.0.2.5:32000 active testnode',
    ]);
  });

  it('none for externalTrafficPolicy Cluster, no health check node port, or no LoadBalancer IP', () => {
    assert.deepEqual(health([echo({ externalTrafficPolicy: 'Cluster' })]), []);
    assert.deepEqual(health([echo({ healthCheckNodePort: 0 })]), []);
    assert.deepEqual(health([echo({ loadBalancerIPs: [] })]), []);
  });

  it('none where the Service is exposed as a NodePort only (service.cilium.io/type)', () => {
    const svc = echo();
    svc.metadata!.annotations = { 'service.cilium.io/type': 'NodePort' };
    assert.deepEqual(health([svc]), []);
  });

  it('none with either setting off or without kube-proxy replacement', () => {
    assert.deepEqual(health([echo()], CILIUM_DEFAULTS), []);
    assert.deepEqual(health([echo()], { ...ON, healthCheckNodePort: false }), []);
    assert.deepEqual(health([echo()], { ...ON, kubeProxyReplacement: false }), []);
  });

  it("none where the node's NodePort addresses are not known: its backend is one of them", () =>
    assert.deepEqual(health([echo()], ON, { name: 'testnode', labels: {} }), []));

  it("each family's own NodePort address, else its unspecified one; several IPs: one of them", () => {
    const dual = echo({ loadBalancerIPs: ['198.51.100.7', '2001:db8::7'] });
    assert.deepEqual(health([dual]), [
      '198.51.100.7:32000/tcp LoadBalancer ns/echo:healthserver (one of) -> 192.0.2.5:32000 active testnode',
      '2001:db8::7:32000/tcp LoadBalancer ns/echo:healthserver (one of) -> :::32000 active testnode',
    ]);
  });

  it('1.20 drops it on a NodePort address (k3s ServiceLB), its port being in the NodePort range', () => {
    const v120 = { ...ON, nodePortConflicts: true };
    const k3s = echo({ loadBalancerIPs: ['192.0.2.5'] });
    assert.deepEqual(health([k3s], v120), []);
    assert.equal(health([k3s]).length, 1);
    // outside the agent's range it stays
    assert.equal(health([k3s], { ...v120, nodePortRange: [20000, 22767] }).length, 1);
    // beside another IP: that one or none, as the last the agent saw was that or the node's
    const both = echo({ loadBalancerIPs: ['192.0.2.5', '198.51.100.7'] });
    assert.deepEqual(health([both], v120), [
      '198.51.100.7:32000/tcp LoadBalancer ns/echo:healthserver (one of) -> 192.0.2.5:32000 active testnode',
    ]);
    const [one] = expectedCilium(clusterView([both]), NODE, v120).filter((f) => f.oneOf);
    assert.equal(one!.orNone, true);
  });

  it("1.20 drops a Service's LoadBalancer and ExternalIPs frontends on a NodePort address in the range", () => {
    const svc = echo({
      ports: [
        ['http', 80, 'TCP', 30080],
        ['alt', 30500, 'TCP', 30501],
      ],
      loadBalancerIPs: ['192.0.2.5', '198.51.100.7'],
      externalIPs: ['192.0.2.9'],
      externalTrafficPolicy: 'Cluster',
    });
    const keys = (o: CiliumExpectOptions) =>
      expectedCilium(clusterView([svc]), NODE, o)
        .filter((f) => f.type === 'LoadBalancer' || f.type === 'ExternalIPs')
        .map((f) => `${f.type} ${f.ip}:${f.port}`);
    assert.deepEqual(keys({ ...ON, nodePortConflicts: true }), [
      'LoadBalancer 192.0.2.5:80',
      'LoadBalancer 198.51.100.7:80',
      'LoadBalancer 198.51.100.7:30500',
      'ExternalIPs 192.0.2.9:80',
    ]);
    assert.equal(keys(ON).length, 6);
  });

  it('expect says the ones of which the agent holds one apart, not as held', () => {
    const view = clusterView([echo({ loadBalancerIPs: ['198.51.100.7', '198.51.100.8'] }), slice]);
    const frontends = expectedCilium(view, NODE, ON);
    const maps = expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: NODE.nodePortAddresses,
      options: CILIUM_MAP_DEFAULTS,
    });
    const text = expectedCiliumText(frontends, maps, {
      node: 'testnode',
      agent: 'a',
      settings: 's',
    });
    assert.ok(!/^198\.51\.100\.\d:32000/m.test(text), text);
    assert.match(
      text,
      /^# and one of 198\.51\.100\.7:32000\/TCP -> 192\.0\.2\.5:32000\/TCP, 198\.51\.100\.8:32000\/TCP -> 192\.0\.2\.5:32000\/TCP \(LoadBalancer ns\/echo:healthserver: /m,
    );
  });

  it("belongs to its Service: in that Service's answer, not in another's", () => {
    const view = clusterView([echo(), slice, aService('ns/other')]);
    const of = (name: string) =>
      expectedCilium(view, NODE, ON, [{ namespace: 'ns', name }]).map((f) => f.service);
    assert.ok(of('echo').includes('ns/echo:healthserver'));
    assert.ok(!of('other').includes('ns/echo:healthserver'));
  });

  it('its BPF map entry: both traffic policies Local whatever its Service says', () => {
    const view = clusterView([echo({ internalTrafficPolicy: 'Cluster' }), slice]);
    const maps = expectedMaps(expectedCilium(view, NODE, ON), {
      services: view.services,
      nodePortAddresses: NODE.nodePortAddresses,
      options: CILIUM_MAP_DEFAULTS,
    });
    const entry = maps.find((e) => e.frontend.service === 'ns/echo:healthserver')!;
    assert.deepEqual(
      [entry.ip, entry.flags, entry.count],
      ['198.51.100.7', ['Local', 'InternalLocal'], 1],
    );
  });
});

describe('the settings it turns on, as the agent is read', () => {
  const agent = (config?: Record<string, string>, image?: string, status?: string) => {
    const objects = [aCiliumAgent('testnode', image), ...(config ? [aCiliumConfig(config)] : [])];
    const view = clusterView(objects);
    return ciliumAgentOn(
      view,
      view.pods.find((p: Pod) => p.nodeName === 'testnode'),
      status,
    )!;
  };
  const STATUS = 'KubeProxyReplacement:  True  [eth0  192.0.2.5]\n';

  it("Cilium's defaults where cilium-config says nothing: the node port server on, the LoadBalancer IP off", () => {
    const s = agent({}).settings;
    assert.deepEqual([s.healthCheckNodePort, s.healthCheckLoadBalancerIP], [true, false]);
    const t = agent({
      'enable-health-check-nodeport': 'false',
      'enable-health-check-loadbalancer-ip': 'true',
    }).settings;
    assert.deepEqual([t.healthCheckNodePort, t.healthCheckLoadBalancerIP], [false, true]);
  });

  it('compared from 1.18 to 1.20 where cilium-config and the NodePort addresses were read', () => {
    const on = { 'enable-health-check-loadbalancer-ip': 'true' };
    for (const v of ['v1.18.0', 'v1.18.6', 'v1.19.3', 'v1.20.2'])
      assert.equal(
        healthServerUnknown(agent(on, `quay.io/cilium/cilium:${v}`, STATUS)),
        undefined,
        v,
      );
  });

  it('not compared, and why: cilium-config not read, a release before 1.18 or not known, no NodePort addresses', () => {
    const on = { 'enable-health-check-loadbalancer-ip': 'true' };
    assert.match(
      healthServerUnknown(agent(undefined, undefined, STATUS))!,
      /cilium-config was not read/,
    );
    assert.match(
      healthServerUnknown(agent(on, 'quay.io/cilium/cilium:v1.17.4', STATUS))!,
      /v1\.17\.4 .*ns\/name-healthCheck/,
    );
    assert.match(
      healthServerUnknown(agent(on, 'quay.io/cilium/cilium:v1.18', STATUS))!,
      /release is not known/,
    );
    assert.match(healthServerUnknown(agent(on))!, /NodePort addresses were not read/);
    // none made: nothing about them is unknown
    assert.equal(healthServerUnknown(agent({})), undefined);
  });
});

describe("drift of the health server's frontends", () => {
  const ON_CONFIG = { 'enable-health-check-loadbalancer-ip': 'true' };
  /** The agent's two tables as it lists what the model holds, less the lines `drop` matches. */
  const listings = (svc: KubeObject = echo(), drop?: RegExp) => {
    const held = expectedCilium(clusterView([svc, slice]), NODE, ON).filter(
      (f) => !drop?.test(`${f.ip}:${f.port} ${f.service}`),
    );
    return {
      'cilium-status': 'KubeProxyReplacement:  True  [eth0  192.0.2.5]\n',
      'cilium-frontends': `${frontendsTable(held).join('\n')}\n`,
      'cilium-backends': `${backendsTable(held).join('\n')}\n`,
    };
  };
  const drift = (config: Record<string, string>, nodes: Record<string, string>, svc = echo()) =>
    new Analysis(
      {
        objects: [
          svc,
          slice,
          aCiliumAgent('testnode', 'quay.io/cilium/cilium:v1.20.2'),
          aCiliumConfig(config),
        ],
        nodes: { testnode: nodes },
        meta: {},
      },
      { code: allModes },
    )
      .node('testnode')
      .drift();

  it('held as expected: no drift', () =>
    assert.deepEqual(drift(ON_CONFIG, listings()).findings, []));

  it("missing: the load balancer's health checks get no answer from this node", () => {
    const d = drift(ON_CONFIG, listings(echo(), /healthserver/));
    assert.deepEqual(
      d.findings.map((f) => [f.id, f.service]),
      [['cilium-frontend-missing', 'ns/echo:healthserver']],
    );
    assert.match(
      d.findings[0]!.explanation,
      /health server's frontend 198\.51\.100\.7:32000\/TCP .* no answer from this node/,
    );
  });

  it('held though the setting is off: stale', () =>
    assert.deepEqual(
      drift({}, listings()).findings.map((f) => [f.id, f.service]),
      [['cilium-frontend-stale', 'ns/echo:healthserver']],
    ));

  it('cilium-config not read: not compared, and said so', () => {
    const d = new Analysis(
      {
        objects: [echo(), slice, aCiliumAgent('testnode', 'quay.io/cilium/cilium:v1.20.2')],
        nodes: { testnode: listings() },
        meta: {},
      },
      { code: allModes },
    )
      .node('testnode')
      .drift();
    assert.deepEqual(d.findings, []);
    const note = d.notRead?.find((n) => n.title === "the health server's frontends not compared");
    assert.match(
      note!.explanation,
      /cilium-config was not read.*Services with a health check node port: ns\/echo/,
    );
    assert.equal(note!.drift.actual.length, 1);
  });

  it('several LoadBalancer IPs: the one the agent holds is no drift, none held is', () => {
    const dual = echo({ loadBalancerIPs: ['198.51.100.7', '198.51.100.8'] });
    assert.deepEqual(drift(ON_CONFIG, listings(dual, /198\.51\.100\.7:32000/), dual).findings, []);
    assert.deepEqual(drift(ON_CONFIG, listings(dual, /198\.51\.100\.8:32000/), dual).findings, []);
    const none = drift(ON_CONFIG, listings(dual, /healthserver/), dual).findings;
    assert.deepEqual(
      none.map((f) => f.title),
      ['no frontend 198.51.100.7:32000/TCP or 198.51.100.8:32000/TCP LoadBalancer'],
    );
  });

  it("k3s ServiceLB (the node's IP): none from 1.20, missing before", () => {
    const k3s = echo({ loadBalancerIPs: ['192.0.2.5'] });
    const on = (image: string, svc: KubeObject, drop: RegExp) =>
      new Analysis(
        {
          objects: [svc, slice, aCiliumAgent('testnode', image), aCiliumConfig(ON_CONFIG)],
          nodes: { testnode: listings(svc, drop) },
          meta: {},
        },
        { code: allModes },
      )
        .node('testnode')
        .drift()
        .findings.map((f) => [f.id, f.service]);
    assert.deepEqual(on('quay.io/cilium/cilium:v1.20.2', k3s, /healthserver/), []);
    assert.deepEqual(on('quay.io/cilium/cilium:v1.19.3', k3s, /healthserver/), [
      ['cilium-frontend-missing', 'ns/echo:healthserver'],
    ]);
    // beside another IP, none held is no drift: the last the agent saw may have been the node's
    const both = echo({ loadBalancerIPs: ['192.0.2.5', '198.51.100.7'] });
    assert.deepEqual(on('quay.io/cilium/cilium:v1.20.2', both, /healthserver/), []);
    assert.deepEqual(on('quay.io/cilium/cilium:v1.20.2', both, /192\.0\.2\.5:32000/), []);
  });

  // before: its id was the agent's own name, 'ns/echo:healthserver', its entry a LoadBalancer's
  it("a tree of its own, the Service's health check: no Service port of ns/echo", () => {
    const table = parseCilium(listings()['cilium-frontends'], 'frontends.txt');
    const trees = buildCiliumTrees(table, new Map()).services;
    const own = trees.find((t) => t.id === 'ns/echo (health check)')!;
    assert.equal(own.name, undefined);
    assert.deepEqual(
      own.entries.map((e) => [e.kind, e.label, e.address, e.port]),
      [['load-balancer', 'health check', '198.51.100.7', 32000]],
    );
    assert.deepEqual(own.loadBalancerIPs, ['198.51.100.7']);
    assert.deepEqual(
      own.endpoints.map((e) => e.address),
      ['192.0.2.5:32000'],
    );
    assert.ok(trees.some((t) => t.name === 'ns/echo:http'));
  });
});
