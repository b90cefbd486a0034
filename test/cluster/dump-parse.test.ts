// Dumps parsed on a worker thread (the built dist/parse-worker.js) come back as the same rule
// set the main thread would have parsed, and a bad line as the same FILE:LINE error.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseDumpsAside } from '../../src/cluster/dump-parse.js';
import {
  IptablesParseError,
  parseIptables,
  type Ruleset,
} from '../../src/core/dataplane/iptables/read/parse.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { clusterDump } from '../bench/cluster-dump.js';
import { ROOT } from '../support/cli.js';

const WORKER = new URL('dist/parse-worker.js', `file://${ROOT}/`);
const dir = mkdtempSync(join(tmpdir(), 'kdebug-aside-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const dump = clusterDump({ services: 300, endpoints: 3 });
const write = (node: string, text: string | Buffer) => {
  mkdirSync(join(dir, 'nodes', node), { recursive: true });
  writeFileSync(join(dir, 'nodes', node, 'iptables-save.txt'), text);
};
write('node-a', dump);
write('node-b', dump.replace('-A KUBE-SERVICES', '-A KUBE-SERVICES --bogus'));
// as Windows saves them: Notepad's UTF-8 with a byte order mark, PowerShell 5's UTF-16LE
write('node-c', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(dump)]));
write('node-d', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(dump, 'utf16le')]));

/** Everything a reader of a rule set sees: each table's chains, rules, lines and texts. */
const shape = (rs: Ruleset) => ({
  format: rs.format,
  lines: rs.lineCount,
  warnings: rs.warnings,
  tables: rs.tables.map((t) => ({
    name: t.name,
    chains: t.chains.map((c) => ({
      name: c.name,
      policy: c.policy,
      line: c.line,
      rules: c.ruleIds.map((id) => `${t.line(id)} ${t.text(id)}`),
    })),
  })),
});

describe('dumps parsed aside', () => {
  it('gives the same rule set and trees as parsing inline, and the same parse error', async (t) => {
    if (!existsSync(WORKER)) return t.skip('dist/parse-worker.js is built by npm test');
    const parsed = await parseDumpsAside(dir, WORKER, 0);
    const a = parsed.get('nodes/node-a/iptables-save.txt');
    assert.ok(a && !(a instanceof Error), 'node-a parsed');
    const inline = parseIptables(dump, { file: 'nodes/node-a/iptables-save.txt' });
    assert.deepEqual(shape(a), shape(inline));
    assert.deepEqual(buildServiceTrees(a), buildServiceTrees(inline));
    const b = parsed.get('nodes/node-b/iptables-save.txt');
    assert.ok(b instanceof IptablesParseError);
    assert.throws(
      () =>
        parseIptables(dump.replace('-A KUBE-SERVICES', '-A KUBE-SERVICES --bogus'), {
          file: 'nodes/node-b/iptables-save.txt',
        }),
      (e: Error) => e.message === b.message,
    );
  });

  it('reads a dump with a byte order mark as the main thread does: UTF-8 without it, UTF-16 decoded', async (t) => {
    if (!existsSync(WORKER)) return t.skip('dist/parse-worker.js is built by npm test');
    const parsed = await parseDumpsAside(dir, WORKER, 0);
    for (const node of ['node-c', 'node-d']) {
      const file = `nodes/${node}/iptables-save.txt`;
      const rs = parsed.get(file);
      assert.ok(rs && !(rs instanceof Error), `${node} parsed`);
      assert.deepEqual(shape(rs), shape(parseIptables(dump, { file })));
    }
  });

  it('leaves small dumps to the main thread', async (t) => {
    if (!existsSync(WORKER)) return t.skip('dist/parse-worker.js is built by npm test');
    assert.equal((await parseDumpsAside(dir, WORKER)).size, 0);
  });
});
