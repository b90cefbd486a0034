// The big rules dumps of a snapshot parsed on worker threads, in parallel with the main thread's
// reading of the objects: one Service's answer on a 10,000-Service cluster waits for the slower
// of the two, not for both. Small dumps, or no worker file (tests run the sources), parse inline.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DUMP_STEMS } from '../core/facts/facts.js';
import {
  IptablesParseError,
  NoRulesError,
  rulesetFromState,
  type Ruleset,
} from '../core/dataplane/iptables/read/parse.js';
import type { WorkerAnswer } from './parse-worker.js';
import { entryAt, isNodeName, LIMITS } from './snapshot/files.js';

/** Below this a worker's start (30-50 ms) costs more than it saves. */
const WORKER_BYTES = 4 * 1024 * 1024;

/** Each big dump's rule set or its parse error, by its snapshot source ("nodes/N/iptables-save.txt"). */
export type ParsedDumps = Map<string, Ruleset | IptablesParseError | NoRulesError>;

/** Starts a worker for each big dump under `dir`/nodes; settles when all have answered. Only
 * what readSnapshot reads: directories and regular files (no link followed) under node names;
 * anything else is left to readSnapshot, which refuses it with its reason. */
export function parseDumpsAside(
  dir: string,
  worker: URL,
  minBytes = WORKER_BYTES,
): Promise<ParsedDumps> {
  const out: ParsedDumps = new Map();
  const nodes = join(dir, 'nodes');
  if (!existsSync(worker) || !isDirectory(nodes)) return Promise.resolve(out);
  const jobs: Promise<void>[] = [];
  for (const node of readdirSync(nodes).filter(isNodeName)) {
    if (!isDirectory(join(nodes, node))) continue;
    for (const stem of DUMP_STEMS) {
      const source = `nodes/${node}/${stem}.txt`;
      const path = join(dir, source);
      const s = safeEntry(path);
      if (!s?.isFile() || s.size < minBytes || s.size > LIMITS.output) continue;
      jobs.push(
        parseAside(worker, path, source).then((r) => {
          if (r) out.set(source, r);
        }),
      );
    }
  }
  return Promise.all(jobs).then(() => out);
}

/** The entry as it is (a link not followed); undefined when absent or unreadable. */
function safeEntry(path: string) {
  try {
    return entryAt(path);
  } catch {
    return undefined;
  }
}

const isDirectory = (path: string) => safeEntry(path)?.isDirectory() === true;

/** One dump on one worker; undefined when the worker fails (the dump is then parsed inline). */
function parseAside(worker: URL, path: string, file: string) {
  return new Promise<Ruleset | IptablesParseError | NoRulesError | undefined>((done) => {
    const w = new Worker(worker, { workerData: { path, file } });
    w.once('message', (a: WorkerAnswer) => {
      if ('state' in a) done(rulesetFromState(a.state));
      else if ('parseError' in a) {
        const e = a.parseError;
        done(new IptablesParseError(e.file, e.line, e.lineText, e.reason));
      } else if ('noRules' in a) done(new NoRulesError(a.noRules.file, a.noRules.foreign));
      else done(undefined);
      void w.terminate();
    });
    w.once('error', () => done(undefined));
  });
}
