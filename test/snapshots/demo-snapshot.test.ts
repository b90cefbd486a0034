// The bundled demo snapshot (snapshots/nginx-svc) must be one self-consistent cluster: the API
// objects agree with each other, and each node's iptables-save is what kube-proxy v1.15 (plus
// kubelet, docker and flannel) wrote for exactly those objects, containing the seed's rules.
//
// IP conventions (the demo cluster, a real kube-proxy v1.15 cluster): node vm-12-7-centos 10.0.12.7 (master,
// Pods 10.244.0.0/24), node vm-12-11-centos 10.0.12.11 (Pods 10.244.1.0/24); Pod CIDR
// 10.244.0.0/16; Service CIDR 10.1.0.0/16; docker0 172.17.0.0/16.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { load as loadYaml } from 'js-yaml';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import {
  parseIptables,
  type Rule,
  type Ruleset,
} from '../../src/core/dataplane/iptables/read/parse.js';
import {
  clusterView,
  kubeProxyConfigOf,
  selectorMatches,
  servicePortName,
  slicesOf,
  type ClusterView,
  type Pod,
  type Service,
  type ServicePort,
} from '../../src/core/kube/objects.js';
import type { Facts } from '../../src/core/model.js';
import { probePlan } from '../../src/core/diagnose.js';
import { probeStem } from '../../src/core/checks/reachability/probes.js';
import { allModes } from '../support/modes.js';

const DIR = 'snapshots/nginx-svc';
const SEED = 'default/nginx-svc:http';
const NODEPORTS_TAIL =
  '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS';

// --- IPv4 helpers -------------------------------------------------------------------------------

const ipNum = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const ipStr = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
const split = (cidr: string) => {
  const [net, len] = cidr.split('/');
  return { net: ipNum(net!), size: 2 ** (32 - Number(len)) };
};
const inCidr = (ip: string, cidr: string) => {
  const c = split(cidr);
  return Math.floor(ipNum(ip) / c.size) === Math.floor(c.net / c.size);
};
const cidrInside = (inner: string, outer: string) =>
  inCidr(inner.split('/')[0]!, outer) && split(inner).size <= split(outer).size;

// --- what the objects say a Service port's endpoints are ----------------------------------------

interface Backend {
  ip: string;
  port: number;
  nodeName?: string;
  pod?: string;
}
const key = (b: Backend) => `${b.ip}:${b.port} node=${b.nodeName ?? '-'} pod=${b.pod ?? '-'}`;

const podReady = (p: Pod) =>
  p.phase === 'Running' &&
  !p.deleting &&
  p.conditions.some((c) => c.type === 'Ready' && c.status === 'True');

/** A targetPort resolved on one Pod: a number, or a named container port of that protocol. */
function resolvePort(port: ServicePort, pod: Pod): number | undefined {
  if (typeof port.targetPort === 'number') return port.targetPort;
  const named = pod.containers
    .flatMap((c) => c.ports)
    .find((cp) => cp.name === port.targetPort && cp.protocol === port.protocol);
  return named?.containerPort;
}

/** The ready Pods a selector Service sends this port to (what the endpoint controllers write). */
function selectedBackends(view: ClusterView, svc: Service, port: ServicePort): Backend[] {
  return view.pods
    .filter((p) => p.namespace === svc.namespace && selectorMatches(svc.selector!, p.labels))
    .filter(podReady)
    .map((p) => ({ ip: p.podIP!, port: resolvePort(port, p)!, nodeName: p.nodeName, pod: p.name }));
}

/** The endpoints of one Service port in its EndpointSlices (ready ones only). */
function sliceBackends(view: ClusterView, svc: Service, port: ServicePort): Backend[] {
  return slicesOf(view, svc).flatMap((s) => {
    const sp = s.ports.find((p) => p.name === port.name && p.protocol === port.protocol);
    if (!sp) return [];
    return s.endpoints
      .filter((e) => e.conditions.ready)
      .map((e) => ({
        ip: e.addresses[0]!,
        port: sp.port!,
        nodeName: e.nodeName,
        pod: e.targetRef?.name,
      }));
  });
}

