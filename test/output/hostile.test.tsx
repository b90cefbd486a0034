// Hostile data, fuzzed: the demo snapshot's real objects and node outputs (dumps, probes) with
// escape sequences, C1 controls, BIDI overrides, NUL bytes, invalid UTF-8, 1 MB strings, shell
// and fake prompts put into random strings, and fields of the wrong type. Every mutation must
// diagnose without a crash in bounded time, print text with no control character but newlines
// and of bounded size, print JSON that parses and holds no raw C1/BIDI character, and draw TUI
// frames with none either. A fixed seed per case, so a failure replays; the case is named.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { reportJson } from '../../src/output/json.js';
import { reportText } from '../../src/output/text.js';
import { App } from '../../src/tui/App.js';
import { kdebug } from '../support/cli.js';
import { press, render, settle } from '../tui/harness.js';
import { allModes } from '../support/modes.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };
const demo = JSON.parse(
  JSON.stringify(
    await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname),
  ),
) as Facts;

const PAYLOADS = [
  '\x1b]0;owned\x07', // retitle the window
  '\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\', // a hyperlink
  '\x1b[2J\x1b[H', // clear the screen
  '\x1b[?1049h', // the alternate screen
  '\x9b31m', // C1 CSI
  '\u202egnp.exe', // BIDI override
  '\u2066x\u2069', // BIDI isolate
  '\0\0',
  '\ud800', // a lone surrogate: invalid UTF-16, as invalid UTF-8 decodes to U+FFFD
  '\ufffd\ufffd',
  'a\rb\bc',
  '$(touch /tmp/kdebug-pwned)`id`; rm -rf /',
  'root@node-a:~# iptables-save\n',
  'x'.repeat(1 << 20), // 1 MB
];

/** mulberry32: a small PRNG with a seed, so each case replays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Leaf = { parent: Record<string, unknown> | unknown[]; key: string | number };

/** Every string (and string key) inside `v`, as a place to write to. */
function leaves(v: unknown, out: Leaf[] = []): Leaf[] {
  if (Array.isArray(v))
    v.forEach((x, i) => (typeof x === 'string' ? out.push({ parent: v, key: i }) : leaves(x, out)));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (typeof x === 'string') out.push({ parent: v as Record<string, unknown>, key: k });
      else leaves(x, out);
    }
  return out;
}

/** The demo with `n` strings of objects and node outputs made hostile; some fields retyped. */
function mutated(seed: number, n = 12): Facts {
  const r = prng(seed);
  const pick = <T,>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const f = JSON.parse(JSON.stringify(demo)) as Facts;
  const places = leaves(f.objects);
  for (let i = 0; i < n; i++) {
    const { parent, key } = pick(places);
    const cell = parent as Record<string | number, unknown>;
    const s = String(cell[key]);
    const p = pick(PAYLOADS);
    const at = Math.floor(r() * (s.length + 1));
    const roll = r();
    cell[key] =
      roll < 0.1
        ? pick([null, 42, true, [], {}, ['x']]) // the wrong type
        : roll < 0.3
          ? p
          : s.slice(0, at) + p + s.slice(at);
  }
  // a label key, too
  const pod = f.objects.find((o) => o.kind === 'Pod') as KubeObject;
  if (r() < 0.5)
    pod.metadata!.labels = { ...pod.metadata!.labels, [pick(PAYLOADS).slice(0, 64)]: 'v' };
  for (const node of Object.keys(f.nodes)) {
    const outputs = f.nodes[node]!;
    for (const stem of Object.keys(outputs)) {
      if (r() > 0.4) continue;
      const text = outputs[stem]!;
      const at = Math.floor(r() * (text.length + 1));
      const roll = r();
      outputs[stem] =
        roll < 0.2
          ? text.slice(0, at) // cut short
          : roll < 0.35
            ? Buffer.from(text.slice(0, at) + '\xff\xfe\x80' + text.slice(at), 'latin1').toString(
                'utf8',
              )
            : text.slice(0, at) + pick(PAYLOADS) + text.slice(at);
    }
  }
  return f;
}

