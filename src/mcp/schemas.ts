// The tools' output schemas: the published ones (schema/), bundled, as the SDK takes them (zod),
// so tools/list shows them and the SDK checks each result against its schema before sending it.
import type { core } from 'zod';
import type { Zod } from './inputs.js';

/** The schemas, bundled apart from the CLI, loaded when the server starts. */
export async function outputSchemas(z: Zod) {
  const files = await Promise.all([
    import('../../schema/report.v2.json', { with: { type: 'json' } }),
    import('../../schema/rules.v2.json', { with: { type: 'json' } }),
    import('../../schema/rules-search.v1.json', { with: { type: 'json' } }),
    import('../../schema/expect.v1.json', { with: { type: 'json' } }),
    import('../../schema/drift.v1.json', { with: { type: 'json' } }),
    import('../../schema/trace.v2.json', { with: { type: 'json' } }),
  ]);
  const [svc, rules, rules_search, expect, drift, trace] = files.map((f) =>
    z.fromJSONSchema(f.default as core.JSONSchema.JSONSchema),
  );
  return {
    svc: svc!,
    rules: rules!,
    rules_search: rules_search!,
    expect: expect!,
    drift: drift!,
    trace: trace!,
  };
}

export type OutputSchemas = Awaited<ReturnType<typeof outputSchemas>>;
