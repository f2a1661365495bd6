#!/usr/bin/env node
// pool-kv.js - one decode step from a KV cache: the pool's split cache
// (pool.kvCache, web/pool/kvcache.js) in shards (memory 'copy') with 2
// threads, and with 1 (every segment on the calling thread: what the split
// itself costs), on the shared memory with 2 threads, against one
// instance's cache on the calling thread (the same module), float32 and
// int8 each against its own dtype, and onnxruntime-web's
// standard Attention op (opset 23) with past key/value at the same shape,
// numThreads 1 and 2, each in a worker thread of its own, warmed up
// (bench/ort-worker.js). Shape: one layer of a Llama-3.2-1B-like model,
// 32 query heads over 8 kv heads, d = 64, one query row, nk keys.
// Contenders run interleaved round by round (each round starts at the next
// contender); cells are medians, ratios medians of per-round ratios to the
// one instance of the same dtype (above 1: faster). The load average is
// read after every round: on a machine shared with other work a 2-thread
// ratio says little. Before timing, the pool's output is checked against
// the one instance's.
//   node bench/pool-kv.js [--quick] [--nk 4096,32768] [--no-ort]
// bench/run.js runs it at the end of npm run bench (Node 20 needs
// --experimental-wasm-relaxed-simd for the relaxed module; without it this
// runs itself again with the flag).

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { CALL_OPTIONS } from '../web/core/options.js';
import { createAttentionPool } from '../web/pool.js';
import { SEGMENT_TOKENS } from '../web/pool/kvcache.js';
import { settle } from './cpu.js';
import { random } from './random.js';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const POOL_KV_SHAPE = { heads: 32, kvHeads: 8, d: 64 };
export const POOL_KV_LENGTHS = [4096, 32768];

// onnxruntime-web's Attention op in its own worker thread.
async function ortContender(numThreads, shape) {
  const worker = new Worker(new URL('./ort-worker.js', import.meta.url));
  const ask = (message) => new Promise((resolve, reject) => {
    worker.once('message', (m) => (m.type === 'error' ? reject(new Error(m.message)) : resolve(m)));
    worker.postMessage(message);
  });
  try {
    const ready = await ask({ type: 'init', numThreads, shape });
    return {
      name: `onnxruntime-web Attention op, numThreads ${ready.threads}`,
      async round(ms) {
        return (await ask({ type: 'round', ms })).msPerCall;
      },
      close: () => worker.terminate(),
    };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
}

function timed(name, run) {
  return {
    name,
    async round(ms) {
      let calls = 0;
      const t0 = performance.now();
      let t = t0;
      do {
        await run();
        calls++;
        t = performance.now();
      } while (t - t0 < ms);
      return (t - t0) / calls;
    },
    close() {},
  };
}

function maxDiff(a, b) {
  let m = 0, big = 0;
  for (let i = 0; i < b.length; i++) {
    m = Math.max(m, Math.abs(a[i] - b[i]));
    big = Math.max(big, Math.abs(b[i]));
  }
  return m / big;
}

/**
 * Runs the benchmark; returns one result per length: { nk, rows: [{ name,
 * ms, vsSingle }], error: max |pool - single| / max |single|, load: the
 * 1-minute load average before and after }.
 */
export async function poolKvBench({ rounds = 9, roundMs = 200, lengths = POOL_KV_LENGTHS, ort = true, log = console.log } = {}) {
  const { heads, kvHeads, d } = POOL_KV_SHAPE;
  const single = await loadAttention();
  const pool = await createAttentionPool({ threads: 2, callerShare: true, memory: 'copy' });
  const pool1 = await createAttentionPool({ threads: 1, callerShare: true, memory: 'copy' });
  // The shared memory's cache where this runtime has SharedArrayBuffer (Node does).
  const sharedPool = await createAttentionPool({ threads: 2, callerShare: true });
  if (sharedPool.memory !== 'shared') sharedPool.dispose();
  const dtypes = CALL_OPTIONS.kvCache.includes('dtype') ? ['float32', 'int8'] : ['float32'];
  const results = [];
  for (const nk of lengths) {
    const loadBefore = os.loadavg()[0];
    const k = random(kvHeads * nk * d, 2), v = random(kvHeads * nk * d, 3), q = random(heads * d, 1);
    const list = [];
    const caches = [];
    const base = []; // each contender's one-instance row
    let error = 0;
    for (const dtype of dtypes) {
      const options = { kvHeads, dk: d, capacity: nk, ...(dtype === 'float32' ? {} : { dtype }) };
      const one = single.kvCache(options);
      one.append(k, v);
      const split = await pool.kvCache(options);
      await split.append(k, v);
      const split1 = await pool1.kvCache(options);
      await split1.append(k, v);
      caches.push(one, split, split1);
      const onShared = sharedPool.memory === 'shared' ? await sharedPool.kvCache(options) : null;
      if (onShared) {
        await onShared.append(k, v);
        caches.push(onShared);
      }
      const out = new Float32Array(heads * d);
      if (dtype === 'float32') error = maxDiff(await split.attend(q, { heads }), one.attend(q, { heads }));
      const at = list.length;
      list.push(timed(`one instance (${single.isa}), ${dtype}`, () => one.attend(q, { heads, out })));
      list.push(timed(`pool.kvCache, 1 thread, ${dtype}`, () => split1.attend(q, { heads, out })));
      list.push(timed(`pool.kvCache, 2 threads, ${dtype}`, () => split.attend(q, { heads, out })));
      base.push(at, at, at);
      if (onShared) {
        list.push(timed(`pool.kvCache, 2 threads, shared, ${dtype}`, () => onShared.attend(q, { heads, out })));
        base.push(at);
      }
    }
    if (ort) {
      for (const numThreads of [1, 2]) {
        try {
          list.push(await ortContender(numThreads, { kind: 'attention-op', heads, kvHeads, nq: 1, past: nk - 1, d }));
          base.push(0);
        } catch (err) {
          log(`(onnxruntime-web numThreads ${numThreads} skipped: ${err.message})`);
        }
      }
    }
    for (const c of list) await c.round(roundMs / 2);
    const times = list.map(() => []);
    const loads = list.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < list.length; j++) {
        const i = (r + j) % list.length;
        await settle(); // onnxruntime-web's spinning threads take no core from the next contender
        times[i].push(await list[i].round(roundMs));
        loads[i].push(os.loadavg()[0]);
      }
    }
    const span = (xs) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;
    const rows = list.map((c, i) => ({ name: c.name, ms: median(times[i]), vsSingle: median(times[i].map((t, r) => times[base[i]][r] / t)), load: span(loads[i]) }));
    const load = [loadBefore, os.loadavg()[0]].map((x) => x.toFixed(1)).join(' -> ');
    results.push({ nk, rows, error, load });
    log(`\nKV cache decode: ${heads} heads over ${kvHeads} kv heads, nq = 1, nk = ${nk}, d = ${d} (pool output within ${error.toExponential(1)} of one instance's, relative to its largest; load average ${load})`);
    for (const r of rows) log(`  ${r.name.padEnd(44)} ${`${r.ms.toFixed(3)} ms`.padStart(11)}  ${r.vsSingle.toFixed(2).padStart(5)}x vs one instance  (load ${r.load})`);
    for (const c of list) await c.close();
    for (const c of caches) c.dispose();
  }
  pool.dispose();
  pool1.dispose();
  if (sharedPool.memory === 'shared') sharedPool.dispose();
  return results;
}

