// A ping to a Service address on a Cilium node (snapshots/cilium-stale-backend, Cilium v1.18.6):
// the datapath neither translates nor drops an ICMP echo. Read in Cilium's source (v1.16.19,
// v1.18.6, v1.19.3, v1.20.2): bpf/lib/lb.h's lb4_extract_tuple returns DROP_UNSUPP_SERVICE_PROTO
// for ICMP, which bpf_lxc.c (from a Pod) and bpf/lib/nodeport.h (at the device) take as
// `goto skip_service_lookup`; bpf_sock.c's sock_proto_enabled serves TCP and UDP only. The echo
// goes on to an address nothing owns (cilium#14118); no release up to 1.20 answers it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const SNAP = 'snapshots/cilium-stale-backend';

describe('ping to a Service address where Cilium replaces kube-proxy', () => {
  for (const [from, src] of [
    ['a Pod', '10.244.0.3'],
    ['outside the cluster', '192.0.2.9'],
  ] as const)
    it(`trace from ${from}: routed on unchanged, not dropped, and nothing answers`, () => {
      const args = ['trace', '--snapshot', SNAP, '--node', 'vm-12-7-centos', '--src', src];
      const r = kdebug([...args, '--dst', '10.1.190.219', '--proto', 'icmp', '-o', 'json']);
      const walk = JSON.parse(r.stdout) as {
        outcomes: { verdict: string; destination: string | null; rules: { rule: string }[] }[];
      };
      assert.equal(walk.outcomes.length, 1);
      assert.equal(walk.outcomes[0]!.verdict, 'ACCEPT');
      assert.equal(walk.outcomes[0]!.destination, null);
      assert.match(walk.outcomes[0]!.rules[0]!.rule, /an ICMP echo skips the service lookup/);
      // nothing answers it: the exit code says the traffic asked about fails
      assert.equal(r.code, 1);
      const text = kdebug([...args, '--dst', '10.1.190.219', '--proto', 'icmp']).stdout;
      assert.doesNotMatch(text, /DROPPED|unsupported protocol for a Service/);
      assert.match(
        text.replace(/\s+/g, ' '),
        /No frontend of Cilium's agent took it: Cilium load-balances only tcp port 8080 of 10\.1\.190\.219\. The packet goes on to 10\.1\.190\.219 unchanged/,
      );
    });

  // before: the host's echo was said to skip the lookup at bpf_lxc.c or nodeport.h, paths a
  // packet the host sends never takes (bpf_host.c runs nodeport_lb4 only `if (!from_host)`)
  it('trace from the node itself: no Service lookup on its path, routed on unchanged', () => {
    const args = ['trace', '--snapshot', SNAP, '--node', 'vm-12-7-centos', '--src', '10.0.12.7'];
    const r = kdebug([...args, '--dst', '10.1.190.219', '--proto', 'icmp', '-o', 'json']);
    const walk = JSON.parse(r.stdout) as {
      packet: { from: string; enters: string };
      outcomes: { verdict: string; destination: string | null; rules: { rule: string }[] }[];
    };
    assert.equal(walk.packet.from, 'host');
    assert.match(walk.packet.enters, /the host device on the way out/);
    assert.deepEqual(
      walk.outcomes.map((o) => [o.verdict, o.destination]),
      [['ACCEPT', null]],
    );
    const rule = walk.outcomes[0]!.rules[0]!.rule;
    assert.match(
      rule,
      /an ICMP echo from the node itself meets no Service lookup \(the host's socket hook translates TCP and UDP only \(bpf_sock\.c sock_proto_enabled\), and bpf_host\.c looks up no Service for a packet the host sends/,
    );
    assert.doesNotMatch(rule, /bpf_lxc|nodeport\.h/);
  });

  it("svc's ping explanation says what the datapath does, per release", () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', SNAP, '--verbose']);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(
      text,
      /ping 10\.1\.190\.219: Cilium does not load-balance ICMP, and nothing owns a Service address/,
    );
    assert.match(
      text,
      /Cilium neither translates nor drops it\. The echo is routed on toward 10\.1\.190\.219, which nothing answers/,
    );
    assert.match(text, /No Cilium release up to 1\.20 answers an echo to a Service address/);
    // kdebug's pings run on the node: the host's path is said
    assert.match(text, /and an ICMP echo from the node itself meets no Service lookup/);
    assert.doesNotMatch(text, /Cilium drops ICMP/);
  });
});
