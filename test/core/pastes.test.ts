// Real pastes, as published, against their readings by hand (test/fixtures/pastes/readings.json,
// written before kdebug ran on them): the Service ports, endpoints and shares a careful reader
// states from each paste, what it cannot state (shares of a view without weights, chains past a
// cut), and the kind of each paste kdebug does not read, named. Then the views the corpus does not
// hold, written in each tool's own layout (ipvsadm.c's print_service_entry, nft -a, per-chain
// `iptables -S CHAIN` listings): Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, node 192.168.0.10.
import { ELISION_FORMS } from '../support/elision-forms.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isListView } from '../../src/core/dataplane/iptables/read/paste/list-view/to-rules.js';
import { NoRulesError } from '../../src/core/dataplane/iptables/read/parse.js';
import type { ForeignKind } from '../../src/core/dataplane/iptables/read/parse.js';
import { readPaste, type PasteReading } from '../../src/core/dataplane/paste/paste.js';
import type { ServiceTree, ServiceTrees } from '../../src/core/dataplane/trees.js';
import { rulesDoc, rulesText } from '../../src/output/rules.js';
import { buildNftPasteSearchIndex } from '../../src/core/dataplane/nftables/search.js';

interface ServiceReading {
  id: string;
  protocol?: string;
  clusterIP?: string;
  /** An IPVS virtual server's address: a listing does not say which kind of Service IP it is. */
  address?: string;
  port?: number;
  nodePorts?: number[];
  /** DNAT targets in order; null where the paste does not show the target. */
  endpoints?: (string | null)[];
  /** Shares in order; null where the paste cannot show them. */
  shares?: number[] | null;
  affinitySeconds?: number;
}

interface Reading {
  source: string;
  form: string;
  kind: 'iptables' | 'ipvs' | 'nft' | 'cilium' | 'foreign';
  foreign?: ForeignKind;
  /** The error a reader refuses the paste with where it is not the iptables reader's foreign
   * listing (NoRulesError): its name ("IpvsParseError"), with `says` its message. */
  refusal?: string;
  says?: string;
  services?: ServiceReading[];
  notInPaste?: string[];
  /** The iptables tables the paste holds, in order, where no *table line names them. */
  tables?: string[];
  /** Each table's address family, in the same order: iptables' or ip6tables'. */
  families?: ('IPv4' | 'IPv6')[];
  /** What kdebug must say of the paste's form (a cut, a part it does not read), one pattern each. */
  warns?: string[];
  /** What it must not say of it (a cut the paste does not have), one pattern each. */
  silent?: string[];
}

const DIR = 'test/fixtures/pastes';
const readings = JSON.parse(readFileSync(`${DIR}/readings.json`, 'utf8')) as Record<
  string,
  Reading | string
>;
const corpus = Object.entries(readings).filter((e): e is [string, Reading] => e[0] !== '_about');

/** The reading of a paste, or the message kdebug gives when it cannot read it. */
function read(slug: string): PasteReading | { error: Error } {
  const file = `${DIR}/${slug}.txt`;
  try {
    return readPaste(readFileSync(file, 'utf8'), { file });
  } catch (e) {
    return { error: e as Error };
  }
}

/** The tree a hand reading names: by ServicePortName, cluster IP and port, or node port. */
function find(trees: ServiceTrees, r: ServiceReading): ServiceTree | undefined {
  const all = [...trees.services, ...trees.orphans.flatMap((o) => (o.tree ? [o.tree] : []))];
  // a virtual server a listing names only by its line: its name shared with another, or cut
  const at = /\(line (\d+)\)$/.exec(r.id);
  if (at) return all.find((t) => t.entries.some((e) => e.line === Number(at[1])));
  // an unnamed port: "ns/name", which kube-proxy before v1.5 wrote "ns/name:"
  if (r.id.includes('/')) return all.find((t) => t.name === r.id || t.name === `${r.id}:`);
  if (r.clusterIP !== undefined)
    return all.find(
      (t) =>
        t.clusterIP === r.clusterIP &&
        t.port === r.port &&
        (r.protocol === undefined || t.protocol === r.protocol),
    );
  if (r.address !== undefined)
    return all.find((t) =>
      t.entries.some(
        (e) =>
          e.address === r.address &&
          e.port === r.port &&
          (r.protocol === undefined || e.protocol === r.protocol),
      ),
    );
  if (r.nodePorts) return all.find((t) => r.nodePorts!.every((p) => t.nodePorts.includes(p)));
  // a tree a listing names by its id alone: a firewall mark ("FWM 1481"), a name without its port
  const byId = all.find((t) => t.id === r.id);
  if (byId) return byId;
  const m = /^\w+ (\S+):(\d+)$/.exec(r.id);
  return all.find(
    (t) =>
      (r.protocol === undefined || t.protocol === r.protocol) &&
      t.entries.some((e) => e.address === m?.[1] && e.port === Number(m?.[2])),
  );
}

const textOf = (x: PasteReading) =>
  x.mode === 'not-kube-proxy' ? x.message : rulesText(x.dump, x.trees, { label: 'paste' });

describe(`the pastes corpus (${corpus.length} real pastes)`, () => {
  for (const [slug, r] of corpus)
    it(`${slug}: ${r.form}`, () => {
      const got = read(slug);
      if (r.kind === 'foreign') {
        const message =
          'error' in got ? got.error.message : got.mode === 'not-kube-proxy' ? got.message : '';
        assert.ok(message, `${slug} was read as ${'mode' in got ? got.mode : '?'}, not named`);
        if ('error' in got && r.refusal !== undefined) {
          // another reader's refusal: its kind and what it says of the paste
          assert.equal(got.error.name, r.refusal, message);
          assert.equal(r.foreign, undefined, `${slug}: a refusal names no foreign kind`);
          assert.ok(r.says, `${slug}: a refusal's reading says what the message must say`);
        } else if ('error' in got) {
          assert.ok(got.error instanceof NoRulesError, got.error.message);
          assert.equal(got.error.foreign, r.foreign, message);
        } else assert.equal(r.foreign, 'nft', message);
        assert.doesNotMatch(message, /empty/, 'an input that is not empty is not called empty');
        assert.ok(
          [...message].every((ch) => ch.charCodeAt(0) >= 0x20 || ch === '\t'),
          'one line, no control byte',
        );
        if (r.says) assert.match(message, new RegExp(r.says));
        return;
      }
      assert.ok(!('error' in got), 'error' in got ? got.error.message : '');
      assert.ok(got.mode !== 'not-kube-proxy');
      assert.equal(got.mode, r.kind === 'nft' ? 'nftables' : r.kind);
      const text = textOf(got);
      for (const w of r.warns ?? []) assert.match(text, new RegExp(w), text);
      for (const w of r.silent ?? []) assert.doesNotMatch(text, new RegExp(w), text);
      if (r.tables && got.mode === 'iptables')
        assert.deepEqual(
          got.dump.tables.map((t) => t.name),
          r.tables,
          text,
        );
      if (r.families && got.mode === 'iptables')
        assert.deepEqual(
          got.dump.tables.map((t) => t.family),
          r.families,
          text,
        );
      // "no endpoints" only where the paste shows a Service port without any
      if (!(r.services ?? []).some((s) => s.endpoints?.length === 0))
        assert.doesNotMatch(text, /\(no endpoints\)|match no endpoint rule/, text);
      for (const s of r.services ?? []) {
        const t = find(got.trees, s);
        assert.ok(t, `${s.id}: no tree\n${text}`);
        if (s.protocol) assert.equal(t.protocol, s.protocol, s.id);
        if (s.clusterIP) assert.equal(t.clusterIP, s.clusterIP, s.id);
        // a virtual server's address is not called a cluster IP: it may be an external one
        if (s.address) assert.equal(t.clusterIP, undefined, s.id);
        if (s.port !== undefined) assert.equal(t.port ?? t.entries[0]?.port, s.port, s.id);
        for (const p of s.nodePorts ?? []) assert.ok(t.nodePorts.includes(p), `${s.id} ${p}`);
        if (s.affinitySeconds !== undefined) assert.equal(t.affinitySeconds, s.affinitySeconds);
        if (s.endpoints)
          assert.deepEqual(
            t.endpoints.map((e) => e.address ?? null),
            s.endpoints,
            s.id,
          );
        if (s.shares)
          assert.deepEqual(
            t.endpoints.map((e) => (e.shareUnknown ? null : Math.round(e.probability * 100))),
            s.shares.map((p) => Math.round(p * 100)),
            s.id,
          );
        else if (s.shares === null)
          // no share stated: each unknown, or no endpoint shown with the reason why
          assert.ok(
            t.endpoints.length === 0
              ? t.partial !== undefined || (t.absentChains?.length ?? 0) > 0
              : t.endpoints.every((e) => e.shareUnknown !== undefined),
            `${s.id}: a share or "no endpoints" stated\n${text}`,
          );
      }
      for (const chain of r.notInPaste ?? []) {
        const trees = [
          ...got.trees.services,
          ...got.trees.orphans.flatMap((o) => (o.tree ? [o.tree] : [])),
        ];
        const said =
          trees.some(
            (t) =>
              t.absentChains?.includes(chain) ||
              (t.partial !== undefined && Object.values(t.chains).includes(chain)) ||
              t.endpoints.some((e) => e.chain === chain && e.chainMissing),
          ) || got.trees.orphans.some((o) => o.chain === chain && o.partial !== undefined);
        assert.ok(said, `${chain} is not said to be outside the paste\n${text}`);
      }
    });
});

/** A paste kdebug reads, or the test fails with what it said instead. */
function reads(text: string): Exclude<PasteReading, { mode: 'not-kube-proxy' }> {
  const got = readPaste(text, { file: 'paste.txt' });
  assert.ok(got.mode !== 'not-kube-proxy', 'message' in got ? got.message : '');
  return got;
}

const tree = (x: { trees: ServiceTrees }, name: string) => {
  const t = x.trees.services.find((s) => s.name === name || s.id === name);
  assert.ok(t, `${name}: not among ${x.trees.services.map((s) => s.id).join(', ')}`);
  return t;
};

describe('the corpus read again as editors save it', () => {
  // an `iptables -L` line is told cut by its columns, not by a missing final newline (an editor
  // adds or strips that): such a paste reads the same either way
  const said = (text: string, file: string) => {
    try {
      const got = readPaste(text, { file });
      if (got.mode === 'not-kube-proxy') return got.message;
      const warnings = (got.dump as { warnings?: { message: string }[] }).warnings ?? [];
      return `${textOf(got)}\n${warnings.map((w) => w.message).join('\n')}`;
    } catch (e) {
      return (e as Error).message;
    }
  };
  const listings = corpus.filter(([slug]) =>
    isListView(readFileSync(`${DIR}/${slug}.txt`, 'utf8')),
  );
  it('holds iptables -L pastes', () => assert.ok(listings.length >= 10, `${listings.length}`));
  for (const [slug] of listings)
    it(`${slug}: the same with and without a final newline`, () => {
      const file = `${DIR}/${slug}.txt`;
      const bare = readFileSync(file, 'utf8').replace(/\n+$/, '');
      assert.equal(said(`${bare}\n`, file), said(bare, file));
    });
});

describe('the corpus read again with the blanks that end its lines stripped', () => {
  // editors and pages strip them: a terminal's screen copy keeps its rows by the gaps between them
  const summary = (text: string, file: string) => {
    try {
      const got = readPaste(text, { file });
      if (got.mode === 'not-kube-proxy') return got.message;
      const tables =
        got.mode === 'iptables' ? got.dump.tables.map((t) => `${t.name} ${t.ruleCount}`) : [];
      const services = got.trees.services.map(
        (t) => `${t.id} ${t.endpoints.map((e) => e.address).join(',')}`,
      );
      return JSON.stringify({ mode: got.mode, tables, services });
    } catch (e) {
      return (e as Error).message.replace(/:\d+:/, ':');
    }
  };
  for (const [slug] of corpus)
    it(slug, () => {
      const file = `${DIR}/${slug}.txt`;
      const text = readFileSync(file, 'utf8');
      assert.equal(summary(text.replace(/[ \t]+$/gm, ''), file), summary(text, file));
    });
});

/** The foreign kind a paste is named as, where kdebug refuses it as no rules. */
const foreign = (text: string) => {
  try {
    readPaste(text, { file: 'p.txt' });
  } catch (e) {
    return e instanceof NoRulesError ? e.foreign : undefined;
  }
  return undefined;
};

