// The built `kdebug drift` and `svc` on the Cilium scenario (snapshots/cilium-stale-backend) where
// vm-12-7-centos recorded only its BPF maps (`bpf lb list`), not its agent's table: what they say
// was compared and what was not follows the listing read, the maps.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-maps-only-'));
cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
rmSync(join(dir, 'nodes/vm-12-7-centos/cilium-frontends.txt'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("Cilium's BPF maps as the only listing read, on the command line", () => {
  it('drift says the maps were compared and the agent table not read', () => {
    const r = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-7-centos', '-o', 'text']);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /as its BPF maps hold them; the agent's own table was not read\)/);
    assert.match(text, /no drift: its BPF maps hold every frontend and backend/);
    assert.doesNotMatch(text, /BPF maps were not read/);
  });

  it("svc's rules step says it compared the maps only", () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'text', '--verbose']);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(text, /the agent's own table was not read, so kdebug compared its BPF maps only/);
    assert.doesNotMatch(text, /BPF maps were not read/);
  });
});
