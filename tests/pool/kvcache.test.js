// The pool's split KV cache (pool.kvCache, web/pool/kvcache.js) against one
// instance's cache (attn.kvCache) of the same module: attend agrees within
// POOL_VS_ONE for GQA, causal rows, windows, batch > 1 with kvLengths,
// masks and biases, the 'bshd' layout, steps, sinks and ALiBi, holders
// keeping several segments (one call each, or one per segment where
// positions matter), RoPE; appends of one token and of many; a cache crossing the small-cache threshold (SEGMENT_TOKENS, below
// which it is the one instance's result bit for bit); truncate, clear,
// keys and values; the same errors, before any worker is asked; dispose
// returns the workers' memory; a worker's death loses the cache, loudly. Node 20 needs a flag for relaxed SIMD:
// without it this file runs itself again with the flag.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { SEGMENT_TOKENS, attendUnits } from '../../web/pool/kvcache.js';
import { sliceTokens } from '../../web/pool/kvshard.js';
import { RTOL_REFERENCE, assertClose, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

// The merge sums the parts' outputs in another order than one call's online
// softmax (in float64, weighted by exp(lse_s - max lse)), so the results
// differ by rounding only. Each is within RTOL_REFERENCE (relative to the
// largest output) of the float64 result (c/attention.h, NUMERICS), so they
// are within twice that of each other.
const POOL_VS_ONE = 2 * RTOL_REFERENCE;
// lse = m + log(l): float32 rounding of values of size |lse|, plus the
// merge's log of a float64 sum; a few ulp of max(1, |lse|).
const LSE_ATOL = 1e-5, LSE_RTOL = 1e-6;

// Deterministic inputs in [-2, 2].
const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);

const LONG = 2 * SEGMENT_TOKENS + 904; // three segments, the last partly held

// A pool cache and one instance's, holding the same tokens.
async function pair({ pool, attn }, { batch = 1, kvHeads = 2, dk = 8, dv = dk, capacity = LONG, layout, dtype, rope, chunks = [LONG], append = rope ? { rope } : {} }) {
  const options = { batch, kvHeads, dk, dv, capacity, ...(layout ? { layout } : {}), ...(dtype ? { dtype } : {}) };
  const one = attn.kvCache(options);
  const split = await pool.kvCache(options);
  let seed = 10;
  for (const t of chunks) {
    const k = draw(batch * kvHeads * t * dk, seed++), v = draw(batch * kvHeads * t * dv, seed++);
    one.append(k, v, append);
    await split.append(k, v, append);
  }
  return { one, split, dispose() { one.dispose(); split.dispose(); } };
}

function close(actual, expected, what) {
  assertClose(actual, expected, { rtol: POOL_VS_ONE, what });
}

function closeLse(actual, expected, what) {
  assert.is(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (a === e) continue;
    assert.ok(Math.abs(a - e) <= LSE_ATOL + LSE_RTOL * Math.abs(e), `${what}[${i}]: pool ${a}, one instance ${e}`);
  }
}

// attend on both with the same options (stats: true), compared.
async function sameAttend({ one, split }, q, options, what) {
  const a = await split.attend(q, { ...options, stats: true });
  const b = one.attend(q, { ...options, stats: true });
  close(a.output, b.output, `${what}: output`);
  closeLse(a.lse, b.lse, `${what}: lse`);
  return a;
}

// Every case on both of the pool's memories: the cache in the shared memory,
// its ranges claimed by every thread, and in each holder's own memory.
const suites = ['shared', 'copy'].map((memory) => {
  const x = suite(`pool kvCache against one instance, memory '${memory}'`);
  x.before(async (ctx) => {
    ctx.pool = await createAttentionPool({ threads: 3, memory });
    ctx.attn = await loadAttention();
    assert.is(ctx.pool.isa, ctx.attn.isa);
    ctx.memory = memory;
  });
  x.after(({ pool }) => pool.dispose());
  return x;
});
const s = (name, test) => suites.forEach((x) => x(name, test));

s('GQA decode, 8 query heads over 2 kv heads, one prefill append across segments', async (ctx) => {
  const c = await pair(ctx, {});
  assert.is(c.split.length, LONG);
  await sameAttend(c, draw(8 * 8, 1), { heads: 8 }, 'decode');
  c.dispose();
});

s('appends of one token, crossing the small-cache threshold: one instance\'s bits up to it, close after', async (ctx) => {
  const [kvHeads, dk, heads] = [2, 8, 4];
  const c = await pair(ctx, { capacity: SEGMENT_TOKENS + 70, chunks: [SEGMENT_TOKENS - 3] });
  const q = draw(heads * dk, 2);
  for (let i = 0; i < 70; i++) {
    const k = draw(kvHeads * dk, 100 + i), v = draw(kvHeads * dk, 300 + i);
    c.one.append(k, v);
    c.split.append(k, v); // not awaited: the holders take calls in order
    const n = SEGMENT_TOKENS - 3 + i + 1;
    if (n <= SEGMENT_TOKENS) {
      // One part: the merge multiplies by exactly 1, so the bits are the one instance's.
      const a = await c.split.attend(q, { heads, stats: true }), b = c.one.attend(q, { heads, stats: true });
      assert.equal(Array.from(a.output), Array.from(b.output), `n = ${n}: output bits`);
      assert.equal(Array.from(a.lse), Array.from(b.lse), `n = ${n}: lse bits`);
    } else if (n % 7 === 0 || n === SEGMENT_TOKENS + 1) {
      await sameAttend(c, q, { heads }, `n = ${n}`);
    }
  }
  assert.is(c.split.length, SEGMENT_TOKENS + 67);
  c.dispose();
});

