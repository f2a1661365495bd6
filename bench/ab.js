#!/usr/bin/env node
// ab.js - two or more builds of the module side by side, for kernel work:
//   node bench/ab.js /tmp/other/dist/attention-simd.wasm dist/attention-simd.wasm
// Loads every module into this process, runs each shape round by round with
// the builds interleaved (AB_MS each a round) and prints, per build, the
// median GFLOP/s and the median of the per-round time ratios to the first
// build of the same file name (above 1: faster than it; so
// base/attention-simd.wasm base/attention-relaxed.wasm dist/attention-simd.wasm
// dist/attention-relaxed.wasm pairs each new module with its own base),
// with the ratios' quartiles, and its fraction of its peak probe
// (bench/peak.c: relaxed_madd for a file named *relaxed*, mul+add for the
// others) timed in the same rounds; then the same from each one's fastest
// round (on a loaded machine the round with the least interference). The
// CPU model and load come first. This shared machine drifts by 2x over
// minutes; the paired ratios are what to read, not the absolute rates.
// Build another revision beside this one:
//   git worktree add --detach /tmp/other REV && (cd /tmp/other && ./build.sh)
// Shapes: AB_SHAPES="1x1024,12x512,c1x1024,1x1/4096" (HEADSxNQ, a leading c
// for causal, /NK when nk != nq; d = 64); rounds: AB_ROUNDS (11); each
// build's time a round: AB_MS (40; on a crowded machine many short rounds
// make the fastest ones likelier to have run undisturbed).

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

import { loadAttention, relaxedSimdSupported } from '../web/attention.js';
import { loadPeakProbes, peakFlops } from './peak.js';
import { random } from './random.js';
import { cpuModel } from './cpu.js';

// Node 20 runs relaxed SIMD only behind a flag: without it, again with it.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const files = process.argv.slice(2);
if (files.length < 2) {
  console.error('usage: node bench/ab.js first.wasm second.wasm [more.wasm ...]');
  process.exit(2);
}
const builds = [];
for (const file of files) builds.push({ file, attn: await loadAttention({ wasm: readFileSync(file) }) });

const shapes = (process.env.AB_SHAPES ?? '1x64,1x256,1x1024,12x512,c1x1024,1x1/4096').split(',');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 11);
const ROUND_MS = Number(process.env.AB_MS ?? 40);
const quantile = (xs, f) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * f + 0.5)];
const median = (xs) => quantile(xs, 0.5);
const baseName = (file) => file.split('/').pop();
const firstOfName = builds.map(({ file }) => builds.findIndex((b) => baseName(b.file) === baseName(file)));
const probes = await loadPeakProbes();
const PEAK_ITERATIONS = 200000;
const PEAK_FLOPS = peakFlops(PEAK_ITERATIONS);
const probeRuns = [() => probes.simd(PEAK_ITERATIONS), ...(probes.relaxed ? [() => probes.relaxed(PEAK_ITERATIONS)] : [])];
const isRelaxed = (i) => /relaxed/.test(baseName(builds[i].file));
console.log(`${cpuModel()}, ${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}, ${ROUNDS} rounds`);

for (const label of shapes) {
  const m = /^(c?)(\d+)x(\d+)(?:\/(\d+))?$/.exec(label);
  if (!m) {
    console.error(`ab: shape ${JSON.stringify(label)} is not [c]HEADSxNQ[/NK]`);
    process.exit(2);
  }
  const causal = m[1] === 'c', heads = Number(m[2]), nq = Number(m[3]), nk = Number(m[4] ?? m[3]), d = 64;
  const q = random(heads * nq * d, 1), k = random(heads * nk * d, 2), v = random(heads * nk * d, 3);
  const options = { heads, nq, nk, dk: d, dv: d, causal, out: new Float32Array(heads * nq * d) };
  const runs = [...builds.map(({ attn }) => () => attn.sdpa(q, k, v, options)), ...probeRuns];
  const times = runs.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    runs.forEach((run, i) => {
      let calls = 0;
      const t0 = performance.now();
      let t;
      do {
        run();
        calls++;
        t = performance.now() - t0;
      } while (t < ROUND_MS);
      times[i].push(t / calls);
    });
  }
  const probeTimes = (i) => times[builds.length + (isRelaxed(i) && probes.relaxed ? 1 : 0)];
  const flops = 4 * heads * nq * nk * d;
  console.log(label.padEnd(10), builds.map(({ file }, i) => {
    const rate = flops / median(times[i]) / 1e6;
    const ratios = times[i].map((t, r) => times[firstOfName[i]][r] / t);
    const spread = `${quantile(ratios, 0.25).toFixed(3)}-${quantile(ratios, 0.75).toFixed(3)}`;
    const ofPeak = median(times[i].map((t, r) => probeTimes(i)[r] * flops / PEAK_FLOPS / t));
    const best = Math.min(...times[i]), bestOfPeak = Math.min(...probeTimes(i)) * flops / PEAK_FLOPS / best;
    const bestRatio = Math.min(...times[firstOfName[i]]) / best;
    return `${file.split('/').slice(-3).join('/')}: ${rate.toFixed(1)} GFLOP/s x${median(ratios).toFixed(3)} (${spread}) ` +
      `${ofPeak.toFixed(2)} of peak; best rounds ${(flops / best / 1e6).toFixed(1)} GFLOP/s x${bestRatio.toFixed(3)} ` +
      `${bestOfPeak.toFixed(2)} of peak`;
  }).join(' | '));
  console.log(' '.repeat(10), `probes: ${probeRuns.map((_, j) => (PEAK_FLOPS / median(times[builds.length + j]) / 1e6).toFixed(1)).join(' / ')} GFLOP/s`);
}
