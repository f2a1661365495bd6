#!/usr/bin/env node
// decode-peers.js - one decode step against context length, beside the op
// the models people run in a tab use for it: onnxruntime-web's
// com.microsoft.GroupQueryAttention (what transformers.js LLM exports call).
// Shape: one layer of a Llama-3.2-1B-like model, 32 query heads over 8 kv
// heads, d = 64, one new token over nk keys (nk - 1 held plus the new one).
//
// A step is what a decode loop does each token: the new token's key and
// value go in, the query attends every key.
//   ours:  cache.truncate(nk - 1); cache.append(k, v); cache.attend(q)
//          one instance (float32 and int8 caches), and pool.kvCache with
//          2 threads (float32 and int8)
//   GroupQueryAttention, numThreads 1 and 2, each in a worker thread of its
//   own (bench/ort-worker.js), warmed up:
//          "past fed": past_key/past_value (nk - 1 tokens) copied in and
//          present copied out each call, as its API makes a loop do;
//          "past as constants": the past held as initializers, only the new
//          token fed: its floor, since onnxruntime-web cannot keep a cache
//          between calls;
//          int8 past (its quantized-cache path) where its wasm build runs it.
// Every contender's output is checked against the one instance's float32
// cache before timing (int8 contenders against a float32 cache of the same
// rounded values); one that does not match is reported and not timed.
// Contenders run interleaved round by round; cells are medians; the CPU
// model and the load average are printed beside the ratios.
//   node bench/decode-peers.js [--quick] [--nk 1024,4096] [--svg docs/decode-peers.svg]
// bench/run.js runs it at the end of npm run bench.

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { createAttentionPool } from '../web/pool.js';
import { timed } from './pool.js';
import { random } from './random.js';
import { cpuModel, settle } from './cpu.js';

export const DECODE_SHAPE = { heads: 32, kvHeads: 8, d: 64 };
export const DECODE_LENGTHS = [1024, 2048, 4096, 8192, 16384, 32768];
// The int8 draws below are whole multiples of 1/127; GroupQueryAttention's
// per-tensor scale is 1/127, so both sides hold the same values.
const INT8_SCALE = 1 / 127;
// A float32 contender computes the same sums in another order; 1e-5 of the
// output's largest value is well above that and far below a wrong answer.
const MATCH_RTOL = 1e-5;
// int8 caches quantise per row (ours) or per tensor (its): they agree with
// the float32 reference of the rounded values to about 1e-3.
const MATCH_RTOL_INT8 = 2e-2;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function relDiff(a, b) {
  let m = 0, big = 0;
  for (let i = 0; i < b.length; i++) {
    m = Math.max(m, Math.abs(a[i] - b[i]));
    big = Math.max(big, Math.abs(b[i]));
  }
  return m / big;
}

// The same draws bench/ort-worker.js makes for a gqa shape: query, new key,
// new value, past keys, past values (bhsd per kv head).
function draws({ heads, kvHeads, d }, past, int8) {
  const rounded = (x) => (int8 ? Float32Array.from(x, (y) => Math.round(y * 127) * INT8_SCALE) : x);
  return {
    q: random(heads * d, 1), k: random(kvHeads * d, 2), v: random(kvHeads * d, 3),
    pastK: rounded(random(kvHeads * past * d, 4)), pastV: rounded(random(kvHeads * past * d, 5)),
  };
}

// (kvHeads, past, d) beside (kvHeads, 1, d): the whole cache as bhsd.
function joined(past, next, kvHeads, n, d) {
  const out = new Float32Array(kvHeads * (n + 1) * d);
  for (let h = 0; h < kvHeads; h++) {
    out.set(past.subarray(h * n * d, (h + 1) * n * d), h * (n + 1) * d);
    out.set(next.subarray(h * d, (h + 1) * d), (h * (n + 1) + n) * d);
  }
  return out;
}

