// The two tools no command prints as JSON: the Services to diagnose, from a snapshot or the
// API (as shell completion lists them), and the scenarios kdebug ships.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { z as Z } from 'zod';
import { readSnapshot } from '../cluster/snapshot/read.js';
import { DEMO_SNAPSHOT, type GlobalOptions } from '../commands/common/io.js';
import { clusterView } from '../core/kube/objects.js';
import type { KubeObject } from '../core/model.js';
import type { Zod } from './inputs.js';

/** The tools' output schemas, with the zod the server loaded. */
export function listingSchemas(z: Zod) {
  const service = z.object({
    namespace: z.string(),
    name: z.string(),
    type: z.string(),
    clusterIPs: z.array(z.string()),
    ports: z.array(
      z.object({ name: z.string(), port: z.number().nullable(), protocol: z.string() }),
    ),
  });

  const services = z.object({ source: z.string(), services: z.array(service) });
  const scenarios = z.object({
    scenarios: z.array(
      z.object({
        name: z.string(),
        /** The directory to give as `snapshot`. */
        snapshot: z.string(),
        summary: z.string(),
        /** The Service the scenario is about (NAMESPACE/NAME). */
        service: z.string().nullable(),
      }),
    ),
  });
  return { services, scenarios };
}

type Schemas = ReturnType<typeof listingSchemas>;

export async function listServices(
  g: GlobalOptions,
  o: { snapshot?: string; allNamespaces?: boolean },
  signal: AbortSignal,
): Promise<Z.infer<Schemas['services']>> {
  let objects: KubeObject[];
  let source: string;
  let namespace: string | undefined;
  if (o.snapshot !== undefined) {
    const facts = await readSnapshot(o.snapshot);
    objects = facts.objects;
    source = `snapshot ${o.snapshot}`;
    namespace = g.namespace ?? facts.meta.namespace ?? 'default';
  } else {
    const { KubeApi } = await import('../cluster/kube-api.js');
    const api = await KubeApi.connect({
      kubeconfig: g.kubeconfig,
      context: g.context,
      timeoutMs: 15_000,
    });
    // a cancelled call ends its request
    const close = () => api.close();
    signal.addEventListener('abort', close, { once: true });
    try {
      namespace = g.namespace ?? api.namespace;
      const path = o.allNamespaces
        ? '/api/v1/services'
        : `/api/v1/namespaces/${encodeURIComponent(namespace)}/services`;
      objects = (await api.list(path)).items;
      source = 'the live cluster';
    } finally {
      signal.removeEventListener('abort', close);
      api.close();
    }
  }
  const services = clusterView(objects)
    .services.filter((s) => o.allNamespaces || s.namespace === namespace)
    .map((s) => ({
      namespace: s.namespace,
      name: s.name,
      type: s.type,
      clusterIPs: s.clusterIPs,
      ports: s.ports.map((p) => ({ name: p.name, port: p.port ?? null, protocol: p.protocol })),
    }));
  return { source, services };
}

/** The bundled snapshots, beside the demo's: each README's title says what is broken. */
export async function listScenarios(): Promise<Z.infer<Schemas['scenarios']>> {
  const root = dirname(DEMO_SNAPSHOT);
  const names = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const scenarios = await Promise.all(
    names.map(async (name) => {
      const dir = join(root, name);
      const readme = await readFile(join(dir, 'README.md'), 'utf8').catch(() => '');
      const title = /^# (?:Scenario: |Demo snapshot: )?(.*)$/m.exec(readme)?.[1] ?? name;
      const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as {
        namespace?: string;
        service?: string;
      };
      const service = meta.service ? `${meta.namespace ?? 'default'}/${meta.service}` : null;
      return { name, snapshot: dir, summary: title, service };
    }),
  );
  return { scenarios };
}
