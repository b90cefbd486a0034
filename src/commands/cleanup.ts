// `kdebug cleanup`: the debug Pods a killed kdebug left behind, deleted; those of a kdebug still
// running elsewhere are spared (their run renews a lease), unless --all and a yes. Pods that only
// carry kdebug's label, without kdebug's shape, are listed and never deleted.
import type { ForeignPod, LeftPod } from '../cluster/nodes/debug-pod/cleanup.js';
import { sanitize } from '../core/sanitize.js';
import { ask, EXIT, format, tell, UsageError, write, type GlobalOptions } from './common/io.js';
import { withExamples, type Define } from './common/flags.js';

export interface CleanupFlags {
  /** Delete the Pods of live runs too. */
  all?: boolean;
  yes?: boolean;
}

const line = (p: LeftPod) =>
  sanitize(
    `Pod ${p.namespace}/${p.name}${p.node ? ` (node ${p.node}, ${p.phase})` : ` (${p.phase})`}: ${p.why}${p.owner ? `; owner ${p.owner}` : ''}`,
  );

const foreignLine = (p: ForeignPod) =>
  sanitize(`Pod ${p.namespace}/${p.name}: not kdebug's (${p.why}), left alone`);

export async function cleanupCommand(o: CleanupFlags, g: GlobalOptions): Promise<number> {
  format(g, 'cleanup');
  const { KubeApi } = await import('../cluster/kube-api.js');
  const { debugPodsLeft, deleteDebugPods } = await import('../cluster/nodes/debug-pod/cleanup.js');
  const api = await KubeApi.connect({ kubeconfig: g.kubeconfig, context: g.context });
  try {
    const plan = await debugPodsLeft(api, { namespace: g.namespace });
    if (plan.note) tell(plan.note);
    const live = plan.pods.filter((p) => p.live);
    let doomed = plan.pods.filter((p) => !p.live);
    if (o.all && live.length > 0) {
      const question = `delete ${live.length} debug Pod${live.length > 1 ? 's' : ''} of kdebug runs that are still alive?\n${live.map((p) => `  ${line(p)}`).join('\n')}\n`;
      if (o.yes || (await ask(question))) doomed = plan.pods;
      else if (!process.stdin.isTTY)
        throw new UsageError(
          `cleanup --all deletes the Pods of live kdebug runs only after a yes: add --yes (${live.length} live)`,
        );
    }
    const deleted = await deleteDebugPods(api, doomed);
    for (const d of deleted) write(`deleted ${line(d)}\n`);
    const spared = live.filter((p) => !deleted.includes(p));
    for (const p of spared) write(`spared ${line(p)}\n`);
    for (const p of plan.notKdebugs) write(`${foreignLine(p)}\n`);
    if (plan.pods.length === 0) write(`no kdebug debug Pods in ${plan.scope}\n`);
    if (spared.length > 0)
      write(
        `${spared.length} Pod${spared.length > 1 ? 's' : ''} of live runs spared (--all deletes them too)\n`,
      );
    return EXIT.ok;
  } finally {
    api.close();
  }
}

/** `kdebug cleanup`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('cleanup')
      .description(
        'delete the debug Pods a killed kdebug left behind (label app.kubernetes.io/managed-by=kdebug; all namespaces, or -n); those of live runs are spared',
      )
      .option('--all', 'also the Pods of kdebug runs that are still alive (asks first)')
      .option('--yes', 'with --all: do not ask'),
    ['kdebug cleanup', 'kdebug cleanup -n kdebug'],
  ).action((o: CleanupFlags) => run(cleanupCommand(o, g())));
};
