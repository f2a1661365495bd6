// What the three modules are made of: the relaxed-SIMD and SIMD128 builds use
// v128 instructions, the scalar build none, and none needs Emscripten's JS
// glue (c/relaxed-build.test.js checks the relaxed module's own instructions).
// Node 20 compiles the relaxed module only behind a flag: without it this
// file runs itself again with the flag.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const path = (name) => fileURLToPath(new URL(`../../dist/${name}`, import.meta.url));
// wabt's disassembler (Debian package wabt); .ci/run installs it.
const disassemble = (name) => execFileSync('wasm-objdump', ['-d', path(name)], { encoding: 'utf8', maxBuffer: 64 << 20 });
const SIMD_OP = /\b(v128|[if](8x16|16x8|32x4|64x2))\./g;

const MODULES = ['attention-relaxed.wasm', 'attention-simd.wasm', 'attention-scalar.wasm'];

for (const name of ['attention-relaxed.wasm', 'attention-simd.wasm']) {
  test(`${name} contains v128 instructions, f32x4 arithmetic among them`, () => {
    const ops = disassemble(name).match(SIMD_OP) ?? [];
    assert.ok(ops.length > 100, `only ${ops.length} SIMD instructions`);
    assert.ok(ops.includes('f32x4.'), 'f32x4 arithmetic');
  });
}

test('the scalar module contains no SIMD instruction', () => {
  const ops = disassemble('attention-scalar.wasm').match(SIMD_OP) ?? [];
  assert.equal(ops, []);
});

for (const name of MODULES) {
  test(`${name}: imports at most env.emscripten_notify_memory_growth; exports the C API`, async () => {
    const module = await WebAssembly.compile(readFileSync(path(name)));
    for (const imp of WebAssembly.Module.imports(module)) assert.equal([imp.module, imp.name], ['env', 'emscripten_notify_memory_growth']);
    const exports = WebAssembly.Module.exports(module).map((e) => e.name);
    for (const want of ['memory', 'attn_sdpa', 'attn_sdpa_scratch_size', 'attn_matmul', 'attn_softmax', 'attn_status_string', 'attn_simd_enabled', 'malloc', 'free']) {
      assert.ok(exports.includes(want), want);
    }
  });
}

test.run();