describe('views the corpus does not hold, in each tool layout', () => {
  it('prose quoting `iptables -S` without -t does not make a nat listing the filter table', () => {
    const x = reads(
      [
        'Output of `iptables -S`:',
        '-P PREROUTING ACCEPT',
        '-P INPUT ACCEPT',
        '-P OUTPUT ACCEPT',
        '-P POSTROUTING ACCEPT',
        '-N KUBE-SERVICES',
        '-N KUBE-SVC-AAAAAAAAAAAAAAAA',
        '-N KUBE-SEP-BBBBBBBBBBBBBBBB',
        '-A PREROUTING -j KUBE-SERVICES',
        '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http -> 10.244.1.5:8080" -j KUBE-SEP-BBBBBBBBBBBBBBBB',
        '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp -j DNAT --to-destination 10.244.1.5:8080',
      ].join('\n'),
    );
    assert.deepEqual(
      tree(x, 'ns/a:http').endpoints.map((e) => `${e.address} ${e.probability}`),
      ['10.244.1.5:8080 1'],
    );
  });

  // grep'd IPv4 save output: the rules' own addresses say the family
  const grepped4 = [
    ':KUBE-SVC-63YFRZ6UYEGJCF5S - [0:0]',
    '-A KUBE-SERVICES -d 172.30.0.0/32 -p tcp -m comment --comment "ns0/svc-0:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-63YFRZ6UYEGJCF5S',
    '-A KUBE-SVC-63YFRZ6UYEGJCF5S -m comment --comment "ns0/svc-0:http -> 10.128.0.0:8080" -j KUBE-SEP-EGU5KNE32BHK6A6E',
  ];
  const families = (x: PasteReading) =>
    x.mode === 'iptables' ? x.dump.tables.map((t) => `${t.name} ${t.family}`) : [];

  it('prose that names ip6tables-save does not make the IPv4 rules after it IPv6', () => {
    const x = reads(['Nothing in ip6tables-save. IPv4:', ...grepped4].join('\n'));
    assert.deepEqual(families(x), ['nat IPv4']);
  });

  it('a typed ip6tables-save above IPv4 rules: their addresses win, said', () => {
    const x = reads(['root@node:~# ip6tables-save | grep KUBE-SVC-63YF', ...grepped4].join('\n'));
    assert.deepEqual(families(x), ['nat IPv4']);
    const warnings = x.mode === 'iptables' ? x.dump.warnings.map((w) => w.message) : [];
    assert.ok(
      warnings.some((m) => /hold IPv4 addresses .* names IPv6/.test(m)),
      warnings.join('\n'),
    );
  });

  it("grep of both families' saves back to back, no *table line: a table per family by the rules' addresses", () => {
    const grepped6 = grepped4.map((l) =>
      l.replace('172.30.0.0/32', 'fd00:30::/128').replace('10.128.0.0:8080', '[fd00:128::]:8080'),
    );
    for (const prompt of [
      [],
      ['root@node:~# (ip6tables-save; iptables-save) | grep KUBE-SVC-63YF'],
    ]) {
      const x = reads([...prompt, ...grepped6, ...grepped4].join('\n'));
      assert.deepEqual(families(x), ['nat IPv6', 'nat IPv4']);
      assert.deepEqual(
        x.trees.services.map((t) => `${t.family} ${t.clusterIP}`),
        ['IPv6 fd00:30::', 'IPv4 172.30.0.0'],
      );
      // the second grep's declaration is its own dump's, not the first's pasted twice
      assert.ok(x.mode === 'iptables');
      assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /declared again/);
    }
  });

  it("nft's error report above a full nft listing: the listing is read, the report said", () => {
    const listing = readFileSync('test/fixtures/nft/kube-proxy-1.37-node-a.txt', 'utf8');
    const x = readPaste(
      [
        'root@node:~# nft -f /tmp/x.nft',
        '/tmp/x.nft:3:1-5: Error: Could not process rule: No such file or directory',
        'add rule ip kube-proxy services ip daddr 10.0.0.1 jump nowhere',
        '^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
        'root@node:~# nft list table ip kube-proxy',
        listing,
      ].join('\n'),
      { file: 'p' },
    );
    assert.equal(x.mode, 'nftables');
    assert.ok(
      x.mode === 'nftables' && x.notes.some((n) => /^lines 2, 3, 4: nft's error report/.test(n)),
    );
  });

  it("300,000 lines that are not rules (grep -A's separators, prose) around rules: read, not an internal error", () => {
    const rule = (vip: string) =>
      `-A KUBE-SERVICES -d ${vip}/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA`;
    const x = reads(
      [rule('10.96.0.5'), ...Array<string>(300_000).fill('--'), rule('10.96.0.6')].join('\n'),
    );
    assert.equal(x.mode === 'iptables' && x.dump.tables[0]!.ruleCount, 2);
  });

  it("nft's error report above an ipvsadm listing: the listing is read", () => {
    const x = readPaste(
      [
        '/tmp/x.nft:3:1-5: Error: Could not process rule: No such file or directory',
        'IP Virtual Server version 1.2.1 (size=4096)',
        'Prot LocalAddress:Port Scheduler Flags',
        '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
        'TCP  10.0.0.1:80 rr',
        '  -> 192.168.1.2:80               Masq    1      0          0',
      ].join('\n'),
      { file: 'p' },
    );
    assert.equal(x.mode, 'ipvs');
  });

  // the addresses iptables prints: IPv6 unbracketed in a DNAT target, an IPv4 range with its
  // port, a port alone; a comment's words are none
  it('the family of each address form iptables prints, and none from a comment', () => {
    const nat = (family: string, to: string) =>
      [
        `# Generated by ${family}-save v1.8.9 (nf_tables)`,
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':DOCKER - [0:0]',
        `-A DOCKER -p tcp -m tcp --dport 8080 -j DNAT --to-destination ${to}`,
        'COMMIT',
      ].join('\n');
    const dual = `${nat('ip6tables', '2001:db8::2')}\n${nat('iptables', '172.17.0.2:80')}`;
    assert.deepEqual(families(reads(dual)), ['nat IPv6', 'nat IPv4']);
    const headerless = (line: string) => reads([grepped4[1]!, line, grepped4[2]!].join('\n'));
    for (const to of ['172.17.0.2-172.17.0.3:80', ':80'])
      assert.deepEqual(
        families(headerless(`-A DOCKER -p tcp -m tcp --dport 8080 -j DNAT --to-destination ${to}`)),
        ['nat IPv4'],
        to,
      );
    assert.deepEqual(
      families(
        headerless('-A DOCKER -m comment --comment "mgmt -s fd00::/8 via ip6tables" -j RETURN'),
      ),
      ['nat IPv4'],
    );
  });

  it("ipvsadm-save's -6 of an IPv6 firewall-mark service is an option it knows", () => {
    const x = reads('-A -f 1 -6 -s rr\n-a -f 1 -6 -r [fd00::5]:0 -m -w 1\n');
    assert.equal(x.mode, 'ipvs');
    assert.doesNotMatch(JSON.stringify(x), /unknownOptions/);
  });

  it('raw and mangle listings are told by their built-in chains, not read as nat', () => {
    const chainL = (c: string, rules: string[] = []) =>
      [
        `Chain ${c} (policy ACCEPT)`,
        'target     prot opt source               destination',
        ...rules,
        '',
      ].join('\n');
    const notrack =
      'CT         udp  --  0.0.0.0/0            169.254.20.10        udp dpt:53 NOTRACK';
    const tables = (text: string) => {
      const x = reads(text);
      return x.mode === 'iptables' ? x.dump.tables.map((t) => t.name) : [];
    };
    // iptables -t raw -L: PREROUTING and OUTPUT, and no other built-in chain
    assert.deepEqual(tables(chainL('PREROUTING', [notrack]) + chainL('OUTPUT')), ['raw']);
    // its -S, then nat's typed below it: each by its own
    assert.deepEqual(
      tables(
        [
          '-P PREROUTING ACCEPT',
          '-P OUTPUT ACCEPT',
          '-A PREROUTING -d 169.254.20.10/32 -p udp -m udp --dport 53 -j CT --notrack',
          '$ sudo iptables -t nat -S',
          '-P PREROUTING ACCEPT',
          '-P INPUT ACCEPT',
          '-P OUTPUT ACCEPT',
          '-P POSTROUTING ACCEPT',
          '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        ].join('\n'),
      ),
      ['raw', 'nat'],
    );
    // nat's PREROUTING and OUTPUT alone (two one-chain listings) jump to KUBE-SERVICES: nat
    const portals =
      'KUBE-SERVICES  all  --  0.0.0.0/0            0.0.0.0/0            /* kubernetes service portals */';
    assert.deepEqual(tables(chainL('PREROUTING', [portals]) + chainL('OUTPUT', [portals])), [
      'nat',
    ]);
    // mangle alone has both PREROUTING and FORWARD
    assert.deepEqual(
      tables(
        ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']
          .map((c) => `-P ${c} ACCEPT`)
          .join('\n') + '\n-A FORWARD -j KUBE-FORWARD\n',
      ),
      ['mangle'],
    );
    // a grep across tables mixes PREROUTING and FORWARD too: not mangle, the Service read as nat
    assert.deepEqual(
      tables(
        [
          '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
          '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
          '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
          '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
          '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2',
          '-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53',
        ].join('\n'),
      ),
      ['nat'],
    );
    // nat's PREROUTING and OUTPUT listed alone, jumping to other chains: nat, not raw
    assert.deepEqual(
      tables(
        [
          '-P PREROUTING ACCEPT',
          '-P OUTPUT ACCEPT',
          '-A PREROUTING -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING',
          '-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER',
        ].join('\n'),
      ),
      ['nat'],
    );
    // a command typed above that names raw is taken
    assert.deepEqual(
      tables(`$ iptables -t raw -L -n\n${chainL('PREROUTING')}${chainL('OUTPUT')}`),
      ['raw'],
    );
  });

  it('a typed `iptables -S` (filter, by default) above a listing with PREROUTING: the chains settle it is nat', () => {
    const x = reads(
      [
        '$ iptables -S',
        '-P PREROUTING ACCEPT',
        '-P POSTROUTING ACCEPT',
        '-N KUBE-SERVICES',
        '-N KUBE-SVC-AAAAAAAAAAAAAAAA',
        '-A PREROUTING -j KUBE-SERVICES',
        '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
      ].join('\n'),
    );
    assert.ok(tree(x, 'ns/a:http'));
  });

  it('reads per-chain `iptables -t nat -S CHAIN` listings pasted one after another as one table', () => {
    const x = reads(`$ sudo iptables -t nat -S KUBE-SERVICES
-N KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
$ sudo iptables -t nat -S KUBE-SVC-TCOU7JCQXEZGVUNU
-N KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAAA
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.3:53" -j KUBE-SEP-BBBBBBBBBBBBBBBB
$ sudo iptables -t nat -S KUBE-SEP-AAAAAAAAAAAAAAAA
-N KUBE-SEP-AAAAAAAAAAAAAAAA
-A KUBE-SEP-AAAAAAAAAAAAAAAA -s 10.244.0.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAAAAAAAAAAAAAA -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53
`);
    assert.equal(x.mode, 'iptables');
    const t = tree(x, 'kube-system/kube-dns:dns');
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability, e.addressFromComment ?? false]),
      [
        ['10.244.0.2:53', 0.5, false], // its KUBE-SEP chain is pasted: read from the DNAT rule
        ['10.244.1.3:53', 0.5, true], // its KUBE-SEP chain is not: kube-proxy's comment, said so
      ],
    );
    assert.match(rulesText(x.dump, x.trees, { label: 'p' }), /from kube-proxy's comment/);
  });

  it('an elision inside a dump: the chain before it and the chains it may hold claim nothing', () => {
    const x = reads(`*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAAA
...
COMMIT
`);
    const dns = tree(x, 'kube-system/kube-dns:dns');
    assert.match(dns.partial ?? '', /elides lines after it/);
    assert.match(tree(x, 'default/kubernetes:https').partial ?? '', /elides lines/);
    assert.doesNotMatch(
      rulesText(x.dump, x.trees, { label: 'p' }),
      /no endpoints|match no endpoint rule/,
    );
  });

  it("an author's snip line inside a dump is an elision as '...' is: the chain before it claims nothing", () => {
    for (const snip of ELISION_FORMS) {
      const x = reads(`*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAAA
${snip}
COMMIT
`);
      assert.match(
        tree(x, 'kube-system/kube-dns:dns').partial ?? '',
        /elides lines after it/,
        snip,
      );
      assert.doesNotMatch(
        rulesText(x.dump, x.trees, { label: 'p' }),
        /match no endpoint rule|not a line of iptables-save/,
        snip,
      );
    }
  });

  it('the chain whose rules follow an elision may have rules before them in it: no share, no hairpin verdict', () => {
    const svc = (before: string, among = '') => `*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]
:KUBE-SEP-CCCCCCCCCCCCCCCC - [0:0]
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
${before}
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB
${among}
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.4:53" -j KUBE-SEP-CCCCCCCCCCCCCCCC
-A KUBE-SEP-BBBBBBBBBBBBBBBB -s 10.244.0.3/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-BBBBBBBBBBBBBBBB -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.3:53
-A KUBE-SEP-CCCCCCCCCCCCCCCC -s 10.244.0.4/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-CCCCCCCCCCCCCCCC -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.4:53
COMMIT
`;
    // the KUBE-SVC chain's first rules (an endpoint taking its share first) may be left out
    const x = reads(svc('...'));
    const dns = tree(x, 'kube-system/kube-dns:dns');
    assert.match(dns.partial ?? '', /elides lines before it/);
    assert.deepEqual(
      dns.endpoints.map((e) => [e.address, e.shareUnknown !== undefined, e.hairpinMasquerade]),
      [
        ['10.244.0.3:53', true, true],
        ['10.244.0.4:53', true, true],
      ],
    );
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /50%/);
    // so do those before a rule the chain's rules resume with
    const resumed = tree(reads(svc('', '...')), 'kube-system/kube-dns:dns');
    assert.match(resumed.partial ?? '', /elides lines among its rules/);
    assert.ok(resumed.endpoints.every((e) => e.shareUnknown !== undefined));
    // kube-proxy writes a KUBE-SEP chain's KUBE-MARK-MASQ rule first: above an elision, unknown
    const sep = reads(svc('').replace(/^-A KUBE-SEP-BBBBBBBBBBBBBBBB -s .*\n/m, '[snip]\n'));
    assert.deepEqual(
      tree(sep, 'kube-system/kube-dns:dns').endpoints.map((e) => [
        e.address,
        e.hairpinMasquerade,
        e.chainPartial !== undefined,
      ]),
      [
        ['10.244.0.3:53', null, true],
        ['10.244.0.4:53', true, false],
      ],
    );
    assert.doesNotMatch(rulesText(sep.dump, sep.trees, { label: 'p' }), /NO hairpin/);
  });

  it('a chain declared (or listed under its Chain line) after an elision is whole above: its shares stand', () => {
    const svc = `-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.4:53" -j KUBE-SEP-CCCCCCCCCCCCCCCC
`;
    // iptables-save declares every chain before any rule, iptables -S CHAIN starts with its -N
    const saved = reads(`*nat
:KUBE-SERVICES - [0:0]
...
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
${svc}-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
COMMIT
`);
    const listed = reads(`-N KUBE-SEP-BBBBBBBBBBBBBBBB\n...\n-N KUBE-SVC-TCOU7JCQXEZGVUNU\n${svc}`);
    for (const y of [saved, listed])
      assert.deepEqual(
        tree(y, 'kube-system/kube-dns:dns').endpoints.map((e) => [e.probability, e.shareUnknown]),
        [
          [0.5, undefined],
          [0.5, undefined],
        ],
      );
    const x = reads(`Chain KUBE-SERVICES (2 references)
target     prot opt source               destination
KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns cluster IP */ udp dpt:53
...
Chain KUBE-SVC-TCOU7JCQXEZGVUNU (1 references)
target     prot opt source               destination
KUBE-SEP-BBBBBBBBBBBBBBBB  all  --  0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns -> 10.244.0.3:53 */ statistic mode random probability 0.50000000000
KUBE-SEP-CCCCCCCCCCCCCCCC  all  --  0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns -> 10.244.0.4:53 */
`);
    const dns = tree(x, 'kube-system/kube-dns:dns');
    assert.equal(dns.partial, undefined);
    assert.deepEqual(
      dns.endpoints.map((e) => [e.probability, e.shareUnknown]),
      [
        [0.5, undefined],
        [0.5, undefined],
      ],
    );
  });

  it('a filter chain listing then a nat one are two tables, not one', () => {
    const x = reads(`-N KUBE-FORWARD
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-N KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU -j KUBE-SEP-AAAAAAAAAAAAAAAA
`);
    assert.ok(x.mode === 'iptables');
    assert.deepEqual(
      x.dump.tables.map((t) => [t.name, t.chains.map((c) => c.name)]),
      [
        ['filter', ['KUBE-FORWARD']],
        ['nat', ['KUBE-SVC-TCOU7JCQXEZGVUNU']],
      ],
    );
  });

  it('ipvsadm --rate: rates are not weights, shares are unknown and the view is said', () => {
    const x = reads(`IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port                 CPS    InPPS   OutPPS    InBPS   OutBPS
  -> RemoteAddress:Port
TCP  10.96.0.10:53                       1        2        1      120       80
  -> 10.244.0.2:53                       1        1        0       60       40
  -> 10.244.1.3:53                       0        2        1       60       40
`);
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.dump.view, 'rate');
    assert.equal(x.dump.services[0]!.scheduler, undefined, 'the CPS column is not a scheduler');
    const t = tree(x, 'TCP 10.96.0.10:53');
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.shareUnknown]),
      [
        ['10.244.0.2:53', 'ipvsadm --rate shows no weights'],
        ['10.244.1.3:53', 'ipvsadm --rate shows no weights'],
      ],
    );
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /33\.3%|66\.7%/);
  });

  it('ipvsadm -l (names): hosts as printed, well-known port names as numbers, not "https:0"', () => {
    const x = reads(`IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.1:https rr
  -> node-a:sun-sr-https          Masq    1      0          0
TCP  10.96.0.1:https rr
  -> node-a:sun-sr-https          Masq    1      0          0
`);
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.dump.names, true);
    assert.deepEqual(x.dump.duplicates, [6, 7], 'a virtual server pasted twice is read once');
    const t = tree(x, 'TCP 10.96.0.1:https');
    assert.equal(t.port, 443);
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability]),
      [['node-a:sun-sr-https', 1]],
    );
  });

  it('ipvsadm -Lnc (connections) is named, not read as virtual servers', () => {
    assert.throws(
      () =>
        readPaste(
          `IPVS connection entries
pro expire state       source             virtual            destination
TCP 14:56  ESTABLISHED 10.244.1.1:54321   10.96.0.10:53      10.244.0.2:53
`,
          { file: 'c.txt' },
        ),
      (e: Error) =>
        /^c\.txt:1: this is ipvsadm's connection \(-c\) or timeout listing/.test(e.message),
    );
  });

  it('node ports are told from Service IPs: the port on loopback and on several node addresses', () => {
    const x = reads(`TCP  10.96.12.7:80 rr
  -> 10.244.1.5:8080              Masq    1      0          0
TCP  127.0.0.1:30180 rr
  -> 10.244.1.5:8080              Masq    1      0          0
TCP  192.168.0.10:30180 rr
  -> 10.244.1.5:8080              Masq    1      0          0
`);
    assert.deepEqual(
      x.trees.services.map((t) => [t.id, t.entries.map((e) => `${e.kind} ${e.address}`)]),
      [
        ['TCP 10.96.12.7:80', ['virtual-server 10.96.12.7']],
        ['TCP node port 30180', ['node-port 127.0.0.1', 'node-port 192.168.0.10']],
      ],
    );
  });

  it('nft -a (handles) with an elision inside the table: read, and the elision said', () => {
    const x = reads(`# nft -a list table ip kube-proxy
table ip kube-proxy { # handle 5
	map service-ips { # handle 10
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . udp . 53 : goto service-ULMVA6XW-kube-system/kube-dns/udp/dns }
	}
	....
	chain service-ULMVA6XW-kube-system/kube-dns/udp/dns { # handle 20
		numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-kube-system/kube-dns/udp/dns__10.244.0.2/53 } # handle 23
	}
}
`);
    assert.ok(x.mode === 'nftables');
    assert.deepEqual(x.dump.elided, [7]);
    const t = tree(x, 'kube-system/kube-dns:dns');
    assert.equal(
      t.clusterIP,
      '10.96.0.10',
      "without the cluster-ips set: the first VIP, as kube-proxy's",
    );
    // the endpoint chain is among the elided lines: its target is the one kube-proxy named the
    // chain after, said to be read from that name (no DNAT rule is in the paste)
    assert.deepEqual(
      t.endpoints.map((e) => [e.address ?? null, e.chainMissing, e.addressFromName ?? false]),
      [['10.244.0.2:53', true, true]],
    );
    assert.match(t.partial ?? '', /elides/);
  });

  it('`nft list chain` of a Service chain alone: each endpoint is the one kube-proxy named its chain after, said to be read from that name', () => {
    // servicePortEndpointChainNameBase: "ns/svc/proto/port__IP/PORT", an IPv6 address's ":" as "."
    const x = reads(`# nft list chain ip6 kube-proxy service-HVFWP5L3-default/web/tcp/http
table ip6 kube-proxy {
\tchain service-HVFWP5L3-default/web/tcp/http {
\t\tip6 daddr fd00:10:96::4d2 tcp dport 80 ip6 saddr != fd00:10:244::/56 jump mark-for-masquerade
\t\tnumgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-default/web/tcp/http__fd00.10.244.1..3/8080, 1 : goto endpoint-VJ7VIZ4D-default/web/tcp/http__fd00.10.244.2..7/8080 }
\t}
}
`);
    assert.ok(x.mode === 'nftables');
    const t = tree(x, 'default/web:http');
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability, e.chainMissing, e.addressFromName]),
      [
        ['[fd00:10:244:1::3]:8080', 0.5, true, true],
        ['[fd00:10:244:2::7]:8080', 0.5, true, true],
      ],
    );
    assert.match(
      rulesText(x.dump, x.trees, { label: 'paste' }),
      /from the name kube-proxy gave its endpoint chain/,
    );
    // a name hashAndTruncate cut short ("...") holds no whole address: nothing is read from it
    const cut = reads(`table ip kube-proxy {
\tchain service-HVFWP5L3-default/web/tcp/http {
\t\tnumgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-default/web/tcp/http__10.244.1.3/80... }
\t}
}
`);
    assert.ok(cut.mode === 'nftables');
    assert.deepEqual(
      tree(cut, 'default/web:http').endpoints.map((e) => [
        e.address ?? null,
        e.addressFromName ?? false,
      ]),
      [[null, false]],
    );
  });

  it("an author's snip line among an nft map's wrapped elements: the elements around it read, a chain it may lead to not said unreached", () => {
    const x = reads(`table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,
			     --- snip ---
			     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https }
	}
	chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {
		meta l4proto udp dnat to 10.244.0.2:53
	}
	chain service-2QRHZV4L-default/kubernetes/tcp/https {
		meta l4proto tcp dnat to 192.168.0.10:6443
	}
	chain service-FN4G4LLS-default/web/tcp/http {
		meta l4proto tcp dnat to 10.244.0.9:80
	}
}
`);
    assert.ok(x.mode === 'nftables');
    assert.deepEqual(x.dump.elided, [5]);
    assert.deepEqual(
      x.trees.services.map((t) => [t.name, t.endpoints.map((e) => e.address)]),
      [
        ['default/kubernetes:https', ['192.168.0.10:6443']],
        ['kube-system/kube-dns:dns', ['10.244.0.2:53']],
      ],
    );
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    // its element may be among those the author left out
    assert.match(
      text,
      /chains no rule in the paste reaches, not called orphans \(the listing holds part of its table \(it elides lines\): what reaches them may lie outside it\): service-FN4G4LLS-default\/web\/tcp\/http/,
    );
    assert.doesNotMatch(text, /not read/);
  });

  it("an nft endpoint chain that an author's elision ends: its DNAT target is not in the paste, not missing", () => {
    for (const end of ['... }', '[snip] }']) {
      const x = reads(`table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . udp . 53 : goto service-ULMVA6XW-kube-system/kube-dns/udp/dns }
	}
	chain service-ULMVA6XW-kube-system/kube-dns/udp/dns {
		numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-kube-system/kube-dns/udp/dns__10.244.0.2/53 }
	}
	chain endpoint-5OJB2KTY-kube-system/kube-dns/udp/dns__10.244.0.2/53 {
		ip saddr 10.244.0.2 jump mark-for-masquerade
	${end}
}
`);
      const text = rulesText(x.dump, x.trees, { label: 'p' });
      assert.doesNotMatch(text, /no DNAT rule|not read/, end);
      assert.match(text, /DNAT target not in the paste/, end);
    }
  });

  it('no Service rule: said of the paste when KUBE-SERVICES or the nat table is not in it', () => {
    const said = (text: string) => {
      const x = reads(text);
      return x.mode === 'iptables' ? rulesText(x.dump, x.trees, { label: 'p' }) : '';
    };
    const prologue =
      'Chain PREROUTING (policy ACCEPT)\ntarget     prot opt source               destination\nKUBE-SERVICES  all  --  0.0.0.0/0            0.0.0.0/0            /* kubernetes service portals */\n';
    assert.match(
      said(prologue),
      /no Service entry in the paste: KUBE-SERVICES, which the nat table jumps to, is not in it/,
    );
    assert.match(
      said('-N KUBE-FIREWALL\n-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP\n'),
      /no Service rules in the paste: it holds no nat table \(only filter\)/,
    );
    assert.match(
      said('*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\nCOMMIT\n'),
      /no Service rules found: KUBE-SERVICES in the nat table holds no per-Service entries/,
    );
    // rules nothing tells the table of are read as filter: the paste is not said to lack nat
    const untold = said('-A KUBE-SERVICES -m comment --comment "portals" -j MY-CHAIN\n');
    assert.match(untold, /nothing in the paste tells which table its rules are/);
    assert.doesNotMatch(untold, /holds no nat table/);
  });

  it("IPVS mode's jumps to its nat chains (kube-proxy's ipvs iptablesChains) tell the nat table", () => {
    for (const target of ['KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER']) {
      const x = reads(
        `-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ${target}\n`,
      );
      assert.ok(x.mode === 'iptables');
      assert.deepEqual(
        x.dump.tables.map((t) => t.name),
        ['nat'],
      );
      assert.ok(x.dump.warnings.some((w) => /^IPVS mode: /.test(w.message)));
    }
    // filter's KUBE-NODE-PORT is INPUT's health-check jump
    const input = reads(
      '-A INPUT -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT\n',
    );
    assert.ok(input.mode === 'iptables');
    assert.deepEqual(
      input.dump.tables.map((t) => t.name),
      ['filter'],
    );
  });

  it('an nft listing inside a diff: its new side read (+ and context lines), the - lines not', () => {
    const x = reads(`@@ -1,9 +1,9 @@
 table ip kube-proxy {
 	map service-ips {
 		type ipv4_addr . inet_proto . inet_service : verdict
-		elements = { 10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }
+		elements = { 10.96.0.11 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }
 	}
 	chain services {
 		ip daddr . meta l4proto . th dport vmap @service-ips
 	}
 }
`);
    assert.ok(x.mode === 'nftables');
    assert.equal(tree(x, 'kube-system/kube-dns:dns').clusterIP, '10.96.0.11');
    assert.match(x.notes[0] ?? '', /^a diff: its new side is read/);
  });

  it('an nft listing in a fenced diff, with git headers and "\\ No newline at end of file": its new side read', () => {
    const hunk = [
      'diff --git a/kube-proxy.nft b/kube-proxy.nft',
      'index 3b18e51..a9c0f2d 100644',
      '--- a/kube-proxy.nft',
      '+++ b/kube-proxy.nft',
      '@@ -1,9 +1,9 @@',
      ' table ip kube-proxy {',
      ' \tmap service-ips {',
      ' \t\ttype ipv4_addr . inet_proto . inet_service : verdict',
      '-\t\telements = { 10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }',
      '+\t\telements = { 10.96.0.11 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }',
      ' \t}',
      ' \tchain services {',
      ' \t\tip daddr . meta l4proto . th dport vmap @service-ips',
      ' \t}',
      '-}',
      '\\ No newline at end of file',
      '+}',
      '\\ No newline at end of file',
    ];
    for (const text of [
      ['```diff', ...hunk, '```'].join('\n'),
      ['The map after the change:', '', '~~~', ...hunk, '~~~', 'Any idea?'].join('\n'),
      hunk.join('\n'),
    ]) {
      const x = reads(text);
      assert.ok(x.mode === 'nftables', text);
      assert.equal(tree(x, 'kube-system/kube-dns:dns').clusterIP, '10.96.0.11');
      assert.match(x.notes[0] ?? '', /^a diff: its new side is read/);
    }
  });

  it('an nft fragment without the service-ips map says the map is not in the paste, not that the table has none', () => {
    const said = (text: string) => {
      const x = reads(text);
      return x.mode === 'nftables' ? rulesText(x.dump, x.trees, { label: 'p' }) : '';
    };
    const services =
      'chain services {\n\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}';
    const map = 'map service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n';
    for (const [text, why] of [
      [
        `\t${services}\n}\n`,
        /the service-ips map is not in it \(the paste holds part of the table: its table line is not in it/,
      ],
      [
        `table ip kube-proxy {\n\t${services}\n`,
        /the service-ips map is not in it \(the paste holds part of the table: it is cut/,
      ],
      [
        `table ip kube-proxy {\n\t...\n\t${services}\n}\n`,
        /the service-ips map is not in it \(.*it elides lines/,
      ],
      [
        `table ip kube-proxy {\n\t${map}\t\telements = { 10.96.0.10 . udp . 53 : goto serv`,
        /no element of the service-ips map is in it \(the paste holds part of the table: it is cut/,
      ],
    ] as const) {
      const text_ = said(text);
      assert.doesNotMatch(text_, /no Service rules found/, text);
      assert.match(text_, why, text_);
    }
    // a whole table says what the table holds
    assert.match(
      said(`table ip kube-proxy {\n\t${map}\t}\n\t${services}\n}\n`),
      /no Service rules found \(no service-ips elements in the table\)/,
    );
  });

  it('an nft map whose one element was not read: that line said, and not "no Service rules found"', () => {
    const x = reads(`table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 udp 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }
	}
}
`);
    assert.ok(x.mode === 'nftables');
    const text = rulesText(x.dump, x.trees, { label: 'p', file: 'p.txt' });
    assert.match(
      text,
      /warning: p\.txt:4: not read \(in map service-ips\): "10\.96\.0\.10 udp 53 : goto service-FY5PMXPG-kube-system\/kube-dns\/udp\/dns"/,
    );
    assert.doesNotMatch(text, /no Service rules found/);
    assert.match(
      text,
      /no element of the service-ips map is in it \(the paste holds part of the table: lines of it were not read\)/,
    );
  });

  it('an nft fragment that starts inside a block: the braces that end blocks above it end them', () => {
    const x =
      reads(`		     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https }
	}

	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
	}
}
`);
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.headless, true);
    assert.deepEqual(
      x.dump.chains.map((c) => c.name),
      ['services'],
    );
  });

  it("nft list ruleset of a dual-stack node: both families' tables read, each tree with its family", () => {
    const table = (family: string, vip: string) =>
      `table ${family} kube-proxy {\n\tmap service-ips {\n\t\ttype ${family === 'ip' ? 'ipv4' : 'ipv6'}_addr . inet_proto . inet_service : verdict\n\t\telements = { ${vip} . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }\n\t}\n\tchain services {\n\t\t${family} daddr . meta l4proto . th dport vmap @service-ips\n\t}\n\tchain service-FY5PMXPG-kube-system/kube-dns/udp/dns {\n\t\tnumgen random mod 1 vmap { 0 : goto endpoint-X }\n\t}\n}\n`;
    // ip6 listed first: the ip table is still the one named first in the headline
    const x = reads(table('ip6', 'fd00:10:96::a') + table('ip', '10.96.0.10'));
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.family, 'ip');
    assert.equal(x.dump.paste?.also?.family, 'ip6');
    assert.deepEqual(x.notes, []);
    assert.deepEqual(
      x.trees.services.map((t) => [t.id, t.clusterIP, t.family]),
      [
        ['kube-system/kube-dns:dns', '10.96.0.10', 'IPv4'],
        ['kube-system/kube-dns:dns', 'fd00:10:96::a', 'IPv6'],
      ],
    );
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(
      text,
      /^p: nftables tables ip kube-proxy and ip6 kube-proxy, 4 chains, 4 rules, 0 sets, 2 maps/,
    );
    assert.match(text, /\[fd00:10:96::a\]:53\/udp {2}\(IPv6\)/);
    const doc = rulesDoc(x.dump, x.trees, { label: 'p' });
    assert.equal(doc.counts.tables, 2);
    // each table's map elements are found by their address, under their own table
    const hits = buildNftPasteSearchIndex(x.dump, x.trees).search('fd00:10:96::a');
    assert.ok(hits.some((h) => h.table === 'ip6 kube-proxy' && h.chain === 'service-ips'));
    assert.ok(!hits.some((h) => h.table === 'ip kube-proxy'));
  });

  it('a part of the ip table before the whole ip table is no IPv6 table: it is said, not read', () => {
    // the tail of an ip listing (its table line not in it), then the whole listing again
    const part = `\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\telements = { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }\n\t}\n}\n`;
    const text = `${part}table ip kube-proxy {\n\tchain services {\n\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}\n}\n`;
    const x = reads(text);
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.paste?.also, undefined);
    assert.ok(x.trees.services.every((t) => t.family !== 'IPv6'));
    assert.equal(x.notes.length, 1);
    assert.match(
      x.notes[0]!,
      /part of a kube-proxy table whose table line is not in it, not read here/,
    );
  });

  it('a dual-stack paste searched by a name both tables hold: found in each', () => {
    const both = ['v4', 'v6']
      .map((f) => readFileSync(`test/fixtures/releases/37/nftables-overall-${f}.nft`, 'utf8'))
      .join('');
    const x = reads(both);
    assert.ok(x.mode === 'nftables');
    const index = buildNftPasteSearchIndex(x.dump, x.trees);
    const chains = index.search('service-ULMVA6XW').filter((h) => h.kind === 'chain');
    assert.deepEqual(chains.map((h) => h.table).sort(), ['ip kube-proxy', 'ip6 kube-proxy']);
    const services = index
      .search('ns1/svc1:p80')
      .filter((h) => h.kind === 'service' && h.text === 'ns1/svc1:p80');
    assert.deepEqual(services.map((h) => h.table).sort(), ['ip kube-proxy', 'ip6 kube-proxy']);
  });

  it('a kube-proxy table of a third kind beside a dual-stack pair is said, not read', () => {
    const table = (family: string) => `table ${family} kube-proxy {\n\tchain services {\n\t}\n}\n`;
    const x = reads(table('ip') + table('ip6') + table('inet'));
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.paste?.also?.family, 'ip6');
    assert.deepEqual(x.notes, [
      'this listing also holds table inet kube-proxy, not read here: `nft list table inet kube-proxy` on its own is read',
    ]);
  });

  it("an nft --json fragment of kube-proxy's table, cut mid-item, is kube-proxy's and cut", () => {
    const x = reads(`$ sudo nft -j list table ip kube-proxy | jq '.nftables'
[
  {"table": {"family": "ip", "name": "kube-proxy", "handle": 3}},
  {"map": {"family": "ip", "name": "service-ips", "table": "kube-proxy", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 10, "map": "verdict", "elem": [[{"concat": ["10.96.0.10", "udp", 53]}, {"goto": {"target": "service-ULMVA6XW-kube-system/kube-dns/udp/dns"}}]]}},
  {"chain": {"family": "ip", "table": "kube-proxy", "name": "service-ULMVA6XW-kube-system/kube-dns/udp/dns", "handle": 20}},
  {"rule": {"family": "ip", "table": "kube-proxy", "chain": "service-ULMVA6XW-kube-system/kube-dns/udp/dns", "handle": 21, "expr": [{"vmap": {"key": {"numgen": {"mode": "random", "mod": 2,`);
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.cut?.line, 6);
    const t = tree(x, 'kube-system/kube-dns:dns');
    assert.ok(t.partial, 'the chain whose rule was cut claims no endpoints');
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /no endpoints/);
  });

  it("a paste that starts inside kube-proxy's nft table (no table line) is kube-proxy's, by its names", () => {
    const x = reads(`chain services {
	ip daddr . meta l4proto . th dport vmap @service-ips
}
map service-ips {
	type ipv4_addr . inet_proto . inet_service : verdict
	elements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
		     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https }
}
map no-endpoint-services {
	type ipv4_addr . inet_proto . inet_service : verdict
	elements = { 10.96.5.5 . tcp . 80 comment "shop/cart:web" : reject,
		     10.96.5.6 . tcp . 80 comment "shop/cart-v2:w`);
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.headless, true);
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /part of an nftables table \(its table line is not in the paste\)/);
    // the element the paste cuts is not read; the whole one before it is
    const cart = tree(x, 'shop/cart:web');
    assert.deepEqual(
      cart.verdicts.map((v) => [v.kind, v.address, v.port]),
      [['reject', '10.96.5.5', 80]],
    );
    assert.equal(
      x.trees.services.some((t) => t.name === 'shop/cart-v2:w'),
      false,
    );
    // a map element whose chain is not in the paste: its endpoints are unknown, not "none"
    const dns = tree(x, 'kube-system/kube-dns:dns-tcp');
    assert.deepEqual(dns.absentChains, ['service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp']);
    assert.doesNotMatch(text, /no endpoints/);
    assert.match(text, /chain not in this paste: its endpoints are unknown/);
  });

  it("a paste of another tool's nft chains without a table line is not read as kube-proxy's", () => {
    assert.throws(
      () =>
        readPaste(
          `chain KUBE-SERVICES {
	meta l4proto tcp ip daddr 10.96.0.1 tcp dport 443 counter packets 0 bytes 0 jump KUBE-SVC-NPX46M4PTMTKRN6Y
}
`,
          { file: 'p.txt' },
        ),
      (e: unknown) => e instanceof NoRulesError && e.foreign === 'nft',
    );
  });

  it('ipvsadm -Ln cut after a real server address: said cut, not a view without weights', () => {
    const x = reads(`IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.0.3:53`);
    assert.ok(x.mode === 'ipvs');
    const dns = tree(x, 'TCP 10.96.0.10:53');
    assert.ok(dns.endpoints.every((e) => /cut at line 6/.test(e.shareUnknown ?? '')));
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /ends mid-line at line 6/);
    assert.doesNotMatch(text, /shows no weights/);
  });

  it('a save whose last line, without its newline, ends in a chain name short of its 16 characters is cut there', () => {
    const rules = [
      '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
      '-A KUBE-SERVICES -d 10.96.0.6/32 -p tcp -m comment --comment "ns/b:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-BBBBBBBB',
    ];
    const x = reads(rules.join('\n'));
    assert.ok(x.mode === 'iptables');
    const b = tree(x, 'ns/b:http');
    assert.equal(b.clusterIP, '10.96.0.6');
    assert.deepEqual(b.absentChains, ['KUBE-SVC-BBBBBBBB']);
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(
      text,
      /line 2: the paste is cut at line 2: it ends mid-word in KUBE-SVC-BBBBBBBB, 8 of the 16 characters/,
    );
    assert.doesNotMatch(text, /no endpoints/);
    // a whole name at the end is no cut
    const whole = reads(rules[0]!);
    assert.ok(whole.mode === 'iptables');
    assert.ok(!whole.dump.warnings.some((w) => w.kind === 'truncated'));
    // an endpoint's chain cut so: the Service port's chain is cut inside, no share claimed
    const sep = reads(
      [
        rules[0],
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http -> 10.244.0.3:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-CCCCCCCCCCCCCCCC',
        '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http -> 10.244.0.4:80" -j KUBE-SEP-DDDD',
      ].join('\n'),
    );
    const a = tree(sep, 'ns/a:http');
    assert.ok(a.partial, rulesText(sep.dump, sep.trees, { label: 'p' }));
    assert.ok(a.endpoints.some((e) => e.chain === 'KUBE-SEP-DDDD' && e.chainMissing));
  });

  it('an ip6tables -L listing after an iptables one is the IPv6 table, read beside it, not a second listing; a closing fence is no rule', () => {
    const listing = (v6: boolean) =>
      [
        '```',
        `$ sudo ip${v6 ? '6' : ''}tables -t nat -nL POSTROUTING`,
        'Chain POSTROUTING (policy ACCEPT)',
        'target     prot opt source               destination',
        `KUBE-POSTROUTING  all  ${v6 ? '    ::/0                 ::/0' : '--  0.0.0.0/0            0.0.0.0/0'}            /* kubernetes postrouting rules */`,
        '```',
      ].join('\n');
    for (const first of [false, true]) {
      const x = reads(`${listing(first)}\n\n${listing(!first)}`);
      assert.ok(x.mode === 'iptables');
      const text = rulesText(x.dump, x.trees, { label: 'p' });
      assert.match(
        text,
        new RegExp(
          `line 10: rules from line 10 are the ${first ? 'IPv4' : 'IPv6'} \\(ip${first ? '' : '6'}tables'\\) nat table, not a repeat of the ${first ? 'IPv6' : 'IPv4'} one from line 3`,
        ),
        text,
      );
      assert.doesNotMatch(text, /two listings|cut short/, text);
      assert.deepEqual(
        x.dump.tables.map((t) => `${t.name} ${t.family}`),
        first ? ['nat IPv6', 'nat IPv4'] : ['nat IPv4', 'nat IPv6'],
      );
    }
  });

  // `iptables -t nat -L -n`, then `ip6tables -t nat -L -n` typed below it, as a dual-stack node
  // lists them (ip6tables before 1.8.8 prints no `opt` dashes; DNAT's `to:[address]:port`)
  const dualStackL = [
    '$ sudo iptables -t nat -L -n',
    'Chain KUBE-SERVICES (2 references)',
    'target     prot opt source               destination',
    'KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns cluster IP */ udp dpt:53',
    '',
    'Chain KUBE-SVC-TCOU7JCQXEZGVUNU (1 references)',
    'target     prot opt source               destination',
    'KUBE-SEP-YIL6JZP7A3QYXJU2  all  --  0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns -> 10.244.0.2:53 */',
    '',
    'Chain KUBE-SEP-YIL6JZP7A3QYXJU2 (1 references)',
    'target     prot opt source               destination',
    'KUBE-MARK-MASQ  all  --  10.244.0.2           0.0.0.0/0            /* kube-system/kube-dns:dns */',
    'DNAT       udp  --  0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns */ udp to:10.244.0.2:53',
    '$ sudo ip6tables -t nat -L -n',
    'Chain KUBE-SERVICES (2 references)',
    'target     prot opt source               destination',
    'KUBE-SVC-TCOU7JCQXEZGVUNU  udp      ::/0                 fd00:10:96::a        /* kube-system/kube-dns:dns cluster IP */ udp dpt:53',
    '',
    'Chain KUBE-SVC-TCOU7JCQXEZGVUNU (1 references)',
    'target     prot opt source               destination',
    'KUBE-SEP-2AKXNIQKP6MCVJ2Z  all      ::/0                 ::/0                 /* kube-system/kube-dns:dns -> [fd00:10:244::2]:53 */',
    '',
    'Chain KUBE-SEP-2AKXNIQKP6MCVJ2Z (1 references)',
    'target     prot opt source               destination',
    'KUBE-MARK-MASQ  all      fd00:10:244::2       ::/0                 /* kube-system/kube-dns:dns */',
    'DNAT       udp      ::/0                 ::/0                 /* kube-system/kube-dns:dns */ udp to:[fd00:10:244::2]:53',
  ].join('\n');

  it('iptables -L then ip6tables -L of a dual-stack node: each family read, each Service port with its family', () => {
    const x = reads(dualStackL);
    assert.ok(x.mode === 'iptables');
    assert.deepEqual(
      x.dump.tables.map((t) => [t.name, t.family, t.startLine]),
      [
        ['nat', 'IPv4', 2],
        ['nat', 'IPv6', 15],
      ],
    );
    // kube-proxy names a dual-stack Service port's chains alike in both families: two trees
    assert.deepEqual(
      x.trees.services.map((t) => [t.family, t.clusterIP, t.endpoints.map((e) => e.address)]),
      [
        ['IPv4', '10.96.0.10', ['10.244.0.2:53']],
        ['IPv6', 'fd00:10:96::a', ['[fd00:10:244::2]:53']],
      ],
    );
    const text = rulesText(x.dump, x.trees, { label: 'p', file: 'p.txt' });
    assert.match(text, /^p: 2 tables \(nat IPv4, nat IPv6\)/);
    assert.match(
      text,
      /p\.txt:15: rules from line 15 are the IPv6 \(ip6tables'\) nat table, not a repeat of the IPv4 one from line 2: each is read, with its family/,
    );
    assert.match(text, /kube-system\/kube-dns:dns {2}\[fd00:10:96::a\]:53\/udp {2}\(IPv6\)/);
    const doc = rulesDoc(x.dump, x.trees, { label: 'p' });
    assert.deepEqual(
      doc.services.map((t) => t.family),
      ['IPv4', 'IPv6'],
    );
    assert.deepEqual('tables' in doc && doc.tables.map((t) => t.family), ['IPv4', 'IPv6']);
  });

  it("iptables-save then ip6tables-save: the second *nat is ip6tables-save's, by its own Generated line", () => {
    const save = (v6: boolean, vip: string) =>
      [
        `# Generated by ip${v6 ? '6' : ''}tables-save v1.8.7 on Mon Jan  1 00:00:00 2024`,
        '*nat',
        ':PREROUTING ACCEPT [0:0]',
        ':KUBE-SERVICES - [0:0]',
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        `-A KUBE-SERVICES -d ${vip} -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU`,
        'COMMIT',
      ].join('\n');
    const x = reads(`${save(false, '10.96.0.10/32')}\n${save(true, 'fd00:10:96::a/128')}\n`);
    assert.ok(x.mode === 'iptables');
    assert.deepEqual(
      x.dump.tables.map((t) => `${t.name} ${t.family}`),
      ['nat IPv4', 'nat IPv6'],
    );
    assert.deepEqual(
      x.trees.services.map((t) => `${t.family} ${t.clusterIP}`),
      ['IPv4 10.96.0.10', 'IPv6 fd00:10:96::a'],
    );
    // the same table of one family twice is still a repeat, or two dumps
    assert.throws(
      () =>
        readPaste(`${save(true, 'fd00::1/128')}\n${save(true, 'fd00::2/128')}\n`, { file: 'p' }),
      /table nat appears twice/,
    );
  });

  it('two dumps of the nat table back to back with no save line naming a family: the second is the other family by its addresses', () => {
    const nat = (vip: string, withCommit: boolean) =>
      [
        ':PREROUTING ACCEPT [0:0]',
        ':KUBE-SERVICES - [0:0]',
        '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        `-A KUBE-SERVICES -d ${vip} -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU`,
        ...(withCommit ? ['COMMIT'] : []),
      ].join('\n');
    const families = (text: string) => {
      const x = reads(text);
      assert.ok(x.mode === 'iptables');
      assert.deepEqual(
        x.trees.services.map((t) => `${t.family} ${t.clusterIP}`),
        ['IPv4 10.96.0.10', 'IPv6 fd00::a'],
      );
      return x.dump.tables.map((t) => `${t.name} ${t.family}`);
    };
    const v4v6 = ['nat IPv4', 'nat IPv6'];
    // each with its *nat line, neither with a "# Generated by" line
    assert.deepEqual(
      families(`*nat\n${nat('10.96.0.10/32', true)}\n*nat\n${nat('fd00::a/128', true)}\n`),
      v4v6,
    );
    // grep'd of their *nat lines, each ending in COMMIT, or not
    assert.deepEqual(
      families(`${nat('10.96.0.10/32', true)}\n${nat('fd00::a/128', true)}\n`),
      v4v6,
    );
    assert.deepEqual(
      families(`${nat('10.96.0.10/32', false)}\n${nat('fd00::a/128', false)}\n`),
      v4v6,
    );
    // one *nat, the other's *nat line lost
    assert.deepEqual(
      families(`*nat\n${nat('10.96.0.10/32', true)}\n${nat('fd00::a/128', true)}\n`),
      v4v6,
    );
    // headerless, the same dump pasted twice is read once; two of one family, the first read
    for (const commit of [false, true]) {
      const twice = reads(`${nat('10.96.0.10/32', commit)}\n${nat('10.96.0.10/32', commit)}\n`);
      assert.ok(twice.mode === 'iptables');
      assert.equal(twice.dump.tables.length, 1);
      assert.match(
        rulesText(twice.dump, twice.trees, { label: 'p' }),
        /pasted twice\?\): read once/,
      );
    }
    const two = reads(`${nat('10.96.0.10/32', false)}\n${nat('10.96.0.11/32', false)}\n`);
    assert.ok(two.mode === 'iptables');
    assert.match(
      rulesText(two.dump, two.trees, { label: 'p' }),
      /two listings of the nat table \(from lines 1 and 5\): the one from line 1 is read/,
    );
    // a grep's kube-proxy chain declared again is a repeat within one table, as before
    const grep = reads(
      ':KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]\n-A KUBE-SVC-TCOU7JCQXEZGVUNU -j KUBE-SEP-YIL6JZP7A3QYXJU2\n:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]\n-A KUBE-SVC-TCOU7JCQXEZGVUNU -j KUBE-SEP-YIL6JZP7A3QYXJU2\n',
    );
    assert.ok(grep.mode === 'iptables');
    assert.equal(grep.dump.tables.length, 1);
    // with *nat lines, the same family twice is still two dumps of one table
    assert.throws(
      () =>
        readPaste(`*nat\n${nat('10.96.0.10/32', true)}\n*nat\n${nat('10.96.0.11/32', true)}\n`, {
          file: 'p',
        }),
      /p:7: read as iptables rules: table nat appears twice \(from lines 1 and 7\), both IPv4/,
    );
  });

  it('ipvsadm -Ln cut mid-line: what is whole is read, the cut virtual server claims no share', () => {
    const x = reads(`TCP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.0.3:53                Masq    1      0          0
TCP  10.96.0.1:443 rr
  -> 192.168.0.10:6443            Masq    1      0          0
  -> 192.
`);
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.dump.cut, 6);
    const dns = tree(x, 'TCP 10.96.0.10:53');
    assert.deepEqual(
      dns.endpoints.map((e) => e.probability),
      [0.5, 0.5],
    );
    const api = tree(x, 'TCP 10.96.0.1:443');
    assert.match(api.partial ?? '', /cut at line 6/);
    assert.ok(api.endpoints.every((e) => e.shareUnknown !== undefined));
    assert.match(rulesText(x.dump, x.trees, { label: 'p' }), /ends mid-line at line 6/);
    // the same line anywhere but last is an error, with its line
    assert.throws(
      () =>
        readPaste(`TCP  10.96.0.1:443 rr\n  -> 192.\n  -> 10.0.0.1:6443 Masq 1 0 0\n`, {
          file: 'p.txt',
        }),
      /:2: read as an ipvsadm or ipset listing: not a real server's address:port/,
    );
  });

  it("ipvsadm -Ln with -Lnc's connection entries below it: the listing read, the connections named and not read as virtual servers", () => {
    const listing = `# ipvsadm -Ln
IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.10:53 rr
  -> 10.244.0.2:53                Masq    1      0          0
  -> 10.244.0.3:53                Masq    0      0          4
`;
    const connections = `# ipvsadm -Lnc
IPVS connection entries
pro expire state       source             virtual            destination
TCP 14:55  ESTABLISHED 10.244.1.7:51922   10.96.0.10:53      10.244.0.2:53
TCP 00:42  FIN_WAIT    10.244.1.7:40113   10.96.0.10:53      10.244.0.3:53
`;
    const x = reads(listing + connections);
    assert.ok(x.mode === 'ipvs');
    assert.deepEqual(x.dump.other, [{ what: 'connections', lines: [9, 10, 11, 12] }]);
    assert.deepEqual(
      tree(x, 'TCP 10.96.0.10:53').endpoints.map((e) => [e.address, e.probability, e.quirk]),
      [
        ['10.244.0.2:53', 1, undefined],
        ['10.244.0.3:53', 0, undefined],
      ],
    );
    assert.match(
      rulesText(x.dump, x.trees, { label: 'p', file: 'p.txt' }),
      /p\.txt:9: lines 9-12: ipvsadm's connection entries \(-c\), flows through the virtual servers and not virtual servers: not read/,
    );
    // the connections alone hold no virtual server: named, as before
    assert.throws(
      () => readPaste(connections, { file: 'p.txt' }),
      /p\.txt:2: this is ipvsadm's connection \(-c\) or timeout listing/,
    );
  });

  it('ipvsadm -ln typed above real servers with host names: names put in by hand, not ipvsadm -l names', () => {
    const x = reads(`$ ipvsadm -ln | grep 10.96.0.1 -A 2
TCP  10.96.0.1:443 rr
  -> master-a:6443                Masq    1      3          0
  -> master-b:6443                Masq    1      2          0
`);
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.dump.names, false);
    assert.deepEqual(x.dump.renamed, { line: 1, hosts: ['master-a', 'master-b'] });
    const text = rulesText(x.dump, x.trees, { label: 'p', file: 'p.txt' });
    assert.match(
      text,
      /p\.txt:1: the command on line 1 gives -n.*master-a, master-b are names put in by hand/,
    );
    assert.doesNotMatch(text, /without -n prints host/);
  });

  it("ipvsadm -l: a port name is read by the node's services database (netbase), else unknown", () => {
    const x = reads(`TCP  10.96.3.4:ldap rr
  -> 10.244.0.9:ldap              Masq    1      0          0
TCP  10.96.3.5:my-own-name rr
  -> 10.244.0.9:7777              Masq    1      0          0
`);
    assert.equal(tree(x, 'TCP 10.96.3.4:ldap').port, 389);
    assert.equal(tree(x, 'TCP 10.96.3.5:my-own-name').port, undefined);
  });

  it('ipvsadm -Ln | grep PORT: the virtual servers alone are IPVS, and their real servers unknown, not none', () => {
    const x = reads(`TCP  192.168.0.2:31201 rr
TCP  127.0.0.1:31201 rr
TCP  [::1]:31201 rr
`);
    assert.ok(x.mode === 'ipvs');
    const t = tree(x, 'TCP node port 31201');
    assert.match(t.partial ?? '', /no real server lines \(filtered, as by grep\)/);
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /no endpoints/);
  });

  it("`ipvsadm -Ln` begun inside a virtual server's real servers and cut inside a row's address: neither row read, both said", () => {
    const x = reads(`  -> 10.244.1.5:8080              Masq    1      0          0
TCP  10.96.0.50:80 rr
  -> 10.244.1.5:8080              Masq    1      0          0
  -> 10.244.1.6:80
`);
    assert.ok(x.mode === 'ipvs');
    const t = tree(x, 'TCP 10.96.0.50:80');
    // print_service_entry pads each address and prints four columns after it: ":80" may be ":8080"
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.shareUnknown !== undefined]),
      [['10.244.1.5:8080', true]],
    );
    const text = rulesText(x.dump, x.trees, { label: 'p', file: 'p.txt' });
    assert.match(text, /p\.txt:1: line 1: the paste starts inside a listing/);
    assert.match(text, /p\.txt:4: the listing ends mid-line at line 4/);
  });

  it('one virtual server line alone: IPVS, its real servers unknown, not none', () => {
    const x = reads('```\nTCP  10.1.109.187:443 rr\n```\n');
    assert.ok(x.mode === 'ipvs');
    const t = tree(x, 'TCP 10.1.109.187:443');
    assert.match(t.partial ?? '', /line alone.*real servers are unknown/);
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /no endpoints/);
  });

  it("one virtual server line beside iptables' own lines anywhere in the paste (an -L view, -c counters, past the first 4 KiB): the iptables rules are read, the line said", () => {
    const ipvs = '# ipvsadm -Ln | grep 10.96.0.10\nTCP  10.96.0.10:53 rr\n';
    const listing = `# iptables -t nat -L KUBE-SERVICES -n
Chain KUBE-SERVICES (2 references)
target     prot opt source               destination
KUBE-SVC-ERIFXISQEP7F7OF4  tcp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns-tcp cluster IP */ tcp dpt:53
`;
    const rule =
      '-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4\n';
    const prose = 'the DNS Service does not answer from this node, here is what it has\n'.repeat(
      80,
    );
    // grep's -n / -H prefixes the parser strips before a rule: the rule is iptables' all the same
    const grepped = [
      `# iptables-save -t nat | grep -n 10.96.0.10\n12:${rule}`,
      `# grep -H 10.96.0.10 nat.txt\nnat.txt:${rule}`,
    ];
    for (const rules of [
      listing,
      `[4:240] ${rule}`,
      `${prose}# iptables-save -t nat\n${rule}`,
      ...grepped,
    ]) {
      const x = reads(ipvs + rules);
      assert.equal(x.mode, 'iptables', rules.slice(0, 40));
      assert.ok(x.mode === 'iptables');
      assert.ok(x.trees.services.some((t) => t.name === 'kube-system/kube-dns:dns-tcp'));
      assert.ok(x.dump.warnings.some((w) => w.kind === 'foreign' && w.line === 2));
    }
  });

  it('ipvsadm -l names cut at their column (no port) are read as names; a redacted <address> is no name', () => {
    const names = reads(`TCP  ip-10-49-120-28.eu-west-1.co rr
  -> ip-10-48-0-18.eu-west-1.comp Masq    1      0          0
  -> ip-10-48-0-201.eu-west-1.com Masq    1      0          0
`);
    assert.ok(names.mode === 'ipvs' && names.dump.names);
    assert.deepEqual(
      tree(names, 'TCP ip-10-49-120-28.eu-west-1.co').endpoints.map((e) => [
        e.hostStart,
        e.probability,
      ]),
      [
        ['ip-10-48-0-18.eu-west-1.comp', 0.5],
        ['ip-10-48-0-201.eu-west-1.com', 0.5],
      ],
    );
    const redacted = reads(`Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  <public>.20:3129 rr
  -> 10.8.19.203:3129             Masq    1      0          0
TCP  10.8.9.0:30151 rr
  -> 10.8.3.90:443                Masq    1      0          0
TCP  10.8.9.0:31851 rr
  -> 10.8.4.4:6980                Masq    1      0          0
  -> 10.8.4.5:6980                Masq
`);
    assert.ok(redacted.mode === 'ipvs');
    assert.equal(redacted.dump.names, false, 'an address redacted by hand is not a name');
    // several node-range ports on one address: a node's, where kube-proxy binds its node ports
    assert.deepEqual(tree(redacted, 'TCP node port 30151').nodePorts, [30151]);
    // the last line stops before its weight: cut there, and that virtual server claims no share
    assert.equal(redacted.dump.cut, 9);
    assert.ok(tree(redacted, 'TCP node port 31851').endpoints.every((e) => e.shareUnknown));
  });

  it('iptables rules run together on one line (line ends lost) are each read; " -A " in a comment is not a rule', () => {
    const x = reads(
      '-A KUBE-SVC-H2F4SOSDHAEHZFXQ -m comment --comment "a -A b" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-W565FQEHFWB3IXKJ -A KUBE-SVC-H2F4SOSDHAEHZFXQ -m comment --comment "a -A b" -j KUBE-SEP-AAAAAAAAAAAAAAAA\n',
    );
    assert.ok(x.mode === 'iptables');
    assert.equal(x.dump.table('nat')!.chain('KUBE-SVC-H2F4SOSDHAEHZFXQ')!.ruleCount, 2);
    // said once with its line, which the warning carries
    const w = x.dump.warnings.find((w) => w.kind === 'joined')!;
    assert.equal(
      `${w.line}: ${w.message}`,
      '1: 2 rules run together on one line (their line ends were lost in copying): each is read',
    );
  });

  it('a last line without its newline and without a target stopped mid-rule: not read, said', () => {
    const x = reads(
      '-A KUBE-SVC-H2F4SOSDHAEHZFXQ -m statistic --mode random --probability 0.5 -j KUBE-SEP-W565FQEHFWB3IXKJ\n-A KUBE-SVC-H2F4SOSDHAEHZFXQ -m statistic --mode random --probability 0',
    );
    assert.ok(x.mode === 'iptables');
    assert.equal(x.dump.table('nat')!.chain('KUBE-SVC-H2F4SOSDHAEHZFXQ')!.ruleCount, 1);
    assert.match(
      x.dump.warnings.find((w) => w.kind === 'truncated')!.message,
      /cut at line 2: it ends mid-rule \(a rule without its target\)/,
    );
  });

  it('an nft --json item whose closing braces are elided is read up to them', () => {
    const x = reads(`...
    {
      "rule": {
        "family": "ip",
        "table": "kube-proxy",
        "chain": "services",
        "expr": [{ "vmap": { "key": { "concat": [] }, "data": "@service-ips" } }]
      }
...`);
    assert.ok(x.mode === 'nftables');
    assert.equal(x.dump.chain('services')?.rules.length, 1);
  });

  it('a masquerade rule limited to an interface is not "all"', () => {
    const x =
      reads(`-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -i azv+ -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-AAAAAAAAAAAAAAAA
`);
    assert.deepEqual(
      tree(x, 'kube-system/kube-dns:dns').masquerade.map((m) => m.condition),
      ['! -i azv+'],
    );
  });

  it('an iptables -L paste after the legacy-tables warning is read, and told to run iptables-legacy-save', () => {
    const x = reads(
      'Chain KUBE-SERVICES (2 references)\ntarget     prot opt source               destination\n# Warning: iptables-legacy tables present, use iptables-legacy to see them\n',
    );
    assert.equal(x.mode, 'iptables');
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /read from an `iptables -L` listing/);
    assert.match(text, /iptables-legacy-save/);
  });

  it('a node whose Services Cilium serves (GKE Dataplane V2) says so when no Service rule is found', () => {
    const x = reads(`*nat
:PREROUTING ACCEPT [0:0]
:CILIUM_PRE_nat - [0:0]
-A PREROUTING -m comment --comment "cilium-feeder: CILIUM_PRE_nat" -j CILIUM_PRE_nat
COMMIT
`);
    assert.match(rulesText(x.dump, x.trees, { label: 'p' }), /Cilium replaces kube-proxy/);
  });

  it("ipvsadm's rule commands typed (any option order, long options, edits and deletes) are read as ipvsadm applies them", () => {
    const x = reads(`$ sudo /sbin/ipvsadm -A -t 10.96.0.10:53 -s rr -p
$ sudo /sbin/ipvsadm --add-server --tcp-service 10.96.0.10:53 --real-server 10.244.0.2:53 --masquerading
$ sudo /sbin/ipvsadm -a -m -w 3 -r 10.244.0.3:53 -t 10.96.0.10:53
$ sudo /sbin/ipvsadm -a -t 10.96.0.10:53 -r 10.244.0.4:53 -m
$ sudo /sbin/ipvsadm -d -t 10.96.0.10:53 -r 10.244.0.4:53
$ sudo /sbin/ipvsadm -E -t 10.96.0.10:53 -s wrr
#./ipvsadm -a -t 10.96.0.10:53 -r 10.244.0.9:53 -m
`);
    assert.ok(x.mode === 'ipvs');
    const [vs] = x.dump.services;
    // -p without a timeout: ipvsadm's 300 seconds; -E keeps what it does not change
    assert.deepEqual([vs!.scheduler, vs!.persistent], ['wrr', 300]);
    // a line commented out of a script ("#./ipvsadm") is not typed
    assert.deepEqual(
      vs!.realServers.map((r) => `${r.address} ${r.forward} ${r.weight}`),
      ['10.244.0.2:53 Masq 1', '10.244.0.3:53 Masq 3'],
    );
    assert.deepEqual(
      tree(x, 'TCP 10.96.0.10:53').endpoints.map((e) => e.probability),
      [0.25, 0.75],
    );
  });

  it('ipvsadm commands with short options run together (-At, -at) and real servers without a port (the service port, as -g gives)', () => {
    const x = reads(`[root@lb ~]# ipvsadm -At 8.8.8.8:80 -s rr
[root@lb ~]# ipvsadm -at 8.8.8.8:80 -r 192.168.10.2 -m
[root@lb ~]# ipvsadm -at 8.8.8.8:80 -r 192.168.10.3:8080 -g -w 2
`);
    assert.ok(x.mode === 'ipvs');
    assert.deepEqual(
      x.dump.services[0]!.realServers.map((r) => `${r.address} ${r.forward} ${r.weight}`),
      ['192.168.10.2:80 Masq 1', '192.168.10.3:80 Route 2'],
    );
  });

  it("a kube-proxy chain's last rule without its target is cut, newline or not; a jump cut inside a fixed name is not read", () => {
    for (const end of ['', '\n']) {
      const x = reads(
        `-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU\n-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m co${end}`,
      );
      assert.ok(x.mode === 'iptables');
      assert.match(
        rulesText(x.dump, x.trees, { label: 'p' }),
        /cut at line 2/,
        JSON.stringify(end),
      );
      const y = reads(
        `-A KUBE-SERVICES -d 10.59.240.10/32 -p udp -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU\n-A KUBE-SERVICES ! -s 10.56.0.0/14 -d 10.59.240.10/32 -p udp -m udp --dport 53 -j KUBE-MARK-${end}`,
      );
      assert.ok(y.mode === 'iptables');
      assert.equal(y.dump.table('nat')?.ruleCount, 1);
    }
    // the one line there is, cut: said so, not called another tool's line
    assert.throws(
      () =>
        readPaste('-A KUBE-SERVICES -d 10.59.240.10/32 -p udp -m udp --dport 53 -j KUBE-MARK-', {
          file: 'p.txt',
        }),
      /no whole iptables rule in p\.txt: the paste is cut at line 1/,
    );
  });

  it("kube-proxy's nftables base chains alone (nat-prerouting jumping to services) are its table's, not iptables-nft's", () => {
    const x = reads(
      'chain nat-prerouting {\n\ttype nat hook prerouting priority dstnat; policy accept;\n\tjump services\n}\n',
    );
    assert.equal(x.mode, 'nftables');
  });

  it("grep --color's codes around each match (with or without their escape byte) are removed, and said", () => {
    for (const [on, off] of [
      ['\u001b[01;31m\u001b[K', '\u001b[m\u001b[K'],
      ['[01;31m[K', '[m[K'],
    ]) {
      const x = reads(
        `-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j ${on}KUBE-SVC-TCOU7JCQXEZGVUNU${off}\n-A ${on}KUBE-SVC-TCOU7JCQXEZGVUNU${off} -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2\n`,
      );
      assert.ok(x.mode === 'iptables');
      assert.equal(tree(x, 'kube-system/kube-dns:dns').clusterIP, '10.96.0.10');
      assert.match(rulesText(x.dump, x.trees, { label: 'p' }), /terminal colour codes/);
      const ipvs = reads(
        `TCP  ${on}10.96.0.10${off}:53 rr\n  -> 10.244.0.2:53                Masq    1      0          0\n`,
      );
      assert.ok(ipvs.mode === 'ipvs');
      assert.equal(ipvs.dump.services[0]!.address, '10.96.0.10:53');
    }
  });

  it("conntrack's table (conntrack -L, /proc/net/nf_conntrack) is named, not called prose", () => {
    for (const text of [
      'tcp      6 86397 ESTABLISHED src=10.244.2.30 dst=10.96.14.20 sport=40218 dport=80 src=10.244.3.15 dst=10.244.2.30 sport=8080 dport=40218 [ASSURED] mark=0 use=1\nconntrack v1.4.8 (conntrack-tools): 1 flow entries have been shown.\n',
      'ipv4     2 udp      17 27 src=10.244.2.30 dst=10.96.0.10 sport=39011 dport=53 src=10.244.1.12 dst=10.244.2.30 sport=53 dport=39011 mark=0 zone=0 use=2\n',
    ])
      assert.throws(
        () => readPaste(text, { file: 'p.txt' }),
        (e: unknown) => e instanceof NoRulesError && e.foreign === 'conntrack',
      );
  });

  it("iptables-nft-save's note in place of a table it cannot print is said, not dropped", () => {
    const x = reads(
      "*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\nCOMMIT\n# Table `filter' is incompatible, use 'nft' tool.\n",
    );
    assert.ok(x.mode === 'iptables');
    assert.match(
      rulesText(x.dump, x.trees, { label: 'p' }),
      /could not print table filter.*nft list table ip filter/,
    );
  });

  it('`ip addr` (kube-ipvs0) and `kubectl get endpoints` / `endpointslices` are named, not called prose', () => {
    assert.equal(
      foreign(
        '73: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default\n    link/ether 1a:ce:f5:5f:c1:4d brd ff:ff:ff:ff:ff:ff\n    inet 10.96.0.1/32 scope global kube-ipvs0\n       valid_lft forever preferred_lft forever\n',
      ),
      'ip-addr',
    );
    assert.equal(
      foreign(
        'NAME         ENDPOINTS                         AGE\nnginx        10.244.1.3:80,10.244.2.4:80       2m\n',
      ),
      'kubectl-endpoints',
    );
    assert.equal(
      foreign(
        'NAME             ADDRESSTYPE   PORTS   ENDPOINTS                   AGE\nnginx-7xk2p      IPv4          80      10.244.1.12,10.244.2.8      21s\n',
      ),
      'kubectl-endpointslices',
    );
  });

  it("other dataplanes' Service listings and kubectl's older or all-namespace forms are named, not called prose", () => {
    // kubectl get svc -A (NAMESPACE first), kubectl before 1.8 (no TYPE), describe aligned by tabs
    assert.equal(
      foreign(
        'NAMESPACE   NAME   TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)   AGE\ndefault     web    ClusterIP   10.96.4.20    <none>        80/TCP    3d\n',
      ),
      'kubectl-services',
    );
    assert.equal(
      foreign(
        'NAME   CLUSTER-IP    EXTERNAL-IP   PORT(S)          AGE\nweb    10.96.4.20    <nodes>       80:30080/TCP     3d\n',
      ),
      'kubectl-services',
    );
    assert.equal(
      foreign('IP:\t\t\t10.96.4.20\nPort:\t\t\thttp\t80/TCP\nSession Affinity:\tNone\n'),
      'kubectl-describe-svc',
    );
    // PowerShell's Format-List of Get-HnsPolicyList
    assert.equal(
      foreign(
        'ActivityId         : 0A1B2C3D-0000-0000-0000-000000000001\nHostComputeNetwork : 0A1B2C3D-0000-0000-0000-000000000002\nIsApplied          : True\nPolicies           : {@{ExternalPort=80; InternalPort=8080; Protocol=6; Type=ELB; VIPs=System.Object[]}}\n',
      ),
      'hns',
    );
    // Calico eBPF's NAT map: a frontend and its backends
    assert.equal(
      foreign(
        '10.96.0.10 port 53 proto 17 id 2 count 2 local 1\n\t2:0\t 10.244.1.3:53\n\t2:1\t 10.244.2.4:53\n',
      ),
      'calico-bpf-nat',
    );
    // OVS flows and a select group (ovs-ofctl dump-flows, antctl get ovsflows)
    assert.equal(
      foreign(
        ' cookie=0x1, duration=5.1s, table=41, n_packets=0, n_bytes=0, priority=200,tcp,nw_dst=10.96.4.20,tp_dst=80 actions=group:3\ngroup_id=3,type=select,bucket=bucket_id:0,weight:100,actions=resubmit(,42)\n',
      ),
      'ovs-flows',
    );
  });

  it("Calico eBPF's program log and its counters dump are named by what printed them", () => {
    // trace_pipe's whole line (task-pid, CPU, flags, time), an IPv6 program's, the XDP and
    // connect-time hooks (log.h's -X, -C)
    assert.equal(
      foreign(
        '  curl-1234  [001] ..s1 100.000001: bpf_trace_printk: IPv6 eth0-----------X: New packet\n   <idle>-0 [000] d.s3. 100.2: bpf_trace_printk: cali12345678901-C: connect\n',
      ),
      'calico-bpf-log',
    );
    // another program's bpf_trace_printk, without Calico's interface-and-hook prefix, is not Calico's
    assert.notEqual(foreign('bpf_trace_printk: hello from my program\n'), 'calico-bpf-log');
    // `calico-node -bpf counters dump`: tablewriter's border, header, a row, the caption
    assert.equal(
      foreign(
        '+----------+-------+---------+--------+-----+\n| CATEGORY | TYPE  | INGRESS | EGRESS | XDP |\n+----------+-------+---------+--------+-----+\n| Accepted | by policy | 12 | 0 | N/A |\n+----------+-------+---------+--------+-----+\ndumped eth0 counters.\n',
      ),
      'calico-bpf-counters',
    );
  });

  it("kube-router's log is named by its own files (its service proxy, routing and policy controllers)", () => {
    // under journald's unit name, or klog's header alone
    assert.equal(
      foreign(
        'Jan 01 10:00:00 node1 kube-router[812]: I0101 10:00:00.000000     812 service_endpoints_sync.go:86] IPVS servers and services are synced to desired state\n',
      ),
      'kube-router-log',
    );
    assert.equal(
      foreign(
        'I0104 03:41:47.637587       1 kube-router.go:207] Running /usr/local/bin/kube-router version v0.2.3\n',
      ),
      'kube-router-log',
    );
    // a few of its lines among prose: no kind names the paste, but whose log they are is said
    const few = (() => {
      try {
        readPaste(
          'Here is what I see:\nnothing works\nany idea?\nthe log says\nJan 19 09:25:26 node1 kube-router[812]: I0119 09:25:26.433117     812 service_endpoints_sync.go:86] synced\n',
          { file: 'p.txt' },
        );
      } catch (e) {
        return e as Error;
      }
    })();
    assert.ok(few instanceof NoRulesError && few.foreign === undefined, String(few));
    assert.match(few.message, /; line 5 is kube-router's log: what it did/);
    // glog's note for a line logged before its flags were parsed; a viewer's RFC 3339 timestamps
    assert.equal(
      foreign(
        'ERROR: logging before flag.Parse: I0713 05:35:46.088221       1 network_services_controller.go:639] Successfully added service: 10.96.0.1:tcp:443\n',
      ),
      'kube-router-log',
    );
    assert.equal(
      foreign(
        'kr-1 kube-router 2024-05-12T19:28:56.945792737-05:00 I0513 00:28:56.945748   52913 service_endpoints_sync.go:692] Cleaning up\n',
      ),
      'kube-router-log',
    );
  });

  it("a Cilium map through its agent's map API, the kernel's iptables TRACE lines and kubectl 1.0's tables are named by what printed them", () => {
    // `cilium map get cilium_lb4_services_v2` / `cilium_lb4_backends`
    const mapGet = [
      'Key                  Value                 State   Error',
      '10.96.0.10:53        0 (2) [FLAGS: 0x0]    sync',
    ];
    assert.equal(foreign(`${mapGet.join('\n')}\n`), 'cilium-map');
    assert.equal(
      foreign('Key   Value                 State   Error\n7     UDP://10.244.1.3:53   sync\n'),
      'cilium-map',
    );
    // nf_log_trace's lines after journald's prefix, and after dmesg's timestamp
    const trace =
      'TRACE: nat:KUBE-SERVICES:rule:3 IN=eth0 OUT= SRC=10.244.1.5 DST=10.96.0.10 LEN=60 PROTO=UDP SPT=41000 DPT=53';
    assert.equal(foreign(`Mar  2 10:00:01 node-a kernel: ${trace}\n`), 'iptables-trace');
    assert.equal(foreign(`[ 1234.567890] ${trace}\n`), 'iptables-trace');
    // kubectl 1.0: Services with LABELS and SELECTOR, endpoints without AGE
    assert.equal(
      foreign(
        'NAME   LABELS   SELECTOR   IP(S)        PORT(S)\nweb    app=web  app=web    10.96.4.20   80/TCP\n',
      ),
      'kubectl-services',
    );
    assert.equal(foreign('NAME   ENDPOINTS\nweb    10.244.1.3:80\n'), 'kubectl-endpoints');
  });

  it('nft -t (--terse) lists the maps without their elements: the Service chains are read as Service ports whose entries are not in the paste, and the omission is said', () => {
    const x = reads(
      '# nft -t list table ip kube-proxy\ntable ip kube-proxy {\n\tcomment "rules for kube-proxy"\n\tset cluster-ips {\n\t\ttype ipv4_addr\n\t\tcomment "Active ClusterIPs"\n\t}\n\n\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\tcomment "ClusterIP, ExternalIP and LoadBalancer IP traffic"\n\t}\n\n\tchain services {\n\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}\n\n\tchain service-FY5PMXPG-kube-system/kube-dns/udp/dns {\n\t\tip daddr 10.96.0.10 udp dport 53 ip saddr != 10.244.0.0/16 jump mark-for-masquerade\n\t\tnumgen random mod 1 vmap { 0 : goto endpoint-IHIQWJ7L-kube-system/kube-dns/udp/dns__10.244.0.2/53 }\n\t}\n\n\tchain endpoint-IHIQWJ7L-kube-system/kube-dns/udp/dns__10.244.0.2/53 {\n\t\tip saddr 10.244.0.2 jump mark-for-masquerade\n\t\tmeta l4proto udp dnat to 10.244.0.2:53\n\t}\n}\n',
    );
    assert.ok(x.mode === 'nftables');
    const t = tree(x, 'kube-system/kube-dns:dns');
    assert.equal(t.entryAbsent, true);
    // 1.29-1.32 match the cluster IP and port in the Service chain's masquerade rule
    assert.deepEqual([t.clusterIP, t.port], ['10.96.0.10', 53]);
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability]),
      [['10.244.0.2:53', 1]],
    );
    assert.ok(x.notes.some((n) => /nft -t/.test(n)));
  });

  it('`ipvsadm -ln` typed by a path (bin/ipvsadm) gives -n: its "(null)" addresses are no host names', () => {
    const x = reads(`# bin/ipvsadm -ln
IP Virtual Server version 0.0.0 (size=0)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  [(null)]:5001 rr
  -> [(null)]:5001                FullNat 1      0          0
`);
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.dump.names, false);
    assert.equal(x.dump.renamed, undefined);
  });

  it('a save typed inside another command (`kubectl exec … -- ip6tables-save | grep`) settles the family of its lines', () => {
    const x = reads(`$ kubectl -n kube-system exec ds/kube-proxy -- ip6tables-save | grep kube-dns
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2
$ kubectl -n kube-system exec ds/kube-proxy -- iptables-save | grep kube-dns
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2
`);
    assert.ok(x.mode === 'iptables');
    assert.deepEqual(
      x.dump.tables.map((t) => `${t.name} ${t.family}`),
      ['nat IPv6', 'nat IPv4'],
    );
    // the same family's save typed after lines of it: one table goes on
    const y =
      reads(`-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
$ iptables-save | grep dns-tcp
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4
`);
    assert.ok(y.mode === 'iptables');
    assert.deepEqual(
      y.dump.tables.map((t) => `${t.name} ${t.family} ${t.ruleCount}`),
      ['nat IPv4 2'],
    );
  });

  it('a paste starting mid-rule (its first line the tail of a rule): said, and the first chain claims no share', () => {
    const x = reads(`--probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAAA
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.244.0.3:53" -j KUBE-SEP-CCCCCCCCCCCCCCCC
`);
    assert.ok(x.mode === 'iptables');
    assert.match(rulesText(x.dump, x.trees, { label: 'p' }), /starts mid-rule at line 1/);
    assert.ok(tree(x, 'kube-system/kube-dns:dns').endpoints.every((e) => e.shareUnknown));
    assert.equal(tree(x, 'kube-system/kube-dns:dns-tcp').endpoints[0]!.probability, 1);
  });

  it('a dump in a quoted string whose opening quote is above the paste is read unescaped; its last "-A" cut at the chain name is a cut', () => {
    const x = reads(
      String.raw`-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment \"kube-system/kube-dns:dns-tcp -> 10.244.0.3:53\" -j KUBE-SEP-CCCCCCCCCCCCCCCC\n-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment \"kube-system/kube-dns:dns cluster IP\" -j KUBE-MARK-MASQ\n-A KUBE-SVC-TC` +
        '\n',
    );
    assert.ok(x.mode === 'iptables');
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /inside a quoted string/);
    assert.match(text, /a rule cut at its chain name/);
    // the chain the cut name may go on is not said to have no endpoints
    assert.doesNotMatch(text, /no endpoints/);
  });

  it('"-A" alone or with a word as the last line: one cut, said where rules are read', () => {
    const rule =
      '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA';
    for (const [end, why] of [
      ['-A', /it ends mid-rule \(a rule cut before its chain name\)/],
      ['-A KUBE-SVC-AAAA', /it ends mid-rule \(a rule cut at its chain name\)/],
    ] as const) {
      const x = reads(`${rule}\n${end}`);
      assert.ok(x.mode === 'iptables');
      assert.match(rulesText(x.dump, x.trees, { label: 'p' }), why);
    }
  });

  it("nft's error report for the rules kube-proxy loads is named as such, not as its table", () => {
    assert.throws(
      () =>
        readPaste(
          [
            '/dev/stdin:12:40-53: Error: Could not process rule: No such file or directory',
            'add rule ip kube-proxy external-AAAAAAAA-ns/svc/tcp/http fib saddr type local jump mark-for-masquerade',
            '                                       ^^^^^^^^^^^^^^',
          ].join('\n'),
          { file: 'p.txt' },
        ),
      (e: unknown) => e instanceof NoRulesError && e.foreign === 'nft-error',
    );
  });

  it("nft aborting on its own assertion where a listing was asked for is named as nft's crash", () => {
    // a root prompt, the command, nft's assertion, the shell's "Aborted": no table in it
    for (const prompt of ['vm-001 ~ # ', '$ sudo '])
      assert.throws(
        () =>
          readPaste(
            [
              `${prompt}nft list table ip kube-proxy`,
              "nft: netlink_delinearize.c:136: netlink_parse_concat_expr: Assertion `consumed > 0' failed.",
              'Aborted (core dumped)',
            ].join('\n'),
            { file: 'p.txt' },
          ),
        (e: unknown) =>
          e instanceof NoRulesError && e.foreign === 'nft-crash' && /nft failing/.test(e.message),
      );
  });
});

