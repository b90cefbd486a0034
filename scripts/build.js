// Bundles the CLI so start-up reads a few files, not hundreds; Ink, client-node and ssh2 land in
// lazily imported chunks that only interactive and live runs load.
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: ['src/cli.ts'],
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
  define: { 'process.env.NODE_ENV': '"production"', KDEBUG_VERSION: JSON.stringify(version) },
  banner: {
    js: "import { createRequire as __kdCreateRequire } from 'node:module'; const require = __kdCreateRequire(import.meta.url);",
  },
  legalComments: 'none',
  logLevel: 'warning',
});
