// Probe output read back into verdicts. Every output below was printed by the real tools (OpenBSD
// nc, iputils ping, BIND dig and nslookup) inside the lab, through kdebug's probe scripts.
// Addresses: ClusterIP 10.96.190.219:8080, kube-dns 10.96.0.10, node 192.0.2.12, switch 192.0.2.1
// (no DNS server), 192.0.2.77 unused; Pod CIDR 10.244.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseIpBrief,
  parseProbe,
  parseProxyMode,
  type ProbeKind,
  type ProbeResult,
} from '../../src/core/nodes/outputs.js';

const trailer = (kind: string, tool: string, exit: number) =>
  `kdebug-probe ${kind} tool=${tool} exit=${exit}\n`;

const DIG_HEADER = (status: string, answers: number) =>
  `;; Got answer:\n;; WARNING: .local is reserved for Multicast DNS\n;; You are currently testing what happens when an mDNS query is leaked to DNS\n` +
  `;; ->>HEADER<<- opcode: QUERY, status: ${status}, id: 9637\n;; flags: qr aa rd; QUERY: 1, ANSWER: ${answers}, AUTHORITY: 0, ADDITIONAL: 0\n` +
  `;; WARNING: recursion requested but not available\n\n`;

type Row = [string, ProbeKind, string, Partial<ProbeResult>];

