// The inputs several tools take, named as the command line's flags are. Made with the zod the
// server loads when it starts (server.ts): the CLI's other commands never load it.
import type { z, ZodRawShape } from 'zod';

export type Zod = typeof z;

export function inputs(z: Zod) {
  const snapshot = z
    .string()
    .min(1)
    .optional()
    .describe(
      'a recorded snapshot directory (default: the live cluster); the scenarios tool lists the bundled ones',
    );
  const node = z
    .string()
    .min(1)
    .optional()
    .describe('the node whose rules to read (needed when there are several)');
  const namespace = z
    .string()
    .min(1)
    .optional()
    .describe("namespace (default: the server's -n, else the kubeconfig context's)");
  const family = z.enum(['ipv4', 'ipv6', 'both']).optional();
  const access = {
    via: z
      .enum(['auto', 'kube-proxy', 'pod', 'ssh'])
      .optional()
      .describe(
        'how to reach the nodes (live cluster): auto tries exec in the kube-proxy Pod, then a debug Pod (only if the server allows them), then SSH',
      ),
    'node-timeout': z
      .number()
      .positive()
      .max(3600)
      .optional()
      .describe('seconds a debug Pod may take to start, and each command on a node (default: 60)'),
  };
  // which nodes svc reads live, as its flags choose them (a snapshot holds the nodes it recorded)
  const nodeChoice = {
    nodes: z
      .string()
      .min(1)
      .optional()
      .describe('read these nodes (a,b,c) instead of the default choice'),
    'all-nodes': z.boolean().optional().describe('read every node'),
    'max-nodes': z
      .number()
      .int()
      .positive()
      .optional()
      .describe('read at most N nodes (default 20)'),
    from: z
      .string()
      .min(1)
      .optional()
      .describe(
        "the client whose connection fails, pod/NAME or node/NAME: its node's rules are read first",
      ),
  };
  return { snapshot, node, namespace, family, access, nodeChoice };
}

/** A tool's input that refuses a key it does not know, as the command line refuses an unknown
 * option: a misspelt flag ignored would answer another question than the one asked. */
export function strict<S extends ZodRawShape>(z: Zod, shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? unknownInputs(issue.keys, known) : undefined,
  });
}

/** "unknown input "allNodes" (did you mean "all-nodes"?)": close is the same letters but for
 * case, '-' and '_', as a camelCase or snake_case spelling of a flag is. */
export function unknownInputs(keys: string[], known: string[]): string {
  const bare = (k: string) => k.toLowerCase().replace(/[-_]/g, '');
  const said = keys.map((k) => {
    const close = known.find((x) => bare(x) === bare(k));
    return `${JSON.stringify(k)}${close ? ` (did you mean "${close}"?)` : ''}`;
  });
  return `unknown input ${said.join(', ')}: the inputs are ${known.join(', ') || 'none'}`;
}
