// The lines around a pasted Cilium listing that are none of its own (a prompt, another command's
// output above it) are skipped and named, as the iptables and IPVS readers name theirs. The
// fixture is the paste of cilium/cilium#36752 (GKE IPv6, `ip -6 addr` and `cilium debuginfo`
// lines above `cilium service list`, cut in its last row), as the outside review took it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { kdebug } from '../../support/cli.js';
import { listing, vectors } from '../../support/cilium-vectors.js';

const FILE = 'test/fixtures/cilium/skipped/cilium-service-list-36752-gke-ipv6.txt';

describe('a Cilium listing with other output pasted above it', () => {
  it('skips and names every non-blank line before it but its header', () => {
    const t = parseCilium(readFileSync(FILE, 'utf8'), FILE);
    assert.equal(t.form, 'service-list');
    // the prose, the fence, ip -6 addr and its output, the grep of cilium debuginfo and its two
    // lines, the service list command; not blank lines 2, 11, 15, nor the header at 17
    assert.deepEqual(t.skipped, [1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 16]);
    assert.deepEqual(
      t.frontends.map((f) => f.line),
      [18, 19],
    );
  });

  it('rules --file says them in one warning, each line listed in the JSON', () => {
    const r = kdebug(['rules', '--file', FILE, '-o', 'json']);
    const doc = JSON.parse(r.stdout) as {
      warnings: { line: number | null; kind: string; message: string; lines?: number[] }[];
    };
    const skipped = doc.warnings.filter((w) => w.kind === 'skipped');
    assert.equal(skipped.length, 1);
    assert.equal(skipped[0]!.line, 1);
    assert.deepEqual(skipped[0]!.lines, [1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 16]);
    assert.match(
      skipped[0]!.message,
      /not part of a Cilium listing \(a prompt, a command, prose\), skipped/,
    );
  });

  it('a listing alone skips nothing', () => {
    const file = 'snapshots/cilium-stale-backend/nodes/vm-12-7-centos/cilium-bpf-lb-list.txt';
    assert.equal(parseCilium(readFileSync(file, 'utf8'), file).skipped, undefined);
  });

  // r153 (issue 34): the maps dump's BE, MAGLEV and REV lines before its first SVC line, and the
  // backends table's rows, were read and yet said skipped
  it("every Cilium vector's maps dump and backends table skips none of its lines", () => {
    let read = 0;
    for (const v of vectors)
      for (const f of ['expected-maps.txt', 'expected-backends.txt']) {
        const text = listing(v, f);
        if (text === undefined || text.trim() === '') continue;
        read++;
        assert.equal(parseCilium(text, `${v}/${f}`).skipped, undefined, `${v}/${f}`);
      }
    assert.ok(read > 100, `${read} listings read`);
  });

  it('a maps dump read in any order of its lines skips none of them', () => {
    const file =
      'test/fixtures/cilium/vectors/64-v120-endpointslice-weights-70-30/expected-maps.txt';
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const t = parseCilium([...lines].reverse().join('\n'), file);
    assert.equal(t.skipped, undefined);
    assert.equal(t.frontends.filter((f) => f.port !== 0)[0]?.backends.length, 4);
  });
});
