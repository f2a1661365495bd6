#!/usr/bin/env node
// compare-builds.js - proof that a change to c/ keeps the numbers: runs two
// dist directories' modules side by side on the same calls and compares
// every output float.
//   node scripts/compare-builds.js /tmp/old-dist dist
// Each build pair (attention-simd.wasm, attention-scalar.wasm,
// attention-relaxed.wasm) is loaded with the current web/attention.js loader
// and runs: every case of tests/fixtures/{attention,options,backward}.json
// (inputs redrawn from their seeds as the tests draw them), forward on the
// output path and with steps and stats, backward with and without the
// forward's output and lse; decode shapes (nq 1..3, grouped-query); the
// shape causal, queryOffset -120, nq 130, 16 heads over 1 kv head, nk 64,
// d 64; tests/fixtures/positions.json's cases and RoPE, sinks and ALiBi over
// several blocks of the fused kernel and in decode at 4096 keys; and a few
// random larger shapes. Prints per build how many outputs
// differ in bits and the largest difference relative to the largest
// magnitude of the output it is in. Exits 1 when the SIMD128 or scalar
// builds differ at all, or the relaxed build by more than RTOL_RELAXED.
// COMPARE_VERBOSE=1 also names every call whose outputs differ.
// COMPARE_EXCEPT=regex leaves the calls whose names match out of the
// verdict (still run and counted apart): for a change that is meant to move
// some calls' bits, e.g. COMPARE_EXCEPT=alibi.
// Node 20 runs relaxed SIMD only behind a flag: without it the script runs
// itself again with it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { loadAttention, NumpyRandom, relaxedSimdSupported } from '../web/attention.js';
import { caseInputs, optionCaseInputs, optionCaseOptions, readJSON } from '../tests/helpers.js';

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!relaxedSimdSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const r = spawnSync(process.execPath, [RELAXED_FLAG, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

// The relaxed module against itself rebuilt: each side is within
// tests/helpers.js's RTOL_RELAXED_VS_SCALAR (2e-6 of the largest value) of
// the scalar build, which must not move, so the two are within twice that.
const RTOL_RELAXED = 4e-6;
const BUILDS = [
  { name: 'simd128', file: 'attention-simd.wasm', rtol: 0 },
  { name: 'scalar', file: 'attention-scalar.wasm', rtol: 0 },
  { name: 'relaxed-simd', file: 'attention-relaxed.wasm', rtol: RTOL_RELAXED },
];

const [oldDir, newDir] = process.argv.slice(2);
if (!oldDir || !newDir) {
  console.error('usage: node scripts/compare-builds.js OLD_DIST NEW_DIST');
  process.exit(2);
}

/** Every call to compare: a name and a function of an instance that returns named Float32Arrays. */
function calls() {
  const list = [];
  const add = (name, run) => list.push({ name, run });
  const pick = (r, keys) => Object.fromEntries(keys.filter((k) => r[k] !== undefined).map((k) => [k, r[k]]));
  const STEPS = ['output', 'scores', 'scaled', 'logits', 'weights', 'lse'];
  const GRADS = ['dq', 'dk', 'dv', 'dbias'];
  const forward = (name, inputs, options) => {
    add(`${name} output`, (attn) => ({ output: attn.sdpa(inputs.q, inputs.k, inputs.v, options) }));
    add(`${name} stats`, (attn) => pick(attn.sdpa(inputs.q, inputs.k, inputs.v, { ...options, stats: true }), STEPS));
    add(`${name} steps`, (attn) => pick(attn.sdpa(inputs.q, inputs.k, inputs.v, { ...options, steps: true, stats: true }), STEPS));
  };
  const backward = (name, inputs, options) => {
    add(`${name} backward`, (attn) => pick(attn.sdpaBackward(inputs.q, inputs.k, inputs.v, null, inputs.dout, options), GRADS));
    add(`${name} backward with output and lse`, (attn) => {
      const { output, lse } = attn.sdpa(inputs.q, inputs.k, inputs.v, { ...options, stats: true });
      return pick(attn.sdpaBackward(inputs.q, inputs.k, inputs.v, output, inputs.dout, { ...options, lse }), GRADS);
    });
  };
  const positional = (c, inputs) => ({
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv, causal: c.causal,
    mask: inputs.mask, bias: inputs.bias, ...(c.scale === null ? {} : { scale: c.scale }),
  });

  for (const c of readJSON('./fixtures/attention.json').cases) {
    const inputs = caseInputs(c);
    forward(`attention.json ${c.name}`, inputs, positional(c, inputs));
  }
  for (const c of readJSON('./fixtures/options.json').cases) {
    const inputs = optionCaseInputs(c);
    forward(`options.json ${c.name}`, inputs, optionCaseOptions(c, inputs));
  }
  for (const c of readJSON('./fixtures/backward.json').cases) {
    const rng = new NumpyRandom(c.seed);
    const inputs = caseInputs(c, rng);
    inputs.dout = Float32Array.from(rng.randn(c.batch, c.heads, c.nq, c.dv));
    const options = {
      ...positional(c, inputs), window: c.window, queryOffset: c.queryOffset,
      ...(c.softcap > 0 ? { softcap: c.softcap } : {}),
    };
    forward(`backward.json ${c.name}`, inputs, options);
    backward(`backward.json ${c.name}`, inputs, options);
  }

  for (const c of readJSON('./fixtures/positions.json').cases) {
    const rng = new NumpyRandom(c.seed);
    const draw = (...shape) => Float32Array.from(rng.randn(...shape), (x) => x * (c.amp ?? 1));
    const inputs = { q: draw(c.batch, c.heads, c.nq, c.dk), k: draw(c.batch, c.kvHeads, c.nk, c.dk) };
    inputs.v = Float32Array.from(rng.randn(c.batch, c.kvHeads, c.nk, c.dv));
    inputs.dout = Float32Array.from(rng.randn(c.batch, c.heads, c.nq, c.dv));
    const options = {
      batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv, causal: c.causal,
      window: c.window, queryOffset: Array.isArray(c.queryOffset) ? Int32Array.from(c.queryOffset) : c.queryOffset,
      rope: c.rope ?? undefined, sinks: c.sinks ? Float32Array.from(c.sinks) : undefined,
      alibi: c.alibi === true ? true : c.alibi ? Float32Array.from(c.alibi) : undefined,
    };
    forward(`positions.json ${c.name}`, inputs, options);
    backward(`positions.json ${c.name}`, inputs, options);
  }

  // Shapes drawn here: q, k, v, dout from one seed, with the options given.
  const shaped = (name, seed, shape, extra = {}) => {
    const rng = new NumpyRandom(seed);
    const { batch = 1, heads, kvHeads = heads, nq, nk, dk, dv = dk } = shape;
    const inputs = {
      q: Float32Array.from(rng.randn(batch, heads, nq, dk)),
      k: Float32Array.from(rng.randn(batch, kvHeads, nk, dk)),
      v: Float32Array.from(rng.randn(batch, kvHeads, nk, dv)),
      dout: Float32Array.from(rng.randn(batch, heads, nq, dv)),
    };
    const options = { batch, heads, kvHeads, nq, nk, dk, dv, ...extra };
    if (extra.biasShape) {
      inputs.bias = { data: Float32Array.from(rng.randn(...extra.biasShape)), shape: extra.biasShape };
      options.bias = inputs.bias;
      delete options.biasShape;
    }
    if (extra.maskShape) {
      inputs.mask = { data: Uint8Array.from(rng.randn(...extra.maskShape), (x) => (x > -0.7 ? 1 : 0)), shape: extra.maskShape };
      options.mask = inputs.mask;
      delete options.maskShape;
    }
    forward(name, inputs, options);
    backward(name, inputs, options);
  };
  let seed = 1000;
  // Decode: 1 to 3 query rows, plain, causal at the end of the keys, grouped.
  for (const nq of [1, 2, 3]) {
    for (const [heads, kvHeads] of [[1, 1], [4, 4], [2, 1], [8, 2], [12, 4], [16, 1]]) {
      for (const d of [7, 16, 64, 100]) {
        for (const extra of [{}, { causal: true, queryOffset: 61 - nq }, { softcap: 5, window: [9, 0], causal: true, queryOffset: 40 }]) {
          shaped(`decode nq ${nq} heads ${heads}/${kvHeads} d ${d} ${JSON.stringify(extra)}`, seed++, { heads, kvHeads, nq, nk: 61, dk: d }, extra);
        }
      }
    }
  }
  shaped('decode with mask and bias', seed++, { heads: 8, kvHeads: 2, nq: 1, nk: 77, dk: 32 },
    { maskShape: [1, 8, 1, 77], biasShape: [1, 1, 1, 77], causal: true, queryOffset: 76 });
  shaped('decode kvLengths', seed++, { batch: 3, heads: 6, kvHeads: 2, nq: 1, nk: 90, dk: 24 },
    { kvLengths: Int32Array.from([90, 13, 0]), queryOffset: Int32Array.from([89, 12, 0]), causal: true });
  // RoPE and ALiBi over several key blocks and query tiles of the fused kernel, and decode at 4096 keys
  // (seeds of their own: the shapes above and below keep theirs).
  let positionSeed = 5000;
  for (const extra of [{ alibi: true }, { alibi: true, causal: true, queryOffset: 211 }, { alibi: true, softcap: 8 },
    { alibi: true, biasShape: [1, 1, 301, 600] }, { alibi: true, maskShape: [1, 4, 301, 600], window: [100, 30] },
    { rope: { theta: 500000 }, causal: true, queryOffset: 299 }, { rope: { dims: 12, interleaved: true }, sinks: Float32Array.of(0.5, -1, 2, 0) }]) {
    shaped(`fused heads 4/2 nq 301 nk 600 d 40 ${JSON.stringify(extra)}`, positionSeed++, { heads: 4, kvHeads: 2, nq: 301, nk: 600, dk: 40 }, extra);
  }
  for (const extra of [{ rope: { theta: 500000 } }, { alibi: true }, { rope: { dims: 32, interleaved: true }, alibi: true, sinks: Float32Array.from({ length: 8 }, (_, h) => h - 4) }]) {
    const decode = { causal: true, queryOffset: 4095, ...extra };
    shaped(`decode heads 8/2 nk 4096 d 64 ${JSON.stringify(extra)}`, positionSeed++, { heads: 8, kvHeads: 2, nq: 1, nk: 4096, dk: 64 }, decode);
  }
  shaped('causal queryOffset -120 nq 130 16 heads / 1 kv nk 64 d 64', seed++, { heads: 16, kvHeads: 1, nq: 130, nk: 64, dk: 64 },
    { causal: true, queryOffset: -120 });
  // Larger random shapes: window, softcap, offsets, masks, bias, GQA.
  const rng = new NumpyRandom(4242);
  const int = (lo, hi) => lo + Math.floor(rng.random() * (hi - lo + 1));
  for (let t = 0; t < 8; t++) {
    const kvHeads = int(1, 3), heads = kvHeads * int(1, 3), nq = int(4, 200), nk = int(1, 300);
    const dk = int(1, 80), dv = int(1, 80);
    const extra = { causal: t % 2 === 0, queryOffset: int(-50, 150) - (t % 3 === 0 ? 0 : nq) };
    if (t % 4 === 1) extra.window = [int(-1, 40), int(-1, 20)];
    if (t % 3 === 2) extra.softcap = 3 + t;
    if (t % 4 === 3) extra.maskShape = [1, heads, nq, nk];
    if (t % 5 === 4) extra.biasShape = [1, 1, nq, nk];
    shaped(`random ${t} heads ${heads}/${kvHeads} nq ${nq} nk ${nk} dk ${dk} dv ${dv} ${JSON.stringify(extra)}`, seed++,
      { heads, kvHeads, nq, nk, dk, dv }, extra);
  }
  return list;
}

/** Outputs that differ in bits (NaN equal to NaN), and the largest |a - b| over max |b| of an array. */
function compare(a, b) {
  let differ = 0, maxAbs = 0, maxDiff = 0;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length), ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < b.length; i++) {
    if (Number.isFinite(b[i])) maxAbs = Math.max(maxAbs, Math.abs(b[i]));
    if (ua[i] === ub[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i]))) continue;
    differ++;
    const d = Math.abs(a[i] - b[i]);
    maxDiff = Math.max(maxDiff, Number.isNaN(d) ? Infinity : d);
  }
  return { differ, rel: maxDiff === 0 ? 0 : maxAbs === 0 ? Infinity : maxDiff / maxAbs };
}

