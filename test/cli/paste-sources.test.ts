// A paste of several hosts' or files' output (ansible, pssh, head/tail, pdsh, grep -H): each
// node's rules are its own, so `rules --file` reads the first source and names the others, never
// one node's endpoints merged into another's (fixtures: test/fixtures/paste-sources/README.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pasteSources } from '../../src/core/dataplane/paste/sources.js';
import { kdebug } from '../support/cli.js';

const DIR = 'test/fixtures/paste-sources';

interface Doc {
  warnings: { kind: string; line: number | null; message: string }[];
  services: { id: string; endpoints: { address: string; probability: number | null }[] }[];
}
const rules = (file: string): Doc => {
  const r = kdebug(['rules', '--file', `${DIR}/${file}`, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Doc;
};
const sourcesWarning = (d: Doc) => d.warnings.find((w) => w.kind === 'sources')?.message ?? '';

describe('a paste of several sources', () => {
  it("ansible's blocks (real, kubernetes#70493): the first host's real server, the others named", () => {
    const d = rules('k8s70493.txt');
    assert.deepEqual(
      d.services.map((s) => [s.id, s.endpoints.map((e) => e.address)]),
      [['TCP 10.109.131.66:6379', ['172.31.3.224:6379']]],
    );
    assert.match(sourcesWarning(d), /ansible's output of 3 hosts: only the first, 10\.109\.0\.18/);
    assert.match(sourcesWarning(d), /10\.109\.0\.10, 10\.109\.0\.11 not read/);
  });

  for (const [file, read, other] of [
    ['v-headtail.txt', 'node-a/iptables-save.txt', 'node-b/iptables-save.txt'],
    ['v-pdsh.txt', 'node1', 'node2'],
    ['v-grepH.txt', 'worker-1.txt', 'worker-2.txt'],
  ] as const)
    it(`${file}: one node's endpoints, all of the Service's traffic to them`, () => {
      const d = rules(file);
      const endpoints = d.services.flatMap((s) => s.endpoints);
      assert.ok(endpoints.length > 0);
      for (const e of endpoints) {
        assert.equal(e.address, '10.44.0.56:80', 'node 2 holds no endpoint of its own');
        assert.equal(e.probability, 1);
      }
      assert.ok(sourcesWarning(d).includes(`only the first, ${read}, is read`));
      assert.ok(sourcesWarning(d).includes(`${other} not read`));
    });

  it('pssh -i blocks are sources too', () => {
    const text = [
      '[1] 10:00:01 [SUCCESS] node-a',
      '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:80',
      '[2] 10:00:01 [SUCCESS] node-b',
      '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80',
    ].join('\n');
    const s = pasteSources(text)!;
    assert.deepEqual(
      [s.form, s.labels, s.lines, s.unread],
      ['pssh', ['node-a', 'node-b'], [1, 2], [3, 4]],
    );
    assert.equal(s.text.split('\n').length, 4, 'every line keeps its number');
  });

  it('one source is no several: grep -H of one file, grep -n, kubectl describe', () => {
    const rule = '-A KUBE-SVC-X -j KUBE-SEP-Y';
    for (const text of [
      `dump.txt:${rule}\ndump.txt:${rule}2`,
      `12:${rule}\n14:${rule}2`,
      'Name:              nginx\nNamespace:         default\nSelector:          app=nginx\nEndpoints:         10.0.0.1:80',
      `==> only.txt <==\n${rule}`,
    ])
      assert.equal(pasteSources(text), undefined, text);
  });
});
