// `kdebug demo [SCENARIO]`: svc on a bundled snapshot, no cluster needed: the demo (nginx-svc),
// or any scenario by name; --list says what each one shows.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUNDLED_SNAPSHOTS,
  DEMO_SNAPSHOT,
  textWidth,
  UsageError,
  write,
  type GlobalOptions,
} from './common/io.js';
import { wrap, wrapAfter } from '../output/wrap.js';
import { svcCommand } from './svc.js';
import { withExamples, type Define } from './common/flags.js';
import { selfCommand } from './common/invocation.js';

interface Scenario {
  name: string;
  /** The first line of its README, without "# Scenario: ". */
  about: string;
}

/** The bundled snapshots, wherever kdebug is installed (they ship beside the bundle). */
export function scenarios(): Scenario[] {
  return readdirSync(BUNDLED_SNAPSHOTS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => {
      let about = '';
      try {
        const first = readFileSync(join(BUNDLED_SNAPSHOTS, d.name, 'README.md'), 'utf8').split(
          '\n',
        )[0]!;
        about = first.replace(/^#\s*(?:Scenario|Demo snapshot):\s*/, '');
      } catch {
        // a scenario without its README is still one
      }
      return { name: d.name, about };
    })
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

export async function demoCommand(
  name: string | undefined,
  o: { list?: boolean; verbose?: boolean },
  g: GlobalOptions,
): Promise<number> {
  if (o.list) {
    const all = scenarios();
    const names = Math.max(...all.map((s) => s.name.length));
    const { width } = textWidth();
    const lines = [
      ...all.flatMap((s) => wrapAfter(`${s.name.padEnd(names)}  `, s.about, width)),
      '',
      ...wrap(
        `${selfCommand('demo NAME')} runs one; ${selfCommand('svc --snapshot DIR')} runs it from its directory (${BUNDLED_SNAPSHOTS})`,
        width,
        '',
        '  ',
      ),
    ];
    write(`${lines.join('\n')}\n`);
    return 0;
  }
  // the plain demo reads no directory listing on its way to the first frame
  const all = name === undefined ? [] : scenarios();
  if (name !== undefined && !all.some((s) => s.name === name))
    throw new UsageError(
      `no scenario "${name}"; ${selfCommand('demo --list')} lists them (${all.map((s) => s.name).join(', ')})`,
    );
  const dir = name === undefined ? DEMO_SNAPSHOT : join(BUNDLED_SNAPSHOTS, name);
  const label = name === undefined ? 'the demo snapshot' : `scenario ${name}`;
  // the Service each snapshot was taken for (its meta.json)
  return svcCommand(undefined, { snapshot: dir, label, verbose: o.verbose }, g);
}

/** `kdebug demo`: its help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('demo [scenario]')
      .description(
        'kdebug on a bundled snapshot, no cluster needed: the demo (nginx-svc), or a scenario by name',
      )
      .option('--list', 'list the bundled scenarios, one line each')
      .option('-v, --verbose', 'text: expand every finding, not only the failing ones'),
    ['kdebug demo', 'kdebug demo --list', 'kdebug demo selector-typo -o text'],
  ).action((name: string | undefined, o: { list?: boolean; verbose?: boolean }) =>
    run(demoCommand(name, o, g())),
  );
};
