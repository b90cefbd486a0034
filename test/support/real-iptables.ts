// Tests that load rules into the real iptables, in a network namespace of their own: what they
// need, and a clear skip (or, with CI=true, a failure) when it is not there.
import { spawnSync } from 'node:child_process';

/** Why real-iptables tests cannot run here ('' when they can); throws in CI when they cannot. */
export function realIptablesMissing(): string {
  const root = process.getuid?.() === 0;
  const tools =
    spawnSync('sh', [
      '-c',
      'command -v ip && command -v iptables-restore && command -v iptables-save',
    ]).status === 0;
  const missing = !root ? 'not root' : !tools ? 'ip or iptables missing' : '';
  if (missing && process.env['CI'] === 'true')
    throw new Error(`real-iptables tests cannot run in CI: ${missing}`);
  return missing;
}