async function gqaContender(numThreads, shape) {
  const worker = new Worker(new URL('./ort-worker.js', import.meta.url));
  const ask = (message) => new Promise((resolve, reject) => {
    worker.once('message', (m) => (m.type === 'error' ? reject(new Error(m.message)) : resolve(m)));
    worker.postMessage(message);
  });
  try {
    const ready = await ask({ type: 'init', numThreads, shape: { kind: 'gqa', ...shape } });
    const how = shape.constants ? 'past as constants' : 'past fed';
    return {
      name: `GroupQueryAttention ${shape.dtype ?? 'float32'}, ${how}, ${ready.threads} thread${ready.threads > 1 ? 's' : ''}`,
      dtype: shape.dtype ?? 'float32',
      output: async () => (await ask({ type: 'output' })).data,
      round: async (ms) => (await ask({ type: 'round', ms })).msPerCall,
      close: () => worker.terminate(),
    };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
}

function ours(name, dtype, cache, { q, k, v }, heads, past) {
  const step = async () => {
    await cache.truncate(past);
    await cache.append(k, v);
    return cache.attend(q, { heads });
  };
  return { ...timed(name, step, { dtype, output: step }), close: () => cache.dispose() };
}

/**
 * Runs the comparison; returns { cpu, rows: [{ nk, load, contenders: [{ name,
 * ms, vsOurs }], skipped: [..] }] }. vsOurs: median per-round ratio of the
 * contender's time to the one instance's float32 cache (above 1: slower).
 */
export async function decodePeersBench({ rounds = 7, roundMs = 150, lengths = DECODE_LENGTHS, threads = [1, 2], log = console.log } = {}) {
  const { heads, kvHeads, d } = DECODE_SHAPE;
  const single = await loadAttention();
  const pool = await createAttentionPool({ threads: 2, callerShare: true });
  const results = { cpu: cpuModel(), isa: single.isa, rows: [] };
  log(`decode step vs context length on ${results.cpu} (${os.cpus().length} cores), ${heads} query heads over ${kvHeads} kv heads, d = ${d}, ours ${single.isa}`);
  for (const nk of lengths) {
    const past = nk - 1;
    const loadBefore = os.loadavg()[0];
    const list = [], skipped = [];
    const reference = {};
    for (const dtype of ['float32', 'int8']) {
      const x = draws(DECODE_SHAPE, past, dtype === 'int8');
      const options = { kvHeads, dk: d, capacity: nk, ...(dtype === 'float32' ? {} : { dtype }) };
      const exact = single.kvCache({ kvHeads, dk: d, capacity: nk });
      exact.append(joined(x.pastK, x.k, kvHeads, past, d), joined(x.pastV, x.v, kvHeads, past, d));
      reference[dtype] = exact.attend(x.q, { heads });
      exact.dispose();
      const one = single.kvCache(options);
      one.append(x.pastK, x.pastV);
      list.push(ours(`ours, one instance, ${dtype}`, dtype, one, x, heads, past));
      const split = await pool.kvCache(options);
      await split.append(x.pastK, x.pastV);
      list.push(ours(`ours, pool 2 threads, ${dtype}`, dtype, split, x, heads, past));
    }
    for (const numThreads of threads) {
      for (const variant of [{ constants: false }, { constants: true }, { constants: false, dtype: 'int8' }]) {
        try {
          list.push(await gqaContender(numThreads, { heads, kvHeads, past, d, ...variant }));
        } catch (err) {
          skipped.push(`GroupQueryAttention ${variant.dtype ?? 'float32'} ${variant.constants ? 'constants' : 'fed'} ${numThreads}t: ${err.message.split('\n')[0].slice(0, 160)}`);
        }
      }
    }
    // Every contender computes the same step, or it is not timed.
    const timed = [];
    for (const c of list) {
      const err = relDiff(await c.output(), reference[c.dtype]);
      if (err <= (c.dtype === 'int8' ? MATCH_RTOL_INT8 : MATCH_RTOL)) timed.push(c);
      else {
        skipped.push(`${c.name}: output ${err.toExponential(1)} from the reference, not timed`);
        await c.close();
      }
    }
    for (const c of timed) await c.round(roundMs / 2);
    const times = timed.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < timed.length; j++) {
        const i = (r + j) % timed.length;
        await settle(); // onnxruntime-web's spinning threads take no core from the next contender
        times[i].push(await timed[i].round(roundMs));
      }
    }
    const base = timed.findIndex((c) => c.name === 'ours, one instance, float32');
    const contenders = timed.map((c, i) => ({
      name: c.name, ms: median(times[i]),
      vsOurs: base < 0 ? NaN : median(times[i].map((t, r) => t / times[base][r])),
    }));
    const load = `${loadBefore.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)}`;
    results.rows.push({ nk, load, contenders, skipped });
    log(`\nnk = ${nk} (load average ${load})`);
    for (const c of contenders) log(`  ${c.name.padEnd(58)} ${`${c.ms.toFixed(3)} ms`.padStart(11)}  ${c.vsOurs.toFixed(2).padStart(6)}x ours one instance float32`);
    for (const s of skipped) log(`  (skipped) ${s}`);
    for (const c of timed) await c.close();
  }
  pool.dispose();
  return results;
}

