// Rows of the release table (agent/release-behaviour.ts releaseBehaviour) at the patch where each
// turns, read from an agent of that release and carried through to the frontends and BPF map
// entries expected.
import { severityOf } from '../../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { ciliumDrift } from '../../../src/core/dataplane/cilium/drift.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import {
  expectedCilium,
  type ExpectedFrontend,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../../src/core/dataplane/cilium/maps/expected.js';
import { clusterView, type Pod } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig, aService, anEndpointSlice } from '../../support/builders.js';

const NODE = { name: 'testnode', labels: {}, nodePortAddresses: ['192.0.2.5'] };

/** The settings of an agent of `tag` on testnode, with `objects` in the cluster. */
const settingsAt = (
  tag: string,
  objects: KubeObject[] = [],
  config: Record<string, string> = {},
) => {
  const view = clusterView([
    aCiliumAgent('testnode', `quay.io/cilium/cilium:${tag}`),
    aCiliumConfig(config),
    ...objects,
  ]);
  const pod = view.pods.find((p: Pod) => p.nodeName === 'testnode');
  return { view, settings: ciliumAgentOn(view, pod, undefined)!.settings };
};

describe("a VIP's wildcard entry on one of the node's own addresses (isLocalAddr, 1.19.5)", () => {
  // a LoadBalancer Service whose LB-IPAM address is the node's own
  const lb = aService('ns/web', {
    type: 'LoadBalancer',
    ports: [['http', 80, 'TCP', 30080]],
    loadBalancerIPs: ['192.0.2.5'],
  });
  const slice = anEndpointSlice('ns/web', [['10.244.1.1', { node: 'testnode' }]], [['http', 80]]);
  const wildcards = (tag: string) => {
    const { view, settings } = settingsAt(tag, [lb, slice]);
    const frontends = expectedCilium(view, NODE, settings);
    return expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: NODE.nodePortAddresses,
      nodeAddresses: ['192.0.2.5', '10.0.0.5'],
      options: settings,
    })
      .filter((e) => e.frontend.port === 0 && e.frontend.protocol === 'any')
      .map((e) => e.ip);
  };

  it('1.19.0 to 1.19.4 write one for it too; 1.19.5 and 1.20 none', () => {
    // the ClusterIP's is written at every release
    assert.deepEqual(wildcards('v1.19.0'), ['172.30.0.41', '192.0.2.5']);
    assert.deepEqual(wildcards('v1.19.4'), ['172.30.0.41', '192.0.2.5']);
    assert.deepEqual(wildcards('v1.19.5'), ['172.30.0.41']);
    assert.deepEqual(wildcards('v1.20.0'), ['172.30.0.41']);
    // before 1.19 there are no wildcard entries at all
    assert.deepEqual(wildcards('v1.18.6'), []);
  });
});

describe("the Ingress and Gateway API controllers' dummy endpoint (isIngressDummyEndpoint, 1.18)", () => {
  const svc = aService('ns/cilium-ingress', { ports: [['http', 80]] });
  const slice = anEndpointSlice('ns/cilium-ingress', ['192.192.192.192'], [['http', 9999]]);
  const backends = (tag: string) => {
    const { view, settings } = settingsAt(tag, [svc, slice]);
    return expectedCilium(view, NODE, settings)
      .filter((f) => f.service === 'ns/cilium-ingress')
      .flatMap((f) => f.backends.map((b) => `${b.ip}:${b.port}`));
  };

  it('is a backend through 1.17, none from 1.18 (nor for an agent whose release is unknown)', () => {
    assert.deepEqual(backends('v1.17.4'), ['192.192.192.192:9999']);
    assert.deepEqual(backends('v1.18.0'), []);
    assert.deepEqual(backends('v1.20.2'), []);
    assert.deepEqual(backends('latest'), []);
  });
});

describe('the datapath candidates without kube-proxy replacement (isDatapathCandidate)', () => {
  const frontend = (type: ExpectedFrontend['type'], ip: string): ExpectedFrontend => ({
    ip,
    port: 80,
    protocol: 'tcp',
    type,
    service: 'ns/x',
    portName: 'http',
    servicePort: 80,
    localOnly: false,
    backends: [{ ip: '10.244.1.1', port: 8080, protocol: 'tcp', state: 'active', weight: 100 }],
  });
  it('are the ClusterIP, LocalRedirect and ExternalIPs frontends, not the LoadBalancer one', () => {
    const { settings } = settingsAt('v1.19.7', [], { 'kube-proxy-replacement': 'false' });
    const entries = expectedMaps(
      [
        frontend('ClusterIP', '172.30.0.41'),
        frontend('LocalRedirect', '169.254.169.254'),
        frontend('ExternalIPs', '198.51.100.9'),
        frontend('LoadBalancer', '198.51.100.7'),
      ],
      { services: [], nodePortAddresses: [], options: { ...CILIUM_MAP_DEFAULTS, ...settings } },
    );
    assert.deepEqual(
      // the wildcard entry (port 0) of the ClusterIP aside
      entries.filter((e) => e.frontend.port !== 0).map((e) => `${e.frontend.type} ${e.ip}`),
      ['ClusterIP 172.30.0.41', 'LocalRedirect 169.254.169.254', 'ExternalIPs 198.51.100.9'],
    );
  });
});

