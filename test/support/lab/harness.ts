// What lab tests share: skip loudly when the lab cannot run here (fail instead with CI=true),
// run kdebug's SSH transport from the workstation namespace, and read the host's own network
// state to prove the lab left it alone.
import { spawnSync } from 'node:child_process';
import type { NodeResult } from '../../../src/cluster/cluster.js';
import { labUnavailable, type Lab } from './lab.js';
import type { WsRequest } from './ws-run.js';
import { skipWithout } from '../skip.js';

/** `describe(name, labSuite(), ...)`: skipped with the reason locally, never skipped in CI. */
export function labSuite(): { skip?: string } {
  const why = labUnavailable();
  if (!why || process.env['CI'] === 'true') return {}; // in CI, Lab.up fails with the reason
  return skipWithout(
    `lab unavailable: ${why} (run as root with the tools installed; with CI=true this fails)`,
  );
}

/** First thing in a lab suite's before(): in CI, a missing prerequisite fails with its reason. */
export function requireLab(): void {
  const why = labUnavailable();
  if (why)
    throw new Error(`lab unavailable: ${why} (with CI=true a missing prerequisite is a failure)`);
}

export type WsReply =
  | {
      ok: true;
      ms: number;
      via?: string;
      results?: NodeResult[];
      text?: string;
      stem?: string;
      notes?: string[];
    }
  | { ok: false; reason: string; message: string };

/** Runs one request through kdebug's SSH code inside the lab's workstation namespace. */
export async function wsRun(lab: Lab, req: WsRequest): Promise<WsReply> {
  const r = await lab.execAsync('ws', [
    process.execPath,
    '--import',
    'tsx',
    'test/support/lab/ws-run.ts',
    JSON.stringify(req),
  ]);
  try {
    return JSON.parse(r.stdout) as WsReply;
  } catch {
    throw new Error(`ws-run printed no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  }
}

/** The host namespace's interfaces, routes and rules (counters and dates removed). */
export function hostNetworkState(): string {
  const out = (cmd: string, ...args: string[]) =>
    spawnSync(cmd, args, { encoding: 'utf8' }).stdout ?? '';
  const rules = (save: string) =>
    out(save)
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .map((l) => l.replace(/\[\d+:\d+\]/, ''))
      .join('\n');
  return [
    out('ip', '-o', 'link', 'show'),
    out('ip', 'route', 'show', 'table', 'all'),
    rules('iptables-nft-save'),
    rules('iptables-legacy-save'),
  ]
    .join('\n----\n')
    .replace(/\s+link\/\S+ \S+ brd \S+/g, '')
    .replace(/\\\s+altname \S+/g, '');
}
