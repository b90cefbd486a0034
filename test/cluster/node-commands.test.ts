// The closed list of node commands: the exact argv of every kind in every place, the values that
// are refused before they reach a node, and the one quoting function SSH relies on.
// Addresses: ClusterIP 10.96.190.219 (Service CIDR 10.96.0.0/16), kube-dns 10.96.0.10.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import {
  nodeArgv,
  PROBE_SCRIPTS,
  shellCommand,
  shellQuote,
  typedCommand,
  UnsupportedCommandError,
  type CommandPlace,
} from '../../src/cluster/nodes/commands.js';
import {
  InvalidNodeCommandError,
  validNodeCommand,
} from '../../src/cluster/nodes/valid-command.js';
import type { SshSession } from '../../src/cluster/nodes/ssh.js';
import { parseProbe } from '../../src/core/nodes/outputs.js';
import { hasCommand } from '../support/skip.js';

const ROOT: CommandPlace = { kind: 'host', sudo: false };
const SUDO: CommandPlace = { kind: 'host', sudo: true };
const POD: CommandPlace = { kind: 'debug-pod' };
const KUBE_PROXY: CommandPlace = { kind: 'kube-proxy-pod' };
const SH = (name: keyof typeof PROBE_SCRIPTS, ...args: string[]) => [
  '/bin/sh',
  '-c',
  PROBE_SCRIPTS[name],
  'kdebug-probe',
  ...args,
];

