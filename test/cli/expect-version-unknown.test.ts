// `kdebug expect` where kube-proxy's version is not read (its image pinned by digest, no
// /metrics) and no table of the node tells a release: it writes the newest modelled release and
// says so in a `# note:`, in nftables and IPVS mode as in iptables mode (issue 38). A table read
// tells the release itself, and that note alone is said.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NEWEST_MODELLED } from '../../src/core/dataplane/kube-proxy/releases.js';
import { kdebug, ROOT } from '../support/cli.js';

const work = mkdtempSync(join(tmpdir(), 'kdebug-expect-version-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A copy of release 36's recording of `mode`, kube-proxy's image by digest, no /metrics, and
 * `node`'s files named in `drop` removed. */
function recording(mode: string, node: string, drop: RegExp): string {
  const dir = join(work, mode);
  cpSync(join(ROOT, 'test/fixtures/releases/36', mode), dir, { recursive: true });
  const objects = join(dir, 'objects.json');
  const digest = `@sha256:${'0123456789abcdef'.repeat(4)}`;
  writeFileSync(
    objects,
    readFileSync(objects, 'utf8').replace(/(\/kube-proxy):v[0-9.]+"/g, `$1${digest}"`),
  );
  for (const n of ['node-a', 'node-b'])
    rmSync(join(dir, 'nodes', n, 'proxy-metrics.txt'), { force: true });
  for (const f of [
    'iptables-save',
    'ip6tables-save',
    'ipvsadm-save',
    'ipset-save',
    'nft-ip-kube-proxy',
  ])
    if (drop.test(f)) rmSync(join(dir, 'nodes', node, `${f}.txt`), { force: true });
  return dir;
}

const said = new RegExp(
  `^# note: kube-proxy's version on (node-a|node-b) is unknown: written as kube-proxy v1\\.${NEWEST_MODELLED} writes it`,
  'm',
);
/** expect's output, its comments unwrapped (one note a line). */
const expect = (dir: string, node: string) => {
  const r = kdebug(['expect', '--snapshot', dir, '--node', node], { env: { COLUMNS: '2000' } });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
};

describe("expect with kube-proxy's version unknown", () => {
  it('nftables, no table read: the newest modelled release, said', () => {
    const dir = recording('nftables', 'node-b', /./);
    const out = expect(dir, 'node-b');
    assert.match(
      out,
      new RegExp(
        `^# kdebug expect: the table ip kube-proxy that kube-proxy v1\\.${NEWEST_MODELLED} writes`,
        'm',
      ),
    );
    assert.match(out, said);
    // node-a's table read: the release it reads as written by is said, not the newest assumed
    const a = expect(dir, 'node-a');
    assert.match(a, /^# note: kube-proxy's version was not read; its table reads as written by /m);
    assert.doesNotMatch(a, said);
  });

  it('IPVS, no rules read: the newest modelled release, said', () => {
    const out = expect(recording('ipvs', 'node-a', /./), 'node-a');
    assert.match(
      out,
      new RegExp(
        `^# kdebug expect: what kube-proxy v1\\.${NEWEST_MODELLED} programs in IPVS mode`,
        'm',
      ),
    );
    assert.match(out, said);
  });
});