function legacyBackends(view: ClusterView, svc: Service, port: ServicePort): Backend[] {
  const ep = view.endpoints.find((e) => e.namespace === svc.namespace && e.name === svc.name);
  return (ep?.subsets ?? []).flatMap((s) => {
    const sp = s.ports.find((p) => p.name === port.name && p.protocol === port.protocol);
    if (!sp) return [];
    return s.addresses.map((a) => ({
      ip: a.ip,
      port: sp.port,
      nodeName: a.nodeName,
      pod: a.targetRef?.name,
    }));
  });
}

const sorted = (bs: Backend[]) => bs.map(key).sort();
/** kube-proxy orders a port's endpoints by the string "ip:port". */
const endpointOrder = (bs: Backend[]) => bs.map((b) => `${b.ip}:${b.port}`).sort();

// --- rules helpers ------------------------------------------------------------------------------

interface ServicePortRef {
  svc: Service;
  port: ServicePort;
  spn: string;
  proto: string;
  endpoints: string[];
  svcChain: string;
  sepChains: string[];
}

function servicePorts(view: ClusterView): ServicePortRef[] {
  return view.services.flatMap((svc) =>
    svc.ports.map((port) => {
      const spn = servicePortName(svc, port);
      const proto = port.protocol.toLowerCase();
      const endpoints = endpointOrder(sliceBackends(view, svc, port));
      return {
        svc,
        port,
        spn,
        proto,
        endpoints,
        svcChain: kubeProxyChain('KUBE-SVC', spn, proto),
        sepChains: endpoints.map((ep) => endpointChain(spn, proto, ep)),
      };
    }),
  );
}

/** The rule lines of a chain, exactly as in the dump. */
function lines(rs: Ruleset, table: string, chain: string): string[] {
  const t = rs.table(table)!;
  const c = t.chain(chain);
  return c ? c.ruleIds.map((id) => t.text(id)) : [];
}
function rules(rs: Ruleset, table: string, chain: string): Rule[] {
  return rs.table(table)!.chain(chain)?.rules ?? [];
}
const comment = (r: Rule) => r.matches.find((m) => m.kind === 'comment')?.comment;
const dport = (r: Rule) => {
  const m = r.matches.find((x) => x.kind === 'ports');
  return m?.kind === 'ports' ? m.dport?.ranges[0]?.from : undefined;
};
const probability = (r: Rule) => {
  const m = r.matches.find((x) => x.kind === 'statistic');
  return m?.kind === 'statistic' ? m.probability : undefined;
};
/** libxt_statistic keeps round(p * 2^31): compare probabilities the way the kernel holds them. */
const quantised = (p: number) => Math.round(p * 2 ** 31);

/** `iptables -t TABLE -S | grep KUBE` on a parsed dump: -N lines, then -A lines, in dump order. */
function grepKube(rs: Ruleset, table: string): string[] {
  const t = rs.table(table)!;
  const chains = t.chains.filter((c) => !c.builtin).map((c) => c.name);
  const all = t.chains.flatMap((c) => c.ruleIds.map((id) => t.text(id)));
  return [...chains.map((c) => `-N ${c}`), ...all].filter((l) => l.includes('KUBE'));
}

