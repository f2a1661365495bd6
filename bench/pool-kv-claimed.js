#!/usr/bin/env node
// pool-kv-claimed.js - would a KV cache in shared memory decode faster than
// the pool's shards (web/pool/kvcache.js)? What such a cache would change is
// how a step's work is dealt: instead of each thread attending the segments
// it holds (a fixed half each, the answer coming back by message), both
// threads claim key chunks from one counter (the worker from the front, the
// calling thread from the back, as the shared sdpa path claims blocks), so a
// thread slowed by another program takes fewer chunks, and the calling
// thread learns the last chunk is done from memory (Atomics.wait), not
// from a message. This measures exactly that dealing, with each thread
// holding a whole copy of the cache in its own instance (no threads build
// needed): every chunk is read once, by whichever thread claims it, so the
// memory traffic is a shared cache's. Each chunk is one attendRange call
// over all heads with its log-sum-exp, merged on the calling thread
// (SoftmaxMerge, as the pool merges its parts).
// Contenders, interleaved round by round, each round starting at the next:
// one instance's cache, pool.kvCache with 2 threads, the same chunks dealt
// in fixed halves (the worker the first, the calling thread the second;
// completion from memory too), and the claimed chunks; medians of
// per-round ratios to the one instance.
//   node bench/pool-kv-claimed.js [--nk 32768] [--chunk 2048] [--dtype float32|int8] [--rounds 9]
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { createAttentionPool } from '../web/pool.js';
import { SoftmaxMerge } from '../web/pool/kvshard.js';
import { claimBack, claimFront } from '../web/pool/shared.js';
import { cpuModel } from './cpu.js';
import { POOL_KV_SHAPE } from './pool-kv.js';
import { random } from './random.js';

const { heads, kvHeads, d } = POOL_KV_SHAPE;
// Control words (Int32 indices): CLAIM as shared.js packs it (front | back << 16), DONE; the chunks' results follow.
const CLAIM = 0, DONE = 1, HEADER = 4;
const chunkFloats = heads * d + heads; // a chunk's output rows, then its lse

async function filledCache(spec) {
  const attn = await loadAttention();
  const cache = attn.kvCache(spec.options);
  cache.append(random(kvHeads * spec.nk * d, 2), random(kvHeads * spec.nk * d, 3));
  return cache;
}

// Chunk u of the step into the results: its output and lse at u's place.
function attendChunk(cache, q, spec, u, f32) {
  const r = cache.attendRange(q, { heads, nq: 1, scale: 1 / Math.sqrt(d), stats: true }, u * spec.chunk, spec.chunk);
  f32.set(r.output, HEADER + u * chunkFloats);
  f32.set(r.lse, HEADER + u * chunkFloats + heads * d);
}