/** Markdown lines for bench/RESULTS.md: a table per context length. */
export function decodePeersMarkdown({ cpu, isa, rows }, { rounds, roundMs }) {
  const { heads, kvHeads, d } = DECODE_SHAPE;
  const names = [...new Set(rows.flatMap((r) => r.contenders.map((c) => c.name)))];
  const lines = ['## Decode against context length: GroupQueryAttention', '',
    `One decode step (the new token's key and value appended, its query attending every key), ${heads} query heads over ${kvHeads} kv heads,`,
    `d = ${d}, on ${cpu} (ours: the ${isa} module). onnxruntime-web's com.microsoft.GroupQueryAttention with the past fed each call`,
    '(copied in, present copied out) and with the past held as initializers (its floor); each in a worker thread of its own, warmed up.',
    `Median of ${rounds} interleaved rounds of about ${roundMs} ms, each begun once the process is idle (onnxruntime-web's threads spin`,
    "for tens of ms after a run); every output checked against one instance's float32 cache first.",
    'Time per step in ms (ratio to ours, one instance, float32):', '',
    `| contender | ${rows.map((r) => `${r.nk} keys`).join(' | ')} |`, `|---|${rows.map(() => '---:').join('|')}|`];
  for (const name of names) {
    const cells = rows.map((r) => {
      const c = r.contenders.find((x) => x.name === name);
      return c ? `${c.ms.toFixed(2)} (${c.vsOurs.toFixed(2)}x)` : 'not run';
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  lines.push('', `Load average per length: ${rows.map((r) => `${r.nk}: ${r.load}`).join('; ')}.`);
  const skipped = [...new Set(rows.flatMap((r) => r.skipped.map((s) => s.replace(/ \d+t:/, ':'))))];
  if (skipped.length) lines.push('', 'Not timed:', ...skipped.map((s) => `- ${s}`));
  lines.push('');
  return lines;
}

const PALETTE = ['#1f6feb', '#0a7f45', '#8250df', '#bf3989', '#c4432b', '#9a6700', '#57606a', '#0969da', '#2da44e', '#d1242f', '#6e7781'];

/** An SVG plot: time per step against keys, both axes logarithmic, one line per contender. */
export function decodePeersSvg({ cpu, rows }) {
  const W = 760, H = 420, L = 64, R = 300, T = 36, B = 48;
  const names = [...new Set(rows.flatMap((r) => r.contenders.map((c) => c.name)))];
  const ms = rows.flatMap((r) => r.contenders.map((c) => c.ms));
  const lo = Math.log10(Math.min(...ms)) - 0.1, hi = Math.log10(Math.max(...ms)) + 0.1;
  const n0 = Math.log2(rows[0].nk), n1 = Math.log2(rows.at(-1).nk);
  const x = (nk) => L + ((Math.log2(nk) - n0) / Math.max(1, n1 - n0)) * (W - L - R);
  const y = (t) => T + (1 - (Math.log10(t) - lo) / (hi - lo)) * (H - T - B);
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${L}" y="20" font-size="14" font-weight="600">Decode step vs context length (${esc(cpu)})</text>`];
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) {
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (Math.log10(t) < lo || Math.log10(t) > hi) continue;
      out.push(`<line x1="${L}" x2="${W - R}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#d0d7de"/>`,
        `<text x="${L - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${t >= 1 ? t : t.toPrecision(1)} ms</text>`);
    }
  }
  for (const r of rows) {
    out.push(`<text x="${x(r.nk).toFixed(1)}" y="${H - B + 18}" text-anchor="middle">${r.nk >= 1024 ? `${r.nk / 1024}k` : r.nk}</text>`);
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">keys in the cache</text>`);
  names.forEach((name, i) => {
    const pts = rows.map((r) => [r.nk, r.contenders.find((c) => c.name === name)]).filter(([, c]) => c);
    const colour = PALETTE[i % PALETTE.length];
    const dash = name.startsWith('ours') ? '' : ' stroke-dasharray="5 3"';
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2"${dash} points="${pts.map(([nk, c]) => `${x(nk).toFixed(1)},${y(c.ms).toFixed(1)}`).join(' ')}"/>`);
    for (const [nk, c] of pts) out.push(`<circle cx="${x(nk).toFixed(1)}" cy="${y(c.ms).toFixed(1)}" r="2.5" fill="${colour}"/>`);
    const ly = T + 8 + i * 17;
    out.push(`<line x1="${W - R + 16}" x2="${W - R + 40}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<text x="${W - R + 46}" y="${ly + 4}">${esc(name)}</text>`);
  });
  out.push('</svg>', '');
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
  if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
    const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  const quick = process.argv.includes('--quick');
  const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : null);
  const lengths = arg('--nk')?.split(',').map(Number) ?? DECODE_LENGTHS;
  const timing = { rounds: quick ? 3 : 7, roundMs: quick ? 80 : 150 };
  const results = await decodePeersBench({ ...timing, lengths });
  console.log(`\n${decodePeersMarkdown(results, timing).join('\n')}`);
  const svg = arg('--svg');
  if (svg) {
    writeFileSync(svg, decodePeersSvg(results));
    console.log(`wrote ${svg}`);
  }
}
