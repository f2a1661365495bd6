// loader.js - finding, compiling and instantiating the attention module:
// the ISA probes, the choice of build, and the sources a module may come from
// (a URL in Node or a browser, bytes, a Response, a compiled Module).

import { Attention } from './attention.js';
import { describe } from './matrix.js';
import { checkKeys } from './options.js';

// The smallest module that uses a SIMD128 instruction (v128 result of
// i8x16.splat + i8x16.popcnt), the probe wasm-feature-detect uses.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

// The smallest module that uses f32x4.relaxed_madd (opcode 0xfd 0x85 0x02):
// (func (param v128 v128 v128) (result v128) local.get 0..2 f32x4.relaxed_madd).
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11,
]);

/** True when this engine accepts WebAssembly SIMD128. */
export function simdSupported() {
  return WebAssembly.validate(SIMD_PROBE);
}

/** True when this engine accepts relaxed SIMD (f32x4.relaxed_madd). */
export function relaxedSimdSupported() {
  return WebAssembly.validate(RELAXED_PROBE);
}

// Compiled modules by build, so a second instance skips compilation.
const compiled = new Map();

function defaultModule(isa) {
  if (!compiled.has(isa)) {
    // Literal URLs so bundlers see and copy the files.
    const url = isa === 'relaxed-simd'
      ? new URL('../../dist/attention-relaxed.wasm', import.meta.url)
      : isa === 'simd128'
        ? new URL('../../dist/attention-simd.wasm', import.meta.url)
        : new URL('../../dist/attention-scalar.wasm', import.meta.url);
    const promise = compileSource(url);
    promise.catch(() => compiled.delete(isa));
    compiled.set(isa, promise);
  }
  return compiled.get(isa);
}

/**
 * The build loadAttention picks for these options on this engine:
 * 'relaxed-simd' when the engine has relaxed SIMD and neither `simd: false`
 * nor `deterministic: true` is asked, else 'simd128' when it has SIMD128 and
 * `simd` is not false, else 'scalar'.
 * @param {{ simd?: boolean, deterministic?: boolean }} [options]
 * @returns {'relaxed-simd' | 'simd128' | 'scalar'}
 */
export function chooseIsa({ simd, deterministic } = {}) {
  if (simd === false || !simdSupported()) return 'scalar';
  if (deterministic !== true && relaxedSimdSupported()) return 'relaxed-simd';
  return 'simd128';
}

async function compileSource(src, fn = 'loadAttention') {
  if (src instanceof WebAssembly.Module) return src;
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return WebAssembly.compile(src);
  if (typeof Response !== 'undefined' && src instanceof Response) return compileResponse(src);
  let url;
  if (src instanceof URL) {
    url = src;
  } else if (typeof src === 'string') {
    const base = globalThis.location?.href ?? `file://${globalThis.process?.cwd?.() ?? ''}/`;
    url = new URL(src, base);
  } else {
    throw new TypeError(`${fn}: wasm must be a URL, string, BufferSource, Response or WebAssembly.Module, got ${describe(src)}`);
  }
  if (url.protocol === 'file:') {
    // A specifier in a variable, so browser bundlers do not try to resolve it.
    const fsName = 'node:fs/promises';
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsName);
    return WebAssembly.compile(await fs.readFile(url));
  }
  return compileResponse(await fetch(url));
}

async function compileResponse(response) {
  if (!response.ok) throw new Error(`attention-wasm: fetching ${response.url} failed with HTTP ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  // compileStreaming insists on application/wasm; other servers get the slow path.
  if (typeof WebAssembly.compileStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/**
 * Loads the attention module: the fastest build the engine validates
 * (relaxed SIMD, else SIMD128, else scalar; see chooseIsa), or `wasm`.
 * @param {{ simd?: boolean, deterministic?: boolean, wasm?: URL | string | BufferSource | Response | WebAssembly.Module }} [options]
 * @returns {Promise<Attention>}
 */
export async function loadAttention(options = {}) {
  const module = await compileModule(options, 'loadAttention');
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === 'env' && imp.name === 'emscripten_notify_memory_growth') {
      // Views are re-created from memory.buffer after every call that can grow it.
      imports.env = { ...imports.env, emscripten_notify_memory_growth() {} };
    } else {
      throw new Error(`loadAttention: the wasm module imports ${imp.module}.${imp.name}, which this loader does not provide`);
    }
  }
  const instance = await WebAssembly.instantiate(module, imports);
  return new Attention(instance);
}

/**
 * The compiled WebAssembly.Module that loadAttention(options) instantiates
 * (cached per build). web/pool.js compiles once and hands it to its workers.
 * @param {{ simd?: boolean, deterministic?: boolean, wasm?: URL | string | BufferSource | Response | WebAssembly.Module }} [options]
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileAttention(options = {}) {
  return compileModule(options, 'compileAttention');
}

// Checks the load options (messages name `fn`) and compiles the module.
async function compileModule(options, fn) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  }
  checkKeys(options, 'load', fn);
  const { simd: wantSimd, deterministic, wasm } = options;
  if (wantSimd !== undefined && typeof wantSimd !== 'boolean') {
    throw new TypeError(`${fn}: simd must be a boolean, got ${describe(wantSimd)}`);
  }
  if (deterministic !== undefined && typeof deterministic !== 'boolean') {
    throw new TypeError(`${fn}: deterministic must be a boolean, got ${describe(deterministic)}`);
  }
  if (wantSimd === true && wasm === undefined && !simdSupported()) {
    throw new Error(`${fn}: simd: true was asked for, but this engine does not support WebAssembly SIMD128`);
  }
  if (wasm !== undefined) return compileSource(wasm, fn);
  const isa = chooseIsa({ simd: wantSimd, deterministic });
  // A checkout built without a relaxed-SIMD toolchain has no relaxed module
  // (build.sh says so): SIMD128 then, as on an engine without relaxed SIMD.
  return isa === 'relaxed-simd'
    ? defaultModule(isa).catch(() => defaultModule('simd128'))
    : defaultModule(isa);
}
