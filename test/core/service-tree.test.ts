// IP conventions: Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16 (seed) and 172.30.0.0/16
// (current kube-proxy fixtures), node IPs 192.0.2.0/24, load balancer 203.0.113.0/24.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { type ServiceTree } from '../../src/core/dataplane/trees.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const trees = (nat: string, filter = '') =>
  buildServiceTrees(
    parseIptables(
      `*nat\n${nat.trim()}\nCOMMIT\n${filter ? `*filter\n${filter.trim()}\nCOMMIT\n` : ''}`,
    ),
  );
const only = (nat: string, filter = ''): ServiceTree => {
  const t = trees(nat, filter);
  assert.equal(
    t.services.length,
    1,
    `one Service port, got ${t.services.map((s) => s.id).join(', ')}`,
  );
  return t.services[0]!;
};
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} is not ${b}`);

const N = 'ns1/svc1:p80';
const SVC = kubeProxyChain('KUBE-SVC', N, 'tcp');
const SVL = kubeProxyChain('KUBE-SVL', N, 'tcp');
const EXT = kubeProxyChain('KUBE-EXT', N, 'tcp');
const FW = kubeProxyChain('KUBE-FW', N, 'tcp');
const XLB = kubeProxyChain('KUBE-XLB', N, 'tcp');
const SEP = (ep: string) => endpointChain(N, 'tcp', ep);
const [A, B, C] = ['10.244.0.5:8080', '10.244.1.6:8080', '10.244.2.7:8080'];
const sep = (ep: string, comment = true) => {
  const c = comment ? ` -m comment --comment "${N}"` : '';
  return `-A ${SEP(ep)} -s ${ep.split(':')[0]}/32${c} -j KUBE-MARK-MASQ\n-A ${SEP(ep)} -p tcp${c} -m tcp -j DNAT --to-destination ${ep}`;
};
const clusterIP = `-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j ${SVC}`;

describe('Service trees', () => {
  it('reads the seed nat excerpt as exactly one Service port with two endpoints at 50%', () => {
    const all = buildServiceTrees(parseIptables(fixture('seed-nat-S.txt')));
    assert.equal(all.services.length, 1);
    const t = all.services[0]!;
    assert.equal(t.name, 'default/nginx-svc:http');
    assert.deepEqual([t.clusterIP, t.port, t.protocol], ['10.1.190.219', 8080, 'tcp']);
    assert.equal(t.chains.svc, 'KUBE-SVC-ELCM5PCEQWBTUJ2I');
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.chain, e.probability, e.hairpinMasquerade]),
      [
        ['10.244.0.3:80', 'KUBE-SEP-SMDVMBZNJPO5AA7R', 0.5, true],
        ['10.244.1.7:80', 'KUBE-SEP-FNO4E6JYD7EGUHTP', 0.5, true],
      ],
    );
    assert.deepEqual(
      t.masquerade.map((m) => [m.chain, m.condition]),
      [['KUBE-SERVICES', '! -s 10.244.0.0/16']],
    );
    assert.equal(t.fallThrough, 0);
  });

  it('gives three endpoints chained 1/3, 1/2, 1 a third each', () => {
    const t = only(`
:KUBE-SERVICES - [0:0]
:${SVC} - [0:0]
:${SEP(A)} - [0:0]
:${SEP(B)} - [0:0]
:${SEP(C)} - [0:0]
${clusterIP}
-A ${SVC} ! -s 10.244.0.0/16 -d 172.30.0.41/32 -p tcp -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A ${SVC} -m comment --comment "${N} -> ${A}" -m statistic --mode random --probability 0.33333333349 -j ${SEP(A)}
-A ${SVC} -m comment --comment "${N} -> ${B}" -m statistic --mode random --probability 0.50000000000 -j ${SEP(B)}
-A ${SVC} -m comment --comment "${N} -> ${C}" -j ${SEP(C)}
${sep(A)}
${sep(B)}
${sep(C)}`);
    assert.deepEqual(
      t.endpoints.map((e) => e.address),
      [A, B, C],
    );
    for (const e of t.endpoints) close(e.probability, 1 / 3);
    assert.deepEqual(
      t.masquerade.map((m) => [m.chain, m.condition]),
      [[SVC, '! -s 10.244.0.0/16']],
    );
  });

  it('follows the jumps of a large cluster, which writes no comments on SVC -> SEP and SEP rules', () => {
    const t = only(`
