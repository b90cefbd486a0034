// kdebug's drift on the node of one of Cilium's own script tests (test/support/cilium-vectors.ts):
// the objects, an agent of the vector's release with its script's flags, and the tables the script
// checks as that agent's listings; and faults made in its maps dump.
import assert from 'node:assert/strict';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { aCiliumAgent, aCiliumConfig, aNode } from './builders.js';
import { listing, setup, vectorRelease } from './cilium-vectors.js';
import { allModes } from './modes.js';

// the agent prints an empty table as its header alone (a zero-byte file: the script asserts none)
const HEADERS: Record<string, string> = {
  'cilium-frontends': 'Address   Type   ServiceName   PortName   Backends   Status\n',
  'cilium-backends': 'Service   Address   Source   Priority   State   PortNames   NodeName\n',
  'cilium-bpf-lb-list': 'SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n',
};

export function drift(
  v: string,
  maps = listing(v, 'expected-maps.txt'),
  /** null: the agent's table not read (the maps the only table). */
  frontends: string | null | undefined = listing(v, 'expected-frontends.txt'),
  /** cilium-config keys besides the script's flags. */
  config: Record<string, string> = {},
  /** The snapshot's meta.json: a capturedAt says every namespace's Services were listed. */
  meta: Record<string, string> = {},
) {
  const s = setup(v);
  const o = s.maps.options;
  const listings: Record<string, string | undefined> = {
    'cilium-frontends': frontends ?? undefined,
    'cilium-backends': frontends === null ? undefined : listing(v, 'expected-backends.txt'),
    'cilium-bpf-lb-list': maps,
  };
  const nodes: Record<string, string> = {};
  // the agent's status names its device and NodePort addresses, as the harness gives them
  const addresses = s.maps.nodePortAddresses;
  if (addresses.length > 0)
    nodes['cilium-status'] =
      `KubeProxyReplacement:  ${s.options.kubeProxyReplacement ? 'True' : 'False'}  [test  ${addresses.join(' ')}]\n`;
  for (const [stem, text] of Object.entries(listings))
    if (text !== undefined) nodes[stem] = text === '' ? HEADERS[stem]! : text;
  // the node's own addresses, as the script's node-addresses table has them (a VIP on one gets
  // no wildcard entry from 1.19.5)
  const node = aNode('testnode', s.maps.nodeAddresses[0] ?? '192.0.2.1');
  (node['status'] as { addresses: { type: string; address: string }[] }).addresses =
    s.maps.nodeAddresses.map((address) => ({ type: 'InternalIP', address }));
  return new Analysis(
    {
      objects: [
        ...s.docs,
        ...(s.maps.nodeAddresses.length > 0 ? [node] : []),
        aCiliumAgent(
          'testnode',
          `quay.io/cilium/cilium:${vectorRelease(v)?.text ?? (/-v117-/.test(v) ? 'v1.17.0' : 'v1.18.0')}`,
        ),
        // the vectors' harness runs both families
        aCiliumConfig({
          'enable-ipv6': 'true',
          'bpf-lb-algorithm': o.algorithm,
          'bpf-lb-external-clusterip': String(o.externalClusterIP),
          'bpf-lb-mode': o.forwarding,
          'kube-proxy-replacement': String(s.options.kubeProxyReplacement),
          'enable-service-topology': String(s.options.serviceTopology),
          'bpf-lb-source-range-all-types': String(s.options.sourceRangeTypes === 'all'),
          'bpf-lb-mode-annotation': String(o.forwardingAnnotation),
          'bpf-lb-algorithm-annotation': String(o.algorithmAnnotation),
          'enable-health-check-loadbalancer-ip': String(s.options.healthCheckLoadBalancerIP),
          'bpf-lb-enable-wildcard-entries': String(o.wildcardEntries !== false),
          ...config,
        }),
      ],
      nodes: { testnode: nodes },
      meta,
    },
    { code: allModes },
  )
    .node('testnode')
    .drift();
}

/** The vector's maps dump with each `from` replaced (each must be there). */
export function edited(v: string, ...edits: [RegExp, string][]) {
  return edits.reduce((maps, [from, to]) => {
    const out = maps.replace(from, to);
    assert.notEqual(out, maps, `${from} in ${v}`);
    return out;
  }, listing(v, 'expected-maps.txt')!);
}
/** A frontend's backend gone from its slots, and its count one less. */
export const gone = (address: string, slot: number, count: number): [RegExp, string][] => [
  [
    new RegExp(`^(SVC: ID=\\d+ ADDR=${address} SLOT=0 .*)COUNT=${count} `, 'm'),
    `$1COUNT=${count - 1} `,
  ],
  [new RegExp(`^SVC: ID=\\d+ ADDR=${address} SLOT=${slot} .*\\n`, 'm'), ''],
];
export const found = (v: string, maps: string, frontends?: string) =>
  drift(v, maps, frontends).findings.map((f) => [f.id, f.service]);
