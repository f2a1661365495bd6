#!/usr/bin/env node
// positions.js - what RoPE, sinks and ALiBi cost inside the kernels, each
// against the same call without it, side by side in one process:
//   node bench/positions.js            (relaxed module where the engine has it)
// Decode: one token over 4096 keys, 32 query heads over 8 kv heads, d = 64
// (Llama-3.2-1B's layer), through a KV cache (rope: keys turned at append,
// the query at attend) and through sdpa (rope turns all 4096 keys per call).
// Prefill: n = 1024, causal, 8 heads over 2 kv heads, d = 64, through sdpa.
// Each round times every variant of a shape in turn (POS_MS each, 40 ms by
// default) and the ratios are per round, then the median over POS_ROUNDS
// (11): this shared machine drifts by 2x over minutes, paired ratios do not.
// Times are CPU time per call (time()); the load average is printed with them.

import { readFileSync } from 'node:fs';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { random } from './random.js';

if (!relaxedSimdSupported() && !process.execArgv.includes('--experimental-wasm-relaxed-simd')) {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', new URL(import.meta.url).pathname], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const attn = await loadAttention();
const ROUNDS = Number(process.env.POS_ROUNDS ?? 11);
const MS = Number(process.env.POS_MS ?? 40);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// CPU time of this process per call (user + system): on a shared machine
// the wall clock also counts the time other processes hold the core.
function time(fn) {
  let calls = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  do {
    fn();
    calls++;
  } while (performance.now() - t0 < MS);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / calls;
}

// The machine's load average (Linux), to read beside the times.
function loadAverage() {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

// Runs the variants round by round; prints each one's median time and its
// median per-round ratio to the first.
function compare(label, variants) {
  const names = Object.keys(variants);
  const times = names.map(() => []);
  for (let r = 0; r < ROUNDS; r++) names.forEach((name, i) => times[i].push(time(variants[name])));
  console.log(`${label} (${attn.isa}; load average ${loadAverage()})`);
  names.forEach((name, i) => {
    const ratio = median(times[i].map((t, r) => t / times[0][r]));
    console.log(`  ${name.padEnd(28)} ${median(times[i]).toFixed(3).padStart(8)} ms   x${ratio.toFixed(3)} of ${names[0]}`);
  });
}

const heads = 32, kvHeads = 8, d = 64, nk = 4096;
const sinks = random(heads, 9);
const rope = { theta: 500000 };
{
  const k = random(kvHeads * nk * d, 2), v = random(kvHeads * nk * d, 3), q = random(heads * d, 1);
  const plain = attn.kvCache({ kvHeads, dk: d, capacity: nk });
  const turned = attn.kvCache({ kvHeads, dk: d, capacity: nk });
  plain.append(k, v);
  turned.append(k, v, { rope });
  const out = new Float32Array(heads * d);
  compare(`decode: attend, 1 token over ${nk} keys, ${heads} heads over ${kvHeads}, d ${d}`, {
    'no option': () => plain.attend(q, { heads, out }),
    'rope (keys turned at append)': () => turned.attend(q, { heads, rope, out }),
    sinks: () => plain.attend(q, { heads, sinks, out }),
    alibi: () => plain.attend(q, { heads, alibi: true, out }),
  });
  const options = { heads, kvHeads, nq: 1, nk, dk: d, dv: d, queryOffset: nk - 1, out };
  compare(`decode: sdpa, 1 token over ${nk} keys (rope turns every key per call)`, {
    'no option': () => attn.sdpa(q, k, v, options),
    rope: () => attn.sdpa(q, k, v, { ...options, rope }),
    sinks: () => attn.sdpa(q, k, v, { ...options, sinks }),
    alibi: () => attn.sdpa(q, k, v, { ...options, alibi: true }),
  });
}
{
  const h = 8, g = 2, n = 1024;
  const q = random(h * n * d, 4), k = random(g * n * d, 5), v = random(g * n * d, 6);
  const options = { heads: h, kvHeads: g, nq: n, nk: n, dk: d, dv: d, causal: true, out: new Float32Array(h * n * d) };
  const s = random(h, 7);
  compare(`prefill: sdpa, n ${n}, causal, ${h} heads over ${g}, d ${d}`, {
    'no option': () => attn.sdpa(q, k, v, options),
    rope: () => attn.sdpa(q, k, v, { ...options, rope }),
    sinks: () => attn.sdpa(q, k, v, { ...options, sinks: s }),
    alibi: () => attn.sdpa(q, k, v, { ...options, alibi: true }),
  });
}
