// The tools: each one a kdebug command run as the command line runs it (the same function, the
// same checks, the same JSON), its input named as the command's flags, its output the command's
// JSON and a short summary. Nothing here writes to a cluster but the debug Pods the person
// allowed when starting the server, and the snapshot directory they allowed.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { driftCommand } from '../commands/drift.js';
import { expectCommand } from '../commands/expect.js';
import { EXIT, UsageError, type GlobalOptions } from '../commands/common/io.js';
import { rulesCommand } from '../commands/rules.js';
import { svcCommand } from '../commands/svc.js';
import { traceCommand } from '../commands/trace.js';
import type { SourceFlags } from '../cluster/facts-source.js';
import type { NodeAccessFlags } from '../cluster/nodes/flags.js';
import { TABLES } from '../core/dataplane/iptables/read/parse.js';
import { sanitize } from '../core/sanitize.js';
import { listingSchemas, listScenarios, listServices } from './listings.js';
import { runCommand, type Extra, type Ran } from './run.js';
import { inputs, strict, type Zod } from './inputs.js';
import { saveSnapshot, snapshotInput } from './snapshot.js';
import type { expectDoc } from '../output/expect.js';
import type { OutputSchemas } from './schemas.js';
import * as say from './summary.js';

export interface ServerOptions {
  /** -n, --context, --kubeconfig as given to `kdebug mcp`. */
  g: GlobalOptions;
  /** --via, --image, --debug-namespace, --node-timeout as given to `kdebug mcp`. */
  nodeAccess: NodeAccessFlags;
  /** --allow-debug-pods: without it no debug Pod is ever created. */
  allowDebugPods: boolean;
  /** --snapshot-dir: the one directory snapshot_save writes under (resolved). */
  snapshotDir?: string;
}

const PODS_ALLOWED =
  ' This server may create a privileged debug Pod on a node it cannot read otherwise (started with --allow-debug-pods); each is deleted when the call ends or is cancelled.';
const PODS_REFUSED =
  ' This server never creates a debug Pod (start it with kdebug mcp --allow-debug-pods for that).';

/** What each exit code says, as the README's table does (commands/common/io.ts EXIT). */
const EXIT_MEANING: Record<number, string> = {
  [EXIT.problem]: 'a problem was found',
  [EXIT.failed]: 'kdebug could not do all of its job: the answer is partial or missing',
  [EXIT.interrupted]: 'interrupted',
};

/** A command's result as a tool's: its JSON and a summary (an error is `guarded`'s). */
async function answer<D extends object>(
  extra: Extra,
  what: string,
  command: () => Promise<number>,
  present: (ran: Ran) => { doc: D; text: string },
): Promise<CallToolResult> {
  const ran = await runCommand(extra, what, command);
  const { doc, text } = present(ran);
  const code =
    ran.code === 0 ? '' : `\n(kdebug exit code ${ran.code}: ${EXIT_MEANING[ran.code] ?? 'failed'})`;
  return {
    content: [{ type: 'text', text: `${text}${code}` }],
    structuredContent: doc as Record<string, unknown>,
  };
}

/** A command whose -o json is the tool's result, `summary` saying it in a line. */
const answerJson = <D extends object>(
  extra: Extra,
  what: string,
  command: () => Promise<number>,
  summary: (doc: D) => string,
): Promise<CallToolResult> =>
  answer(extra, what, command, (ran) => {
    // a command that failed before its document threw: one that returned wrote it
    if (!ran.doc) throw new Error(`${what} gave no JSON document`);
    const doc = ran.doc as D;
    return { doc, text: summary(doc) };
  });

