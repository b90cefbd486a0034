// Start-up pays only for what the run uses: in the build, Ink and React are reached from the CLI
// only through a dynamic import (the TUI), and client-node and ssh2 not even from the TUI's own
// static imports (only live runs load them). Reads dist/ (npm test builds first).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { skipWithout } from '../support/skip.js';

const DIST = new URL('../../dist/', import.meta.url).pathname;
const built = existsSync(join(DIST, 'cli.js'));
if (!built && process.env['CI'] === 'true') throw new Error('no build in dist/');

// strings only each package's code contains
const MARKERS: Record<string, RegExp> = {
  ink: /so Ink tried to import/,
  react: /react\.transitional\.element/,
  'client-node': /loadFromDefault/,
  ssh2: /from ["']ssh2["']|require\(["']ssh2["']\)/,
};

/** Files a module loads before it runs: its static imports, transitively. */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const code = readFileSync(file, 'utf8');
  for (const m of code.matchAll(
    /(?:^|[;\n}])\s*(?:import|export)\s*(?:[\w*${}\s,]+from\s*)?["'](\.[^"']+)["']/g,
  ))
    staticGraph(resolve(dirname(file), m[1]!), seen);
  return seen;
}

const has = (files: Set<string>, marker: RegExp) =>
  [...files].filter((f) => marker.test(readFileSync(f, 'utf8')));

describe(
  'lazy loading in the build',
  skipWithout(built ? '' : 'no build: run node scripts/build.js'),
  () => {
    const chunks = built
      ? readdirSync(join(DIST, 'chunks')).map((f) => join(DIST, 'chunks', f))
      : [];
    const tuiChunk = chunks.find((f) => MARKERS['ink']!.test(readFileSync(f, 'utf8')));

    it('bundles Ink into a chunk of its own', () => assert.ok(tuiChunk, 'no chunk holds Ink'));

    it('text and JSON runs load neither Ink nor React, and each command only its own module', () => {
      const text = readFileSync(join(DIST, 'cli.js'), 'utf8');
      // the command's module, loaded when it runs: svc's, with what it imports up front
      const svc = /import\("\.\/(chunks\/svc-[\w-]+\.js)"\)/.exec(text)?.[1];
      assert.ok(svc, 'cli.js does not load the svc command lazily');
      const cli = staticGraph(join(DIST, 'cli.js'));
      const run = new Set([...cli, ...staticGraph(join(DIST, svc))]);
      assert.deepEqual(has(run, MARKERS['ink']!), []);
      assert.deepEqual(has(run, MARKERS['react']!), []);
      // the TUI comes in its own chunk, imported only when it opens
      assert.ok(has(run, /import\("\.\/run-[\w-]+\.js"\)/).length > 0, 'no lazy TUI import');
      // the other commands are not in the CLI's own graph, nor in svc's: trace's help, say
      assert.deepEqual(has(run, /walk one packet through a node's rules/), []);
    });

    it("svc on an iptables cluster loads no other mode's dataplane: each is imported for a node in it", () => {
      const text = readFileSync(join(DIST, 'cli.js'), 'utf8');
      const svc = /import\("\.\/(chunks\/svc-[\w-]+\.js)"\)/.exec(text)![1]!;
      const run = new Set([...staticGraph(join(DIST, 'cli.js')), ...staticGraph(join(DIST, svc))]);
      const lazy = new Set(
        chunks.flatMap((f) =>
          [...readFileSync(f, 'utf8').matchAll(/import\("\.\/(dataplane-[\w-]+\.js)"\)/g)].map(
            (m) => join(DIST, 'chunks', m[1]!),
          ),
        ),
      );
      // nftables', IPVS's and Cilium's (core/dataplane/modes.ts), each a chunk of its own
      assert.equal(lazy.size, 3, [...lazy].join(', '));
      assert.deepEqual(
        [...lazy].filter((f) => run.has(f)),
        [],
      );
      // each mode's packet walk, a string only its own code holds, is in none of svc's files
      for (const walk of [
        /other nftables tables on the node \(iptables-nft's, a CNI's\) are not/,
        /the node's virtual servers and its addresses are walked/,
        /its BPF maps were not read, so kdebug compared/,
      ]) {
        assert.ok(
          chunks.some((f) => walk.test(readFileSync(f, 'utf8'))),
          `${walk} in no chunk`,
        );
        assert.deepEqual(has(run, walk), [], `${walk} loads with svc`);
      }
    });

    it('neither the CLI nor the TUI loads client-node or ssh2 up front', () => {
      const loaded = new Set([...staticGraph(join(DIST, 'cli.js')), ...staticGraph(tuiChunk!)]);
      assert.deepEqual(has(loaded, MARKERS['client-node']!), []);
      assert.deepEqual(has(loaded, MARKERS['ssh2']!), []);
    });
  },
);
