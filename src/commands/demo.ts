// `kdebug demo`: svc nginx-svc on the bundled snapshot, no cluster needed.
import { DEMO_SNAPSHOT, type GlobalOptions } from './io.js';
import { svcCommand } from './svc.js';
import { withExamples, type Define } from './flags.js';

export async function demoCommand(g: GlobalOptions): Promise<number> {
  const label = 'the demo snapshot';
  return svcCommand(
    'nginx-svc',
    { snapshot: DEMO_SNAPSHOT, label },
    { ...g, namespace: 'default' },
  );
}

/** `kdebug demo`: its help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('demo')
      .description(
        'kdebug on the bundled demo snapshot (the nginx-svc cluster), no cluster needed',
      ),
    ['kdebug demo', 'kdebug demo -o text'],
  ).action(() => run(demoCommand(g())));
};
