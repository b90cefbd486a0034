// `kdebug mcp` driven by the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, --cli mode),
// a client that is not ours, over stdio on the bundled snapshots. What its run checks, and what
// makes it exit 1: the initialize handshake (the result's shape and a protocol version the SDK
// supports), tools/list's result shape, tools/call's result shape, and each call's
// structuredContent against the outputSchema the tool declared in tools/list. (The conformance
// package, @modelcontextprotocol/conformance, tests servers only over HTTP, by --url.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { hermetic, kdebug, ROOT } from '../support/cli.js';
import { assertMatchesSchema } from '../support/schema.js';
import { skipWithout } from '../support/skip.js';
import { textOf } from './client.js';
import { MCP_TOOLS } from '../support/mcp-tools.js';

const DEMO = join(ROOT, 'snapshots', 'nginx-svc');

/** The inspector CLI's package directory, where npm installed it (a devDependency). */
const inspector = (() => {
  try {
    const r = createRequire(import.meta.url);
    return dirname(r.resolve('@modelcontextprotocol/inspector-cli/package.json'));
  } catch {
    return undefined;
  }
})();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `mcp-inspector-cli --cli SERVER... --method METHOD ...`: its exit code and what it printed. */
function inspect(server: string[], method: string[]): Run {
  const r = spawnSync(
    process.execPath,
    [join(inspector!, 'build', 'cli.js'), '--cli', ...server, '--method', ...method],
    {
      // it finds its own package.json by ../package.json from the working directory
      cwd: join(inspector!, 'build'),
      encoding: 'utf8',
      env: { ...hermetic(), NO_COLOR: '1' },
      timeout: 60_000,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const kdebugMcp = [process.execPath, join(ROOT, 'bin', 'kdebug.js'), 'mcp'];

/** A passing run: exit 0, and the result it printed. */
function result<T>(r: Run): T {
  assert.equal(r.code, 0, `inspector exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A call that the inspector accepted, and that the tool did not answer with an error. */
function called(tool: string, args: string[] = []): CallToolResult {
  const method = [
    'tools/call',
    '--tool-name',
    tool,
    ...(args.length ? ['--tool-arg', ...args] : []),
  ];
  const r = result<CallToolResult>(inspect(kdebugMcp, method));
  assert.ok(!r.isError, `${tool}: ${textOf(r)}`);
  return r;
}

/**
 * A stdio server that relays kdebug mcp, and breaks one thing in what it answers: the protocol
 * version of its initialize result, or the `status` its svc result must have.
 */
function breaking(how: 'version' | 'schema'): string[] {
  const file = join(mkdtempSync(join(tmpdir(), 'kdebug-mcp-')), 'relay.mjs');
  writeFileSync(
    file,
    `import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
const child = spawn(process.execPath, ${JSON.stringify(kdebugMcp.slice(1))}, {
  stdio: ['pipe', 'pipe', 'inherit'],
});
process.stdin.pipe(child.stdin);
createInterface({ input: child.stdout }).on('line', (line) => {
  const m = JSON.parse(line);
  if (${JSON.stringify(how)} === 'version' && m.result?.protocolVersion)
    m.result.protocolVersion = '1999-01-01';
  if (${JSON.stringify(how)} === 'schema' && m.result?.structuredContent)
    delete m.result.structuredContent.status;
  process.stdout.write(JSON.stringify(m) + '\\n');
});
child.on('exit', (code) => process.exit(code ?? 1));
`,
  );
  return [process.execPath, file];
}

describe(
  'kdebug mcp under the MCP Inspector CLI (stdio, bundled snapshots)',
  skipWithout(
    inspector === undefined
      ? 'no @modelcontextprotocol/inspector-cli: run npm ci'
      : existsSync(join(ROOT, 'dist', 'cli.js'))
        ? ''
        : 'no build: run node scripts/build.js',
  ),
  () => {
    it('tools/list: the nine tools, each described, each input an object schema', () => {
      const { tools } = result<ListToolsResult>(inspect(kdebugMcp, ['tools/list']));
      assert.deepEqual(tools.map((t) => t.name).sort(), MCP_TOOLS);
      for (const t of tools) {
        assert.ok(t.description, `${t.name}: no description`);
        assert.equal(t.inputSchema.type, 'object', t.name);
      }
      // the calls below are checked against these
      for (const t of ['scenarios', 'svc'])
        assert.ok(tools.find((x) => x.name === t)!.outputSchema, `${t}: no outputSchema`);
    });

    it('tools/call scenarios: the bundled snapshots, each a directory of snapshots/', () => {
      const r = called('scenarios');
      const { scenarios } = r.structuredContent as {
        scenarios: { name: string; snapshot: string; summary: string }[];
      };
      const names = scenarios.map((s) => s.name);
      assert.ok(names.includes('nginx-svc') && names.includes('selector-typo'), names.join(' '));
      for (const s of scenarios) {
        assert.equal(s.snapshot, join(ROOT, 'snapshots', s.name));
        assert.ok(statSync(s.snapshot).isDirectory(), s.snapshot);
      }
      // each with the directory the other tools take as `snapshot`
      assert.equal(
        textOf(r),
        scenarios.map((s) => `${s.name}: ${s.summary}\n  snapshot: ${s.snapshot}`).join('\n'),
      );
    });

    it('tools/call svc on snapshots/nginx-svc: the report kdebug svc -o json prints', () => {
      const r = called('svc', ['name=default/nginx-svc', `snapshot=${DEMO}`]);
      assertMatchesSchema(r.structuredContent, 'the svc tool under the inspector');
      const printed = kdebug(['svc', 'default/nginx-svc', '--snapshot', DEMO, '-o', 'json']);
      assert.deepEqual(r.structuredContent, JSON.parse(printed.stdout));
      assert.equal((r.structuredContent as { status: string }).status, 'pass');
      assert.match(textOf(r), /^default\/nginx-svc: pass; 10 steps, none failing/);
    });

    it('fails a server that breaks the protocol: its version, or a result against its schema', () => {
      const version = inspect(breaking('version'), ['tools/list']);
      assert.equal(version.code, 1, version.stdout);
      assert.match(version.stderr, /protocol version is not supported: 1999-01-01/);
      const schema = inspect(breaking('schema'), [
        'tools/call',
        '--tool-name',
        'svc',
        '--tool-arg',
        'name=default/nginx-svc',
        `snapshot=${DEMO}`,
      ]);
      assert.equal(schema.code, 1, schema.stdout);
      assert.match(schema.stderr, /Structured content does not match the tool's output schema/);
      // and the same relay, breaking nothing the call sees, passes
      result(inspect(breaking('schema'), ['tools/list']));
    });
  },
);
