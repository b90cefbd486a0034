// A Cilium listing piped through a filter is said by what the filter keeps, as kube-proxy's pastes
// say theirs (paste/filter-stage.ts): its command, its line, and the rows it printed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'cilium', got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};

describe('a Cilium listing piped through a filter', () => {
  it("cilium#43358: each grep named with the rows it printed, the service list's too", () => {
    const paste = readFileSync(
      new URL(
        '../../fixtures/pastes/cilium-43358-tab-indented-root-prompts-bpf-lb-list-grep-backend-then-service-list-grep-lb-ip.txt',
        import.meta.url,
      ),
      'utf8',
    );
    const { text } = read(paste);
    const said = [
      ...text.matchAll(/lines (\d+)-(\d+) are the output of `([^`]+)` \(line (\d+)\)/g),
    ];
    assert.deepEqual(
      said.map((m) => `${m[4]}: ${m[3]} ${m[1]}-${m[2]}`),
      ['1: grep 172.1.0.170 2-6', '7: grep 172.1.1.169 8-12', '14: grep 46.105.149.102 15-16'],
    );
    assert.match(
      text.replace(/\s+/g, ' '),
      /only the lines matching its pattern, so the frontends/,
    );
  });

  it('an awk stage is said by what its program keeps; an unpiped listing is said nothing of', () => {
    const { text } = read(
      [
        "# cilium-dbg service list | awk '/10.96.0.10/'",
        '7    10.96.0.10:53/UDP    ClusterIP      1 => 10.244.0.3:53/UDP (active)',
      ].join('\n'),
    );
    assert.match(
      text.replace(/\s+/g, ' '),
      /line 2 is the output of `awk '\/10\.96\.0\.10\/'` \(line 1\): only the lines matching its pattern/,
    );
    const plain = read(
      [
        '# cilium-dbg service list',
        'ID   Frontend             Service Type   Backend',
        '7    10.96.0.10:53/UDP    ClusterIP      1 => 10.244.0.3:53/UDP (active)',
      ].join('\n'),
    );
    assert.doesNotMatch(plain.text, /are the output of/);
  });
});
