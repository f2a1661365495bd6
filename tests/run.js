#!/usr/bin/env node
// run.js - the test command (npm test): builds the wasm when it is missing or
// older than its sources, runs the native C tests under AddressSanitizer and
// UndefinedBehaviorSanitizer, then every tests/<room>/<file>.test.js with uvu
// (the rooms mirror the source: c, core, pool, explorer, model, story, cli,
// package), and prints one closing line "N passed, N failed" over all of them.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { ensureBuilt } from '../scripts/ensure-built.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let passed = 0;
let failed = 0;

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, ...options });
  if (r.error) return { status: 127, stdout: '', stderr: String(r.error.message) };
  return r;
}

// A fresh clone has no node_modules: every test file would die on its uvu
// import with a stack trace. Say what to run instead.
if (!existsSync(`${root}node_modules/uvu`)) {
  process.stderr.write('npm test: the dev dependencies are not installed (no node_modules/uvu).\n' +
    '  Run `npm ci` first (it installs exactly package-lock.json), then `npm test` again;\n' +
    '  or `.ci/run`, which also installs emscripten, clang and chromium with apt.\n');
  process.exit(1);
}

ensureBuilt();

// The scalar C path, compiled natively by the sanitizer tests and the fuzzer:
// every c/*.c but the wasm-only ones (the module's ISA, its malloc, the debug
// build's trap), and every scalar kernel.
const WASM_ONLY = new Set(['attention-isa.c', 'attention-alloc.c', 'debug-assert.c']);
const scalarSources = [
  ...readdirSync(`${root}c`).filter((f) => f.endsWith('.c') && !WASM_ONLY.has(f)).sort().map((f) => `c/${f}`),
  ...readdirSync(`${root}c/kernels`).filter((f) => f.endsWith('-scalar.c')).sort().map((f) => `c/kernels/${f}`)];

// Native: the scalar path compiled with the host compiler and sanitizers,
// once per tests/native/test_*.c (each has its own main and closing line).
{
  const cc = process.env.CC ?? 'cc';
  run('mkdir', ['-p', 'tests/output']);
  const flags = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-g', '-O1', '-ffp-contract=off',
    '-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer'];
  for (const file of readdirSync(`${root}tests/native`).filter((f) => /^test_.*\.c$/.test(f)).sort()) {
    const bin = `${root}tests/output/${file.replace(/\.c$/, '')}`;
    const compile = run(cc, [...flags, `tests/native/${file}`, ...scalarSources, '-lm', '-o', bin]);
    process.stdout.write(`\n# native/${file}\n`);
    if (compile.status !== 0) {
      process.stdout.write(`native tests: ${cc} failed\n${compile.stderr}`);
      failed++;
      continue;
    }
    const r = run(bin, [], { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1' } });
    process.stdout.write(r.stdout + r.stderr);
    const m = /native: (\d+) passed, (\d+) failed/.exec(r.stdout);
    if (m && r.status === 0) {
      passed += Number(m[1]);
    } else {
      passed += m ? Number(m[1]) : 0;
      failed += m ? Math.max(1, Number(m[2])) : 1;
    }
  }
}

// Fuzz: a bounded libFuzzer run over the C API from the committed corpus
// (tests/fuzz/corpus); new inputs go to a scratch folder, not the repo.
{
  const seconds = Number(process.env.FUZZ_SECONDS ?? 60);
  const bin = `${root}tests/output/fuzz_attention`;
  const build = run('clang', ['-g', '-O1', '-ffp-contract=off', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all',
    'tests/fuzz/fuzz_attention.c', ...scalarSources, '-lm', '-o', bin]);
  if (build.status !== 0) {
    process.stdout.write(`fuzz: clang failed (apt-get install clang libclang-rt-14-dev)\n${build.stderr}`);
    failed++;
  } else if (seconds > 0) {
    const scratch = `${root}tests/output/fuzz-new`;
    run('mkdir', ['-p', scratch]);
    const r = run(bin, [scratch, 'tests/fuzz/corpus', `-max_total_time=${seconds}`, '-max_len=4096', `-artifact_prefix=${root}tests/output/`]);
    const summary = (r.stderr.match(/Done \d+ runs in \d+ second\(s\)/) ?? ['did not finish'])[0];
    process.stdout.write(`\nfuzz: ${summary} (${seconds} s budget)\n`);
    if (r.status === 0) {
      passed++;
    } else {
      process.stdout.write(r.stderr.split('\n').slice(-40).join('\n'));
      failed++;
    }
  }
}

// JS: each test file in its own uvu process, so one crash cannot hide others.
// Found in every folder under tests/ except output/ (scratch, which holds an
// installed package with its own node_modules), sorted by their path from
// tests/ so the order is the same on every machine.
function testFiles(dir) {
  return readdirSync(`${root}tests/${dir}`, { withFileTypes: true }).flatMap((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return path === 'output' || e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.js') ? [path] : [];
  });
}
const files = testFiles('').sort();
for (const file of files) {
  const r = run(process.execPath, [`tests/${file}`], { env: { ...process.env, FORCE_COLOR: '0' } });
  process.stdout.write(`\n# ${file}\n${r.stdout}${r.stderr}`);
  const total = /Total:\s+(\d+)/.exec(r.stdout);
  const ok = /Passed:\s+(\d+)/.exec(r.stdout);
  if (!total || !ok) {
    failed++;
    process.stdout.write(`${file}: did not finish (exit ${r.status})\n`);
    continue;
  }
  passed += Number(ok[1]);
  failed += Number(total[1]) - Number(ok[1]);
  if (r.status !== 0 && Number(total[1]) === Number(ok[1])) failed++;
}

process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 ? 0 : 1;
