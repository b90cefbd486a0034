// A faulted nftables table of a release (the real tables of test/fixtures/releases, a set, chain
// or rules removed in the test, as a fault or a hand would) still reads as written by its own
// release: written-by takes only what is there, and only what a later release would have
// rewritten (kube-proxy deletes only the Service chains it no longer writes, so an older
// release's chain outlives an upgrade). Signs that disagree, or none, say the release is not
// known from the table. Drift, kube-proxy's version not read, then compares the faulted table
// with its own release and names the fault.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { nftShown } from '../../src/core/dataplane/nftables/drift/written-by.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { allModes } from '../support/modes.js';
import { recordings } from '../versions/record.js';

type Item = Record<string, Record<string, unknown> | undefined>;
const nftables = recordings().filter((r) => r.mode === 'nftables');
const dirOf = (minor: number) => nftables.find((r) => r.release.minor === minor)!.dir;
const DIGEST = `@sha256:${'0123456789abcdef'.repeat(4)}`;
const stem = nftStems('IPv4').json;

/** node-a's listing of the recording of `minor`, its items as nft -j lists them. */
const itemsOf = (minor: number): Item[] =>
  (
    JSON.parse(readFileSync(join(dirOf(minor), 'nodes/node-a', `${stem}.txt`), 'utf8')) as {
      nftables: Item[];
    }
  ).nftables;

const isRule = (i: Item, chain: RegExp) => chain.test(String(i['rule']?.['chain'] ?? ''));
const names = (i: Item, what: string, name: string) => i[what]?.['name'] === name;
const mentions = (i: Item, text: string) =>
  JSON.stringify(i['rule']?.['expr'] ?? '').includes(text);

/** Faults a table can have: each keeps what nft allows (no rule jumps to a chain removed, no
 * rule reads a set removed). */
const FAULTS = {
  /** the hairpin-connections set and the masquerading rule that reads it removed */
  noHairpin: (l: Item[]) =>
    l.filter((i) => !names(i, 'set', 'hairpin-connections') && !mentions(i, 'hairpin-connections')),
  /** the masquerading chain cut to its first rule */
  masqueradingCut: (l: Item[]) => {
    let k = 0;
    return l.filter((i) => !isRule(i, /^masquerading$/) || k++ === 0);
  },
  /** the filter-*-pre-dnat chains and their rules removed */
  noPreDnat: (l: Item[]) =>
    l.filter((i) => !/-pre-dnat$/.test(String(i['chain']?.['name'])) && !isRule(i, /-pre-dnat$/)),
  /** every DNAT of the Service chains removed */
  noServiceDnat: (l: Item[]) =>
    l.filter((i) => !(isRule(i, /^(service|local)-/) && mentions(i, '"dnat"'))),
};

const tableOf = (items: Item[]) => parseNftJson(JSON.stringify({ nftables: items })).tables[0]!;

/** The recording of `minor`, kube-proxy's image pinned by digest (its version not read), node-a's
 * table replaced by `items`. */
async function faulted(minor: number, items: Item[]): Promise<Facts> {
  const facts = await readSnapshot(dirOf(minor));
  for (const o of facts.objects) {
    const spec = o['spec'] as { containers?: { image?: string }[] } | undefined;
    for (const c of spec?.containers ?? [])
      if (c.image?.includes('/kube-proxy:')) c.image = c.image.replace(/:[^:/]+$/, DIGEST);
  }
  facts.nodes['node-a']![stem] = JSON.stringify({ nftables: items });
  return facts;
}

/** node-a's drift: the release compared, who wrote the table, the findings. */
async function drift(minor: number, items: Item[]) {
  const a = new Analysis(await faulted(minor, items), { code: allModes });
  assert.equal(a.state('node-a').version, undefined, 'the version is not read');
  const d = a.node('node-a').drift();
  return {
    release: d.release?.minor,
    writtenBy: d.writtenBy ?? '',
    findings: d.findings.map((f) => `${severityOf(f)} ${f.id}${f.service ? ` ${f.service}` : ''}`),
  };
}