s('causal draft rows (nq = 8) at the newest positions, and at an earlier queryOffset', async (ctx) => {
  const c = await pair(ctx, { chunks: [3000, 1000, LONG - 4000] });
  const q = draw(4 * 8 * 8, 3);
  await sameAttend(c, q, { heads: 4, causal: true }, 'newest');
  await sameAttend(c, q, { heads: 4, causal: true, queryOffset: 2040 }, 'queryOffset 2040');
  await sameAttend(c, q, { heads: 4, causal: true, queryOffset: -3 }, 'queryOffset -3: rows without keys');
  c.dispose();
});

s('windows: segments outside every window are skipped, the rest agree', async (ctx) => {
  const c = await pair(ctx, {});
  const q = draw(4 * 4 * 8, 4);
  await sameAttend(c, q, { heads: 4, causal: true, window: [100, 0] }, 'window [100, 0]');
  await sameAttend(c, q, { heads: 4, window: [3000, 10], queryOffset: 2500 }, 'window [3000, 10] at 2500');
  await sameAttend(c, q, { heads: 4, window: [-1, 5], queryOffset: 10 }, 'window [-1, 5]');
  c.dispose();
});

s('batch 2 with kvLengths, per-batch offsets, softcap and scale', async (ctx) => {
  const c = await pair(ctx, { batch: 2 });
  const q = draw(2 * 4 * 2 * 8, 5);
  const kvLengths = Int32Array.of(LONG, SEGMENT_TOKENS + 17);
  await sameAttend(c, q, { heads: 4, kvLengths, causal: true }, 'kvLengths');
  await sameAttend(c, q, { heads: 4, kvLengths: Int32Array.of(0, 3000) }, 'an empty batch entry');
  await sameAttend(c, q, { heads: 4, queryOffset: Int32Array.of(100, 4500), causal: true, softcap: 5, scale: 0.7 }, 'queryOffsets, softcap, scale');
  c.dispose();
});

s("layout 'bshd', keys and values in the layout, out", async (ctx) => {
  const c = await pair(ctx, { batch: 2, dv: 4, layout: 'bshd', chunks: [1000, LONG - 1000] });
  const q = draw(2 * 3 * 4 * 8, 6);
  await sameAttend(c, q, { heads: 4, nq: 3, causal: true }, 'bshd');
  assert.equal(await c.split.keys(), c.one.keys(), 'keys');
  assert.equal(await c.split.values(), c.one.values(), 'values');
  const out = new Float32Array(2 * 3 * 4 * 4 + 2).fill(9);
  assert.is(await c.split.attend(q, { heads: 4, out }), out);
  close(out.subarray(0, 96), c.one.attend(q, { heads: 4 }), 'out');
  assert.is(out[96], 9, 'out past the output is left alone');
  c.dispose();
});

s('rope, alibi and sinks: keys and queries turned at their positions in the whole cache, each sink joined once', async (ctx) => {
  const heads = 4, sinks = Float32Array.of(1, -2, 0.5, 3), rope = { theta: 500, dims: 6 };
  for (const layout of ['bhsd', 'bshd']) {
    for (const dtype of ['float32', 'int8']) {
      const what = `${layout} ${dtype}`;
      const c = await pair(ctx, { batch: 2, layout, dtype, capacity: LONG + 1, chunks: [1000, LONG - 1000], append: { rope } });
      assert.is(c.split.dtype, dtype);
      assert.is(c.split.bytes, c.one.bytes, `${what}: bytes`);
      // The keys turn on the calling thread with the kernels' own turn: the one instance's bits.
      assert.equal(await c.split.keys(), c.one.keys(), `${what}: keys`);
      const q = draw(2 * heads * 3 * 8, 11);
      await sameAttend(c, q, { heads, nq: 3, causal: true, rope, alibi: true, sinks }, `${what}: rope, alibi, sinks`);
      await sameAttend(c, q, { heads, nq: 3, causal: true, rope, queryOffset: Int32Array.of(10, 4000), sinks }, `${what}: per-batch offsets`);
      // Rows with no allowed key: output 0 and lse the sink, as one call gives.
      const none = await sameAttend(c, q, { heads, nq: 3, causal: true, rope, queryOffset: -5, sinks }, `${what}: no keys`);
      assert.equal(Array.from(none.output.subarray(0, 8)), new Array(8).fill(0));
      assert.is(none.lse[0], sinks[0]);
      await rejects(c.split.attend(q, { heads, nq: 3 }), RangeError, /^kvCache\.attend: the keys were turned with rope \{ theta: 500, dims: 6, interleaved: false \}/);
      await rejects(c.split.append(draw(2 * 2 * 8, 1), draw(2 * 2 * 8, 2)), RangeError, /^kvCache\.append: the held keys were appended with rope/);
      assert.is(c.split.length, LONG, 'a refused append changes nothing');
      c.dispose();
    }
  }
  {
    // A window that leaves one segment, a later one the calling thread holds
    // (3 threads: segments 0 and 3 are its own): q must turn at its own
    // position there too, not at the segment's shifted one.
    const n = 3 * SEGMENT_TOKENS + 300;
    const late = await pair(ctx, { capacity: n, chunks: [n], append: { rope } });
    const q = draw(heads * 8, 13);
    const before = ctx.pool.stats;
    await sameAttend(late, q, { heads, causal: true, rope, window: [100, 0], sinks }, 'a window within segment 3');
    assert.equal(ctx.pool.stats, before, 'no worker asked');
    late.dispose();
  }
  // A small cache is attended on the calling thread in one part: the one instance's bits.
  const c = await pair(ctx, { capacity: 300, chunks: [200, 1], append: { rope: true } });
  const q = draw(heads * 8, 12);
  const a = await c.split.attend(q, { heads, rope: true, alibi: true, sinks, stats: true }), b = c.one.attend(q, { heads, rope: true, alibi: true, sinks, stats: true });
  assert.equal(Array.from(a.output), Array.from(b.output), 'small cache: output bits');
  assert.equal(Array.from(a.lse), Array.from(b.lse), 'small cache: lse bits');
  c.dispose();
});