describe("Cilium's status pasted before another tool's listing", () => {
  const status = readFileSync(
    'test/fixtures/cilium/pastes/cilium-status-verbose-1150rc1.txt',
    'utf8',
  );
  // its first lines, in the first 4 KiB: the agent's status by its fields
  const short = status.split('\n').slice(0, 6).join('\n');
  /** The reader and the Services it reads (their endpoints), or what it said. */
  const summary = (text: string) => {
    try {
      const got = readPaste(text, { file: 'p.txt' });
      if (got.mode === 'not-kube-proxy') return got.message;
      const services = got.trees.services.map(
        (t) => `${t.id} ${t.endpoints.map((e) => e.address).join(',')}`,
      );
      return `${got.mode} ${services.join('; ')}`;
    } catch (e) {
      return (e as Error).message;
    }
  };
  const pastes: [string, string][] = [
    ['iptables -t nat -nvL', 'docker-desktop-iptables-nat-nvL.txt'],
    ['nft list ruleset', 'k3s-nftables-hellopod-9ep.txt'],
    ['nft -j (jq)', 'nft-json-jq-kep-services-dispatch-rule-elided.txt'],
    ['ipvsadm -ln', 'kind-ipvsadm-ln-indented.txt'],
    ['iptables -S', 'iptables-S-nat-prompt-cut.txt'],
    ['iptables-save', 'kind-1.23-iptables-save-traefik.txt'],
  ];
  for (const [what, file] of pastes)
    it(`its lines, then ${what}: read as that listing alone, not refused as the status`, () => {
      const listing = readFileSync(`${DIR}/${file}`, 'utf8');
      const alone = summary(listing);
      assert.match(alone, /^(?:iptables|nftables|ipvs) /);
      assert.equal(summary(`${short}\n${listing}`), alone);
      // the whole status --verbose, past the first 4 KiB, its fields not read as rows
      assert.ok(status.length > 4096);
      assert.equal(summary(`${status}\n${listing}`), alone);
    });
  it('the status alone: refused as the status, at the line it starts', () => {
    assert.match(
      summary(`$ cilium-dbg status --verbose\n${status}`),
      /^p\.txt:2: this is the agent's `cilium-dbg status`/,
    );
  });
});

