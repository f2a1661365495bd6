#!/usr/bin/env node
// backward.js - the backward pass against the forward of the same call, in
// one process, round by round (each round times every contender for about
// 40 ms), for the SIMD and scalar builds:
//   forward           sdpa(q, k, v)
//   backward + lse    sdpaBackward with the forward's output and lse
//                     (sdpa stats: true; what a training step that kept them pays)
//   backward alone    sdpaBackward with neither (one more pass over the keys)
// Prints medians and the median of the per-round ratios backward / forward
// (the target: at most 2.5 at n = 1024, d = 64), and writes
// bench/RESULTS-backward.md. Timings are reported, never asserted.
//   node bench/backward.js [--quick]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

import { ensureBuilt } from '../scripts/ensure-built.js';
import { loadAttention } from '../web/attention.js';
import { random } from './random.js';
import { cpuModel } from './cpu.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 9;
const ROUND_MS = quick ? 15 : 40;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

ensureBuilt();
const builds = [['SIMD', await loadAttention({ simd: true })], ['scalar', await loadAttention({ simd: false })]];

const shapes = [
  { heads: 1, n: 1024, d: 64, causal: false },
  { heads: 1, n: 1024, d: 64, causal: true },
  { heads: 4, n: 256, d: 64, causal: false },
  { heads: 1, n: 6, d: 4, causal: false },
];
const lines = [
  '# Backward pass benchmark',
  '',
  `Written by \`node bench/backward.js\` on ${new Date().toISOString().slice(0, 10)}: ${cpuModel()}, ${os.cpus().length} cores, Node ${process.version}.`,
  `Single thread, float32, median of ${ROUNDS} interleaved rounds of about ${ROUND_MS} ms per contender; "x forward" is the`,
  'median of the per-round ratios to the forward of the same call in the same round (the target: <= 2.5 at n = 1024, d = 64).',
  'The machine is shared: read the ratios, not the absolute times.',
  '',
  '| shape | build | forward | backward + lse | x forward | backward alone | x forward |',
  '|---|---|---:|---:|---:|---:|---:|',
];
for (const { heads, n, d, causal } of shapes) {
  const q = random(heads * n * d, 1), k = random(heads * n * d, 2), v = random(heads * n * d, 3), dout = random(heads * n * d, 4);
  const options = { heads, nq: n, nk: n, dk: d, dv: d, causal };
  for (const [name, attn] of builds) {
    const { output, lse } = attn.sdpa(q, k, v, { ...options, stats: true });
    const withLse = { ...options, lse }; // made once: a tiny call would time the spread
    const contenders = [
      () => attn.sdpa(q, k, v, options),
      () => attn.sdpaBackward(q, k, v, output, dout, withLse),
      () => attn.sdpaBackward(q, k, v, null, dout, options),
    ];
    const times = contenders.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      contenders.forEach((fn, i) => {
        let calls = 0, t;
        const t0 = performance.now();
        do {
          fn();
          calls++;
          t = performance.now() - t0;
        } while (t < ROUND_MS);
        times[i].push(t / calls);
      });
    }
    const ms = (i) => `${median(times[i]).toFixed(median(times[i]) < 1 ? 4 : 2)} ms`;
    const ratio = (i) => `${median(times[i].map((t, r) => t / times[0][r])).toFixed(2)}x`;
    const label = `${causal ? 'causal ' : ''}${heads} head${heads > 1 ? 's' : ''} x n=${n}, d=${d}`;
    const row = `| ${label} | ${name} | ${ms(0)} | ${ms(1)} | ${ratio(1)} | ${ms(2)} | ${ratio(2)} |`;
    console.log(row);
    lines.push(row);
  }
}
if (!quick) {
  writeFileSync(`${root}bench/RESULTS-backward.md`, `${lines.join('\n')}\n`);
  console.log('wrote bench/RESULTS-backward.md');
}
