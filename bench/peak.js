// peak.js - the peak probes (bench/peak.c) built and loaded for run.js and
// ab.js: the SIMD128 mul+add probe and, where clang and wasm-ld build it,
// the relaxed_madd probe. Each run(iterations) returns nothing useful; a call
// is peakFlops(iterations) floating-point operations. Beside each probe, the
// kernels' 4 x 8 tile alone (simdTile, relaxedTile: tileFlops(reps, n) a call).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export const peakFlops = (iterations) => iterations * 12 * 4 * 2;
/** FLOPs of tile(reps, n): reps tiles of 4 x 8 dot products of length n. */
export const tileFlops = (reps, n) => reps * n * 4 * 8 * 2;

const newer = (out, src) => existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs;

// { simd, relaxed, relaxedError }: simd(iterations) and relaxed(iterations)
// run a probe (relaxed is null when it could not be built, relaxedError says why).
export async function loadPeakProbes() {
  const source = `${root}bench/peak.c`;
  const simdWasm = `${root}dist/bench-peak.wasm`;
  if (!newer(simdWasm, source)) {
    execFileSync('emcc', ['-O3', '-DNDEBUG', '-msimd128', '--no-entry', '-sSTANDALONE_WASM=1', '-sEXPORTED_FUNCTIONS=_peak_run,_tile_run,_tile_buffer',
      '-ffp-contract=off', source, '-o', simdWasm], { stdio: 'inherit' });
  }
  const simdModule = await WebAssembly.instantiate(readFileSync(simdWasm), { env: { emscripten_notify_memory_growth() {} } });
  const simdRun = simdModule.instance.exports.peak_run;
  const simdTile = tileOf(simdModule.instance.exports);
  // The relaxed probe: clang and wasm-ld as build.sh uses them for the module.
  const relaxedWasm = `${root}dist/bench-peak-relaxed.wasm`;
  let relaxed = null, relaxedTile = null, relaxedError = null;
  try {
    if (!newer(relaxedWasm, source)) {
      const obj = `${os.tmpdir()}/bench-peak-relaxed-${process.pid}.o`;
      // The tile's header includes the C library's assert.h: emscripten's sysroot has it, as build.sh uses it.
      const sysroot = execFileSync('emcc', ['--cflags'], { encoding: 'utf8' }).split(/\s+/).find((f) => f.startsWith('--sysroot='));
      execFileSync(process.env.ATTN_CLANG ?? 'clang-19', ['--target=wasm32', '-O3', '-DNDEBUG', '-msimd128', '-mrelaxed-simd', '-ffp-contract=off',
        ...(sysroot ? [sysroot] : []), '-c', source, '-o', obj], { stdio: 'inherit' });
      execFileSync(process.env.ATTN_WASM_LD ?? 'wasm-ld-19', ['--no-entry', '--export=peak_run', '--export=tile_run', '--export=tile_buffer', obj, '-o', relaxedWasm], { stdio: 'inherit' });
    }
    const exports = (await WebAssembly.instantiate(readFileSync(relaxedWasm), {})).instance.exports;
    relaxed = (iterations) => exports.peak_run(iterations, 0.999, 0.001);
    relaxedTile = tileOf(exports);
  } catch (err) {
    relaxedError = err.message.split('\n')[0];
  }
  return { simd: (iterations) => simdRun(iterations, 0.999, 0.001), relaxed, relaxedError, simdTile, relaxedTile };
}

// tile(reps, n): the kernels' 4 x 8 tile alone over panels filled with small
// values (n <= 256 steps), or null for a module built before it had one.
function tileOf(exports) {
  if (!exports.tile_run) return null;
  const panels = new Float32Array(exports.memory.buffer, exports.tile_buffer(), 4 * 256 + 256 * 8);
  for (let i = 0; i < panels.length; i++) panels[i] = ((i * 7919) % 1000) / 1e5;
  return (reps, n) => exports.tile_run(reps, n);
}
