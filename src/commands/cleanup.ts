// `kdebug cleanup`: the debug Pods a killed kdebug left behind, deleted.
import { EXIT, format, tell, write, type GlobalOptions } from './io.js';

export async function cleanupCommand(g: GlobalOptions): Promise<number> {
  format(g, 'cleanup');
  const { KubeApi } = await import('../cluster/kube-api.js');
  const { cleanupDebugPods } = await import('../cluster/node-pod.js');
  const api = await KubeApi.connect({ kubeconfig: g.kubeconfig, context: g.context });
  try {
    const r = await cleanupDebugPods(api, { namespace: g.namespace });
    if (r.note) tell(r.note);
    for (const d of r.deleted)
      write(
        `deleted Pod ${d.namespace}/${d.name}${d.node ? ` (node ${d.node}, ${d.phase})` : ''}\n`,
      );
    if (r.deleted.length === 0) write(`no kdebug debug Pods in ${r.scope}\n`);
    return EXIT.ok;
  } finally {
    api.close();
  }
}
