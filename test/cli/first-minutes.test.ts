// What a new user types first, as the built CLI answers it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const DEMO = ['--snapshot', 'snapshots/nginx-svc'];

describe('the first ten minutes', () => {
  it('--version and version say the version and the commit built; -o json adds Node.js and, without a cluster, why no server', () => {
    const head = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' });
    const commit = `${head.stdout.trim()}(?:-dirty)?`;
    assert.match(
      kdebug(['--version']).stdout,
      new RegExp(`^kdebug \\d+\\.\\d+\\.\\d+ \\(commit ${commit}\\)\\n$`),
    );
    assert.match(
      kdebug(['version']).stdout,
      new RegExp(`^kdebug \\d+\\.\\d+\\.\\d+ \\(commit ${commit}, Node\\.js v\\d+`),
    );
    const doc = JSON.parse(kdebug(['version', '-o', 'json']).stdout);
    assert.deepEqual(Object.keys(doc), [
      '$schema',
      'schemaVersion',
      'kdebug',
      'commit',
      'node',
      'server',
      'serverError',
    ]);
    assert.match(doc.commit, new RegExp(`^${commit}$`));
    assert.equal(doc.server, null);
    assert.match(doc.serverError, /no kubeconfig/);
  });

  it('a missing argument is one line and where to read more; --help lists the global flags and examples', () => {
    const r = kdebug(['svc']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "kdebug: missing required argument 'name'; see kdebug svc --help\n");
    const help = kdebug(['svc', '--help']).stdout;
    assert.match(
      help,
      /Global Options:\n(.|\n)*-n, --namespace(.|\n)*--context(.|\n)*--kubeconfig(.|\n)*-o, --output/,
    );
    assert.match(help, /Examples:\n {2}kdebug svc nginx-svc/);
  });

  const refusals: [string[], RegExp][] = [
    [
      ['expect', ...DEMO, '--node', 'vm-12-7-centos', '-o', 'tui'],
      /^kdebug: expect has no tui output; use -o text or -o json\n$/,
    ],
    [
      ['drift', ...DEMO, '--all-nodes', '-o', 'tui'],
      /^kdebug: drift has no tui output; use -o text or -o json\n$/,
    ],
    [
      ['svc', 'nginx-svc', ...DEMO, '-o', 'tui'],
      /^kdebug: -o tui needs a terminal on stdin and stdout \(neither is one\)/,
    ],
    [['completion', 'bash', '-o', 'json'], /completion prints a shell script; use -o text/],
  ];
  for (const [args, message] of refusals)
    it(`refuses ${args.slice(-2).join(' ')} for ${args[0]} with exit 2`, () => {
      const r = kdebug(args);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    });

  it("a command's flag typed before the command says where it goes; an unknown one stays unknown", () => {
    const before = kdebug(['--snapshot', 'snapshots/nginx-svc', 'svc', 'nginx-svc']);
    assert.equal(before.code, 2);
    assert.equal(
      before.stderr,
      'kdebug: --snapshot is an option of the command, not of kdebug: put it after the command (kdebug svc ... --snapshot ...); see kdebug --help\n',
    );
    const unknown = kdebug(['--bogus', 'svc', 'x']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^kdebug: unknown option '--bogus'; see kdebug --help\n$/);
    // every usage error is one line: a did-you-mean included
    const typo = kdebug(['svx']);
    assert.equal(typo.code, 2);
    assert.match(
      typo.stderr,
      /^kdebug: unknown command 'svx' \(Did you mean svc\?\); see kdebug --help\n$/,
    );
  });

  it('svc takes the forms people type, and did-you-mean ignores case', () => {
    for (const name of [
      'default/nginx-svc',
      'svc/nginx-svc',
      'nginx-svc.default',
      'nginx-svc.default.svc.cluster.local',
    ])
      assert.match(
        kdebug(['svc', name, ...DEMO, '-o', 'text']).stdout,
        /^kdebug svc default\/nginx-svc\n/,
        name,
      );
    const wrong = kdebug(['svc', 'kube-system/nginx-svc', ...DEMO, '-n', 'default']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /is in namespace kube-system, but -n says default/);
    assert.match(
      kdebug(['svc', 'NGINX-SVC', ...DEMO, '-o', 'text']).stdout,
      /Did you mean\s+"nginx-svc"\?/,
    );
  });

  it("a snapshot path that is not there: a bundled scenario's name says how to run it, any other where they are listed", () => {
    const scenario = kdebug(['svc', '--snapshot', 'selector-typo']);
    assert.equal(scenario.code, 2);
    assert.match(
      scenario.stderr,
      /^kdebug: selector-typo: no such snapshot directory; selector-typo is a bundled scenario: kdebug demo selector-typo runs it, from \/\S+\/snapshots\/selector-typo\n$/,
    );
    const other = kdebug(['svc', '--snapshot', 'no-such-dir']);
    assert.equal(other.code, 2);
    assert.equal(
      other.stderr,
      'kdebug: no-such-dir: no such snapshot directory; kdebug demo --list lists the bundled scenarios\n',
    );
  });

  it('text follows COLUMNS', () => {
    const wide = kdebug(['demo', '-o', 'text'], { env: { COLUMNS: '120' } }).stdout.split('\n');
    assert.ok(Math.max(...wide.map((l) => l.length)) > 80);
    assert.ok(wide.every((l) => l.length <= 120));
    const narrow = kdebug(['demo', '-o', 'text'], { env: { COLUMNS: '60' } }).stdout.split('\n');
    assert.ok(
      narrow.every((l) => [...l].length <= 60),
      narrow.find((l) => [...l].length > 60),
    );
  });
});
