#!/usr/bin/env node
// kv.js - decoding from a KV cache against the decode call of another
// revision, side by side in one process (paired ratios, as ab.js):
//   git worktree add --detach /tmp/base REV && (cd /tmp/base && ./build.sh)
//   node --experimental-wasm-relaxed-simd bench/kv.js /tmp/base [/tmp/other]
// The other revision is loaded with its own web/attention.js and called as
// sdpa(q, k, v, { heads, kvHeads, nq: 1, nk, ... }) (copying K and V in, as
// every call before the cache did). A second revision, if given, runs its
// kvCache.attend on its SIMD128 module (a kernel change side by side). This revision runs kvCache.attend on the
// SIMD128 module and, when the engine takes relaxed SIMD, the relaxed one.
// Each round gives each contender about KV_MS (5) ms, short so that a burst
// of load on a shared machine hits all contenders alike; the table shows per
// contender the median time, the minimum, and the median of per-round ratios
// to the other revision (above 1: faster). Shape: 12 heads over 4 kv heads, nq = 1,
// d = 64, nk from KV_NK (4096; a comma list for several); rounds KV_ROUNDS (61).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { random } from './random.js';

const baseDir = process.argv[2];
if (!baseDir) {
  console.error('usage: node [--experimental-wasm-relaxed-simd] bench/kv.js /path/to/other/revision');
  process.exit(2);
}
const base = await import(pathToFileURL(resolve(baseDir, 'web/attention.js')).href);
const old = await base.loadAttention({ wasm: readFileSync(resolve(baseDir, 'dist/attention-simd.wasm')) });
const otherDir = process.argv[3];
const other = otherDir
  ? await (await import(pathToFileURL(resolve(otherDir, 'web/attention.js')).href)).loadAttention({ wasm: readFileSync(resolve(otherDir, 'dist/attention-simd.wasm')) })
  : null;
const simd = await loadAttention({ wasm: readFileSync(new URL('../dist/attention-simd.wasm', import.meta.url)) });
const relaxed = relaxedSimdSupported()
  ? await loadAttention({ wasm: readFileSync(new URL('../dist/attention-relaxed.wasm', import.meta.url)) })
  : null;

const ROUNDS = Number(process.env.KV_ROUNDS ?? 61);
const ROUND_MS = Number(process.env.KV_MS ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const [heads, kvHeads, d] = [12, 4, 64];

for (const nk of (process.env.KV_NK ?? '4096').split(',').map(Number)) {
  const q = random(heads * d, 1), k = random(kvHeads * nk * d, 2), v = random(kvHeads * nk * d, 3);
  const out = new Float32Array(heads * d);
  const caches = [];
  const cached = (attn) => {
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk });
    cache.append(k, v);
    caches.push(cache);
    return () => cache.attend(q, { heads, out });
  };
  const list = [
    { name: `${baseDir} sdpa (copies K, V)`, run: () => old.sdpa(q, k, v, { heads, kvHeads, nq: 1, nk, dk: d, dv: d, out }) },
    { name: 'SIMD128 sdpa (copies K, V)', run: () => simd.sdpa(q, k, v, { heads, kvHeads, nq: 1, nk, dk: d, dv: d, out }) },
    { name: 'SIMD128 kvCache.attend', run: cached(simd) },
  ];
  if (other) list.push({ name: `${otherDir} kvCache.attend`, run: cached(other) });
  if (relaxed) list.push({ name: 'relaxed kvCache.attend', run: cached(relaxed) });
  for (const c of list) {
    c.times = [];
    for (let i = 0; i < 20; i++) c.run();
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
  console.log(`nk = ${nk}, ${heads} heads over ${kvHeads} kv heads, nq = 1, d = ${d}, ${ROUNDS} rounds`);
  for (const c of list) {
    const ratio = median(c.times.map((t, r) => list[0].times[r] / t));
    console.log(`  ${c.name.padEnd(44)} median ${(median(c.times) * 1000).toFixed(0).padStart(6)} µs  min ${(Math.min(...c.times) * 1000).toFixed(0).padStart(6)} µs  x${ratio.toFixed(2)}`);
  }
  for (const cache of caches) cache.dispose();
}
