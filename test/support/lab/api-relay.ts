// Makes the fake API server (listening on this process's loopback, in the host namespace)
// reachable from the lab's workstation namespace, so kdebug can run there with both the API and
// the nodes' sshd in reach. A Unix socket is a file, and files cross network namespaces: inside
// the workstation a relay listens on 127.0.0.1:6443 and forwards to the socket; here the socket
// forwards to the server. No packet leaves loopback on either side.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Lab } from './lab.js';

export const RELAY_PORT = 6443;

function pipe(a: Socket, b: Socket): void {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

export interface ApiRelay {
  /** The API server's URL as seen from the workstation namespace. */
  server: string;
  close(): Promise<void>;
}

export async function relayApi(lab: Lab, apiPort: number): Promise<ApiRelay> {
  const path = join(lab.dir, 'api.sock');
  rmSync(path, { force: true });
  const open = new Set<Socket>();
  const bridge = createServer((c) => {
    open.add(c);
    c.on('close', () => open.delete(c));
    pipe(c, connect(apiPort, '127.0.0.1'));
  });
  await new Promise<void>((resolve) => bridge.listen(path, resolve));
  const code = `const net = require('node:net'); net.createServer((c) => { const u = net.connect(${JSON.stringify(path)}); c.pipe(u).pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); }).listen(${RELAY_PORT}, '127.0.0.1')`;
  const relay = spawn('ip', ['netns', 'exec', lab.ns('ws'), process.execPath, '-e', code], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  while (lab.exec('ws', ['nc', '-z', '127.0.0.1', `${RELAY_PORT}`]).code !== 0) {
    if (Date.now() > deadline) throw new Error('lab: the API relay did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    server: `https://127.0.0.1:${RELAY_PORT}`,
    close: async () => {
      relay.kill('SIGKILL');
      for (const c of open) c.destroy();
      await new Promise<void>((resolve) => bridge.close(() => resolve()));
      rmSync(path, { force: true });
    },
  };
}
