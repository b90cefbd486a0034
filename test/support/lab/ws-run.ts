// Runs kdebug's SSH transport inside the lab's workstation namespace (the test process lives in
// the host namespace, which the lab never links to) and prints what happened as JSON:
//   ip netns exec PREFIX.ws node --import tsx test/support/lab/ws-run.ts '{"op":"run",...}'
import type { NodeCommand } from '../../../src/cluster/cluster.js';
import { SshNodes, SshSession, type SshAddressType } from '../../../src/cluster/nodes/ssh.js';
import { SshError, type SshOptions } from '../../../src/cluster/ssh/route.js';
import { readRulesOverSsh } from '../../../src/cluster/ssh/rules.js';
import type { NodeAddress } from '../../../src/core/kube/objects.js';

export type WsRequest =
  | { op: 'run'; destination: string; options: SshOptions; commands: NodeCommand[] }
  | { op: 'rules'; destination: string; options: SshOptions }
  | {
      op: 'nodes';
      nodes: { name: string; addresses: NodeAddress[] }[];
      options: SshOptions & { addressType?: SshAddressType };
      command: NodeCommand;
    };

async function handle(req: WsRequest): Promise<unknown> {
  const started = Date.now();
  const timed = <T extends object>(x: T) => ({ ok: true, ms: Date.now() - started, ...x });
  switch (req.op) {
    case 'run': {
      const session = await SshSession.open(req.destination, req.options);
      try {
        const results = [];
        for (const c of req.commands) results.push(await session.run(c));
        return timed({ via: session.via, results });
      } finally {
        await session.close();
      }
    }
    case 'rules':
      return timed(await readRulesOverSsh(req.destination, req.options));
    case 'nodes': {
      const nodes = new SshNodes(req.options);
      try {
        return timed({
          results: await Promise.all(req.nodes.map((n) => nodes.run(n, req.command))),
        });
      } finally {
        await nodes.close();
      }
    }
  }
}

handle(JSON.parse(process.argv[2] ?? '{}') as WsRequest).then(
  (out) => process.stdout.write(JSON.stringify(out)),
  (err: Error) =>
    process.stdout.write(
      JSON.stringify({
        ok: false,
        reason: err instanceof SshError ? err.reason : 'crash',
        message: err.message,
      }),
    ),
);