s('masks and biases: flat, broadcast, shorter than nk', async (ctx) => {
  const c = await pair(ctx, {});
  const nq = 2, heads = 4, nk = LONG;
  const q = draw(heads * nq * 8, 7);
  const mask = Uint8Array.from(draw(nq * nk, 8), (x) => (x > -1.5 ? 1 : 0));
  await sameAttend(c, q, { heads, mask }, 'flat mask');
  const bias = { data: draw(heads * nk, 9), shape: [1, heads, 1, nk] };
  await sameAttend(c, q, { heads, bias, causal: true }, 'bias per head');
  const short = { data: Uint8Array.from(draw(nq * 3000, 10), (x) => (x > -1 ? 1 : 0)), shape: [nq, 3000] };
  await sameAttend(c, q, { heads, mask: short }, 'mask of 3000 columns');
  c.dispose();
});

s('steps: scores, logits and weights over all keys', async (ctx) => {
  const c = await pair(ctx, { capacity: 2 * SEGMENT_TOKENS + 10, chunks: [2 * SEGMENT_TOKENS + 10] });
  const q = draw(4 * 8, 11);
  const options = { heads: 4, steps: true, stats: true, window: [3000, 0], queryOffset: 4000 };
  const a = await c.split.attend(q, options), b = c.one.attend(q, options);
  assert.equal(Object.keys(a), Object.keys(b), 'result keys');
  for (const name of ['output', 'scores', 'scaled', 'logits', 'weights']) close(a[name], b[name], name);
  closeLse(a.lse, b.lse, 'lse');
  c.dispose();
});

s('truncate: the kept tokens attend as a cache that only held them; appends go on from there', async (ctx) => {
  const c = await pair(ctx, { capacity: LONG + 30 });
  const q = draw(4 * 8, 12);
  for (const keep of [LONG - 1, 2 * SEGMENT_TOKENS, SEGMENT_TOKENS + 100, 5]) {
    // One instance's cache of the first `keep` tokens.
    const kept = ctx.attn.kvCache({ kvHeads: 2, dk: 8, capacity: LONG + 30 });
    const n = c.split.length;
    kept.append(sliceTokens(c.one.keys(), 'bhsd', 1, 2, LONG, 8, 0, keep), sliceTokens(c.one.values(), 'bhsd', 1, 2, LONG, 8, 0, keep));
    await c.split.truncate(keep);
    assert.is(c.split.length, keep);
    assert.ok(keep < n);
    close(await c.split.attend(q, { heads: 4 }), kept.attend(q, { heads: 4 }), `after truncate(${keep})`);
    assert.equal(await c.split.keys(), kept.keys(), `keys after truncate(${keep})`);
    const k = draw(2 * 30 * 8, 13), v = draw(2 * 30 * 8, 14);
    kept.append(k, v);
    await c.split.append(k, v);
    close(await c.split.attend(q, { heads: 4, causal: true }), kept.attend(q, { heads: 4, causal: true }), `appended after truncate(${keep})`);
    await c.split.truncate(keep);
    kept.dispose();
  }
  await c.split.truncate(0);
  assert.is(c.split.length, 0);
  c.one.clear();
  await assertSameError(() => c.split.attend(q, { heads: 4 }), () => c.one.attend(q, { heads: 4 }));
  await rejects(c.split.truncate(1), RangeError, /^kvCache\.truncate: length must be an integer in \[0, 0\] \(the tokens held\), got 1/);
  c.dispose();
});

