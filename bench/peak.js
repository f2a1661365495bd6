// peak.js - the peak probes (bench/peak.c) built and loaded for run.js and
// ab.js: the SIMD128 mul+add probe and, where clang and wasm-ld build it,
// the relaxed_madd probe. Each run(iterations) returns nothing useful; a call
// is PEAK_FLOPS(iterations) floating-point operations.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export const peakFlops = (iterations) => iterations * 12 * 4 * 2;

const newer = (out, src) => existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs;

// { simd, relaxed, relaxedError }: simd(iterations) and relaxed(iterations)
// run a probe (relaxed is null when it could not be built, relaxedError says why).
export async function loadPeakProbes() {
  const source = `${root}bench/peak.c`;
  const simdWasm = `${root}dist/bench-peak.wasm`;
  if (!newer(simdWasm, source)) {
    execFileSync('emcc', ['-O3', '-msimd128', '--no-entry', '-sSTANDALONE_WASM=1', '-sEXPORTED_FUNCTIONS=_peak_run',
      '-ffp-contract=off', source, '-o', simdWasm], { stdio: 'inherit' });
  }
  const simdModule = await WebAssembly.instantiate(readFileSync(simdWasm), { env: { emscripten_notify_memory_growth() {} } });
  const simdRun = simdModule.instance.exports.peak_run;
  // The relaxed probe: clang and wasm-ld as build.sh uses them for the module.
  const relaxedWasm = `${root}dist/bench-peak-relaxed.wasm`;
  let relaxed = null, relaxedError = null;
  try {
    if (!newer(relaxedWasm, source)) {
      const obj = `${os.tmpdir()}/bench-peak-relaxed-${process.pid}.o`;
      execFileSync(process.env.ATTN_CLANG ?? 'clang-19', ['--target=wasm32', '-O3', '-msimd128', '-mrelaxed-simd', '-ffp-contract=off',
        '-c', source, '-o', obj], { stdio: 'inherit' });
      execFileSync(process.env.ATTN_WASM_LD ?? 'wasm-ld-19', ['--no-entry', '--export=peak_run', obj, '-o', relaxedWasm], { stdio: 'inherit' });
    }
    const run = (await WebAssembly.instantiate(readFileSync(relaxedWasm), {})).instance.exports.peak_run;
    relaxed = (iterations) => run(iterations, 0.999, 0.001);
  } catch (err) {
    relaxedError = err.message.split('\n')[0];
  }
  return { simd: (iterations) => simdRun(iterations, 0.999, 0.001), relaxed, relaxedError };
}