${clusterIP}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(A)}
-A ${SVC} -j ${SEP(B)}
${sep(A, false)}
${sep(B, false)}`);
    assert.equal(t.name, N);
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability]),
      [
        [A, 0.5],
        [B, 0.5],
      ],
    );
  });

  it('identifies a Service by VIP:port in a dump without comments, and by name when told the Service ports', () => {
    const nat = `
-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j ${SVC}
-A ${SVC} -j ${SEP(A)}
${sep(A, false)}`;
    assert.equal(only(nat).id, '172.30.0.41:80/tcp');
    assert.equal(only(nat).name, undefined);
    const named = buildServiceTrees(parseIptables(`*nat\n${nat.trim()}\nCOMMIT\n`), {
      servicePorts: [{ name: N, protocol: 'TCP' }],
    });
    assert.equal(named.services[0]!.name, N);
  });

  it('without comments, tells a cluster IP, an external IP before 1.24, and from 1.24 an external or load-balancer IP by their targets', () => {
    const kinds = (nat: string) => only(nat).entries.map((e) => [e.address, e.kind, e.label]);
    const rules = `
-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j ${SVC}
-A ${SVC} -j ${SEP(A)}
${sep(A, false)}`;
    // before 1.24: a later VIP to the SVC chain is an external IP (load balancers went to FW)
    assert.deepEqual(
      kinds(`${rules}\n-A KUBE-SERVICES -d 203.0.113.7/32 -p tcp -m tcp --dport 80 -j ${SVC}`),
      [
        ['172.30.0.41', 'cluster-ip', undefined],
        ['203.0.113.7', 'external-ip', undefined],
      ],
    );
    // from 1.24 external and load-balancer IPs alike go to EXT: which one is not said
    assert.deepEqual(
      kinds(
        `${rules}\n-A KUBE-SERVICES -d 203.0.113.7/32 -p tcp -m tcp --dport 80 -j ${EXT}\n-A ${EXT} -j ${SVC}`,
      ),
      [
        ['172.30.0.41', 'cluster-ip', undefined],
        [
          '203.0.113.7',
          'virtual-server',
          'external or load-balancer IP (a listing does not say which)',
        ],
      ],
    );
  });

  it('reads a NodePort Service through KUBE-NODEPORTS and its KUBE-EXT chain', () => {
    const t = only(`
${clusterIP}
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${EXT}
-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ
-A ${EXT} -j ${SVC}
-A ${SVC} -j ${SEP(A)}
${sep(A)}`);
    assert.deepEqual(t.nodePorts, [30080]);
    assert.deepEqual(
      t.entries.map((e) => [e.kind, e.chain]),
      [
        ['cluster-ip', SVC],
        ['node-port', EXT],
      ],
    );
    assert.deepEqual(t.chains, {
      svc: SVC,
      svl: undefined,
      ext: EXT,
      fw: undefined,
      xlb: undefined,
    });
    assert.deepEqual(
      t.masquerade.map((m) => [m.chain, m.condition]),
      [[EXT, 'all']],
    );
  });

  it('keeps the local endpoints of externalTrafficPolicy: Local apart (KUBE-SVL)', () => {
    const t = only(`
${clusterIP}
-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${EXT}
-A ${EXT} -s 10.244.0.0/16 -m comment --comment "pod traffic for ${N} external destinations" -j ${SVC}
-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A ${EXT} -m comment --comment "route LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j ${SVC}
-A ${EXT} -j ${SVL}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(A)}
-A ${SVC} -j ${SEP(B)}
-A ${SVL} -j ${SEP(A)}
${sep(A)}
${sep(B)}`);
    assert.deepEqual(
      t.endpoints.map((e) => e.address),
      [A, B],
    );
    assert.deepEqual(
      t.localEndpoints!.map((e) => [e.address, e.probability]),
      [[A, 1]],
    );
    assert.deepEqual(
      t.masquerade.map((m) => m.condition),
      ['--src-type LOCAL'],
    );
  });

  it('reads the old KUBE-XLB chain and its "has no local endpoints" drop', () => {
    const t = only(`
