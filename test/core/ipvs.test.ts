// IPVS mode's virtual servers read from what people paste: `ipvsadm -Ln` (with the prompt and the
// command around it) and `ipvsadm-save -n`, into the same Service trees: each real server's share
// (one each for rr over the weights above 0: kube-proxy's weight 1, 0 for a terminating endpoint),
// persistence as session affinity, no share for the connection-based schedulers. This kernel has no IPVS, so the
// listings are written in ipvsadm 1.31's layout (ipvsadm.c print_service_entry) rather than taken
// from a live node. IP conventions: Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, node 192.168.0.10.
import { ELISION_FORMS } from '../support/elision-forms.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { hostAndPort, isName, nameHost } from '../../src/core/dataplane/ipvs/read/addresses.js';
import { IpvsParseError, isIpvs, parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { buildIpvsTrees } from '../../src/core/dataplane/ipvs/trees.js';
import { treeSearchIndex } from '../../src/core/dataplane/search/tree-docs.js';
import { kdebug } from '../support/cli.js';

const LIST = `$ sudo ipvsadm -Ln
IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.1.3:53                Masq    1      0          0
UDP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          4
  -> 10.244.1.3:53                Masq    0      0          0
TCP  10.96.120.5:80 rr persistent 10800
  -> 10.244.1.7:80                Masq    1      0          0
TCP  10.96.7.7:8080 lc
  -> 10.244.1.8:8080              Masq    1      5          0
  -> 10.244.0.9:8080              Masq    1      0          0
TCP  [fd00:10:96::be]:80 rr
  -> [fd00:10:244:1::7]:80        Masq    1      0          0
$
`;

const SAVE = `-A -t 10.96.0.10:53 -s rr
-a -t 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1
-a -t 10.96.0.10:53 -r 10.244.1.3:53 -m -w 1
-A -u 10.96.0.10:53 -s rr
-a -u 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1
-a -u 10.96.0.10:53 -r 10.244.1.3:53 -m -w 0
-A -t 10.96.120.5:80 -s rr -p 10800
-a -t 10.96.120.5:80 -r 10.244.1.7:80 -m -w 1
-A -t 10.96.7.7:8080 -s lc
-a -t 10.96.7.7:8080 -r 10.244.1.8:8080 -m -w 1
-a -t 10.96.7.7:8080 -r 10.244.0.9:8080 -m -w 1
-A -t [fd00:10:96::be]:80 -s rr
-a -t [fd00:10:96::be]:80 -r [fd00:10:244:1::7]:80 -m -w 1
`;

/** Each tree: its id, affinity, and each endpoint's address and share. */
const brief = (text: string) =>
  buildIpvsTrees(parseIpvs(text)).services.map((t) => ({
    id: t.id,
    affinity: t.affinitySeconds,
    endpoints: t.endpoints.map((e) => `${e.address} ${e.shareUnknown ? '?' : e.probability}`),
  }));

describe('IPVS listings', () => {
  it('are told apart from other input', () => {
    assert.ok(isIpvs(LIST) && isIpvs(SAVE));
    assert.ok(!isIpvs('*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n'));
  });

  it('read into trees: shares of rr, persistence as affinity, none for lc, IPv6', () => {
    assert.deepEqual(brief(LIST), [
      {
        id: 'TCP 10.96.0.10:53',
        affinity: undefined,
        endpoints: ['10.244.0.2:53 0.5', '10.244.1.3:53 0.5'],
      },
      { id: 'TCP 10.96.120.5:80', affinity: 10800, endpoints: ['10.244.1.7:80 1'] },
      {
        id: 'TCP 10.96.7.7:8080',
        affinity: undefined,
        endpoints: ['10.244.1.8:8080 ?', '10.244.0.9:8080 ?'],
      },
      {
        id: 'TCP [fd00:10:96::be]:80',
        affinity: undefined,
        endpoints: ['[fd00:10:244:1::7]:80 1'],
      },
      // a terminating endpoint (weight 0) gets no new connection
      {
        id: 'UDP 10.96.0.10:53',
        affinity: undefined,
        endpoints: ['10.244.0.2:53 1', '10.244.1.3:53 0'],
      },
    ]);
  });

  it("an elision in another command's output above a listing is not the listing's", () => {
    const t = parseIpvs(`$ ip addr show kube-ipvs0
    inet 10.96.0.1/32 scope global kube-ipvs0
...
$ ipvsadm-save -n
-A -t 10.96.0.1:443 -s rr
-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1
`);
    assert.deepEqual(t.elided, []);
    const [vs] = buildIpvsTrees(t).services;
    assert.deepEqual([vs!.partial, vs!.endpoints.map((e) => e.probability)], [undefined, [1]]);
  });

  it('an elision limits the virtual server above it, and real servers below it have no owner', () => {
    const head = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
`;
    const t = parseIpvs(`${head}TCP  10.96.0.1:443 rr
  -> 172.18.0.2:6443              Masq    1      0          0
...
  -> 172.18.0.4:6443              Masq    1      0          0
TCP  10.96.45.12:80 rr
  -> 10.244.1.5:8080              Masq    1      0          0
  -> 10.244.2.7:8080              Masq    1      0          0
[snip]
`);
    assert.deepEqual(t.elided, [6, 11]);
    // 172.18.0.4 may be 10.96.0.1's or a virtual server's the elision left out: not read
    assert.deepEqual(t.ownerElided, [7]);
    const trees = buildIpvsTrees(t).services;
    assert.deepEqual(
      trees.map((x) => [
        x.id,
        x.endpoints.map((e) => e.address),
        x.endpoints.every((e) => e.shareUnknown),
      ]),
      [
        ['TCP 10.96.0.1:443', ['172.18.0.2:6443'], true],
        ['TCP 10.96.45.12:80', ['10.244.1.5:8080', '10.244.2.7:8080'], true],
      ],
    );
    assert.ok(trees.every((x) => /elision follows it at line (6|11)/.test(x.partial ?? '')));
    // a listing whose virtual servers are all left out is not said to have none
    const r = kdebug(['rules', '--file', '-'], { input: `${head}...\n` });
    assert.match(
      r.stdout,
      /no Service found in the paste: the listing is not whole \(line 4 elides part of\s+it\)/,
    );
    assert.doesNotMatch(r.stdout, /no virtual server in the listing/);
  });

  it('ipvsadm-save: an elision limits the virtual server before it and the one its next real server names', () => {
    const t = parseIpvs(`-A -t 10.96.0.1:443 -s rr
-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1
-A -t 10.96.0.10:53 -s rr
...
-a -t 10.96.0.1:443 -r 172.18.0.4:6443 -m -w 1
-A -t 10.96.0.20:80 -s rr
-a -t 10.96.0.20:80 -r 10.244.1.5:80 -m -w 1
[snip]
-a -t 10.96.0.30:80 -r 10.244.1.6:80 -m -w 1
-A -t 10.96.0.40:80 -s rr
`);
    assert.deepEqual(t.elided, [4, 8]);
    // 10.96.0.30's -A line is among those [snip] left out: its real server is not read
    assert.deepEqual(t.ownerElided, [9]);
    assert.deepEqual(
      buildIpvsTrees(t).services.map((x) => [
        x.id,
        x.endpoints.map((e) => [e.address, Boolean(e.shareUnknown)]),
        x.partial,
      ]),
      [
        ['TCP 10.96.0.10:53', [], 'an elision follows it at line 4: it may have more real servers'],
        [
          'TCP 10.96.0.1:443',
          [
            ['172.18.0.2:6443', true],
            ['172.18.0.4:6443', true],
          ],
          'an elision precedes its real servers at line 4: it may have more',
        ],
        [
          'TCP 10.96.0.20:80',
          [['10.244.1.5:80', true]],
          'an elision follows it at line 8: it may have more real servers',
        ],
        // ipvsadm-save prints its real servers after it, below the elisions: none is left out
        [
          'TCP 10.96.0.40:80',
          [],
          // the paste's last line: its real servers, if any, would follow it
          'the paste ends at its row (line 10): its real servers, if it has any, are not in the paste',
        ],
      ],
    );
  });

  it('an elision above the listing with no header below: its real servers before any virtual server have no owner, the rest is read', () => {
    const t = parseIpvs(`...
  -> 10.244.0.3:53                Masq    1      0          0
TCP  10.96.0.1:443 rr
  -> 172.18.0.3:6443              Masq    1      0          0
`);
    assert.deepEqual(t.elided, [1]);
    assert.deepEqual(t.ownerElided, [2]);
    assert.deepEqual(t.skipped, []);
    assert.deepEqual(
      buildIpvsTrees(t).services.map((x) => [x.id, x.endpoints.map((e) => e.address)]),
      [['TCP 10.96.0.1:443', ['172.18.0.3:6443']]],
    );
    // above ipvsadm's header it elides nothing of the listing: skipped
    const headed = parseIpvs(
      `...\nIP Virtual Server version 1.2.1 (size=4096)\n${LIST.split('\n').slice(2).join('\n')}`,
    );
    assert.deepEqual([headed.elided, headed.skipped[0]], [[], 1]);
  });

  it('calls only provable node ports by kind: a Service IP is not called a cluster IP', () => {
    const kinds = (save: string) =>
      buildIpvsTrees(parseIpvs(save)).services.flatMap((t) =>
        t.entries.map((e) => `${e.address}:${e.port} ${e.kind}${e.label ? ' labelled' : ''}`),
      );
    const vs = (address: string) =>
      `-A -t ${address} -s rr\n-a -t ${address} -r 10.244.1.5:80 -m -w 1\n`;
    // kube-proxy binds cluster, external and load-balancer IPs alike: the listing cannot tell
    assert.deepEqual(kinds(vs('10.96.0.1:443') + vs('203.0.113.50:443')), [
      '10.96.0.1:443 virtual-server labelled',
      '203.0.113.50:443 virtual-server labelled',
    ]);
    // a lone node-range port may be a node port or a Service IP's port: unknown, unlabelled
    assert.deepEqual(kinds(vs('10.96.0.1:443') + vs('10.96.4.4:30080')), [
      '10.96.0.1:443 virtual-server labelled',
      '10.96.4.4:30080 virtual-server',
    ]);
    // the same node-range port on two addresses, or on loopback: a node port
    assert.deepEqual(
      kinds(vs('10.96.0.1:443') + vs('192.168.0.10:30080') + vs('127.0.0.1:30080')),
      [
        '10.96.0.1:443 virtual-server labelled',
        '192.168.0.10:30080 node-port',
        '127.0.0.1:30080 node-port',
      ],
    );
    // a Service IP's port is the Service port, its address no cluster IP
    const [t] = buildIpvsTrees(parseIpvs(vs('203.0.113.50:443'))).services;
    assert.deepEqual([t!.port, t!.clusterIP], [443, undefined]);
    // no Service IP is on loopback: a port there is a node port on every address, whatever the
    // node-port range (--service-node-port-range 80-32767)
    assert.deepEqual(kinds(vs('127.0.0.1:8080') + vs('192.168.0.10:8080') + vs('[::1]:443')), [
      '::1:443 node-port',
      '127.0.0.1:8080 node-port',
      '192.168.0.10:8080 node-port',
    ]);
    // with the objects read, a virtual server none of them names is not "a listing does not say"
    const known = buildIpvsTrees(parseIpvs(vs('10.96.0.77:80')), { known: new Map() });
    assert.deepEqual(
      known.services.flatMap((x) => x.entries.map((e) => [e.kind, e.label])),
      [['virtual-server', undefined]],
    );
  });

  it('a virtual server of unknown kind is found by its address in a search', () => {
    const trees = buildIpvsTrees(
      parseIpvs(`-A -t 10.96.12.7:80 -s rr\n-a -t 10.96.12.7:80 -r 10.244.1.5:80 -m -w 1\n`),
    );
    for (const q of ['10.96.12.7', '10.96.12.7:80'])
      assert.ok(
        treeSearchIndex(trees, 'ipvs')
          .search(q)
          .some((h) => h.kind === 'service' && h.service === 'TCP 10.96.12.7:80'),
        q,
      );
  });

  it("ipvsadm-save's tunnel options (1.31's --tun-type/--tun-port/--tun-*csum) read; unknown ones skipped, said", () => {
    const tun = (last: string) =>
      `-A -t 10.96.0.20:80 -s rr\n-a -t 10.96.0.20:80 -r 10.244.0.5:80 -i -w 1 ${last}\n-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1\n`;
    for (const opts of [
      '--tun-type gue --tun-port 6080 --tun-remcsum',
      '--tun-type gre --tun-csum',
    ]) {
      const t = parseIpvs(tun(opts));
      assert.deepEqual(
        t.services.map((s) => `${s.address} ${s.realServers.map((r) => r.address).join()}`),
        ['10.96.0.20:80 10.244.0.5:80', '10.96.0.1:443 172.18.0.2:6443'],
      );
      assert.equal(t.unknownOptions, undefined);
    }
    const t = parseIpvs(tun('--frob 3 --zap'));
    assert.deepEqual(t.unknownOptions, [{ line: 2, options: ['--frob 3', '--zap'] }]);
    assert.equal(t.services[0]!.realServers.length, 1);
  });

  it('ipvsadm-save -n reads into the same trees as ipvsadm -Ln', () => {
    assert.deepEqual(brief(SAVE), brief(LIST));
  });

  it('skips the lines around a paste and names them; a broken line of its own is FILE:LINE', () => {
    assert.deepEqual(parseIpvs(LIST).skipped, [1, 18]);
    assert.throws(
      () => parseIpvs('TCP  10.96.0.10:53 rr\n  -> garbage\nTCP  10.96.0.1:443 rr\n', 'pasted.txt'),
      (e: unknown) => e instanceof IpvsParseError && /^pasted\.txt:2: /.test(e.message),
    );
  });

  it("DPVS's ipvsadm: its MATCH virtual servers are named as DPVS's, never a real server without one", () => {
    // iqiyi/dpvs tools/ipvsadm print_service_entry: a match service prints "MATCH proto,from=...",
    // and its -S form "-A -H proto=...": packets selected by ranges and interfaces for its SNAT
    const head =
      'IP Virtual Server version 0.0.0 (size=0)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n';
    const match =
      'MATCH tcp,from=172.16.0.0-172.16.255.254:0-0,oif=dpdk1 rr\n  -> 192.168.10.2:0               SNAT    100    0          0\n  -> 192.168.10.4:0               SNAT    100    0          0\n';
    assert.throws(
      () => parseIpvs(`${head}${match}`, 'p.txt'),
      (e: unknown) =>
        e instanceof IpvsParseError &&
        /^p\.txt:4: this is DPVS's ipvsadm .*line 4\).*no Service is in it$/.test(e.message),
    );
    // beside an address's virtual server: that one read, the MATCH one and its real servers named
    const t = parseIpvs(
      `${head}${match}TCP  10.0.0.100:80 rr\n  -> 192.168.100.2:80             FullNat 1      0          0\n`,
    );
    assert.deepEqual(
      t.services.map((s) => [s.address, s.realServers.map((r) => r.address)]),
      [['10.0.0.100:80', ['192.168.100.2:80']]],
    );
    assert.deepEqual(t.dpvs, { match: [4], realServers: [5, 6] });
    assert.throws(
      () =>
        parseIpvs(
          '-A -H proto=udp,src-range=172.16.0.0-172.16.255.254,oif=dpdk1 -s rr\n-a -H proto=udp,src-range=172.16.0.0-172.16.255.254,oif=dpdk1 -r 192.168.10.2:0 -J -w 100\n',
        ),
      /DPVS's ipvsadm/,
    );
  });

  it('a virtual server line cut before its port is where the paste ends, never a virtual server', () => {
    // rancher-archives/rke#2804: the paste ends "TCP  19" (an address cut at its second digit)
    const head =
      'TCP  192.168.27.101:30424 rr\n  -> 10.42.95.251:80              Masq    1      0          0\n';
    const t = parseIpvs(`${head}TCP  19`);
    assert.deepEqual(
      t.services.map((s) => s.address),
      ['192.168.27.101:30424'],
    );
    assert.equal(t.cut, 3);
    // the same line inside the listing does not read, and says where
    assert.throws(
      () => parseIpvs(`${head}TCP  19\n${head}`, 'p.txt'),
      (e: unknown) => e instanceof IpvsParseError && /^p\.txt:3: /.test(e.message),
    );
  });

  it('a last real server line short of its connection columns is cut: its weight may be too', () => {
    // kubernetes/kubeadm#2205: the paste ends "  -> 10.244.36.198:80             Masq    1"
    const head =
      'Prot LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.0.0.5:30449 rr\n  -> 10.244.36.197:80             Masq    1      0          0\n';
    const cut = parseIpvs(`${head}  -> 10.244.36.198:80             Masq    1`);
    assert.equal(cut.cut, 5);
    assert.match(cut.services[0]!.partial ?? '', /cut at line 5/);
    const whole = parseIpvs(
      `${head}  -> 10.244.36.198:80             Masq    1      0          0\n`,
    );
    assert.equal(whole.cut, undefined);
    // kubernetes/kubernetes#123948: the paste ends after the address, before every column
    for (const end of ['', '\n']) {
      const bare = parseIpvs(`${head}  -> 10.244.36.198:80${end}`);
      assert.equal(bare.cut, 5);
      assert.match(bare.services[0]!.partial ?? '', /cut at line 5 inside its real servers/);
    }
  });

  it("a last line cut after a real server row's dash: the virtual server above is cut, not without endpoints", () => {
    // kubernetes/kubernetes#71071: `ipvsadm -L -n -t VIP:443`, the paste ending "  -"
    const head =
      'Prot LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.158.9.61:443 rr\n';
    const cut = parseIpvs(`${head}  -`);
    assert.equal(cut.cut, 4);
    assert.match(cut.services[0]!.partial ?? '', /cut at line 4 inside its real servers/);
    // a dash in the middle of a paste is prose skipped, not a cut
    assert.equal(parseIpvs(`${head}  -\nTCP  10.0.0.1:443 rr\n`).cut, undefined);
  });

  it('--stats / --rate virtual server lines without their header are an ipvsadm listing; one named again after a label is the same', () => {
    // iqiyi/dpvs#386: '--stats', a line, 'sleep 1', the line again, '--rate', the line again
    const text = [
      '--stats',
      'TCP  VIP:https        2515932  125426K        0   13034M        0',
      'sleep 1',
      'TCP  VIP:https        2516461  125451K        0   13036M        0',
      '',
      '--rate',
      'TCP  VIP:https              0        0        0        0        0',
    ].join('\n');
    assert.ok(isIpvs(text));
    const t = parseIpvs(text, 'p.txt');
    assert.equal(t.services.length, 1);
    // after a line of its own ('sleep 1', '--rate'): ipvsadm run again, not the lines pasted twice
    assert.deepEqual([t.duplicates, t.samples], [[], [4, 7]]);
  });

  it('a header cut inside a title (or the version line before its ")") is where the paste ends', () => {
    // cloudnativelabs/kube-router#159: the paste ends "  -> RemoteAddress:Port ... ActiveConn InActC"
    const version = 'IP Virtual Server version 1.2.1 (size=4096)\n';
    const prot = 'Prot LocalAddress:Port Scheduler Flags\n';
    const cut = parseIpvs(
      `# ipvsadm -ln\n${version}${prot}  -> RemoteAddress:Port           Forward Weight ActiveConn InActC`,
    );
    assert.deepEqual([cut.cut, cut.services.length], [4, 0]);
    assert.equal(parseIpvs(`${version}Prot LocalAddress:Port Scheduler Fl`).cut, 2);
    assert.equal(parseIpvs('IP Virtual Server version 1.2.1 (size=40').cut, 1);
    assert.equal(
      parseIpvs('Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutB').cut,
      1,
    );
    // whole headers, every view's, are no cut
    for (const whole of [
      `${version}${prot}  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn`,
      `${version}Prot LocalAddress:Port                 CPS    InPPS   OutPPS    InBPS   OutBPS\n  -> RemoteAddress:Port`,
      'Prot LocalAddress:Port            Weight    PersistConn ActiveConn InActConn',
    ])
      assert.equal(parseIpvs(whole).cut, undefined, whole);
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], {
      input: `${version}${prot}  -> RemoteAddress:Port           Forward Weight ActiveConn InActC`,
    }).stdout;
    assert.match(text, /cut at line 3, before any virtual server line/);
    assert.doesNotMatch(text, /no virtual server in the listing/);
  });

  it('a firewall-mark service is a tree of its own, and Route / Tunnel real servers are no DNAT', () => {
    // cloudnativelabs/kube-router#1169: kube-router's DSR, 'FWM  1481 rr' with Tunnel real servers
    const listing = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.76.40:80 rr
  -> 10.244.2.11:80               Masq    1      0          0
FWM  1481 rr
  -> 10.244.2.11:80               Tunnel  1      0          0
  -> 10.244.3.9:80                Tunnel  1      0          0
TCP  192.168.0.10:8080 wrr
  -> 192.168.0.21:8080            Route   1      0          0
`;
    const trees = buildIpvsTrees(parseIpvs(listing));
    const mark = trees.services.find((t) => t.id === 'FWM 1481');
    assert.ok(mark, trees.services.map((t) => t.id).join(', '));
    assert.deepEqual(
      mark.endpoints.map((e) => [e.address, e.probability, e.forward]),
      [
        ['10.244.2.11:80', 0.5, 'tunnel'],
        ['10.244.3.9:80', 0.5, 'tunnel'],
      ],
    );
    assert.deepEqual(
      mark.entries.map((e) => [e.address, e.port]),
      [[undefined, undefined]],
    );
    const routed = trees.services.find((t) => t.id === 'TCP 192.168.0.10:8080')!;
    assert.equal(routed.endpoints[0]!.forward, 'route');
    const masq = trees.services.find((t) => t.id === 'TCP 10.96.76.40:80')!;
    assert.equal(masq.endpoints[0]!.forward, undefined);
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], { input: listing }).stdout;
    assert.match(text, /entry {2}firewall mark 1481 \(/);
    assert.match(text, /IP-in-IP \(Tunnel\), no DNAT ->\s+10\.244\.3\.9:80/);
    assert.match(text, /direct routing \(Route\), no DNAT ->\s+192\.168\.0\.21:8080/);
    const doc = JSON.parse(
      kdebug(['rules', '--file', '-', '-o', 'json'], { input: listing }).stdout,
    ) as {
      services: { id: string; endpoints: { forward?: string }[] }[];
    };
    assert.equal(doc.services.find((s) => s.id === 'FWM 1481')!.endpoints[0]!.forward, 'tunnel');
  });

  it("an IPv6 firewall-mark service ('FWM  1481 IPv6 rr', saved with -6) is its own, beside the mark's IPv4 one", () => {
    const head =
      'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n';
    const v4 = 'FWM  1481 rr\n  -> 10.244.2.11:80  Route 1 0 0\n  -> 10.244.3.9:80   Route 1 0 0\n';
    const v6 =
      'FWM  1481 IPv6 rr\n  -> [fd00::11]:80   Route 1 0 0\n  -> [fd00::12]:80   Route 1 0 0\n';
    const both = parseIpvs(head + v4 + v6);
    assert.deepEqual(both.duplicates, []);
    assert.deepEqual(
      both.services.map((s) => [s.address, s.ipv6, s.scheduler, s.realServers.length]),
      [
        ['1481', undefined, 'rr', 2],
        ['1481', true, 'rr', 2],
      ],
    );
    const shares = (t: ReturnType<typeof parseIpvs>) =>
      buildIpvsTrees(t).services.map((x) => [x.id, x.endpoints.map((e) => e.probability)]);
    assert.deepEqual(shares(both), [
      ['FWM 1481', [0.5, 0.5]],
      ['FWM 1481 IPv6', [0.5, 0.5]],
    ]);
    // alone, "IPv6" is its family, not its scheduler
    assert.equal(parseIpvs(head + v6).services[0]!.scheduler, 'rr');
    // ipvsadm-save's -6 tells the same two apart
    const saved = parseIpvs(
      '-A -f 1481 -s rr\n-a -f 1481 -r 10.244.2.11:80 -g -w 1\n-A -f 1481 -6 -s rr\n-a -f 1481 -6 -r [fd00::11]:80 -g -w 1\n',
    );
    assert.deepEqual(
      [saved.duplicates, shares(saved)],
      [
        [],
        [
          ['FWM 1481', [1]],
          ['FWM 1481 IPv6', [1]],
        ],
      ],
    );
  });

  it('a firewall-mark service\'s JSON protocol is "" in its tree and entry alike, as rules v2 describes it', () => {
    const doc = JSON.parse(
      kdebug(['rules', '--file', '-', '-o', 'json'], {
        input: 'FWM  1481 rr\n  -> 10.244.2.11:80               Tunnel  1      0          0\n',
      }).stdout,
    ) as { services: { id: string; protocol: unknown; entries: { protocol: unknown }[] }[] };
    assert.deepEqual(
      doc.services.map((s) => [s.id, s.protocol, s.entries.map((e) => e.protocol)]),
      [['FWM 1481', '', ['']]],
    );
    // null or absent would be a new schemaVersion (test/schema/versions.test.ts): "" is said
    const defs = (
      JSON.parse(readFileSync('schema/rules.v2.json', 'utf8')) as {
        $defs: Record<string, { properties: { protocol: { description?: string } } }>;
      }
    ).$defs;
    for (const def of ['tree', 'entry'])
      assert.match(defs[def]!.properties.protocol.description ?? '', /"" .*firewall-mark/, def);
  });

  it("ipvsadm -l: a host name met again in one listing is another virtual server, and a name at ipvsadm's width is cut", () => {
    const head =
      'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n';
    // two node addresses resolving to one name (residentsummer's minikube): two virtual servers
    const two = parseIpvs(
      `${head}TCP  node-a:30080 rr\n  -> 10.244.1.4:80                Masq    1      0          0\nTCP  node-a:30080 rr\n  -> 10.244.2.5:80                Masq    1      0          0\n`,
    );
    assert.deepEqual(
      two.services.map((s) => [s.line, s.realServers.map((r) => r.address)]),
      [
        [4, ['10.244.1.4:80']],
        [6, ['10.244.2.5:80']],
      ],
    );
    assert.deepEqual([two.duplicates, two.sharedNames], [[], [4, 6]]);
    const ids = buildIpvsTrees(two).services.map((t) => t.id);
    assert.equal(new Set(ids).size, ids.length, ids.join(', '));
    // the same listing pasted twice (its header again) is still a repeat
    const twice = parseIpvs(
      `${head}TCP  node-a:30080 rr\n  -> 10.244.1.4:80                Masq    1      0          0\n${head}TCP  node-a:30080 rr\n  -> 10.244.1.4:80                Masq    1      0          0\n`,
    );
    assert.deepEqual([twice.services.length, twice.duplicates], [1, [9, 10]]);
    // kube-router#415: "TCP  " and a name cut at 33 characters, the port lost; a real server's at 28
    const cut = parseIpvs(
      `${head}TCP  ip-10-0-62-121.ec2.internal: rr\n  -> ip-10-0-62-92.ec2.internal:9 Masq    1      0          0\nTCP  ip-10-0-62-121.ec2.internal: rr\n  -> 100.96.6.18:9109             Masq    1      0          0\nTCP  ip-1`,
    );
    assert.deepEqual(
      cut.services.map((s) => [s.line, s.nameCut, s.realServers.length]),
      [
        [4, true, 1],
        [6, true, 1],
      ],
    );
    assert.deepEqual([cut.cutNames, cut.cut], [[4, 5, 6], 8]);
    const trees = buildIpvsTrees(cut).services;
    assert.deepEqual(
      trees.map((t) => [t.entries[0]!.address, t.entries[0]!.port ?? 0, t.endpoints.length]),
      [
        ['ip-10-0-62-121.ec2.internal', 0, 1],
        ['ip-10-0-62-121.ec2.internal', 0, 1],
      ],
    );
  });

  it("ipvsadm -l's cut names: a real server's host with its port unknown, a virtual server of no kind it cannot show, each its own chain", () => {
    // kube-router#415: every virtual server 'TCP  ip-10-0-62-121.ec2.internal:' (its port cut)
    const listing = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  ip-10-0-62-121.ec2.internal: rr
  -> ip-10-0-62-92.ec2.internal:9 Masq    1      0          0
TCP  ip-10-0-62-121.ec2.internal: rr
  -> 100.96.6.18:9109             Masq    1      0          0
TCP  node-a:frobnitz rr
  -> 100.96.6.19:9109             Masq    1      0          0
`;
    const trees = buildIpvsTrees(parseIpvs(listing)).services;
    // a port not in the paste (cut, or a service name the node's database does not give here)
    assert.deepEqual(
      trees.map((t) => [t.entries[0]!.kind, t.entries[0]!.port, t.clusterIP, t.nodePorts]),
      [
        ['virtual-server', undefined, undefined, []],
        ['virtual-server', undefined, undefined, []],
        ['virtual-server', undefined, undefined, []],
      ],
    );
    const chains = trees.flatMap((t) => [t.chains.svc, ...t.endpoints.map((e) => e.chain)]);
    assert.equal(new Set(chains).size, trees.length, chains.join(', '));
    const cut = trees.flatMap((t) => t.endpoints).find((e) => e.line === 5)!;
    assert.equal(cut.address, 'ip-10-0-62-92.ec2.internal');
    assert.match(cut.portUnknown ?? '', /cut its name .*port is not in the listing/);
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], { input: listing }).stdout;
    assert.doesNotMatch(text, /cluster IP|node port|internal:9\b/);
    assert.match(text, /DNAT ->\s+ip-10-0-62-92\.ec2\.internal:port unknown/);
    const doc = JSON.parse(
      kdebug(['rules', '--file', '-', '-o', 'json'], { input: listing }).stdout,
    ) as { services: { endpoints: { address: string; portUnknown?: string }[] }[] };
    const json = doc.services.flatMap((s) => s.endpoints).find((e) => e.portUnknown);
    assert.equal(json?.address, 'ip-10-0-62-92.ec2.internal');
  });

  it("ipvsadm -l's real server cut before any ':' is no whole host (JSON address null, hostStart), and a name may start with a digit", () => {
    // 'ip-10-0-162-192.us-west-2.co' is the 28 characters ipvsadm prints of a longer host:port
    const listing = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  ip-10-100-0-1.us-west-2.compu rr
  -> ip-10-0-162-192.us-west-2.co Masq    1      0          0
  -> 10-244-1-7.kube-dns.kube-sys Masq    1      0          0
  -> 10.244.0.9:53                Masq    1      0          0
`;
    const t = parseIpvs(listing);
    assert.deepEqual(
      t.services[0]!.realServers.map((r) => [r.line, r.nameCut]),
      [
        [5, true],
        [6, true],
        [7, undefined],
      ],
    );
    const eps = buildIpvsTrees(t).services[0]!.endpoints;
    assert.deepEqual(
      eps.slice(0, 2).map((e) => [e.address, e.hostStart]),
      [
        [undefined, 'ip-10-0-162-192.us-west-2.co'],
        [undefined, '10-244-1-7.kube-dns.kube-sys'],
      ],
    );
    assert.match(eps[0]!.portUnknown ?? '', /before any ":": its host may be cut too/);
    // found by what ipvsadm printed of it
    const hits = treeSearchIndex(buildIpvsTrees(t), 'ipvs').search('ip-10-0-162');
    assert.ok(hits.some((h) => h.kind === 'endpoint' && h.text === 'ip-10-0-162-192.us-west-2.co'));
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], { input: listing }).stdout;
    assert.match(
      text,
      /DNAT -> a host whose name starts[\s│]+ip-10-0-162-192\.us-west-2\.co \(cut\)/,
    );
    const doc = JSON.parse(
      kdebug(['rules', '--file', '-', '-o', 'json'], { input: listing }).stdout,
    ) as { services: { endpoints: { address: string | null; hostStart?: string }[] }[] };
    assert.deepEqual(
      doc.services[0]!.endpoints.map((e) => [e.address, e.hostStart]),
      [
        [null, 'ip-10-0-162-192.us-west-2.co'],
        [null, '10-244-1-7.kube-dns.kube-sys'],
        ['10.244.0.9:53', undefined],
      ],
    );
  });

  it('a virtual or real server line without its address (a page that dropped it) is not read as a host', () => {
    // gist.github.com/wzhliang: "TCP rr" and "-> Masq 1 0 0" twice, every address gone
    const t = parseIpvs(
      'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n-> RemoteAddress:Port Forward Weight ActiveConn InActConn\nTCP rr\n-> Masq 1 0 0\n-> Masq 1 0 0\nTCP  10.96.0.10:53 rr\n  -> 10.244.0.2:53                Masq    1      0          0\n',
    );
    assert.deepEqual(
      [t.noAddress, t.duplicates, t.names, t.services.map((s) => s.address)],
      [[4, 5, 6], [], false, ['10.96.0.10:53']],
    );
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], {
      input: 'Prot LocalAddress:Port Scheduler Flags\nTCP rr\n-> Masq 1 0 0\n',
    }).stdout;
    assert.match(text, /lines 2, 3: virtual or real server lines without their\s+address/);
    assert.match(text, /virtual server lines hold no address/);
  });

  it('the titles and lines re-spaced by hand (a study note: "->  RemoteAddress") read as ipvsadm\'s', () => {
    // helowd/study-notes: every line indented, two spaces after "->", the columns squeezed
    const t = parseIpvs(
      '# ipvsadm -ln\n IP Virtual Server version 1.2.1 (size=4096)\n  Prot LocalAddress:Port Scheduler Flags\n    ->  RemoteAddress:Port           Forward  Weight ActiveConn InActConn     \n  TCP  10.102.128.4:80 rr\n    ->  10.244.3.6:9376    Masq    1       0          0         \n    ->  10.244.1.7:9376    Masq    1       0          0\n',
    );
    assert.deepEqual(
      t.services.map((s) => [s.address, s.realServers.map((r) => [r.address, r.weight])]),
      [
        [
          '10.102.128.4:80',
          [
            ['10.244.3.6:9376', 1],
            ['10.244.1.7:9376', 1],
          ],
        ],
      ],
    );
  });

  it('a real server line without its address among read ones: its virtual server is partial, no share stated', () => {
    const listing =
      'TCP  10.96.0.10:53 rr\n  -> 10.244.0.2:53                Masq    1      0          0\n  -> Masq    1      0          0\n';
    const t = parseIpvs(listing);
    assert.deepEqual(t.noAddress, [3]);
    assert.match(t.services[0]!.partial ?? '', /real server at line 3 .*without its address/);
    const [tree] = buildIpvsTrees(t).services;
    assert.ok(tree?.partial, 'the tree says why it may hold more');
    assert.deepEqual(
      tree.endpoints.map((e) => [e.address, Boolean(e.shareUnknown)]),
      [['10.244.0.2:53', true]],
    );
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], { input: listing }).stdout;
    assert.doesNotMatch(text, /100%/);
    assert.match(text, /real server at\s+line 3/);
  });

  it("an author's snip line is an elision: virtual servers may be missing", () => {
    for (const snip of ELISION_FORMS)
      assert.deepEqual(
        parseIpvs(
          `Prot LocalAddress:Port Scheduler Flags\n${snip}\nTCP  10.96.0.10:53 rr\n  -> 10.244.0.2:53                Masq    1      0          0\n`,
        ).elided,
        [2],
        snip,
      );
  });

  it('grep -A\'s "--" between the groups it printed: the virtual server above it, and the last group\'s, may have more real servers', () => {
    const t = parseIpvs(`TCP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.0.3:53                Masq    1      0          0
--
UDP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
`);
    assert.deepEqual(t.elided, [4]);
    assert.deepEqual(
      buildIpvsTrees(t).services.map((x) => [
        x.id,
        x.endpoints.every((e) => e.shareUnknown !== undefined),
        x.partial,
      ]),
      [
        [
          'TCP 10.96.0.10:53',
          true,
          'an elision follows it at line 4: it may have more real servers',
        ],
        // the last group ends where its window did, or the input: which, the paste does not say
        [
          'UDP 10.96.0.10:53',
          true,
          'grep\'s window (its "--" lines say grep -A/-B/-C printed this; its size is not in the paste) may end inside its real servers, at line 6: more may follow past it',
        ],
      ],
    );
  });

  it("an address's host and port as ipvsadm prints them, one reading for names and numbers", () => {
    assert.deepEqual(
      [
        '10.96.0.10:53',
        '[fd00::a]:53',
        'node-a:https',
        'ip-10-0-62-121.ec2.internal:',
        'node-a',
      ].map(hostAndPort),
      [
        { host: '10.96.0.10', port: '53' },
        { host: 'fd00::a', port: '53' },
        { host: 'node-a', port: 'https' },
        { host: 'ip-10-0-62-121.ec2.internal', port: '' },
        undefined,
      ],
    );
    assert.deepEqual(
      [
        '10.96.0.10:53',
        '[fd00::a]:53',
        'node-a:https',
        'ip-10-0-62-121.ec2.internal:',
        '[(null)]:5001',
      ].map(isName),
      [false, false, true, true, false],
    );
    // an address redacted by hand is an address; a lone "_" is no name
    assert.deepEqual(
      ['10.96.0.x', '10.96.x.x', '_', '10-244-1-7.kube-dns.kube-sys'].map(nameHost),
      [false, false, false, true],
    );
  });

  it('kdebug rules --file prints them, in JSON with mode ipvs, and searches them', () => {
    const r = kdebug(['rules', '--file', '-', '-o', 'json'], { input: LIST });
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      mode: string;
      counts: { virtualServers: number; realServers: number };
      services: { id: string; endpoints: { address: string; probability: number }[] }[];
    };
    assert.equal(doc.mode, 'ipvs');
    assert.deepEqual(doc.counts, { virtualServers: 5, realServers: 8 });
    assert.match(
      r.stderr,
      /warning: skipped lines 1, 18 of <stdin>: not part of an ipvsadm listing/,
    );
    const search = kdebug(['rules', '--file', '-', '--search', '10.244.1.7', '-o', 'json'], {
      input: LIST,
    });
    assert.equal(search.code, 0, search.stderr);
    assert.ok(
      (JSON.parse(search.stdout) as { hits: { text: string }[] }).hits.some(
        (h) => h.text === '10.244.1.7:80',
      ),
    );
  });
});

describe('IPVS schedulers: the shares the kernel gives by the weights, none where it gives none', () => {
  const listing = (scheduler: string, w: [number, number]) =>
    `-A -t 10.96.7.7:8080 -s ${scheduler}\n-a -t 10.96.7.7:8080 -r 10.244.1.8:8080 -m -w ${w[0]}\n-a -t 10.96.7.7:8080 -r 10.244.0.9:8080 -m -w ${w[1]}\n`;
  const endpoints = (scheduler: string, w: [number, number]) =>
    buildIpvsTrees(parseIpvs(listing(scheduler, w))).services[0]!.endpoints;
  const shares = (scheduler: string, w: [number, number]) =>
    endpoints(scheduler, w).map((e) => (e.shareUnknown ? null : Math.round(e.probability * 100)));

  it('rr goes round the real servers above weight 0, one each (ip_vs_rr.c): weights 1 and 2 are 50/50', () => {
    assert.deepEqual(shares('rr', [1, 2]), [50, 50]);
    assert.deepEqual(shares('rr', [0, 2]), [0, 100]);
  });

  it('wrr picks each as often as its weight (ip_vs_wrr.c): weights 1 and 2 are 33/67', () => {
    assert.deepEqual(shares('wrr', [1, 2]), [33, 67]);
    assert.deepEqual(shares('wrr', [3, 0]), [100, 0]);
  });

  it('the others fix no share: unknown, with what picks the real server', () => {
    const lc = endpoints('lc', [1, 1]);
    assert.deepEqual(
      lc.map((e) => e.shareUnknown),
      Array(2).fill('scheduler lc picks the real server by the fewest connections: no fixed share'),
    );
    assert.match(endpoints('sh', [1, 1])[0]!.shareUnknown!, /by a hash of the source address/);
    assert.doesNotMatch(endpoints('sh', [1, 1])[0]!.shareUnknown!, /connections/);
    assert.match(endpoints('mh', [1, 1])[0]!.shareUnknown!, /Maglev hashing of the source address/);
    assert.match(endpoints('xyz', [1, 1])[0]!.shareUnknown!, /xyz, which kdebug does not model/);
    for (const s of ['wlc', 'sed', 'nq', 'lblc', 'lblcr', 'dh', 'fo', 'ovf', 'twos'])
      assert.deepEqual(shares(s, [1, 2]), [null, null], s);
  });

  it('a lone real server above weight 0 takes every new connection, whatever the scheduler; weight 0 none', () => {
    assert.deepEqual(shares('lc', [0, 1]), [0, 100]);
    assert.deepEqual(shares('sh', [5, 0]), [100, 0]);
  });

  it('text, JSON: an unknown share is "?" with its reason, null in JSON, no percentage', () => {
    const text = kdebug(['rules', '--file', '-'], { input: listing('lc', [1, 1]) });
    assert.equal(text.code, 0, text.stderr);
    // the text wraps at the terminal's width, its tree's rail beside the break
    const flat = text.stdout.replace(/[\s│]+/g, ' ');
    assert.ok(
      flat.includes(
        '? TCP 10.96.7.7:8080 DNAT -> 10.244.1.8:8080 (share unknown: scheduler lc picks the real server by the fewest connections: no fixed share',
      ),
      text.stdout,
    );
    assert.doesNotMatch(text.stdout, /50(\.0)?%/);
    const json = kdebug(['rules', '--file', '-', '-o', 'json'], {
      input: listing('lc', [100, 10]),
    });
    assert.equal(json.code, 0, json.stderr);
    assert.doesNotMatch(json.stdout, /"probability": ?0\.9/);
    assert.match(json.stdout, /"probability": ?null/);
  });
});