// nothing a terminal obeys: C0 but newline, DEL, C1, BIDI controls
// eslint-disable-next-line no-control-regex
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const show = (s: string) => JSON.stringify(s.match(RAW)?.[0]);

describe('hostile objects and node outputs, fuzzed', () => {
  const SEEDS = Array.from({ length: 300 }, (_, i) => 1000 + i);

  it('diagnose, text and JSON: no crash, no raw control, bounded size and time', () => {
    for (const seed of SEEDS) {
      const facts = mutated(seed);
      const t0 = performance.now();
      const report = diagnose(facts, TARGET, { code: allModes });
      const text = reportText(report, { width: 80, verbose: true });
      const json = reportJson(report);
      const ms = performance.now() - t0;
      assert.ok(ms < 3000, `seed ${seed}: ${Math.round(ms)} ms`);
      const line = text.split('\n').find((l) => RAW.test(l));
      assert.ok(
        !line,
        `seed ${seed}: text holds ${show(text)} in ${JSON.stringify(line?.slice(0, 300))}`,
      );
      assert.ok(text.length < 400_000, `seed ${seed}: text of ${text.length} characters`);
      assert.ok(!RAW.test(json.replace(/\n/g, '')), `seed ${seed}: JSON holds ${show(json)}`);
      const doc = JSON.parse(json) as { steps: unknown[] };
      assert.equal(doc.steps.length, 10, `seed ${seed}`);
    }
  });

  it('JSON stays exact: a hostile port name comes back unchanged, escaped', () => {
    const facts = JSON.parse(JSON.stringify(demo)) as Facts;
    const name = `http${PAYLOADS.slice(0, 9).join('')}`;
    const svc = facts.objects.find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    )!;
    (svc['spec'] as { ports: { name: string }[] }).ports[0]!.name = name;
    const json = reportJson(diagnose(facts, TARGET, { code: allModes }));
    assert.ok(!RAW.test(json.replace(/\n/g, '')), show(json));
    assert.ok(
      json.includes('\\u001b]0;owned\\u0007') &&
        json.includes('\\u009b31m') &&
        json.includes('\\u202e'),
    );
    const ports = JSON.stringify(JSON.parse(json));
    assert.ok(ports.includes(JSON.stringify(name).slice(1, -1)), 'the exact name, parsed back');
  });

  it('the TUI draws no raw control in any frame, whatever it is fed', async () => {
    for (const seed of SEEDS.slice(0, 8)) {
      const facts = mutated(seed);
      const r = render(
        <App
          start="diag"
          target={TARGET}
          facts={{ facts, code: allModes }}
          load={async () => ({ facts, code: allModes })}
          color={false}
          size={{ columns: 100, rows: 30 }}
        />,
      );
      await settle(30);
      await press(r, 'down', 'down', 'down', 'down', 'down', 'down', 'tab', 'down', 'down');
      for (const f of r.frames)
        assert.ok(!RAW.test(f.replace(/\n/g, '')), `seed ${seed}: frame holds ${show(f)}`);
      r.unmount();
    }
  });

  const tmp = mkdtempSync(join(tmpdir(), 'kdebug-hostile-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('kdebug rules on a hostile dump: a report or one escaped error line, never a raw control', () => {
    for (const seed of SEEDS.slice(0, 8)) {
      const facts = mutated(seed, 0);
      const dump = Object.values(facts.nodes)[0]!['iptables-save']!;
      const file = join(tmp, `dump-${seed}.txt`);
      writeFileSync(file, dump);
      for (const o of ['text', 'json']) {
        const r = kdebug(['rules', '--file', file, '-o', o]);
        assert.ok(r.code === 0 || r.code === 2, `seed ${seed} -o ${o}: exit ${r.code}`);
        assert.ok(
          !RAW.test(r.stdout.replace(/\n/g, '')),
          `seed ${seed}: stdout holds ${show(r.stdout)}`,
        );
        assert.ok(
          !RAW.test(r.stderr.replace(/\n/g, '')),
          `seed ${seed}: stderr holds ${show(r.stderr)}`,
        );
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      }
    }
  });
});
