// IP conventions: the demo snapshot (the demo cluster): Pod CIDR 10.244.0.0/16, Service CIDR
// 10.1.0.0/16, nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80 and 10.244.1.7:80.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { endpointsUnseen, locate, rawLines, treeRows } from '../../src/tui/screens/rules-rows.js';
import { allModes } from '../support/modes.js';

const facts = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
const node = analyze({ facts, code: allModes }).nodes.find((n) => n.name === 'vm-12-7-centos')!;
const trees = node.trees!;
const NGINX = 'default/nginx-svc:http';
const text = (rows: ReturnType<typeof treeRows>) =>
  rows.map(
    (r) =>
      `${'  '.repeat(r.depth)}${r.kind} ${r.chain ?? r.tree.id}${r.open === undefined ? '' : r.open ? ' open' : ' closed'}`,
  );

describe('the Rules tree as rows', () => {
  it("opens the target Service's tree and keeps the others closed", () => {
    assert.deepEqual(text(treeRows(trees, { open: {}, focus: 'default/nginx-svc' })), [
      'service default/kubernetes:https closed',
      'service default/nginx-svc:http open',
      '  entry KUBE-SVC-ELCM5PCEQWBTUJ2I',
      '  masquerade KUBE-SERVICES',
      '  chain KUBE-SVC-ELCM5PCEQWBTUJ2I open',
      '    endpoint KUBE-SEP-SMDVMBZNJPO5AA7R',
      '    endpoint KUBE-SEP-FNO4E6JYD7EGUHTP',
      'service kube-system/kube-dns:dns closed',
      'service kube-system/kube-dns:dns-tcp closed',
      'service kube-system/kube-dns:metrics closed',
    ]);
  });

  it('closes and opens rows by key', () => {
    const rows = treeRows(trees, {
      open: {
        [`svc:${NGINX}`]: true,
        [`chain:${NGINX}:KUBE-SVC-ELCM5PCEQWBTUJ2I`]: false,
        'svc:default/kubernetes:https': true,
      },
    });
    assert.deepEqual(text(rows).slice(0, 7), [
      'service default/kubernetes:https open',
      '  entry KUBE-SVC-NPX46M4PTMTKRN6Y',
      '  masquerade KUBE-SERVICES',
      '  chain KUBE-SVC-NPX46M4PTMTKRN6Y open',
      '    endpoint KUBE-SEP-DW2K7X6GK2FMAPJW',
      'service default/nginx-svc:http open',
      '  entry KUBE-SVC-ELCM5PCEQWBTUJ2I',
    ]);
    assert.equal(text(rows)[8], '  chain KUBE-SVC-ELCM5PCEQWBTUJ2I closed');
  });

  it('gives each row its parent', () => {
    const rows = treeRows(trees, { open: {}, focus: 'default/nginx-svc' });
    assert.deepEqual(
      rows.map((r) => r.parent),
      [undefined, undefined, 1, 1, 1, 4, 4, undefined, undefined, undefined],
    );
  });

  it('finds the row of an endpoint chain, opening what hides it', () => {
    const at = locate(trees, NGINX, 'KUBE-SEP-FNO4E6JYD7EGUHTP', { open: {} })!;
    assert.deepEqual(at.open, [`svc:${NGINX}`, `chain:${NGINX}:KUBE-SVC-ELCM5PCEQWBTUJ2I`]);
    const rows = treeRows(trees, { open: Object.fromEntries(at.open.map((k) => [k, true])) });
    assert.equal(rows[at.row]?.chain, 'KUBE-SEP-FNO4E6JYD7EGUHTP');
  });

  it('finds the Service row when the chain is not in its tree', () => {
    const at = locate(trees, 'kube-system/kube-dns:dns', 'KUBE-SERVICES', { open: {} })!;
    const rows = treeRows(trees, { open: Object.fromEntries(at.open.map((k) => [k, true])) });
    assert.deepEqual(
      [rows[at.row]?.kind, rows[at.row]?.tree.id],
      ['service', 'kube-system/kube-dns:dns'],
    );
  });

  it('has no row for a Service the dump does not have', () => {
    assert.equal(locate(trees, 'default/gone:http', undefined, { open: {} }), undefined);
  });
});

