// A Service port's packets dropped or rejected on the node where kube-proxy's rules would deliver
// them are an error, whichever rule does it (a mark kubelet's KUBE-FIREWALL drops, a drop in an
// entry chain, a REJECT), on a release kdebug does not model (the demo's real v1.15 dump) and on
// one it does (the lab's real v1.37.2 dump); the words name what the walk met, by FILE:LINE, and
// never call a mark that is not kube-proxy's masquerade mark "masquerade" (issue 38).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { allModes } from '../support/modes.js';

interface Fault {
  name: string;
  /** The dump with the fault made; the rule the walk must name, as the dump holds it. */
  edit: (dump: string) => { dump: string; names: string };
}

/** `rule` put before the line that starts with `before`. */
const insert = (dump: string, before: string, rule: string) => {
  const at = dump.indexOf(`\n${before}`);
  assert.ok(at >= 0, `no line ${before}`);
  return `${dump.slice(0, at + 1)}${rule}\n${dump.slice(at + 1)}`;
};

/** KUBE-MARK-MASQ sets kubelet's drop bit 0x8000 in place of 0x4000: KUBE-FIREWALL drops it. */
const markChanged = (dump: string) => {
  const rule = '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000';
  assert.ok(dump.includes(rule));
  return dump.replace(rule, '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x8000/0x8000');
};

// kubelet up to 1.27 wrote this rule; it outlives kubelet upgrades until the node reboots
const KUBELET_DROP =
  '-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP';

const releases: {
  release: string;
  dir: string;
  node: string;
  port: string;
  faults: Fault[];
}[] = [
  {
    release: 'v1.15 (not modelled)',
    dir: 'snapshots/nginx-svc',
    node: 'vm-12-7-centos',
    port: 'default/nginx-svc:http',
    faults: [
      {
        name: 'KUBE-MARK-MASQ sets 0x8000',
        edit: (d) => ({ dump: markChanged(d), names: KUBELET_DROP }),
      },
      {
        // kube-proxy v1.15's own way to drop in nat: a jump to kubelet's KUBE-MARK-DROP
        name: 'a jump to KUBE-MARK-DROP in nat KUBE-SERVICES',
        edit: (d) => ({
          dump: insert(
            d,
            '-A KUBE-SERVICES -d 10.1.190.219/32',
            '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m tcp --dport 8080 -j KUBE-MARK-DROP',
          ),
          names: KUBELET_DROP,
        }),
      },
      {
        // filter sees the packet after its DNAT: a REJECT of an endpoint's address
        name: 'a REJECT of an endpoint in filter KUBE-SERVICES',
        edit: (d) => {
          const rule =
            '-A KUBE-SERVICES -d 10.244.0.3/32 -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable';
          return { dump: insert(d, '-A INPUT -m conntrack --ctstate NEW', rule), names: rule };
        },
      },
    ],
  },
  {
    release: 'v1.37.2 (modelled)',
    dir: 'test/fixtures/releases/37/iptables',
    node: 'node-a',
    port: 'matrix/cluster-ip:http',
    faults: [
      {
        name: "KUBE-MARK-MASQ sets 0x8000, kubelet's old KUBE-FIREWALL rule still there",
        edit: (d) => ({
          dump: insert(markChanged(d), '-A KUBE-FORWARD ', KUBELET_DROP),
          names: KUBELET_DROP,
        }),
      },
      {
        name: 'a DROP of an endpoint in filter KUBE-PROXY-FIREWALL',
        edit: (d) => {
          const rule = '-A KUBE-PROXY-FIREWALL -d 10.244.2.2/32 -p tcp -m tcp --dport 80 -j DROP';
          return { dump: insert(d, '-A KUBE-PROXY-FIREWALL ', rule), names: rule };
        },
      },
      {
        name: 'a REJECT of an endpoint in filter KUBE-SERVICES',
        edit: (d) => {
          const rule =
            '-A KUBE-SERVICES -d 10.244.2.2/32 -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable';
          return { dump: insert(d, '-A KUBE-SERVICES ', rule), names: rule };
        },
      },
    ],
  },
];

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const r of releases)
  describe(`drift on kube-proxy ${r.release}'s real dump: a Service port's traffic refused is an error`, async () => {
    const facts = await readSnapshot(r.dir);
    const dump = facts.nodes[r.node]!['iptables-save']!;
    const drift = (text: string) => {
      const fx = structuredClone(facts);
      fx.nodes[r.node]!['iptables-save'] = text;
      return new Analysis(fx, { code: allModes }).node(r.node).drift();
    };

    it('the dump as recorded: no error', () => {
      const d = drift(dump);
      assert.deepEqual(
        d.findings.filter((f) => severityOf(f) === 'error').map((f) => f.id),
        [],
      );
    });

    for (const fault of r.faults)
      it(`${fault.name}: service-traffic-diverted on ${r.port}, naming the rule and its line`, () => {
        const { dump: text, names } = fault.edit(dump);
        const d = drift(text);
        const said = d.findings.map((f) => `${severityOf(f)} ${f.id} ${f.service ?? ''}`);
        const f = d.findings.find((x) => x.service === r.port && severityOf(x) === 'error');
        assert.ok(f, said.join('\n'));
        assert.equal(f.id, 'service-traffic-diverted', said.join('\n'));
        // the rule that refused it, where the dump holds it
        const line = text.split('\n').indexOf(names) + 1;
        assert.ok(line > 0);
        assert.match(f.explanation, new RegExp(`iptables-save\\.txt:${line}: ${esc(names)}`));
        assert.match(f.explanation, /never reaches the endpoints/);
        // no walk a rule refused is said to be masqueraded
        for (const x of d.findings)
          assert.doesNotMatch(
            [x.explanation, ...x.drift.actual].join('\n'),
            /(DROP|REJECT) masquerade/,
          );
      });
  });

describe('drift on a mark that is not kube-proxy masquerade mark', () => {
  it("says the mark and the rule that set it, and kube-proxy's own mark", async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const node = 'vm-12-7-centos';
    const fx = structuredClone(facts);
    const text = markChanged(fx.nodes[node]!['iptables-save']!);
    fx.nodes[node]!['iptables-save'] = text;
    const d = new Analysis(fx, { code: allModes }).node(node).drift();
    const f = d.findings.find((x) => x.service === 'default/nginx-svc:http')!;
    const set = '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x8000/0x8000';
    const line = text.split('\n').indexOf(set) + 1;
    assert.match(
      f.explanation,
      new RegExp(
        `carrying mark 0x8000 \\(kube-proxy masquerades 0x4000\\), set by \\S+iptables-save\\.txt:${line}: ${esc(set)}`,
      ),
    );
    // packets from outside still reach the endpoints, not masqueraded: said as such
    assert.ok(
      f.drift.actual.some((l) =>
        /^tcp from 198\.51\.100\.77 .*: 50% -> 10\.244\.0\.3:80, /.test(l),
      ),
      f.drift.actual.join('\n'),
    );
  });
});
