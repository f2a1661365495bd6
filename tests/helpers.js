// helpers.js - shared by the uvu test files.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Assertion } from 'uvu/assert';

import { NumpyRandom, loadAttention, relaxedSimdSupported } from '../web/attention.js';

export const here = (path) => new URL(path, import.meta.url);
export const readJSON = (path) => JSON.parse(readFileSync(here(path), 'utf8'));

// float32 kernels against a float64 reference, error relative to the largest
// magnitude of the reference output: c/attention.h states about 1e-6 at the
// sizes tested, and this leaves room for longer sums.
export const RTOL_REFERENCE = 2e-5;
// SIMD against scalar: both are float32 with the same algorithm and differ
// only in summation order, a few ulp of the largest value.
export const RTOL_SIMD_VS_SCALAR = 2e-6;
// Relaxed SIMD against scalar: fused multiply-adds round once where the
// scalar twin rounds twice, far below the summation-order differences above.
export const RTOL_RELAXED_VS_SCALAR = 2e-6;

/** The three builds, fastest first, as attn.isa names them. */
export const BUILDS = ['relaxed-simd', 'simd128', 'scalar'];
const BUILD_FILES = { 'relaxed-simd': 'attention-relaxed.wasm', simd128: 'attention-simd.wasm', scalar: 'attention-scalar.wasm' };

/** An instance of one build, loaded from dist/ by file (so no fallback hides a missing module). */
export function loadBuild(isa) {
  return loadAttention({ wasm: readFileSync(here(`../dist/${BUILD_FILES[isa]}`)) });
}

export const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

/**
 * Node 20 runs relaxed SIMD only behind a flag: a test file that runs the
 * relaxed module calls this first, and when the engine lacks relaxed SIMD the
 * file runs again in a child node with the flag (same stdout, same exit
 * code) and this process exits.
 */