/** An error as the command line says it: one line, nothing from the input left to interpret. */
const oneLine = (e: unknown): string =>
  sanitize((e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '');

export function registerTools(
  server: McpServer,
  s: ServerOptions,
  z: Zod,
  OUTPUT: OutputSchemas,
): void {
  const { snapshot, node, namespace, family, access, nodeChoice } = inputs(z);
  const listings = listingSchemas(z);
  const pods = s.allowDebugPods ? PODS_ALLOWED : PODS_REFUSED;
  /** The node access flags of a call: the server's, the call's --via and --node-timeout. */
  const flags = (i: { via?: string; 'node-timeout'?: number }): NodeAccessFlags => {
    if (i.via === 'pod' && !s.allowDebugPods)
      throw new UsageError(
        'via "pod" creates a debug Pod: this server was started without --allow-debug-pods',
      );
    return {
      ...s.nodeAccess,
      ...(i.via ? { via: i.via as NodeAccessFlags['via'] } : {}),
      ...(i['node-timeout'] !== undefined ? { nodeTimeout: String(i['node-timeout']) } : {}),
      yes: s.allowDebugPods,
    };
  };
  /** Where a call reads from: its snapshot (else the live cluster) and node, and how it reaches
   * the node. */
  const source = (
    i: Parameters<typeof flags>[0] & { snapshot?: string; node?: string },
  ): SourceFlags => ({ ...flags(i), snapshot: i.snapshot, node: i.node });
  const g = (o: { namespace?: string }, output: 'json' | 'text' = 'json'): GlobalOptions => ({
    ...s.g,
    namespace: o.namespace ?? s.g.namespace,
    output,
    color: false,
  });
  /** A failure, of the flags or of the command, as the call's one-line error (as cli.ts says it). */
  const guarded =
    <I>(f: (i: I, extra: Extra) => Promise<CallToolResult>) =>
    async (i: I, extra: Extra): Promise<CallToolResult> => {
      try {
        return await f(i, extra);
      } catch (e) {
        return { isError: true, content: [{ type: 'text', text: `kdebug: ${oneLine(e)}` }] };
      }
    };

  server.registerTool(
    'svc',
    {
      title: 'Diagnose a Service',
      description: `kdebug svc NAME: the guided diagnosis of one Service, step by step with evidence: why it cannot be reached. Returns the report of kdebug svc -o json (schema kdebug/schema/report.v2.json).${pods}`,
      inputSchema: strict(z, {
        name: z
          .string()
          .min(1)
          .optional()
          .describe(
            'the Service: NAME, NAMESPACE/NAME, or its cluster IP; with a snapshot, default: the Service the snapshot was taken for',
          ),
        namespace,
        'all-namespaces': z
          .boolean()
          .optional()
          .describe('find the Service of that name in whichever namespace holds it'),
        snapshot,
        ...access,
        ...nodeChoice,
      }),
      outputSchema: OUTPUT.svc,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = {
        ...flags(i),
        snapshot: i.snapshot,
        allNamespaces: i['all-namespaces'],
        nodes: i.nodes,
        allNodes: i['all-nodes'],
        maxNodes: i['max-nodes'] === undefined ? undefined : String(i['max-nodes']),
        from: i.from,
      };
      // as the command line: only a snapshot names the Service it was taken for
      if (i.name === undefined && i.snapshot === undefined)
        throw new UsageError('give name: the Service to diagnose (only a snapshot names one)');
      return answerJson(
        extra,
        `svc ${i.name ?? ''}`.trim(),
        () => svcCommand(i.name, o, g(i)),
        say.svcSummary,
      );
    }),
  );

  server.registerTool(
    'rules',
    {
      title: "A node's Service trees",
      description: `kdebug rules: the Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees of one node's kube-proxy rules (iptables, nftables or IPVS mode), or of its Cilium agent. Returns kdebug rules -o json (schema kdebug/schema/rules.v2.json).${pods}`,
      inputSchema: strict(z, {
        snapshot,
        node,
        table: z.enum(TABLES).optional(),
        ...access,
      }),
      outputSchema: OUTPUT.rules,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = { ...source(i), table: i.table };
      return answerJson(extra, 'rules', () => rulesCommand(o, g({})), say.rulesSummary);
    }),
  );

  server.registerTool(
    'rules_search',
    {
      title: "Search a node's rules",
      description: `kdebug rules --search: fuzzy search of one node's chains, comments, IPs, ports and Service names, best first. Returns kdebug rules --search -o json (schema kdebug/schema/rules-search.v1.json).${pods}`,
      inputSchema: strict(z, {
        search: z
          .string()
          .min(1)
          .describe('what to look for: a Service name, an IP, a port, a chain'),
        snapshot,
        node,
        table: z.enum(TABLES).optional(),
        ...access,
      }),
      outputSchema: OUTPUT.rules_search,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = { ...source(i), table: i.table, search: i.search };
      return answerJson(
        extra,
        `rules --search ${i.search}`,
        () => rulesCommand(o, g({})),
        say.searchSummary,
      );
    }),
  );

  server.registerTool(
    'expect',
    {
      title: 'The rules kube-proxy would write',
      description:
        'kdebug expect: the rules kube-proxy would write on a node, computed from the cluster objects: iptables-save text (iptables mode), the nft -f script of its table (nftables mode), or its virtual servers (IPVS mode). Reads only the API objects, never a node. Returns { text } (schema kdebug/schema/expect.v1.json).',
      inputSchema: strict(z, {
        snapshot,
        node,
        table: z.enum(['nat', 'filter']).optional(),
        family,
        'random-fully': z
          .boolean()
          .optional()
          .describe(
            'false: the iptables binary lacks MASQUERADE --random-fully (iptables < 1.6.2)',
          ),
        nfacct: z
          .boolean()
          .optional()
          .describe('the node has nfacct counters (default: read from its recordings)'),
        'tcp-be-liberal': z.boolean().optional().describe('sysctl nf_conntrack_tcp_be_liberal=1'),
      }),
      outputSchema: OUTPUT.expect,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = {
        snapshot: i.snapshot,
        node: i.node,
        table: i.table,
        family: i.family,
        randomFully: i['random-fully'] !== false,
        nfacct: i.nfacct,
        tcpBeLiberal: i['tcp-be-liberal'],
      };
      return answerJson(
        extra,
        'expect',
        () => expectCommand(o, g({})),
        (doc: ReturnType<typeof expectDoc>) =>
          `${doc.text.split('\n').length - 1} lines of rules kube-proxy would write`,
      );
    }),
  );

  server.registerTool(
    'drift',
    {
      title: 'Drift from what kube-proxy would write',
      description: `kdebug drift: what each node's rules do differently from what kube-proxy would write, worst first, with the rule lines as evidence. Returns kdebug drift -o json (schema kdebug/schema/drift.v1.json).${pods}`,
      inputSchema: strict(z, {
        snapshot,
        node,
        family,
        'all-nodes': z.boolean().optional().describe('every node'),
        ...access,
      }),
      outputSchema: OUTPUT.drift,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = {
        ...source(i),
        family: i.family,
        allNodes: i['all-nodes'],
      };
      return answerJson(extra, 'drift', () => driftCommand(o, g({})), say.driftSummary);
    }),
  );

  server.registerTool(
    'trace',
    {
      title: 'Walk a packet through the rules',
      description: `kdebug trace: one packet walked through a node's rules: every outcome, its chance, the rules it matched. Returns kdebug trace -o json (schema kdebug/schema/trace.v2.json).${pods}`,
      inputSchema: strict(z, {
        dst: z
          .string()
          .min(1)
          .describe('destination IP:PORT ([IPv6]:PORT), e.g. a ClusterIP and port'),
        src: z
          .string()
          .min(1)
          .optional()
          .describe('source address (a Pod IP, or a client outside the cluster)'),
        proto: z.enum(['tcp', 'udp', 'sctp', 'icmp']).optional().describe('default tcp'),
        'from-host': z.boolean().optional().describe('sent by a process on the node (nat OUTPUT)'),
        snapshot,
        node,
        ...access,
      }),
      outputSchema: OUTPUT.trace,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const o = {
        ...source(i),
        src: i.src,
        dst: i.dst,
        proto: i.proto ?? 'tcp',
        fromHost: i['from-host'],
      };
      return answerJson(extra, 'trace', () => traceCommand(o, g({})), say.traceSummary);
    }),
  );

  server.registerTool(
    'services',
    {
      title: 'List Services',
      description:
        "The Services of a namespace (or every namespace), from a snapshot or the live cluster's API: names to give the svc tool. Reads only the API.",
      inputSchema: strict(z, {
        namespace,
        'all-namespaces': z.boolean().optional().describe('every namespace'),
        snapshot,
      }),
      outputSchema: listings.services,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async (i, extra) => {
      const doc = await listServices(
        { ...s.g, namespace: i.namespace ?? s.g.namespace },
        { snapshot: i.snapshot, allNamespaces: i['all-namespaces'] },
        extra.signal,
      );
      const names = doc.services.map((x) => `${x.namespace}/${x.name}`);
      return {
        content: [
          {
            type: 'text',
            text:
              names.length > 0
                ? `${names.length} Services: ${names.join(', ')}`
                : `no Service in ${i['all-namespaces'] ? 'any namespace' : `namespace ${i.namespace ?? s.g.namespace ?? 'default'}`}`,
          },
        ],
        structuredContent: doc,
      };
    }),
  );

  server.registerTool(
    'scenarios',
    {
      title: 'The bundled scenarios',
      description:
        "The snapshots shipped with kdebug, one broken thing each (a selector typo, a stale endpoint ...): give a scenario's snapshot to the other tools to see kdebug's answer without a cluster.",
      inputSchema: strict(z, {}),
      outputSchema: listings.scenarios,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async () => {
      const doc = await listScenarios();
      // the directory is what the other tools take as `snapshot`, not the name
      const text = doc.scenarios
        .map((x) => `${x.name}: ${x.summary}\n  snapshot: ${x.snapshot}`)
        .join('\n');
      return { content: [{ type: 'text', text }], structuredContent: doc };
    }),
  );

  server.registerTool(
    'snapshot_save',
    {
      title: 'Save a snapshot',
      description: `kdebug snapshot save: read a Service (or every Service) from the live cluster and save it as a snapshot the other tools replay, redacted as kdebug snapshot save redacts (only the fields kdebug reads; context, user and server names hashed). Writes only under the directory given to kdebug mcp --snapshot-dir${s.snapshotDir ? ` (${s.snapshotDir})` : ', and this server was started without one: it refuses'}.${pods}`,
      inputSchema: strict(z, snapshotInput(z, inputs(z))),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    guarded(async (i, extra) => saveSnapshot(i, s, flags(i), extra)),
  );
}