s('holders keeping several segments back to back: decode in one call each, per segment where positions matter', async (ctx) => {
  // Seven segments over three holders: the calling thread keeps 0, 3 and 6, the workers 1, 4 and 2, 5.
  const n = 6 * SEGMENT_TOKENS + 333;
  const c = await pair(ctx, { capacity: n + 40, chunks: [5000, n - 5000] });
  const q = draw(4 * 8, 18), q3 = draw(4 * 3 * 8, 19);
  await sameAttend(c, q, { heads: 4 }, 'decode');
  await sameAttend(c, q, { heads: 4, causal: true, window: [-1, 0] }, 'causal decode at the newest position: nothing cut');
  await sameAttend(c, q, { heads: 4, window: [n, -1], queryOffset: n - 1 }, 'a window wider than the cache');
  await sameAttend(c, q, { heads: 4, causal: true, queryOffset: n - 2 }, 'causal decode one position back: the newest key cut');
  await sameAttend(c, q, { heads: 4, window: [4 * SEGMENT_TOKENS, -1] }, 'a window that cuts the oldest segments');
  await sameAttend(c, q3, { heads: 4, causal: true }, 'causal rows');
  await sameAttend(c, q, { heads: 4, softcap: 3, scale: 0.5 }, 'softcap and scale');
  assert.equal(await c.split.keys(), c.one.keys(), 'keys');
  assert.equal(await c.split.values(), c.one.values(), 'values');
  // Into the calling thread's second segment: its third and the workers' later segments go too.
  const keep = 3 * SEGMENT_TOKENS + 5;
  await c.split.truncate(keep);
  c.one.truncate(keep);
  const k = draw(2 * 40 * 8, 20), v = draw(2 * 40 * 8, 21);
  c.one.append(k, v);
  await c.split.append(k, v);
  await sameAttend(c, q, { heads: 4 }, 'after truncate and append');
  assert.equal(await c.split.keys(), c.one.keys(), 'keys after truncate and append');
  c.dispose();
});

s('sinks join each row once, ALiBi biases by position: decode, causal rows, rows without keys, steps', async (ctx) => {
  const n = 4 * SEGMENT_TOKENS + 100;
  const c = await pair(ctx, { capacity: n, chunks: [n] });
  const q = draw(4 * 8, 22), q3 = draw(4 * 3 * 8, 23);
  // Large enough to hold a share of every row against thousands of keys.
  const sinks = Float32Array.of(12, -1, 9, 15);
  await sameAttend(c, q, { heads: 4, sinks }, 'sinks, decode');
  await sameAttend(c, q3, { heads: 4, sinks, causal: true, queryOffset: -1 }, 'sinks, rows without keys');
  await sameAttend(c, q, { heads: 4, alibi: true }, 'ALiBi, decode');
  await sameAttend(c, q3, { heads: 4, alibi: Float32Array.of(0.5, 0.25, 0.1, 0.01), sinks, causal: true, window: [5000, 0] }, 'ALiBi slopes, sinks, causal window');
  const options = { heads: 4, steps: true, stats: true, sinks, alibi: true, window: [3000, 0], queryOffset: 4000 };
  const a = await c.split.attend(q, options), b = c.one.attend(q, options);
  for (const name of ['output', 'scores', 'scaled', 'logits', 'weights']) close(a[name], b[name], `steps: ${name}`);
  closeLse(a.lse, b.lse, 'steps: lse');
  c.dispose();
  // A cache in segment 0 alone: the caller's own options, sinks and ALiBi included.
  const small = await pair(ctx, { capacity: 100, chunks: [100] });
  await sameAttend(small, q, { heads: 4, sinks, alibi: true }, 'one segment');
  small.dispose();
});

s('float16 and int8 caches, both layouts: held in place by every holder, equal to one instance\'s of the dtype', async (ctx) => {
  const n = 5 * SEGMENT_TOKENS + 77;
  const q = draw(2 * 4 * 8, 27), q2 = draw(2 * 2 * 4 * 8, 28);
  for (const dtype of ['float16', 'int8']) {
    for (const layout of ['bhsd', 'bshd']) {
      const what = `${dtype}, ${layout}`;
      const c = await pair(ctx, { batch: 2, dtype, layout, capacity: n, chunks: [3000, n - 3000] });
      await sameAttend(c, q, { heads: 4 }, `${what}: decode`);
      await sameAttend(c, q, { heads: 4, window: [2 * SEGMENT_TOKENS + 9, -1] }, `${what}: a window that cuts`);
      await sameAttend(c, q2, { heads: 4, causal: true, kvLengths: Int32Array.of(n, 3 * SEGMENT_TOKENS + 1) }, `${what}: causal rows, kvLengths`);
      assert.equal(await c.split.keys(), c.one.keys(), `${what}: keys`);
      assert.equal(await c.split.values(), c.one.values(), `${what}: values`);
      c.dispose();
    }
  }
});

s('RoPE: keys turned at their positions in the whole cache, queries at theirs; every path, compact caches, bshd', async (ctx) => {
  const n = 4 * SEGMENT_TOKENS + 300;
  const q = draw(2 * 4 * 8, 29), q3 = draw(2 * 3 * 4 * 8, 30);
  const cases = [
    { rope: true, chunks: [5, 3000, n - 3005] },
    { rope: { theta: 500000, dims: 4, interleaved: true }, layout: 'bshd', chunks: [n] },
    { rope: true, dtype: 'int8', chunks: [2047, n - 2047] },
    { rope: { dims: 6 }, dtype: 'float16', layout: 'bshd', chunks: [4000, n - 4000] },
  ];
  for (const { rope, ...options } of cases) {
    const what = `${JSON.stringify(rope)} ${options.dtype ?? 'float32'} ${options.layout ?? 'bhsd'}`;
    const c = await pair(ctx, { batch: 2, capacity: n, rope, ...options });
    await sameAttend(c, q, { heads: 4, rope }, `${what}: decode`);
    await sameAttend(c, q, { heads: 4, rope, causal: true, queryOffset: Int32Array.of(n - 1, 7000) }, `${what}: causal, offsets per entry`);
    await sameAttend(c, q3, { heads: 4, rope, causal: true, alibi: true }, `${what}: causal rows, ALiBi`);
    await sameAttend(c, q, { heads: 4, rope, window: [1000, 0], queryOffset: 3 * SEGMENT_TOKENS + 10 }, `${what}: a window`);
    assert.equal(await c.split.keys(), c.one.keys(), `${what}: the turned keys`);
    c.dispose();
  }
  // A cache in segment 0 alone: one instance's bits.
  const small = await pair(ctx, { capacity: 300, rope: true, chunks: [100, 200] });
  const qs = draw(4 * 8, 31);
  const a = await small.split.attend(qs, { heads: 4, rope: true }), b = small.one.attend(qs, { heads: 4, rope: true });
  assert.equal(Array.from(a), Array.from(b), 'one segment: bits');
  small.dispose();
});