export function runWithRelaxedSimd(fileUrl) {
  if (relaxedSimdSupported()) return;
  if (process.execArgv.includes(RELAXED_FLAG)) throw new Error(`${RELAXED_FLAG} given, yet this engine does not validate relaxed SIMD`);
  const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, fileURLToPath(fileUrl)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

/**
 * Asserts that `call` fails with an ErrorClass whose message matches
 * `message` (a RegExp, or a string the message must equal). `call` is a
 * function, sync or async, or a promise. A sync call is checked at once and
 * the error returned; an async one (or a promise) returns a promise of the
 * error, so `await rejects(...)`. When the call succeeds, or fails otherwise,
 * the assertion says what was expected and what came; `what` names the case.
 */
export function rejects(call, ErrorClass, message, what = '') {
  const expects = `${ErrorClass.name} ${message instanceof RegExp ? `matching ${message}` : JSON.stringify(message)}`;
  const fail = (got, actual) => {
    throw new Assertion({ message: `${what ? `${what}: ` : ''}expected ${expects}, ${got}`, operator: 'rejects', expects, actual });
  };
  const check = (err) => {
    if (!(err instanceof ErrorClass)) fail(`got ${err?.constructor?.name ?? typeof err}: ${err?.message ?? String(err)}`, err);
    const ok = message instanceof RegExp ? message.test(err.message) : err.message === message;
    if (!ok) fail(`got ${err.constructor.name}: ${JSON.stringify(err.message)}`, err.message);
    return err;
  };
  let result = call;
  if (typeof call === 'function') {
    try {
      result = call();
    } catch (err) {
      return check(err);
    }
  }
  if (typeof result?.then === 'function') return result.then((value) => fail(`it resolved with ${String(value)}`, value), check);
  return fail(`it returned ${String(result)}`, result);
}

/**
 * Throws naming the first index whose |a - b| > atol + rtol * scaleOf(b).
 * With relativeTo: 'max', the error is relative to max |b| (one number for
 * the whole array), as the tolerances above are stated.
 */
export function assertClose(actual, expected, { rtol = 0, atol = 0, relativeTo = 'max', what = 'values' } = {}) {
  if (actual.length !== expected.length) {
    throw new Error(`${what}: length ${actual.length} != expected ${expected.length}`);
  }
  let maxAbs = 0;
  for (const x of expected) if (Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (Number.isNaN(e) ? Number.isNaN(a) : a === e) continue;
    const scale = relativeTo === 'max' ? maxAbs : Math.abs(e);
    const tol = atol + rtol * scale;
    if (!(Math.abs(a - e) <= tol)) {
      throw new Error(`${what}[${i}]: got ${a}, expected ${e} (|diff| ${Math.abs(a - e).toExponential(2)} > tolerance ${tol.toExponential(2)})`);
    }
  }
}

// numpy float64 draws as float32, times a factor (a case's amplitude).
const f32 = (values, factor = 1) => Float32Array.from(values, (x) => x * factor);

// q, k, v of a case, the first draws of every make_fixtures.py case.
function drawQKV(rng, c) {
  const q = f32(rng.randn(c.batch, c.heads, c.nq, c.dk), c.amp);
  const k = f32(rng.randn(c.batch, c.kvHeads, c.nk, c.dk), c.amp);
  const v = f32(rng.randn(c.batch, c.kvHeads, c.nk, c.dv));
  return { q, k, v };
}

/**
 * The inputs of a fixture case, drawn as tests/fixtures/make_fixtures.py draws
 * them; pass rng to go on drawing after them (the backward's dout).
 */
export function caseInputs(c, rng = new NumpyRandom(c.seed)) {
  const { q, k, v } = drawQKV(rng, c);
  let bias, mask;
  if (c.bias) {
    bias = f32(rng.randn(c.nq, c.nk), 2);
    for (let i = 0; i < c.nq; i += 3) for (let j = 0; j < c.nk; j += 2) bias[i * c.nk + j] = -Infinity;
  }
  if (c.mask) {
    const draw = rng.randn(c.nq, c.nk);
    mask = Uint8Array.from(draw, (x) => (x > -0.5 ? 1 : 0));
    for (const r of c.maskedRows) mask.fill(0, r * c.nk, (r + 1) * c.nk);
  }
  return { q, k, v, bias, mask };
}

/** The inputs of an options.json case, drawn as make_fixtures.py's option_case draws them. */
export function optionCaseInputs(c) {
  const rng = new NumpyRandom(c.seed);
  const { q, k, v } = drawQKV(rng, c);
  let bias, mask;
  if (c.biasShape) {
    const data = f32(rng.randn(...c.biasShape), 2);
    for (let i = 0; i < data.length; i += 7) data[i] = -Infinity;
    bias = { data, shape: c.biasShape };
  }
  if (c.maskShape) mask = { data: Uint8Array.from(rng.randn(...c.maskShape), (x) => (x > -0.5 ? 1 : 0)), shape: c.maskShape };
  return { q, k, v, mask, bias };
}

/** sdpa options of an options case (extra overrides). */
export function optionCaseOptions(c, inputs, extra = {}) {
  return {
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv,
    causal: c.causal, mask: inputs.mask, bias: inputs.bias, softcap: c.softcap, window: c.window,
    queryOffset: Array.isArray(c.queryOffset) ? Int32Array.from(c.queryOffset) : c.queryOffset,
    kvLengths: c.kvLengths ? Int32Array.from(c.kvLengths) : undefined,
    ...(c.scale === null ? {} : { scale: c.scale }), ...extra,
  };
}

/** The handbook's four tables as { scores, scaled, weights, output } of string rows. */
export function handbookTables() {
  const text = readFileSync(here('./fixtures/handbook.txt'), 'utf8');
  const keys = ['scores', 'scaled', 'weights', 'output'];
  const tables = {};
  let current = -1;
  for (const line of text.split('\n')) {
    if (line.startsWith('Step ')) current++;
    else if (current >= 0 && /^\w+\s+-?\d/.test(line)) {
      const [label, ...cells] = line.trim().split(/\s+/);
      (tables[keys[current]] ??= []).push({ label, cells });
    }
  }
  return tables;
}

/**
 * The items a loop turns into tests, after checking there are exactly
 * `expected` of them: a filter or a fixture change that leaves a loop empty
 * (or halves it) fails here, at load, instead of registering nothing.
 */
export function generated(items, expected, what) {
  if (items.length !== expected) {
    throw new Error(`${what}: ${items.length} cases where the tests expect ${expected}; a fixture or filter changed, update the count if that is meant`);
  }
  return items;
}

/**
 * |actual - expected| <= tol * scale[i] for every element, scale[i] the
 * scale of element i's row (or of the array): the block ops' bound, stated
 * relative to the row where an element near 0 has no relative precision
 * (docs/numerics.md). Returns the largest error / scale seen.
 */
export function assertScaled(actual, expected, scale, tol, what = 'values') {
  if (actual.length !== expected.length) throw new Error(`${what}: length ${actual.length} != expected ${expected.length}`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i], s = typeof scale === 'number' ? scale : scale[i];
    if (a === e) continue;
    const err = Math.abs(a - e) / s;
    if (!(err <= tol)) throw new Error(`${what}[${i}]: got ${a}, expected ${e} (|diff| ${Math.abs(a - e).toExponential(2)} > ${tol} x scale ${s.toExponential(2)})`);
    worst = Math.max(worst, err);
  }
  return worst;
}

/** Each element's row scale: max |x| over its row of a (rows, cols) array (1e-30 for a row of zeros). */
export function rowScales(x, rows, cols) {
  const s = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    let m = 1e-30;
    for (let j = 0; j < cols; j++) m = Math.max(m, Math.abs(x[i * cols + j]));
    s.fill(m, i * cols, (i + 1) * cols);
  }
  return s;
}
