#!/usr/bin/env node
// pool-ab.js - web/pool.js on its two memory paths (shared and copy,
// docs/pool.md#memory) and an earlier copy of it (--old path), all against
// one instance, side by side in one process: interleaved rounds, medians of
// per-round ratios; the CPU model and the load average beside them. Each
// contender's CPU time per call (all threads of the process) is printed
// too: what a call costs beyond one instance's work (copies, messages), a
// figure that another program's load changes far less than wall time. For checking a change to the pool
// (web/pool/), a copy of the earlier folder beside it, so its imports and
// worker resolve (delete it afterwards):
//   mkdir web/pool-old && git archive <commit> web/pool | tar -x --strip-components=2 -C web/pool-old
//   node bench/pool-ab.js --old web/pool-old/pool.js [--threads 2] [--only 1x4096]
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { createAttentionPool } from '../web/pool.js';
import { random } from './random.js';
import { cpuModel } from './cpu.js';

// Node 20 runs the relaxed module only with the flag: re-run with it.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
const threads = Number(arg('--threads', 2)), rounds = Number(arg('--rounds', 7)), roundMs = Number(arg('--ms', 300));
const oldPath = arg('--old', null);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const single = await loadAttention();
const contenders = [['one instance', null], ['pool, copy', await createAttentionPool({ threads, memory: 'copy' })]];
const sharedPool = await createAttentionPool({ threads });
// 'in place': the same pool with q, k, v and out in its memory (pool.array),
// so a call copies nothing of them.
if (sharedPool.memory === 'shared') contenders.push(['pool, shared', sharedPool], ['pool, shared, in place', { inPlace: sharedPool }]);
else sharedPool.dispose();
console.log(`${cpuModel()}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} at the start`);
if (oldPath) contenders.push(['pool (--old)', await (await import(new URL(oldPath, `file://${process.cwd()}/`))).createAttentionPool({ threads })]);
// The split with no cost of its own, what any pool's ratio is bounded by
// on this machine: a worker thread holding its own instance and its own
// copy of the inputs computes the first half of the heads (of the query
// rows, for one head), the calling thread the second half with its own,
// the start and the end signalled through shared memory (no message, no
// copy).
const halvesSource = `(async () => {
  const { workerData, parentPort } = await import('node:worker_threads');
  const { loadAttention } = await import(workerData.url);
  const attn = await loadAttention();
  const { q, k, v, o } = workerData.job;
  const flag = new Int32Array(workerData.sab);
  attn.sdpa(q, k, v, o);
  parentPort.postMessage('ready');
  for (let go = 1; ; go++) {
    while (Atomics.load(flag, 0) < go) Atomics.wait(flag, 0, go - 1);
    if (Atomics.load(flag, 2) === 1) break;
    attn.sdpa(q, k, v, o);
    Atomics.store(flag, 1, go);
    Atomics.notify(flag, 1);
  }
})();`;
async function independentHalves(q, k, v, o) {
  const sab = new SharedArrayBuffer(12), flag = new Int32Array(sab);
  const { heads, nq, dk, dv, nk } = o;
  // Heads when there are several, else query rows: either way each half is contiguous in q and in the output.
  const byHeads = heads > 1;
  const half = byHeads ? { ...o, heads: heads / 2 } : { ...o, nq: nq / 2 };
  const qCut = byHeads ? (heads / 2) * nq * dk : (nq / 2) * dk;
  const kCut = byHeads ? (heads / 2) * nk * dk : 0, vCut = byHeads ? (heads / 2) * nk * dv : 0;
  const job = { q: q.slice(0, qCut), k: byHeads ? k.slice(0, kCut) : k.slice(), v: byHeads ? v.slice(0, vCut) : v.slice(), o: half };
  const mine = { q: q.slice(qCut), k: k.slice(kCut), v: v.slice(vCut) };
  const url = new URL('../web/attention.js', import.meta.url).href;
  const worker = new Worker(halvesSource, { eval: true, workerData: { url, sab, job } });
  await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  let go = 0;
  return {
    run() {
      go++;
      Atomics.store(flag, 0, go);
      Atomics.notify(flag, 0);
      single.sdpa(mine.q, mine.k, mine.v, half);
      while (Atomics.load(flag, 1) < go) Atomics.wait(flag, 1, go - 1);
    },
    close() {
      Atomics.store(flag, 2, 1);
      Atomics.store(flag, 0, go + 1);
      Atomics.notify(flag, 0);
      return worker.terminate();
    },
  };
}

const only = arg('--only', null);
for (const [heads, n] of [[12, 512], [1, 1024], [1, 4096]].filter(([h, n]) => only === null || `${h}x${n}` === only)) {
  const d = 64, q = random(heads * n * d, 1), k = random(heads * n * d, 2), v = random(heads * n * d, 3);
  const o = { heads, nq: n, nk: n, dk: d, dv: d };
  const halves = await independentHalves(q, k, v, o);
  // Each in-place contender's copies of the inputs and its out, in its pool's memory.
  const placed = new Map();
  for (const [, c] of contenders) {
    if (!c?.inPlace) continue;
    const [qa, ka, va, out] = [q, k, v, q].map((x) => c.inPlace.array(x.length));
    qa.set(q); ka.set(k); va.set(v);
    placed.set(c, { qa, ka, va, o: { ...o, out } });
  }
  const run = (pool) => {
    if (pool === halves) return halves.run();
    if (pool?.inPlace) {
      const a = placed.get(pool);
      return pool.inPlace.sdpa(a.qa, a.ka, a.va, a.o);
    }
    return pool ? pool.sdpa(q, k, v, o) : single.sdpa(q, k, v, o);
  };
  contenders.push(['independent halves', halves]);
  const times = contenders.map(() => []), cpu = contenders.map(() => []);
  for (let r = -1; r < rounds; r++) {
    for (let j = 0; j < contenders.length; j++) {
      const i = (Math.max(r, 0) + j) % contenders.length;
      let calls = 0;
      const t0 = performance.now(), c0 = process.cpuUsage();
      do {
        await run(contenders[i][1]);
        calls++;
      } while (performance.now() - t0 < roundMs);
      const c = process.cpuUsage(c0);
      if (r >= 0) {
        times[i].push((performance.now() - t0) / calls);
        cpu[i].push((c.user + c.system) / 1000 / calls);
      }
    }
  }
  console.log(`${heads} head(s) x n=${n}, d=${d}, ${threads} threads (load average ${os.loadavg()[0].toFixed(2)} after it)`);
  contenders.forEach(([name], i) => console.log(`  ${name.padEnd(22)} ${median(times[i]).toFixed(2).padStart(8)} ms  ` +
    `${median(times[i].map((t, r) => times[0][r] / t)).toFixed(2)}x vs one instance  CPU ${median(cpu[i]).toFixed(2)} ms a call`));
  contenders.pop();
  await halves.close();
}
for (const [, pool] of contenders) pool?.dispose?.();
