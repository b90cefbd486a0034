// zsh's and fish's completion as each shell runs it: the script kdebug prints, sourced, and the
// line completed by the shell itself (zsh: TAB typed into an interactive zsh in a pseudo-terminal;
// fish: `complete -C`, which asks fish what TAB would offer).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hermetic, kdebug, kdebugOnPath, ROOT } from '../support/cli.js';
import { hasCommand, skipWithout } from '../support/skip.js';
import { COMPLETION_CASES } from '../support/completion-cases.js';

const dir = kdebugOnPath();
const env = { ...hermetic(), PATH: `${dir}:${process.env['PATH']}` };

const complete: Record<'zsh' | 'fish', (line: string) => string[]> = {
  zsh(line) {
    const script = join(dir, 'kdebug.zsh');
    writeFileSync(script, kdebug(['completion', 'zsh']).stdout);
    const out = join(dir, `offers-${Math.random().toString(36).slice(2)}`);
    writeFileSync(out, '');
    const driver = join(ROOT, 'test/support/zsh-complete.zsh');
    const r = spawnSync('zsh', ['-f', driver, script, line, out], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const said = readFileSync(out, 'utf8').split('\n');
    assert.ok(said.includes('<DONE>'), `zsh did not finish completing "${line}"`);
    return said.filter((l) => l !== '' && l !== '<DONE>');
  },
  fish(line) {
    const program = `kdebug completion fish | source; complete -C ${JSON.stringify(line)}`;
    const r = spawnSync('fish', ['-c', program], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    // fish prints "candidate<TAB>description", each the whole token: after `--flag=` the flag
    // comes first, and the offers are what follows it
    const flag = /^-[^=]*=/.exec(line.split(' ').at(-1)!)?.[0] ?? '';
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]!)
      .map((c) => (c.startsWith(flag) ? c.slice(flag.length) : `(without ${flag}) ${c}`));
  },
};

for (const shell of ['zsh', 'fish'] as const)
  describe(
    `${shell} completion`,
    skipWithout(hasCommand(shell) ? '' : `${shell} is not installed`),
    () => {
      for (const c of COMPLETION_CASES)
        it(`${c.typed}⇥ offers ${c.offers.join(', ') || 'nothing'}`, () =>
          assert.deepEqual(complete[shell](c.typed).sort(), [...c.offers].sort()));

      it("a flag that takes a file gets the shell's own file names: --file, --kubeconfig", () => {
        for (const typed of ['rules --file READ', 'svc web --kubeconfig READ']) {
          const offers = complete[shell](`kdebug ${typed}`);
          assert.ok(offers.includes('README.md'), `${typed}: ${JSON.stringify(offers)}`);
        }
      });

      it("a flag that takes a directory gets the shell's own file names, after = too", () => {
        for (const typed of ['--snapshot snapshots/nginx-s', '--snapshot=snapshots/nginx-s']) {
          const offers = complete[shell](`kdebug svc ${typed}`);
          // zsh offers the name within its directory, fish the path with a slash for a directory
          assert.ok(
            offers.some((o) => /^(snapshots\/)?nginx-svc\/?$/.test(o)),
            `${typed}: ${JSON.stringify(offers)}`,
          );
        }
      });
    },
  );
