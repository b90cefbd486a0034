// A Service port changed (8080 -> 8081) with the node rules left as they were: no packet to the
// Service's port is DNATed, so Hairpin cannot pass; it follows from Rules' service-rules-missing.
// The demo snapshot (snapshots/nginx-svc, rules for 10.1.190.219:8080) with the port edited.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../src/core/model.js';
import { kdebug } from '../support/cli.js';

type Report = {
  steps: { id: string; findings: { id: string; status: string; explanation: string }[] }[];
};

const dir = mkdtempSync(join(tmpdir(), 'kdebug-hairpin-port-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function withPort(port: number): string {
  cpSync('snapshots/nginx-svc', dir, { recursive: true });
  const file = join(dir, 'objects.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
  for (const o of list.items)
    if (o.kind === 'Service' && o.metadata?.name === 'nginx-svc')
      (o as unknown as { spec: { ports: { port: number }[] } }).spec.ports[0]!.port = port;
  writeFileSync(file, JSON.stringify(list));
  return dir;
}

const stepOf = (r: Report, id: string) => r.steps.find((s) => s.id === id)!.findings;

describe("Hairpin beside Rules' missing Service port", () => {
  it('is no pass: it says it follows from service-rules-missing', () => {
    const r = JSON.parse(
      kdebug(['svc', 'nginx-svc', '--snapshot', withPort(8081), '-o', 'json']).stdout,
    ) as Report;
    assert.ok(
      stepOf(r, 'rules').some((f) => f.id === 'service-rules-missing' && f.status === 'fail'),
    );
    const hairpin = stepOf(r, 'hairpin');
    assert.ok(hairpin.length > 0);
    for (const f of hairpin) {
      assert.notEqual(f.status, 'pass', f.id);
      assert.match(f.explanation, /follows from service-rules-missing \(Rules\)/);
    }
  });

  it('passes where the port has its rules', () => {
    const r = JSON.parse(
      kdebug(['svc', 'nginx-svc', '--snapshot', withPort(8080), '-o', 'json']).stdout,
    ) as Report;
    assert.ok(stepOf(r, 'hairpin').some((f) => f.status === 'pass'));
  });
});
