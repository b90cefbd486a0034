// `kdebug demo`: svc nginx-svc on the bundled snapshot, no cluster needed.
import { DEMO_SNAPSHOT, type GlobalOptions } from './io.js';
import { svcCommand } from './svc.js';

export async function demoCommand(g: GlobalOptions): Promise<number> {
  const label = 'the demo snapshot';
  return svcCommand(
    'nginx-svc',
    { snapshot: DEMO_SNAPSHOT, label },
    { ...g, namespace: 'default' },
  );
}