const except = process.env.COMPARE_EXCEPT ? new RegExp(process.env.COMPARE_EXCEPT) : null;
const list = calls();
let bad = false;
for (const build of BUILDS) {
  const paths = [oldDir, newDir].map((dir) => `${dir}/${build.file}`);
  if (!paths.every(existsSync)) {
    console.log(`${build.name}: skipped (${paths.filter((p) => !existsSync(p)).join(', ')} missing)`);
    if (build.rtol === 0) bad = true;
    continue;
  }
  const [before, after] = await Promise.all(paths.map((p) => loadAttention({ wasm: readFileSync(p) })));
  let floats = 0, differ = 0, worst = 0, worstName = '', calls = 0, callsDiffer = 0, excepted = 0, exceptedDiffer = 0;
  for (const { name, run } of list) {
    const x = run(before), y = run(after);
    if (except?.test(name)) {
      excepted++;
      if (Object.keys(x).some((key) => compare(y[key], x[key]).differ > 0)) exceptedDiffer++;
      continue;
    }
    calls++;
    let callDiffer = 0;
    for (const key of Object.keys(x)) {
      if (!(key in y) || x[key].length !== y[key].length) throw new Error(`${name}: ${key} missing or of another length`);
      const r = compare(y[key], x[key]);
      floats += x[key].length;
      differ += r.differ;
      callDiffer += r.differ;
      if (r.rel > worst) worst = r.rel, worstName = `${name} ${key}`;
    }
    if (callDiffer > 0) callsDiffer++;
    if (callDiffer > 0 && process.env.COMPARE_VERBOSE) console.log(`  ${build.name} ${name}: ${callDiffer} differ`);
  }
  const ok = build.rtol === 0 ? differ === 0 : worst <= build.rtol;
  if (!ok) bad = true;
  console.log(`${build.name.padEnd(12)} ${calls} calls, ${floats} floats: ${differ} differ in bits (in ${callsDiffer} calls), ` +
    `max relative difference ${worst.toExponential(2)}${worstName ? ` (${worstName})` : ''}; ` +
    `${build.rtol === 0 ? 'must be bit-identical' : `tolerance ${build.rtol}`}: ${ok ? 'ok' : 'FAIL'}` +
    (except ? `; ${excepted} calls matching ${except} left out (${exceptedDiffer} of them differ)` : ''));
}
process.exit(bad ? 1 : 0);
