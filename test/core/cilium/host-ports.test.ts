// HostPort frontends as Cilium's Pod reflector makes them (pkg/loadbalancer/reflectors/k8s.go
// upsertHostPort, v1.20.2): vector 25 holds the usual case; these are the rules around it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
  type CiliumExpectOptions,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import { releaseBehaviour } from '../../../src/core/dataplane/cilium/agent/release-behaviour.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { parseVersion } from '../../../src/core/version.js';
import type { KubeObject } from '../../../src/core/model.js';

const pod = (
  name: string,
  ports: Record<string, unknown>[],
  o: {
    node?: string;
    phase?: string;
    hostNetwork?: boolean;
    ips?: string[];
    deleting?: boolean;
  } = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: {
    nodeName: o.node ?? 'testnode',
    ...(o.hostNetwork ? { hostNetwork: true } : {}),
    containers: [{ name: 'c', ports }],
  },
  status: {
    phase: o.phase ?? 'Running',
    podIPs: (o.ips ?? ['10.244.1.5']).map((ip) => ({ ip })),
  },
});

const frontends = (objects: KubeObject[], o: CiliumExpectOptions = CILIUM_DEFAULTS) =>
  expectedCilium(clusterView(objects), { name: 'testnode', labels: {} }, o).map(
    (f) =>
      `${f.type} ${f.ip}:${f.port}/${f.protocol} ${f.service} -> ${f.backends.map((b) => `${b.ip}:${b.port}/${b.protocol}`).join(',')}`,
  );

describe('HostPort frontends of the Pods on the node', () => {
  it('one Service per host port; TCP and UDP of one number share it, each frontend its own protocol', () => {
    const p = pod('dns', [
      { containerPort: 53, hostPort: 5353, protocol: 'TCP' },
      { containerPort: 53, hostPort: 5353, protocol: 'UDP' },
    ]);
    assert.deepEqual(frontends([p]), [
      'HostPort 0.0.0.0:5353/tcp default/dns:host-port:5353:uid-dns -> 10.244.1.5:53/tcp',
      'HostPort 0.0.0.0:5353/udp default/dns:host-port:5353:uid-dns -> 10.244.1.5:53/udp',
    ]);
  });

  it('1.18.0 to 1.18.2 keep the last protocol of a host port only (cilium#41521)', () => {
    const p = pod('dns', [
      { containerPort: 53, hostPort: 5353, protocol: 'TCP' },
      { containerPort: 53, hostPort: 5353, protocol: 'UDP' },
    ]);
    const at = (tag: string) => ({ ...CILIUM_DEFAULTS, ...releaseBehaviour(parseVersion(tag)) });
    assert.deepEqual(frontends([p], at('v1.18.2')), [
      'HostPort 0.0.0.0:5353/udp default/dns:host-port:5353:uid-dns -> 10.244.1.5:53/udp',
    ]);
    assert.equal(frontends([p], at('v1.18.3')).length, 2);
  });

  it('a hostIP opens that address only; a dual-stack Pod without one, a wildcard per family', () => {
    const one = pod('one', [{ containerPort: 80, hostPort: 8080, hostIP: '192.0.2.7' }]);
    const two = pod('two', [{ containerPort: 80, hostPort: 8081 }], {
      ips: ['10.244.1.6', 'fd00::6'],
    });
    assert.deepEqual(frontends([one, two]), [
      'HostPort 192.0.2.7:8080/tcp default/one:host-port:8080:uid-one -> 10.244.1.5:80/tcp',
      'HostPort 0.0.0.0:8081/tcp default/two:host-port:8081:uid-two -> 10.244.1.6:80/tcp',
      'HostPort :::8081/tcp default/two:host-port:8081:uid-two -> fd00::6:80/tcp',
    ]);
  });

  it('none for a port in the NodePort range, an explicit 0.0.0.0, or a Pod the reflector skips', () => {
    const objects = [
      pod('in-range', [{ containerPort: 80, hostPort: 30080 }]),
      pod('unspecified', [{ containerPort: 80, hostPort: 8080, hostIP: '0.0.0.0' }]),
      pod('pending', [{ containerPort: 80, hostPort: 8080 }], { phase: 'Pending' }),
      pod('host-net', [{ containerPort: 80, hostPort: 8080 }], { hostNetwork: true }),
      pod('elsewhere', [{ containerPort: 80, hostPort: 8080 }], { node: 'other' }),
    ];
    assert.deepEqual(frontends(objects), []);
  });

  it("the agent's node-port-range, not the default: a port in it ignored, one outside kept", () => {
    const objects = [
      pod('low', [{ containerPort: 80, hostPort: 20080 }]),
      pod('high', [{ containerPort: 80, hostPort: 30080 }]),
    ];
    assert.deepEqual(frontends(objects, { ...CILIUM_DEFAULTS, nodePortRange: [20000, 22767] }), [
      'HostPort 0.0.0.0:30080/tcp default/high:host-port:30080:uid-high -> 10.244.1.5:80/tcp',
    ]);
  });

  it('a Running Pod being deleted keeps its frontends: the reflector skips its changes, deletes nothing', () => {
    const objects = [
      pod('going', [{ containerPort: 80, hostPort: 8080 }], { deleting: true }),
      pod('done', [{ containerPort: 80, hostPort: 8081 }], { deleting: true, phase: 'Succeeded' }),
    ];
    assert.deepEqual(frontends(objects), [
      'HostPort 0.0.0.0:8080/tcp default/going:host-port:8080:uid-going -> 10.244.1.5:80/tcp',
    ]);
  });
});