if (!isMainThread) {
  const { spec, sab } = workerData;
  const cache = await filledCache(spec);
  const ctl = new Int32Array(sab), f32 = new Float32Array(sab);
  parentPort.on('message', ({ q, halves }) => {
    const next = halves ? (() => { let u = 0; return () => (u < spec.nk / spec.chunk / 2 ? u++ : -1); })() : () => claimFront(ctl);
    for (let u = next(); u >= 0; u = next()) {
      attendChunk(cache, q, spec, u, f32);
      Atomics.add(ctl, DONE, 1);
      Atomics.notify(ctl, DONE);
    }
  });
  parentPort.postMessage('ready');
} else {
  const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
  if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
    const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
  const nk = Number(arg('--nk', 32768)), chunk = Number(arg('--chunk', 2048)), dtype = arg('--dtype', 'float32');
  const rounds = Number(arg('--rounds', 9)), roundMs = 200;
  if (!(nk % (2 * chunk) === 0 && nk / chunk < 2 ** 15)) throw new RangeError(`--chunk ${chunk} must divide --nk ${nk} into an even number of chunks, fewer than 32768`);
  const options = { kvHeads, dk: d, capacity: nk, ...(dtype === 'float32' ? {} : { dtype }) };
  const spec = { nk, chunk, options }, chunks = nk / chunk;
  const sab = new SharedArrayBuffer((HEADER + chunks * chunkFloats) * 4);
  const ctl = new Int32Array(sab), f32 = new Float32Array(sab);
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { spec, sab } });
  await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  const mine = await filledCache(spec), one = await filledCache(spec);
  const pool = await createAttentionPool({ threads: 2, callerShare: true });
  const split = await pool.kvCache(options);
  await split.append(random(kvHeads * nk * d, 2), random(kvHeads * nk * d, 3));
  const q = random(heads * d, 1), out = new Float32Array(heads * d);

  // halves: the worker takes the first half of the chunks and the calling
  // thread the second, fixed, as the shards deal them but with the
  // completion read from memory: what claiming adds beyond that.
  const claimed = (halves = false) => {
    Atomics.store(ctl, DONE, 0);
    Atomics.store(ctl, CLAIM, chunks << 16);
    worker.postMessage({ q, halves });
    let u = halves ? chunks - 1 : claimBack(ctl);
    while (u >= 0 && (!halves || u >= chunks / 2)) {
      attendChunk(mine, q, spec, u, f32);
      Atomics.add(ctl, DONE, 1);
      u = halves ? u - 1 : claimBack(ctl);
    }
    for (let done = Atomics.load(ctl, DONE); done < chunks; done = Atomics.load(ctl, DONE)) Atomics.wait(ctl, DONE, done, 100);
    const merge = new SoftmaxMerge(1, heads, 1, d, 'bhsd');
    for (let u = 0; u < chunks; u++) {
      const at = HEADER + u * chunkFloats;
      merge.addPart(f32.subarray(at, at + heads * d), f32.subarray(at + heads * d, at + chunkFloats));
    }
    merge.finish(out);
    return out;
  };

  // The claimed chunks give one instance's result to float32 rounding, or this measures nothing.
  const want = one.attend(q, { heads });
  const got = claimed().slice();
  const halvesGot = claimed(true);
  let err = 0, big = 0;
  for (let i = 0; i < want.length; i++) err = Math.max(err, Math.abs(want[i] - got[i]), Math.abs(want[i] - halvesGot[i])), big = Math.max(big, Math.abs(want[i]));
  if (!(err <= 1e-5 * big)) throw new Error(`claimed chunks differ from one instance by ${err} (largest value ${big})`);

  const contenders = [
    ['one instance', () => one.attend(q, { heads, out })],
    ['pool.kvCache, 2 threads (shards)', () => split.attend(q, { heads, out })],
    [`fixed halves of chunks, 2 threads`, () => claimed(true)],
    [`claimed chunks of ${chunk}, 2 threads`, () => claimed()],
  ];
  const round = async (run, ms) => {
    let calls = 0;
    const t0 = performance.now();
    do {
      await run();
      calls++;
    } while (performance.now() - t0 < ms);
    return (performance.now() - t0) / calls;
  };
  for (const [, run] of contenders) await round(run, roundMs / 2);
  const times = contenders.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < contenders.length; j++) {
      const i = (r + j) % contenders.length;
      times[i].push(await round(contenders[i][1], roundMs));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${cpuModel()}: one decode step, ${heads} heads over ${kvHeads} kv heads, d = ${d}, nk = ${nk}, ${dtype} ` +
    `(claimed chunks within ${(err / big).toExponential(1)} of one instance; load average ${os.loadavg()[0].toFixed(2)} after)`);
  contenders.forEach(([name], i) => console.log(`  ${name.padEnd(38)} ${median(times[i]).toFixed(2).padStart(7)} ms  ` +
    `${median(times[i].map((t, r) => times[0][r] / t)).toFixed(2)}x vs one instance`));
  pool.dispose();
  await worker.terminate();
}
