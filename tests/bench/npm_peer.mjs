// npm_peer.mjs — a peer engine from npm, installed by the bench the first time it is needed into
// its own folder under tests/out/peers/ (never into the project's node_modules: `npm test` and
// `npm start` never download it), at a pinned version, with no install script run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../lib/run.mjs';

// The folder a peer is installed into.
export const peerFolder = (name) => join(ROOT, 'tests', 'out', 'peers', name);

// Installs packages (['name@version', …]) into peerFolder(name) unless every path of `needs`
// (relative to its node_modules) is there already. omitOptional leaves optional dependencies
// out (node-llama-cpp's GPU builds). Returns { dir } or { note } saying why it is not there.
export function installPeer(name, packages, needs, { omitOptional = false } = {}) {
  const dir = peerFolder(name);
  const present = () => needs.every((p) => existsSync(join(dir, 'node_modules', p)));
  if (present()) return { dir };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `{"name": "attnlab-peer-${name}", "private": true}\n`);
  console.error(`installing ${packages.join(' ')} into ${dir}…`);
  const r = spawnSync('npm', ['install', '--no-save', ...(omitOptional ? ['--omit=optional'] : []), '--ignore-scripts', '--no-audit', '--no-fund',
    '--prefix', dir, ...packages], { encoding: 'utf8' });
  if (r.status !== 0 || !present()) return { note: `npm install ${packages.join(' ')} failed: ${(r.stderr || r.error || '').toString().trim().split('\n').pop()}: not run` };
  return { dir };
}
