// Every tool of `kdebug mcp`, called by the SDK's client over stdio against the built CLI and the
// bundled snapshots: its result is the command's own JSON (compared with `kdebug ... -o json`),
// valid against the published schema, with a summary; bad input is a one-line error.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { kdebug, ROOT } from '../support/cli.js';
import { assertMatchesSchema } from '../support/schema.js';
import { startServer, textOf, type Server } from './client.js';
import { MCP_TOOLS } from '../support/mcp-tools.js';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DEMO = `${ROOT}/snapshots/nginx-svc`;
const NODE = 'vm-12-7-centos';

/** The CLI's own commands, as commander knows them (cli.ts without running it). */
async function program(): Promise<Command> {
  process.env['KDEBUG_NO_MAIN'] = '1';
  try {
    const { buildProgram } = await import('../../src/cli.js');
    return buildProgram(() => undefined);
  } finally {
    delete process.env['KDEBUG_NO_MAIN']; // the CLIs this test starts must run
  }
}

const flagsOf = (c: Command) => c.options.map((o) => o.long!.replace(/^--(no-)?/, ''));

describe('kdebug mcp tools (SDK client, stdio, bundled snapshots)', () => {
  let server: Server;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await server.client.callTool({ name, arguments: args })) as CallToolResult;
  /** A tool's result: not an error, its JSON valid, and the same as the command's -o json. */
  const same = async (name: string, args: Record<string, unknown>, cli: string[]) => {
    const r = await call(name, args);
    assert.ok(!r.isError, textOf(r));
    assertMatchesSchema(r.structuredContent, `the ${name} tool`);
    const printed = kdebug([...cli, '-o', 'json']);
    assert.ok(printed.stdout, `kdebug ${cli.join(' ')}: ${printed.stderr}`);
    assert.deepEqual(
      r.structuredContent,
      JSON.parse(printed.stdout),
      `${name} differs from kdebug ${cli.join(' ')}`,
    );
    assert.ok(textOf(r).length > 0, `${name}: no summary`);
    return r;
  };

  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it("lists the tools, each input named as its command's flags, each output with its schema", async () => {
    const { tools } = await server.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.deepEqual([...byName.keys()].sort(), MCP_TOOLS);
    const cli = await program();
    const command = (path: string) =>
      path.split(' ').reduce<Command>((c, w) => c.commands.find((x) => x.name() === w)!, cli);
    const global = flagsOf(cli);
    const mirrors: Record<string, [string, string[]]> = {
      svc: ['svc', ['name']],
      rules: ['rules', []],
      rules_search: ['rules', []],
      expect: ['expect', []],
      drift: ['drift', []],
      trace: ['trace', []],
      snapshot_save: ['snapshot save', ['dir']],
    };
    for (const [tool, [path, args]] of Object.entries(mirrors)) {
      const inputs = Object.keys(byName.get(tool)!.inputSchema.properties ?? {});
      const flags = [...flagsOf(command(path)), ...global, ...args];
      for (const i of inputs)
        assert.ok(flags.includes(i), `${tool}: input ${i} is no flag of kdebug ${path}`);
    }
    const schemaOf = {
      svc: 'report.v2',
      rules: 'rules.v2',
      rules_search: 'rules-search.v1',
      expect: 'expect.v1',
      drift: 'drift.v1',
      trace: 'trace.v2',
    };
    for (const [t, schema] of Object.entries(schemaOf))
      assert.equal(
        (byName.get(t)!.outputSchema?.properties as Record<string, { const?: string }>)['$schema']
          ?.const,
        `kdebug/schema/${schema}.json`,
      );
    // no input but the published ones: a client that validates refuses a misspelt one itself
    for (const t of tools) assert.equal(t.inputSchema.additionalProperties, false, t.name);
    // read-only unless started otherwise, and the tools say so
    assert.match(byName.get('svc')!.description!, /never creates a debug Pod/);
    assert.equal(byName.get('svc')!.annotations?.readOnlyHint, true);
    assert.match(byName.get('snapshot_save')!.description!, /started without one: it refuses/);
  });

  it('svc: the report of every bundled scenario, as kdebug svc -o json prints it', async () => {
    const r = await call('scenarios', {});
    const { scenarios } = r.structuredContent as {
      scenarios: { name: string; snapshot: string; service: string | null }[];
    };
    assert.ok(scenarios.length >= 13, textOf(r));
    assert.match(textOf(r), /^selector-typo: a typo in the Service selector/m);
    for (const s of scenarios) {
      const service = s.service ?? 'default/nginx-svc';
      const svc = await same('svc', { name: service, snapshot: s.snapshot }, [
        'svc',
        service,
        '--snapshot',
        s.snapshot,
      ]);
      if (s.name === 'selector-typo')
        assert.match(textOf(svc), /fail at step selector: selector-matches-no-pods/);
      // no name: the Service the snapshot's meta names, as kdebug svc --snapshot DIR diagnoses it
      if (s.service === null) continue;
      await same('svc', { snapshot: s.snapshot }, ['svc', '--snapshot', s.snapshot]);
    }
  });

  it("rules, rules_search, expect, drift and trace: the commands' JSON on the demo", async () => {
    const at = ['--snapshot', DEMO, '--node', NODE];
    const rules = await same('rules', { snapshot: DEMO, node: NODE }, ['rules', ...at]);
    assert.match(textOf(rules), /Service ports/);
    await same('rules_search', { snapshot: DEMO, node: NODE, search: 'nginx' }, [
      'rules',
      ...at,
      '--search',
      'nginx',
    ]);
    await same('drift', { snapshot: DEMO, 'all-nodes': true }, [
      'drift',
      '--snapshot',
      DEMO,
      '--all-nodes',
    ]);
    await same('drift', { snapshot: `${ROOT}/snapshots/stale-endpoint`, node: NODE }, [
      'drift',
      '--snapshot',
      `${ROOT}/snapshots/stale-endpoint`,
      '--node',
      NODE,
    ]);
    const trace = await same(
      'trace',
      { snapshot: DEMO, node: NODE, src: '10.244.0.3', dst: '10.1.190.219:8080' },
      ['trace', ...at, '--src', '10.244.0.3', '--dst', '10.1.190.219:8080'],
    );
    assert.match(textOf(trace), /2 outcome\(s\)/);
    const expect = await call('expect', { snapshot: DEMO, node: NODE, table: 'nat' });
    assertMatchesSchema(expect.structuredContent, 'the expect tool');
    // the document expect -o json prints: the text unwrapped, the node and mode named
    const printed = kdebug(['expect', ...at, '--table', 'nat', '-o', 'json']).stdout;
    assert.deepEqual(expect.structuredContent, JSON.parse(printed));
    assert.equal((expect.structuredContent as { node: string }).node, NODE);
  });

  it("services: the Services of a snapshot's namespace, or of all", async () => {
    const r = await call('services', { snapshot: DEMO });
    const names = (r.structuredContent as { services: { name: string }[] }).services.map(
      (s) => s.name,
    );
    assert.deepEqual(names.sort(), ['kubernetes', 'nginx-svc']);
    const all = await call('services', { snapshot: DEMO, 'all-namespaces': true });
    assert.match(textOf(all), /kube-system\/kube-dns/);
  });

  it('a partial answer says so in its summary: what was not compared, what exit 2 means', async () => {
    // the demo with one node's rules dump left out: that node is not compared, svc is partial
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-mcp-partial-'));
    try {
      cpSync(DEMO, dir, { recursive: true });
      rmSync(join(dir, 'nodes', NODE, 'iptables-save.txt'));
      const drift = await same('drift', { snapshot: dir, 'all-nodes': true }, [
        'drift',
        '--snapshot',
        dir,
        '--all-nodes',
      ]);
      assert.match(textOf(drift), new RegExp(`1 not compared \\(${NODE}: `));
      assert.match(textOf(drift), /exit code 2: kdebug could not do all of its job/);
      assert.doesNotMatch(textOf(drift), /a problem was found/);
      const svc = await same('svc', { name: 'nginx-svc', snapshot: dir }, [
        'svc',
        'nginx-svc',
        '--snapshot',
        dir,
      ]);
      assert.equal((svc.structuredContent as { verdict: string }).verdict, 'partial');
      assert.match(textOf(svc), /\npartial: /);
      assert.doesNotMatch(textOf(svc), /none failing$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("scenarios: the text names each one's snapshot directory, which svc takes as it is", async () => {
    const text = textOf(await call('scenarios', {}));
    const dir = /^selector-typo: .*\n {2}snapshot: (.+)$/m.exec(text)?.[1];
    assert.ok(dir, text);
    const r = await call('svc', { name: 'nginx-svc', snapshot: dir });
    assert.ok(!r.isError, textOf(r));
    assert.match(textOf(r), /selector-matches-no-pods/);
  });

  it('svc takes the node choice and -A as the command does', async () => {
    const r = await call('svc', { name: 'nginx-svc', 'all-namespaces': true, snapshot: DEMO });
    assert.ok(!r.isError, textOf(r));
    assert.equal(
      (r.structuredContent as { target: { namespace: string } }).target.namespace,
      'default',
    );
    // as the command line: the node choice is for live reads, refused with a snapshot
    const nodes = await call('svc', { name: 'nginx-svc', snapshot: DEMO, nodes: NODE });
    assert.equal(nodes.isError, true);
    assert.match(
      textOf(nodes),
      /^kdebug: --nodes, --all-nodes, --max-nodes.* are for reading nodes live/,
    );
  });

  it('bad input: one line that says what is wrong, and the server goes on', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'trace',
        { snapshot: DEMO, dst: 'nowhere' },
        /^kdebug: give the destination as --dst IP:PORT/,
      ],
      [
        'rules',
        { snapshot: DEMO, node: 'no-such-node' },
        /^kdebug: .*no rules recorded for node "no-such-node"/,
      ],
      ['svc', { name: 'nginx-svc', snapshot: '/nonexistent' }, /^kdebug: .*\/nonexistent/],
      ['svc', {}, /^kdebug: give name: the Service to diagnose \(only a snapshot names one\)$/],
      [
        'drift',
        { snapshot: DEMO, node: NODE, 'all-nodes': true },
        /^kdebug: give --node or --all-nodes, not both$/,
      ],
      [
        'svc',
        { name: 'nginx-svc', via: 'pod' },
        /^kdebug: via "pod" creates a debug Pod: this server was started without --allow-debug-pods$/,
      ],
      [
        'trace',
        { snapshot: DEMO, dst: '10.1.190.219:8080', proto: 'gre' },
        /Input validation error/,
      ],
      // an input the tool does not know is refused, as the command line's unknown option is
      [
        'svc',
        { name: 'nginx-svc', snapshot: DEMO, bogus: 1 },
        /unknown input "bogus": the inputs are name, /,
      ],
      [
        'drift',
        { snapshot: DEMO, allNodes: true },
        /unknown input "allNodes" \(did you mean "all-nodes"\?\)/,
      ],
      ['scenarios', { all: true }, /unknown input "all": the inputs are none/],
      [
        'snapshot_save',
        { dir: 'x', service: 'nginx-svc' },
        /^kdebug: this server saves no snapshots: start it with kdebug mcp --snapshot-dir DIR/,
      ],
    ];
    for (const [tool, args, said] of cases) {
      const r = await call(tool, args);
      assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}: ${textOf(r)}`);
      assert.match(textOf(r), said);
      assert.ok(!textOf(r).includes('\n'), textOf(r));
    }
    assert.ok(!(await call('scenarios', {})).isError);
  });

  it('kdebug mcp refuses a contradiction in one line, and ends when its client closes stdin', () => {
    for (const [args, said] of [
      [['--via', 'pod'], 'kdebug: --via pod creates debug Pods: give --allow-debug-pods too\n'],
      [
        ['--snapshot-dir', '/nonexistent'],
        'kdebug: --snapshot-dir /nonexistent: not a directory\n',
      ],
      [['-o', 'json'], 'kdebug: mcp speaks JSON-RPC on stdio: -o does not apply\n'],
    ] as const) {
      const r = kdebug(['mcp', ...args]);
      assert.deepEqual([r.code, r.stderr], [2, said]);
    }
    // (stdin is empty here: the server starts, reads its end and leaves)
    const r = kdebug(['mcp']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
  });

  it('progress: a call with a progress token hears how the run goes', async () => {
    const heard: string[] = [];
    await server.client.callTool(
      { name: 'svc', arguments: { name: 'nginx-svc', snapshot: DEMO } },
      undefined,
      {
        onprogress: (p) => heard.push(p.message ?? ''),
      },
    );
    assert.ok(heard.includes('svc nginx-svc: started'), heard.join('\n'));
  });
});
