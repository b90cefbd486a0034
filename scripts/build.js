// Bundles the CLI so start-up reads a few files, not hundreds; Ink, client-node and ssh2 land in
// lazily imported chunks that only interactive and live runs load.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// the commit the bundle is built from ("unknown" outside a git checkout), "-dirty" with changes
const git = (args) => {
  const r = spawnSync('git', args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
};
const head = git(['rev-parse', '--short=12', 'HEAD']);
const commit = head
  ? `${head}${git(['status', '--porcelain', '--untracked-files=no']) ? '-dirty' : ''}`
  : 'unknown';
const fastWidth = fileURLToPath(new URL('../src/tui/string-width.ts', import.meta.url));
/** string-width 8 (Ink's) resolves to the fast path, which alone imports the package itself. */
const inkStringWidth = {
  name: 'ink-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, (args) =>
      args.importer === fastWidth || args.importer.includes('/wrap-ansi/')
        ? undefined
        : { path: fastWidth },
    );
  },
};
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const built = await build({
  // the parse worker is an entry of its own: a Worker loads it by file, beside cli.js
  entryPoints: { cli: 'src/cli.ts', 'parse-worker': 'src/cluster/parse-worker.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // ssh2 loads optional native addons with require(); keep it a real package. Ink imports
  // react-devtools-core only when DEV=true, from a chunk nothing else loads.
  external: ['ssh2', 'react-devtools-core'],
  define: {
    'process.env.NODE_ENV': '"production"',
    KDEBUG_VERSION: JSON.stringify(version),
    KDEBUG_COMMIT: JSON.stringify(commit),
  },
  banner: {
    js: "import { createRequire as __kdCreateRequire } from 'node:module'; const require = __kdCreateRequire(import.meta.url);",
  },
  // Ink's text measure, string-width, through our narrow-mark fast path (src/tui/string-width.ts)
  plugins: [inkStringWidth],
  legalComments: 'none',
  // a quarter of the size (client-node is 14 MB as written): live runs start 20% sooner;
  // names kept so a KDEBUG_DEBUG stack still reads
  minify: process.env.KDEBUG_NO_MINIFY === undefined,
  keepNames: true,
  logLevel: 'warning',
  // KDEBUG_METAFILE=FILE: which source modules each chunk holds (what a command loads)
  metafile: process.env.KDEBUG_METAFILE !== undefined,
});
if (process.env.KDEBUG_METAFILE)
  writeFileSync(process.env.KDEBUG_METAFILE, JSON.stringify(built.metafile));
