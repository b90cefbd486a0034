// The native devices and NodePort addresses of Cilium's agent: read from its status (observed) in
// each format real releases printed, else the devices cilium-config names (read), else said as
// not read; and the addresses NodePorts are served on from outside, as Cilium picks them.
// Addresses: 10.0.0.0/24 private node addresses, 203.0.114.0/24 a public one, fd00::/64 and
// fe80::/64 IPv6 unique-local and link-local.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import {
  pickNodePortAddresses,
  statusDevices,
} from '../../../src/core/dataplane/cilium/agent/devices.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import type { ExpectedFrontend } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import { ViewIndex } from '../../../src/core/kube/view-index.js';
import { clusterView, type ClusterView } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig, aNode } from '../../support/builders.js';

const DIR = new URL('../../fixtures/cilium/status/', import.meta.url).pathname;
interface Reading {
  devices: { name: string; addresses: string[]; directRouting: boolean }[];
  nodePortAddresses: string[] | null;
}
const readings = Object.entries(
  JSON.parse(readFileSync(`${DIR}readings.json`, 'utf8')) as Record<string, Reading>,
).filter(([k]) => !k.startsWith('_'));
const SCENARIO = readFileSync(
  new URL(
    '../../../snapshots/cilium-stale-backend/nodes/vm-12-11-centos/cilium-status.txt',
    import.meta.url,
  ),
  'utf8',
);

const agentPod = aCiliumAgent('n1');
const agentOn = (view: ClusterView, status: string | undefined) =>
  ciliumAgentOn(view, new ViewIndex(view).ciliumAgentPod('n1'), status)!;
// a status holding just its devices line, as 1.15+ prints it (one more space than addresses)
const listing = (devices: string) =>
  `KubeProxyReplacement:    True   [${devices}]\nCilium:                  Ok   1.18.6 (v1.18.6-3bb33f3c)\n`;