s('clear forgets every holder\'s tokens', async (ctx) => {
  const c = await pair(ctx, {});
  await c.split.clear();
  c.one.clear();
  assert.is(c.split.length, 0);
  const k = draw(2 * 2500 * 8, 15), v = draw(2 * 2500 * 8, 16);
  c.one.append(k, v);
  await c.split.append(k, v);
  await sameAttend(c, draw(4 * 8, 17), { heads: 4 }, 'after clear');
  c.dispose();
});

suites.forEach((x) => x.run());

// Runs both: the pool's call must reject with the class and message the one
// instance's call throws.
async function assertSameError(poolCall, oneCall) {
  const expected = rejects(oneCall, Error, /./, 'the one instance');
  const actual = await rejects(poolCall, expected.constructor, expected.message, 'the pool');
  assert.is(actual.constructor, expected.constructor, `class for ${expected.message}`);
}

const e = suite('pool kvCache errors and memory');
e.before(async (ctx) => {
  ctx.pool = await createAttentionPool({ threads: 2, callerShare: false });
  ctx.attn = await loadAttention();
});
e.after(({ pool }) => pool.dispose());

e('callerShare false: the calling thread keeps segment 0, the workers the rest; results agree', async (ctx) => {
  const c = await pair(ctx, { chunks: [LONG] });
  await sameAttend(c, draw(4 * 8, 18), { heads: 4, causal: true }, 'callerShare false');
  c.dispose();
});

e('bad options, tokens and calls: the error attn.kvCache gives', async ({ pool, attn }) => {
  for (const options of [undefined, null, { dk: 8 }, { capacity: 10 }, { dk: 8, capacity: 0 }, { dk: 8, capacity: 10, layout: 'x' },
    { dk: 8, capacity: 10, batch: 1.5 }, { dk: 8, capacity: 10, heads: 2 }]) {
    await assertSameError(() => pool.kvCache(options), () => attn.kvCache(options));
  }
  const options = { kvHeads: 2, dk: 4, capacity: SEGMENT_TOKENS + 8 };
  const one = attn.kvCache(options), split = await pool.kvCache(options);
  const ok = new Float32Array(2 * 4);
  for (const [k, v] of [[[1, 2], ok], [ok, null], [new Float32Array(7), ok], [ok, new Float32Array(9)],
    [new Float32Array(2 * 4 * (SEGMENT_TOKENS + 9)), new Float32Array(2 * 4 * (SEGMENT_TOKENS + 9))]]) {
    await assertSameError(() => split.append(k, v), () => one.append(k, v));
  }
  assert.is(split.length, 0, 'nothing appended');
  const q = new Float32Array(4 * 4);
  await assertSameError(() => split.attend(q, { heads: 4 }), () => one.attend(q, { heads: 4 }));
  const big = new Float32Array(2 * 4 * (SEGMENT_TOKENS + 5));
  one.append(big, big);
  await split.append(big, big);
  for (const opts of [{ heads: 3 }, { heads: 4, nq: 2 }, { heads: 4, foo: 1 }, { heads: 4, window: [1] }, { heads: 4, kvLengths: [1] },
    { heads: 4, kvLengths: Int32Array.of(SEGMENT_TOKENS + 6) }, { heads: 4, mask: new Uint8Array(3) }, { heads: 4, scale: Infinity },
    { heads: 4, out: new Float32Array(2) }, { heads: 4, causal: 1 }, { heads: 4, queryOffset: 0.5 }]) {
    await assertSameError(() => split.attend(q, opts), () => one.attend(q, opts));
  }
  await assertSameError(() => split.attend([0], { heads: 4 }), () => one.attend([0], { heads: 4 }));
  close(await split.attend(q, { heads: 4 }), one.attend(q, { heads: 4 }), 'still works after the errors');
  for (const bad of [-1, 1.5, SEGMENT_TOKENS + 6, '1', null]) await assertSameError(() => split.truncate(bad), () => one.truncate(bad));
  one.dispose();
  split.dispose();
  await assertSameError(() => split.attend(q, { heads: 4 }), () => one.attend(q, { heads: 4 }));
  await assertSameError(() => split.append(ok, ok), () => one.append(ok, ok));
});

