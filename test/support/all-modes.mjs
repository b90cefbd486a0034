// Loaded before every test file (scripts/test.js): unit tests build Analyses directly, without a
// command's load stage, so every mode's code is loaded first. The built CLI's tests run each
// command's own stage (test/tui/lazy-load.test.ts: what an iptables run leaves unloaded). Not in
// a worker a test starts from the built files: it has no TypeScript loader.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const { EVERY_MODE, loadModes } = await import('../../src/core/dataplane/modes.js');
  await loadModes(EVERY_MODE);
}
