// Every command follows the terminal's width (COLUMNS here, as a shell sets it): down to 40
// columns no line is wider, and what does not fit wraps under its own indent instead of being cut.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import stringWidth from '../../src/tui/string-width.js';

const S = 'snapshots/nginx-svc';
const TRACE = ['--node', 'vm-12-7-centos', '--src', '10.244.0.3', '--dst', '10.1.190.219:8080'];

const COMMANDS: string[][] = [
  ['svc', 'nginx-svc', '--snapshot', 'snapshots/stale-endpoint', '-o', 'text', '-v'],
  ['svc', 'nginx-svc', '--snapshot', 'snapshots/selector-typo', '-o', 'text'],
  ['rules', '--snapshot', S, '--node', 'vm-12-7-centos', '-o', 'text'],
  ['rules', '--snapshot', S, '--node', 'vm-12-7-centos', '--search', 'nginx', '-o', 'text'],
  ['drift', '--snapshot', 'snapshots/orphan-chains', '--all-nodes', '-o', 'text'],
  ['drift', '--snapshot', 'snapshots/ipvs-stale-real-server', '--all-nodes', '-o', 'text'],
  ['trace', '--snapshot', S, ...TRACE],
  ['demo', '--list'],
  ['version'],
  ['--help'],
  ...['svc', 'rules', 'drift', 'trace', 'expect', 'snapshot', 'demo', 'mcp', 'rbac', 'cleanup'].map(
    (c) => [c, '--help'],
  ),
];

const run = (args: string[], columns: number) => {
  const r = kdebug(args, { env: { COLUMNS: String(columns) } });
  assert.ok(r.code === 0 || r.code === 1, `${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return r.stdout.split('\n');
};

/** A line that cannot break: one word longer than the line (a path, a DNS name, a quoted patch,
 * an image digest) stays whole past the width, so a copy of it still works. */
const oneWord = (line: string) => !/\S\s+\S/.test(line.replace(/ \\$/, '').trim());

describe('every command at the terminal width', () => {
  for (const args of COMMANDS)
    it(`kdebug ${args.join(' ')}: no line past 40 columns, and wider at 120`, () => {
      const narrow = run(args, 40);
      const over = narrow.filter((l) => stringWidth(l) > 40 && !oneWord(l));
      assert.deepEqual(over, []);
      // the same characters, wrapped and laid out again: nothing is cut
      const characters = (lines: string[]) =>
        [...lines.join('').replace(/[\s\\│]/g, '')].sort().join('');
      const wide = run(args, 120);
      assert.equal(characters(narrow), characters(wide));
      assert.ok(wide.every((l) => stringWidth(l) <= 120 || oneWord(l)));
      // alignment kept: in a report what wraps goes on under an indent, never back to the first
      // column (help's prose paragraphs start there, as every line of theirs does)
      if (args.includes('--help')) return;
      const heads = wide.filter((l) => /^\S/.test(l)).map((l) => l.split(/\s+/)[0]!);
      const strays = narrow.filter(
        (l) => /^\S/.test(l) && !heads.some((h) => l.split(/\s+/)[0] === h),
      );
      assert.deepEqual(strays, []);
    });

  it('a word longer than the line stays whole on a line of its own, past the width', () => {
    const args = ['svc', '--snapshot', 'snapshots/dual-stack-ipv6-rules-missing', '-o', 'text'];
    const lines = run(args, 40);
    for (const word of [
      'snapshots/dual-stack-ipv6-rules-missing',
      'nginx-svc.default.svc.cluster.local',
    ])
      assert.ok(
        lines.some((l) => l.trim() === word),
        `${word} is not whole on a line:\n${lines.join('\n')}`,
      );
    assert.deepEqual(
      lines.filter((l) => stringWidth(l) > 40 && !oneWord(l)),
      [],
    );
  });

  it('svc keeps its step column where it fits and puts the summary under the step where not', () => {
    const at = (columns: number) =>
      run(['svc', 'nginx-svc', '--snapshot', S, '-o', 'text'], columns);
    const step = /^ (\S) {1,2}(\d+) (\S+)/;
    const narrow = at(40);
    for (const [i, line] of narrow.entries())
      if (step.test(line)) assert.match(narrow[i + 1]!, /^ {4}\S/, `under "${line}"`);
    const wide = at(100);
    assert.match(
      wide.find((l) => step.test(l))!,
      /^ ✓ {2}1 Service {9}ClusterIP/,
    );
  });
});

describe("documents a program reads (rbac's YAML, expect's rules): their comments wrap, their content never", () => {
  const docs: string[][] = [
    ['rbac'],
    ['rbac', '--via', 'auto'],
    ['expect', '--snapshot', S, '--node', 'vm-12-7-centos'],
    ['expect', '--snapshot', 'snapshots/ipvs-stale-real-server', '--node', 'vm-12-7-centos'],
  ];
  for (const args of docs)
    it(`kdebug ${args.join(' ')}`, () => {
      const narrow = run(args, 40);
      const wide = run(args, 200);
      const comment = (l: string) => /^\s*#/.test(l);
      assert.deepEqual(
        narrow.filter(
          (l) => comment(l) && stringWidth(l) > 40 && !oneWord(l.replace(/^\s*#+/, '')),
        ),
        [],
      );
      assert.deepEqual(
        narrow.filter((l) => !comment(l)),
        wide.filter((l) => !comment(l)),
      );
      const words = (lines: string[]) =>
        lines.filter(comment).join(' ').replace(/#/g, '').split(/\s+/).filter(Boolean);
      assert.deepEqual(words(narrow), words(wide));
    });
});