describe('what an elision limits, and what it does not', () => {
  const svc = 'KUBE-SVC-NPX46M4PTMTKRN6Y';
  it("an elision in one command's output does not limit the next command's listing", () => {
    const x = reads(`$ sudo iptables -t nat -S KUBE-SERVICES
-N KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${svc}
...
$ sudo iptables -t nat -S ${svc} | grep -e '-A'
-A ${svc} -m comment --comment "default/web:http -> 10.1.0.5:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-ZXMNUKOKXUTL2MK2
-A ${svc} -m comment --comment "default/web:http -> 10.1.0.6:80" -j KUBE-SEP-XGLOHA7QRQ3V22RZ
`);
    const t = x.trees.services.find((s) => s.name === 'default/web:http')!;
    assert.deepEqual(
      t.endpoints.map((e) => (e.shareUnknown ? null : e.probability)),
      [0.5, 0.5],
    );
  });

  it('a KUBE-SEP chain DNATs to its first DNAT rule: one after it is never reached', () => {
    const x = reads(`*nat
:KUBE-SERVICES - [0:0]
:${svc} - [0:0]
:KUBE-SEP-ZXMNUKOKXUTL2MK2 - [0:0]
-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${svc}
-A ${svc} -m comment --comment "default/web:http -> 10.1.0.5:80" -j KUBE-SEP-ZXMNUKOKXUTL2MK2
-A KUBE-SEP-ZXMNUKOKXUTL2MK2 -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.1.0.5:80
-A KUBE-SEP-ZXMNUKOKXUTL2MK2 -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.1.0.6:80
COMMIT
`);
    const t = x.trees.services.find((s) => s.name === 'default/web:http')!;
    assert.deepEqual(
      t.endpoints.map((e) => e.address),
      ['10.1.0.5:80'],
    );
  });

  it('a chain whose hash a person redacted (digits and all) is still the kube-proxy chain it names', () => {
    const x = reads(`*nat
:KUBE-SERVICES - [0:0]
:${svc} - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAA1 - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAA2 - [0:0]
-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${svc}
-A ${svc} -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAA1
-A ${svc} -j KUBE-SEP-AAAAAAAAAAAAAAA2
-A KUBE-SEP-AAAAAAAAAAAAAAA1 -p tcp -m tcp -j DNAT --to-destination 10.1.0.5:80
-A KUBE-SEP-AAAAAAAAAAAAAAA2 -p tcp -m tcp -j DNAT --to-destination 10.1.0.6:80
COMMIT
`);
    const t = x.trees.services.find((s) => s.name === 'default/web:http')!;
    assert.deepEqual(
      t.endpoints.map((e) => [e.address, e.probability]),
      [
        ['10.1.0.5:80', 0.5],
        ['10.1.0.6:80', 0.5],
      ],
    );
  });

  it("-L rows under a column header whose Chain line was left out are no chain's the paste names", () => {
    const row = (sep: string, comment: string, more = '') =>
      `${sep}  all  --  0.0.0.0/0  0.0.0.0/0  /* ${comment} */${more}`;
    const x = reads(`Chain KUBE-SERVICES (2 references)
target     prot opt source               destination
${svc}  tcp  --  0.0.0.0/0            10.96.0.50           /* default/web:http cluster IP */ tcp dpt:80

Chain ${svc} (1 references)
target     prot opt source               destination
${row('KUBE-SEP-ZXMNUKOKXUTL2MK2', 'default/web:http -> 10.1.0.5:80')}
...
target     prot opt source               destination
${row('KUBE-SEP-BBBBBBBBBBBBBBBB', 'kube-system/kube-dns:dns -> 10.244.0.3:53', ' statistic mode random probability 0.50000000000')}
${row('KUBE-SEP-CCCCCCCCCCCCCCCC', 'kube-system/kube-dns:dns -> 10.244.0.4:53')}
`);
    const t = x.trees.services.find((s) => s.name === 'default/web:http')!;
    // before: kube-dns's endpoints were read as web's
    assert.deepEqual(
      t.endpoints.map((e) => e.chain),
      ['KUBE-SEP-ZXMNUKOKXUTL2MK2'],
    );
    assert.ok(x.mode === 'iptables');
    // a blank line, or a line that is no row, ends them: a command's -S output after is read
    const dns = 'KUBE-SVC-TCOU7JCQXEZGVUNU';
    const y = reads(`$ iptables -t nat -L -n
Chain KUBE-SERVICES (2 references)
target     prot opt source               destination
${dns}  udp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns cluster IP */ udp dpt:53
target     prot opt source               destination
${row('KUBE-SEP-BBBBBBBBBBBBBBBB', 'kube-system/kube-dns:dns -> 10.244.0.3:53')}
$ iptables -t nat -S ${dns}
-N ${dns}
-A ${dns} -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.4:53" -j KUBE-SEP-CCCCCCCCCCCCCCCC
`);
    const d = y.trees.services.find((s) => s.name === 'kube-system/kube-dns:dns')!;
    assert.deepEqual(
      d.endpoints.map((e) => e.chain),
      ['KUBE-SEP-CCCCCCCCCCCCCCCC'],
    );
    assert.ok(
      x.dump.warnings.some((w) =>
        /lines 10, 11: rows under a column header whose Chain line is not in the paste/.test(
          w.message,
        ),
      ),
    );
  });
});