-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j ${SVC}
-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${XLB}
-A ${XLB} -s 10.244.0.0/16 -m comment --comment "Redirect pods trying to reach external loadbalancer VIP to clusterIP" -j ${SVC}
-A ${XLB} -m comment --comment "${N} has no local endpoints" -j KUBE-MARK-DROP
-A ${SVC} -j ${SEP(B)}
${sep(B)}`);
    assert.equal(t.chains.xlb, XLB);
    assert.deepEqual(t.localEndpoints, []);
    assert.deepEqual(
      t.verdicts.map((v) => [v.kind, v.table, v.chain]),
      [['drop', 'nat', XLB]],
    );
  });

  it('turns the filter REJECT of a Service without endpoints into its tree', () => {
    const t = only(
      ':KUBE-SERVICES - [0:0]',
      `-A KUBE-SERVICES -d 172.30.0.46/32 -p tcp -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
    );
    assert.equal(t.name, 'ns6/svc6:p80');
    assert.deepEqual([t.clusterIP, t.port, t.endpoints, t.chains], ['172.30.0.46', 80, [], {}]);
    assert.deepEqual(
      t.verdicts.map((v) => [v.kind, v.table, v.chain]),
      [['reject', 'filter', 'KUBE-SERVICES']],
    );
  });

  it('reports chains no entry point reaches as orphans', () => {
    const old = kubeProxyChain('KUBE-SVC', 'ns9/gone:http', 'tcp');
    const oldSep = endpointChain('ns9/gone:http', 'tcp', '10.244.9.9:80');
    const t = trees(`
:${old} - [0:0]
:${oldSep} - [0:0]
${clusterIP}
-A ${SVC} -j ${SEP(A)}
${sep(A)}
-A ${old} -j ${oldSep}
-A ${oldSep} -p tcp -m tcp -j DNAT --to-destination 10.244.9.9:80`);
    assert.deepEqual(
      t.orphans.map((o) => ({ chain: o.chain, rules: o.rules, tree: o.tree?.id })),
      [
        { chain: old, rules: 1, tree: `${old.slice(-16)}/tcp` },
        { chain: oldSep, rules: 1, tree: undefined },
      ].sort((a, b) => (a.chain < b.chain ? -1 : 1)),
    );
    // what the orphan would do if reached (no comment names it: its hash does)
    const tree = t.orphans.find((o) => o.tree)!.tree!;
    assert.deepEqual(
      tree.endpoints.map((e) => [e.address, e.probability]),
      [['10.244.9.9:80', 1]],
    );
    assert.equal(t.services.length, 1, 'the orphan is not a Service of this node');
  });

  it('marks a jump to a KUBE-SEP chain the dump does not have', () => {
    const t = only(`
:KUBE-SERVICES - [0:0]
:${SVC} - [0:0]
${clusterIP}
-A ${SVC} -j ${SEP(A)}`);
    assert.deepEqual(
      t.endpoints.map((e) => [e.chain, e.chainMissing, e.address]),
      [[SEP(A), true, undefined]],
    );
  });

  it('a paste without some KUBE-SEP chains: their shares from the jumps, target and hairpin unknown', () => {
    const t = only(`
${clusterIP}
-A ${SVC} -m statistic --mode random --probability 0.33333333349 -j ${SEP(A)}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(B)}
-A ${SVC} -j ${SEP(C)}
${sep(B)}`);
    assert.deepEqual(
      t.endpoints.map((e) => [e.chain, e.address, e.hairpinMasquerade, e.chainMissing ?? false]),
      [
        [SEP(A), undefined, null, true],
        [SEP(B), B, true, false],
        [SEP(C), undefined, null, true],
      ],
    );
    t.endpoints.forEach((e) => close(e.probability, 1 / 3));
    assert.equal(t.fallThrough, 0, 'nothing falls through: the last jump takes the rest');
  });

  it('an entry whose Service chain is not in the paste is kept, with its entry point', () => {
    const t = only(`
${clusterIP}
-A KUBE-SERVICES -m comment --comment "${N} loadbalancer IP" -m tcp -p tcp -d 203.0.113.9 --dport 80 -j ${FW}`);
    assert.equal(t.name, N);
    assert.deepEqual([t.clusterIP, t.port], ['172.30.0.41', 80]);
    assert.deepEqual(t.loadBalancerIPs, ['203.0.113.9']);
    assert.deepEqual(t.absentChains, [SVC, FW]);
    assert.deepEqual(t.endpoints, []);
  });

  it('a node port entry to an absent KUBE-EXT chain, and a KUBE-EXT chain to an absent KUBE-SVC', () => {
    const nodePort = only(`
-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${EXT}`);
    assert.deepEqual([nodePort.nodePorts, nodePort.absentChains], [[30080], [EXT]]);
    const ext = only(`
-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 30080 -j ${EXT}
-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ
-A ${EXT} -j ${SVC}`);
    assert.equal(ext.chains.ext, EXT);
    assert.deepEqual(ext.absentChains, [SVC]);
    assert.equal(ext.masquerade.length, 1);
  });

  it('Service chains of a paste without KUBE-SERVICES get their trees, entry not in the paste', () => {
    const named = kubeProxyChain('KUBE-SVC', 'ns2/api:https', 'tcp');
    const t = trees(`
-A ${SVC} -m recent --name ${SEP(A)} --mask 255.255.255.255 --rsource --rcheck --seconds 10800 --reap -j ${SEP(A)}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(A)}
-A ${SVC} -j ${SEP(B)}
-A ${SVL} -j ${SEP(A)}
-A ${named} -m comment --comment "ns2/api:https -> 10.244.3.3:443" -j KUBE-SEP-AAAAAAAAAAAAAAAA`);
    assert.deepEqual(
      t.services.map((x) => [x.id, x.entryAbsent, x.entries.length]),
      [
        [SVC.slice(-16), true, 0], // no entry, no comment, no DNAT rule: protocol not in the paste
        ['ns2/api:https', true, 0],
      ],
    );
    const svc = t.services[0]!;
    assert.equal(svc.affinitySeconds, 10800);
    assert.deepEqual(
      svc.endpoints.map((e) => [e.chain, e.probability, e.affinity]),
      [
        [SEP(A), 0.5, true],
        [SEP(B), 0.5, false],
      ],
    );
    assert.deepEqual(
      svc.localEndpoints!.map((e) => [e.chain, e.probability]),
      [[SEP(A), 1]],
    );
    assert.deepEqual(t.orphans, []);
  });

  it('a rule without --dport has no port (the text says "port not shown"), never undefined read as 0', () => {
    const t =
      only(`-A KUBE-SERVICES -d 10.0.91.63/32 -p tcp -m comment --comment "${N} cluster IP" -j ${SVC}
-A ${SVC} -j ${SEP(A)}
${sep(A)}`);
    assert.equal(t.port, undefined);
    assert.equal(t.entries[0]!.port, undefined);
  });

  it('reads kube-proxy v1.1 hairpin rules (MARK 0x4d415351 in the KUBE-SEP chain)', () => {
    const t = only(`
-A KUBE-SERVICES -d 10.0.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns" -j KUBE-SEP-ZD6GQMTZDZ7ZTQJ7
-A KUBE-SEP-ZD6GQMTZDZ7ZTQJ7 -s 10.244.1.4/32 -m comment --comment "kube-system/kube-dns:dns" -j MARK --set-xmark 0x4d415351/0xffffffff
-A KUBE-SEP-ZD6GQMTZDZ7ZTQJ7 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.4:53`);
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.hairpinMasquerade]),
      [['10.244.1.4:53', true]],
    );
  });

  it('reads kube-proxy v1.2 hairpin rules (the masquerade bit as its own mask, zero-padded)', () => {
    // the Debug Services page's rules, as a Chinese study note (helowd/study-notes) quotes them
    const t = only(`
-A KUBE-SERVICES -d 10.0.1.175/32 -p tcp -m comment --comment "default/hostnames: cluster IP" -m tcp --dport 80 -j KUBE-SVC-NWV5X2332I4OT4T3
-A KUBE-SVC-NWV5X2332I4OT4T3 -m comment --comment "default/hostnames:" -j KUBE-SEP-57KPRZ3JQVENLNBR
-A KUBE-SEP-57KPRZ3JQVENLNBR -s 10.244.3.6/32 -m comment --comment "default/hostnames:" -j MARK --set-xmark 0x00004000/0x00004000
-A KUBE-SEP-57KPRZ3JQVENLNBR -p tcp -m comment --comment "default/hostnames:" -m tcp -j DNAT --to-destination 10.244.3.6:9376`);
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.hairpinMasquerade]),
      [['10.244.3.6:9376', true]],
    );
  });

  it("reads a port without endpoints' node port from filter even where nat declares KUBE-NODEPORTS", () => {
    // helowd/study-notes: a whole dump whose nat table has no rule for the port at all
    const t = only(
      ':KUBE-NODEPORTS - [0:0]\n:KUBE-SERVICES - [0:0]',
      `:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-SERVICES - [0:0]
-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${N} has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 31306 -j REJECT --reject-with icmp-port-unreachable
-A KUBE-SERVICES -d 10.96.0.80/32 -p tcp -m comment --comment "${N} has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
    );
    assert.deepEqual([t.name, t.clusterIP, t.port, t.nodePorts], [N, '10.96.0.80', 80, [31306]]);
  });

  it('shows each userspace-mode portal as an entry proxied by kube-proxy itself', () => {
    const t = only(`
-A KUBE-PORTALS-CONTAINER -d 10.0.0.1/32 -p tcp -m comment --comment "default/kubernetes:https" -m tcp --dport 443 -j REDIRECT --to-ports 36647
-A KUBE-PORTALS-HOST -d 10.0.0.1/32 -p tcp -m comment --comment "default/kubernetes:https" -m tcp --dport 443 -j DNAT --to-destination 192.0.2.2:36647
-A KUBE-NODEPORT-CONTAINER -p tcp -m comment --comment "default/kubernetes:https" -m tcp --dport 30443 -j REDIRECT --to-ports 36648`);
    assert.equal(t.name, 'default/kubernetes:https');
    assert.deepEqual([t.clusterIP, t.port, t.nodePorts], ['10.0.0.1', 443, [30443]]);
    assert.deepEqual(
      t.entries.map((e) => [e.kind, e.from, e.proxyPort]),
      [
        ['cluster-ip', 'KUBE-PORTALS-CONTAINER', 36647],
        ['cluster-ip', 'KUBE-PORTALS-HOST', 36647],
        ['node-port', 'KUBE-NODEPORT-CONTAINER', 36648],
      ],
    );
  });

  it('shows the share no endpoint takes when the probabilities do not add up', () => {
    const t = only(`
${clusterIP}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(A)}
-A ${SVC} -m statistic --mode random --probability 0.50000000000 -j ${SEP(B)}
${sep(A)}
${sep(B)}`);
    assert.deepEqual(
      t.endpoints.map((e) => e.probability),
      [0.5, 0.25],
    );
    close(t.fallThrough, 0.25);
  });

  it('takes the Pod IP from the hairpin rule when old iptables cannot print the DNAT target', () => {
    const t = only(`
${clusterIP}
-A ${SVC} -j ${SEP(A)}
-A ${SEP(A)} -s 10.244.0.5/32 -j KUBE-MARK-MASQ
-A ${SEP(A)} -p tcp -m tcp -j DNAT --to-destination :0 --persistent --to-destination :0 --persistent --to-destination 0.0.0.0 --random --persistent`);
    const [ep] = t.endpoints;
    assert.deepEqual([ep!.address, ep!.inferredIP], [undefined, '10.244.0.5']);
    assert.match(ep!.quirk!, /1\.4\.x/);
  });

  it('reads sessionAffinity ClientIP from the recent rules', () => {
    const t = only(`
${clusterIP}
-A ${SVC} -m comment --comment "${N} -> ${A}" -m recent --rcheck --seconds 10800 --reap --name ${SEP(A)} --mask 255.255.255.255 --rsource -j ${SEP(A)}
-A ${SVC} -m comment --comment "${N} -> ${B}" -m recent --rcheck --seconds 10800 --reap --name ${SEP(B)} --mask 255.255.255.255 --rsource -j ${SEP(B)}
-A ${SVC} -m comment --comment "${N} -> ${A}" -m statistic --mode random --probability 0.50000000000 -j ${SEP(A)}
-A ${SVC} -m comment --comment "${N} -> ${B}" -j ${SEP(B)}
${sep(A)}
${sep(B)}`);
    assert.equal(t.affinitySeconds, 10800);
    assert.deepEqual(
      t.endpoints.map((e) => [e.affinity, e.probability]),
      [
        [true, 0.5],
        [true, 0.5],
      ],
    );
  });

  it('reads load-balancer IPs, the KUBE-FW chain and external IPs', () => {
    const t = only(`
${clusterIP}
-A KUBE-SERVICES -d 192.0.2.200/32 -p tcp -m comment --comment "${N} external IP" -m tcp --dport 80 -j ${EXT}
-A KUBE-SERVICES -d 203.0.113.5/32 -p tcp -m comment --comment "${N} loadbalancer IP" -m tcp --dport 80 -j ${FW}
-A ${FW} -s 198.51.100.0/24 -m comment --comment "${N} loadbalancer IP" -j ${EXT}
-A ${FW} -m comment --comment "other traffic to ${N} will be dropped by KUBE-PROXY-FIREWALL"
-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ
-A ${EXT} -j ${SVC}
-A ${SVC} -j ${SEP(A)}
${sep(A)}`);
    assert.deepEqual(
      [t.externalIPs, t.loadBalancerIPs, t.chains.fw],
      [['192.0.2.200'], ['203.0.113.5'], FW],
    );
  });
});
