// Real published listings of Cilium's agent (test/fixtures/cilium/pastes, each with its source),
// read against readings written by hand from the paste alone before kdebug read it: every
// frontend, its type and protocol where the listing shows them, its backends and their states.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CiliumParseError } from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';

const DIR = new URL('../../fixtures/cilium/pastes/', import.meta.url).pathname;

interface Reading {
  kind: string;
  frontends?: {
    address: string;
    port: number;
    protocol: string | null;
    type: string | null;
    service: string | null;
    internal?: true;
    backends: { address: string; port: number; state: string | null }[];
  }[];
  /** The paste lacks entries (elided, cut, or its CLI said some could not be printed). */
  cut?: boolean;
}
const readings = JSON.parse(readFileSync(`${DIR}readings.json`, 'utf8')) as Record<string, Reading>;
const pastes = Object.entries(readings).filter(([k]) => !k.startsWith('_'));

describe('real Cilium listings', () => {
  it('holds at least ten, of every form kdebug reads', () => {
    assert.ok(pastes.length >= 10);
    const kinds = new Set(pastes.map(([, r]) => r.kind));
    for (const k of ['cilium-service-list', 'cilium-bpf-lb-list', 'cilium-db-frontends'])
      assert.ok(kinds.has(k), k);
  });

  for (const [name, reading] of pastes) {
    it(name, () => {
      const text = readFileSync(`${DIR}${name}.txt`, 'utf8');
      let table;
      try {
        table = parseCilium(text, `${name}.txt`);
      } catch (e) {
        // a form kdebug does not read must be refused by name, never misread
        assert.ok(e instanceof CiliumParseError, String(e));
        assert.equal(reading.frontends, undefined, `refused: ${(e as Error).message}`);
        return;
      }
      if (reading.cut !== undefined) assert.equal(table.cut !== undefined, reading.cut, 'cut');
      if (reading.kind === 'cilium-db-backends') {
        assert.ok(table.backendStates && table.backendStates.size > 0);
        return;
      }
      const got = table.frontends.map((f) => ({
        address: f.ip,
        port: f.port,
        protocol: f.protocol ?? null,
        type: f.type ?? null,
        internal: f.internal ?? false,
        backends: f.backends.map((b) => ({ address: b.ip, port: b.port, state: b.state ?? null })),
      }));
      const want = (reading.frontends ?? []).map((f) => ({
        address: f.address,
        port: f.port,
        protocol: f.protocol,
        type: f.type,
        internal: f.internal ?? false,
        backends: f.backends.map((b) => ({ address: b.address, port: b.port, state: b.state })),
      }));
      type Key = { address: string; port: number; protocol: string | null; internal: boolean };
      const key = (f: Key) => `${f.address} ${f.port} ${f.protocol} ${f.internal}`;
      const sort = <T extends Key>(a: T[]) => [...a].sort((x, y) => key(x).localeCompare(key(y)));
      assert.deepEqual(sort(got), sort(want));
    });
  }
});

describe('a Cilium listing among other text', () => {
  // cilium/cilium#17729: `cilium service get`, then `cilium bpf lb list | grep -C 5` under a prompt
  const GET =
    '# cilium service get 59\n10.254.162.28:8080 =>\n\t\t1 => 192.168.154.116:8080 (59)\n';
  const BPF =
    '# cilium bpf lb list | grep -C 5 10.254.162.28\n10.254.162.28:8080     0.0.0.0:0 (59) [ClusterIP, non-routable]\n';

  it('reads a second listing under its own command; says where one that does not read starts', () => {
    const both = parseCilium(`${GET}\n${BPF}`, 'p.txt');
    // one frontend: the service get's backends, its type from the BPF map's own row
    assert.equal(both.frontends.length, 1);
    assert.equal(both.frontends[0]!.type, 'ClusterIP');
    assert.equal(both.frontends[0]!.backends.length, 1);
    assert.equal(both.unreadFrom, undefined);
    const other = parseCilium(`${GET}\n# cilium status\n1 agent OK\n`, 'p.txt');
    assert.equal(other.unreadFrom, 5);
  });

  it("below a fence, a numbered note is no listing's row; a row Cilium prints is", () => {
    // cilium/cilium#12895: "3. `cilium monitor`" under the fenced bpf lb list
    const FENCED =
      '```\n10.0.30.15:8088        10.244.1.159:80 (76)\n                       0.0.0.0:0 (76) [LoadBalancer]\n```\n';
    const note = parseCilium(`${FENCED}\n3. \`cilium monitor\`\n\nNo events.\n`, 'p.txt');
    assert.equal(note.unreadFrom, undefined);
    assert.equal(note.frontends.length, 1);
    const rows = parseCilium(
      `${FENCED}\n3. then\n\n2    10.96.0.1:443   ClusterIP   1 => 10.0.0.1:6443 (active)\n`,
      'p.txt',
    );
    // read in turn, as a second listing
    assert.equal(rows.frontends.length, 2);
  });

  it('rows left out before a listing that starts without its header make it a listing in part', () => {
    const rows = '62   10.1.0.2:53    ExternalIPs    1 => 192.168.1.234:53\n';
    assert.equal(parseCilium(`$ cilium service list\n...\n\n${rows}`, 'p.txt').cut?.[0]?.line, 2);
    assert.equal(parseCilium(`$ cilium service list\n${rows}`, 'p.txt').cut, undefined);
  });
});