describe('the deprecated node-port-algorithm and node-port-mode (deprecatedConfig, gone in 1.20)', () => {
  const config = { 'node-port-algorithm': 'maglev', 'node-port-mode': 'dsr' };
  const read = (tag: string, more: Record<string, string> = {}) => {
    const { settings } = settingsAt(tag, [], { ...config, ...more });
    return `${settings.algorithm} ${settings.forwarding}`;
  };

  it('set, take the place of bpf-lb-algorithm and bpf-lb-mode through 1.19', () => {
    assert.equal(read('v1.18.10'), 'maglev dsr');
    assert.equal(read('v1.19.7', { 'bpf-lb-algorithm': 'random' }), 'maglev dsr');
  });
  it('an empty one is not set: bpf-lb-* holds', () => {
    assert.equal(read('v1.19.7', { 'node-port-mode': '', 'bpf-lb-mode': 'dsr' }), 'maglev dsr');
  });
  it('are not read by 1.20, whose defaults (or bpf-lb-*) hold', () => {
    assert.equal(read('v1.20.2'), 'random snat');
    assert.equal(read('v1.20.2', { 'bpf-lb-algorithm': 'maglev' }), 'maglev snat');
  });
});

describe('both a bpf-lb-* key and its deprecated one set: the agent does not start', () => {
  /** Why an agent of `tag` without a status refuses cilium-config, or undefined. */
  const refused = (tag: string, config: Record<string, string>) => {
    const view = clusterView([
      aCiliumAgent('testnode', `quay.io/cilium/cilium:${tag}`),
      aCiliumConfig(config),
    ]);
    return ciliumAgentOn(view, view.pods[0], undefined)!.refused;
  };
  const modes = { 'bpf-lb-mode': 'dsr', 'node-port-mode': 'snat' };
  const algorithms = { 'bpf-lb-algorithm': 'maglev', 'node-port-algorithm': 'random' };

  it('1.17: either pair set to two values (populateLoadBalancerSettings log.Fatalf)', () => {
    assert.match(refused('v1.17.0', modes) ?? '', /both bpf-lb-mode and node-port-mode/);
    assert.match(
      refused('v1.17.0', algorithms) ?? '',
      /both bpf-lb-algorithm and node-port-algorithm/,
    );
    assert.equal(refused('v1.17.0', { 'bpf-lb-mode': 'dsr', 'node-port-mode': 'dsr' }), undefined);
  });
  it('1.18 and 1.19: node-port-mode set with bpf-lb-mode other than snat (NewConfig fails)', () => {
    assert.match(refused('v1.18.0', modes) ?? '', /does not start/);
    assert.match(
      refused('v1.19.6', { 'bpf-lb-mode': 'dsr', 'node-port-mode': 'dsr' }) ?? '',
      /does not start/,
    );
    // node-port-mode over an explicit snat, and node-port-algorithm, simply win
    assert.equal(refused('v1.19.6', { 'bpf-lb-mode': 'snat', 'node-port-mode': 'dsr' }), undefined);
    assert.equal(refused('v1.18.0', algorithms), undefined);
  });
  it('1.20 reads neither deprecated key', () => {
    assert.equal(refused('v1.20.2', modes), undefined);
  });
  it('every release stops where both acceleration keys differ', () => {
    const accel = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
    for (const tag of ['v1.17.0', 'v1.19.6', 'v1.20.2'])
      assert.match(
        refused(tag, accel) ?? '',
        /both bpf-lb-acceleration and node-port-acceleration/,
      );
    const same = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'native' };
    assert.equal(refused('v1.20.2', same), undefined);
  });
  it('reads values as the agent does (trimmed), and says no value in its one line', () => {
    assert.equal(
      refused('v1.17.0', { 'bpf-lb-mode': 'dsr\n', 'node-port-mode': ' dsr' }),
      undefined,
    );
    const why = refused('v1.18.0', { 'bpf-lb-mode': 'dsr\n)\nx', 'node-port-mode': 'dsr' })!;
    assert.doesNotMatch(why, /\n/);
  });
  it('nothing refused where the agent runs ready, or its release is unknown', () => {
    const running = clusterView([
      {
        ...aCiliumAgent('testnode', 'quay.io/cilium/cilium:v1.18.0'),
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'cilium-agent', ready: true, state: { running: {} } }],
        },
      },
      aCiliumConfig(modes),
    ]);
    assert.equal(ciliumAgentOn(running, running.pods[0], undefined)!.refused, undefined);
    const untagged = clusterView([
      aCiliumAgent('testnode', 'quay.io/cilium/cilium@sha256:0123'),
      aCiliumConfig(modes),
    ]);
    assert.equal(ciliumAgentOn(untagged, untagged.pods[0], undefined)!.refused, undefined);
  });
  it('expect says so and expects no table; drift, the listing read, compares it and notes why', () => {
    const why = refused('v1.18.0', modes)!;
    const text = expectedCiliumText([], [], {
      node: 'n1',
      agent: 'kube-system/cilium-x',
      settings: 'ConfigMap kube-system/cilium-config',
      refused: why,
      notStarted: true,
    });
    assert.match(text, /^# nothing: cilium-config sets both bpf-lb-mode/m);
    assert.doesNotMatch(text, /db\/show frontends/);
    const table = parseCilium(
      'ID   Frontend            Service Type   Backend\n1    10.96.0.10:53/UDP   ClusterIP      1 => 10.244.1.5:53/UDP (active)\n',
      'service-list.txt',
    );
    // a listing read shows the agent ran (on an earlier configuration): it used to be compared
    // with nothing; now it is compared as usual (a frontend no object makes is stale), and the
    // refusal at the next start is a note
    const drift = ciliumDrift({
      node: 'n1',
      expected: [],
      table,
      services: ['default/kubernetes'],
      scoped: false,
      listed: { kind: 'all' },
      refused: { why, evidence: [] },
    });
    assert.deepEqual(
      drift.findings.map((f) => f.id),
      ['cilium-frontend-stale'],
    );
    assert.deepEqual(
      drift.notes?.map((n) => [n.id, severityOf(n), n.explanation]),
      [['cilium-config-refused', 'info', why]],
    );
    assert.equal(drift.notRead, undefined);
  });
});

