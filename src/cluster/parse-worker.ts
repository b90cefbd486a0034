// A worker thread that reads and parses one big rules dump while the main thread reads and types
// the API objects; the parsed dump comes back as transferable data (core/dataplane/iptables/read/ruleset.ts
// RulesetState), a parse error as its fields.
import { parentPort, workerData } from 'node:worker_threads';
import {
  IptablesParseError,
  NoRulesError,
  parseIptables,
  rulesetState,
} from '../core/dataplane/iptables/read/parse.js';
import { inputBytes } from '../core/facts/input-text.js';
import { LIMITS, readRegular } from './snapshot/files.js';

export type WorkerAnswer =
  | { state: ReturnType<typeof rulesetState> }
  | { parseError: { file: string; line: number; lineText: string; reason: string } }
  | { noRules: { file: string; foreign: NoRulesError['foreign'] } }
  | { failed: string };

const { path, file } = workerData as { path: string; file: string };
let answer: WorkerAnswer;
let transfer: ArrayBuffer[] = [];
try {
  // the same checked read as readSnapshot's: a regular file, no link followed, within its cap
  const read = readRegular(path, LIMITS.output);
  if (!read) throw new Error(`${file}: removed`);
  // a byte order mark read as readSnapshot's inputText reads it: UTF-8 without it, UTF-16 decoded
  const text = inputBytes(read).bytes;
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  // the file's own memory, so it can move to the main thread (a small read shares a pool)
  const buf =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? bytes
      : Buffer.from(bytes);
  const state = rulesetState(parseIptables(buf, { file, noun: 'dump' }), buf);
  answer = { state };
  const buffers = new Set<ArrayBuffer>([buf.buffer as ArrayBuffer]);
  for (const t of state.tables)
    for (const a of [...t.rules.chunks, ...t.rules.pairChunks, t.chains.slots, t.chains.records])
      buffers.add(a.buffer as ArrayBuffer);
  transfer = [...buffers];
} catch (e) {
  if (e instanceof IptablesParseError)
    answer = { parseError: { file: e.file, line: e.line, lineText: e.lineText, reason: e.reason } };
  else if (e instanceof NoRulesError) answer = { noRules: { file: e.file, foreign: e.foreign } };
  else answer = { failed: (e as Error).message };
}
parentPort!.postMessage(answer, transfer);
