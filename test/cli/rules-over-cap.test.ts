// A node's dump over the snapshot's size cap is a dump not read: rules --node says so, as svc does,
// rather than that nothing was recorded.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT } from '../support/cli.js';

const NODE = 'vm-12-7-centos';

describe('rules --node over the size cap', () => {
  it('says the dump is over the cap and not read, not "no rules recorded"', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-over-cap-'));
    try {
      cpSync(join(ROOT, 'snapshots/nginx-svc'), dir, { recursive: true });
      // sparse: 600 MB of size, no disk
      truncateSync(join(dir, 'nodes', NODE, 'iptables-save.txt'), 600 * 1024 ** 2);
      const r = kdebug(['rules', '--snapshot', dir, '--node', NODE]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `could not read the rules of node "${NODE}" \\(.*iptables-save\\.txt: over 511 MiB, not read`,
        ),
      );
      assert.doesNotMatch(r.stderr, /no rules recorded/);
      assert.equal(r.stderr.split('\n').length, 2, r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