const ROWS: Row[] = [
  // tcp-connect
  [
    'tcp open',
    'tcp-connect',
    'Connection to 10.96.190.219 8080 port [tcp/http-alt] succeeded!\n' +
      trailer('tcp-connect', 'nc', 0),
    { status: 'pass', detail: 'connected', tool: 'nc', exitCode: 0 },
  ],
  [
    'tcp refused',
    'tcp-connect',
    'nc: connect to 192.0.2.1 port 80 (tcp) failed: Connection refused\n' +
      trailer('tcp-connect', 'nc', 1),
    { status: 'fail', detail: 'connection refused', failure: 'refused' },
  ],
  [
    'tcp dropped',
    'tcp-connect',
    'nc: connect to 10.96.190.219 port 81 (tcp) timed out: Operation now in progress\n' +
      trailer('tcp-connect', 'nc', 1),
    {
      status: 'fail',
      detail: 'no answer (timed out): the packets are dropped somewhere',
      failure: 'silent',
    },
  ],
  [
    'tcp via bash refused',
    'tcp-connect',
    '127.0.0.1: connect: Connection refused\n127.0.0.1: line 1: /dev/tcp/127.0.0.1/9: Connection refused\n' +
      trailer('tcp-connect', 'bash', 1),
    { status: 'fail', detail: 'connection refused', tool: 'bash', failure: 'refused' },
  ],
  [
    'tcp killed by timeout',
    'tcp-connect',
    trailer('tcp-connect', 'nc', 124),
    { status: 'fail', detail: 'no answer before the time limit (timed out)', failure: 'silent' },
  ],
  [
    'tcp without a tool',
    'tcp-connect',
    'neither nc nor bash on this node\n' + trailer('tcp-connect', 'none', 127),
    { status: 'unknown', detail: 'neither nc nor bash on this node' },
  ],
  [
    'tcp pasted without the trailer',
    'tcp-connect',
    'Connection to 10.96.190.219 8080 port [tcp/http-alt] succeeded!\n',
    { status: 'pass', exitCode: undefined },
  ],
  // udp-probe
  [
    'udp no answer',
    'udp-probe',
    'Connection to 10.96.190.219 53 port [udp/domain] succeeded!\n' + trailer('udp-probe', 'nc', 0),
    {
      status: 'pass',
      detail: 'no port-unreachable came back: open, or silently filtered (UDP cannot tell)',
    },
  ],
  [
    'udp port unreachable',
    'udp-probe',
    trailer('udp-probe', 'nc', 1),
    { status: 'fail', detail: 'port unreachable: nothing listens there', failure: 'refused' },
  ],
  // icmp-echo
  [
    'ping reply',
    'icmp-echo',
    'PING 192.0.2.12 (192.0.2.12) 56(84) bytes of data.\n64 bytes from 192.0.2.12: icmp_seq=1 ttl=64 time=0.443 ms\n\n--- 192.0.2.12 ping statistics ---\n1 packets transmitted, 1 received, 0% packet loss, time 0ms\nrtt min/avg/max/mdev = 0.443/0.443/0.443/0.000 ms\n' +
      trailer('icmp-echo', 'ping', 0),
    { status: 'pass', detail: 'reply in 0.443 ms' },
  ],
  [
    'ping to a ClusterIP',
    'icmp-echo',
    'PING 10.96.190.219 (10.96.190.219) 56(84) bytes of data.\n\n--- 10.96.190.219 ping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n' +
      trailer('icmp-echo', 'ping', 1),
    { status: 'fail', detail: 'no reply (100% packet loss)', failure: 'silent' },
  ],
  [
    'ping host unreachable',
    'icmp-echo',
    'PING 192.0.2.77 (192.0.2.77) 56(84) bytes of data.\nFrom 192.0.2.11 icmp_seq=1 Destination Host Unreachable\n\n--- 192.0.2.77 ping statistics ---\n1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n' +
      trailer('icmp-echo', 'ping', 1),
    {
      status: 'fail',
      detail: 'destination host unreachable (from 192.0.2.11)',
      failure: undefined,
    },
  ],
  [
    'ping no route',
    'icmp-echo',
    'ping: connect: Network is unreachable\n' + trailer('icmp-echo', 'ping', 2),
    { status: 'fail', detail: 'network is unreachable' },
  ],
  [
    'ping pasted without the trailer',
    'icmp-echo',
    '1 packets transmitted, 0 received, 100% packet loss, time 0ms\n',
    { status: 'fail', detail: 'no reply (100% packet loss)', failure: 'silent' },
  ],
  // dns-lookup with dig
  [
    'dig answer',
    'dns-lookup',
    DIG_HEADER('NOERROR', 1) +
      ';; ANSWER SECTION:\nnginx-svc.default.svc.cluster.local. 30\tIN A\t10.96.190.219\n\n' +
      trailer('dns-lookup', 'dig', 0),
    { status: 'pass', detail: '10.96.190.219', answers: ['10.96.190.219'], rcode: 'NOERROR' },
  ],
  [
    'dig NXDOMAIN',
    'dns-lookup',
    DIG_HEADER('NXDOMAIN', 0) + trailer('dns-lookup', 'dig', 0),
    { status: 'fail', detail: 'NXDOMAIN: no such name', rcode: 'NXDOMAIN', failure: undefined },
  ],
  [
    'dig no record of the type',
    'dns-lookup',
    DIG_HEADER('NOERROR', 0) + trailer('dns-lookup', 'dig', 0),
    { status: 'fail', detail: 'the name exists but has no record of this type', rcode: 'NOERROR' },
  ],
  [
    'dig SERVFAIL',
    'dns-lookup',
    DIG_HEADER('SERVFAIL', 0) + trailer('dns-lookup', 'dig', 0),
    { status: 'fail', detail: 'the DNS server answered SERVFAIL' },
  ],
  [
    'dig SRV',
    'dns-lookup',
    DIG_HEADER('NOERROR', 1) +
      ';; ANSWER SECTION:\n_dns._udp.kube-dns.kube-system.svc.cluster.local. 30 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.\n' +
      trailer('dns-lookup', 'dig', 0),
    { status: 'pass', answers: ['0 100 53 kube-dns.kube-system.svc.cluster.local.'] },
  ],
  [
    'dig refused',
    'dns-lookup',
    ';; communications error to 192.0.2.1#53: connection refused\n;; no servers could be reached\n' +
      trailer('dns-lookup', 'dig', 9),
    {
      status: 'fail',
      detail: 'the DNS server refused the connection (nothing listens on port 53)',
      failure: 'refused',
    },
  ],
  [
    'dig timeout',
    'dns-lookup',
    ';; communications error to 10.96.0.10#53: timed out\n;; no servers could be reached\n' +
      trailer('dns-lookup', 'dig', 9),
    { status: 'fail', detail: 'no reply from the DNS server (timed out)', failure: 'silent' },
  ],
  [
    'dig +short pasted',
    'dns-lookup',
    '10.96.190.219\n',
    { status: 'pass', answers: ['10.96.190.219'] },
  ],
  // dns-lookup with nslookup
  [
    'nslookup answer',
    'dns-lookup',
    'Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\nName:\tnginx-svc.default.svc.cluster.local\nAddress: 10.96.190.219\n\n' +
      trailer('dns-lookup', 'nslookup', 0),
    { status: 'pass', answers: ['10.96.190.219'], rcode: 'NOERROR' },
  ],
  [
    'nslookup NXDOMAIN',
    'dns-lookup',
    "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n** server can't find nope.default.svc.cluster.local: NXDOMAIN\n\n" +
      trailer('dns-lookup', 'nslookup', 1),
    { status: 'fail', rcode: 'NXDOMAIN' },
  ],
  [
    'nslookup no answer',
    'dns-lookup',
    "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n*** Can't find nginx-svc.default.svc.cluster.local: No answer\n\n" +
      trailer('dns-lookup', 'nslookup', 0),
    { status: 'fail', rcode: 'NOERROR', detail: 'the name exists but has no record of this type' },
  ],
  [
    'nslookup timeout',
    'dns-lookup',
    ';; communications error to 10.96.0.10#53: timed out\n;; communications error to 10.96.0.10#53: timed out\n;; no servers could be reached\n' +
      trailer('dns-lookup', 'nslookup', 1),
    { status: 'fail', detail: 'no reply from the DNS server (timed out)', failure: 'silent' },
  ],
  ['empty output', 'dns-lookup', '', { status: 'unknown', detail: 'no output' }],
];

