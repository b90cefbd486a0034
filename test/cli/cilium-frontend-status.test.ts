// `kdebug rules --file` on a pasted `db/show frontends` (Cilium 1.17+): each frontend's reconcile
// status (Status column: Done, Pending, Error: ...) is carried in the tree and its JSON, and one
// that is not Done is said. The paste is snapshots/cilium-stale-backend's vm-12-7-centos table
// with the outside review's fault (issue 34, csC): nginx-svc's frontend failed to reconcile.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const ERROR = 'Error: failed to update BPF map: no space left on device (12s ago)';
const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-status-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const table = readFileSync(
  'snapshots/cilium-stale-backend/nodes/vm-12-7-centos/cilium-frontends.txt',
  'utf8',
);
const faulted = table
  .replace(/(10\.244\.1\.8:80\/TCP\s+)Done/, `$1${ERROR}`)
  .replace(/(10\.1\.0\.1:443\/TCP .*)Done/, '$1Pending');
const file = join(dir, 'frontends.txt');
writeFileSync(file, faulted);

interface Rules {
  warnings: { line: number | null; kind: string; message: string }[];
  services: { name: string; entries: { line: number; status?: string }[] }[];
}

describe("rules --file on db/show frontends: each frontend's reconcile status", () => {
  it('the fault is in the paste', () => {
    assert.notEqual(faulted, table);
    assert.equal(faulted.split('\n').filter((l) => l.endsWith('Done')).length, 3);
  });

  it('the JSON carries every frontend status as listed', () => {
    const r = kdebug(['rules', '--file', file, '-o', 'json']);
    const doc = JSON.parse(r.stdout) as Rules;
    const status = Object.fromEntries(
      doc.services.map((s) => [s.name, s.entries.map((e) => e.status)]),
    );
    assert.deepEqual(status, {
      'default/kubernetes:https': ['Pending'],
      'kube-system/kube-dns:dns-tcp': ['Done'],
      'kube-system/kube-dns:dns': ['Done'],
      'kube-system/kube-dns:metrics': ['Done'],
      'default/nginx-svc:http': [ERROR],
    });
    // each one not Done is a warning at its line: observed in the paste
    const said = doc.warnings.filter((w) => /reconcile status/.test(w.message));
    assert.deepEqual(
      said.map((w) => w.line),
      [2, 6],
    );
    assert.match(
      said[1]!.message,
      /^frontend 10\.1\.190\.219:8080\/TCP: reconcile status Error: failed to update BPF map: no space left on device \(12s ago\): the agent has not written it to its BPF maps/,
    );
  });

  it('the text tree shows the status beside each frontend', () => {
    const r = kdebug(['rules', '--file', file, '-o', 'text']);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.match(
      text,
      /entry cluster IP 10\.1\.190\.219:8080\/tcp \(cilium line 6, status Error: failed to update BPF map: no space left on device \(12s ago\)\)/,
    );
    assert.match(text, /entry cluster IP 10\.1\.0\.10:53\/udp \(cilium line 4, status Done\)/);
    assert.match(
      text,
      /frontends\.txt:6: frontend 10\.1\.190\.219:8080\/TCP: reconcile status Error/,
    );
  });
});
