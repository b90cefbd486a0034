// The other proxy mode's kube-proxy rules left on a node (r149-3), built from real recordings of
// kube-proxy v1.33.13 (test/fixtures/releases/33, written by the real kube-proxy in the lab):
// node-a of the nftables recording given node-a's iptables-save of the iptables recording (the
// same lab cluster, its Pods since rescheduled), the reverse, and node-a's IPVS state of the IPVS
// recording on the iptables and nftables nodes. Every clean recording gives no such finding.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { DriftInputError } from '../../src/core/dataplane/drift.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const NFT = join(FIXTURES, '33', 'nftables');
const IPT = join(FIXTURES, '33', 'iptables');
const IPVS = join(FIXTURES, '33', 'ipvs');
const nftStem = nftStems('IPv4').json;

const recorded = (dir: string, stem: string) =>
  readFileSync(join(dir, 'nodes', 'node-a', `${stem}.txt`), 'utf8');

/** `dir`'s recording with node-a's `stems` outputs taken from `from`'s recording (or `text`). */
async function withOutput(
  dir: string,
  from: string,
  stems: string | string[],
  text?: string,
): Promise<Facts> {
  const facts = await readSnapshot(dir);
  for (const stem of [stems].flat()) facts.nodes['node-a']![stem] = text ?? recorded(from, stem);
  return facts;
}

const leftovers = (facts: Facts, node = 'node-a') =>
  new Analysis(facts, { code: allModes })
    .node(node)
    .drift()
    .findings.filter((f) => f.id === 'other-mode-leftover');

/** The DNAT targets ("10.244.1.2:80") of kube-proxy's nftables table as nft's JSON lists them. */
const nftTargets = (json: string) =>
  new Set(
    [...json.matchAll(/"dnat": \{"addr": "([\d.]+)", "port": (\d+)\}/g)].map(
      (m) => `${m[1]}:${m[2]}`,
    ),
  );

