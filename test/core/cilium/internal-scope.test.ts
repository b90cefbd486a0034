// Cilium's internal-scope frontends ("/i", pkg/loadbalancer ScopeInternal): where a Service's
// traffic policies differ (externalTrafficPolicy: Local), Cilium writes each NodePort frontend
// twice, the external scope's with the node's own backends (none here) and the internal scope's
// with all of them. Each scope is an entry of its own, in the text and in the JSON, whatever the
// order of its rows. Node addresses 10.0.2.15 and 192.168.36.11; the Pod 10.0.1.32.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesDoc, rulesText } from '../../../src/output/rules.js';

const LIST = [
  'ID   Frontend                Service Type   Backend',
  '43   10.0.2.15:32528/i       NodePort       1 => 10.0.1.32:80',
  '44   0.0.0.0:32528           NodePort',
  '45   0.0.0.0:32528/i         NodePort       1 => 10.0.1.32:80',
  '46   192.168.36.11:30936     NodePort',
  '47   192.168.36.11:30936/i   NodePort       1 => 10.0.1.32:69',
  '48   0.0.0.0:30936           NodePort',
  '49   0.0.0.0:30936/i         NodePort       1 => 10.0.1.32:69',
  '',
].join('\n');

describe("Cilium's internal-scope (/i) frontends", () => {
  const x = readPaste(LIST, { file: 'p.txt' });
  assert.ok(x.mode === 'cilium');

  it('keeps each scope an entry of its own for every port, the internal one said so', () => {
    const lines = (t: (typeof x.trees.services)[number]) => t.entries.map((e) => e.line);
    assert.deepEqual(
      x.trees.services.map((t) => [t.id, lines(t), t.endpoints.map((e) => e.address)]),
      [
        ['node port 32528 (internal scope)', [2, 4], ['10.0.1.32:80']],
        ['node port 32528', [3], []],
        ['node port 30936', [5, 7], []],
        ['node port 30936 (internal scope)', [6, 8], ['10.0.1.32:69']],
      ],
    );
    const text = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(text, /node port 10\.0\.2\.15:32528 \(internal scope/);
  });

  it('carries the scope in the JSON entries', () => {
    const doc = rulesDoc(x.dump, x.trees, { label: 'p' }) as unknown as {
      services: { entries: { line: number; scope?: string }[] }[];
    };
    const scopes = doc.services.flatMap((s) => s.entries.map((e) => [e.line, e.scope ?? null]));
    assert.deepEqual(
      scopes.sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [2, 'internal'],
        [3, null],
        [4, 'internal'],
        [5, null],
        [6, 'internal'],
        [7, null],
        [8, 'internal'],
      ],
    );
  });
});
