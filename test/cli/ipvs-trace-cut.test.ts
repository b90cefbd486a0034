// kdebug trace on a node whose IPVS listing was cut short: walked as far as it was read, and
// stopped at the cut as an iptables dump's walk is (trace.v2 readStopped, partlyRead, fateKnown
// false, nulls): a virtual server read whole keeps its outcome, the one the cut is inside has no
// share known, and one past the cut is not known. Exit 2: a partial answer.
// The snapshot: ipvs-stale-real-server, node vm-12-7-centos (kube-ipvs0 10.1.0.1, 10.1.190.219,
// 10.1.0.10), its ipvsadm-save cut mid-line 5 inside 10.1.190.219:8080's real servers.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

interface Doc {
  outcomes: {
    probability: number | null;
    shareUnknown?: string;
    destination: string | null;
    verdict: string | null;
    partlyRead?: string[];
    fateKnown?: false;
  }[];
  readStopped?: { file: string; line: number | null; reason: string };
}

describe('trace: an IPVS listing cut short', () => {
  const dirs: string[] = [];
  /** The snapshot with its listing's first `whole` lines and then `cut`, without a newline. */
  const cutAt = (whole: number, cut: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-ipvs-cut-'));
    dirs.push(dir);
    cpSync('snapshots/ipvs-stale-real-server', dir, { recursive: true });
    const file = join(dir, 'nodes/vm-12-7-centos/ipvsadm-save.txt');
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, `${lines.slice(0, whole).join('\n')}\n${cut}`);
    return dir;
  };
  let dir: string;
  before(() => (dir = cutAt(4, '-a -t 10.1.190.219:8080 -r 10.244.1.8')));
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const trace = (dst: string, ...more: string[]) =>
    kdebug([
      'trace',
      '--snapshot',
      dir,
      '--node',
      'vm-12-7-centos',
      '--src',
      '10.244.0.9',
      '--dst',
      dst,
      ...more,
    ]);
  const doc = (dst: string, ...more: string[]) => {
    const r = trace(dst, ...more, '-o', 'json');
    assert.equal(r.code, 2, r.stderr);
    return JSON.parse(r.stdout) as Doc;
  };

  it('a virtual server read whole before the cut: its outcome stands, the stop said', () => {
    const d = doc('10.1.0.1:443');
    assert.deepEqual(
      d.outcomes.map((o) => [o.probability, o.destination, o.verdict, o.fateKnown]),
      [[1, '10.0.12.7:6443', 'ACCEPT', undefined]],
    );
    assert.equal(d.readStopped?.line, 5);
    assert.match(d.readStopped!.reason, /ends inside a real server's row/);
  });

  it('the one the cut is inside: the real server read, its share not known', () => {
    const d = doc('10.1.190.219:8080');
    assert.deepEqual(
      d.outcomes.map((o) => [o.probability, o.destination]),
      [[null, '10.244.0.3:80']],
    );
    assert.match(d.outcomes[0]!.shareUnknown ?? '', /cut at line 5/);
  });

  it('one past the cut: not known (no "no virtual server", no verdict)', () => {
    const d = doc('10.1.0.10:53', '--proto', 'udp');
    const [o] = d.outcomes;
    assert.deepEqual(
      [o!.destination, o!.verdict, o!.fateKnown, o!.partlyRead],
      [null, null, false, ['the virtual servers past line 5']],
    );
    const text = trace('10.1.0.10:53', '--proto', 'udp');
    assert.equal(text.code, 2, text.stderr);
    assert.match(
      text.stdout.replace(/\s+/g, ' '),
      /No rule read changed udp port 53 of 10\.1\.0\.10, but the rules were not wholly read/,
    );
    assert.doesNotMatch(text.stdout, /kube-proxy has not programmed/);
  });

  it('cut inside the first real server: no REJECT said, what follows not known (not exit 1)', () => {
    dir = cutAt(3, '-a -t 10.1.190.219:8080 -r 10.244.0');
    const d = doc('10.1.190.219:8080');
    assert.deepEqual(
      d.outcomes.map((o) => [o.verdict, o.fateKnown, o.partlyRead]),
      [[null, false, ['TCP 10.1.190.219:8080']]],
    );
  });
});
