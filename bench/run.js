#!/usr/bin/env node
// run.js - npm run bench: attention-wasm side by side with what people would
// pick instead, in one Node process, single thread, float32:
//   attention-wasm (relaxed-SIMD, SIMD128 and scalar builds), plain JS loops,
//   @tensorflow/tfjs-backend-wasm (XNNPACK, SIMD, 1 thread),
//   onnxruntime-web (wasm, 1 thread, a MatMul/Softmax/MatMul graph built here),
//   and two peak probes (bench/peak.c): SIMD128 mul+add and relaxed_madd.
// The relaxed module's "of peak" is against the relaxed probe. Node 20 runs
// relaxed SIMD only with --experimental-wasm-relaxed-simd: without it this
// script runs itself again with the flag. The pool against onnxruntime-web
// with threads is bench/pool.js, and the pool's split KV cache at decode
// shapes bench/pool-kv.js, both run at the end (not with --only/--shape).
// Contenders run interleaved round by round; each cell is the median of the
// rounds. FLOPs per call: 4 * heads * nq * nk * d (causal counted in full, so
// skipping masked blocks shows as a higher rate). Writes bench/RESULTS.md.
// Timings are reported here, never asserted in tests.
//
//   npm run bench            all shapes
//   npm run bench -- --quick fewer rounds (a smoke run)
//   npm run bench -- --only 1024  only shapes whose label contains "1024"
//                            (no explorer timing; RESULTS.md is left alone)
//   npm run bench -- --shape 8,512,512,128[,causal]   one shape of your own:
//                            heads, nq, nk, d (same; RESULTS.md is left alone)
// After the shapes, the features of issue 11 against their baselines (a KV
// cache against the same decode call without one and onnxruntime-web; a
// sliding window against full causal attention); --only matches their
// labels too.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

import { ensureBuilt } from '../scripts/ensure-built.js';
import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { computeExample, normalizeConfig } from '../web/worked/computation.js';
import { attentionModel } from './onnx-graph.js';
import { poolBench, poolMarkdown } from './pool.js';
import { poolKvBench, poolKvMarkdown } from './pool-kv.js';
import { decodePeersBench, decodePeersMarkdown, decodePeersSvg } from './decode-peers.js';
import { explorerTimings } from './explorer.js';
import { modelSpeed, modelSpeedLines } from './model-speed.js';
import { loadPeakProbes, peakFlops } from './peak.js';
import { random } from './random.js';
import { cpuModel } from './cpu.js';

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');
const onlyAt = process.argv.indexOf('--only');
const shapeAt = process.argv.indexOf('--shape');
const custom = shapeAt > 0 ? parseShape(process.argv[shapeAt + 1] ?? '') : null;
const only = custom ? custom.label : onlyAt > 0 ? process.argv[onlyAt + 1] ?? '' : null;

