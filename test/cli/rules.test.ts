// The built `kdebug rules` against the seed dumps and the demo snapshot (the demo cluster:
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, nginx-svc 10.1.190.219:8080).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const SEED_NAT = 'test/fixtures/seed-nat-S.txt';
const DEMO = 'snapshots/nginx-svc';

/** Wide enough that no line wraps: these read the content (widths.test.ts the wrapping). */
const WIDE = { env: { COLUMNS: '200' } };

describe('kdebug rules', () => {
  it('calls no chain of a dump cut short an orphan: the jumps to it may lie past the cut', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-rules-cut-'));
    try {
      cpSync('snapshots/stale-endpoint', dir, { recursive: true });
      const dump = 'nodes/vm-12-11-centos/iptables-save.txt';
      const whole = readFileSync(join('snapshots/stale-endpoint', dump), 'utf8');
      writeFileSync(join(dir, dump), whole.split('\n').slice(0, 132).join('\n') + '\n');
      const args = ['rules', '--snapshot', dir, '--node', 'vm-12-11-centos'];
      const text = kdebug(args).stdout;
      assert.doesNotMatch(text, /orphan chains \(/);
      assert.match(
        text,
        /^chains no rule in the dump reaches, not called orphans \(the dump is cut/m,
      );
      // a node's recorded dump is no paste
      assert.doesNotMatch(text, /\bpaste\b/);
      const doc = JSON.parse(kdebug([...args, '-o', 'json']).stdout);
      assert.ok(doc.orphans.length > 0);
      for (const o of doc.orphans)
        assert.equal(
          o.reachUnknown,
          'the dump is cut short after line 132: a jump to them may lie past the cut',
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a Cilium agent listing: each frontend, its backends and their states', () => {
    const file = 'test/fixtures/cilium/pastes/cilium-service-list-quarantined.txt';
    const r = kdebug(['rules', '--file', file, '-o', 'text'], WIDE);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /: Cilium service list, 1 frontend, 3 backends$/m);
    assert.match(
      r.stdout,
      /0% {2}backend 10\.244\.0\.58:80 {2}\(quarantined: no new connections\)/,
    );
    assert.match(r.stdout, /50% {2}backend 10\.244\.1\.59:80 {2}\(active\)/);
    const json = kdebug([
      'rules',
      '--file',
      'test/fixtures/cilium/pastes/cilium-db-frontends-repl-kind.txt',
      '-o',
      'json',
    ]);
    const doc = JSON.parse(json.stdout) as {
      mode: string;
      form: string;
      services: { name: string; endpoints: { address: string; backendState: string }[] }[];
    };
    assert.equal(doc.mode, 'cilium');
    assert.equal(doc.form, 'db-frontends');
    const dns = doc.services.find((t) => t.name === 'kube-system/kube-dns:dns')!;
    assert.deepEqual(
      dns.endpoints.map((e) => e.backendState),
      ['active', 'active'],
    );
  });

  it("says what a Cilium listing holds that it does not model: the map's flags, 1.19's drop entries", () => {
    const file = 'test/fixtures/cilium/pastes/cilium-db-frontends-bpf-45252-grep.txt';
    const r = kdebug(['rules', '--file', file, '-o', 'text'], WIDE);
    assert.equal(r.code, 0, r.stderr);
    // the drop entry is no Service frontend: counted apart
    assert.match(
      r.stdout,
      /: Cilium load-balancer table \(db\/show frontends\) and bpf lb list \(the BPF maps\), 3 frontends, 3 backends, 1 wildcard drop entry$/m,
    );
    // each at the bpf lb list row it stands on: the flags of 10.96.15.6:80/TCP (the drop entry's
    // are its own), the drop entry
    assert.match(
      r.stdout,
      /^warning: \S+-45252-grep\.txt:9: flags of the listing, kept as listed and not compared here: Local \(1 frontend\), non-routable \(1 frontend\)$/m,
    );
    assert.match(
      r.stdout,
      /^warning: \S+-45252-grep\.txt:10: 1 wildcard drop entry \(10\.96\.15\.6:0\/ANY\): /m,
    );
    // no tree of its own: it is no Service port
    assert.doesNotMatch(r.stdout, /^10\.96\.15\.6:0/m);
    const doc = JSON.parse(kdebug(['rules', '--file', file, '-o', 'json']).stdout) as {
      counts: Record<string, number>;
      warnings: { line: number | null; message: string }[];
    };
    assert.deepEqual(doc.counts, { frontends: 3, backends: 3, dropEntries: 1 });
    assert.deepEqual(
      doc.warnings.map((w) => [w.line, w.message.replace(/^\S+\.txt:\d+: /, '').slice(0, 20)]),
      [
        // each listing is piped through grep -E: named, with the rows it printed
        [1, 'lines 3-5 are the ou'],
        [7, 'lines 9-11 are the o'],
        [10, '1 wildcard drop entr'],
        [9, 'flags of the listing'],
      ],
    );
  });

  it('says both where a Cilium listing is elided and its CLI could not print entries: a line each', () => {
    const input =
      'ID   Frontend        Backend\n...\n1    10.96.0.1:443   1 => 10.0.0.1:6443\nerror parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}\n';
    const r = kdebug(['rules', '--file', '-', '-o', 'text'], { input, env: { COLUMNS: '400' } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.stdout.split('\n').filter((l) => l.startsWith('warning: <stdin>:')),
      [
        'warning: <stdin>:2: rows left out ("..."): what is not in the paste is not shown, and nothing is said about it',
        'warning: <stdin>:4: Cilium\'s CLI printed "error parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}": the entries it could not parse are not in its listing: what is not in the paste is not shown, and nothing is said about it',
      ],
    );
    // -o json: each warning at the line the listing is cut at, the line its text names; the
    // message is the same words, the position only in its field
    const doc = JSON.parse(kdebug(['rules', '--file', '-', '-o', 'json'], { input }).stdout) as {
      warnings: { line: number | null; message: string }[];
    };
    assert.deepEqual(
      doc.warnings.map((w) => w.line),
      // no protocols printed: the whole listing's, no line
      [2, 4, null],
    );
    assert.ok(doc.warnings.every((w) => !w.message.startsWith('<stdin>')));
  });

  it('says which map a Cilium maps dump lacks whole: not read, not an empty map', () => {
    const input = readFileSync(
      'test/fixtures/cilium/vectors/05-v118-nodeport-two-services/expected-maps.txt',
      'utf8',
    ).replace(/^REV: .*\n/gm, '');
    const r = kdebug(['rules', '--file', '-', '-o', 'text'], { input, env: { COLUMNS: '400' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^warning: no REV line, though every Service entry has one: the reverse-NAT map is not in the dump, so the addresses replies get back are not read: nothing is said about it$/m,
    );
    const doc = JSON.parse(kdebug(['rules', '--file', '-', '-o', 'json'], { input }).stdout) as {
      warnings: { line: number | null; message: string }[];
    };
    assert.deepEqual(
      doc.warnings.filter((w) => w.message.includes('REV')).map((w) => w.line),
      [null],
    );
  });

  it('says a Cilium listing it cannot read is one, not an internal error: the Services table', () => {
    const file =
      'test/fixtures/cilium/vectors/03-v118-clusterip-session-affinity/expected-services.txt';
    const r = kdebug(['rules', '--file', file]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^kdebug: test\/fixtures\/\S+\/expected-services\.txt:1: Cilium's Services table \(db\/show services\) holds each Service's policies, not its frontends or backends/,
    );
  });

  it('prints the tree of a dump as text', () => {
    const r = kdebug(['rules', '--file', SEED_NAT, '-o', 'text'], WIDE);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^default\/nginx-svc:http {2}10\.1\.190\.219:8080\/tcp$/m);
    assert.match(
      r.stdout,
      /├─ +50% {2}KUBE-SEP-SMDVMBZNJPO5AA7R {2}DNAT -> 10\.244\.0\.3:80 {2}\(hairpin masquerade\)/,
    );
    assert.match(r.stdout, /└─ +50% {2}KUBE-SEP-FNO4E6JYD7EGUHTP {2}DNAT -> 10\.244\.1\.7:80/);
    assert.match(r.stdout, /masquerade {2}! -s 10\.244\.0\.0\/16 {2}\(KUBE-SERVICES line 19\)/);
  });

  // what the real kube-proxy 1.37 wrote in nftables mode (see test/core/nftables.test.ts)
  const NFT = 'test/fixtures/nft/kube-proxy-1.37-node-a.json';

  it('reads nft -j list table ip kube-proxy: the same trees, as text and JSON with mode nftables', () => {
    const text = kdebug(['rules', '--file', NFT, '-o', 'text'], WIDE);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^file .*: nftables table ip kube-proxy, 53 chains, 89 rules/);
    assert.match(
      text.stdout,
      /matrix\/cluster-ip:http {2}10\.96\.33\.216:80\/tcp\n {2}entry {2}cluster IP 10\.96\.33\.216:80\/tcp {2}\(service-ips -> service-FN4G4LLS-matrix\/cluster-ip\/tcp\/http\)/,
    );
    const json = kdebug(['rules', '--file', NFT, '-o', 'json']);
    const doc = JSON.parse(json.stdout) as {
      mode: string;
      services: { name: string; endpoints: { address: string; probability: number }[] }[];
    };
    assert.equal(doc.mode, 'nftables');
    assert.deepEqual(
      doc.services
        .find((t) => t.name === 'matrix/cluster-ip:http')
        ?.endpoints.map((e) => [e.address, e.probability]),
      [
        ['10.244.1.4:80', 0.5],
        ['10.244.2.2:80', 0.5],
      ],
    );
  });

  it('reads the text listing a person pastes (nft list table), and names iptables-nft tables as such', () => {
    const text = kdebug(['rules', '--file', NFT.replace(/\.json$/, '.txt'), '-o', 'json']);
    assert.equal(text.code, 0, text.stderr);
    const json = kdebug(['rules', '--file', NFT, '-o', 'json']);
    const services = (out: string) => (JSON.parse(out) as { services: unknown }).services;
    assert.deepEqual(services(text.stdout), services(json.stdout));
    const pasted = kdebug(['rules', '--file', '-', '-o', 'json'], {
      input: `$ sudo nft list table ip kube-proxy\n${readFileSync(NFT.replace(/\.json$/, '.txt'), 'utf8')}$ \n`,
    });
    assert.equal(pasted.code, 0, pasted.stderr);
    assert.deepEqual(services(pasted.stdout), services(json.stdout));
    assert.match(
      pasted.stderr,
      /warning: skipped lines 1, 398 of <stdin>: not part of an nft table/,
    );
    const nat = kdebug(['rules', '--file', '-'], {
      input:
        'table ip nat {\n\tchain PREROUTING {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tcounter packets 0 bytes 0 jump KUBE-SERVICES\n\t}\n}\n',
    });
    assert.equal(nat.code, 2);
    assert.match(
      nat.stderr,
      /these are iptables-nft's tables \(ip nat\), iptables rules seen through nft: read them with iptables-save/,
    );
  });

  it('a paste cut short inside the table: read, with where it was cut as a warning', () => {
    const lines = readFileSync(NFT.replace(/\.json$/, '.txt'), 'utf8').split('\n');
    const cut = kdebug(['rules', '--file', '-', '-o', 'json'], {
      input: lines.slice(0, 60).join('\n'),
    });
    assert.equal(cut.code, 0, cut.stderr);
    const doc = JSON.parse(cut.stdout) as {
      warnings: { kind: string; line: number; message: string }[];
    };
    assert.deepEqual(
      doc.warnings.map((w) => [w.kind, w.line]),
      [['cut-short', 60]],
    );
    assert.match(
      doc.warnings[0]!.message,
      /inside table ip kube-proxy, map service-ips: it was cut there/,
    );
    const text = kdebug(['rules', '--file', '-'], { input: lines.slice(0, 60).join('\n') });
    assert.match(
      text.stdout,
      /^warning: <stdin>:60: the listing ends at line 60 inside table ip kube-proxy/m,
    );
  });

  it("says how it read an nft paste (a diff's new side, lines skipped) in -o json's warnings and the text's", () => {
    const input = [
      '$ git diff',
      '@@ -1,9 +1,9 @@',
      ' table ip kube-proxy {',
      ' \tmap service-ips {',
      ' \t\ttype ipv4_addr . inet_proto . inet_service : verdict',
      '-\t\telements = { 10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }',
      '+\t\telements = { 10.96.0.11 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }',
      ' \t}',
      ' }',
    ].join('\n');
    const json = kdebug(['rules', '--file', '-', '-o', 'json'], { input });
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as {
      warnings: { kind: string; line: number | null; message: string }[];
    };
    assert.deepEqual(
      doc.warnings.map((w) => [w.kind, w.line]),
      [
        ['view', null],
        ['skipped', 1],
      ],
    );
    assert.match(doc.warnings[0]!.message, /^a diff: its new side is read/);
    const text = kdebug(['rules', '--file', '-'], { input, ...WIDE });
    assert.match(text.stdout, /^warning: a diff: its new side is read/m);
  });

  it("counts an nftables paste's sets and maps apart, each with its own plural", () => {
    const whole = kdebug(['rules', '--file', NFT, '-o', 'text'], WIDE);
    assert.match(whole.stdout, /^file .*, 89 rules, 9 sets, 5 maps$/m);
    const input = [
      '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
      '\t\tcomment "ClusterIP, ExternalIP and LoadBalancer IP traffic"',
      '\t\telements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,',
      '\t\t\t     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,',
    ].join('\n');
    const part = kdebug(['rules', '--file', '-'], { input, env: { COLUMNS: '200' } });
    assert.match(part.stdout, /, 0 chains, 0 rules, 0 sets, 1 map$/m);
  });

  it('writes an IPv6 entry as [address]:port, as it writes the Service line', () => {
    const input = [
      '-A KUBE-SERVICES -d fd00:10:96::a/128 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
      '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> [fd00:10:244::2]:53" -j KUBE-SEP-AAAAAAAAAAAAAAAA',
      '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination [fd00:10:244::2]:53',
    ].join('\n');
    const r = kdebug(['rules', '--file', '-'], { input, env: { COLUMNS: '200' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}entry {2}cluster IP \[fd00:10:96::a\]:53\/udp /m);
  });

  it('searches an nftables table: a ClusterIP finds its Services and map elements, a typo its chains', () => {
    type Hits = { hits: { kind: string; text: string; chain?: string; service?: string }[] };
    const hits = (q: string) => {
      const r = kdebug(['rules', '--file', NFT, '--search', q, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as Hits).hits;
    };
    const dns = hits('10.96.0.10');
    assert.deepEqual(
      dns.filter((h) => h.kind === 'service').map((h) => `${h.text} ${h.service}`),
      [
        '10.96.0.10:53 kube-system/kube-dns:dns',
        '10.96.0.10:53 kube-system/kube-dns:dns-tcp',
        '10.96.0.10:9153 kube-system/kube-dns:metrics',
      ],
    );
    assert.ok(dns.some((h) => h.chain === 'service-ips' && h.text === '10.96.0.10:9153'));
    assert.ok(dns.some((h) => h.chain === 'cluster-ips' && h.text === '10.96.0.10'));
    // 10.96.0.100 would be a prefix: an address matches whole
    assert.deepEqual(
      hits('10.96.0.1').filter((h) => h.text.startsWith('10.96.0.10')),
      [],
    );
    assert.deepEqual(
      hits('31768').map((h) => `${h.kind} ${h.chain ?? ''} ${h.service}`),
      [
        'service external-AZMIQ6IG-matrix/lb/tcp/http matrix/lb:http',
        'rule service-nodeports matrix/lb:http',
      ],
    );
    assert.ok(hits('kitchn').some((h) => h.text === 'service-JO4CTW7L-matrix/kitchen/tcp/http'));
  });

  it('says where a bad nftables listing breaks', () => {
    const bad = kdebug(['rules', '--file', '-'], { input: '{"nftables": [\n{"table": }\n]}' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^kdebug: <stdin>:2: read as an nft listing: not valid JSON/);
  });

  it('reads stdin with --file -', () => {
    const r = kdebug(['rules', '--file', '-', '-o', 'json'], {
      input: readFileSync(SEED_NAT, 'utf8'),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).services[0].name, 'default/nginx-svc:http');
  });

  it('prints a node of a snapshot as JSON with the documented fields', () => {
    const r = kdebug(['rules', '--snapshot', DEMO, '--node', 'vm-12-11-centos', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.schemaVersion, 2);
    assert.equal(doc.node, 'vm-12-11-centos');
    assert.deepEqual(Object.keys(doc.counts), ['tables', 'chains', 'rules']);
    const svc = doc.services.find((s: { name: string }) => s.name === 'default/nginx-svc:http');
    assert.deepEqual(
      [svc.protocol, svc.clusterIP, svc.port, svc.nodePort, svc.externalIPs, svc.loadBalancerIPs],
      ['tcp', '10.1.190.219', 8080, null, [], []],
    );
    assert.equal(svc.chains.svc, 'KUBE-SVC-ELCM5PCEQWBTUJ2I');
    assert.deepEqual(
      svc.endpoints.map((e: { address: string; chain: string; probability: number }) => [
        e.address,
        e.chain,
        e.probability,
      ]),
      [
        ['10.244.0.3:80', 'KUBE-SEP-SMDVMBZNJPO5AA7R', 0.5],
        ['10.244.1.7:80', 'KUBE-SEP-FNO4E6JYD7EGUHTP', 0.5],
      ],
    );
    assert.deepEqual(doc.orphans, []);
  });

  it('searches with --search', () => {
    const r = kdebug([
      'rules',
      '--snapshot',
      DEMO,
      '--node',
      'vm-12-7-centos',
      '--search',
      '10.244.1.7',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const best = JSON.parse(r.stdout).hits[0];
    assert.deepEqual(
      [best.kind, best.text, best.service],
      ['endpoint', '10.244.1.7:80', 'default/nginx-svc:http'],
    );
    const text = kdebug(['rules', '--file', SEED_NAT, '--search', 'ELCM']);
    assert.match(
      text.stdout,
      /^ {2}chain {4}KUBE-SVC-ELCM5PCEQWBTUJ2I {3}Service default\/nginx-svc:http$/m,
    );
  });

  it('reads a paste with a prompt, prose and grep -n prefixes, and lists what it skipped', () => {
    const paste = [
      'controlplane $ kubectl exec -n kube-system kube-proxy-x -- iptables-save | grep -n nginx',
      'Here is what I get:',
      ...readFileSync(SEED_NAT, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l, i) => `${i + 1}:${l}`),
    ].join('\n');
    const json = kdebug(['rules', '--file', '-', '-o', 'json'], { input: paste });
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.services[0].name, 'default/nginx-svc:http');
    assert.deepEqual(
      doc.warnings.map((w: { line: number; kind: string }) => [w.line, w.kind]),
      [
        [1, 'prompt'],
        [2, 'prose'],
        [3, 'table'],
        [3, 'prefix'],
      ],
    );
    const text = kdebug(['rules', '--file', '-', '-o', 'text'], { input: paste });
    assert.match(
      text.stdout,
      /^warning: <stdin>:1: a shell prompt, skipped: "controlplane \$ kubectl/m,
    );
    assert.match(text.stdout, /^warning: <stdin>:3: 22 lines had a prefix before the dump line/m);
    assert.match(text.stdout, /^file <stdin>: 1 table \(nat\), 11 chains, 14 rules$/m);
  });

  it('summarises many skipped lines in one line', () => {
    const prose = ['Some notes:', 'first', 'second', 'third', 'fourth'].join('\n');
    const r = kdebug(['rules', '--file', '-', '-o', 'text'], {
      input: `${prose}\n${readFileSync(SEED_NAT, 'utf8')}`,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^warning: 5 lines skipped: 1, 2, 3, 4, 5 — not rules \(-o json lists each\)$/m,
    );
    assert.doesNotMatch(r.stdout, /skipped: "first"/);
  });

  const failures: [string, string[], string | undefined, RegExp][] = [
    [
      'a binary file, named as one',
      ['rules', '--file', '-'],
      'ELF\u0000\u0002\u0001\u0001\u0000\n-A X -j ACCEPT\n',
      /^kdebug: <stdin>: a binary file, not a listing: give the text iptables-save, nft list table ip kube-proxy, ipvsadm -Ln or cilium-dbg service list prints\n$/,
    ],
    [
      'a dump it cannot read, as FILE:LINE',
      ['rules', '--file', '-'],
      // not the last line: a last line that breaks is a paste cut short, read up to there
      '-N KUBE-X\n-A KUBE-X -m comment --comment "x\n-A KUBE-X -j ACCEPT\n',
      /^<stdin>:2: read as iptables rules: unterminated quoted string: "-A KUBE-X -m comment --comment "x"\n$/,
    ],
    [
      'a missing file',
      ['rules', '--file', 'no/such/dump.txt'],
      undefined,
      /^kdebug: no\/such\/dump\.txt: no such file\n$/,
    ],
    [
      'a snapshot with two nodes and no --node',
      ['rules', '--snapshot', DEMO],
      undefined,
      /pick a node with --node \(recorded: vm-12-11-centos, vm-12-7-centos\)/,
    ],
    [
      'an unknown node',
      ['rules', '--snapshot', DEMO, '--node', 'vm-1'],
      undefined,
      /no rules recorded for node "vm-1"/,
    ],
    [
      'a missing snapshot',
      ['rules', '--snapshot', 'no/such/dir', '--node', 'x'],
      undefined,
      /no\/such\/dir: no such snapshot directory/,
    ],
    ['no source and no kubeconfig', ['rules'], undefined, /^kdebug: no kubeconfig: /],
    [
      'empty input (the command before the pipe failed)',
      ['rules', '--file', '-'],
      '',
      /^kdebug: no iptables rules in <stdin> \(empty input often means the command before the pipe failed/,
    ],
    [
      'an empty file (no pipe: the file was saved without rules)',
      ['rules', '--file', '/dev/null'],
      undefined,
      /^kdebug: no iptables rules in \/dev\/null: the file is empty \(on the node, `sudo iptables-save > FILE` saves them\)\n$/,
    ],
    [
      'a directory',
      ['rules', '--file', 'test/fixtures'],
      undefined,
      /^kdebug: test\/fixtures: is a directory\n$/,
    ],
    [
      'an escape sequence in a bad line, shown escaped',
      ['rules', '--file', '-'],
      '-A X -s \x1b]0;owned\x07 -j ACCEPT\n-A X -j ACCEPT\n',
      /^<stdin>:1: read as iptables rules: "\\x1b\]0;owned\\x07" is not an address: "-A X -s \\x1b\]0;owned\\x07 -j ACCEPT"\n$/,
    ],

    [
      'a bad --output',
      ['rules', '--file', SEED_NAT, '-o', 'yaml'],
      undefined,
      /argument 'yaml' is invalid/,
    ],
  ];
  for (const [what, args, input, message] of failures) {
    it(`exits 2 with a one-line reason for ${what}`, () => {
      const r = kdebug(args, { input });
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /); // never a stack trace
    });
  }
});