describe('hybrid as ToSVCForwardingMode knows it (1.18.5, cilium#43056)', () => {
  const svc = aService('ns/web', { type: 'NodePort', ports: [['http', 80, 'TCP', 30080]] });
  const slice = anEndpointSlice('ns/web', ['10.244.1.1'], [['http', 80]]);
  /** Whether the ClusterIP entry says dsr, on an agent of `tag` with `mode`. */
  const dsr = (tag: string, mode: string, annotation?: string) => {
    if (annotation)
      (svc['metadata'] as { annotations?: Record<string, string> }).annotations = {
        'service.cilium.io/forwarding-mode': annotation,
      };
    const config = { 'bpf-lb-mode': mode, 'bpf-lb-mode-annotation': 'true' };
    const { view, settings } = settingsAt(tag, [svc, slice], config);
    const frontends = expectedCilium(view, NODE, settings);
    return expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: [],
      options: settings,
    })
      .find((e) => e.frontend.type === 'ClusterIP' && e.frontend.port === 80)!
      .flags.includes('dsr');
  };

  it("bpf-lb-mode hybrid: DSR for TCP from 1.18.5; before, no entry's flag says it", () => {
    assert.equal(dsr('v1.18.4', 'hybrid'), false);
    assert.equal(dsr('v1.18.5', 'hybrid'), true);
  });
  it("the annotation's 'hybrid': SNAT from 1.18.5; before, a value it ignores", () => {
    assert.equal(dsr('v1.18.4', 'dsr', 'hybrid'), true);
    assert.equal(dsr('v1.18.5', 'dsr', 'hybrid'), false);
  });
});

describe('loadBalancerSourceRanges as the control plane parses them (netip.ParsePrefix, 1.18)', () => {
  const ranges = (tag: string, values: string[]) => {
    const svc = aService('ns/web', {
      type: 'LoadBalancer',
      ports: [['http', 80, 'TCP', 30080]],
      loadBalancerIPs: ['198.51.100.7'],
      sourceRanges: values,
    });
    const { view, settings } = settingsAt(tag, [svc]);
    return expectedCilium(view, NODE, settings).find((f) => f.type === 'LoadBalancer')!
      .sourceRanges;
  };

  it('1.17 trims each; from 1.18 one padded with spaces is ignored', () => {
    const values = [' 10.0.0.0/8', '192.168.0.0/16'];
    assert.deepEqual(ranges('v1.17.4', values), ['10.0.0.0/8', '192.168.0.0/16']);
    assert.deepEqual(ranges('v1.18.0', values), ['192.168.0.0/16']);
  });
  it('a leading zero in an octet or the length, or no length, leaves no range to check', () => {
    assert.equal(ranges('v1.20.2', ['010.0.0.0/8', '10.0.0.0/08', '10.0.0.0']), undefined);
    assert.deepEqual(ranges('v1.20.2', ['fd00::/64']), ['fd00::/64']);
  });
});

