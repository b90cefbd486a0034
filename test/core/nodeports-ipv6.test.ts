// kube-proxy's TestNodePorts IPv6 cases (pkg/proxy/iptables/proxier_test.go) as our table test:
// the rules kdebug expects kube-proxy's IPv6 proxier to write for a NodePort Service, walked with
// the packets that test sends. A Pod reaches the cluster IP unmasqueraded; an outside client and
// the node itself reach the node port masqueraded; ::1 never reaches a node port (no localhost
// node ports in IPv6); the node's second address answers only when nodePortAddresses holds it;
// a link-local address answers when nodePortAddresses holds fe80::/10, as any address would.
// IP conventions (that test's): node 2001:db8::1 and 2001:db8:1::2, Pod CIDR fd00:10::/64,
// cluster IP fd00:172:30::41, endpoints fd00:10:180::1 (another node) and fd00:10:180::2:1 (this one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { tracePacket } from '../../src/core/dataplane/iptables/trace/trace.js';
import type { TracePacket } from '../../src/core/dataplane/trace/trace.js';
import { aKubeProxyConfig, aService, anEndpointSlice } from '../support/builders.js';

const NODE = 'test-node';
// and the link-local address every IPv6 interface has
const ADDRESSES = [
  '192.168.0.2',
  '192.168.1.2',
  '2001:db8::1',
  '2001:db8:1::2',
  'fe80::5054:ff:fe12:3456',
];

function objects(nodePortAddresses?: readonly string[]): KubeObject[] {
  const slice = anEndpointSlice('ns1/svc1', [
    'fd00:10:180::1',
    ['fd00:10:180::2:1', { node: NODE }],
  ]);
  return [
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE },
      spec: { podCIDRs: ['10.0.0.0/24', 'fd00:10::/64'] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.2' },
          { type: 'InternalIP', address: '2001:db8::1' },
        ],
      },
    },
    aKubeProxyConfig(
      `clusterCIDR: 10.0.0.0/8,fd00:10::/64\n${nodePortAddresses ? `nodePortAddresses: [${nodePortAddresses.join(', ')}]\n` : ''}`,
    ),
    aService('ns1/svc1', {
      type: 'NodePort',
      clusterIP: 'fd00:172:30::41',
      ports: [['p80', 80, 'TCP', 3001]],
    }),
    { ...slice, addressType: 'IPv6' },
  ];
}

/** Each outcome of the walk: its DNAT target (or nothing) and whether it is masqueraded. */
function walk(
  nodePortAddresses: readonly string[] | undefined,
  p: Omit<TracePacket, 'protocol' | 'fromHost'>,
) {
  const exp = expectedRules(clusterView(objects(nodePortAddresses)), NODE, {
    family: 'IPv6',
    interfaceAddresses: ADDRESSES,
  });
  const rs = parseIptables(expectedSave(exp), { file: 'expected' });
  const net = {
    localAddresses: ADDRESSES,
    interfaces: [
      { name: 'eth0', cidrs: ['2001:db8::1/64', '2001:db8:1::2/64', 'fe80::5054:ff:fe12:3456/64'] },
    ],
    defaultInterface: 'eth0',
  };
  // a packet from one of the node's own addresses starts in nat OUTPUT, as in kube-proxy's tracer
  const fromHost = ADDRESSES.includes(p.src) || p.src === '::1';
  return tracePacket(rs, net, { ...p, protocol: 'tcp', fromHost })
    .outcomes.map((o) => `${o.dnat ?? 'unchanged'}${o.masquerade ? ' masq' : ''}`)
    .sort();
}

const BOTH = ['[fd00:10:180::1]:80', '[fd00:10:180::2:1]:80'];
const masq = (xs: string[]) => xs.map((x) => `${x} masq`);

describe("kube-proxy's IPv6 NodePort cases", () => {
  for (const [name, addresses, altNodeIP] of [
    ['nodePortAddresses unset', undefined, true],
    [
      'nodePortAddresses 192.168.0.0/24, 192.168.1.0/24, 2001:db8::/64',
      ['192.168.0.0/24', '192.168.1.0/24', '2001:db8::/64'],
      false,
    ],
  ] as const) {
    describe(name, () => {
      it('a Pod to the cluster IP: both endpoints, not masqueraded', () => {
        assert.deepEqual(
          walk(addresses, { src: 'fd00:10::2', dst: 'fd00:172:30::41', dport: 80 }),
          BOTH,
        );
      });
      it('an outside client to the node port: both endpoints, masqueraded', () => {
        assert.deepEqual(
          walk(addresses, { src: '2600:5200::1', dst: '2001:db8::1', dport: 3001 }),
          masq(BOTH),
        );
      });
      it('the node to its own node port: both endpoints, masqueraded', () => {
        assert.deepEqual(
          walk(addresses, { src: '2001:db8::1', dst: '2001:db8::1', dport: 3001 }),
          masq(BOTH),
        );
      });
      it('::1 to a node port: not translated (no localhost node ports in IPv6)', () => {
        assert.deepEqual(walk(addresses, { src: '::1', dst: '::1', dport: 3001 }), ['unchanged']);
      });
      it(`the node's second address: ${altNodeIP ? 'answers' : 'ignored'}`, () => {
        assert.deepEqual(
          walk(addresses, { src: '2600:5200::1', dst: '2001:db8:1::2', dport: 3001 }),
          altNodeIP ? masq(BOTH) : ['unchanged'],
        );
      });
    });
  }

  // kube-proxy answers node ports on the interface addresses nodePortAddresses holds: a link-local
  // address is one like any other (no special case in 1.37), reached by a client on the link
  describe('nodePortAddresses fe80::/10', () => {
    it('the link-local address answers the node port', () => {
      assert.deepEqual(
        walk(['fe80::/10'], { src: 'fe80::1', dst: 'fe80::5054:ff:fe12:3456', dport: 3001 }),
        masq(BOTH),
      );
    });
    it("the node's global address does not", () => {
      assert.deepEqual(
        walk(['fe80::/10'], { src: '2600:5200::1', dst: '2001:db8::1', dport: 3001 }),
        ['unchanged'],
      );
    });
  });
});
