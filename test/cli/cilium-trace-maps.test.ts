// The built `kdebug trace` on a Cilium node whose agent's table and BPF maps disagree: the datapath
// looks a packet up in the maps (bpf/lib/lb.h: service map, then backend map), so the walk
// follows `bpf lb list` and says where the table differs. Each fixture is the bundled
// snapshots/cilium-stale-backend with one fault made by hand on vm-12-7-centos (an outside
// review's faults, issue 34).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const NODE = 'nodes/vm-12-7-centos';
const MAP = `${NODE}/cilium-bpf-lb-list.txt`;
const TABLE = `${NODE}/cilium-frontends.txt`;
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The scenario copied, with `fault` applied to one of its files (the line edited must be there). */
function faulted(file: string, fault: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-trace-maps-'));
  dirs.push(dir);
  cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
  const before = readFileSync(join(dir, file), 'utf8');
  const text = fault(before);
  assert.notEqual(text, before, `the fault changes ${file}`);
  writeFileSync(join(dir, file), text);
  return dir;
}

interface Walk {
  outcomes: { destination: string; probability: number; rules: { rule: string }[] }[];
  notes: string[];
}

function trace(dir: string, dst = '10.1.190.219:8080'): Walk {
  const r = kdebug([
    'trace',
    '--snapshot',
    dir,
    '--node',
    'vm-12-7-centos',
    '--src',
    '10.244.0.3',
    '--dst',
    dst,
    '-o',
    'json',
  ]);
  return JSON.parse(r.stdout) as Walk;
}

const shares = (w: Walk) =>
  Object.fromEntries(w.outcomes.map((o) => [o.destination, o.probability]));