describe('parseProbe', () => {
  for (const [name, kind, stdout, expected] of ROWS) {
    it(name, () => {
      const r = parseProbe(kind, stdout);
      const picked = Object.fromEntries(
        Object.keys(expected).map((k) => [k, r[k as keyof ProbeResult]]),
      );
      assert.deepEqual(picked, expected);
      assert.equal(r.kind, kind);
    });
  }
});

describe('parseProxyMode', () => {
  const rows: [string, string | undefined][] = [
    ['iptables', 'iptables'],
    ['ipvs\n', 'ipvs'],
    ['nftables', 'nftables'],
    ['', undefined],
    ['404 page not found', undefined],
  ];
  for (const [stdout, mode] of rows)
    it(JSON.stringify(stdout), () => assert.equal(parseProxyMode(stdout), mode));
});

describe('parseIpBrief', () => {
  it('reads names without the peer suffix, states and CIDRs (ip -br addr from a lab node)', () => {
    const out =
      'lo               UNKNOWN        127.0.0.1/8 ::1/128 \neth0@if4         UP             192.0.2.11/24 fe80::463:5bff:fead:5421/64 \n' +
      'cni0             UP             10.244.0.1/24 \nkube-ipvs0       DOWN           10.96.0.1/32 10.96.0.10/32 \n';
    assert.deepEqual(parseIpBrief(out), [
      { name: 'lo', state: 'UNKNOWN', addresses: ['127.0.0.1/8', '::1/128'] },
      { name: 'eth0', state: 'UP', addresses: ['192.0.2.11/24', 'fe80::463:5bff:fead:5421/64'] },
      { name: 'cni0', state: 'UP', addresses: ['10.244.0.1/24'] },
      { name: 'kube-ipvs0', state: 'DOWN', addresses: ['10.96.0.1/32', '10.96.0.10/32'] },
    ]);
  });
});
