#!/usr/bin/env node
// tile.js - the kernels' 4 x 8 register tile alone (c/kernels/f32-tile-wasmsimd.h,
// built into bench/peak.c) against the peak probe of the same build, on
// panels that stay in L1: the score tile runs n = d_k steps (64 here), the
// P V tile n = keys of a block (256). The fused kernel spends most of its
// time in these two loops, so the tile's fraction of the probe bounds the
// kernel's. Rounds interleave every contender; the medians and the fastest
// round are printed beside the CPU model (bench/cpu.js).
//   node bench/tile.js            (Node 20 needs --experimental-wasm-relaxed-simd
//                                  for the relaxed build; without it this runs itself again with the flag)
import { spawnSync } from 'node:child_process';
import os from 'node:os';

import { relaxedSimdSupported } from '../web/attention.js';
import { cpuModel } from './cpu.js';
import { loadPeakProbes, peakFlops, tileFlops } from './peak.js';

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const ROUNDS = 15, ROUND_MS = 60;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// GFLOP/s of run(count) over about ms, count grown until one call takes a tenth of it.
function rate(run, flops, ms) {
  let count = 1;
  for (;;) {
    const t0 = performance.now();
    run(count);
    const dt = performance.now() - t0;
    if (dt > ms / 10) {
      // The sizing call counts: the round is timed from it.
      let calls = 1, t = performance.now();
      while (t - t0 < ms) {
        run(count);
        calls++;
        t = performance.now();
      }
      return (flops(count) * calls) / ((t - t0) * 1e6);
    }
    count *= 2;
  }
}

const probes = await loadPeakProbes();
const contenders = [];
for (const [name, probe, tile] of [['SIMD128', probes.simd, probes.simdTile], ['relaxed SIMD', probes.relaxed, probes.relaxedTile]]) {
  if (!probe || !tile) continue;
  contenders.push({ name: `${name} probe`, run: probe, flops: peakFlops });
  for (const n of [64, 256]) contenders.push({ name: `${name} tile, n = ${n}`, probeOf: `${name} probe`, run: (reps) => tile(reps, n), flops: (reps) => tileFlops(reps, n) });
}
const rates = contenders.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let j = 0; j < contenders.length; j++) {
    const i = (r + j) % contenders.length;
    rates[i].push(rate(contenders[i].run, contenders[i].flops, ROUND_MS));
  }
}
console.log(`${cpuModel()}, ${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}, ${ROUNDS} rounds`);
if (probes.relaxedError) console.log(`(relaxed build skipped: ${probes.relaxedError})`);
contenders.forEach((c, i) => {
  const p = c.probeOf ? contenders.findIndex((x) => x.name === c.probeOf) : -1;
  const of = p < 0 ? '' : `  ${median(rates[i].map((x, r) => x / rates[p][r])).toFixed(2)} of the probe (fastest rounds ${(Math.max(...rates[i]) / Math.max(...rates[p])).toFixed(2)})`;
  console.log(`  ${c.name.padEnd(26)} ${median(rates[i]).toFixed(1).padStart(6)} GFLOP/s${of}`);
});
