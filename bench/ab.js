#!/usr/bin/env node
// ab.js - two or more builds of the module side by side, for kernel work:
//   node bench/ab.js dist/attention-simd.wasm /tmp/other/dist/attention-simd.wasm
// Loads every module into this process, runs each shape round by round with
// the builds interleaved (40 ms each a round) and prints, per build, the
// median GFLOP/s and the median of the per-round time ratios to the first
// build (above 1: faster than the first). This shared machine drifts by 2x
// over minutes; the paired ratios are what to read, not the absolute rates.
// Build another revision beside this one:
//   git worktree add --detach /tmp/other REV && (cd /tmp/other && ./build.sh)
// Shapes: AB_SHAPES="1x1024,12x512,c1x1024,1x1/4096" (HEADSxNQ, a leading c
// for causal, /NK when nk != nq; d = 64); rounds: AB_ROUNDS (11).

import { readFileSync } from 'node:fs';

import { loadAttention } from '../web/attention.js';
import { random } from './random.js';

const files = process.argv.slice(2);
if (files.length < 2) {
  console.error('usage: node bench/ab.js first.wasm second.wasm [more.wasm ...]');
  process.exit(2);
}
const builds = [];
for (const file of files) builds.push({ file, attn: await loadAttention({ wasm: readFileSync(file) }) });

const shapes = (process.env.AB_SHAPES ?? '1x64,1x256,1x1024,12x512,c1x1024,1x1/4096').split(',');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 11);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const label of shapes) {
  const m = /^(c?)(\d+)x(\d+)(?:\/(\d+))?$/.exec(label);
  if (!m) {
    console.error(`ab: shape ${JSON.stringify(label)} is not [c]HEADSxNQ[/NK]`);
    process.exit(2);
  }
  const causal = m[1] === 'c', heads = Number(m[2]), nq = Number(m[3]), nk = Number(m[4] ?? m[3]), d = 64;
  const q = random(heads * nq * d, 1), k = random(heads * nk * d, 2), v = random(heads * nk * d, 3);
  const options = { heads, nq, nk, dk: d, dv: d, causal, out: new Float32Array(heads * nq * d) };
  const times = builds.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    builds.forEach(({ attn }, i) => {
      let calls = 0;
      const t0 = performance.now();
      let t;
      do {
        attn.sdpa(q, k, v, options);
        calls++;
        t = performance.now() - t0;
      } while (t < 40);
      times[i].push(t / calls);
    });
  }
  const flops = 4 * heads * nq * nk * d;
  console.log(label.padEnd(10), builds.map(({ file }, i) => {
    const rate = flops / median(times[i]) / 1e6;
    const ratio = median(times[i].map((t, r) => times[0][r] / t));
    return `${file.split('/').slice(-3).join('/')}: ${rate.toFixed(1)} GFLOP/s x${ratio.toFixed(3)}`;
  }).join(' | '));
}