// One row per kind: the command, its argv as root over SSH, and its snapshot stem.
const KINDS: [NodeCommand, string[], string][] = [
  [
    {
      kind: 'iptables-chain',
      tool: 'iptables',
      backend: 'auto',
      chain: 'KUBE-SVC-AAAAAAAAAAAAAAAA',
    },
    [
      '/usr/bin/timeout',
      '30',
      '/usr/sbin/iptables',
      '-t',
      'nat',
      '-S',
      'KUBE-SVC-AAAAAAAAAAAAAAAA',
    ],
    'iptables-nat-S_KUBE-SVC-AAAAAAAAAAAAAAAA',
  ],
  [
    { kind: 'iptables-chain', tool: 'ip6tables', backend: 'legacy', chain: 'PREROUTING' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ip6tables-legacy', '-t', 'nat', '-S', 'PREROUTING'],
    'ip6tables-legacy-nat-S_PREROUTING',
  ],
  [
    {
      kind: 'iptables-chain',
      tool: 'iptables',
      backend: 'nft',
      chain: 'KUBE-FORWARD',
      table: 'filter',
    },
    ['/usr/bin/timeout', '30', '/usr/sbin/iptables-nft', '-t', 'filter', '-S', 'KUBE-FORWARD'],
    'iptables-nft-filter-S_KUBE-FORWARD',
  ],
  [
    { kind: 'iptables-save', backend: 'auto' },
    ['/usr/bin/timeout', '30', '/usr/sbin/iptables-save'],
    'iptables-save',
  ],
  [
    { kind: 'iptables-save', backend: 'legacy', table: 'nat' },
    ['/usr/bin/timeout', '30', '/usr/sbin/iptables-legacy-save', '-t', 'nat'],
    'iptables-legacy-save-nat',
  ],
  [
    { kind: 'iptables-save', backend: 'nft', table: 'filter' },
    ['/usr/bin/timeout', '30', '/usr/sbin/iptables-nft-save', '-t', 'filter'],
    'iptables-nft-save-filter',
  ],
  [
    { kind: 'ip6tables-save', backend: 'auto', table: 'nat' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ip6tables-save', '-t', 'nat'],
    'ip6tables-save-nat',
  ],
  [
    { kind: 'ip6tables-save', backend: 'legacy' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ip6tables-legacy-save'],
    'ip6tables-legacy-save',
  ],
  [{ kind: 'proxy-mode' }, SH('http', 'http://127.0.0.1:10249/proxyMode'), 'proxy-mode'],
  [{ kind: 'proxy-metrics' }, SH('http', 'http://127.0.0.1:10249/metrics'), 'proxy-metrics'],
  [{ kind: 'proxy-configz' }, SH('http', 'http://127.0.0.1:10249/configz'), 'proxy-configz'],
  [{ kind: 'ip-addr' }, ['/usr/bin/timeout', '10', '/usr/sbin/ip', '-br', 'addr'], 'ip-addr'],
  [
    {
      kind: 'dns-lookup',
      name: 'kube-dns.kube-system.svc.cluster.local.',
      server: '10.96.0.10',
      type: 'A',
    },
    SH('dns-lookup', 'kube-dns.kube-system.svc.cluster.local.', '10.96.0.10', 'A'),
    'dns-lookup_A_kube-dns.kube-system.svc.cluster.local._10.96.0.10',
  ],
  [
    {
      kind: 'dns-lookup',
      name: '_dns._udp.kube-dns.kube-system.svc.cluster.local',
      server: 'fd00::a',
      type: 'SRV',
    },
    SH('dns-lookup', '_dns._udp.kube-dns.kube-system.svc.cluster.local', 'fd00::a', 'SRV'),
    'dns-lookup_SRV__dns._udp.kube-dns.kube-system.svc.cluster.local_fd00::a',
  ],
  [
    { kind: 'tcp-connect', ip: '10.96.190.219', port: 8080 },
    SH('tcp-connect', '10.96.190.219', '8080'),
    'tcp-connect_10.96.190.219_8080',
  ],
  [
    { kind: 'udp-probe', ip: '10.96.0.10', port: 53 },
    SH('udp-probe', '10.96.0.10', '53'),
    'udp-probe_10.96.0.10_53',
  ],
  [
    { kind: 'icmp-echo', ip: '10.96.190.219' },
    SH('icmp-echo', '10.96.190.219'),
    'icmp-echo_10.96.190.219',
  ],
  [
    { kind: 'nft-list', family: 'ip' },
    ['/usr/bin/timeout', '30', '/usr/sbin/nft', '-j', 'list', 'table', 'ip', 'kube-proxy'],
    'nft-ip-kube-proxy',
  ],
  [
    { kind: 'nft-list', family: 'ip6', format: 'text' },
    ['/usr/bin/timeout', '30', '/usr/sbin/nft', 'list', 'table', 'ip6', 'kube-proxy'],
    'nft-ip6-kube-proxy-text',
  ],
  [
    { kind: 'conntrack-list', protocol: 'udp', dst: '10.96.0.10' },
    ['/usr/bin/timeout', '30', '/usr/sbin/conntrack', '-L', '-p', 'udp', '-d', '10.96.0.10'],
    'conntrack_udp_10.96.0.10',
  ],
  [
    { kind: 'conntrack-stats' },
    ['/usr/bin/timeout', '30', '/usr/sbin/conntrack', '-S'],
    'conntrack-stats',
  ],
  [
    { kind: 'conntrack-stats', again: true },
    ['/usr/bin/timeout', '30', '/usr/sbin/conntrack', '-S'],
    'conntrack-stats-again',
  ],
  [
    { kind: 'ipvs-save' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ipvsadm-save', '-n'],
    'ipvsadm-save',
  ],
  [
    { kind: 'ipvs-save', format: 'list' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ipvsadm', '-Ln'],
    'ipvsadm-list',
  ],
  [
    { kind: 'ipset-save' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ipset', 'list', '-o', 'save'],
    'ipset-save',
  ],
  [
    { kind: 'ipvs-service', protocol: 'tcp', ip: '10.96.190.219', port: 80 },
    ['/usr/bin/timeout', '30', '/usr/sbin/ipvsadm', '-Ln', '-t', '10.96.190.219:80'],
    'ipvsadm-Ln_tcp_10.96.190.219_80',
  ],
  [
    { kind: 'ipvs-service', protocol: 'sctp', ip: 'fd00:10:96::a', port: 9999 },
    [
      '/usr/bin/timeout',
      '30',
      '/usr/sbin/ipvsadm',
      '-Ln',
      '--sctp-service',
      '[fd00:10:96::a]:9999',
    ],
    'ipvsadm-Ln_sctp_fd00:10:96::a_9999',
  ],
  [
    { kind: 'ipset-test', set: 'KUBE-LOOP-BACK', entry: '10.244.1.5,tcp:80,10.244.1.5' },
    [
      '/usr/bin/timeout',
      '30',
      '/usr/sbin/ipset',
      'test',
      'KUBE-LOOP-BACK',
      '10.244.1.5,tcp:80,10.244.1.5',
    ],
    'ipset-test_KUBE-LOOP-BACK_10.244.1.5_tcp:80_10.244.1.5',
  ],
  [
    {
      kind: 'ipset-test',
      set: 'KUBE-LOAD-BALANCER-SOURCE-CIDR',
      entry: '203.0.113.10,tcp:80,10.0.0.0/8',
    },
    [
      '/usr/bin/timeout',
      '30',
      '/usr/sbin/ipset',
      'test',
      'KUBE-LOAD-BALANCER-SOURCE-CIDR',
      '203.0.113.10,tcp:80,10.0.0.0/8',
    ],
    'ipset-test_KUBE-LOAD-BALANCER-SOURCE-CIDR_203.0.113.10_tcp:80_10.0.0.0-8',
  ],
  [
    { kind: 'ipset-test', set: 'KUBE-NODE-PORT-TCP', entry: '30080' },
    ['/usr/bin/timeout', '30', '/usr/sbin/ipset', 'test', 'KUBE-NODE-PORT-TCP', '30080'],
    'ipset-test_KUBE-NODE-PORT-TCP_30080',
  ],
  [
    { kind: 'proc-net', file: 'ip_tables_names' },
    ['/usr/bin/timeout', '10', '/bin/cat', '/proc/net/ip_tables_names'],
    'ip_tables_names',
  ],
  [
    { kind: 'proc-net', file: 'ip6_tables_names' },
    ['/usr/bin/timeout', '10', '/bin/cat', '/proc/net/ip6_tables_names'],
    'ip6_tables_names',
  ],
  [
    { kind: 'proc-net', file: 'ip_vs_stats' },
    ['/usr/bin/timeout', '10', '/bin/cat', '/proc/net/ip_vs_stats'],
    'ip_vs_stats',
  ],
];

const CILIUM: [NodeCommand, string[], string][] = [
  [{ kind: 'cilium', list: 'status' }, ['cilium-dbg', 'status', '--verbose'], 'cilium-status'],
  [
    { kind: 'cilium', list: 'service-list' },
    ['cilium-dbg', 'service', 'list', '-o', 'json'],
    'cilium-service-list',
  ],
  [
    { kind: 'cilium', list: 'frontends' },
    ['cilium-dbg', 'shell', '--', 'db/show', 'frontends'],
    'cilium-frontends',
  ],
  [
    { kind: 'cilium', list: 'backends' },
    ['cilium-dbg', 'shell', '--', 'db/show', 'backends'],
    'cilium-backends',
  ],
  [
    { kind: 'cilium', list: 'bpf-lb-list', binary: 'cilium' },
    ['cilium', 'bpf', 'lb', 'list'],
    'cilium-bpf-lb-list',
  ],
];

describe('node commands', () => {
  it('has a row for every kind of the NodeCommand union', () => {
    // Adding a kind to cluster.ts without a row here fails to compile
    const all = {
      'iptables-save': 1,
      'ip6tables-save': 1,
      'iptables-chain': 1,
      'proxy-mode': 1,
      'proxy-metrics': 1,
      'proxy-configz': 1,
      'ip-addr': 1,
      'dns-lookup': 1,
      'tcp-connect': 1,
      'udp-probe': 1,
      'icmp-echo': 1,
      'nft-list': 1,
      'conntrack-list': 1,
      'conntrack-stats': 1,
      'ipvs-save': 1,
      'ipset-save': 1,
      'ipvs-service': 1,
      'ipset-test': 1,
      'proc-net': 1,
      cilium: 1,
    } satisfies Record<NodeCommand['kind'], 1>;
    assert.deepEqual(
      new Set([...KINDS, ...CILIUM].map(([c]) => c.kind)),
      new Set(Object.keys(all)),
    );
  });

  // the agent's own listings, exec'd in its Pod without a shell; nowhere else
  for (const [command, argv, stem] of CILIUM) {
    it(`${stem}: the agent's listing in its Pod, refused on the node itself`, () => {
      assert.deepEqual(nodeArgv(command, { kind: 'cilium-agent-pod' }), argv);
      assert.equal(commandStem(command), stem);
      for (const place of [
        ROOT,
        { kind: 'debug-pod' } as const,
        { kind: 'kube-proxy-pod' } as const,
      ])
        assert.throws(() => nodeArgv(command, place), UnsupportedCommandError);
    });
  }

  it("runs nothing but the agent's listings in the agent's Pod", () => {
    for (const [command] of KINDS)
      assert.throws(() => nodeArgv(command, { kind: 'cilium-agent-pod' }), UnsupportedCommandError);
    for (const forged of [
      { kind: 'cilium', list: 'cleanup' },
      { kind: 'cilium', list: 'status', binary: 'sh' },
      { kind: 'cilium', list: 'status', args: ['-o', 'json'] },
    ])
      assert.throws(
        () => nodeArgv(forged as unknown as NodeCommand, { kind: 'cilium-agent-pod' }),
        InvalidNodeCommandError,
      );
  });

  for (const [command, argv, stem] of KINDS) {
    it(`${stem}: fixed argv as root over SSH`, () => {
      assert.deepEqual(nodeArgv(command, ROOT), argv);
      assert.equal(commandStem(command), stem);
    });
  }

  it('names each command as a person types it on the node: the binary kdebug runs, its arguments, no wrapper', () => {
    for (const [command, argv] of KINDS) {
      const typed = typedCommand(command);
      if (argv[0] === '/bin/sh') {
        // a probe: a tool its script runs, with the script's options, given the same values
        const values = argv.slice(4);
        const tool = typed.filter((w) => !values.some((v) => w.includes(v))).join(' ');
        assert.ok(argv[2]!.includes(` ${tool} `), `${tool} in ${commandStem(command)}`);
        for (const value of values) assert.ok(typed.join(' ').includes(value), value);
      } else {
        const [, , bin, ...args] = argv;
        assert.deepEqual(typed, [bin!.replace(/^.*\//, ''), ...args], commandStem(command));
      }
    }
    for (const [command, argv] of CILIUM) assert.deepEqual(typedCommand(command), argv);
  });

  it('reads rules through sudo -n with absolute paths for a non-root user; probes never use sudo', () => {
    assert.deepEqual(nodeArgv({ kind: 'iptables-save', backend: 'auto', table: 'nat' }, SUDO), [
      '/usr/bin/timeout',
      '30',
      'sudo',
      '-n',
      '/usr/sbin/iptables-save',
      '-t',
      'nat',
    ]);
    assert.deepEqual(nodeArgv({ kind: 'ip6tables-save', backend: 'nft' }, SUDO).slice(2), [
      'sudo',
      '-n',
      '/usr/sbin/ip6tables-nft-save',
    ]);
    assert.deepEqual(nodeArgv({ kind: 'nft-list', family: 'ip6' }, SUDO).slice(2), [
      'sudo',
      '-n',
      '/usr/sbin/nft',
      '-j',
      'list',
      'table',
      'ip6',
      'kube-proxy',
    ]);
    // conntrack reads a kernel table, with the same root the rules need
    assert.deepEqual(nodeArgv({ kind: 'conntrack-stats' }, SUDO).slice(2), [
      'sudo',
      '-n',
      '/usr/sbin/conntrack',
      '-S',
    ]);
    // the legacy tables' lists are root's alone (mode 0440): cat them through sudo -n too
    assert.deepEqual(nodeArgv({ kind: 'proc-net', file: 'ip6_tables_names' }, SUDO), [
      '/usr/bin/timeout',
      '10',
      'sudo',
      '-n',
      '/bin/cat',
      '/proc/net/ip6_tables_names',
    ]);
    const needsRoot = (c: NodeCommand) =>
      c.kind.endsWith('tables-save') ||
      c.kind === 'iptables-chain' ||
      c.kind === 'nft-list' ||
      c.kind.startsWith('conntrack') ||
      c.kind === 'ipvs-save' ||
      c.kind === 'ipvs-service' ||
      c.kind === 'ipset-save' ||
      c.kind === 'ipset-test' ||
      (c.kind === 'proc-net' && c.file !== 'ip_vs_stats');
    for (const [command] of KINDS.filter(([c]) => !needsRoot(c))) {
      assert.ok(!nodeArgv(command, SUDO).includes('sudo'), command.kind);
      assert.deepEqual(nodeArgv(command, SUDO), nodeArgv(command, ROOT));
    }
  });

  it('reads rules with the host binaries through chroot /host in a debug Pod, probes with the image tools', () => {
    assert.deepEqual(nodeArgv({ kind: 'iptables-save', backend: 'legacy', table: 'nat' }, POD), [
      'timeout',
      '30',
      'chroot',
      '/host',
      '/usr/sbin/iptables-legacy-save',
      '-t',
      'nat',
    ]);
    assert.deepEqual(nodeArgv({ kind: 'ip-addr' }, POD), [
      'timeout',
      '10',
      'chroot',
      '/host',
      '/usr/sbin/ip',
      '-br',
      'addr',
    ]);
    assert.deepEqual(nodeArgv({ kind: 'icmp-echo', ip: '10.96.0.10' }, POD), [
      'sh',
      ...SH('icmp-echo', '10.96.0.10').slice(1),
    ]);
    // the Pod's own /proc is the node's network namespace (hostNetwork), mounted or not at /host
    assert.deepEqual(nodeArgv({ kind: 'proc-net', file: 'ip_tables_names' }, POD), [
      'timeout',
      '10',
      'cat',
      '/proc/net/ip_tables_names',
    ]);
  });

  it('execs the save binary directly in the kube-proxy container and refuses what its image cannot run', () => {
    assert.deepEqual(
      nodeArgv({ kind: 'iptables-save', backend: 'auto', table: 'nat' }, KUBE_PROXY),
      ['iptables-save', '-t', 'nat'],
    );
    assert.deepEqual(nodeArgv({ kind: 'iptables-save', backend: 'nft' }, KUBE_PROXY), [
      'iptables-nft-save',
    ]);
    // one Service's IPVS state by address, with the image's ipvsadm and ipset (IPVS mode's tools)
    assert.deepEqual(
      nodeArgv({ kind: 'ipvs-service', protocol: 'udp', ip: '10.96.0.10', port: 53 }, KUBE_PROXY),
      ['ipvsadm', '-Ln', '-u', '10.96.0.10:53'],
    );
    assert.deepEqual(
      nodeArgv(
        { kind: 'ipset-test', set: 'KUBE-CLUSTER-IP', entry: '10.96.0.10,udp:53' },
        KUBE_PROXY,
      ),
      ['ipset', 'test', 'KUBE-CLUSTER-IP', '10.96.0.10,udp:53'],
    );
    // the kernel's lists with the image's cat (its iptables wrapper needs one)
    assert.deepEqual(nodeArgv({ kind: 'proc-net', file: 'ip_vs_stats' }, KUBE_PROXY), [
      'cat',
      '/proc/net/ip_vs_stats',
    ]);
    for (const c of [
      { kind: 'ip-addr' },
      { kind: 'proxy-mode' },
      { kind: 'tcp-connect', ip: '10.96.0.10', port: 53 },
      // the image may lack conntrack-tools: read through a debug Pod or SSH
      { kind: 'conntrack-list', protocol: 'udp', dst: '10.96.0.10' },
      { kind: 'conntrack-stats' },
    ] as NodeCommand[]) {
      assert.throws(() => nodeArgv(c, KUBE_PROXY), UnsupportedCommandError, c.kind);
    }
  });

  it('keeps every probe script constant: cluster values only ever arrive as separate, final arguments', () => {
    const other: Record<string, NodeCommand> = {
      'dns-lookup': {
        kind: 'dns-lookup',
        name: 'web.default.svc.cluster.local',
        server: '10.96.0.11',
        type: 'AAAA',
      },
      'tcp-connect': { kind: 'tcp-connect', ip: 'fd00::1', port: 443 },
      'udp-probe': { kind: 'udp-probe', ip: '192.0.2.1', port: 1 },
      'icmp-echo': { kind: 'icmp-echo', ip: '192.0.2.1' },
    };
    for (const [command] of KINDS.filter(([c]) => other[c.kind])) {
      const values = Object.entries(command)
        .filter(([k]) => k !== 'kind')
        .map(([, v]) => String(v));
      const argv = nodeArgv(command, ROOT);
      const otherArgv = nodeArgv(other[command.kind]!, ROOT);
      assert.deepEqual(argv.slice(-values.length), values, command.kind);
      assert.deepEqual(
        argv.slice(0, -values.length),
        otherArgv.slice(0, -values.length),
        `${command.kind}: the script depends on the values`,
      );
    }
    for (const script of Object.values(PROBE_SCRIPTS))
      assert.ok(!script.includes('\n') && !script.includes('\\'), 'one line, no backslash');
  });

  // Values that must never reach a node, each in the field that would carry it.
  const REFUSED: [string, unknown][] = [
    ['shell in an IP', { kind: 'tcp-connect', ip: '1.2.3.4; rm -rf /', port: 80 }],
    ['command substitution', { kind: 'icmp-echo', ip: '$(reboot)' }],
    ['backticks', { kind: 'icmp-echo', ip: '`id`' }],
    ['newline', { kind: 'icmp-echo', ip: '10.0.0.1\nreboot' }],
    ['IPv4 with a leading zero', { kind: 'icmp-echo', ip: '010.0.0.1' }],
    ['IPv4 out of range', { kind: 'icmp-echo', ip: '10.0.0.256' }],
    ['IPv4 with a prefix', { kind: 'icmp-echo', ip: '10.0.0.0/8' }],
    ['IPv6 with a zone', { kind: 'icmp-echo', ip: 'fe80::1%eth0' }],
    ['IPv6 with two ::', { kind: 'icmp-echo', ip: 'fd00::1::2' }],
    ['bracketed IPv6', { kind: 'icmp-echo', ip: '[fd00::1]' }],
    ['an option as IP', { kind: 'icmp-echo', ip: '-f' }],
    ['port 0', { kind: 'tcp-connect', ip: '10.96.0.10', port: 0 }],
    ['port too big', { kind: 'udp-probe', ip: '10.96.0.10', port: 65536 }],
    ['port as string', { kind: 'tcp-connect', ip: '10.96.0.10', port: '80; id' }],
    ['port fraction', { kind: 'tcp-connect', ip: '10.96.0.10', port: 80.5 }],
    ['dig option as name', { kind: 'dns-lookup', name: '+short', server: '10.96.0.10', type: 'A' }],
    [
      'name starting with a dash',
      { kind: 'dns-lookup', name: '-x.example', server: '10.96.0.10', type: 'A' },
    ],
    [
      'shell in a name',
      { kind: 'dns-lookup', name: 'a.b;reboot', server: '10.96.0.10', type: 'A' },
    ],
    ['space in a name', { kind: 'dns-lookup', name: 'a b', server: '10.96.0.10', type: 'A' }],
    [
      'label over 63',
      { kind: 'dns-lookup', name: `${'a'.repeat(64)}.svc`, server: '10.96.0.10', type: 'A' },
    ],
    [
      'name as server',
      { kind: 'dns-lookup', name: 'web.default.svc', server: 'dns.example', type: 'A' },
    ],
    ['record type', { kind: 'dns-lookup', name: 'web', server: '10.96.0.10', type: 'ANY' }],
    ['unknown backend', { kind: 'iptables-save', backend: '/bin/sh' }],
    [
      'a chain that is an option',
      { kind: 'iptables-chain', tool: 'iptables', backend: 'auto', chain: '-F' },
    ],
    [
      'shell in a chain name',
      { kind: 'iptables-chain', tool: 'iptables', backend: 'auto', chain: 'KUBE-$(reboot)' },
    ],
    [
      'a chain name with a space',
      { kind: 'iptables-chain', tool: 'iptables', backend: 'auto', chain: 'KUBE-SVC X' },
    ],
    [
      'a chain name with a quote',
      { kind: 'iptables-chain', tool: 'iptables', backend: 'auto', chain: "DOCKER'" },
    ],
    [
      'a chain name longer than iptables allows',
      {
        kind: 'iptables-chain',
        tool: 'iptables',
        backend: 'auto',
        chain: `KUBE-${'A'.repeat(24)}`,
      },
    ],
    [
      'a chain of a table of its own',
      {
        kind: 'iptables-chain',
        tool: 'iptables',
        backend: 'auto',
        chain: 'FORWARD',
        table: 'mangle',
      },
    ],
    [
      'a tool of its own',
      { kind: 'iptables-chain', tool: 'ebtables', backend: 'auto', chain: 'KUBE-SERVICES' },
    ],
    ['unknown table', { kind: 'iptables-save', backend: 'auto', table: 'nat; reboot' }],
    ['extra field', { kind: 'ip-addr', argv: ['rm', '-rf', '/'] }],
    ['an nft family that is not one', { kind: 'nft-list', family: 'ip; nft flush ruleset' }],
    ['a /proc/net file off the list', { kind: 'proc-net', file: 'nf_conntrack' }],
    ['a path as /proc/net file', { kind: 'proc-net', file: '../../etc/shadow' }],
    ['an nft table of its own', { kind: 'nft-list', family: 'ip', table: 'filter' }],
    ['an nft format that is not one', { kind: 'nft-list', family: 'ip', format: '-f /tmp/x' }],
    ['a conntrack address that is not one', { kind: 'conntrack-list', protocol: 'udp', dst: '-D' }],
    [
      'a conntrack protocol of its own',
      { kind: 'conntrack-list', protocol: '-D', dst: '10.96.0.10' },
    ],
    ['a conntrack flag smuggled in', { kind: 'conntrack-stats', flags: ['-F'] }],
    ['an ipset command smuggled in', { kind: 'ipset-save', set: 'x; ipset flush' }],
    ['an ipvsadm format that is not one', { kind: 'ipvs-save', format: '-C' }],
    [
      'a virtual server protocol of its own',
      { kind: 'ipvs-service', protocol: 'fwmark', ip: '10.96.0.10', port: 53 },
    ],
    [
      'a virtual server address that is an option',
      { kind: 'ipvs-service', protocol: 'tcp', ip: '-C', port: 53 },
    ],
    [
      'a virtual server address with its port',
      { kind: 'ipvs-service', protocol: 'tcp', ip: '10.96.0.10:53', port: 53 },
    ],
    [
      'a virtual server port 0',
      { kind: 'ipvs-service', protocol: 'udp', ip: '10.96.0.10', port: 0 },
    ],
    ['an ipset that is an option', { kind: 'ipset-test', set: '-exist', entry: '30080' }],
    ["an ipset not kube-proxy's", { kind: 'ipset-test', set: 'cali40all-hosts', entry: '30080' }],
    [
      'an ipset name longer than ipset allows',
      { kind: 'ipset-test', set: `KUBE-${'A'.repeat(27)}`, entry: '30080' },
    ],
    ['an ipset entry that is an option', { kind: 'ipset-test', set: 'KUBE-IPVS-IPS', entry: '-q' }],
    [
      'an ipset entry with shell in it',
      { kind: 'ipset-test', set: 'KUBE-IPVS-IPS', entry: '10.96.0.10;reboot' },
    ],
    [
      'an ipset entry of a protocol of its own',
      { kind: 'ipset-test', set: 'KUBE-CLUSTER-IP', entry: '10.96.0.10,icmp:53' },
    ],
    [
      'an ipset entry with a part too many',
      { kind: 'ipset-test', set: 'KUBE-LOOP-BACK', entry: '10.0.0.1,tcp:80,10.0.0.1,10.0.0.2' },
    ],
    [
      'an ipset entry with a net too long',
      {
        kind: 'ipset-test',
        set: 'KUBE-LOAD-BALANCER-SOURCE-CIDR',
        entry: '10.0.0.1,tcp:80,10.0.0.0/33',
      },
    ],
    ['an ipset port too big', { kind: 'ipset-test', set: 'KUBE-NODE-PORT-TCP', entry: '65536' }],
    [
      'a second ipset entry smuggled in',
      { kind: 'ipset-test', set: 'KUBE-IPVS-IPS', entry: '10.96.0.10', more: '10.96.0.11' },
    ],
    ['a second read that is not one', { kind: 'conntrack-stats', again: '-F' }],
    ['unknown kind', { kind: 'shell', command: 'rm -rf /' }],
    ['a string', 'iptables-save; rm -rf /'],
    ['nothing', undefined],
  ];
  for (const [why, value] of REFUSED) {
    it(`refuses ${why}`, () => {
      assert.throws(() => validNodeCommand(value), InvalidNodeCommandError);
      assert.throws(() => nodeArgv(value as NodeCommand, ROOT), InvalidNodeCommandError);
    });
  }

  it('accepts the transports only a NodeCommand (compile-time check)', () => {
    // Never called: tsc --noEmit fails if run() accepted anything else
    const typeOnly = (s: SshSession) => {
      // @ts-expect-error a command line is not a NodeCommand
      void s.run('iptables-save; rm -rf /');
      // @ts-expect-error an unknown kind is not a NodeCommand
      void s.run({ kind: 'shell', command: 'id' });
      // @ts-expect-error a port must be a number
      void s.run({ kind: 'tcp-connect', ip: '10.96.0.10', port: '53' });
    };
    assert.equal(typeof typeOnly, 'function');
  });
});

describe('shellQuote', () => {
  const NASTY = [
    "it's",
    'a b',
    '$(id)',
    '`id`',
    '"; rm -rf / #',
    'x\ny',
    '\\',
    '*',
    '~root',
    '!',
    '-n',
    '',
    "''",
    'é ü',
    '%h',
    '=cmd',
    '{a,b}',
  ];

  it('leaves plain words bare and quotes everything else', () => {
    assert.equal(shellQuote('/usr/sbin/iptables-save'), '/usr/sbin/iptables-save');
    assert.equal(shellQuote('10.96.0.10'), '10.96.0.10');
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.equal(shellQuote(''), "''");
    assert.throws(() => shellQuote('a\0b'), InvalidNodeCommandError);
  });

  for (const shell of ['/bin/sh', '/bin/bash']) {
    it(`gives ${shell} back exactly the argv`, () => {
      const argv = [...NASTY, PROBE_SCRIPTS['tcp-connect'], PROBE_SCRIPTS.http];
      const r = spawnSync(shell, ['-c', `printf '%s\\0' ${shellCommand(argv)}`], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.split('\0').slice(0, -1), argv);
    });
  }
});

// The scripts themselves, run by the local /bin/sh against loopback only.
describe('probe scripts on this machine (loopback)', () => {
  const probe = (command: NodeCommand) => {
    const [cmd, ...args] = nodeArgv(command, ROOT);
    return spawnSync(cmd!, args, { encoding: 'utf8', timeout: 15_000 }).stdout;
  };

  it('tcp-connect passes against a listening port and says refused against a closed one', async () => {
    const server = createServer((s) => s.end()).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const open = parseProbe('tcp-connect', probe({ kind: 'tcp-connect', ip: '127.0.0.1', port }));
      assert.equal(open.status, 'pass', open.detail);
    } finally {
      await new Promise((r) => server.close(r));
    }
    const closed = parseProbe('tcp-connect', probe({ kind: 'tcp-connect', ip: '127.0.0.1', port }));
    assert.deepEqual([closed.status, closed.detail], ['fail', 'connection refused']);
  });

  it(
    'icmp-echo gets a reply from 127.0.0.1',
    { skip: hasCommand('ping') ? false : 'no ping (iputils-ping)' },
    () => {
      const r = parseProbe('icmp-echo', probe({ kind: 'icmp-echo', ip: '127.0.0.1' }));
      assert.equal(r.status, 'pass', r.detail);
      assert.match(r.detail, /^reply in [\d.]+ ms$/);
    },
  );
});
