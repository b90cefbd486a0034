// `kdebug mcp`'s server: the tools on stdio until the client closes stdin; what a run still holds
// then (or on a signal) is released as Ctrl-C releases it.
import { EXIT, onInterrupt, VERSION } from '../commands/common/io.js';
import { releaseAll } from './run.js';
import { outputSchemas } from './schemas.js';
import { registerTools, type ServerOptions } from './tools.js';

const INSTRUCTIONS = `kdebug reads kube-proxy's Service dataplane (iptables, nftables or IPVS rules) and says why a Service cannot be reached, with evidence.
Start with svc (a Service name); services lists the names, scenarios lists bundled snapshots to try without a cluster.
rules, rules_search, expect, drift and trace look at one node's rules. Every tool reads; none changes the cluster.`;

export async function serve(o: ServerOptions): Promise<number> {
  // the SDK, zod and the schemas load only here; this code is the CLI's own (in its bundle, not a
  // chunk beside it: commands/common/io.ts finds the snapshots and the parse worker from where it is)
  const [{ McpServer }, { StdioServerTransport }, { z }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('zod'),
  ]);
  const server = new McpServer(
    { name: 'kdebug', version: VERSION },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  registerTools(server, o, z, await outputSchemas(z));
  // a signal (cli.ts) runs this before exiting: the runs' debug Pods are deleted first
  onInterrupt.add(releaseAll);
  const closed = new Promise<void>((resolve) => (server.server.onclose = resolve));
  // the SDK's transport does not watch for the end of stdin: the client left
  process.stdin.once('end', () => void server.close());
  await server.connect(new StdioServerTransport());
  await closed;
  await releaseAll();
  onInterrupt.delete(releaseAll);
  return EXIT.ok;
}