describe("the Cilium agent's NodePort devices and addresses", () => {
  for (const [name, want] of readings)
    it(`reads ${name} as its hand reading says`, () => {
      const text = readFileSync(`${DIR}${name}.txt`, 'utf8');
      const devices = statusDevices(text)!;
      assert.deepEqual(
        devices.map(({ allAddresses: _a, ...d }) => d),
        want.devices,
      );
      const agent = agentOn(clusterView([agentPod]), text);
      assert.equal(agent.nodePorts?.from, 'status');
      assert.deepEqual(agent.nodePorts?.addresses ?? null, want.nodePortAddresses);
    });

  it("reads 1.18's verbose status (the scenario's) from its Details' Devices line", () => {
    const agent = agentOn(clusterView([agentPod]), SCENARIO);
    assert.deepEqual(agent.nodePorts?.devices, [
      { name: 'eth0', addresses: ['10.0.12.11', 'fe80::5054:ff:fe3c:1a2b'], directRouting: true },
    ]);
    assert.deepEqual(agent.nodePorts?.addresses, ['10.0.12.11']);
    assert.equal(agent.nodePorts?.source, 'the status of agent kube-system/cilium-n1');
  });

  it('picks the NodePort addresses of a device as Cilium does', () => {
    const cases: [string, string, { cidrs?: string[]; nodeIPs?: string[] }, string[]][] = [
      ['the first private address', 'eth0   10.0.0.9 10.0.0.5', {}, ['10.0.0.9']],
      [
        "the node's IP before it",
        'eth0   10.0.0.9 10.0.0.5',
        { nodeIPs: ['10.0.0.5'] },
        ['10.0.0.5'],
      ],
      ['a private address before a public one', 'eth0   203.0.114.7 10.0.0.5', {}, ['10.0.0.5']],
      [
        "a private address before the node's public IP",
        'eth0   203.0.114.7 10.0.0.5',
        { nodeIPs: ['203.0.114.7'] },
        ['10.0.0.5'],
      ],
      ['a public address where none is private', 'eth0  203.0.114.7', {}, ['203.0.114.7']],
      [
        'one a family, never IPv6 link-local',
        'eth0    fe80::1 10.0.0.5 fd00::5',
        {},
        ['10.0.0.5', 'fd00::5'],
      ],
      ['none on a device without addresses', 'eth0 , eth1  10.0.0.5', {}, ['10.0.0.5']],
      [
        'every address within nodeport-addresses',
        'eth0    10.0.0.9 203.0.114.7 10.0.0.5',
        { cidrs: ['10.0.0.0/24'] },
        ['10.0.0.9', '10.0.0.5'],
      ],
      [
        'what an agent before 1.15 listed, as listed',
        'eth0 203.0.114.7, eth1 10.0.0.5',
        { cidrs: ['10.0.0.0/24'] },
        ['203.0.114.7', '10.0.0.5'],
      ],
    ];
    for (const [what, devices, o, want] of cases)
      assert.deepEqual(
        pickNodePortAddresses(statusDevices(listing(devices))!, {
          cidrs: o.cidrs ?? [],
          nodeIPs: o.nodeIPs ?? [],
        }),
        want,
        what,
      );
  });

  it("takes the node's IP from its Node and nodeport-addresses from cilium-config", () => {
    const node = aNode('n1', '10.0.0.5');
    const status = listing('eth0   10.0.0.9 10.0.0.5 (Direct Routing)');
    assert.deepEqual(agentOn(clusterView([agentPod, node]), status).nodePorts?.addresses, [
      '10.0.0.5',
    ]);
    const ranged = clusterView([
      agentPod,
      node,
      aCiliumConfig({ 'nodeport-addresses': '10.0.0.8/29' }),
    ]);
    assert.deepEqual(agentOn(ranged, status).nodePorts?.addresses, ['10.0.0.9']);
  });

  it('falls back to the devices cilium-config names, their addresses not read', () => {
    const view = clusterView([
      agentPod,
      aNode('n1', '10.0.0.5'),
      aCiliumConfig({
        devices: 'eth0 eth+',
        'direct-routing-device': 'eth1',
        'nodeport-addresses': '10.0.0.0/24',
      }),
    ]);
    const agent = agentOn(view, undefined);
    assert.deepEqual(agent.nodePorts, {
      devices: [
        { name: 'eth0', addresses: [], directRouting: false },
        { name: 'eth+', addresses: [], directRouting: false },
        { name: 'eth1', addresses: [], directRouting: true },
      ],
      cidrs: ['10.0.0.0/24'],
      from: 'cilium-config',
      source: 'ConfigMap kube-system/cilium-config',
    });
    const text = expectedCiliumText([], [], {
      node: 'n1',
      agent: 'a',
      settings: 's',
      nodePorts: agent.nodePorts!,
    });
    assert.match(
      text,
      /their addresses not read, from ConfigMap kube-system\/cilium-config: NodePorts on the wildcard entry only/,
    );
  });

  it('says them not read where neither the status nor cilium-config names them', () => {
    for (const objects of [
      [agentPod, aNode('n1', '10.0.0.5')],
      [agentPod, aCiliumConfig()],
    ]) {
      const agent = agentOn(clusterView(objects as KubeObject[]), undefined);
      assert.equal(agent.nodePorts, undefined);
      const frontends: ExpectedFrontend[] = [
        {
          ip: '0.0.0.0',
          port: 30080,
          protocol: 'tcp',
          type: 'NodePort',
          service: 'default/web',
          portName: '',
          servicePort: 80,
          localOnly: false,
          backends: [],
        },
      ];
      const maps = expectedMaps(frontends, {
        services: [],
        nodePortAddresses: [],
        options: agent.settings,
      });
      const text = expectedCiliumText(frontends, maps, { node: 'n1', agent: 'a', settings: 's' });
      assert.match(text, /NodePort devices and addresses not read/);
      // never the Node's own IP in their place
      assert.doesNotMatch(text, /10\.0\.0\.5/);
    }
  });

  it('refuses what is no device list: the features the bracket held before 1.9', () => {
    for (const line of [
      'KubeProxyReplacement:   Probe   [NodePort (SNAT, 30000-32767), ExternalIPs, HostReachableServices (TCP, UDP)]',
      'KubeProxyReplacement:   False   ',
    ])
      assert.equal(statusDevices(line), undefined, line);
  });
});
