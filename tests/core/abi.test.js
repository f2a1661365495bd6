// The layout table of web/core/abi.js against the C structs of
// c/attention.h: a tiny native program, compiled with cc, prints sizeof and
// offsetof of every struct and field the table names and the flag and enum
// values it copies; layout() for the native pointer and size_t sizes must
// give the same numbers (the table's order and types are then C's). When
// clang can target wasm32, the wasm32 offsets the instance writes are also
// checked by _Static_assert in that target itself.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { CONSTANTS, STRUCTS, WASM32, layout } from '../../web/core/abi.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const has = (tool, args) => spawnSync(tool, args, { stdio: 'ignore' }).status === 0;
const CC = has('cc', ['--version']);

// Every field path of a struct, nested ones as 'outer.inner' (offsetof takes them).
const fieldPaths = (name) => Object.keys(layout(WASM32)[name].offsets);

function program() {
  const lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "c/attention.h"', 'int main(void) {',
    '  printf("ptr %zu\\n", sizeof(void*));', '  printf("size %zu\\n", sizeof(size_t));'];
  for (const name of Object.keys(STRUCTS)) {
    lines.push(`  printf("${name} %zu %zu\\n", sizeof(${name}), _Alignof(${name}));`);
    for (const f of fieldPaths(name)) lines.push(`  printf("${name}.${f} %zu\\n", offsetof(${name}, ${f}));`);
  }
  for (const c of Object.keys(CONSTANTS)) lines.push(`  printf("${c} %lld\\n", (long long)(${c}));`);
  lines.push('  return 0;', '}');
  return lines.join('\n');
}

const test = suite('the ABI table against c/attention.h');

test('every struct size, alignment and field offset, natively, is what the table gives for the native sizes', () => {
  if (!CC) {
    console.log('  skipped: no cc on PATH (the native check needs a C compiler)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'attn-abi-'));
  try {
    writeFileSync(join(dir, 'abi.c'), program());
    execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-I', ROOT, join(dir, 'abi.c'), '-o', join(dir, 'abi')]);
    const printed = new Map(execFileSync(join(dir, 'abi'), { encoding: 'utf8' }).trim().split('\n').map((l) => {
      const [key, ...values] = l.split(' ');
      return [key, values.map(Number)];
    }));
    const native = layout({ ptr: printed.get('ptr')[0], size: printed.get('size')[0] });
    let fields = 0;
    for (const name of Object.keys(STRUCTS)) {
      assert.equal(printed.get(name), [native[name].size, native[name].align], `sizeof and _Alignof(${name})`);
      for (const f of fieldPaths(name)) {
        assert.is(printed.get(`${name}.${f}`)[0], native[name].offsets[f], `offsetof(${name}, ${f})`);
        fields++;
      }
    }
    assert.ok(fields > 60, `${fields} fields compared`);
    for (const [c, value] of Object.entries(CONSTANTS)) assert.is(printed.get(c)[0], value, c);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the wasm32 offsets the instance writes hold in the wasm32 target (clang)', () => {
  const wasmTarget = ['--target=wasm32', '-ffreestanding', '-fsyntax-only', '-std=c11', '-I', ROOT];
  const dir = mkdtempSync(join(tmpdir(), 'attn-abi-'));
  try {
    const probe = join(dir, 'probe.c');
    writeFileSync(probe, '#include <stddef.h>\n#include "c/attention.h"\n');
    if (!has('clang', [...wasmTarget, probe])) {
      console.log('  skipped: clang cannot compile c/attention.h for wasm32 here (the native check above still ran)');
      return;
    }
    const wasm = layout(WASM32);
    const lines = ['#include <stddef.h>', '#include "c/attention.h"'];
    for (const name of Object.keys(STRUCTS)) {
      lines.push(`_Static_assert(sizeof(${name}) == ${wasm[name].size}, "sizeof(${name})");`);
      for (const f of fieldPaths(name)) lines.push(`_Static_assert(offsetof(${name}, ${f}) == ${wasm[name].offsets[f]}, "offsetof(${name}, ${f})");`);
    }
    const file = join(dir, 'abi32.c');
    writeFileSync(file, lines.join('\n') + '\n');
    const r = spawnSync('clang', [...wasmTarget, file], { encoding: 'utf8' });
    assert.is(r.status, 0, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('wasm32: every field is a 4-byte word, the sizes c/attention.c asserts', () => {
  const wasm = layout(WASM32);
  const sizes = Object.fromEntries(Object.keys(STRUCTS).map((name) => [name, wasm[name].size]));
  assert.equal(sizes, { attn_strides: 12, attn_shape: 76, attn_bcast: 16, attn_options: 92, attn_steps: 20, attn_kv: 44, attn_grads: 20 });
  for (const name of Object.keys(STRUCTS)) for (const o of Object.values(wasm[name].offsets)) assert.is(o % 4, 0, `${name}: word aligned`);
});

test.run();
