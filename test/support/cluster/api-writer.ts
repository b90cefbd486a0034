// Many writes to the lab's API server at once, run inside the client namespace as the admin:
// kubectl sends one request at a time, and thousands of simulated objects want dozens in flight.
// Reads requests as JSON lines ({"method","path","type","body"}) on stdin, "wait" between two
// lines to finish the writes before it first; exits 1 on any error.
//   ip netns exec kdc.ws node --import tsx api-writer.ts https://192.0.2.10:6443 PKI_DIR [N]
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { alive } from '../process.js';

export interface ApiWrite {
  method: 'POST' | 'PATCH';
  path: string;
  /** The body's media type (default application/json). */
  type?: string;
  body: unknown;
}

const [server, pki, n] = process.argv.slice(2);
// the writes are for the process that asked (ClusterClient.apiWrites): once it has ended, however
// it ended, no more are made (the lab it wrote to is being torn down)
const owner = Number(process.env['KDEBUG_LAB_WRITES_FOR']);
setInterval(() => owner > 0 && !alive(owner) && process.exit(1), 500).unref();
const inFlight = Number(n ?? 32);
const agent = new Agent({
  keepAlive: true,
  maxSockets: inFlight,
  ca: readFileSync(join(pki!, 'ca.crt')),
  cert: readFileSync(join(pki!, 'admin.crt')),
  key: readFileSync(join(pki!, 'admin.key')),
});

function send(w: ApiWrite): Promise<string | undefined> {
  const body = JSON.stringify(w.body);
  return new Promise((done) => {
    const req = request(
      new URL(w.path, server),
      {
        agent,
        method: w.method,
        headers: { 'content-type': w.type ?? 'application/json', accept: 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d));
        res.on('end', () =>
          done(
            res.statusCode! < 300 ? undefined : `${w.method} ${w.path}: ${res.statusCode} ${text}`,
          ),
        );
      },
    );
    req.on('error', (e) => done(`${w.method} ${w.path}: ${e.message}`));
    req.end(body);
  });
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const lines = input
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as ApiWrite | 'wait');
const errors: string[] = [];
let writes = 0;
/** A fixed number of workers, each taking the next write, until the group is done. */
async function group(ws: ApiWrite[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ws.length) {
        const e = await send(ws[next++]!);
        if (e) errors.push(e);
      }
    }),
  );
}
let pending: ApiWrite[] = [];
for (const l of [...lines, 'wait' as const]) {
  if (l !== 'wait') {
    pending.push(l);
    continue;
  }
  writes += pending.length;
  await group(pending);
  pending = [];
}
agent.destroy();
if (errors.length > 0) {
  console.error(`${errors.length} of ${writes} writes failed:\n${errors.slice(0, 5).join('\n')}`);
  process.exit(1);
}
