// `npm run build:exe`: kdebug as one linux-x64 executable that needs no Node.js on the target
// (Node's single executable applications, with the Node.js that runs this script). Node 20 takes a
// CommonJS main only, and the bundle is ESM (Ink's layout engine awaits at top level), so the
// executable carries the installed package as assets and, on its first run, writes them to
// ~/.cache/kdebug/<version>-<hash>/ and imports the CLI from there; later runs import it once it
// checks out (this user's own files, no one else may write them, their content hash as built).
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
const { createHash } = require('node:crypto');
const { pathToFileURL } = require('node:url');
const { id, files, sha256 } = JSON.parse(sea.getAsset('manifest.json', 'utf8'));
const uid = process.getuid();
// a directory or file only this user can have written: its own, not group- or world-writable
const own = (p, dir) => {
  const s = fs.lstatSync(p);
  return (dir ? s.isDirectory() : s.isFile()) && s.uid === uid && (s.mode & 0o022) === 0;
};
// a copy this run may import: written by this user alone, and holding exactly the package
const trusted = (root) => {
  try {
    if (!own(path.dirname(root), true) || !own(root, true) || !own(path.join(root, '.complete')))
      return false;
    const hash = createHash('sha256');
    for (const f of files) {
      const p = path.join(root, f);
      if (!own(path.dirname(p), true) || !own(p)) return false;
      hash.update(f).update(fs.readFileSync(p));
    }
    return hash.digest('hex') === sha256;
  } catch {
    return false;
  }
};
// the package's files, written beside, checked, then moved in place: never half a copy
const extract = (parent) => {
  const tmp = fs.mkdtempSync(path.join(parent, id + '.'));
  files.forEach((f, i) => {
    fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(tmp, f), Buffer.from(sea.getAsset('f' + i)), { mode: 0o600 });
  });
  fs.writeFileSync(path.join(tmp, '.complete'), '', { mode: 0o600 });
  return tmp;
};
const cache = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'kdebug');
let root = path.join(cache, id);
if (!trusted(root)) {
  fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
  // a cache directory someone else can write to is not used: a private one for this run instead
  const parent = own(cache, true) ? cache : fs.mkdtempSync(path.join(os.tmpdir(), 'kdebug-'));
  const tmp = extract(parent);
  if (parent === cache) {
    fs.rmSync(root, { recursive: true, force: true }); // what was there did not check out
    try {
      fs.renameSync(tmp, root);
    } catch {
      root = tmp; // another run got there first: use this run's own copy
    }
  } else root = tmp;
  if (!trusted(root)) {
    process.stderr.write('kdebug: its unpacked copy in ' + root + ' does not match what it carries\\n');
    process.exit(2);
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
  const sha256 = hash.digest('hex');
  const id = `${version}-${sha256.slice(0, 12)}`;
  const assets = { 'manifest.json': join(work, 'manifest.json') };
  files.forEach((f, i) => (assets[`f${i}`] = join(pkg, f)));
  writeFileSync(join(work, 'manifest.json'), JSON.stringify({ id, files, sha256 }));
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