describe("trace on a Cilium node follows the BPF maps, not the agent's table", () => {
  it('a backend the map lacks (deleted from bpf lb list only) gets no connection', () => {
    const dir = faulted(MAP, (t) => t.replace(/^10\.1\.190\.219:8080\/TCP \(2\).*\n/m, ''));
    const w = trace(dir);
    assert.deepEqual(shares(w), { '10.244.0.3:80': 1 });
    // observed: the map's own line is the evidence of the outcome
    assert.match(w.outcomes[0]!.rules[0]!.rule, new RegExp(`^${MAP}:\\d+$`));
    const said = w.notes.join('\n');
    assert.match(said, /entries of its BPF maps, which the datapath looks up/);
    assert.match(
      said,
      new RegExp(
        `table \\(${TABLE}:6\\) gives new connections to 10\\.244\\.0\\.3:80, 10\\.244\\.1\\.8:80; its BPF map \\(${MAP}:\\d+\\), which the datapath looks up, to 10\\.244\\.0\\.3:80: walked as the map`,
      ),
    );
  });

  it('a backend terminating in the table but in the map still takes its share', () => {
    const dir = faulted(`${NODE}/cilium-backends.txt`, (t) =>
      t.replace(
        'default/nginx-svc (http)         vm-12-11',
        'default/nginx-svc [terminating] (http)         vm-12-11',
      ),
    );
    const w = trace(dir);
    assert.deepEqual(shares(w), { '10.244.0.3:80': 0.5, '10.244.1.8:80': 0.5 });
    const terminating = w.outcomes.find((o) => o.destination === '10.244.1.8:80')!;
    assert.match(JSON.stringify(terminating.rules), /terminating in the agent's table/);
    assert.match(w.notes.join('\n'), /gives new connections to 10\.244\.0\.3:80; its BPF map/);
  });

  it("a frontend whose reconcile failed: the error is said, the map's entry walked", () => {
    const dir = faulted(TABLE, (t) =>
      t.replace(
        /(10\.244\.1\.8:80\/TCP\s+)Done/,
        '$1Error: failed to update BPF map: no space left on device (12s ago)',
      ),
    );
    const w = trace(dir);
    assert.match(w.outcomes[0]!.rules[0]!.rule, new RegExp(`^${MAP}:`));
    assert.match(
      w.notes.join('\n'),
      new RegExp(
        `marks frontend 10\\.1\\.190\\.219:8080/TCP "Error: failed to update BPF map: no space left on device \\(12s ago\\)" \\(${TABLE}:6\\): it has not written that state to its BPF maps`,
      ),
    );
  });

  it('a reconcile error with no map read is an assumption of the walk, not a fact', () => {
    const dir = faulted(TABLE, (t) => t.replace(/(10\.244\.1\.8:80\/TCP\s+)Done/, '$1Error: boom'));
    rmSync(join(dir, MAP));
    const w = trace(dir) as Walk & { outcomes: { assumptions: string[] }[] };
    assert.match(w.outcomes[0]!.rules[0]!.rule, new RegExp(`^${TABLE}:6$`));
    assert.match(
      w.outcomes[0]!.assumptions.join('\n'),
      /"Error: boom".*which were not read; walked as the table holds it, which the datapath may not follow/,
    );
  });

  it('a frontend only the map still holds is translated, and that said', () => {
    const dir = faulted(TABLE, (t) => t.replace(/^10\.1\.190\.219:8080\/TCP .*\n/m, ''));
    const w = trace(dir);
    assert.deepEqual(shares(w), { '10.244.0.3:80': 0.5, '10.244.1.8:80': 0.5 });
    assert.match(
      w.notes.join('\n'),
      new RegExp(
        `table \\(${TABLE}\\) holds no frontend 10\\.1\\.190\\.219:8080/TCP, but its BPF map still does \\(${MAP}:\\d+\\)`,
      ),
    );
  });

  it('a frontend only the table holds is not translated: the map has no entry', () => {
    const dir = faulted(MAP, (t) => t.replace(/^10\.1\.190\.219:8080\/TCP .*\n/gm, ''));
    const w = trace(dir);
    assert.equal(w.outcomes.length, 1);
    assert.equal(w.outcomes[0]!.destination, null);
    assert.match(
      w.outcomes[0]!.rules[0]!.rule,
      new RegExp(
        `holds frontend 10\\.1\\.190\\.219:8080/TCP \\(${TABLE}:6\\), but its BPF map ${MAP} has no entry for it`,
      ),
    );
  });
});

describe('a Service port neither the table nor the map holds, and one only the map holds', () => {
  const neither = () =>
    faulted(MAP, (t) => t.replace(/^10\.1\.190\.219:8080\/TCP .*\n/gm, '')) && dirs.at(-1)!;

  it("trace says Cilium's agent, not kube-proxy, has not written it", () => {
    const dir = neither();
    writeFileSync(
      join(dir, TABLE),
      readFileSync(join(dir, TABLE), 'utf8').replace(/^10\.1\.190\.219:8080\/TCP .*\n/m, ''),
    );
    const r = kdebug([
      'trace',
      '--snapshot',
      dir,
      '--node',
      'vm-12-7-centos',
      '--src',
      '10.244.0.3',
      '--dst',
      '10.1.190.219:8080',
    ]);
    const text = r.stdout.replace(/\s+/g, ' ');
    assert.doesNotMatch(text, /kube-proxy/);
    assert.match(
      text,
      new RegExp(
        `No frontend of Cilium's agent took tcp port 8080 of 10\\.1\\.190\\.219, a port of the Service: no frontend 10\\.1\\.190\\.219:8080/TCP in ${TABLE} nor in its BPF map ${MAP}\\. Cilium's agent has not written this Service port on node vm-12-7-centos`,
      ),
    );
    assert.match(text, /entries of its BPF maps, which the datapath looks up/);
  });

  it('drift names the map entry the table lacks as the evidence of the missing frontend', () => {
    const dir = faulted(TABLE, (t) => t.replace(/^10\.1\.190\.219:8080\/TCP .*\n/m, ''));
    const r = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-7-centos', '-o', 'json']);
    const drift = JSON.parse(r.stdout) as {
      findings: { id: string; message: string; actual?: string[] }[];
    };
    const missing = drift.findings.find((f) => f.id === 'cilium-frontend-missing')!;
    assert.match(
      missing.message,
      /in its table, but its BPF map still does \(its entry is the evidence\): the datapath looks up the map, so it still translates connections to it/,
    );
    assert.doesNotMatch(missing.message, /not load-balanced by Cilium/);
    // observed: the map's own lines
    assert.deepEqual(
      missing.actual?.map((l) => l.replace(/:\d+: .*/, '')),
      [MAP, MAP, MAP],
    );
    assert.match(missing.actual!.join('\n'), /10\.244\.0\.3:80\/TCP[\s\S]*10\.244\.1\.8:80\/TCP/);
  });
});