describe('other-mode-leftover: iptables rules beside nftables mode', () => {
  it('hooked iptables chains DNATing to addresses that are no endpoint now: an error, with their lines', async () => {
    const facts = await withOutput(NFT, IPT, 'iptables-save');
    const a = new Analysis(facts, { code: allModes });
    // the mode is the configuration's: the node's rules show both modes
    assert.equal(a.state('node-a').mode.value, 'nftables');
    const found = leftovers(facts);
    assert.equal(found.length, 1);
    const f = found[0]!;
    assert.equal(f.status, 'fail');
    assert.match(f.title, /^iptables mode's state left beside nftables mode: \d+ Service ports/);
    // the jumps that hook them, with the lines the dump holds them on
    const dump = facts.nodes['node-a']!['iptables-save']!.split('\n');
    const nat = dump.indexOf('*nat');
    for (const chain of ['PREROUTING', 'OUTPUT']) {
      const at = dump.findIndex(
        (l, i) => i > nat && l.startsWith(`-A ${chain} `) && l.endsWith('-j KUBE-SERVICES'),
      );
      assert.ok(at >= 0, chain);
      assert.ok(
        f.evidence.some(
          (e) =>
            e.kind === 'observed' &&
            e.text === `nodes/node-a/iptables-save.txt:${at + 1}: ${dump[at]}`,
        ),
        `${chain} jump at line ${at + 1}`,
      );
    }
    // every address said stale is no endpoint the live table DNATs to
    const live = nftTargets(facts.nodes['node-a']![nftStem]!);
    const said = [...f.explanation.matchAll(/([\d.]+:\d+) for /g)].map((m) => m[1]!);
    assert.ok(said.length > 0);
    for (const s of said) assert.ok(!live.has(s), `${s} is a live endpoint`);
    assert.match(
      f.next!.argv.join(' '),
      /^kubectl -n kube-system exec kube-proxy-\S+ -- kube-proxy --cleanup$/,
    );
    // node-b recorded no leftover
    assert.deepEqual(leftovers(facts, 'node-b'), []);
  });

  it('the same chains with no jump into them act on no packet: information, no drift', async () => {
    const text = readFileSync(join(IPT, 'nodes', 'node-a', 'iptables-save.txt'), 'utf8')
      .split('\n')
      .filter((l) => !/^-A (PREROUTING|OUTPUT) .*-j KUBE-SERVICES$/.test(l))
      .join('\n');
    const facts = await withOutput(NFT, IPT, 'iptables-save', text);
    const f = leftovers(facts)[0]!;
    assert.equal(f.status, 'pass');
    assert.equal(f.info, true);
    assert.match(f.explanation, /act on no packet/);
    assert.equal(new Analysis(facts, { code: allModes }).node('node-a').drift().drifted, false);
  });
});

describe('other-mode-leftover: kube-proxy nftables table beside iptables mode', () => {
  it('its hooked nat chains are named, and its stale endpoints', async () => {
    const facts = await withOutput(IPT, NFT, nftStem);
    const a = new Analysis(facts, { code: allModes });
    assert.equal(a.state('node-a').mode.value, 'iptables');
    const found = leftovers(facts);
    assert.equal(found.length, 1);
    const f = found[0]!;
    assert.equal(f.status, 'fail');
    assert.match(f.title, /^nftables mode's state left beside iptables mode/);
    const texts = f.evidence.map((e) => e.text);
    assert.ok(
      texts.includes(
        `nodes/node-a/${nftStem}.txt: chain nat-prerouting { type nat hook prerouting priority -100; }`,
      ),
    );
    assert.ok(
      texts.includes(
        `nodes/node-a/${nftStem}.txt: chain nat-output { type nat hook output priority -100; }`,
      ),
    );
    // stale: DNAT targets of the leftover table that the live iptables rules do not send to
    const dump = facts.nodes['node-a']!['iptables-save']!;
    const said = [...f.explanation.matchAll(/([\d.]+:\d+) for /g)].map((m) => m[1]!);
    assert.ok(said.length > 0);
    const live = new Set([...dump.matchAll(/--to-destination (\S+)/g)].map((m) => m[1]!));
    for (const s of said) assert.ok(!live.has(s), `${s} is live`);
    // the live rules themselves are still compared clean
    assert.deepEqual(
      a
        .node('node-a')
        .drift()
        .findings.filter((x) => x.id !== 'other-mode-leftover' && !x.info),
      [],
    );
  });
});

describe('other-mode-leftover: IPVS virtual servers beside iptables and nftables modes', () => {
  it('on an iptables node whose kube-ipvs0 still holds their addresses: a warning, with its rows', async () => {
    const facts = await withOutput(IPT, IPVS, ['ipvsadm-save', 'ip-addr']);
    assert.equal(new Analysis(facts, { code: allModes }).state('node-a').mode.value, 'iptables');
    const f = leftovers(facts)[0]!;
    // IPVS runs after the live nat chains: it takes only what they leave undnatted
    assert.equal(f.status, 'warn');
    assert.match(f.title, /^ipvs mode's state left beside iptables mode/);
    assert.match(f.explanation, /kube-ipvs0 still holds their addresses/);
    const bound = f.evidence.find((e) => e.source === 'nodes/node-a/ip-addr.txt')!;
    assert.equal(bound.kind, 'observed');
    assert.match(bound.text, /^kube-ipvs0 holds \d+ virtual server addresses: /);
    // each stale real server quoted is its row of ipvsadm-save, on its line
    const rows = recorded(IPVS, 'ipvsadm-save').split('\n');
    const quoted = f.evidence.filter((e) => e.text.startsWith('nodes/node-a/ipvsadm-save.txt:'));
    assert.ok(quoted.length > 0);
    for (const e of quoted) {
      const [, line, text] = /^nodes\/node-a\/ipvsadm-save\.txt:(\d+): (.*)$/.exec(e.text)!;
      assert.equal(text, rows[Number(line) - 1]!.trim());
      assert.match(text!, /^-a /);
    }
  });

  it('on an nftables node whose kube-ipvs0 was not read: said so, a warning still', async () => {
    const facts = await withOutput(NFT, IPVS, 'ipvsadm-save');
    const f = leftovers(facts)[0]!;
    assert.equal(f.status, 'warn');
    assert.match(f.explanation, /kube-ipvs0 holds none of their addresses, or was not read/);
    assert.ok(!f.evidence.some((e) => e.source === 'nodes/node-a/ip-addr.txt'));
  });
});

describe('other-mode-leftover: none on the clean recordings', () => {
  const recordings = readdirSync(FIXTURES).flatMap((minor) =>
    readdirSync(join(FIXTURES, minor))
      .map((mode) => join(FIXTURES, minor, mode))
      .filter((dir) => existsSync(join(dir, 'RECORDED'))),
  );
  it('every recording of every release is read', () => assert.ok(recordings.length >= 20));
  for (const dir of recordings)
    it(dir.slice(FIXTURES.length + 1), async () => {
      const facts = await readSnapshot(dir);
      const a = new Analysis(facts, { code: allModes });
      let compared = 0;
      for (const node of Object.keys(facts.nodes))
        for (const family of ['IPv4', 'IPv6'] as const) {
          try {
            const d = a.node(node, undefined, family).drift();
            compared++;
            assert.deepEqual(
              d.findings.filter((f) => f.id === 'other-mode-leftover').map((f) => f.title),
              [],
              `${node} ${family}`,
            );
          } catch (e) {
            if (!(e instanceof DriftInputError)) throw e;
          }
        }
      assert.ok(compared > 0);
    });
});
