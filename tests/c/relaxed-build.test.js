// The relaxed-SIMD module (dist/attention-relaxed.wasm): what it is made of,
// how the loader picks it, and its allocator (c/attention-alloc.c). Its
// numerics are tested with the other builds in tests/c/sdpa.test.js. Node 20
// needs a flag for relaxed SIMD: without it this file runs itself again
// with the flag.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { chooseIsa, loadAttention, relaxedSimdSupported, simdSupported } from '../../web/attention.js';
import { RELAXED_FLAG, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const file = fileURLToPath(new URL('../../dist/attention-relaxed.wasm', import.meta.url));
// wabt's disassembler (Debian package wabt); .ci/run installs it.
const disassemble = (path) => execFileSync('wasm-objdump', ['-d', path], { encoding: 'utf8', maxBuffer: 64 << 20 });

const binary = suite('the relaxed module');
binary('exists (build.sh skips it without emcc >= 3.1.40 or clang-19 and wasm-ld-19)', () => {
  assert.ok(existsSync(file), `${file} is missing: apt-get install -y clang-19 lld-19, then ./build.sh`);
});
binary('contains f32x4.relaxed_madd in its kernels; the SIMD128 module has no relaxed instruction', () => {
  const madds = disassemble(file).match(/f32x4\.relaxed_madd/g) ?? [];
  assert.ok(madds.length >= 40, `only ${madds.length} relaxed_madd`);
  const simd = disassemble(fileURLToPath(new URL('../../dist/attention-simd.wasm', import.meta.url)));
  assert.not.match(simd, /relaxed/);
});
binary('imports nothing; exports the C API, attn_isa and the allocator', async () => {
  const module = await WebAssembly.compile(readFileSync(file));
  assert.equal(WebAssembly.Module.imports(module), []);
  const exports = WebAssembly.Module.exports(module).map((e) => e.name);
  for (const want of ['memory', 'attn_sdpa', 'attn_sdpa_scratch_size', 'attn_matmul', 'attn_softmax', 'attn_status_string', 'attn_simd_enabled', 'attn_isa', 'malloc', 'free']) {
    assert.ok(exports.includes(want), want);
  }
});
binary.run();

const loader = suite('choosing the module');
loader(`the engine validates the relaxed probe here (${RELAXED_FLAG} or a newer engine)`, () => {
  assert.is(relaxedSimdSupported(), true);
  assert.is(simdSupported(), true);
});
loader('chooseIsa: relaxed by default, SIMD128 when deterministic, scalar when simd: false', () => {
  assert.is(chooseIsa(), 'relaxed-simd');
  assert.is(chooseIsa({ simd: true }), 'relaxed-simd');
  assert.is(chooseIsa({ deterministic: true }), 'simd128');
  assert.is(chooseIsa({ deterministic: false }), 'relaxed-simd');
  assert.is(chooseIsa({ simd: false }), 'scalar');
  assert.is(chooseIsa({ simd: false, deterministic: true }), 'scalar');
});
loader('loadAttention: isa and simd as asked of the module', async () => {
  for (const [options, isa, simd] of [[{}, 'relaxed-simd', true], [{ deterministic: true }, 'simd128', true], [{ simd: false }, 'scalar', false],
    [{ simd: true, deterministic: true }, 'simd128', true]]) {
    const attn = await loadAttention(options);
    assert.is(attn.isa, isa, JSON.stringify(options));
    assert.is(attn.simd, simd, JSON.stringify(options));
  }
  // A module passed as wasm reports what it is, whatever the options say.
  const given = await loadAttention({ wasm: readFileSync(file), deterministic: true });
  assert.is(given.isa, 'relaxed-simd');
});
loader('deterministic must be a boolean', async () => {
  await rejects(loadAttention({ deterministic: 1 }), TypeError, /deterministic must be a boolean/);
});
loader.run();

// The allocator, called directly on a fresh instance.
const alloc = suite('allocator (c/attention-alloc.c)');
alloc.before(async (ctx) => {
  const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
  ctx.ex = instance.exports;
});
alloc('16-byte aligned, distinct blocks; a freed block is reused; freed neighbours merge', ({ ex }) => {
  const a = ex.malloc(100), b = ex.malloc(100), c = ex.malloc(100);
  for (const p of [a, b, c]) assert.is(p % 16, 0);
  assert.ok(b >= a + 100 && c >= b + 100, `${a} ${b} ${c}`);
  ex.free(b);
  assert.is(ex.malloc(100), b);
  ex.free(a);
  ex.free(b);
  // a and b merged: a block of both sizes fits where a was.
  assert.is(ex.malloc(200), a);
  ex.free(a);
  ex.free(c);
});
alloc('the top free block grows in place; memory grows only when needed', ({ ex }) => {
  const a = ex.malloc(1 << 20);
  ex.free(a);
  const pages = ex.memory.buffer.byteLength;
  const b = ex.malloc(8 << 20);
  assert.is(b, a);
  assert.ok(ex.memory.buffer.byteLength > pages);
  ex.free(b);
  const grown = ex.memory.buffer.byteLength;
  for (let i = 0; i < 1000; i++) ex.free(ex.malloc(1 + ((i * 7919) % (8 << 20))));
  assert.is(ex.memory.buffer.byteLength, grown);
});
alloc('requests past wasm32 give NULL, and later requests still work', ({ ex }) => {
  assert.is(ex.malloc(0xfffffff0) >>> 0, 0);
  assert.is(ex.malloc(0xfffff000) >>> 0, 0);
  const p = ex.malloc(64);
  assert.ok(p > 0);
  ex.free(p);
});
alloc('many calls through the API leave the memory size unchanged', async () => {
  const attn = await loadAttention({ wasm: readFileSync(file) });
  const round = (i) => {
    const n = 1 + (i % 37), d = 1 + (i % 19);
    const q = new Float32Array(n * d).fill(0.25);
    attn.sdpa(q, q, q, { nq: n, nk: n, dk: d, dv: d, causal: i % 2 === 0 });
    attn.attention({ rows: n, cols: d, data: q }, { rows: n, cols: d, data: q }, { rows: n, cols: d, data: q }, { steps: true });
  };
  for (let i = 0; i < 300; i++) round(i);
  const before = attn.memory.buffer.byteLength;
  for (let i = 0; i < 3000; i++) round(i);
  assert.is(attn.memory.buffer.byteLength, before);
});
alloc.run();
