// A maps dump pasted with the shell prompt it was run at above it is read, that line skipped and
// said, as the other Cilium forms do (issue 34, review: it was refused, "not a line of the maps
// dump"). A line that is no map entry after the first one is still an error at its line.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { CiliumParseError } from '../../../src/core/dataplane/cilium/read/listing.js';

const DUMP = readFileSync(
  'test/fixtures/cilium/vectors/64-v120-endpointslice-weights-70-30/expected-maps.txt',
  'utf8',
);
const PROMPT = 'root@node:/home/cilium# cilium-dbg bpf lb list';

describe('a maps dump with a shell prompt line above it', () => {
  it('is read as without it, the prompt line skipped', () => {
    const plain = parseCilium(DUMP, 'maps.txt');
    const t = parseCilium(`${PROMPT}\n${DUMP}`, 'maps.txt');
    assert.equal(t.form, 'maps-dump');
    assert.deepEqual(t.skipped, [1]);
    const backends = (x: typeof t) =>
      x.frontends.flatMap((f) => f.backends.map((b) => `${b.ip}:${b.port} ${b.maglev}`));
    assert.deepEqual(backends(t), backends(plain));
    assert.equal(t.frontends.length, plain.frontends.length);
  });

  it('a prompt line among the entries is still refused at its line', () => {
    const lines = DUMP.trimEnd().split('\n');
    const text = [...lines.slice(0, 2), PROMPT, ...lines.slice(2)].join('\n');
    assert.throws(
      () => parseCilium(text, 'maps.txt'),
      (e: unknown) =>
        e instanceof CiliumParseError && /maps\.txt/.test(String(e.message)) && e.line === 3,
    );
  });
});