describe("kube-proxy's endpoint chains read where the rules around them are not in the paste", () => {
  // iptables 1.4.x reading a rule a newer iptables wrote prints one range per bit of its flags,
  // from bytes that are no address: these three forms are printed in one real dump
  // (kube-proxy 1.2x, iptables-save v1.4.21; see the corpus' k8s-114537 paste)
  const garbled = [
    '--to-destination :0 --persistent --to-destination :0 --persistent --to-destination 0.0.0.0 --persistent',
    '--to-destination  --random --to-destination  --random --to-destination',
    '--to-destination 10.0.0.1:0 --persistent',
  ];
  for (const target of garbled)
    it(`a DNAT target iptables 1.4 cannot print ("${target.slice(0, 40)}..."): the address from kube-proxy's comment on the jump, else the hairpin rule's IP and no port`, () => {
      const rules = (comment: string) =>
        reads(
          [
            '*nat',
            '-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
            `-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "${comment}" -j KUBE-SEP-BBBBBBBBBBBBBBBB`,
            '-A KUBE-SEP-BBBBBBBBBBBBBBBB -s 10.244.1.5/32 -m comment --comment "ns/a:http" -j KUBE-MARK-MASQ',
            `-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "ns/a:http" -m tcp -j DNAT ${target}`,
            'COMMIT',
          ].join('\n'),
        );
      const [said] = tree(rules('ns/a:http -> 10.244.1.5:8080'), 'ns/a:http').endpoints;
      assert.equal(said?.address, '10.244.1.5:8080');
      assert.equal(said?.addressFromComment, true);
      assert.ok(said?.quirk);
      const [hairpin] = tree(rules('ns/a:http'), 'ns/a:http').endpoints;
      assert.equal(hairpin?.address, undefined, 'no port is taken from the garbled target');
      assert.equal(hairpin?.inferredIP, '10.244.1.5');
    });

  it('a DNAT rule whose --to-destination ends the line with no address is a cut, not that print', () => {
    assert.throws(
      () =>
        readPaste(
          '*nat\n-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp -j DNAT --to-destination\nCOMMIT\n',
          { file: 'p.txt' },
        ),
      /without an address/,
    );
  });

  it('KUBE-SEP chains pasted alone are endpoints of the Service ports their comments name, whose KUBE-SVC chain is not in the paste', () => {
    const x = reads(
      [
        '-A KUBE-SEP-5JL6OY6WVFSZ67SX -s 10.244.0.9/32 -m comment --comment "kube-system/kube-dns:metrics" -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-5JL6OY6WVFSZ67SX -p tcp -m comment --comment "kube-system/kube-dns:metrics" -m tcp -j DNAT --to-destination 10.244.0.9:9153',
        '-A KUBE-SEP-MU7PO7VX34QPS5HP -s 10.244.0.9/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-MU7PO7VX34QPS5HP -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.9:53',
        '-A KUBE-SEP-NOCOMMENTXXXXXXX -p tcp -m tcp -j DNAT --to-destination 10.244.0.7:80',
      ].join('\n'),
    );
    const dns = tree(x, 'kube-system/kube-dns:dns');
    assert.equal(dns.protocol, 'udp');
    // kube-proxy's own name for that Service port's chain: KUBE-SVC- and the hash of name + protocol
    assert.equal(dns.chains.svc, 'KUBE-SVC-TCOU7JCQXEZGVUNU');
    assert.deepEqual(
      dns.endpoints.map((e) => [e.address, e.shareUnknown !== undefined]),
      [['10.244.0.9:53', true]],
    );
    assert.ok(dns.partial && dns.entryAbsent);
    assert.equal(tree(x, 'kube-system/kube-dns:metrics').endpoints[0]?.address, '10.244.0.9:9153');
    const text = textOf(x);
    assert.doesNotMatch(text, /no endpoints|100(\.0)?%/, text);
    // a chain whose comments name no Service port stays a chain no rule in the paste reaches
    assert.deepEqual(
      x.trees.orphans.map((o) => o.chain),
      ['KUBE-SEP-NOCOMMENTXXXXXXX'],
    );
  });

  it("a KUBE-SEP chain its Service's chain is in the paste without a jump to is no endpoint of it", () => {
    const x = reads(
      [
        '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns" -j KUBE-SEP-AAAAAAAAAAAAAAAA',
        '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.8:53',
        '-A KUBE-SEP-MU7PO7VX34QPS5HP -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.9:53',
      ].join('\n'),
    );
    assert.deepEqual(
      tree(x, 'kube-system/kube-dns:dns').endpoints.map((e) => e.address),
      ['10.244.0.8:53'],
    );
    assert.ok(x.trees.orphans.some((o) => o.chain === 'KUBE-SEP-MU7PO7VX34QPS5HP'));
  });
});