e('a capacity no thread could hold (2 ** 40 tokens) is refused at once with one instance\'s RangeError, before any segment is planned', async ({ pool, attn }) => {
  for (const options of [{ dk: 4, capacity: 2 ** 40 }, { kvHeads: 8, dk: 128, capacity: 2 ** 31, dtype: 'int8' }]) {
    const one = rejects(() => attn.kvCache(options), RangeError, /wasm32 holds at most 4 GiB$/);
    // The need as one instance states it, then the share of one thread of the pool.
    const need = one.message.slice(0, one.message.indexOf(';'));
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('pool.kvCache still pending after 20 s')), 20000);
    });
    try {
      const err = await rejects(Promise.race([pool.kvCache(options), late]), RangeError, /wasm32 holds at most 4 GiB$/, JSON.stringify(options));
      assert.ok(err.message.startsWith(`${need}, `), `${err.message}\nversus one instance's\n${one.message}`);
      assert.match(err.message, /, at least [\d.]+ [KMGT]iB in one thread of the pool; /);
    } finally {
      clearTimeout(timer);
    }
  }
});

e('dispose returns the workers\' memory: caches of 1.5 GiB per worker, made and disposed four times', async ({ pool }) => {
  // Each worker holds about half of the capacity; four such caches at once
  // would need 6 GiB per worker, past wasm32's 4 GiB.
  const perToken = 8 * (64 + 64) * 4;
  const capacity = Math.floor((3 * 2 ** 30) / perToken);
  for (let i = 0; i < 4; i++) {
    const cache = await pool.kvCache({ kvHeads: 8, dk: 64, capacity });
    const t = new Float32Array(8 * 64 * (SEGMENT_TOKENS + 1));
    await cache.append(t, t);
    assert.is(cache.length, SEGMENT_TOKENS + 1, `cache ${i}: the tokens are held`);
    cache.dispose();
    await rejects(cache.attend(new Float32Array(8 * 64)), Error, /^kvCache\.attend: this cache was disposed/, `cache ${i}`);
  }
  // The fifth fits only if the four before gave their memory back.
  const last = await pool.kvCache({ kvHeads: 8, dk: 64, capacity });
  const t = new Float32Array(8 * 64 * (SEGMENT_TOKENS + 1)).fill(0.5);
  await last.append(t, t);
  const out = await last.attend(new Float32Array(8 * 64), { heads: 8 });
  assert.ok(out.every((x) => x === 0.5), 'the fifth cache attends over its values');
  last.dispose();
});

