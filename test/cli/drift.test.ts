// The built `kdebug expect`, `kdebug drift` and `kdebug trace` on the snapshots: exit codes,
// the JSON contracts, and the whole drift output against the goldens in test/golden/drift/
// (KDEBUG_UPDATE_GOLDEN=1 rewrites them; read every diff before keeping it).
//
// IP conventions (the demo cluster): nodes vm-12-7-centos 10.0.12.7, vm-12-11-centos 10.0.12.11;
// Pod CIDR 10.244.0.0/16; nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80, 10.244.1.7:80.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { golden as check } from '../support/golden.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';

const GOLDEN = 'test/golden/drift';
const golden = (file: string, actual: string) => check(join(GOLDEN, file), actual);

describe('kdebug drift', () => {
  const scenarios: [string, number, string[]][] = [
    // snapshot, exit code, finding ids that count
    ['nginx-svc', 0, []],
    ['stale-endpoint', 1, ['endpoint-stale', 'endpoint-missing']],
    ['missing-service-rules', 1, ['service-rules-missing']],
    ['nodeport-local-no-endpoint', 0, []],
    ['orphan-chains', 1, ['orphan-chain']],
    // IPVS mode: the virtual servers, ipsets and kube-ipvs0 compared
    ['ipvs-stale-real-server', 1, ['endpoint-stale', 'endpoint-missing', 'ipset-entry-missing']],
    // Cilium replacing kube-proxy: its agent's table and BPF maps compared
    ['cilium-stale-backend', 1, ['cilium-backend-stale', 'cilium-backend-missing']],
  ];
  for (const [dir, code, ids] of scenarios) {
    it(`${dir}: exit ${code}, ${ids.length ? ids.join(', ') : 'no drift'}, text and JSON as the goldens`, () => {
      const text = kdebug(['drift', '--snapshot', `snapshots/${dir}`, '--all-nodes', '-o', 'text']);
      assert.equal(text.code, code, text.stderr);
      golden(`${dir}.txt`, text.stdout);
      const json = kdebug(['drift', '--snapshot', `snapshots/${dir}`, '--all-nodes', '-o', 'json']);
      assert.equal(json.code, code, json.stderr);
      golden(`${dir}.json`, json.stdout);
      const doc = JSON.parse(json.stdout);
      assert.equal(doc.schemaVersion, 1);
      assert.deepEqual(
        doc.findings
          .filter((f: { severity: string }) => f.severity !== 'info')
          .map((f: { id: string }) => f.id),
        ids,
      );
      for (const f of doc.findings) {
        assert.deepEqual(Object.keys(f), [
          'id',
          'severity',
          'node',
          'service',
          'title',
          'message',
          'expected',
          'actual',
          'next',
          'advice',
          'family',
        ]);
        assert.ok(['error', 'warning', 'info'].includes(f.severity));
        assert.equal(f.family, 'IPv4');
      }
      assert.equal(doc.summary.drift, code === 1);
    });
  }

  it('--all-nodes: a node whose dump is cut or absent is listed as not compared, the others compared; exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-drift-'));
    try {
      cpSync('snapshots/nginx-svc', dir, { recursive: true });
      const dump = join(dir, 'nodes/vm-12-7-centos/iptables-save.txt');
      writeFileSync(dump, readFileSync(dump, 'utf8').split('\n').slice(0, 92).join('\n') + '\n');
      const cut = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
      assert.equal(cut.code, 2, cut.stderr);
      const doc = JSON.parse(cut.stdout);
      assert.deepEqual(
        doc.nodes.map((n: { node: string }) => n.node),
        ['vm-12-11-centos'],
      );
      assert.deepEqual(
        doc.notCompared.map((n: { node: string }) => n.node),
        ['vm-12-7-centos'],
      );
      assert.match(doc.notCompared[0].why, /iptables-save\.txt:92: .*cut short/);
      const text = kdebug(['drift', '--snapshot', dir, '--all-nodes']);
      assert.match(text.stdout, /^1 node not compared: vm-12-7-centos$/m);
      assert.match(text.stdout, /^1 node: .*; 1 node not compared$/m);
      // the node's dump gone: said as not compared, not left out
      rmSync(dump);
      const gone = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
      assert.equal(gone.code, 2, gone.stderr);
      assert.deepEqual(JSON.parse(gone.stdout).notCompared, [
        { node: 'vm-12-7-centos', family: null, why: 'no rules recorded for it' },
      ]);
      // no --node, one node recorded: that node compared, the other said not compared, exit 2
      const alone = kdebug(['drift', '--snapshot', dir, '-o', 'text']);
      assert.equal(alone.code, 2, alone.stderr);
      assert.match(alone.stdout, /^node vm-12-11-centos /m);
      assert.match(alone.stdout, /^1 node not compared: vm-12-7-centos$/m);
      assert.match(alone.stdout, /^ {2}no rules recorded for it$/m);
      assert.match(alone.stdout, /^1 node: .*; 1 node not compared$/m);
      // --node names the node: the others are not asked about
      const one = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-11-centos', '-o', 'text']);
      assert.equal(one.code, 0, one.stderr);
      assert.doesNotMatch(one.stdout, /not compared/);
      // no node compared at all: one error, exit 2
      rmSync(join(dir, 'nodes/vm-12-11-centos/iptables-save.txt'));
      const none = kdebug(['drift', '--snapshot', dir, '--all-nodes']);
      assert.equal(none.code, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks one node with --node', () => {
    const r = kdebug([
      'drift',
      '--snapshot',
      'snapshots/stale-endpoint',
      '--node',
      'vm-12-7-centos',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      JSON.parse(r.stdout).nodes.map((n: { node: string }) => n.node),
      ['vm-12-7-centos'],
    );
  });

  const failures: [string, string[], RegExp][] = [
    [
      'no snapshot and no kubeconfig',
      ['drift'],
      /^kdebug: no kubeconfig: .*\.kube\/config does not exist/,
    ],

    [
      'two nodes and no --node',
      ['drift', '--snapshot', 'snapshots/nginx-svc'],
      /pick a node with --node, or --all-nodes \(recorded: vm-12-11-centos, vm-12-7-centos\)/,
    ],
    [
      '--node and --all-nodes',
      ['drift', '--snapshot', 'snapshots/nginx-svc', '--node', 'vm-12-7-centos', '--all-nodes'],
      /give --node or --all-nodes, not both/,
    ],
    [
      'an unknown node',
      ['drift', '--snapshot', 'snapshots/nginx-svc', '--node', 'vm-1'],
      /no rules recorded for node "vm-1"/,
    ],
  ];
  for (const [what, args, message] of failures) {
    it(`exits 2 with a one-line reason for ${what}`, () => {
      const r = kdebug(args);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  }
});

describe('kdebug drift in nftables mode', () => {
  // a snapshot of node-a's lab table (support/nft-lab.ts) and matrix/cluster-ip with `endpoints`;
  // `text`: the table recorded as nft lists it (a node whose nft has no JSON)
  const snapshot = (endpoints: string[], text = false) => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-nft-drift-'));
    cpSync(
      `${NODE_A_TABLE}.${text ? 'txt' : 'json'}`,
      join(dir, `nodes/node-a/nft-ip-kube-proxy${text ? '-text' : ''}.txt`),
    );
    writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
    writeFileSync(
      join(dir, 'objects.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: clusterIpObjects(endpoints) }),
    );
    return dir;
  };

  it('kdebug expect prints the nft -f script of the table kube-proxy writes there', () => {
    const dir = snapshot(['10.244.1.4', '10.244.2.2']);
    try {
      // a wide terminal: the header comment on one line (widths.test.ts wraps it)
      const r = kdebug(['expect', '--snapshot', dir, '--node', 'node-a'], {
        env: { COLUMNS: '200' },
      });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n');
      assert.match(
        lines[0]!,
        /^# kdebug expect: the table ip kube-proxy .* nftables mode.* node-a$/,
      );
      // the chain name is the one the real kube-proxy gave it in the fixture
      const chain = 'service-FN4G4LLS-matrix/cluster-ip/tcp/http';
      assert.ok(lines.includes(`add chain ip kube-proxy ${chain}`));
      assert.ok(
        lines.includes(
          `add element ip kube-proxy service-ips { 10.96.33.216 . tcp . 80 : goto ${chain} }`,
        ),
      );
      assert.ok(
        lines.includes(
          `add rule ip kube-proxy ${chain} meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.244.1.4 . 80 , 1 : 10.244.2.2 . 80 }`,
        ),
      );
      assert.ok(lines.includes('add element ip kube-proxy nodeport-ips { 192.0.2.21 }'));
      // no ServiceCIDR in the snapshot: said, and its drop left out
      assert.ok(lines.some((l) => /^# note: no ServiceCIDR of this family was read/.test(l)));
      const table = kdebug(['expect', '--snapshot', dir, '--node', 'node-a', '--table', 'nat']);
      assert.equal(table.code, 2);
      assert.match(table.stderr, /nftables mode, where its rules are one table/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kdebug trace walks a packet through the table: its numgen shares; a ping rejected (exit 1)', () => {
    const dir = snapshot(['10.244.1.4', '10.244.2.2']);
    try {
      const args = ['trace', '--snapshot', dir, '--node', 'node-a', '--src', '10.244.1.9'];
      const r = kdebug([...args, '--dst', '10.96.33.216:80', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout) as {
        packet: { enters: string };
        outcomes: {
          probability: number;
          destination: string;
          rules: { table: string; chain: string }[];
        }[];
      };
      assert.equal(doc.packet.enters, 'the prerouting hook');
      assert.deepEqual(doc.outcomes.map((o) => `${o.probability} ${o.destination}`).sort(), [
        '0.5 10.244.1.4:80',
        '0.5 10.244.2.2:80',
      ]);
      assert.ok(
        doc.outcomes[0]!.rules.some(
          (x) =>
            x.table === 'ip kube-proxy' &&
            x.chain === 'service-FN4G4LLS-matrix/cluster-ip/tcp/http',
        ),
      );
      const ping = kdebug([...args, '--dst', '10.96.33.216', '--proto', 'icmp']);
      assert.equal(ping.code, 1, ping.stderr);
      assert.match(ping.stdout, /REJECT/);
      assert.match(ping.stdout, /cluster-ips-check/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compares the table with what kube-proxy should write: none stale, exit 0; a gone endpoint, exit 1', () => {
    const cases: { endpoints: string[]; code: number; ids: string[]; text?: boolean }[] = [
      { endpoints: ['10.244.1.4', '10.244.2.2'], code: 0, ids: [] },
      { endpoints: ['10.244.1.4', '10.244.2.2'], code: 0, ids: [], text: true },
      { endpoints: ['10.244.1.4'], code: 1, ids: ['endpoint-stale'], text: true },
      { endpoints: ['10.244.1.4'], code: 1, ids: ['endpoint-stale'] },
      { endpoints: ['10.244.1.4', '10.244.2.2', '10.244.1.9'], code: 1, ids: ['endpoint-missing'] },
    ];
    for (const c of cases) {
      const dir = snapshot(c.endpoints, c.text);
      try {
        const r = kdebug(['drift', '--snapshot', dir, '--node', 'node-a', '-o', 'json']);
        assert.equal(r.code, c.code, r.stderr);
        const doc = JSON.parse(r.stdout) as { findings: { id: string }[]; notes: { id: string }[] };
        assert.deepEqual(
          doc.findings.map((f) => f.id),
          c.ids,
          c.endpoints.join(','),
        );
        // the whole table is compared now: nothing left to say it was not
        assert.deepEqual(
          (doc.notes ?? []).map((n) => n.id),
          [],
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe('kdebug expect', () => {
  it('prints the rules as iptables-save text, loadable as is', () => {
    const r = kdebug(['expect', '--snapshot', 'snapshots/nginx-svc', '--node', 'vm-12-7-centos'], {
      env: { COLUMNS: '200' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      // the node runs kube-proxy v1.15 (its Pod's image, named): the oldest modelled release, said so
      /^# kdebug expect: the rules kube-proxy v1\.30 writes in iptables mode on node vm-12-7-centos\n# note: kube-proxy v1\.15\.2 read on vm-12-7-centos, from the image registry\.aliyuncs\.com\/google_containers\/kube-proxy:v1\.15\.2 of Pod kube-proxy-8vbqn\n# note: kube-proxy v1\.15 is not a modelled release \(kdebug models 1\.30-1\.37\): written as v1\.30 writes it\n\*filter\n/,
    );
    assert.match(
      r.stdout,
      /^-A KUBE-SERVICES -d 10\.1\.190\.219\/32 -p tcp -m comment --comment "default\/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-ELCM5PCEQWBTUJ2I$/m,
    );
    // the node's recorded rules tell its iptables has no --random-fully (CentOS 7's 1.4.21)
    assert.match(
      r.stdout,
      /^-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE$/m,
    );
    assert.equal(r.stdout.match(/^COMMIT$/gm)?.length, 2);
  });

  it('prints one table with --table, and takes the knobs kube-proxy reads from the node', () => {
    const r = kdebug([
      'expect',
      '--snapshot',
      'snapshots/nginx-svc',
      '--node',
      'vm-12-7-centos',
      '--table',
      'nat',
      '--no-random-fully',
      '--nfacct',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\*filter/);
    assert.match(r.stdout, /-j MASQUERADE\n/);
  });

  it('takes the nfacct counters from what the node recorded: its rules, else its /metrics; a flag wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-expect-'));
    cpSync('snapshots/nodeport-local-no-endpoint', dir, { recursive: true });
    const counter =
      /^-A KUBE-NODEPORTS -d 127\.0\.0\.0\/8 .*--nfacct-name {2}localhost_nps_accepted_pkts -j KUBE-EXT-/m;
    const expect = (node: string, ...flags: string[]) =>
      kdebug(['expect', '--snapshot', dir, '--node', node, '--table', 'nat', ...flags]);
    // the recorded rules have no counter: none expected, and nothing assumed
    const fromRules = expect('vm-12-7-centos');
    assert.equal(fromRules.code, 0, fromRules.stderr);
    assert.doesNotMatch(fromRules.stdout, counter);
    assert.match(expect('vm-12-7-centos', '--nfacct').stdout, counter);
    // without the rules, kube-proxy's /metrics reporting the counter tells it exists
    rmSync(join(dir, 'nodes/vm-12-11-centos/iptables-save.txt'));
    writeFileSync(
      join(dir, 'nodes/vm-12-11-centos/proxy-metrics.txt'),
      'kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e9\nkubeproxy_iptables_localhost_nodeports_accepted_packets_total 3\n',
    );
    assert.match(expect('vm-12-11-centos').stdout, counter);
    assert.doesNotMatch(expect('vm-12-11-centos', '--no-nfacct').stdout, counter);
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints what a Cilium node's agent should hold, as the agent lists it, as the golden", () => {
    // the agent on vm-12-11-centos still holds the deleted Pod 10.244.1.7; the objects say 10.244.1.8
    const node = 'vm-12-11-centos';
    const r = kdebug(['expect', '--snapshot', 'snapshots/cilium-stale-backend', '--node', node], {
      env: { COLUMNS: '80' },
    });
    assert.equal(r.code, 0, r.stderr);
    check('test/golden/expect/cilium-stale-backend.txt', r.stdout);
    assert.match(r.stdout, /^10\.1\.190\.219:8080\/TCP \(2\) +10\.244\.1\.8:80\/TCP \(5\) \(2\)$/m);
    assert.doesNotMatch(r.stdout, /10\.244\.1\.7/);
    assert.match(
      r.stdout,
      /NodePorts on 10\.0\.12\.11 of eth0 \(direct routing\), from\n# the status of agent kube-system\/cilium-lk8wz/,
    );
  });

  it("-o json on a Cilium node: the agent's settings typed, each with its source", () => {
    const r = kdebug([
      'expect',
      '--snapshot',
      'snapshots/cilium-stale-backend',
      '--node',
      'vm-12-11-centos',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      mode: string;
      settings: { setting: string; value: unknown; source: { from: string }; assumed: boolean }[];
    };
    assert.equal(doc.mode, 'cilium');
    const by = new Map(doc.settings.map((s) => [s.setting, s]));
    // the status's Mode line, not cilium-config's bpf-lb-mode (both say snat)
    assert.deepEqual(by.get('bpf-lb-mode'), {
      setting: 'bpf-lb-mode',
      value: 'snat',
      source: { from: 'status', field: 'Mode' },
      assumed: false,
    });
    assert.deepEqual(by.get('bpf-lb-external-clusterip'), {
      setting: 'bpf-lb-external-clusterip',
      value: false,
      source: { from: 'not read', assumed: "Cilium's default: off" },
      assumed: true,
    });
  });

  it('exits 2 for a node the snapshot does not know', () => {
    const r = kdebug(['expect', '--snapshot', 'snapshots/nginx-svc', '--node', 'vm-1']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no node "vm-1" \(nodes: vm-12-11-centos, vm-12-7-centos\)/);
  });
});

/** `kdebug trace` on the demo snapshot's node vm-12-7-centos. */
const traceDemo = (args: string[]) =>
  kdebug(['trace', '--snapshot', 'snapshots/nginx-svc', '--node', 'vm-12-7-centos', ...args]);

describe('kdebug trace', () => {
  it('prints every outcome as JSON with the documented fields', () => {
    const r = traceDemo(['--src', '10.244.0.3', '--dst', '10.1.190.219:8080', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.schemaVersion, 2);
    assert.deepEqual(doc.packet, {
      src: '10.244.0.3',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      from: 'network',
      enters: 'nat PREROUTING',
    });
    assert.deepEqual(
      doc.outcomes.map((o: { probability: number; destination: string; masquerade: boolean }) => [
        o.probability,
        o.destination,
        o.masquerade,
      ]),
      [
        [0.5, '10.244.0.3:80', true],
        [0.5, '10.244.1.7:80', false],
      ],
    );
    const rule = doc.outcomes[0].rules[0];
    assert.deepEqual(Object.keys(rule), ['table', 'chain', 'line', 'rule', 'effect', 'into']);
    assert.equal(rule.into, 'KUBE-SERVICES');
    assert.deepEqual([rule.table, rule.chain], ['nat', 'PREROUTING']);
  });

  it('says Cilium translates a frontend to a backend, not that a rule DNATs it', () => {
    const r = kdebug([
      'trace',
      '--snapshot',
      'snapshots/cilium-stale-backend',
      '--node',
      'vm-12-11-centos',
      '--src',
      '10.244.0.3',
      '--dst',
      '10.1.190.219:8080',
    ]);
    assert.match(r.stdout, /50% {2}translated to 10\.244\.0\.3:80/);
    assert.doesNotMatch(r.stdout, /DNAT/);
  });

  it('explains why ping to a ClusterIP gets no answer', () => {
    const r = traceDemo(['--src', '10.244.0.2', '--dst', '10.1.190.219', '--proto', 'icmp']);
    // nothing answers the ping: exit 1, as nftables mode's REJECT of it
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /10\.1\.190\.219 is the ClusterIP of Service default\/nginx-svc \(tcp port 8080\)/,
    );
    assert.match(
      r.stdout,
      /No Service rule matched: the rules for 10\.1\.190\.219 only match tcp port 8080\./,
    );
    const json = JSON.parse(
      traceDemo(['--src', '10.244.0.2', '--dst', '10.1.190.219', '--proto', 'icmp', '-o', 'json'])
        .stdout,
    );
    assert.equal(json.outcomes[0].destination, null);
  });

  it('defaults the source to the node IP with --from-host', () => {
    const r = traceDemo(['--from-host', '--dst', '10.1.190.219:8080', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.deepEqual([doc.packet.src, doc.packet.from], ['10.0.12.7', 'host']);
    assert.ok(doc.outcomes.every((o: { masquerade: boolean }) => o.masquerade));
  });

  it('says the node sends what a process on it sends, never "forwarded"', () => {
    const r = traceDemo(['--from-host', '--dst', '10.1.190.219:8080']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /DNAT to 10\.244\.0\.3:80, sent out by the node, masqueraded/);
    assert.doesNotMatch(r.stdout, /forwarded/);
  });

  it('exits 1 when the traffic asked about is rejected (a Service without endpoints)', () => {
    const r = kdebug([
      'trace',
      ...['--snapshot', 'snapshots/selector-typo', '--node', 'vm-12-7-centos'],
      ...['--from-host', '--dst', '10.1.190.219:8080'],
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /100% {2}REJECTED/);
  });

  it('exits 1 when the packet is dropped (a node port under Local policy on a node without its endpoints)', () => {
    const r = kdebug([
      'trace',
      ...['--snapshot', 'snapshots/nodeport-local-no-endpoint', '--node', 'vm-12-11-centos'],
      ...['--src', '203.0.113.9', '--dst', '10.0.12.11:30080'],
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /100% {2}DROPPED/);
  });

  it("a Service port kube-proxy did not write: exit 1, and its next command runs as printed, on the run's snapshot", () => {
    const r = kdebug(
      [
        'trace',
        ...['--snapshot', 'snapshots/missing-service-rules', '--node', 'vm-12-11-centos'],
        ...['--from-host', '--dst', '10.1.190.219:8080'],
      ],
      { env: { COLUMNS: '200' } },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /kube-proxy has not written this Service on node vm-12-11-centos/);
    // the command is a line of its own, not prose: with the snapshot the run read
    assert.match(
      r.stdout,
      /^ {2}next: kdebug drift --node vm-12-11-centos --snapshot snapshots\/missing-service-rules$/m,
    );
    assert.doesNotMatch(r.stdout, /\(kdebug /);
  });

  it('notes a DNAT to an address that no Pod has any more', () => {
    const args = ['--node', 'vm-12-11-centos', '--from-host', '--dst', '10.1.190.219:8080'];
    const r = kdebug(['trace', '--snapshot', 'snapshots/stale-endpoint', ...args, '-o', 'json']);
    // half the new connections go to a Pod that is gone: the traffic fails, exit 1
    assert.equal(r.code, 1, r.stderr);
    const gone = JSON.parse(r.stdout).outcomes.map(
      (o: { destination: string; noPodHasTarget?: boolean }) => [o.destination, !!o.noPodHasTarget],
    );
    assert.deepEqual(gone, [
      ['10.244.0.3:80', false],
      ['10.244.1.7:80', true],
    ]);
  });

  it('walks a dump cut short as far as it was read, says where it stopped, and no verdict past it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-trace-cut-'));
    try {
      cpSync('snapshots/stale-endpoint', dir, { recursive: true });
      const file = join(dir, 'nodes/vm-12-11-centos/iptables-save.txt');
      const whole = readFileSync(
        'snapshots/stale-endpoint/nodes/vm-12-11-centos/iptables-save.txt',
        'utf8',
      );
      writeFileSync(file, whole.split('\n').slice(0, 132).join('\n') + '\n');
      const args = ['trace', '--snapshot', dir, '--node', 'vm-12-11-centos'];
      const packet = ['--src', '10.244.0.3', '--dst', '10.1.190.219:8080'];
      const r = kdebug([...args, ...packet]);
      // nothing read fails, and the rest was not read: a partial answer
      assert.equal(r.code, 2, r.stderr);
      assert.doesNotMatch(r.stdout, /kube-proxy has not written/);
      assert.doesNotMatch(r.stdout, /next: kdebug drift/);
      assert.match(r.stdout, /the\s+rules were not\s+wholly\s+read\s+\(\S+iptables-save\.txt:132:/);
      // the half the rules read DNATed is said apart from the half they left unchanged
      assert.match(
        r.stdout,
        /50% are DNATed to\s+10\.244\.0\.3:80; for the other 50% no rule read/,
      );
      // the half that fell through the cut chain: its fate is not known, nothing "routed unchanged"
      assert.match(r.stdout, /not known:[^]*fell\s+through\s+KUBE-SVC-ELCM5PCEQWBTUJ2I,\s+which/);
      assert.doesNotMatch(r.stdout, /routed unchanged/);
      const doc = JSON.parse(kdebug([...args, ...packet, '-o', 'json']).stdout);
      assert.deepEqual(doc.readStopped, {
        file,
        line: 132,
        reason:
          'the dump looks cut short after line 132: table nat has no COMMIT; read up to there',
      });
      assert.deepEqual(doc.outcomes[1].partlyRead, ['KUBE-SVC-ELCM5PCEQWBTUJ2I']);
      assert.equal(doc.outcomes[1].fateKnown, false);
      // its fate is not known: no verdict, delivery or masquerade stated (r138)
      assert.equal(doc.outcomes[1].verdict, null);
      assert.equal(doc.outcomes[1].delivery, null);
      assert.equal(doc.outcomes[1].masquerade, null);
      assert.equal(doc.outcomes[0].verdict, 'ACCEPT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const failures: [string, string[], RegExp][] = [
    [
      'a destination without a port',
      ['--dst', '10.1.190.219'],
      /--dst needs a port for tcp: IP:PORT/,
    ],
    [
      'a destination that is not an IP address',
      ['--dst', 'nginx-svc:8080'],
      /give the destination as --dst IP:PORT \(\[IPv6\]:PORT for IPv6\)/,
    ],
    ['no source', ['--dst', '10.1.190.219:8080'], /give the source: --src IP/],
    [
      'a port above 65535',
      ['--dst', '10.1.190.219:99999', '--src', '10.244.0.2'],
      /^kdebug: --dst 10\.1\.190\.219:99999: port 99999 is not a port \(1-65535\)$/m,
    ],
    [
      'port 0 of an IPv6 address',
      ['--dst', '[fd00::1]:0', '--src', 'fd00::2'],
      /^kdebug: --dst \[fd00::1\]:0: port 0 is not a port \(1-65535\)$/m,
    ],
    [
      'a port with icmp',
      ['--proto', 'icmp', '--dst', '10.1.190.219:8080'],
      /--dst 10\.1\.190\.219:8080: icmp has no ports \(ping reaches the address alone\): give --dst 10\.1\.190\.219$/m,
    ],
    [
      'a bad protocol',
      ['--dst', '10.1.190.219:8080', '--src', '10.244.0.2', '--proto', 'gre'],
      /argument 'gre' is invalid/,
    ],
  ];
  for (const [what, args, message] of failures) {
    it(`exits 2 for ${what}`, () => {
      const r = traceDemo([...args]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, message);
    });
  }
});

describe('kdebug expect, drift and trace in both families (the dual-stack scenario)', () => {
  const S = ['--snapshot', 'snapshots/dual-stack-ipv6-rules-missing'];
  it('expect --family both prints each rule set, headed by the restore that loads it', () => {
    const r = kdebug(['expect', ...S, '--node', 'vm-12-7-centos', '--family', 'both']);
    assert.equal(r.code, 0, r.stderr);
    const [v4, v6] = r.stdout.split(/^# IPv6: ip6tables-restore loads this part$/m);
    assert.match(v4!, /^# IPv4: iptables-restore loads this part$/m);
    assert.match(v4!, /-d 10\.1\.190\.219\/32 -p tcp/);
    assert.match(v6!, /-d fd00:10:96::be\/128 -p tcp/);
    assert.doesNotMatch(v6!, /10\.1\.190\.219/);
  });

  it('drift compares each family with its own dump and names it: IPv6 drifts on one node only', () => {
    const r = kdebug(['drift', ...S, '--all-nodes', '-o', 'json']);
    assert.equal(r.code, 1, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.deepEqual(
      doc.nodes.map(
        (n: { node: string; family: string; drift: boolean }) => `${n.node} ${n.family} ${n.drift}`,
      ),
      [
        'vm-12-11-centos IPv4 false',
        'vm-12-11-centos IPv6 true',
        'vm-12-7-centos IPv4 false',
        'vm-12-7-centos IPv6 false',
      ],
    );
    const ids = doc.findings
      .filter((f: { severity: string }) => f.severity !== 'info')
      .map((f: { id: string; family: string; node: string }) => `${f.id} ${f.family} ${f.node}`);
    assert.deepEqual(ids, ['service-rules-missing IPv6 vm-12-11-centos']);
    // image and rules are one release (v1.30): nothing disagrees
    assert.deepEqual(
      doc.nodes.map((n: { releaseDisagrees: unknown }) => n.releaseDisagrees),
      [null, null, null, null],
    );
    const v4only = kdebug(['drift', ...S, '--all-nodes', '--family', 'ipv4']);
    assert.equal(v4only.code, 0, v4only.stdout);
  });

  it("drift -o json gives releaseDisagrees where the release read is newer than the rules' signs allow", () => {
    // the demo's v1.15-era rules beside a kube-proxy image retagged v1.21.14: svc's
    // rules-release-disagrees, per node
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-drift-release-'));
    try {
      cpSync('snapshots/nginx-svc', dir, { recursive: true });
      const objects = join(dir, 'objects.json');
      writeFileSync(
        objects,
        readFileSync(objects, 'utf8').replaceAll('/kube-proxy:v1.15.2', '/kube-proxy:v1.21.14'),
      );
      const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
      const doc = JSON.parse(r.stdout);
      assert.deepEqual(
        doc.nodes.map((n: { releaseDisagrees: unknown }) => n.releaseDisagrees),
        doc.nodes.map(() => ({ read: 'v1.21', upTo: 'v1.19' })),
      );
      assert.ok(doc.nodes.length >= 2, r.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('trace walks an IPv6 packet through ip6tables, [ip]:port in and out; the node without rules is said', () => {
    const ok = kdebug([
      'trace',
      ...S,
      '--node',
      'vm-12-7-centos',
      '--src',
      'fd00:10:244::3',
      '--dst',
      '[fd00:10:96::be]:8080',
      '-o',
      'json',
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const doc = JSON.parse(ok.stdout);
    assert.deepEqual(doc.outcomes.map((o: { destination: string }) => o.destination).sort(), [
      '[fd00:10:244:1::7]:80',
      '[fd00:10:244::3]:80',
    ]);
    const bad = kdebug([
      'trace',
      ...S,
      '--node',
      'vm-12-11-centos',
      '--src',
      'fd00:10:244:1::7',
      '--dst',
      '[fd00:10:96::be]:8080',
    ]);
    assert.match(
      bad.stdout.replace(/\s+/g, ' '),
      /No rule matched tcp port 8080 of fd00:10:96::be, a port of the Service: kube-proxy has not written this Service on node vm-12-11-centos/,
    );
    assert.equal(bad.code, 1, 'nothing answers a Service port kube-proxy did not write');
    const mixed = kdebug([
      'trace',
      ...S,
      '--node',
      'vm-12-7-centos',
      '--src',
      '10.244.0.3',
      '--dst',
      '[fd00:10:96::be]:8080',
    ]);
    assert.deepEqual(
      [mixed.code, mixed.stderr],
      [2, 'kdebug: --src 10.244.0.3 is not an IPv6 address (the destination is IPv6)\n'],
    );
  });
});

describe('a node that recorded only its ip6tables-save (dual-stack nginx-svc)', () => {
  // the scenario's vm-12-7-centos with its iptables-save.txt removed: IPv4 was not compared there
  const only6 = () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-only-ip6-'));
    cpSync('snapshots/dual-stack-ipv6-rules-missing', dir, { recursive: true });
    rmSync(join(dir, 'nodes/vm-12-7-centos/iptables-save.txt'));
    return dir;
  };
  it('drift says IPv4 not compared (exit 2, never a clean 0); --family both and trace name the family and the snapshot', () => {
    const dir = only6();
    try {
      const r = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-7-centos']);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(
        r.stdout.replace(/\s+/g, ' '),
        /1 node not compared: vm-12-7-centos no IPv4 rules recorded \(no nodes\/vm-12-7-centos\/iptables-save\.txt; its IPv6 rules are recorded\): IPv4 not compared/,
      );
      const json = JSON.parse(
        kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-7-centos', '-o', 'json']).stdout,
      );
      assert.deepEqual(
        json.notCompared.map((n: { node: string; family: string }) => [n.node, n.family]),
        [['vm-12-7-centos', 'IPv4']],
      );
      const both = kdebug([
        'drift',
        '--snapshot',
        dir,
        '--node',
        'vm-12-7-centos',
        '--family',
        'both',
      ]);
      const trace = kdebug([
        'trace',
        '--snapshot',
        dir,
        '--node',
        'vm-12-7-centos',
        '--src',
        '10.244.0.5',
        '--dst',
        '10.1.190.219:8080',
      ]);
      for (const x of [both, trace])
        assert.deepEqual(
          [x.code, x.stderr],
          [
            2,
            `kdebug: ${dir}: no IPv4 rules recorded for node "vm-12-7-centos" (no nodes/vm-12-7-centos/iptables-save.txt; its IPv6 rules are recorded)\n`,
          ],
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a family no Service has and the node holds none of is no block; a stale one of it still is', () => {
    // IPv4-only IPVS recording: kube-proxy's IPv6 proxier wrote only its base rules
    const src = 'test/fixtures/releases/33/ipvs';
    const nodesOf = (dir: string) => {
      const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
      const text = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'text']);
      assert.equal(r.code, text.code, r.stderr);
      const doc = JSON.parse(r.stdout) as { nodes: { node: string; family: string }[] };
      return { nodes: doc.nodes.map((n) => `${n.node} ${n.family}`), text: text.stdout };
    };
    const clean = nodesOf(src);
    assert.deepEqual(clean.nodes, ['node-a IPv4', 'node-b IPv4']);
    assert.doesNotMatch(clean.text, /IPv6/);
    // an IPv6 virtual server on node-a no Service asks for: that family's block is back
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-drift-v6-'));
    try {
      cpSync(src, dir, { recursive: true });
      const save = join(dir, 'nodes/node-a/ipvsadm-save.txt');
      writeFileSync(
        save,
        `${readFileSync(save, 'utf8')}-A -t [fd00:10:96::1]:443 -s rr\n-a -t [fd00:10:96::1]:443 -r [fd00:10:244::3]:6443 -m -w 1\n`,
      );
      const stale = nodesOf(dir);
      assert.deepEqual(stale.nodes, ['node-a IPv4', 'node-a IPv6', 'node-b IPv4']);
      assert.match(stale.text, /^node node-a IPv6 /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
