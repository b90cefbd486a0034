// IP conventions: Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16 (seed) and 172.30.0.0/16
// (current kube-proxy fixtures), node IPs 192.0.2.0/24, load balancer 203.0.113.0/24.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { endpointChain, kubeProxyChain } from '../../src/core/chain-names.js';
import { parseIptables } from '../../src/core/iptables.js';
import { buildServiceTrees, type ServiceTree } from '../../src/core/service-tree.js';

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
      t.orphans,
      [
        { chain: old, rules: 1 },
        { chain: oldSep, rules: 1 },
      ].sort((a, b) => (a.chain < b.chain ? -1 : 1)),
    );
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
