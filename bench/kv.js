#!/usr/bin/env node
// kv.js - decoding from a KV cache held as float32, float16 and int8, side
// by side in one process: one layer of a Llama-3.2-1B-shaped model, 32 query
// heads over 8 kv heads, d = 64, one thread, the relaxed-SIMD module (Node
// 20 runs it only with --experimental-wasm-relaxed-simd: without the flag
// this script runs itself again with it; KV_MODULE=simd128 takes the
// SIMD128 module instead).
//   node bench/kv.js                      nk = 4096, 16384 and 32768
//   KV_NK=4096 KV_ROUNDS=21 node bench/kv.js
// Per nk, the contenders are one decode step (nq = 1) from each cache and
// the verification of k = 8 draft tokens (nq = 8, causal among them, as
// speculative decoding does before cache.truncate drops the rejected ones).
// Each round gives each contender about KV_MS (10) ms, short so that a burst
// of load on a shared machine hits all of them alike; the table shows per
// contender the median time per call, the minimum, and the median of its
// per-round ratios to the float32 cache's decode step (decode rows: above 1
// is faster) or to the same cache's decode step (verify rows: the cost of
// verifying 8 tokens in decode steps). Then the memory per cached token of
// each cache (K and V of all kv heads, int8 scales included) and its ratio
// to float32. KV_AGAINST=<dist directory of another build> adds that
// build's decode steps (the same module file) to the same rounds, their
// ratios also to this build's float32 cache: a change to the kernels
// measured in one process, paired round by round.
// Timings are reported here, never asserted in tests.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { random } from './random.js';

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
const wantRelaxed = process.env.KV_MODULE !== 'simd128';
if (wantRelaxed && !relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const file = wantRelaxed && relaxedSimdSupported() ? 'attention-relaxed.wasm' : 'attention-simd.wasm';
const attn = await loadAttention({ wasm: readFileSync(new URL(`../dist/${file}`, import.meta.url)) });
const against = process.env.KV_AGAINST ? await loadAttention({ wasm: readFileSync(join(process.env.KV_AGAINST, file)) }) : null;

const ROUNDS = Number(process.env.KV_ROUNDS ?? 31);
const ROUND_MS = Number(process.env.KV_MS ?? 10);
const DRAFT = 8;
const DTYPES = ['float32', 'float16', 'int8'];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [heads, kvHeads, d] = [32, 8, 64];

console.log(`${attn.isa} module, ${heads} heads over ${kvHeads} kv heads, d = ${d}, one thread, ${ROUNDS} rounds of ${ROUND_MS} ms`);
for (const nk of (process.env.KV_NK ?? '4096,16384,32768').split(',').map(Number)) {
  const k = random(kvHeads * nk * d, 2), v = random(kvHeads * nk * d, 3);
  const q1 = random(heads * d, 1), q8 = random(heads * DRAFT * d, 4);
  const out1 = new Float32Array(heads * d), out8 = new Float32Array(heads * DRAFT * d);
  const list = [];
  const caches = DTYPES.map((dtype) => {
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk, dtype });
    cache.append(k, v);
    list.push({ dtype, name: `${dtype} decode step`, run: () => cache.attend(q1, { heads, out: out1 }) });
    list.push({ dtype, name: `${dtype} verify ${DRAFT} drafts`, verify: true, run: () => cache.attend(q8, { heads, causal: true, out: out8 }) });
    return cache;
  });
  for (const dtype of against ? DTYPES : []) {
    const cache = against.kvCache({ kvHeads, dk: d, capacity: nk, dtype });
    cache.append(k, v);
    list.push({ dtype, other: true, name: `KV_AGAINST ${dtype} decode`, run: () => cache.attend(q1, { heads, out: out1 }) });
    caches.push(cache);
  }
  for (const c of list) {
    c.times = [];
    for (let i = 0; i < 3; i++) c.run();
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of list) {
      let calls = 0, t;
      const t0 = performance.now();
      do {
        c.run();
        calls++;
        t = performance.now() - t0;
      } while (t < ROUND_MS);
      c.times.push(t / calls);
    }
  }
  console.log(`\nnk = ${nk}${existsSync('/proc/loadavg') ? `, load ${readFileSync('/proc/loadavg', 'utf8').split(' ', 3).join(' ')}` : ''}`);
  const decode = (dtype) => list.find((c) => c.dtype === dtype && !c.verify && !c.other);
  for (const c of list) {
    const base = c.verify ? decode(c.dtype) : decode('float32');
    const ratio = median(c.times.map((t, r) => (c.verify ? t / base.times[r] : base.times[r] / t)));
    const what = c.verify ? `x${ratio.toFixed(2)} of its decode step` : `x${ratio.toFixed(2)} the float32 cache's speed`;
    console.log(`  ${c.name.padEnd(26)} median ${(median(c.times) * 1000).toFixed(0).padStart(7)} µs  min ${(Math.min(...c.times) * 1000).toFixed(0).padStart(7)} µs  ${what}`);
  }
  const f32 = caches[0].bytes / nk;
  for (const cache of caches.slice(0, DTYPES.length)) {
    console.log(`  ${cache.dtype.padEnd(8)} ${String(cache.bytes / nk).padStart(5)} bytes per cached token (${(cache.bytes / 2 ** 20).toFixed(1)} MiB at ${nk}), x${(cache.bytes / nk / f32).toFixed(3)} of float32`);
  }
  for (const cache of caches) cache.dispose();
}
