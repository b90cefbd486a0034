// The lab's reaper: `up` starts it detached, in its own session (no signal meant for the process
// that made the lab reaches it), with a pipe on stdin that only that process holds. The pipe ends
// when that process does, however it ends (SIGTERM from `timeout`, Ctrl-C, SIGHUP, SIGKILL, a
// throw past its `down`): the reaper then tears the lab down, unless `down` was run already or
// another process's lab has taken .cluster/ since.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIR, down } from './cluster.js';

const owner = Number(process.argv[2]);
for await (const chunk of process.stdin) void chunk; // nothing is written: this waits for the end
let labOwner: number | undefined;
try {
  labOwner = (JSON.parse(readFileSync(join(DIR, 'pids.json'), 'utf8')) as { owner?: number }).owner;
} catch {
  // no lab left: its owner ran `down`
}
if (labOwner === owner) down();