describe('a LoadBalancer ingress IP of ipMode Proxy (KEP-1860; cilium#34780, #40913)', () => {
  const svc = aService('ns/web', { type: 'LoadBalancer', ports: [['http', 80, 'TCP', 30080]] });
  (svc['status'] as { loadBalancer: unknown }).loadBalancer = {
    ingress: [{ ip: '198.51.100.7', ipMode: 'Proxy' }],
  };
  const made = (tag: string) => {
    const { view, settings } = settingsAt(tag, [svc]);
    return expectedCilium(view, NODE, settings).some((f) => f.type === 'LoadBalancer');
  };

  it('gets no frontend from 1.17, but for 1.18.0, whose control plane lost the check', () => {
    assert.equal(made('v1.16.5'), true);
    assert.equal(made('v1.17.0'), false);
    assert.equal(made('v1.18.0'), true);
    assert.equal(made('v1.18.1'), false);
    assert.equal(made('v1.20.2'), false);
  });
});

describe('endpoints not ready as backends (cilium#42708, 1.18.5)', () => {
  const svc = aService('ns/web', { ports: [['http', 80]] });
  const slice = anEndpointSlice(
    'ns/web',
    [
      ['10.244.1.1', { ready: false, serving: false, terminating: false }],
      ['10.244.1.2', { ready: false, serving: false, terminating: true }],
      ['10.244.1.3', { ready: false, serving: true, terminating: false }],
      ['10.244.1.4', { ready: false, serving: true, terminating: true }],
    ],
    [['http', 80]],
  );
  const states = (tag: string) => {
    const { view, settings } = settingsAt(tag, [svc, slice]);
    return expectedCilium(view, NODE, settings)[0]!.backends.map((b) => `${b.ip} ${b.state}`);
  };

  it('before 1.18.5 only serving ones: active, or terminating where they terminate', () => {
    assert.deepEqual(states('v1.18.4'), ['10.244.1.3 active', '10.244.1.4 terminating']);
  });
  it('from 1.18.5 every one: in maintenance, or terminating (serving or not)', () => {
    assert.deepEqual(states('v1.18.5'), [
      '10.244.1.1 maintenance',
      '10.244.1.2 terminating-not-serving',
      '10.244.1.3 maintenance',
      '10.244.1.4 terminating',
    ]);
  });
});

describe('the NodePort family of a Service without spec.ipFamilies (getIPFamilies, cilium#46425)', () => {
  const svc = aService('ns/web', {
    type: 'NodePort',
    clusterIP: 'fd00:10:96::41',
    ports: [['http', 80, 'TCP', 30080]],
  });
  const nodePorts = (tag: string) => {
    const { view, settings } = settingsAt(tag, [svc], { 'enable-ipv6': 'true' });
    return expectedCilium(view, NODE, settings)
      .filter((f) => f.type === 'NodePort')
      .map((f) => f.ip);
  };

  it('is IPv4 for an IPv6 cluster IP from 1.18 to 1.19.4, IPv6 from 1.19.5 and in 1.20', () => {
    assert.deepEqual(nodePorts('v1.18.10'), ['0.0.0.0']);
    assert.deepEqual(nodePorts('v1.19.4'), ['0.0.0.0']);
    assert.deepEqual(nodePorts('v1.19.5'), ['::']);
    assert.deepEqual(nodePorts('v1.20.0'), ['::']);
  });
});

describe('service.cilium.io/lb-algorithm as each release reads it (1.17 lower-cases it)', () => {
  const svc = aService('ns/web', { ports: [['http', 80]] });
  (svc['metadata'] as { annotations?: Record<string, string> }).annotations = {
    'service.cilium.io/lb-algorithm': 'Maglev',
  };
  const slice = anEndpointSlice('ns/web', ['10.244.1.1'], [['http', 80]]);
  const algorithm = (tag: string) => {
    const { view, settings } = settingsAt(tag, [svc, slice], {
      'bpf-lb-algorithm-annotation': 'true',
    });
    const frontends = expectedCilium(view, NODE, settings);
    const entry = expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: [],
      options: settings,
    }).find((e) => e.frontend.port === 80)!;
    return `${entry.algorithm ?? 'agent default'} ${entry.maglev}`;
  };

  it("'Maglev' selects maglev on 1.17 only; from 1.18 it selects nothing", () => {
    assert.equal(algorithm('v1.17.0'), 'maglev true');
    assert.equal(algorithm('v1.18.0'), 'agent default false');
    assert.equal(algorithm('v1.19.6'), 'agent default false');
    assert.equal(algorithm('latest'), 'agent default false');
  });
});