e('a worker that dies takes its segments: the cache then rejects every call, saying so', async ({ attn }) => {
  // This worker exits on a call with dk = 13 (tests/pages/pool-crash-worker.js).
  const pool = await createAttentionPool({ threads: 2, callerShare: false, memory: 'copy', worker: new URL('../pages/pool-crash-worker.js', import.meta.url) });
  try {
    const c = await pair({ pool, attn }, {});
    await sameAttend(c, draw(4 * 8, 19), { heads: 4 }, 'before');
    const [heads, n, d] = [4, 512, 13];
    const x = draw(heads * n * d, 20);
    // Layout 'bshd' is not split: the call goes whole to one worker, which dies.
    await rejects(pool.sdpa(x, x, x, { heads, nq: n, nk: n, dk: d, dv: d, layout: 'bshd' }), Error, /^attention-wasm pool: a worker stopped during this call/);
    await rejects(c.split.attend(draw(4 * 8, 19), { heads: 4 }), Error, /^kvCache\.attend: this cache's keys and values are lost \(a worker holding part of it stopped\); make a new cache/);
    await rejects(c.split.append(new Float32Array(16), new Float32Array(16)), Error, /^kvCache\.append: this cache's keys and values are lost/);
    c.dispose();
    // The pool replaced its workers: a new cache works.
    const again = await pair({ pool, attn }, {});
    await sameAttend(again, draw(4 * 8, 21), { heads: 4 }, 'a new cache');
    again.dispose();
  } finally {
    pool.dispose();
  }
});

e('on the shared memory, calls made while an attend\'s parts still read the cache wait for them, in order', async ({ pool, attn }) => {
  // callerShare false: the workers compute every range after the attend returns its Promise.
  assert.is(pool.memory, 'shared');
  const c = await pair({ pool, attn }, { kvHeads: 2, dk: 64, capacity: LONG });
  assert.is(c.split.memory, 'shared');
  const q = draw(4 * 64, 30), expected = c.one.attend(q, { heads: 4 });
  const later = draw(2 * (LONG - 100) * 64, 31);
  // Not awaited: the truncate and the append that overwrites the keys the attend reads follow at once.
  const attended = c.split.attend(q, { heads: 4 });
  const truncated = c.split.truncate(100), appended = c.split.append(later, later);
  const reread = c.split.attend(q, { heads: 4 });
  close(await attended, expected, 'the attend made before the truncate');
  await truncated;
  await appended;
  c.one.truncate(100);
  c.one.append(later, later);
  close(await reread, c.one.attend(q, { heads: 4 }), 'the attend made after the append');
  // Disposed while its parts run: the attend still gets the held keys'.
  const last = c.split.attend(q, { heads: 4 });
  c.split.dispose();
  close(await last, c.one.attend(q, { heads: 4 }), 'the attend made before dispose');
  c.one.dispose();
});

e('on the shared memory a head whose keys one unit holds gets one instance\'s bits; a head split over units, within rounding', async (ctx) => {
  assert.is(ctx.pool.memory, 'shared');
  for (const [kvHeads, dtype] of [[2, undefined], [4, 'int8'], [1, undefined]]) {
    const c = await pair(ctx, { kvHeads, dtype });
    const heads = 2 * kvHeads, q = draw(heads * 8, 7);
    const whole = attendUnits(LONG, kvHeads, ctx.pool.threads, true).ranges.length === 1;
    const a = await c.split.attend(q, { heads, stats: true }), b = c.one.attend(q, { heads, stats: true });
    const what = `${kvHeads} kv heads, ${dtype ?? 'float32'}, ${whole ? 'whole heads' : 'heads split'}`;
    if (whole) {
      assert.equal(Array.from(a.output), Array.from(b.output), `${what}: output bits`);
      assert.equal(Array.from(a.lse), Array.from(b.lse), `${what}: lse bits`);
    } else {
      close(a.output, b.output, `${what}: output`);
      closeLse(a.lse, b.lse, `${what}: lse`);
    }
    c.dispose();
  }
  // Both kinds ran: kv heads 2 and 4 fill the units whole at this length, 1 is split.
  assert.is(attendUnits(LONG, 1, ctx.pool.threads, true).ranges.length, 2);
  assert.is(attendUnits(LONG, 2, ctx.pool.threads, true).ranges.length, 1);
  // 8 kv heads on 2 threads: whole heads past the length where fewer would split (16 ranges).
  const long = 16 * SEGMENT_TOKENS;
  assert.ok(attendUnits(long, 2, ctx.pool.threads, true).ranges.length > 1, 'fewer kv heads split');
  const c = await pair(ctx, { kvHeads: 8, capacity: long, chunks: [long] });
  const q = draw(16 * 8, 9);
  const a = await c.split.attend(q, { heads: 16, stats: true }), b = c.one.attend(q, { heads: 16, stats: true });
  assert.equal(Array.from(a.output), Array.from(b.output), '8 kv heads, 32768 keys: output bits');
  assert.equal(Array.from(a.lse), Array.from(b.lse), '8 kv heads, 32768 keys: lse bits');
  c.dispose();
});

e('on the shared memory an attend\'s result is final when it resolves: answers that come later change nothing (sinks)', async ({ pool, attn }) => {
  // callerShare false: every range is a worker's, and every answer comes after the call could resolve.
  const c = await pair({ pool, attn }, { kvHeads: 2, dk: 64, capacity: LONG });
  const sinks = Float32Array.from([0.5, -1, 2, 0]);
  for (let i = 0; i < 12; i++) {
    const q = draw(4 * 64, 40 + i), out = new Float32Array(4 * 64);
    const got = await c.split.attend(q, { heads: 4, sinks, out });
    assert.is(got, out);
    const seen = out.slice();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(out.every((x, j) => Object.is(x, seen[j])), `attend ${i}: out changed after the call resolved`);
    close(out, c.one.attend(q, { heads: 4, sinks }), `attend ${i}`);
  }
  c.split.dispose();
  c.one.dispose();
});

e('on the shared memory a worker that dies loses nothing: the call it was in rejects, the cache goes on', async ({ attn }) => {
  // callerShare false: only the workers claim, so they do before the call can end.
  const pool = await createAttentionPool({ threads: 2, callerShare: false, worker: new URL('../pages/pool-crash-worker.js', import.meta.url) });
  try {
    assert.is(pool.memory, 'shared');
    // dk = 13: a worker dies on its first claim of the cache's ranges.
    const crashing = await pair({ pool, attn }, { dk: 13 });
    await rejects(crashing.split.attend(draw(4 * 13, 32), { heads: 4 }), Error, /^attention-wasm pool: a worker stopped during this call/);
    assert.equal(await crashing.split.keys(), crashing.one.keys(), 'the held keys, after the worker died');
    crashing.dispose();
    // A worker killed by another call: a cache of dk = 8 attends as before.
    const c = await pair({ pool, attn }, { capacity: LONG + 8 });
    await sameAttend(c, draw(4 * 8, 33), { heads: 4 }, 'before');
    const [heads, n, d] = [4, 512, 13];
    const x = draw(heads * n * d, 20);
    await rejects(pool.sdpa(x, x, x, { heads, nq: n, nk: n, dk: d, dv: d, layout: 'bshd' }), Error, /^attention-wasm pool: a worker stopped during this call/);
    await sameAttend(c, draw(4 * 8, 33), { heads: 4 }, 'after a worker died');
    await c.split.append(draw(2 * 8, 34), draw(2 * 8, 35));
    c.one.append(draw(2 * 8, 34), draw(2 * 8, 35));
    await sameAttend(c, draw(4 * 8, 36), { heads: 4 }, 'after an append');
    c.dispose();
  } finally {
    pool.dispose();
  }
});

e('on the shared memory a call reads its arrays when it is made, and moves the length then, while earlier ranges still run', async ({ pool, attn }) => {
  // callerShare false: each attend's ranges are still being read when the next calls are made.
  const c = await pair({ pool, attn }, { capacity: LONG + 8 });
  assert.is(c.split.memory, 'shared');
  const q = new Float32Array(4 * 8), k = new Float32Array(2 * 8), v = new Float32Array(2 * 8);
  const pending = [], expected = [];
  for (let i = 0; i < 4; i++) {
    q.set(draw(4 * 8, 40 + i));
    k.set(draw(2 * 8, 50 + i));
    v.set(draw(2 * 8, 60 + i));
    pending.push(c.split.attend(q, { heads: 4, queryOffset: c.split.length - 1 }));
    expected.push(c.one.attend(q, { heads: 4, queryOffset: c.one.length - 1 }));
    c.split.append(k, v);
    c.one.append(k, v);
    assert.is(c.split.length, c.one.length, `length after append ${i}`);
  }
  const got = await Promise.all(pending);
  got.forEach((g, i) => close(g, expected[i], `attend ${i}, its q refilled at once`));
  assert.equal(await c.split.keys(), c.one.keys(), 'keys appended from a refilled array');
  c.dispose();
});

e('on the shared memory, a pool left without workers fails the calls that need one, and its caches go on', async ({ attn }) => {
  const flag = join(tmpdir(), `attention-wasm-no-replace-${process.pid}`);
  rmSync(flag, { force: true });
  process.env.ATTN_TEST_NO_REPLACE = flag;
  const pool = await createAttentionPool({ threads: 1, callerShare: false, worker: new URL('../pages/pool-noreplace-worker.js', import.meta.url) });
  try {
    // The worker dies in a's attend and its replacement does not start; b's attend waited for a worker.
    const a = await pair({ pool, attn }, { dk: 13, capacity: LONG + 8 }), b = await pair({ pool, attn }, { capacity: LONG + 8 });
    const attendA = a.split.attend(draw(4 * 13, 70), { heads: 4 }), attendB = b.split.attend(draw(4 * 8, 71), { heads: 4 });
    await rejects(attendA, Error, /^attention-wasm pool: a worker stopped during this call/);
    await rejects(attendB, Error, /^attention-wasm pool: no worker could be started/);
    // What the calling thread does alone still settles: nothing waits for the attends that failed.
    await b.split.append(draw(2 * 8, 72), draw(2 * 8, 73));
    b.one.append(draw(2 * 8, 72), draw(2 * 8, 73));
    assert.equal(await b.split.keys(), b.one.keys(), 'b\'s keys');
    await a.split.append(draw(2 * 13, 74), draw(2 * 13, 75));
    a.dispose();
    b.dispose();
  } finally {
    pool.dispose();
    rmSync(flag, { force: true });
  }
});

e('pool.dispose() while a shared cache\'s attend runs and later calls wait: every call settles', async ({ attn }) => {
  const pool = await createAttentionPool({ threads: 2, callerShare: false });
  const c = await pair({ pool, attn }, { capacity: LONG + 8 });
  const q = draw(4 * 8, 80);
  const calls = [c.split.attend(q, { heads: 4 }), c.split.append(draw(2 * 8, 81), draw(2 * 8, 82)), c.split.attend(q, { heads: 4 }), c.split.keys()];
  pool.dispose();
  const settled = await Promise.allSettled(calls);
  assert.is(settled[0].status, 'rejected', 'the attend in flight');
  assert.match(settled[2].reason?.message ?? '', /^attention-wasm pool: (this pool was disposed|disposed during this call)/, 'the attend that waited');
  c.dispose();
});

e('after pool.dispose(), a cache rejects', async () => {
  const pool = await createAttentionPool({ threads: 1 });
  const cache = await pool.kvCache({ dk: 4, capacity: 8 });
  await cache.append(new Float32Array(4), new Float32Array(4));
  pool.dispose();
  await rejects(cache.attend(new Float32Array(4)), Error, /^attention-wasm pool: this pool was disposed/);
  await rejects(cache.append(new Float32Array(4), new Float32Array(4)), Error, /^attention-wasm pool: this pool was disposed/);
  await rejects(pool.kvCache({ dk: 4, capacity: 8 }), Error, /^attention-wasm pool: this pool was disposed/);
  cache.dispose();
});

e.run();

const u = suite('the units of an attend on the shared memory');

u('every key of every kv head in one unit; as many units as ranges of every head or fewer, none smaller, of one kv head where the count allows', () => {
  for (const threads of [2, 3, 8]) for (const kvHeads of [1, 2, 3, 8, 32]) for (const length of [2049, 4096, 5000, 32768, 100003]) {
    const all = attendUnits(length, kvHeads, threads, false);
    assert.is(all.kvHeadsPer, kvHeads, 'without byHead every unit takes every kv head');
    const { ranges, kvHeadsPer } = attendUnits(length, kvHeads, threads, true);
    const what = `length ${length}, kvHeads ${kvHeads}, threads ${threads}`;
    for (const list of [all.ranges, ranges]) {
      let at = 0;
      for (const [start, n] of list) {
        assert.is(start, at, `${what}: ranges follow each other`);
        assert.ok(n > 0, `${what}: no empty range`);
        at += n;
      }
      assert.is(at, length, `${what}: the ranges hold every key`);
    }
    const groups = Math.ceil(kvHeads / kvHeadsPer);
    assert.ok(ranges.length * groups <= all.ranges.length, `${what}: ${ranges.length} x ${groups} units, ranges of every head ${all.ranges.length}`);
    const smallest = (list, heads) => Math.min(...list.map(([, n]) => n)) * heads;
    const lastHeads = kvHeads - (groups - 1) * kvHeadsPer; // the last group may hold fewer
    assert.ok(smallest(ranges, lastHeads) >= smallest(all.ranges, kvHeads) / 2 - 64 * kvHeadsPer, `${what}: no unit much smaller than a range of every head`);
    if (all.ranges.length >= kvHeads) assert.is(kvHeadsPer, 1, `${what}: one kv head a unit`);
    if (kvHeads >= 4 * threads) assert.is(ranges.length, 1, `${what}: whole kv heads once there are 4 a thread`);
  }
});

u.run();