describe('a faulted nftables table reads as written by its own release', () => {
  it('v1.36 without its hairpin-connections set: v1.36 by its Service chains, the masquerade named', async () => {
    const d = await drift(36, FAULTS.noHairpin(itemsOf(36)));
    assert.equal(d.release, 36);
    assert.match(d.writtenBy, /^kube-proxy v1\.36 \(a Service chain's DNAT through a numgen map/);
    assert.doesNotMatch(d.writtenBy, /hairpin/);
    assert.ok(d.findings.length > 0);
    assert.deepEqual(
      [...new Set(d.findings.map((f) => f.split(' ').slice(0, 2).join(' ')))],
      ['warning masquerade-missing'],
    );
  });

  it('v1.37 without its hairpin-connections set: v1.37, the masquerade named', async () => {
    const d = await drift(37, FAULTS.noHairpin(itemsOf(37)));
    assert.equal(d.release, 37);
    assert.match(d.writtenBy, /^kube-proxy v1\.37 \(/);
    assert.ok(d.findings.includes('warning masquerade-missing'), d.findings.join('; '));
  });

  it('v1.35 with its masquerading chain cut to one rule: 1.34-1.35, compared as v1.35', async () => {
    const d = await drift(35, FAULTS.masqueradingCut(itemsOf(35)));
    assert.equal(d.release, 35);
    assert.match(
      d.writtenBy,
      /^kube-proxy 1\.34-1\.35 \(a rule jumping to mark-for-masquerade: 1\.35 or earlier; a Service chain's masquerade rule without its port: 1\.34 or later\)/,
    );
    assert.deepEqual(d.findings, ['warning masquerade-missing']);
  });

  it('v1.33 without its filter-*-pre-dnat chains: compared as v1.33, the chains named missing', async () => {
    const d = await drift(33, FAULTS.noPreDnat(itemsOf(33)));
    assert.equal(d.release, 33);
    assert.match(
      d.writtenBy,
      /^kube-proxy 1\.30-1\.33 \(a Service chain's masquerade rule with its port/,
    );
    assert.deepEqual(d.findings, ['error entry-jump-missing', 'error entry-jump-missing']);
  });

  it('v1.37 upgraded from v1.35 (its chains left: kube-proxy deletes only Service chains): v1.37', () => {
    const old = itemsOf(35);
    const left = old.filter(
      (i) => names(i, 'chain', 'mark-for-masquerade') || isRule(i, /^mark-for-masquerade$/),
    );
    assert.equal(left.length, 2, 'the v1.35 chain and its rule');
    const s = nftShown(tableOf([...itemsOf(37), ...left]));
    assert.deepEqual([s.oldest, s.newest], [37, 37], s.signs.map((x) => x.what).join('; '));
  });

  it('signs that disagree: not known from the table, each sign said', async () => {
    // a v1.35 table holding v1.36's hairpin-connections set
    const hairpin = itemsOf(36).filter((i) => names(i, 'set', 'hairpin-connections'));
    const d = await drift(35, [...itemsOf(35), ...hairpin]);
    assert.match(
      d.writtenBy,
      /^a release not known from the table \(its signs disagree: .*a hairpin-connections set: 1\.36 or later.*a rule jumping to mark-for-masquerade: 1\.35 or earlier/,
    );
  });

  it('no sign left: not known from the table, not a guess', async () => {
    const items = FAULTS.noServiceDnat(FAULTS.noPreDnat(FAULTS.noHairpin(itemsOf(37))));
    assert.deepEqual(nftShown(tableOf(items)).signs, []);
    const d = await drift(37, items);
    assert.match(
      d.writtenBy,
      /^a release not known from the table \(it holds nothing only some releases write\), by its table; kube-proxy's version was not read: compared as v1\.37$/,
    );
  });
});
