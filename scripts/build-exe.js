// `npm run build:exe`: kdebug as one linux-x64 executable that needs no Node.js on the target
// (Node's single executable applications, with the Node.js that runs this script). Node 20 takes a
// CommonJS main only, and the bundle is ESM (Ink's layout engine awaits at top level), so the
// executable carries the installed package as assets and, on its first run, writes them to
// ~/.cache/kdebug/<version>-<hash>/ and imports the CLI from there; later runs import at once.
// Nothing is downloaded. Output: release/kdebug-linux-x64 (--out DIR for another directory).
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { installedPackage, must } from './installed-package.js';

// Runs inside the executable: the package's files, written once per build, then the CLI.
const MAIN = `'use strict';
const sea = require('node:sea');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { id, files } = JSON.parse(sea.getAsset('manifest.json', 'utf8'));
const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
const root = path.join(cache, 'kdebug', id);
if (!fs.existsSync(path.join(root, '.complete'))) {
  // written beside, then moved in place: a run cut short leaves no half-written copy behind
  const tmp = root + '.' + process.pid;
  files.forEach((f, i) => {
    fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
    fs.writeFileSync(path.join(tmp, f), Buffer.from(sea.getAsset('f' + i)));
  });
  fs.writeFileSync(path.join(tmp, '.complete'), '');
  try {
    fs.renameSync(tmp, root);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true }); // another run got there first
  }
}
import(pathToFileURL(path.join(root, 'dist', 'cli.js')).href).catch((e) => {
  process.stderr.write('kdebug: ' + e.message + '\\n');
  process.exit(2);
});
`;

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
// --out DIR (default release/)
const out = resolve(
  process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : 'release',
);
const work = mkdtempSync(join(tmpdir(), 'kdebug-exe-'));
try {
  const pkg = installedPackage(work);
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(relative(pkg, p));
    }
  };
  walk(pkg);
  files.sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update(readFileSync(join(pkg, f)));
  const id = `${version}-${hash.digest('hex').slice(0, 12)}`;
  const assets = { 'manifest.json': join(work, 'manifest.json') };
  files.forEach((f, i) => (assets[`f${i}`] = join(pkg, f)));
  writeFileSync(join(work, 'manifest.json'), JSON.stringify({ id, files }));
  writeFileSync(join(work, 'main.cjs'), MAIN);
  writeFileSync(
    join(work, 'sea-config.json'),
    JSON.stringify({
      main: join(work, 'main.cjs'),
      output: join(work, 'sea.blob'),
      disableExperimentalSEAWarning: true,
      assets,
    }),
  );
  must(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')]);
  const exe = join(work, 'kdebug');
  copyFileSync(process.execPath, exe);
  must(process.execPath, [
    resolve('node_modules/postject/dist/cli.js'),
    exe,
    'NODE_SEA_BLOB',
    join(work, 'sea.blob'),
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ]);
  mkdirSync(out, { recursive: true });
  renameSync(exe, join(out, 'kdebug-linux-x64'));
  console.log(`${relative(process.cwd(), join(out, 'kdebug-linux-x64'))} (${id})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
