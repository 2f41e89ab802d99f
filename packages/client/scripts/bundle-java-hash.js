// Puts a copy of the built @shardleaf/java-hash (package.json + dist/) in this package's own
// node_modules before `npm pack`, and removes it after. The client lists it in
// bundleDependencies, so the tarball carries it and installs without a registry; npm packs only
// bundled dependencies found under the package's own node_modules, never the workspace link
// hoisted to the repository root (npm/cli#3466).
//   node scripts/bundle-java-hash.js copy | remove
'use strict';
const { cpSync, rmSync, readdirSync, rmdirSync, existsSync } = require('node:fs');
const { join } = require('node:path');

const here = join(__dirname, '..');
const source = join(here, '..', 'java-hash');
const modules = join(here, 'node_modules');
const target = join(modules, '@shardleaf', 'java-hash');

function removeEmpty(dir) {
  if (existsSync(dir) && readdirSync(dir).length === 0) {
    rmdirSync(dir);
  }
}

rmSync(target, { recursive: true, force: true });
if (process.argv[2] === 'copy') {
  if (!existsSync(join(source, 'dist', 'index.js'))) {
    throw new Error(`${source}/dist is missing: build @shardleaf/java-hash first`);
  }
  cpSync(join(source, 'package.json'), join(target, 'package.json'));
  cpSync(join(source, 'dist'), join(target, 'dist'), { recursive: true });
} else {
  removeEmpty(join(modules, '@shardleaf'));
  removeEmpty(modules);
}
