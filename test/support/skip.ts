// A suite that needs what this machine lacks is skipped through the runner's own skip, and
// counted: node does not count the tests of a skipped suite, so one skipped test stands for it.
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

/** `describe(name, skipWithout(why), ...)`, where why is '' when the suite can run here. */
export function skipWithout(why: string): { skip?: string } {
  if (!why) return {};
  it(`needs what this machine lacks: ${why}`, { skip: why }, () => {});
  return { skip: why };
}

/** Whether a command is on the PATH (or in /usr/sbin). */
export function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name} || test -x /usr/sbin/${name}`]).status === 0;
}