describe('raw rule lines behind a row', () => {
  const rows = treeRows(trees, { open: {}, focus: 'default/nginx-svc' });
  const lines = (kind: string, chain?: string) =>
    rawLines(
      node.rs!,
      rows.find((r) => r.kind === kind && (chain === undefined || r.chain === chain))!,
    ).map((l) => `${l.table} ${l.chain} ${l.text}`);

  it('an endpoint: the jump to it, then its KUBE-SEP chain', () => {
    assert.deepEqual(lines('endpoint', 'KUBE-SEP-FNO4E6JYD7EGUHTP'), [
      'nat KUBE-SVC-ELCM5PCEQWBTUJ2I -A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-FNO4E6JYD7EGUHTP',
      'nat KUBE-SEP-FNO4E6JYD7EGUHTP -A KUBE-SEP-FNO4E6JYD7EGUHTP -s 10.244.1.7/32 -j KUBE-MARK-MASQ',
      'nat KUBE-SEP-FNO4E6JYD7EGUHTP -A KUBE-SEP-FNO4E6JYD7EGUHTP -p tcp -m tcp -j DNAT --to-destination 10.244.1.7:80',
    ]);
  });

  it('a Service: its entry and masquerade rules in KUBE-SERVICES', () => {
    const nginx = rawLines(node.rs!, rows[1]!).map((l) => l.text);
    assert.deepEqual(nginx, [
      '-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-ELCM5PCEQWBTUJ2I',
      '-A KUBE-SERVICES ! -s 10.244.0.0/16 -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-MARK-MASQ',
    ]);
  });
});

describe('a chain nothing reaches', () => {
  it('is a row after the Services, marked orphan, with its own rules behind it', async () => {
    const f = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
    const out = f.nodes['vm-12-7-centos']!;
    // a KUBE-SEP chain left behind: declared and holding its DNAT, with no jump to it
    const nat = out['iptables-save']!.indexOf('*nat\n') + '*nat\n'.length;
    const dump = `${out['iptables-save']!.slice(0, nat)}:KUBE-SEP-LEFTOVERAAAAAAAA - [0:0]\n${out['iptables-save']!.slice(nat)}`;
    out['iptables-save'] = dump.replace(
      /\nCOMMIT\n(?![\s\S]*\*nat)/,
      '\n-A KUBE-SEP-LEFTOVERAAAAAAAA -p tcp -m tcp -j DNAT --to-destination 10.244.9.9:80\nCOMMIT\n',
    );
    const n = analyze({ facts: f, code: allModes }).nodes.find((x) => x.name === 'vm-12-7-centos')!;
    const rows = treeRows(n.trees!, { open: {} });
    const last = rows.at(-1)!;
    assert.deepEqual(
      [last.kind, last.chain, last.orphan?.rules],
      ['orphan', 'KUBE-SEP-LEFTOVERAAAAAAAA', 1],
    );
    assert.deepEqual(
      rawLines(n.rs!, last).map((l) => l.text),
      ['-A KUBE-SEP-LEFTOVERAAAAAAAA -p tcp -m tcp -j DNAT --to-destination 10.244.9.9:80'],
    );
  });
});