const seedLines = (file: string) =>
  readFileSync(join('test/fixtures', file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

// --- the snapshot -------------------------------------------------------------------------------

let facts: Facts;
let view: ClusterView;
let ports: ServicePortRef[];
const dumps = new Map<string, Ruleset>();

before(async () => {
  facts = await readSnapshot(DIR);
  view = clusterView(facts.objects);
  ports = servicePorts(view);
  for (const node of view.nodes) {
    const text = facts.nodes[node.name]?.['iptables-save'];
    assert.ok(text, `${DIR}/nodes/${node.name}/iptables-save.txt is missing`);
    dumps.set(node.name, parseIptables(text, { file: `${node.name}/iptables-save.txt` }));
  }
});

describe('demo snapshot: API objects', () => {
  it('objects.json is a kubectl List whose items carry kind and apiVersion', () => {
    const list = JSON.parse(readFileSync(join(DIR, 'objects.json'), 'utf8')) as {
      kind: string;
      items: { kind?: string; apiVersion?: string }[];
    };
    assert.equal(list.kind, 'List');
    for (const item of list.items) {
      assert.ok(
        item.kind && item.apiVersion,
        `an item without kind/apiVersion: ${JSON.stringify(item).slice(0, 80)}`,
      );
    }
    assert.deepEqual(
      [...new Set(list.items.map((i) => i.kind))],
      ['Service', 'EndpointSlice', 'Endpoints', 'Pod', 'Node', 'ConfigMap', 'DaemonSet'],
    );
  });

  it('meta.json says where and when it was captured', () => {
    const master = view.nodes.find((n) => 'node-role.kubernetes.io/master' in n.labels)!;
    assert.equal(facts.meta.server, `https://${master.ips[0]}:6443`);
    assert.equal(facts.meta.context, 'kubernetes-admin@kubernetes');
    assert.ok(!Number.isNaN(Date.parse(String(facts.meta.capturedAt))));
    assert.ok(facts.meta.kdebugVersion && facts.meta['note']);
  });

  it('holds the seed cluster: two nodes, nginx-svc with its two Pods', () => {
    assert.deepEqual(view.nodes.map((n) => `${n.name} ${n.ips[0]} ${n.podCIDRs[0]}`).sort(), [
      'vm-12-11-centos 10.0.12.11 10.244.1.0/24',
      'vm-12-7-centos 10.0.12.7 10.244.0.0/24',
    ]);
    const svc = view.services.find((s) => s.name === 'nginx-svc')!;
    assert.equal(svc.clusterIP, '10.1.190.219');
    assert.deepEqual(sorted(selectedBackends(view, svc, svc.ports[0]!)), [
      '10.244.0.3:80 node=vm-12-7-centos pod=nginx-55fc968d9-kh24k',
      '10.244.1.7:80 node=vm-12-11-centos pod=nginx-55fc968d9-4pddn',
    ]);
  });

  it('every Pod and node is up: Running, Ready, no restarts', () => {
    for (const p of view.pods) assert.ok(podReady(p), `${p.namespace}/${p.name} is not ready`);
    for (const p of view.pods)
      assert.ok(
        p.containerStatuses.every((c) => c.ready && c.restartCount === 0),
        p.name,
      );
    for (const n of view.nodes) assert.equal(n.ready, true, n.name);
  });

  describe('every selector Service: EndpointSlice endpoints are exactly its ready Pods', () => {
    for (const name of ['default/nginx-svc', 'kube-system/kube-dns']) {
      it(name, () => {
        const svc = view.services.find((s) => `${s.namespace}/${s.name}` === name)!;
        for (const port of svc.ports) {
          const want = sorted(selectedBackends(view, svc, port));
          assert.ok(want.length > 0, `${servicePortName(svc, port)} selects no ready Pod`);
          assert.deepEqual(
            sorted(sliceBackends(view, svc, port)),
            want,
            `${servicePortName(svc, port)} slices`,
          );
          assert.deepEqual(
            sorted(legacyBackends(view, svc, port)),
            want,
            `${servicePortName(svc, port)} Endpoints`,
          );
        }
      });
    }
    it('and no Service is left out', () => {
      const checked = view.services
        .filter((s) => s.selector)
        .map((s) => `${s.namespace}/${s.name}`);
      assert.deepEqual(checked.sort(), ['default/nginx-svc', 'kube-system/kube-dns']);
    });
  });

  it('default/kubernetes (no selector): its slice and Endpoints name the API server on the master', () => {
    const svc = view.services.find((s) => s.namespace === 'default' && s.name === 'kubernetes')!;
    assert.equal(svc.selector, undefined);
    const apiserver = view.pods.find((p) => p.labels['component'] === 'kube-apiserver')!;
    const port = svc.ports[0]!;
    const want = [`${apiserver.hostIP}:${port.targetPort} node=- pod=-`];
    assert.deepEqual(sorted(sliceBackends(view, svc, port)), want);
    assert.deepEqual(sorted(legacyBackends(view, svc, port)), want);
  });

  it('every Pod IP fits its node: Pod CIDR for Pods, the node IP for hostNetwork Pods', () => {
    const podIPs = new Set<string>();
    for (const p of view.pods) {
      const node = view.nodes.find((n) => n.name === p.nodeName);
      assert.ok(node, `${p.name} runs on unknown node ${p.nodeName}`);
      assert.equal(p.hostIP, node.ips[0], `${p.name} hostIP`);
      if (p.hostNetwork) {
        assert.equal(p.podIP, node.ips[0], `${p.name} is hostNetwork`);
        continue;
      }
      const cidr = node.podCIDRs[0]!;
      assert.ok(inCidr(p.podIP!, cidr), `${p.name} ${p.podIP} outside ${node.name}'s ${cidr}`);
      // .0 is flannel.1's address and .1 is cni0's: a Pod never gets them
      assert.ok(
        ipNum(p.podIP!) - split(cidr).net > 1,
        `${p.name} has a reserved address ${p.podIP}`,
      );
      assert.ok(!podIPs.has(p.podIP!), `${p.podIP} is used twice`);
      podIPs.add(p.podIP!);
    }
  });

  it('one network plan everywhere: kube-proxy, kubeadm, flannel, API server and kubelet agree', () => {
    const cfg = kubeProxyConfigOf(view);
    assert.equal(cfg.mode, 'iptables');
    assert.equal(cfg.clusterCIDR, '10.244.0.0/16');
    assert.equal(cfg.masqueradeAll, false);
    const cm = (name: string) =>
      view.configMaps.find((c) => c.namespace === 'kube-system' && c.name === name)!.data;
    const kubeadm = loadYaml(cm('kubeadm-config')['ClusterConfiguration']!) as {
      networking: { podSubnet: string; serviceSubnet: string };
    };
    const flannel = JSON.parse(cm('kube-flannel-cfg')['net-conf.json']!) as {
      Network: string;
      Backend: { Type: string };
    };
    const kubelet = loadYaml(cm('kubelet-config-1.15')['kubelet']!) as { clusterDNS: string[] };
    const arg = (component: string, name: string) => {
      const spec = view.pods.find((p) => p.labels['component'] === component)!.raw['spec'] as {
        containers: { command: string[] }[];
      };
      return spec.containers[0]!.command.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
    };

    assert.equal(kubeadm.networking.podSubnet, cfg.clusterCIDR);
    assert.equal(flannel.Network, cfg.clusterCIDR);
    assert.equal(flannel.Backend.Type, 'vxlan');
    assert.equal(arg('kube-controller-manager', 'cluster-cidr'), cfg.clusterCIDR);
    const serviceCIDR = kubeadm.networking.serviceSubnet;
    assert.equal(arg('kube-apiserver', 'service-cluster-ip-range'), serviceCIDR);
    for (const s of view.services)
      assert.ok(inCidr(s.clusterIP!, serviceCIDR), `${s.name} ${s.clusterIP}`);
    for (const n of view.nodes) assert.ok(cidrInside(n.podCIDRs[0]!, cfg.clusterCIDR), n.name);
    assert.notEqual(view.nodes[0]!.podCIDRs[0], view.nodes[1]!.podCIDRs[0]);
    const kubeDns = view.services.find((s) => s.name === 'kube-dns')!;
    assert.deepEqual(kubelet.clusterDNS, [kubeDns.clusterIP]);
  });

  it('kube-proxy and flannel run one Pod per node', () => {
    for (const ds of ['kube-proxy', 'kube-flannel-ds-amd64']) {
      const nodes = view.pods
        .filter((p) => p.ownerKind === 'DaemonSet' && p.ownerName === ds)
        .map((p) => p.nodeName);
      assert.deepEqual(nodes.sort(), view.nodes.map((n) => n.name).sort(), ds);
    }
  });
});

describe('demo snapshot: node outputs', () => {
  it('every node has its iptables-save, ip-addr and proxy-mode output and the probes svc runs, and no other node does', () => {
    assert.deepEqual(Object.keys(facts.nodes).sort(), view.nodes.map((n) => n.name).sort());
    // the probes were recorded in the lab (see README.md): exactly what kdebug svc nginx-svc runs
    const probes = probePlan(
      facts,
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    ).map(probeStem);
    for (const out of Object.values(facts.nodes)) {
      assert.deepEqual(
        Object.keys(out).sort(),
        ['ip-addr', 'iptables-save', 'proxy-mode', ...probes].sort(),
      );
    }
  });

  it('proxy-mode says what the kube-proxy ConfigMap says', () => {
    for (const out of Object.values(facts.nodes))
      assert.equal(out['proxy-mode'], kubeProxyConfigOf(view).mode);
  });

  it('ip -br addr: eth0 is the node IP, flannel.1 and cni0 sit in the node Pod CIDR, one veth per Pod', () => {
    for (const node of view.nodes) {
      const addr = new Map(
        facts.nodes[node.name]!['ip-addr']!.trimEnd()
          .split('\n')
          .map((l) => l.trim().split(/\s+/))
          .map(([name, state, ...addrs]) => [name!, { state: state!, addrs }]),
      );
      const net = split(node.podCIDRs[0]!).net;
      assert.deepEqual(addr.get('eth0')?.addrs, [`${node.ips[0]}/22`], node.name);
      assert.deepEqual(addr.get('flannel.1')?.addrs, [`${ipStr(net)}/32`], node.name);
      assert.deepEqual(addr.get('cni0')?.addrs, [`${ipStr(net + 1)}/24`], node.name);
      assert.deepEqual(addr.get('docker0')?.addrs, ['172.17.0.1/16'], node.name);
      const veths = [...addr.keys()].filter((n) => n.startsWith('veth'));
      const podsHere = view.pods.filter((p) => p.nodeName === node.name && !p.hostNetwork);
      assert.equal(veths.length, podsHere.length, `${node.name}: veths vs Pods`);
    }
  });
});

describe('demo snapshot: iptables-save of each node', () => {
  it('is a full iptables-save from iptables 1.4.21 with all five tables', () => {
    for (const [node, rs] of dumps) {
      assert.equal(rs.format, 'iptables-save', node);
      assert.match(rs.generator ?? '', /^# Generated by iptables-save v1\.4\.21 on /, node);
      assert.deepEqual(
        rs.tables.map((t) => t.name).sort(),
        ['filter', 'mangle', 'nat', 'raw', 'security'],
        node,
      );
      assert.deepEqual(rs.warnings, [], node);
      for (const t of ['raw', 'mangle', 'security']) {
        assert.equal(
          rs.table(t)!.ruleCount,
          0,
          `${node} ${t} holds no rule (the seed: no KUBE rule there)`,
        );
      }
    }
  });

  // The seed was taken with `iptables -t nat -S | grep KUBE`, other Services filtered out: doing
  // the same to each node's dump gives it back line for line, except the nodeports tail rule that
  // v1.15 always writes and the seed's author left out.
  for (const [table, file] of [
    ['nat', 'seed-nat-S.txt'],
    ['filter', 'seed-filter-S.txt'],
  ] as const) {
    it(`contains the seed's ${table} rules verbatim and in order`, () => {
      const others = ports.filter((p) => p.spn !== SEED);
      const otherChains = new Set(others.flatMap((p) => [p.svcChain, ...p.sepChains]));
      const mentionsOther = (line: string) =>
        [...otherChains].some((c) => line.includes(c)) ||
        others.some((p) => line.includes(`"${p.spn} `));
      for (const [node, rs] of dumps) {
        const got = grepKube(rs, table).filter((l) => !mentionsOther(l) && l !== NODEPORTS_TAIL);
        assert.deepEqual(got, seedLines(file), `${node} ${table}`);
      }
    });
  }

  it('KUBE-SERVICES: two rules per Service port, the nodeports jump last', () => {
    for (const [node, rs] of dumps) {
      const l = lines(rs, 'nat', 'KUBE-SERVICES');
      assert.equal(l.length, 2 * ports.length + 1, node);
      assert.equal(l.at(-1), NODEPORTS_TAIL, node);
      assert.equal(
        rules(rs, 'filter', 'KUBE-SERVICES').length,
        0,
        `${node}: a REJECT means a Service without endpoints`,
      );
      assert.equal(rules(rs, 'filter', 'KUBE-EXTERNAL-SERVICES').length, 0, node);
    }
  });

  describe('each Service port: chain names from the API words, SEP chains DNAT to its endpoints', () => {
    // the ports are known only once the snapshot is read: one case per row of this table
    const rows = [
      ['default/kubernetes:https', 'tcp', 'KUBE-SVC-NPX46M4PTMTKRN6Y'],
      ['default/nginx-svc:http', 'tcp', 'KUBE-SVC-ELCM5PCEQWBTUJ2I'],
      ['kube-system/kube-dns:dns', 'udp', 'KUBE-SVC-TCOU7JCQXEZGVUNU'],
      ['kube-system/kube-dns:dns-tcp', 'tcp', 'KUBE-SVC-ERIFXISQEP7F7OF4'],
      ['kube-system/kube-dns:metrics', 'tcp', 'KUBE-SVC-JD5MR3NA4I4DYORP'],
    ] as const;
    it('the table lists every Service port of the objects', () => {
      assert.deepEqual(
        ports.map((p) => `${p.spn} ${p.proto} ${p.svcChain}`).sort(),
        rows.map((r) => r.join(' ')),
      );
    });
    for (const [spn, proto, svcChain] of rows) {
      it(`${spn} (${proto})`, () => {
        const p = ports.find((x) => x.spn === spn && x.proto === proto)!;
        assert.equal(p.svcChain, svcChain);
        assert.ok(p.endpoints.length > 0);
        const clusterIP = `${p.svc.clusterIP}/32`;
        for (const [node, rs] of dumps) {
          const at = `${node} ${spn}`;
          // KUBE-SERVICES: the masquerade rule for non-Pod sources, right before the jump
          const entry = rules(rs, 'nat', 'KUBE-SERVICES');
          const k = entry.findIndex((r) => r.target?.name === svcChain);
          assert.ok(k > 0, `${at}: no jump to ${svcChain}`);
          for (const r of [entry[k - 1]!, entry[k]!]) {
            assert.equal(r.destination?.cidr, clusterIP, at);
            assert.equal(r.protocol?.name, proto, at);
            assert.equal(dport(r), p.port.port, at);
            assert.equal(comment(r), `${spn} cluster IP`, at);
          }
          assert.deepEqual(
            entry[k - 1]!.source,
            { cidr: kubeProxyConfigOf(view).clusterCIDR, negated: true },
            at,
          );
          assert.equal(entry[k - 1]!.target?.name, 'KUBE-MARK-MASQ', at);
          // KUBE-SVC: one jump per endpoint, probabilities 1/n, 1/(n-1), ..., then unconditional
          const svc = rules(rs, 'nat', svcChain);
          assert.deepEqual(
            svc.map((r) => r.target?.name),
            p.sepChains,
            `${at}: SEP chains`,
          );
          svc.forEach((r, i) => {
            const left = svc.length - i;
            const prob = probability(r);
            if (left === 1) assert.equal(prob, undefined, at);
            else assert.equal(quantised(prob!), quantised(1 / left), `${at} rule ${i + 1}`);
          });
          // KUBE-SEP: hairpin masquerade, then DNAT to the endpoint
          p.sepChains.forEach((sep, i) => {
            const ep = p.endpoints[i]!;
            const [mark, dnat] = rules(rs, 'nat', sep);
            assert.equal(rules(rs, 'nat', sep).length, 2, `${at} ${sep}`);
            assert.equal(mark!.source?.cidr, `${ep.split(':')[0]}/32`, `${at} ${sep}`);
            assert.equal(mark!.target?.name, 'KUBE-MARK-MASQ', `${at} ${sep}`);
            assert.equal(dnat!.protocol?.name, proto, `${at} ${sep}`);
            assert.equal(dnat!.target?.kind, 'dnat', `${at} ${sep}`);
            assert.equal(
              dnat!.target?.kind === 'dnat' ? dnat!.target.to?.text : undefined,
              ep,
              `${at} ${sep}`,
            );
          });
        }
      });
    }
  });

  it('has no KUBE-SVC or KUBE-SEP chain that no Service port accounts for', () => {
    const known = new Set(ports.flatMap((p) => [p.svcChain, ...p.sepChains]));
    for (const [node, rs] of dumps) {
      const service = rs
        .table('nat')!
        .chains.map((c) => c.name)
        .filter((c) => /^KUBE-(SVC|SEP)-/.test(c));
      assert.deepEqual(service.sort(), [...known].sort(), node);
    }
  });

  it('both nodes hold the same Service rules (they only differ in order, Go map order)', () => {
    const [a, b] = [...dumps.values()];
    const serviceLines = (rs: Ruleset) =>
      rs
        .table('nat')!
        .chains.filter((c) => /^KUBE-(SVC|SEP|SERVICES)/.test(c.name))
        .flatMap((c) => lines(rs, 'nat', c.name))
        .sort();
    assert.deepEqual(serviceLines(a!), serviceLines(b!));
  });

  it("flannel's masquerade exemption names each node's own Pod CIDR", () => {
    for (const node of view.nodes) {
      const post = lines(dumps.get(node.name)!, 'nat', 'POSTROUTING');
      for (const other of view.nodes) {
        const rule = `-A POSTROUTING ! -s 10.244.0.0/16 -d ${other.podCIDRs[0]} -j RETURN`;
        assert.equal(post.includes(rule), other === node, `${node.name}: ${rule}`);
      }
    }
  });
});

// Lab-free check with the real binary: restore each dump into a private network namespace and
// save it back. Never touches the host's own rules.
describe('demo snapshot: real iptables-legacy accepts each dump', () => {
  const ci = process.env['CI'] === 'true';
  const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
  const missing =
    process.getuid?.() !== 0
      ? 'needs root (ip netns add)'
      : ['ip', 'iptables-legacy-restore', 'iptables-legacy-save'].find((c) => !have(c));
  const skip =
    missing && !ci
      ? `skipped: ${missing.startsWith('needs') ? missing : `${missing} not installed`}`
      : false;

  /** Per table, the chain lines (counters dropped) and the -A lines. */
  const shape = (dump: string) => {
    const out: Record<string, string[]> = {};
    let table = '';
    for (const line of dump.split('\n')) {
      if (line.startsWith('*')) table = line.slice(1);
      else if (line.startsWith(':')) out[table]!.push(line.replace(/ \[\d+:\d+\]$/, ''));
      else if (line.startsWith('-A')) out[table]!.push(line);
      if (line.startsWith('*')) out[table] = [];
    }
    return out;
  };

  it('restore then save gives back the same chains and rules', { skip }, () => {
    assert.ok(!missing, `CI=true and the round trip cannot run: ${missing}`);
    const ns = `kd-demo-check-${process.pid}`;
    const run = (args: string[], input?: string) => {
      const r = spawnSync('ip', ['netns', 'exec', ns, ...args], { input, encoding: 'utf8' });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    assert.equal(spawnSync('ip', ['netns', 'add', ns]).status, 0, `ip netns add ${ns}`);
    try {
      for (const node of view.nodes) {
        const dump = facts.nodes[node.name]!['iptables-save']!;
        run(['iptables-legacy-restore'], dump);
        const saved = shape(run(['iptables-legacy-save']));
        const want = shape(dump);
        for (const table of Object.keys(want)) {
          assert.deepEqual(saved[table] ?? [], want[table], `${node.name} ${table}`);
        }
      }
    } finally {
      spawnSync('ip', ['netns', 'delete', ns]);
    }
  });
});
