// ensure-built.js - runs ./build.sh when dist/*.wasm is missing or older than
// anything in c/ or build.sh. Used by the test command and npm start.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The relaxed and threads modules are optional (build.sh skips them without a capable
// toolchain); it counts only once it exists, so a stale one is rebuilt.
const OUTPUTS = ['dist/attention-simd.wasm', 'dist/attention-scalar.wasm'];
const OPTIONAL = ['dist/attention-relaxed.wasm', 'dist/attention-relaxed-threads.wasm', 'dist/attention-simd-threads.wasm'];

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
  const outputs = [...OUTPUTS, ...OPTIONAL.filter((p) => mtime(p) > -Infinity)];
  const oldestOutput = Math.min(...outputs.map(mtime));
  if (oldestOutput >= newestSource) return;
  const r = spawnSync(`${root}build.sh`, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`build.sh failed (exit ${r.status ?? r.signal}); see its message above`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) ensureBuilt();
