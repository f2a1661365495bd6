#!/usr/bin/env node
// pool.js - the worker pool (web/pool.js) with 1, 2 and all threads (copy
// path), and 2 and all on shared memory where it is available
// (docs/pool.md#memory), there also with its inputs and output made by
// pool.array (read and written in place), against one instance on the calling thread (the
// same module) and onnxruntime-web
// with numThreads 1 and all, each onnxruntime configuration in a worker
// thread of its own (bench/ort-worker.js: it reads numThreads once, when its
// wasm starts), warmed up. Contenders run interleaved round by round; cells
// are medians, ratios are medians of per-round ratios, as in bench/run.js.
// bench/run.js runs this at the end of npm run bench; alone:
//   node bench/pool.js [--quick]
// (Node 20 needs --experimental-wasm-relaxed-simd for the relaxed module;
// without it this runs itself again with the flag.)

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { createAttentionPool } from '../web/pool.js';
import { random } from './random.js';
import { cpuModel, settle } from './cpu.js';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const POOL_SHAPES = [
  { label: 'n=4, d=3', heads: 1, nq: 4, nk: 4, d: 3 },
  // Just above the size where the pool starts to split (SPLIT_MIN_FLOPS).
  { label: '2 heads x n=264, d=64', heads: 2, nq: 264, nk: 264, d: 64 },
  { label: 'n=1024, d=64', heads: 1, nq: 1024, nk: 1024, d: 64 },
  { label: '12 heads x n=512, d=64', heads: 12, nq: 512, nk: 512, d: 64 },
  { label: 'n=4096, d=64', heads: 1, nq: 4096, nk: 4096, d: 64 },
];

// An onnxruntime-web configuration in its own worker thread.
async function ortContender(numThreads, shape) {
  const worker = new Worker(new URL('./ort-worker.js', import.meta.url));
  const ask = (message) => new Promise((resolve, reject) => {
    worker.once('message', (m) => (m.type === 'error' ? reject(new Error(m.message)) : resolve(m)));
    worker.postMessage(message);
  });
  const ready = await ask({ type: 'init', numThreads, shape: { ...shape, causal: false } });
  return {
    name: `onnxruntime-web numThreads ${ready.threads}`,
    peer: true,
    // Times itself in its thread; the round trip of the message is not counted.
    async round(ms) {
      return (await ask({ type: 'round', ms })).msPerCall;
    },
    close: () => worker.terminate(),
  };
}

