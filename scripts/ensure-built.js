// ensure-built.js - runs ./build.sh when dist/*.wasm is missing or older than
// anything in c/ or build.sh. Used by the test command and npm start.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const OUTPUTS = ['dist/attention-simd.wasm', 'dist/attention-scalar.wasm'];

function mtime(path) {
  try {
    return statSync(`${root}${path}`).mtimeMs;
  } catch {
    return -Infinity;
  }
}

function sources(dir) {
  return readdirSync(`${root}${dir}`, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(`${dir}/${e.name}`) : [`${dir}/${e.name}`]);
}

export function ensureBuilt() {
  const newestSource = Math.max(mtime('build.sh'), ...sources('c').map(mtime));
  const oldestOutput = Math.min(...OUTPUTS.map(mtime));
  if (oldestOutput >= newestSource) return;
  const r = spawnSync(`${root}build.sh`, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`build.sh failed (exit ${r.status ?? r.signal}); see its message above`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) ensureBuilt();
