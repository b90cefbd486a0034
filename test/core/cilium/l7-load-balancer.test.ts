// A frontend flagged l7-load-balancer (an Ingress's or a Gateway's Service, one a
// CiliumEnvoyConfig redirects): Cilium sets the flag where the Service has an L7 proxy port, and
// its datapath sends the frontend's new connections to Envoy on the node at that port before it
// looks at any backend (bpf/lib/lb.h lb4_svc_is_l7_loadbalancer). Its map holds no backend, or
// backends no new connection is sent to: neither is "no endpoints", nor a share.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { traceCiliumPacket } from '../../../src/core/dataplane/cilium/trace.js';
import { buildCiliumTrees } from '../../../src/core/dataplane/cilium/trees.js';
import { rulesText } from '../../../src/output/rules.js';

const BPF =
  'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
  '10.96.155.44:80     0.0.0.0:0 (14) (0) [ClusterIP, non-routable]\n' +
  '                    10.244.1.211:80 (14) (1)\n' +
  '10.96.193.7:443     0.0.0.0:0 (30) (0) [ClusterIP, non-routable, l7-load-balancer] (L7LB Proxy Port: 15735)\n';

// lb/maps-dump: a ClusterIP a CiliumEnvoyConfig redirects, its one backend still in slot 1
const MAPS =
  'BE: ID=1 ADDR=10.244.1.1:80/TCP STATE=active\n' +
  'REV: ID=1 ADDR=10.96.50.104:80\n' +
  'SVC: ID=1 ADDR=10.96.50.104:80/TCP SLOT=0 L7Proxy=18036 COUNT=1 QCOUNT=0 FLAGS=ClusterIP+non-routable+l7-load-balancer\n' +
  'SVC: ID=1 ADDR=10.96.50.104:80/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=ClusterIP+non-routable+l7-load-balancer\n';

const read = (text: string) => {
  const table = parseCilium(text, 'p.txt');
  const trees = buildCiliumTrees(table, new Map());
  return { table, trees, text: rulesText(table, trees, { label: 'p.txt' }) };
};

describe('an l7-load-balancer frontend', () => {
  it('is sent to the L7 proxy at the port bpf lb list prints, never "no endpoints"', () => {
    const { trees, text } = read(BPF);
    const l7 = trees.services.find((t) => t.clusterIP === '10.96.193.7')!;
    assert.deepEqual(l7.entries[0]!.l7Proxy, { port: 15735 });
    // the tree's own entry says it, for the views: set once, from the reader's typed mark
    assert.deepEqual(l7.l7Proxy, { port: 15735 });
    assert.match(text, /10\.96\.193\.7:443.*\n.*L7 proxy \(Envoy\) on this node, port 15735/);
    assert.doesNotMatch(text, /no endpoints/);
    // the frontend beside it is no L7 load balancer
    const plain = trees.services.find((t) => t.clusterIP === '10.96.155.44')!;
    assert.equal(plain.entries[0]!.l7Proxy, undefined);
    assert.equal(plain.l7Proxy, undefined);
  });

  it('says its port is not in a listing that does not print it (before 1.16)', () => {
    const { trees, text } = read(BPF.replace(' (L7LB Proxy Port: 15735)', ''));
    const l7 = trees.services.find((t) => t.clusterIP === '10.96.193.7')!;
    assert.deepEqual(l7.entries[0]!.l7Proxy, {});
    assert.match(text, /its port not in this listing/);
  });

  it("gives the maps dump's backend of it no share: the datapath does not pick it", () => {
    const { table, trees } = read(MAPS);
    assert.deepEqual(table.frontends[0]!.l7Proxy, { port: 18036 });
    // the flag is read as the mark, not left among the flags nothing models
    assert.deepEqual(table.frontends[0]!.flags, ['non-routable']);
    const [ep] = trees.services[0]!.endpoints;
    assert.equal(ep!.address, '10.244.1.1:80');
    assert.match(ep!.shareUnknown ?? '', /L7 proxy/);
  });

  it('keeps the port bpf lb list prints where a service list read before it names the frontend', () => {
    const { table, text } = read(
      'ID   Frontend              Service Type   Backend\n' +
        '30   10.96.193.7:443       ClusterIP\n' +
        `# cilium-dbg bpf lb list\n${BPF}`,
    );
    const l7 = table.frontends.find((f) => f.ip === '10.96.193.7')!;
    assert.deepEqual(l7.l7Proxy, { port: 15735 });
    assert.match(text, /L7 proxy \(Envoy\) on this node, port 15735/);
  });

  it('walks a connection to the proxy, not to a rejection for want of backends', () => {
    const table = parseCilium(BPF, 'p.txt');
    const [o, ...rest] = traceCiliumPacket(
      table,
      { localAddresses: ['10.0.0.5'], interfaces: [] },
      { src: '10.0.0.9', dst: '10.96.193.7', dport: 443, protocol: 'tcp', fromHost: false },
      {
        socketLB: true,
        hostnsOnly: false,
        externalClusterIP: false,
        noBackend: 'reject',
        podIPs: new Set(['10.0.0.9']),
      },
    ).outcomes;
    assert.equal(rest.length, 0);
    assert.equal(o!.verdict, 'ACCEPT');
    assert.equal(o!.delivery, 'local');
    assert.equal(o!.dnat, undefined);
    assert.match(o!.rules[0]!.effect, /L7 proxy \(Envoy\) on this node at port 15735/);
  });
});
