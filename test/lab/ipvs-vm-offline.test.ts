// The IPVS VM (test/support/ipvs-vm/vm.sh) where apt cannot reach its mirrors (no DNS): it ends
// with one line saying what to download and where to put it, not apt's raw error. apt is a stub
// here that fails as apt does offline; nothing is downloaded, no VM is booted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const VM = 'test/support/ipvs-vm/vm.sh';
const OFFLINE = `#!/bin/sh
echo "Err:1 http://deb.debian.org/debian bookworm InRelease" >&2
echo "  Temporary failure resolving 'deb.debian.org'" >&2
echo "E: Failed to fetch http://deb.debian.org/debian/pool/main/b/bash/bash_5.2.15-2+b7_amd64.deb  Temporary failure resolving 'deb.debian.org'" >&2
`;

describe('the IPVS VM, offline', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** vm.sh run with an empty cache, apt-get failing as offline (`updateExits`: its exit code
   * for update, which exits 0 where it could not fetch), apt-cache with `lists` or none. */
  const run = (lists: boolean, updateExits = 0) => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-vm-offline-'));
    dirs.push(dir);
    const stub = (name: string, body: string) => {
      writeFileSync(join(dir, name), body);
      chmodSync(join(dir, name), 0o755);
    };
    stub('apt-get', `${OFFLINE}[ "$1" = update ] && exit ${updateExits}\nexit 100\n`);
    stub(
      'apt-cache',
      lists
        ? '#!/bin/sh\necho "linux-image-amd64"\necho "  Depends: linux-image-6.1.0-28-amd64"\n'
        : '#!/bin/sh\n',
    );
    stub('qemu-system-x86_64', '#!/bin/sh\nexit 1\n');
    writeFileSync(join(dir, 'script.sh'), 'true\n');
    const r = spawnSync('bash', [VM, join(dir, 'script.sh')], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${dir}:${process.env['PATH']}`,
        KDEBUG_IPVS_VM_CACHE: join(dir, 'cache'),
      },
    });
    const said = r.stderr
      .split('\n')
      .filter((l) => l !== '' && !/^vm\.sh: (downloading|no package lists)/.test(l));
    return { code: r.status, said, cache: join(dir, 'cache') };
  };

  it('a download that fails: one line naming the packages and the cache, no apt error', () => {
    const { code, said, cache } = run(true);
    assert.equal(code, 1);
    assert.equal(said.length, 1, said.join('\n'));
    assert.match(
      said[0]!,
      /^vm\.sh: apt-get could not download the guest's packages \(no network or DNS\?/,
    );
    assert.match(said[0]!, / linux-image-6\.1\.0-28-amd64 busybox-static bash ipvsadm /);
    assert.ok(said[0]!.includes(`put the .debs in ${cache}/debs, then run again`), said[0]);
  });

  it('no package lists, and apt-get update cannot fetch them (exit 0 or not): the same line', () => {
    for (const exits of [0, 100]) {
      const { code, said } = run(false, exits);
      assert.equal(code, 1);
      assert.equal(said.length, 1, said.join('\n'));
      assert.match(
        said[0]!,
        /download linux-image-amd64's kernel \(linux-image-VERSION-amd64\) busybox-static/,
      );
    }
  });
});
