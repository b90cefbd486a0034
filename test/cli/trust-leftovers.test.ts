// Issue 31's leftovers, end to end on copies of bundled snapshots changed by hand: each case runs
// the built CLI and asserts the step's mark, its line, the evidence kind behind it and the exit.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT, type CliResult } from '../support/cli.js';

const WIDE = { COLUMNS: '200' };

interface FindingJson {
  id: string;
  status: string;
  title: string;
  explanation: string;
  node?: string;
  evidence: { kind: string; text: string; node?: string }[];
}
interface ReportJson {
  steps: { id: string; status: string; findings: FindingJson[] }[];
}

/** Runs `test` on a copy of bundled snapshot `name` whose files `edit` changed. */
function withCopy(name: string, edit: (dir: string) => void, test: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-leftover-'));
  try {
    cpSync(join(ROOT, 'snapshots', name), dir, { recursive: true });
    edit(dir);
    test(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rewrites one text file of the copy. */
function rewrite(dir: string, file: string, change: (text: string) => string): void {
  const path = join(dir, file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

/** The mark and the line of one step (its continuation lines joined), as text prints it. */
function stepLine(r: CliResult, title: string): { mark: string; line: string } {
  const lines = r.stdout.split('\n');
  const at = lines.findIndex((l) => new RegExp(`^ \\S +\\d+ ${title} {2,}`).test(l));
  assert.ok(at >= 0, `no ${title} step in:\n${r.stdout}${r.stderr}`);
  const m = /^ (\S) +\d+ \S+(?: \S+)*? {2,}(.*)$/.exec(lines[at]!)!;
  const more = [];
  for (let i = at + 1; i < lines.length && /^ {22}\S/.test(lines[i]!); i++)
    more.push(lines[i]!.trim());
  return { mark: m[1]!, line: [m[2]!, ...more].join(' ') };
}

const json = (r: CliResult) => JSON.parse(r.stdout) as ReportJson;
const findings = (r: CliResult, step: string, id: string) =>
  json(r)
    .steps.find((s) => s.id === step)!
    .findings.filter((f) => f.id === id);

describe("a node whose dump is cut short: the step line says why it was not compared, or where it's explained", () => {
  it('says --verbose explains, and --verbose, JSON and the evidence kind carry the reader’s reason', () =>
    withCopy(
      'nginx-svc',
      (dir) =>
        rewrite(dir, 'nodes/vm-12-11-centos/iptables-save.txt', (t) => {
          const lines = t.split('\n');
          return lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n';
        }),
      (dir) => {
        const text = kdebug(['svc', '--snapshot', dir, '--no-color'], { env: WIDE });
        assert.equal(text.code, 0, text.stderr);
        const rules = stepLine(text, 'Rules');
        assert.equal(rules.mark, '◐');
        assert.match(rules.line, /vm-12-11-centos: rules not compared \(--verbose explains\)$/);
        const verbose = kdebug(['svc', '--snapshot', dir, '--no-color', '--verbose'], {
          env: WIDE,
        });
        assert.match(verbose.stdout, /vm-12-11-centos: rules not compared\n/);
        assert.doesNotMatch(verbose.stdout, /rules not compared \(--verbose/);
        const reason = /the dump looks cut short after line \d+: table nat has no COMMIT/;
        assert.match(verbose.stdout.replace(/\n +/g, ' '), reason);
        const out = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
        assert.equal(out.code, 0);
        const [skip] = findings(out, 'rules', 'rules-not-checked');
        assert.equal(skip?.status, 'skip');
        assert.match(skip.explanation, reason);
        assert.deepEqual(
          skip.evidence.map((e) => e.kind),
          ['not-observed'],
        );
      },
    ));
});