function parseShape(text) {
  const [heads, nq, nk, d, flag] = text.split(',');
  const shape = { heads: Number(heads), nq: Number(nq), nk: Number(nk), d: Number(d), causal: flag === 'causal' };
  if (![shape.heads, shape.nq, shape.nk, shape.d].every((x) => Number.isInteger(x) && x > 0) || (flag !== undefined && flag !== 'causal')) {
    console.error(`bench: --shape wants heads,nq,nk,d[,causal] (positive integers), got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  shape.label = `${shape.causal ? 'causal ' : ''}${shape.heads} heads x nq=${shape.nq}, nk=${shape.nk}, d=${shape.d}`;
  return shape;
}
const ROUNDS = quick ? 3 : 9;
// RESULTS.md's hand-written section from this heading on survives rewrites.
const MEASURED_ONCE = '## Measured once';
// Declared before the run's top-level code, which writes the results before the end of this file is reached.
const PER_CPU = '## Of peak, per CPU model';
const ROUND_MS = quick ? 15 : 40; // time each contender gets per round

ensureBuilt();

// ---- the peak probes ---------------------------------------------------------
const probes = await loadPeakProbes();
if (!probes.relaxed) console.log(`(relaxed peak probe skipped: ${probes.relaxedError})`);
const PEAK_ITERATIONS = 200000;
const PEAK_FLOPS = peakFlops(PEAK_ITERATIONS);

// ---- contenders ---------------------------------------------------------------
const simd = await loadAttention({ deterministic: true });
const scalar = await loadAttention({ simd: false });
const relaxedFile = `${root}dist/attention-relaxed.wasm`;
const relaxed = existsSync(relaxedFile) ? await loadAttention({ wasm: readFileSync(relaxedFile) }) : null;
if (!relaxed) console.log('(dist/attention-relaxed.wasm missing: build.sh skipped it; no relaxed rows)');

const tf = await import('@tensorflow/tfjs-core');
const tfWasm = await import('@tensorflow/tfjs-backend-wasm');
tfWasm.setThreadsCount(1);
await tf.setBackend('wasm');
await tf.ready();

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';

// Plain JS: the loops a developer writes by hand, float64 accumulation.
function jsAttention(q, k, v, heads, nq, nk, d, causal, out) {
  const scale = 1 / Math.sqrt(d);
  const row = new Float64Array(nk);
  for (let h = 0; h < heads; h++) {
    const qo = h * nq * d, ko = h * nk * d;
    for (let i = 0; i < nq; i++) {
      let max = -Infinity;
      const end = causal ? Math.min(i + 1, nk) : nk;
      for (let j = 0; j < end; j++) {
        let dot = 0;
        for (let p = 0; p < d; p++) dot += q[qo + i * d + p] * k[ko + j * d + p];
        row[j] = dot * scale;
        if (row[j] > max) max = row[j];
      }
      let sum = 0;
      for (let j = 0; j < end; j++) sum += row[j] = Math.exp(row[j] - max);
      for (let c = 0; c < d; c++) {
        let acc = 0;
        for (let j = 0; j < end; j++) acc += row[j] * v[ko + j * d + c];
        out[qo + i * d + c] = acc / sum;
      }
    }
  }
}

async function contenders(shape) {
  const { heads, nq, nk, d, causal } = shape;
  const q = random(heads * nq * d, 1), k = random(heads * nk * d, 2), v = random(heads * nk * d, 3);
  const out = new Float32Array(heads * nq * d);
  const opts = { heads, nq, nk, dk: d, dv: d, causal, out };
  const list = [
    ...(relaxed ? [{ name: 'attention-wasm relaxed SIMD', ours: true, relaxed: true, run: () => relaxed.sdpa(q, k, v, opts) }] : []),
    { name: 'attention-wasm SIMD128', ours: true, simd128: true, run: () => simd.sdpa(q, k, v, opts) },
  ];
  const work = 4 * heads * nq * nk * d;
  if (work <= 1.5e9) list.push({ name: 'attention-wasm scalar', ours: true, run: () => scalar.sdpa(q, k, v, opts) });
  if (work <= 1.5e9) list.push({ name: 'plain JS loops', run: () => jsAttention(q, k, v, heads, nq, nk, d, causal, out) });

  // tfjs: K transposed explicitly first (its fast path), and the obvious transposeB call.
  const tq = tf.tensor3d(q, [heads, nq, d]), tk = tf.tensor3d(k, [heads, nk, d]), tv = tf.tensor3d(v, [heads, nk, d]);
  const mask = causal ? tf.tensor2d(Float32Array.from({ length: nq * nk }, (_, x) => (x % nk > Math.floor(x / nk) ? -Infinity : 0)), [nq, nk]) : null;
  const scale = 1 / Math.sqrt(d);
  const tfRun = (transposeFirst) => () => {
    const o = tf.tidy(() => {
      let s = transposeFirst ? tf.matMul(tq, tf.transpose(tk, [0, 2, 1])) : tf.matMul(tq, tk, false, true);
      s = tf.mul(s, scale);
      if (mask) s = tf.add(s, mask);
      return tf.matMul(tf.softmax(s), tv);
    });
    o.dataSync();
    o.dispose();
  };
  list.push({ name: 'tfjs-wasm (K transposed first)', peer: true, run: tfRun(true) });
  list.push({ name: 'tfjs-wasm matMul(transposeB)', peer: true, run: tfRun(false) });

  const session = await ort.InferenceSession.create(attentionModel({ heads, nq, nk, d, scale, causal }), { executionProviders: ['wasm'] });
  const feeds = { Q: new ort.Tensor('float32', q, [heads, nq, d]), K: new ort.Tensor('float32', k, [heads, nk, d]), V: new ort.Tensor('float32', v, [heads, nk, d]) };
  list.push({ name: 'onnxruntime-web (graph)', peer: true, async: true, run: () => session.run(feeds) });
  list.push({ name: 'SIMD128 peak probe', peak: true, run: () => probes.simd(PEAK_ITERATIONS) });
  if (probes.relaxed) list.push({ name: 'relaxed peak probe', peak: true, relaxed: true, run: () => probes.relaxed(PEAK_ITERATIONS) });
  const cleanup = () => {
    tq.dispose(); tk.dispose(); tv.dispose(); mask?.dispose();
    return session.release();
  };
  return { list, cleanup, work };
}

// Collects garbage between contenders when node runs with --expose-gc (npm
// run bench does), so one library's garbage is not collected on another's time.
const collect = globalThis.gc ?? (() => {});

// Runs `c` for about ROUND_MS, returns milliseconds per call.
async function timeRound(c) {
  collect();
  let calls = 0;
  const t0 = performance.now();
  let t = t0;
  do {
    for (let i = 0; i < c.batch; i++) {
      if (c.async) await c.run();
      else c.run();
    }
    calls += c.batch;
    t = performance.now();
  } while (t - t0 < ROUND_MS);
  return (t - t0) / calls;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const SHAPES = [
  { label: 'n=4, d=3', heads: 1, nq: 4, nk: 4, d: 3, causal: false },
  { label: 'n=64, d=64', heads: 1, nq: 64, nk: 64, d: 64, causal: false },
  { label: 'n=256, d=64', heads: 1, nq: 256, nk: 256, d: 64, causal: false },
  { label: 'n=1024, d=64', heads: 1, nq: 1024, nk: 1024, d: 64, causal: false },
  { label: 'n=4096, d=64', heads: 1, nq: 4096, nk: 4096, d: 64, causal: false },
  { label: 'causal n=1024, d=64', heads: 1, nq: 1024, nk: 1024, d: 64, causal: true },
  { label: '12 heads x n=512, d=64', heads: 12, nq: 512, nk: 512, d: 64, causal: false },
  // Decoding: one new query against the keys so far.
  { label: 'decode nq=1, nk=4096, d=64', heads: 1, nq: 1, nk: 4096, d: 64, causal: false },
  { label: 'decode 12 heads x nq=1, nk=1024, d=64', heads: 12, nq: 1, nk: 1024, d: 64, causal: false },
];

const results = [];
for (const shape of custom ? [custom] : SHAPES.filter((s) => only === null || s.label.includes(only))) {
  const { list, cleanup, work } = await contenders(shape);
  // Warm up (JIT tiers, caches) for about two rounds' time, then size each
  // contender's batch from the warm speed.
  for (const c of list) {
    let calls = 0;
    let t0 = performance.now();
    while (performance.now() - t0 < 2 * ROUND_MS || calls < 3) {
      if (c.async) await c.run();
      else c.run();
      calls++;
    }
    t0 = performance.now();
    for (let i = 0; i < 3; i++) {
      if (c.async) await c.run();
      else c.run();
    }
    const per = (performance.now() - t0) / 3;
    c.batch = Math.max(1, Math.floor(ROUND_MS / 8 / Math.max(per, 1e-4)));
    c.times = [];
  }
  // Each round starts at the next contender, so no one always runs first
  // (right after the peak probes) or last.
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < list.length; j++) {
      const c = list[(r + j) % list.length];
      c.times.push(await timeRound(c));
    }
  }
  // Rates against the peak and against the fastest peer are medians of
  // per-round ratios: the contenders of one round ran seconds apart, so the
  // machine's drift (this one is shared) mostly cancels out of each ratio.
  const peak = list.find((c) => c.peak && !c.relaxed);
  const peakRelaxed = list.find((c) => c.peak && c.relaxed) ?? null;
  const peakGflops = PEAK_FLOPS / (median(peak.times) * 1e6);
  const peakRelaxedGflops = peakRelaxed ? PEAK_FLOPS / (median(peakRelaxed.times) * 1e6) : null;
  const rows = list.filter((c) => !c.peak).map((c) => {
    const ms = median(c.times);
    return { name: c.name, ours: c.ours, peer: c.peer, relaxed: c.relaxed, simd128: c.simd128, times: c.times, us: ms * 1000, gflops: work / (ms * 1e6) };
  });
  const fastestPeer = rows.filter((r) => r.peer).reduce((a, b) => (a.us < b.us ? a : b));
  const simdRow = rows.find((r) => r.simd128);
  for (const r of rows) {
    // Each build against its own probe: relaxed against relaxed_madd.
    const probe = r.relaxed && peakRelaxed ? peakRelaxed : peak;
    r.ofPeak = median(r.times.map((t, i) => probe.times[i] * work / PEAK_FLOPS / t));
    r.vsPeer = median(r.times.map((t, i) => fastestPeer.times[i] / t));
    r.vsSimd = median(r.times.map((t, i) => simdRow.times[i] / t));
  }
  results.push({ shape, peakGflops, peakRelaxedGflops, rows, fastestPeer: fastestPeer.name });
  printShape(results.at(-1));
  await cleanup();
}

// ---- features against their baselines -----------------------------------------
// Each feature runs its contenders interleaved as above; "vs baseline" is the
// median of per-round time ratios baseline / contender.
async function featureContenders(label) {
  const d = 64;
  if (label.startsWith('KV cache')) {
    const [heads, kvHeads, nk] = [12, 4, 4096];
    const q = random(heads * d, 1), k = random(kvHeads * nk * d, 2), v = random(kvHeads * nk * d, 3);
    const out = new Float32Array(heads * d);
    const cache = simd.kvCache({ kvHeads, dk: d, capacity: nk });
    cache.append(k, v);
    // onnxruntime-web's graph has no grouped-query attention: K and V
    // repeated to 12 heads, as a user of that graph would feed them.
    const rep = (x) => {
      const r = new Float32Array(heads * nk * d);
      for (let h = 0; h < heads; h++) r.set(x.subarray(Math.floor(h / 3) * nk * d, (Math.floor(h / 3) + 1) * nk * d), h * nk * d);
      return r;
    };
    const session = await ort.InferenceSession.create(attentionModel({ heads, nq: 1, nk, d, scale: 1 / Math.sqrt(d), causal: false }), { executionProviders: ['wasm'] });
    const feeds = { Q: new ort.Tensor('float32', q, [heads, 1, d]), K: new ort.Tensor('float32', rep(k), [heads, nk, d]), V: new ort.Tensor('float32', rep(v), [heads, nk, d]) };
    return {
      list: [
        { name: 'attention-wasm SIMD, kvCache.attend', run: () => cache.attend(q, { heads, out }) },
        { name: 'attention-wasm SIMD, sdpa (copies K, V)', baseline: true, run: () => simd.sdpa(q, k, v, { heads, kvHeads, nq: 1, nk, dk: d, dv: d, out }) },
        { name: 'onnxruntime-web (graph)', async: true, run: () => session.run(feeds) },
      ],
      cleanup: () => {
        cache.dispose();
        return session.release();
      },
    };
  }
  const n = 4096;
  const q = random(n * d, 1), k = random(n * d, 2), v = random(n * d, 3), out = new Float32Array(n * d);
  const opts = { nq: n, nk: n, dk: d, dv: d, causal: true, out };
  return {
    list: [
      { name: 'attention-wasm SIMD, window [255, 0]', run: () => simd.sdpa(q, k, v, { ...opts, window: [255, 0] }) },
      { name: 'attention-wasm SIMD, full causal', baseline: true, run: () => simd.sdpa(q, k, v, opts) },
    ],
    cleanup: () => {},
  };
}

const FEATURES = [
  'KV cache decode: 12 heads over 4 kv heads, nq=1, nk=4096, d=64',
  'sliding window 256 keys over n=4096, causal, d=64',
];
const features = [];
for (const label of FEATURES.filter((l) => custom === null && (only === null || l.includes(only)))) {
  const { list, cleanup } = await featureContenders(label);
  for (const c of list) {
    const t0 = performance.now();
    let calls = 0;
    while (performance.now() - t0 < 2 * ROUND_MS || calls < 3) {
      if (c.async) await c.run();
      else c.run();
      calls++;
    }
    c.batch = Math.max(1, Math.floor(calls * ROUND_MS / 8 / (performance.now() - t0)));
    c.times = [];
  }
  // Each round starts at the next contender, so no one always runs first
  // (right after the peak probes) or last.
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < list.length; j++) {
      const c = list[(r + j) % list.length];
      c.times.push(await timeRound(c));
    }
  }
  const base = list.find((c) => c.baseline);
  const rows = list.map((c) => ({ name: c.name, us: median(c.times) * 1000, vsBase: median(c.times.map((t, i) => base.times[i] / t)) }));
  features.push({ label, rows, baseline: base.name });
  console.log(`\n${label}`);
  for (const r of rows) console.log(`  ${r.name.padEnd(40)} ${fmtTime(r.us).padStart(11)}  ${r.vsBase.toFixed(2).padStart(6)}x vs ${base.name}`);
  await cleanup();
}

// The tiny transformer's training speed, Node and Chromium (--only model: this alone).
let modelResults = null;
if (only === null || only === 'model') {
  modelResults = await modelSpeed({ limit: quick ? 20 : 60 });
  console.log(`\n${modelSpeedLines(modelResults).join('\n')}`);
}

if (only !== null) process.exit(0);

// ---- the explorer's recompute -----------------------------------------------------
const explorer = [];
for (const tokens of [4, 32]) {
  const config = normalizeConfig({ tokens: Array.from({ length: tokens }, (_, i) => `t${i}`) });
  const t = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    let calls = 0;
    while (performance.now() - t0 < ROUND_MS) {
      computeExample(simd, { ...config, seed: (r * 1000 + calls) % 1000 });
      calls++;
    }
    t.push((performance.now() - t0) / calls);
  }
  explorer.push({ tokens, computeMs: median(t) });
}
// A browser that stops answering (its renderer idle, a frame never painted)
// costs this run its explorer row, not the pool, decode and RESULTS.md after it.
const EXPLORER_TIMEOUT_MS = 10 * 60 * 1000;
let browser = null;
try {
  browser = await Promise.race([explorerTimings({ rounds: ROUNDS }), new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error(`no painted frame in ${EXPLORER_TIMEOUT_MS / 60000} minutes`)), EXPLORER_TIMEOUT_MS).unref();
  })]);
} catch (err) {
  console.log(`\n(explorer in Chromium skipped: ${err.message.split('\n')[0]})`);
}
printExplorer(explorer, browser);
const POOL_TIMING = { rounds: ROUNDS, roundMs: quick ? 100 : 300 };
const poolResults = await poolBench(POOL_TIMING);
const POOL_KV_TIMING = { rounds: ROUNDS, roundMs: quick ? 100 : 200 };
const poolKvResults = await poolKvBench(POOL_KV_TIMING);
const DECODE_TIMING = quick ? { rounds: 3, roundMs: 80 } : { rounds: 7, roundMs: 150 };
const decodeResults = await decodePeersBench(DECODE_TIMING);
writeResults();
// A browser left behind by a timed-out explorer run must not keep the benchmark alive.
process.exit(0);

function fmtTime(us) {
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} µs`;
}

function printShape({ shape, peakGflops, peakRelaxedGflops, rows, fastestPeer }) {
  const relaxedProbe = peakRelaxedGflops ? `, relaxed probe: ${peakRelaxedGflops.toFixed(1)} GFLOP/s` : '';
  console.log(`\n${shape.label}   (${cpuModel()}; SIMD128 peak probe: ${peakGflops.toFixed(1)} GFLOP/s${relaxedProbe})`);
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(32)} ${fmtTime(r.us).padStart(11)}  ${r.gflops.toFixed(2).padStart(7)} GFLOP/s  ${(100 * r.ofPeak).toFixed(1).padStart(5)}% of peak  ${r.vsPeer.toFixed(2).padStart(6)}x vs ${fastestPeer}  ${r.vsSimd.toFixed(2).padStart(5)}x vs SIMD128`);
  }
}

function printExplorer(node, chromium) {
  console.log('\nexplorer recompute (the handbook model, 1 head)');
  for (const e of node) console.log(`  ${String(e.tokens).padStart(2)} tokens: compute ${fmtTime(e.computeMs * 1000)} (Node)`);
  if (chromium) for (const e of chromium) console.log(`  ${String(e.tokens).padStart(2)} tokens: change -> recompute -> DOM -> layout ${e.ms.toFixed(2)} ms (Chromium)`);
}

// The kernels against their peak probes at n = 1024, d = 64, one row per CPU
// model this file has seen: this run's row replaces its CPU's, the others stay
// (the machine's CPU varies between runs, and a ratio means little without it).
function perCpuLines(previous, cpu) {
  const rows = new Map();
  const at = previous.indexOf(PER_CPU);
  if (at >= 0) {
    const section = previous.slice(at + PER_CPU.length).split('\n## ')[0];
    for (const line of section.split('\n')) {
      const m = /^\| ([^|]+) \|/.exec(line);
      if (m && !line.startsWith('| CPU') && !line.startsWith('|---')) rows.set(m[1].trim(), line);
    }
  }
  const r = results.find((x) => x.shape.label === 'n=1024, d=64');
  if (r) {
    const pick = (name) => r.rows.find((x) => x.name === name);
    const relaxed = pick('attention-wasm relaxed SIMD'), simd = pick('attention-wasm SIMD128');
    const cell = (x, probe) => (x && probe ? `${x.gflops.toFixed(1)} / ${probe.toFixed(1)} = ${(x.ofPeak).toFixed(2)}` : 'not run');
    rows.set(cpu.trim(), `| ${cpu.trim()} | ${cell(relaxed, r.peakRelaxedGflops)} | ${cell(simd, r.peakGflops)} | ${new Date().toISOString().slice(0, 10)}, load ${os.loadavg()[0].toFixed(1)} |`);
  }
  return [PER_CPU, '', 'n = 1024, d = 64, one head: GFLOP/s of the kernel / of its peak probe (relaxed_madd for the relaxed module, SIMD128',
    'mul+add for SIMD128) = the fraction of peak, as medians of per-round ratios. Each run replaces its CPU\'s row.', '',
    '| CPU | relaxed SIMD | SIMD128 | run |', '|---|---:|---:|---|', ...rows.values(), ''];
}

function writeResults() {
  const cpu = cpuModel();
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpu}, ${os.cpus().length} cores, ${os.platform()} ${os.release()}, Node ${process.version}, V8 ${process.versions.v8}.`,
    `Single thread, float32, median of ${ROUNDS} interleaved rounds of about ${ROUND_MS} ms per contender.`,
    '"of peak" and "vs peer" are medians of the per-round ratios (each round runs every contender once).',
    'FLOPs per call: 4 * heads * nq * nk * d (causal counted in full). "vs peer" is the time of the faster of',
    'tfjs-wasm and onnxruntime-web divided by this contender\'s time (above 1 means faster than both).',
    'The machine is shared, so absolute numbers move from run to run; the ratios within one shape are what this measures.',
    '',
  ];
  const previous = existsSync(`${root}bench/RESULTS.md`) ? readFileSync(`${root}bench/RESULTS.md`, 'utf8') : '';
  lines.push(...perCpuLines(previous, cpu));
  for (const { shape, peakGflops, peakRelaxedGflops, rows } of results) {
    const relaxedProbe = peakRelaxedGflops ? `, relaxed_madd peak probe: ${peakRelaxedGflops.toFixed(1)} GFLOP/s` : '';
    lines.push(`## ${shape.label}`, '', `${cpu}. SIMD128 peak probe in the same rounds: ${peakGflops.toFixed(1)} GFLOP/s${relaxedProbe}`, '',
      '| contender | time per call | GFLOP/s | of peak | vs peer | vs SIMD128 |', '|---|---:|---:|---:|---:|---:|');
    for (const r of rows) lines.push(`| ${r.name} | ${fmtTime(r.us)} | ${r.gflops.toFixed(2)} | ${(100 * r.ofPeak).toFixed(1)}% | ${r.vsPeer.toFixed(2)}x | ${r.vsSimd.toFixed(2)}x |`);
    lines.push('');
  }
  for (const { label, rows, baseline } of features) {
    lines.push(`## ${label}`, '', `"vs baseline": median of per-round ratios, time of ${baseline} / time of the contender.`, '',
      '| contender | time per call | vs baseline |', '|---|---:|---:|');
    for (const r of rows) lines.push(`| ${r.name} | ${fmtTime(r.us)} | ${r.vsBase.toFixed(2)}x |`);
    lines.push('');
  }
  lines.push('## Explorer recompute', '', '| tokens | compute (Node) | scale change to painted frame (Chromium, median) |', '|---:|---:|---:|');
  for (const e of explorer) {
    const b = browser?.find((x) => x.tokens === e.tokens);
    lines.push(`| ${e.tokens} | ${fmtTime(e.computeMs * 1000)} | ${b ? `${b.ms.toFixed(2)} ms` : 'not run'} |`);
  }
  if (modelResults) lines.push('', '## Tiny transformer training', '', ...modelSpeedLines(modelResults).slice(1).map((l) => `- ${l.trim()}`));
  lines.push('', ...poolMarkdown(poolResults, POOL_TIMING));
  lines.push(...poolKvMarkdown(poolKvResults, POOL_KV_TIMING));
  lines.push(...decodePeersMarkdown(decodeResults, DECODE_TIMING));
  writeFileSync(`${root}docs/decode-peers.svg`, decodePeersSvg(decodeResults));
  // The hand-written section of measurements taken once (the reasons behind
  // kernel and API choices) is kept from the previous file.
  const kept = previous.indexOf(MEASURED_ONCE);
  if (kept >= 0) lines.push(previous.slice(kept).trimEnd(), '');
  writeFileSync(`${root}bench/RESULTS.md`, lines.join('\n'));
  console.log('\nwrote bench/RESULTS.md');
}