describe("drift's marks in the Rules tree", () => {
  it('a Service whose shares are not even carries "! mis-weighted" and why', async () => {
    const { rulesModel } = await import('../../src/tui/screens/Rules.js');
    const { initialState } = await import('../../src/tui/state.js');
    const f = await readSnapshot('snapshots/nginx-svc');
    const out = f.nodes['vm-12-7-centos']!;
    // the first of the two endpoints picked 9 times in 10, not one in two
    out['iptables-save'] = out['iptables-save']!.replace(
      '-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.50000000000',
      '-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.90000000000',
    );
    const data = analyze(
      { facts: f, code: allModes },
      { target: { namespace: 'default', service: 'nginx-svc' } },
    );
    const node = data.nodes.findIndex((n) => n.name === 'vm-12-7-centos');
    const m = rulesModel(initialState('rules', node), data.nodes, 'default/nginx-svc', 120, 20);
    assert.deepEqual([...m.marks.uneven.keys()], ['default/nginx-svc:http']);
    assert.match(m.marks.uneven.get('default/nginx-svc:http')!, /90%/);
  });

  for (const dir of ['stale-endpoint', 'ipvs-stale-real-server'])
    it(`${dir}: the stale endpoint on vm-12-11-centos carries "! stale" and why, the current one nothing`, async () => {
      const { rulesModel } = await import('../../src/tui/screens/Rules.js');
      const { initialState } = await import('../../src/tui/state.js');
      const data = analyze(
        { facts: await readSnapshot(`snapshots/${dir}`), code: allModes },
        {
          target: { namespace: 'default', service: 'nginx-svc' },
        },
      );
      const node = data.nodes.findIndex((n) => n.name === 'vm-12-11-centos');
      const m = rulesModel(initialState('rules', node), data.nodes, 'default/nginx-svc', 120, 20);
      const stale = m.rows.filter(
        (r) => r.kind === 'endpoint' && m.marks.stale.has(`${r.tree.name} ${r.endpoint!.address}`),
      );
      assert.deepEqual(
        stale.map((r) => r.endpoint!.address),
        ['10.244.1.7:80'],
      );
      assert.equal(
        m.marks.stale.get('default/nginx-svc:http 10.244.1.7:80'),
        'not an endpoint now [endpoint-stale]',
      );
      // the other node holds no stale rule: no mark there
      const other = data.nodes.findIndex((n) => n.name === 'vm-12-7-centos');
      const clean = rulesModel(
        initialState('rules', other),
        data.nodes,
        'default/nginx-svc',
        120,
        20,
      );
      assert.equal(clean.marks.stale.size, 0);
    });
});

describe('a tree without endpoint rows on the Rules screen', () => {
  const paste = (slug: string) => {
    const file = `test/fixtures/pastes/${slug}.txt`;
    const got = readPaste(readFileSync(file, 'utf8'), { file });
    assert.ok(got.mode !== 'not-kube-proxy', got.mode);
    return got.trees;
  };
  it('is never "no endpoints" where its chain is not in the paste (rke2#5657: KUBE-EXT not pasted)', () => {
    const [a, b] = paste('rke2-5657-L-v-kube-nodeports-kube-ext-names-prose').services;
    for (const t of [a!, b!]) {
      assert.equal(t.endpoints.length, 0);
      assert.ok(endpointsUnseen(t) && endpointsUnseen(t, t.absentChains![0]), t.id);
    }
  });
  it('is "no endpoints" where the listing shows the frontend without any (cilium#45252)', () => {
    const t = paste(
      'cilium-45252-db-show-frontends-grep-etp-local-scopes-external-without-backends',
    ).services.find((x) => x.entries.some((e) => e.line === 5))!;
    assert.equal(t.endpoints.length, 0);
    assert.equal(endpointsUnseen(t, t.chains.svc), false);
  });
});

describe('a chain the paste holds part of, as rows', () => {
  it('carries no share note: what its rules leave is not said where more of them may follow', () => {
    const svc = 'KUBE-SVC-ELCM5PCEQWBTUJ2I';
    const got = readPaste(
      [
        `$ iptables -t nat -S ${svc} | head -3`,
        `-N ${svc}`,
        `-A ${svc} -m comment --comment "default/web:http" -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-SMDVMBZNJPO5AA7R`,
        `-A ${svc} -m comment --comment "default/web:http" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-FNO4E6JYD7EGUHTP`,
      ].join('\n'),
      { file: 'p' },
    );
    const trees = got.mode === 'iptables' ? got.trees : assert.fail(`read as ${got.mode}`);
    const t = trees.services[0]!;
    assert.ok(t.partial && t.fallThrough > 0);
    const rows = treeRows(trees, { open: {}, focus: t.id });
    assert.deepEqual(
      rows.filter((r) => r.kind === 'note').map((r) => r.note),
      [],
    );
  });
});