describe("an ipvsadm listing of what kube-proxy's IPVS proxier never writes", () => {
  // kube-proxy gives each real server address, port and weight alone: the kernel forwards by NAT
  const listing = (forward: string) =>
    [
      'IP Virtual Server version 1.2.1 (size=4096)',
      'Prot LocalAddress:Port Scheduler Flags',
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
      'TCP  10.96.0.20:80 rr persistent 300',
      `  -> 10.244.1.5:80                ${forward}  1      0          0`,
      '',
    ].join('\n');
  const of = (forward: string) => {
    const x = readPaste(listing(forward), { file: 'p.txt' });
    assert.ok(x.mode === 'ipvs');
    return { tree: x.trees.services[0]!, text: textOf(x) };
  };

  for (const forward of ['Route', 'Tunnel'])
    it(`${forward}: not called kube-proxy's, its persistence no Service's session affinity`, () => {
      const { tree, text } = of(forward);
      assert.match(text, /line 5: real servers forwarded by .*never writes.*not kube-proxy's/);
      assert.match(text, /persistence is not read as a Service's session affinity/);
      assert.equal(tree.affinitySeconds, undefined);
      assert.ok(tree.endpoints.every((e) => !e.affinity));
      assert.doesNotMatch(text, /session affinity: ClientIP|entry {2}Service IP/);
    });

  it('Masq, nothing else of kube-proxy: its persistence said as IPVS persistence, no affinity', () => {
    const { tree, text } = of('Masq');
    assert.doesNotMatch(text, /never writes/);
    assert.equal(tree.affinitySeconds, undefined);
    assert.ok(tree.endpoints.every((e) => !e.affinity));
    assert.match(
      text,
      /persistent 300 s \(IPVS persistence: nothing in the listing says kube-proxy/,
    );
    assert.doesNotMatch(text, /session affinity: ClientIP/);
  });

  // kube-proxy's marks: the `kubernetes` Service (443 to the apiserver's 6443), a node port on
  // two node addresses, its ipsets beside the listing
  const marks: [string, string[]][] = [
    ['the kubernetes Service', ['TCP  10.96.0.1:443 rr', '  -> 192.168.0.10:6443  Masq  1  0  0']],
    [
      'a node port',
      [
        'TCP  192.168.0.10:30080 rr',
        '  -> 10.244.1.5:80  Masq  1  0  0',
        'TCP  127.0.0.1:30080 rr',
        '  -> 10.244.1.5:80  Masq  1  0  0',
      ],
    ],
    [
      'its ipsets',
      ['', 'Name: KUBE-CLUSTER-IP', 'Type: hash:ip,port', 'Members:', '10.96.0.20,tcp:80'],
    ],
  ];
  for (const [mark, lines] of marks)
    it(`Masq beside ${mark}: kube-proxy's, its persistence read as session affinity`, () => {
      const x = readPaste(`${listing('Masq')}${lines.join('\n')}\n`, { file: 'p.txt' });
      assert.ok(x.mode === 'ipvs');
      const t = x.trees.services.find((s) => s.id === 'TCP 10.96.0.20:80');
      assert.equal(t?.affinitySeconds, 300, textOf(x));
      assert.ok(t.endpoints.every((e) => e.affinity));
    });

  it('a node port persistent past what a Service may ask (86400 s): not session affinity', () => {
    const x = readPaste(
      listing('Masq')
        .replace('10.96.0.20:80', '127.0.0.1:30080')
        .replace('persistent 300', 'persistent 90000'),
      { file: 'p.txt' },
    );
    assert.ok(x.mode === 'ipvs');
    assert.equal(x.trees.services[0]!.affinitySeconds, undefined);
    assert.match(textOf(x), /persistent 90000 s \(IPVS persistence/);
  });
});
