// Every JSON document kdebug prints for the bundled snapshots: each command on each Service, node
// and address they hold, run in this process as the MCP server runs them (commands/common/io.ts inRun).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterView } from '../../src/core/kube/objects.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { driftCommand } from '../../src/commands/drift.js';
import { expectCommand } from '../../src/commands/expect.js';
import { inRun, type GlobalOptions } from '../../src/commands/common/io.js';
import { rulesCommand } from '../../src/commands/rules.js';
import { svcCommand } from '../../src/commands/svc.js';
import { traceCommand } from '../../src/commands/trace.js';
import { ROOT } from './cli.js';

export const SNAPSHOTS = join(ROOT, 'snapshots');

export interface Output {
  /** The command as typed, for a failure's message. */
  command: string;
  doc: unknown;
}

const g: GlobalOptions = { output: 'json', color: false };

/** The command's JSON, as it would print it. */
async function json(f: () => Promise<number>): Promise<unknown> {
  const out: string[] = [];
  const run = {
    write: (t: string) => out.push(t),
    tell: () => {},
    release: new Set<() => Promise<void>>(),
    podHolders: new Set<never>(),
  };
  await inRun(run, f);
  return JSON.parse(out.join(''));
}

export async function bundledOutputs(): Promise<Output[]> {
  const outputs: Output[] = [];
  const add = async (command: string, f: () => Promise<number>) =>
    outputs.push({ command, doc: await json(f) });
  for (const name of readdirSync(SNAPSHOTS).sort()) {
    const snapshot = join(SNAPSHOTS, name);
    const view = clusterView((await readSnapshot(snapshot)).objects);
    const at = `--snapshot snapshots/${name}`;
    for (const s of [...view.services, { namespace: 'default', name: 'no-such-service' }])
      await add(`svc ${s.namespace}/${s.name} ${at}`, () =>
        svcCommand(`${s.namespace}/${s.name}`, { snapshot }, g),
      );
    await add(`drift --all-nodes ${at}`, () => driftCommand({ snapshot, allNodes: true }, g));
    // a source of each family: a Pod's address (the dual-stack snapshot has IPv6 ones)
    const podIPs = view.pods.flatMap((p) => p.podIPs);
    const source = (ip: string) => podIPs.find((p) => p.includes(':') === ip.includes(':'));
    for (const node of readdirSync(join(snapshot, 'nodes')).sort()) {
      await add(`expect --node ${node} ${at}`, () =>
        expectCommand({ snapshot, node, randomFully: true }, g),
      );
      await add(`rules --node ${node} ${at}`, () => rulesCommand({ snapshot, node }, g));
      await add(`rules --node ${node} --search dns ${at}`, () =>
        rulesCommand({ snapshot, node, search: 'dns' }, g),
      );
      for (const s of view.services)
        for (const ip of s.clusterIPs)
          for (const p of s.ports) {
            const src = source(ip);
            if (p.port === undefined || src === undefined) continue;
            const proto = p.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
            const dst = ip.includes(':') ? `[${ip}]:${p.port}` : `${ip}:${p.port}`;
            await add(`trace --node ${node} --src ${src} --dst ${dst} --proto ${proto} ${at}`, () =>
              traceCommand({ snapshot, node, src, dst, proto }, g),
            );
          }
    }
  }
  // the dumps pasted as files: nftables' table, iptables -S of one table, a whole payload
  const fixtures = join(ROOT, 'test', 'fixtures');
  const readings = JSON.parse(
    readFileSync(join(fixtures, 'cilium', 'pastes', 'readings.json'), 'utf8'),
  ) as Record<string, { frontends?: unknown[] }>;
  const files: [string, string?][] = [
    ['nft/kube-proxy-1.37-node-a.json'],
    ['nft/kube-proxy-1.37-node-a.txt'],
    ['seed-nat-S.txt', 'nat'],
    ['seed-filter-S.txt', 'filter'],
    ['kube-proxy-overall-payload.txt'],
    // every real Cilium listing: each of the agent's forms (not the outputs its reading says
    // kdebug refuses by name: the agent's status, a YAML dump)
    ...readdirSync(join(fixtures, 'cilium', 'pastes'))
      .filter((f) => f.endsWith('.txt') && readings[f.slice(0, -4)]?.frontends !== undefined)
      .map((f): [string] => [`cilium/pastes/${f}`]),
  ];
  for (const [file, table] of files)
    await add(`rules --file test/fixtures/${file}`, () =>
      rulesCommand({ file: join(fixtures, file), table }, g),
    );
  return outputs;
}
