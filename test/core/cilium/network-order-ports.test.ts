// `bpf lb list` as Cilium's lbmap printed it in 2021 before its serviceKey converted the port:
// the Service column "ADDR:PORT/ANY" (its protocol written even where ANY, no slot after it) with
// the port as the BPF map stores it, in network byte order (80 as 20480 on a little-endian node);
// backends printed right. Newer releases convert the port and leave ANY out (1.10-1.16), or print
// the slot after the key (1.17+): their ports are read as printed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const read = (lines: string[]) => {
  const got = readPaste(lines.join('\n'), { file: 'p.txt' });
  assert.ok(got.mode === 'cilium', got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};
const frontends = (got: ReturnType<typeof read>['got']) =>
  got.trees.services.flatMap((t) => t.entries.map((e) => `${e.address ?? '*'}:${e.port}`));

describe('bpf lb list ports printed in network byte order', () => {
  it('"/ANY" without a slot: each frontend port read byte-swapped back, and the swap said', () => {
    const { got, text } = read([
      'SERVICE ADDRESS           BACKEND ADDRESS',
      '10.96.0.1:47873/ANY       0.0.0.0:0 (1) [ClusterIP, non-routable]',
      '                          172.18.0.2:6443 (1)',
      '10.96.0.10:13568/ANY      0.0.0.0:0 (2) [ClusterIP, non-routable]',
      '                          10.244.0.3:53 (2)',
      '10.96.120.7:20480/ANY     10.244.1.5:8080 (3)',
      '                          0.0.0.0:0 (3) [ClusterIP, non-routable]',
    ]);
    assert.deepEqual(frontends(got).sort(), ['10.96.0.10:53', '10.96.0.1:443', '10.96.120.7:80']);
    assert.match(text, /172\.18\.0\.2:6443/);
    assert.match(
      text,
      /frontend ports printed in network byte order, each read with its two bytes swapped back: 47873 as 443, 13568 as 53,\s+(?:and )?20480 as 80/,
    );
  });

  it('1.17+ ("/ANY" with the slot after it) and 1.10-1.16 (no protocol): ports as printed', () => {
    const slotted = read([
      'SERVICE ADDRESS               BACKEND ADDRESS (REVNAT_ID) (SLOT)',
      '10.96.0.10:53/ANY (0)         0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
      '10.96.0.10:53/ANY (1)         10.244.0.3:53/UDP (2) (1)',
    ]);
    assert.deepEqual(frontends(slotted.got), ['10.96.0.10:53']);
    assert.doesNotMatch(slotted.text, /byte order/);
    const bare = read([
      'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)',
      '10.96.0.10:53       0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
      '                    10.244.0.3:53 (2) (1)',
    ]);
    assert.deepEqual(frontends(bare.got), ['10.96.0.10:53']);
    assert.doesNotMatch(bare.text, /byte order/);
  });
});