// A contender that the calling thread times (bench/decode-peers.js uses it too).
export function timed(name, run, extra = {}) {
  return {
    name,
    ...extra,
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

/**
 * Runs the pool benchmark; returns one result per shape:
 * { shape, rows: [{ name, ms, vsSingle, vsOrt }] }.
 */
export async function poolBench({ rounds = 7, roundMs = 300, shapes = POOL_SHAPES, log = console.log } = {}) {
  const all = os.availableParallelism?.() ?? os.cpus().length;
  const threadCounts = [...new Set([1, 2, all])];
  const single = await loadAttention();
  const pools = [];
  for (const threads of threadCounts) pools.push(await createAttentionPool({ threads, memory: 'copy' }));
  for (const threads of threadCounts.filter((t) => t > 1)) {
    const pool = await createAttentionPool({ threads });
    if (pool.memory === 'shared') pools.push(pool);
    else pool.dispose();
  }
  log(`pool benchmark on ${cpuModel()}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} at the start`);
  const results = [];
  for (const shape of shapes) {
    const { heads, nq, nk, d } = shape;
    const q = random(heads * nq * d, 1), k = random(heads * nk * d, 2), v = random(heads * nk * d, 3);
    const options = { heads, nq, nk, dk: d, dv: d };
    const list = [timed(`one instance, calling thread (${single.isa})`, () => single.sdpa(q, k, v, options), { single: true })];
    for (const pool of pools) {
      const label = pool.threads === all ? `${pool.threads} (all)` : `${pool.threads}`;
      const name = `pool, ${label} thread${pool.threads > 1 ? 's' : ''}, ${pool.memory}`;
      list.push(timed(name, () => pool.sdpa(q, k, v, options)));
      if (pool.memory !== 'shared') continue;
      // The same pool with q, k, v and out made by pool.array: read and written in place.
      const [qa, ka, va] = [q, k, v].map((x) => {
        const a = pool.array(x.length);
        a.set(x); // filled in place (a typed array's map would make an ordinary array)
        return a;
      });
      const into = { ...options, out: pool.array(heads * nq * d) };
      list.push(timed(`${name}, in place`, () => pool.sdpa(qa, ka, va, into)));
    }
    for (const numThreads of [...new Set([1, all])]) {
      try {
        list.push(await ortContender(numThreads, shape));
      } catch (err) {
        log(`(onnxruntime-web numThreads ${numThreads} skipped: ${err.message})`);
      }
    }
    // Warm-up round (JIT, worker instances' memory), not counted.
    for (const c of list) await c.round(roundMs / 3);
    const times = list.map(() => []);
    // Each round starts at the next contender, so no one always runs first.
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < list.length; j++) {
        const i = (r + j) % list.length;
        await settle(); // onnxruntime-web's spinning threads take no core from the next contender
        times[i].push(await list[i].round(roundMs));
      }
    }
    const singleTimes = times[0];
    const ortIndexes = list.map((c, i) => (c.peer ? i : -1)).filter((i) => i >= 0);
    // The faster onnxruntime configuration of each round.
    const ortBest = ortIndexes.length ? singleTimes.map((_, r) => Math.min(...ortIndexes.map((i) => times[i][r]))) : null;
    const rows = list.map((c, i) => ({
      name: c.name,
      ms: median(times[i]),
      vsSingle: median(times[i].map((t, r) => singleTimes[r] / t)),
      vsOrt: ortBest ? median(times[i].map((t, r) => ortBest[r] / t)) : null,
      diffUs: median(times[i].map((t, r) => (t - singleTimes[r]) * 1000)),
    }));
    results.push({ shape, rows });
    log(`\npool: ${shape.label} (load average ${os.loadavg()[0].toFixed(2)} after it)`);
    for (const r of rows) {
      const time = r.ms >= 1 ? `${r.ms.toFixed(2)} ms` : `${(r.ms * 1000).toFixed(2)} µs`;
      log(`  ${r.name.padEnd(44)} ${time.padStart(10)}  ${r.vsSingle.toFixed(2).padStart(5)}x vs one instance  ${r.vsOrt === null ? '' : `${r.vsOrt.toFixed(2).padStart(5)}x vs faster ORT`}`);
    }
    for (const c of list) await c.close();
  }
  for (const pool of pools) pool.dispose();
  return results;
}

/** Markdown lines for bench/RESULTS.md. */
export function poolMarkdown(results, { rounds, roundMs }) {
  const lines = ['## Pool: several cores', '',
    `Worker pool (web/pool.js, default module) with 1, 2 and all threads copying each part to its worker (memory 'copy'), and 2 and`,
    `all threads on one shared memory (memory 'shared', where SharedArrayBuffer exists; "in place": q, k, v and out made by pool.array,`,
    `so the call copies none of them), one instance on the calling thread (same module),`,
    `and onnxruntime-web with numThreads 1 and all, each in its own worker thread, warmed up; median of ${rounds} interleaved rounds`,
    `of about ${roundMs} ms each, each round begun once the process is idle (onnxruntime-web's threads spin for tens of ms after a run).`,
    'Ratios are medians of per-round ratios; "vs ORT" is against the faster ORT configuration of each round.',
    'For n=4, d=3, "extra" is the median per-round difference to the synchronous call.',
    `CPU: ${cpuModel()}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} when written.`, ''];
  for (const { shape, rows } of results) {
    lines.push(`### ${shape.label}`, '', '| contender | time per call | vs one instance | vs faster ORT | extra |', '|---|---:|---:|---:|---:|');
    for (const r of rows) {
      const time = r.ms >= 1 ? `${r.ms.toFixed(2)} ms` : `${(r.ms * 1000).toFixed(2)} µs`;
      lines.push(`| ${r.name} | ${time} | ${r.vsSingle.toFixed(2)}x | ${r.vsOrt === null ? '-' : `${r.vsOrt.toFixed(2)}x`} | ${shape.nq <= 4 ? `${r.diffUs.toFixed(2)} µs` : '-'} |`);
    }
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
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1] : null;
  await poolBench({ rounds: quick ? 3 : 7, roundMs: quick ? 100 : 300, shapes: POOL_SHAPES.filter((s) => only === null || s.label.includes(only)) });
}
