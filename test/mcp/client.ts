// `kdebug mcp` as an assistant runs it: the built CLI started by the SDK's own client over stdio.
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { hermetic, ROOT } from '../support/cli.js';

export interface Server {
  client: Client;
  /** What the server said on stderr so far. */
  stderr(): string;
  /** The server's process id. */
  pid: number;
  close(): Promise<void>;
}

export async function startServer(
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<Server> {
  if (!existsSync(`${ROOT}/dist/cli.js`)) throw new Error('no build: run node scripts/build.js');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['bin/kdebug.js', 'mcp', ...args],
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: hermetic()['HOME']!, NO_COLOR: '1', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d));
  const client = new Client({ name: 'kdebug-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid!, close: () => client.close() };
}

/** A call's text (its first content item). */
export const textOf = (r: CallToolResult | Record<string, unknown>): string => {
  const c = (r as CallToolResult).content?.[0];
  return c?.type === 'text' ? c.text : '';
};
