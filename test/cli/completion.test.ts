// Shell completion as a shell runs it: the bash script, sourced, completes commands, flags and
// the Services of a snapshot; kubectl's plugin completion gets the same answers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hermetic, kdebug, kdebugOnPath, ROOT } from '../support/cli.js';
import { COMPLETION_CASES } from '../support/completion-cases.js';

describe('shell completion', () => {
  const bin = kdebugOnPath();
  const script = kdebug(['completion', 'bash']).stdout;

  /**
   * What TAB completes the word under the cursor to, as bash runs the script: COMP_WORDS split as
   * bash splits them (at = : and @, COMP_WORDBREAKS, each run of them a word), and each reply put
   * where readline puts it (after the word's last break, an @ kept). A `--flag=` is left out: the
   * offers are its values.
   */
  const bash = (line: string): string[] => {
    const words = line.split(' ').flatMap((w) => (w === '' ? [''] : w.match(/[=:@]+|[^=:@]+/g)!));
    const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_LINE='${line}'; COMP_POINT=${line.length}; _kdebug; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const r = spawnSync('bash', ['-c', program], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...hermetic(), PATH: `${bin}:${process.env['PATH']}` },
    });
    assert.equal(r.status, 0, r.stderr);
    const last = line.split(' ').at(-1)!;
    const breaks = last.search(/[=:@][^=:@]*$/);
    const kept = breaks < 0 ? '' : last.slice(0, last[breaks] === '@' ? breaks : breaks + 1);
    const flag = /^-[^=]*=/.exec(last)?.[0] ?? '';
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((reply) => `${kept}${reply}`.slice(flag.length));
  };

  const cases: { typed: string; offers: string[] }[] = [
    ...COMPLETION_CASES,
    { typed: 'kdebug svc --snapshot snapshots/nginx-svc -n kube-system ', offers: ['kube-dns'] },
    { typed: 'kdebug rules --ta', offers: ['--table'] },
    // --from KIND/NAME: the kinds (with no cluster too), then the Pods or nodes by name
    { typed: 'kdebug svc web --from ', offers: ['pod/', 'node/'] },
    { typed: 'kdebug svc web --from=no', offers: ['node/'] },
    {
      typed: 'kdebug svc --snapshot snapshots/nginx-svc --from pod/',
      offers: ['pod/nginx-55fc968d9-4pddn', 'pod/nginx-55fc968d9-kh24k'],
    },
    {
      typed: 'kdebug svc --snapshot snapshots/nginx-svc --from node/vm-12-7',
      offers: ['node/vm-12-7-centos'],
    },
    // each command's own choices: expect writes nat and filter only, rules reads every table
    { typed: 'kdebug expect --table ', offers: ['nat', 'filter'] },
    { typed: 'kdebug rules --table ', offers: ['nat', 'filter', 'mangle', 'raw', 'security'] },
    { typed: 'kdebug drift --family ', offers: ['ipv4', 'ipv6', 'both'] },
    // the command is the first word after the global flags, not a namespace named like one
    {
      typed: 'kdebug -n demo rules --table ',
      offers: ['nat', 'filter', 'mangle', 'raw', 'security'],
    },
    // the shell's own file names where a flag takes a file or directory
    { typed: 'kdebug svc --snapshot snapshots/nginx-s', offers: ['snapshots/nginx-svc'] },
    { typed: 'kdebug svc --snapshot=snapshots/nginx-s', offers: ['snapshots/nginx-svc'] },
    { typed: 'kdebug rules --file README', offers: ['README.md'] },
    { typed: 'kdebug svc web --kubeconfig READ', offers: ['README.md'] },
  ];
  for (const c of cases)
    it(`${c.typed}⇥ offers ${c.offers.join(', ') || 'nothing'}`, () =>
      assert.deepEqual(bash(c.typed).sort(), [...c.offers].sort()));

  it('runs nothing a snapshot names: a hostile Node or Service name is never offered nor expanded', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-hostile-completion-'));
    const marker = join(dir, 'PWNED');
    const hostile = [
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      `a;touch ${marker}`,
      'x y',
      'UPPER',
    ];
    const objects = [
      ...hostile.map((name) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } })),
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } },
      ...hostile.map((name) => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { clusterIP: '10.96.0.9', ports: [{ port: 80 }] },
      })),
    ];
    writeFileSync(join(dir, 'objects.json'), JSON.stringify({ kind: 'List', items: objects }));
    assert.deepEqual(bash(`kdebug rules --snapshot ${dir} --node `), ['node-a']);
    assert.deepEqual(bash(`kdebug svc --snapshot ${dir} `), []);
    assert.ok(!existsSync(marker), 'a name from the snapshot ran as a command');
  });

  it('--context offers the contexts of the kubeconfig kubectl would use', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-contexts-'));
    const file = join(dir, 'config');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://192.0.2.9:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts:\n- {name: admin@prod, context: {cluster: c, user: u}}\n- {name: admin@staging, context: {cluster: c, user: u}}\n- {name: "x y", context: {cluster: c, user: u}}\n- {name: "admin@$(touch$\{IFS}${dir}/PWNED)", context: {cluster: c, user: u}}\n- {name: "arn:aws:eks:us-west-2:123456789012:cluster/prod", context: {cluster: c, user: u}}\ncurrent-context: admin@prod\n`,
    );
    // a context whose name the shell would run is never put on the command line
    assert.deepEqual(bash(`kdebug svc web --kubeconfig ${file} --context ar`), [
      'arn:aws:eks:us-west-2:123456789012:cluster/prod',
    ]);
    assert.ok(!existsSync(join(dir, 'PWNED')), 'a context name ran as a command');
    assert.deepEqual(bash(`kdebug svc web --kubeconfig ${file} --context admin@`), [
      'admin@prod',
      'admin@staging',
    ]);
    assert.deepEqual(bash(`kdebug svc web --kubeconfig ${file} --context admin@s`), [
      'admin@staging',
    ]);
  });

  it('answers kubectl the cobra way, and prints each shell its script', () => {
    const r = spawnSync(
      process.execPath,
      ['bin/kubectl_complete-kdebug.js', 'svc', '--snapshot', 'snapshots/nginx-svc', 'ng'],
      { cwd: ROOT, encoding: 'utf8', env: hermetic() },
    );
    assert.equal(r.stdout, 'nginx-svc\n:4\n');
    for (const shell of ['zsh', 'fish'])
      assert.match(kdebug(['completion', shell]).stdout, /kdebug __complete/);
    const bad = kdebug(['completion', 'tcsh']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no completion for "tcsh": give bash, zsh or fish/);
  });
});