/** Markdown lines for bench/RESULTS.md. */
export function poolKvMarkdown(results, { rounds, roundMs }) {
  const { heads, kvHeads, d } = POOL_KV_SHAPE;
  const lines = ['## Pool: split-KV decoding', '',
    `One decode step, ${heads} query heads over ${kvHeads} kv heads, d = ${d}, nq = 1: pool.kvCache with memory 'copy' and 2 threads (positions in segments of`,
    `${SEGMENT_TOKENS}, the calling thread holding every other one, each holder attending all it keeps in one call) and with 1 thread`,
    "(every segment on the calling thread: the split's own cost); on the shared memory where there is one ('shared': the whole cache there,",
    'its units, key ranges of some kv heads, claimed by both threads); against one instance\'s kvCache on the calling thread, and',
    "onnxruntime-web's standard Attention op (opset 23) with past_key/past_value (copied in, present copied out, as its API does each step),",
    `numThreads 1 and 2, each in its own worker thread, warmed up. Median of ${rounds} interleaved rounds of about ${roundMs} ms, each`,
    "begun once the process is idle (onnxruntime-web's threads spin for tens of ms after a run);",
    'ratios are medians of per-round ratios to the one instance of the same dtype (onnxruntime-web: to float32). The load average is',
    `the 1-minute one read after each of the row's rounds (the machine's ${os.cpus().length} cores may be shared: a 2-thread ratio needs 2 free cores).`, ''];
  for (const { nk, rows, error, load } of results) {
    lines.push(`### nk = ${nk}`, '', `Pool output within ${error.toExponential(1)} of one instance's (relative to its largest value); 1-minute load average ${load}.`, '',
      '| contender | time per step | vs one instance | load average |', '|---|---:|---:|---:|');
    for (const r of rows) lines.push(`| ${r.name} | ${r.ms.toFixed(3)} ms | ${r.vsSingle.toFixed(2)}x | ${r.load} |`);
    lines.push('');
  }
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
  if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
    const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  const quick = process.argv.includes('--quick');
  const at = process.argv.indexOf('--nk');
  const lengths = at > 0 ? process.argv[at + 1].split(',').map(Number) : POOL_KV_LENGTHS;
  await poolKvBench({ rounds: quick ? 3 : 9, roundMs: quick ? 100 : 200, lengths, ort: !process.argv.includes('--no-ort') });
}
