// A hostile paste: one line with a long run of spaces (or many blank lines) before what makes it
// fail to match. Regexes with \s* or \s+ free to start anywhere in that run (`\s+# handle \d+$`,
// `\s+#.*$`, `priority (.+?)\s*$`, a multiline `^\s*` spanning blank lines) went quadratic: tens
// of seconds at 100k spaces. Each is read (or refused) in under 3 s on a loaded machine.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';

const SPACES = ' '.repeat(100_000);
const CASES: [string, string][] = [
  [
    'an nft listing rule',
    `table ip kube-proxy {\n\tchain services {\n\t\tip daddr 10.96.0.1${SPACES}x\n`,
  ],
  [
    'an nft script chain priority',
    `add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority ${SPACES}x }\n`,
  ],
  ['an ipvsadm command', `ipvsadm -A -t 10.96.0.1:443 -s rr${SPACES}x\n`],
  ['an nft table line of tabs', `table ip kube-proxy {${'\t'.repeat(100_000)}x\n`],
  ['blank lines', `${'\n'.repeat(100_000)}x`],
];

describe('a paste with a long run of whitespace', () => {
  for (const [what, text] of CASES)
    it(`reads ${what} in linear time`, () => {
      const start = Date.now();
      try {
        readPaste(text, { file: '-' });
      } catch {
        // refused as unreadable is fine: what matters is how long it took
      }
      assert.ok(Date.now() - start < 3000, `${what}: ${Date.now() - start} ms`);
    });
});
