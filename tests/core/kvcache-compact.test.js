// kvCache({ dtype: 'float16' | 'int8' }): compact caches against numpy
// (tests/fixtures/kvcache.json): the stored values bit for bit, attend
// against the float64 attention over those values, and the error against
// the float32 cache within the bound c/attention.h states. Then truncate,
// the verification of draft tokens in one call, and hostile values.
import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, loadAttention } from '../../web/attention.js';
import { RTOL_REFERENCE, assertClose, generated, readJSON, rejects } from '../helpers.js';

const fixture = readJSON('fixtures/kvcache.json');
const DTYPES = ['float32', 'float16', 'int8'];
const NQS = [1, 4, 20]; // a decode step, drafts to verify, and more rows than the compact decode path takes
// Rows up to which a compact cache stays on the decode kernel (ATTN_KV_DECODE_ROWS).
const KV_DECODE_ROWS = 16;

// The inputs of a case, drawn as make_fixtures.py's kv_case draws them.
function inputs(c) {
  const rng = new NumpyRandom(c.seed);
  const { heads, kvHeads, nk, d, nqMax } = c;
  const q = Float32Array.from(rng.randn(heads * nqMax * d), (x) => x * c.qAmp);
  const kd = rng.randn(kvHeads * nk * d), vd = rng.randn(kvHeads * nk * d);
  const k = new Float32Array(kd.length), v = new Float32Array(vd.length);
  for (let i = 0; i < kd.length; i++) {
    const j = Math.floor(i / d) % nk, ch = i % d;
    k[i] = kd[i] * ((c.kTokens[j] ?? 1) * (c.kChannels[ch] ?? 1));
    v[i] = vd[i] * (c.vTokens[j] ?? 1);
  }
  return { q, k, v };
}

// Rows [nqMax - nq, nqMax) of each head of a (heads, nqMax, d) array.
function lastRows(x, heads, nqMax, nq, d) {
  const out = new Float32Array(heads * nq * d);
  for (let h = 0; h < heads; h++) out.set(x.subarray((h * nqMax + nqMax - nq) * d, (h * nqMax + nqMax) * d), h * nq * d);
  return out;
}

// Tokens [t0, t1) of a (kvHeads, n, d) array.
function tokens(x, kvHeads, n, d, t0, t1) {
  const out = new Float32Array(kvHeads * (t1 - t0) * d);
  for (let h = 0; h < kvHeads; h++) out.set(x.subarray((h * n + t0) * d, (h * n + t1) * d), h * (t1 - t0) * d);
  return out;
}

const sha256 = (x) => createHash('sha256').update(new Uint8Array(x.buffer, x.byteOffset, x.byteLength)).digest('hex');
const maxAbs = (x) => x.reduce((m, y) => Math.max(m, Math.abs(y)), 0);

// The bound of c/attention.h for output row (h, i) of a cache holding k2, v2
// in place of k, v: (exp(2 delta) - 1) max|v| + max|v2 - v|, delta the
// largest logit change, plus (int8 on the decode path) what rounding q to 16
// bits adds to it.
function rowBound(c, q, k, v, k2, v2, h, i, nq, qRounding) {
  const { heads, kvHeads, nk, d } = c;
  const g = Math.floor(h / (heads / kvHeads)), scale = Math.fround(1 / Math.sqrt(d));
  const qRow = q.subarray((h * nq + i) * d, (h * nq + i + 1) * d);
  const keys = nk - nq + i + 1; // causal: keys 0 .. its position
  const qStep = qRounding ? maxAbs(qRow) / 32767 / 2 : 0;
  let delta = 0, vmax = 0, dv = 0;
  for (let j = 0; j < keys; j++) {
    let s = 0;
    for (let ch = 0; ch < d; ch++) {
      const at = (g * nk + j) * d + ch;
      s += Math.abs(qRow[ch]) * Math.abs(k2[at] - k[at]) + qStep * Math.abs(k2[at]);
      vmax = Math.max(vmax, Math.abs(v[at]));
      dv = Math.max(dv, Math.abs(v2[at] - v[at]));
    }
    delta = Math.max(delta, scale * s);
  }
  return Math.expm1(2 * delta) * vmax + dv;
}

for (const simd of [true, false]) {
  const build = simd ? 'SIMD128' : 'scalar';
  const s = suite(`kvCache dtypes against numpy, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd, deterministic: true });
  });

  for (const c of generated(fixture.cases, 3, 'kvcache.json cases')) {
    for (const dtype of DTYPES) {
      s(`${c.name}, ${dtype}: keys() and values() are numpy's values bit for bit; attend within the stated bound of the float32 cache`, ({ attn }) => {
        const { heads, kvHeads, nk, d, nqMax } = c;
        const { q, k, v } = inputs(c);
        const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk, dtype });
        try {
          // One chunk, then single tokens: both ways of appending.
          cache.append(tokens(k, kvHeads, nk, d, 0, nk - 5), tokens(v, kvHeads, nk, d, 0, nk - 5));
          for (let t = nk - 5; t < nk; t++) cache.append(tokens(k, kvHeads, nk, d, t, t + 1), tokens(v, kvHeads, nk, d, t, t + 1));
          const k2 = cache.keys(), v2 = cache.values();
          assert.is(sha256(k2), c.sha256[dtype].keys, 'keys()');
          assert.is(sha256(v2), c.sha256[dtype].values, 'values()');
          const numpy = Float32Array.from(c.outputs[dtype]), reference = Float32Array.from(c.outputs.float32);
          for (const nq of NQS) {
            const qq = lastRows(q, heads, nqMax, nq, d);
            const got = cache.attend(qq, { heads, causal: true });
            const qRounding = dtype === 'int8' && nq <= KV_DECODE_ROWS && d % 8 === 0;
            const want = lastRows(numpy, heads, nqMax, nq, d), ref = lastRows(reference, heads, nqMax, nq, d);
            const scaleOut = maxAbs(ref);
            for (let h = 0; h < heads; h++) {
              for (let i = 0; i < nq; i++) {
                const row = (h * nq + i) * d;
                // Against numpy over the stored values: float32 rounding, and
                // for int8 on the decode path the rounding of q.
                const slack = qRounding ? rowBound(c, qq, k2, v2, k2, v2, h, i, nq, true) : 0;
                const bound = rowBound(c, qq, k, v, k2, v2, h, i, nq, qRounding);
                for (let x = 0; x < d; x++) {
                  const e1 = Math.abs(got[row + x] - want[row + x]);
                  if (!(e1 <= RTOL_REFERENCE * scaleOut + slack)) assert.unreachable(`nq=${nq} head ${h} row ${i} col ${x}: ${got[row + x]} against numpy's ${want[row + x]} (allowed ${RTOL_REFERENCE * scaleOut + slack})`);
                  const e2 = Math.abs(got[row + x] - ref[row + x]);
                  if (!(e2 <= bound + RTOL_REFERENCE * scaleOut)) assert.unreachable(`nq=${nq} head ${h} row ${i} col ${x}: ${got[row + x]} against the float32 cache's ${ref[row + x]}, outside the stated bound ${bound}`);
                }
              }
            }
          }
        } finally {
          cache.dispose();
        }
      });
    }
  }
  s.run();
}

const t = suite('kvCache dtypes: builds, truncate, verification, hostile values');
t.before(async (ctx) => {
  ctx.simd = await loadAttention({ simd: true, deterministic: true });
  ctx.scalar = await loadAttention({ simd: false });
});

const draw = (rng, n) => Float32Array.from(rng.randn(n));

t('the SIMD128 and scalar builds give the same bits from float16 and int8 caches (decode path, GQA, bshd, odd d)', ({ simd, scalar }) => {
  for (const [heads, kvHeads, n, d, layout] of [[8, 2, 200, 64, 'bhsd'], [6, 3, 77, 24, 'bshd'], [2, 1, 70, 5, 'bhsd']]) {
    const rng = new NumpyRandom(n + d);
    const k = draw(rng, kvHeads * n * d), v = draw(rng, kvHeads * n * d), q = draw(rng, heads * 3 * d);
    for (const dtype of ['float16', 'int8']) {
      for (const nq of [1, 2, 3]) {
        const outs = [simd, scalar].map((attn) => {
          const cache = attn.kvCache({ kvHeads, dk: d, capacity: n, dtype, layout });
          cache.append(k, v);
          const o = cache.attend(q.subarray(0, heads * nq * d), { heads, causal: true, window: [50, 0] });
          cache.dispose();
          return o;
        });
        assert.equal(Array.from(outs[0]), Array.from(outs[1]), `${dtype} ${layout} d=${d} nq=${nq}`);
      }
    }
  }
});

t('a tiny problem of many query rows on an int8 cache (the decode kernel with 250 rows) gives what sdpa over its values gives', ({ simd }) => {
  const [nq, nk, d] = [250, 1, 8]; // nq nk d <= 2048: the decode kernel; its rounded queries outgrow a block of K
  const rng = new NumpyRandom(4);
  const k = draw(rng, nk * d), v = draw(rng, nk * d), q = draw(rng, nq * d);
  const mask = new Uint8Array(nq * nk).fill(1);
  mask[3] = 0;
  const bias = new Float32Array(nq * nk).fill(0.5);
  const cache = simd.kvCache({ dk: d, capacity: nk, dtype: 'int8' });
  cache.append(k, v);
  const got = cache.attend(q, { queryOffset: 0, mask, bias });
  const want = simd.sdpa(q, cache.keys(), cache.values(), { nq, nk, dk: d, dv: d, mask, bias });
  assertClose(got, want, { rtol: 1e-4, what: 'int8 decode of 250 rows' }); // q rounded to 16 bits
  cache.dispose();
});

t('truncate(length) drops the newest tokens: appending again gives what a cache that never held them gives', ({ simd }) => {
  const [heads, kvHeads, d] = [4, 2, 16];
  const rng = new NumpyRandom(77);
  const k = draw(rng, kvHeads * 14 * d), v = draw(rng, kvHeads * 14 * d), q = draw(rng, heads * d);
  for (const dtype of ['float32', 'float16', 'int8']) {
    const edited = simd.kvCache({ kvHeads, dk: d, capacity: 16, dtype });
    const fresh = simd.kvCache({ kvHeads, dk: d, capacity: 16, dtype });
    edited.append(tokens(k, kvHeads, 14, d, 0, 10), tokens(v, kvHeads, 14, d, 0, 10));
    edited.truncate(6); // four rejected drafts
    assert.is(edited.length, 6);
    edited.append(tokens(k, kvHeads, 14, d, 10, 14), tokens(v, kvHeads, 14, d, 10, 14));
    const kk = new Float32Array(kvHeads * 10 * d), vv = new Float32Array(kvHeads * 10 * d);
    for (let h = 0; h < kvHeads; h++) {
      kk.set(k.subarray(h * 14 * d, (h * 14 + 6) * d), h * 10 * d);
      kk.set(k.subarray((h * 14 + 10) * d, (h * 14 + 14) * d), (h * 10 + 6) * d);
      vv.set(v.subarray(h * 14 * d, (h * 14 + 6) * d), h * 10 * d);
      vv.set(v.subarray((h * 14 + 10) * d, (h * 14 + 14) * d), (h * 10 + 6) * d);
    }
    fresh.append(kk, vv);
    assert.equal(Array.from(edited.keys()), Array.from(fresh.keys()), `${dtype} keys`);
    assert.equal(Array.from(edited.attend(q, { heads })), Array.from(fresh.attend(q, { heads })), `${dtype} attend`);
    edited.truncate(0);
    assert.is(edited.length, 0);
    edited.dispose();
    fresh.dispose();
  }
});

t('truncate rejects a length it does not hold, naming the range', ({ simd }) => {
  const cache = simd.kvCache({ dk: 4, capacity: 8 });
  cache.append(new Float32Array(12), new Float32Array(12));
  for (const bad of [-1, 4, 2.5, NaN]) {
    rejects(() => cache.truncate(bad), RangeError, /kvCache\.truncate: length must be an integer in \[0, 3\]/, String(bad));
  }
  for (const bad of ['2', undefined, null]) {
    rejects(() => cache.truncate(bad), TypeError, /kvCache\.truncate: length must be an integer in \[0, 3\]/, String(bad));
  }
  assert.is(cache.length, 3);
  cache.dispose();
});

t('k draft tokens verified in one causal call give each token the output of its own decode step', ({ simd }) => {
  const [heads, kvHeads, n, d, drafts] = [8, 2, 300, 64, 8];
  const rng = new NumpyRandom(88);
  const k = draw(rng, kvHeads * (n + drafts) * d), v = draw(rng, kvHeads * (n + drafts) * d);
  const q = draw(rng, heads * drafts * d); // (heads, drafts, d)
  for (const dtype of ['float32', 'float16', 'int8']) {
    const cache = simd.kvCache({ kvHeads, dk: d, capacity: n + drafts, dtype });
    cache.append(tokens(k, kvHeads, n + drafts, d, 0, n), tokens(v, kvHeads, n + drafts, d, 0, n));
    cache.append(tokens(k, kvHeads, n + drafts, d, n, n + drafts), tokens(v, kvHeads, n + drafts, d, n, n + drafts));
    const together = cache.attend(q, { heads, causal: true });
    // One step at a time: a cache that holds the tokens up to the draft.
    const steps = simd.kvCache({ kvHeads, dk: d, capacity: n + drafts, dtype });
    steps.append(tokens(k, kvHeads, n + drafts, d, 0, n), tokens(v, kvHeads, n + drafts, d, 0, n));
    for (let i = 0; i < drafts; i++) {
      steps.append(tokens(k, kvHeads, n + drafts, d, n + i, n + i + 1), tokens(v, kvHeads, n + drafts, d, n + i, n + i + 1));
      const row = new Float32Array(heads * d);
      for (let h = 0; h < heads; h++) row.set(q.subarray((h * drafts + i) * d, (h * drafts + i + 1) * d), h * d);
      const step = steps.attend(row, { heads });
      const want = new Float32Array(heads * d);
      for (let h = 0; h < heads; h++) want.set(together.subarray((h * drafts + i) * d, (h * drafts + i + 1) * d), h * d);
      // Compact caches take both calls through the decode kernel (the same
      // bits); float32 verifies on the fused kernel (sums in another order).
      if (dtype === 'float32') assertClose(step, want, { rtol: 2e-6, what: `float32 draft ${i}` });
      else assert.equal(Array.from(step), Array.from(want), `${dtype} draft ${i}`);
    }
    // Drafts 5 .. 7 rejected: the cache holds what the steps held after draft 4.
    cache.truncate(n + 5);
    steps.truncate(n + 5);
    assert.equal(Array.from(cache.values()), Array.from(steps.values()), `${dtype} after truncate`);
    cache.dispose();
    steps.dispose();
  }
});

t('hostile values: an int8 row with NaN reads back as NaN; float16 past 65504 is Infinity; outputs that see them are NaN, others are not', ({ simd }) => {
  const d = 8;
  const k = new Float32Array(3 * d).fill(0.5), v = new Float32Array(3 * d).fill(1);
  k[d + 2] = NaN; // token 1
  v[2 * d + 1] = 1e6; // token 2: Infinity in float16, an outlier in int8
  const q = new Float32Array(d).fill(0.1);
  for (const dtype of ['float16', 'int8']) {
    for (const [n, clean] of [[1, true], [2, false]]) {
      const cache = simd.kvCache({ dk: d, capacity: 3, dtype });
      cache.append(k.subarray(0, n * d), v.subarray(0, n * d));
      assert.is(cache.attend(q).every(Number.isFinite), clean, `${dtype}: ${n} tokens`);
      cache.dispose();
    }
    const cache = simd.kvCache({ dk: d, capacity: 3, dtype });
    cache.append(k, v);
    const keys = cache.keys(), values = cache.values();
    if (dtype === 'int8') assert.ok(keys.subarray(d, 2 * d).every(Number.isNaN), 'int8: the whole NaN row');
    else assert.ok(Number.isNaN(keys[d + 2]) && !Number.isNaN(keys[d + 3]), 'float16: the NaN value alone');
    assert.is(values[2 * d + 1], dtype === 'float16' ? Infinity : 1e6, `${dtype}: 1e6`);
    cache.dispose();
  }
});

t('dtype is checked and sets the memory per token: float16 half, int8 with its scales 0.266x at d = 64', ({ simd }) => {
  rejects(() => simd.kvCache({ dk: 4, capacity: 2, dtype: 'int4' }), TypeError, /kvCache: dtype must be 'float32', 'float16' or 'int8', got/);
  const bytes = Object.fromEntries(['float32', 'float16', 'int8'].map((dtype) => {
    const cache = simd.kvCache({ kvHeads: 8, dk: 64, capacity: 100, dtype });
    const b = cache.bytes;
    cache.dispose();
    return [dtype, b];
  }));
  assert.is(bytes.float32, 100 * 8 * 64 * 2 * 4);
  assert.is(bytes.float16, bytes.float32 / 2);
  assert.is(bytes.int8, 100 * 8 * (64 * 2 + 8));
  assert.ok(bytes.int8 / bytes.float32 <= 0.27);
});

t('RoPE on float16 and int8 caches: append turns the keys, then compacts them; attend turns only the queries (both builds, both layouts, decode and fused paths)', ({ simd, scalar }) => {
  // t tokens from `from` of a (kvHeads, n, d) or (n, kvHeads, d) array.
  const chunk = (x, layout, kvHeads, n, d, from, to) => {
    if (layout === 'bshd') return x.slice(from * kvHeads * d, to * kvHeads * d);
    const out = new Float32Array(kvHeads * (to - from) * d);
    for (let h = 0; h < kvHeads; h++) out.set(x.subarray((h * n + from) * d, (h * n + to) * d), h * (to - from) * d);
    return out;
  };
  for (const attn of [simd, scalar]) {
    for (const [heads, kvHeads, n, d, layout, rope] of [[8, 2, 40, 16, 'bhsd', { dims: 16 }], [6, 3, 33, 12, 'bshd', { dims: 8, interleaved: true, theta: 500 }]]) {
      const rng = new NumpyRandom(n + d);
      const k = draw(rng, kvHeads * n * d), v = draw(rng, kvHeads * n * d), q = draw(rng, heads * 20 * d);
      const float32 = attn.kvCache({ kvHeads, dk: d, capacity: n, layout });
      for (const dtype of ['float16', 'int8']) {
        const cache = attn.kvCache({ kvHeads, dk: d, capacity: n, dtype, layout });
        const plain = attn.kvCache({ kvHeads, dk: d, capacity: n, layout });
        try {
          for (const [from, to] of [[0, n - 3], [n - 3, n - 2], [n - 2, n]]) {
            cache.append(chunk(k, layout, kvHeads, n, d, from, to), chunk(v, layout, kvHeads, n, d, from, to), { rope });
            if (dtype === 'float16') float32.append(chunk(k, layout, kvHeads, n, d, from, to), chunk(v, layout, kvHeads, n, d, from, to), { rope });
          }
          // The stored keys are the float32 cache's turned keys, compacted.
          assertClose(cache.keys(), float32.keys(), { rtol: dtype === 'float16' ? 1e-3 : 1e-2, what: `${dtype} ${layout} keys()` });
          // attend turns only the queries: as a float32 cache holding the same (turned) keys.
          plain.append(cache.keys(), cache.values());
          for (const nq of [1, 4, 20]) {
            const qq = q.subarray(0, heads * nq * d);
            const got = cache.attend(qq, { heads, causal: true, rope }), want = plain.attend(qq, { heads, causal: true, rope });
            // float16: the same bits where both take the same path (nq 4: decode for the compact cache, fused for float32).
            if (dtype === 'float16' && nq !== 4) assert.is(sha256(got), sha256(want), `float16 ${layout} nq ${nq}: same bits as the float32 cache of its values`);
            else if (dtype === 'float16') assertClose(got, want, { rtol: 1e-5, what: `float16 ${layout} nq ${nq}` });
            else assertClose(got, want, { rtol: 1e-3, what: `int8 ${layout} nq ${nq}` });
            // Over the plain cache (keys appended unturned) unturned queries give another
            // result: the rope reached the kernel. The turned cache refuses them.
            assert.not.equal(sha256(plain.attend(qq, { heads, causal: true })), sha256(got));
            rejects(() => cache.attend(qq, { heads, causal: true }), RangeError, /attend needs the same rope/);
          }
        } finally {
          cache.dispose?.();
          plain.dispose?.();
        }
      }
      float32.dispose?.();
    }
  }
});

t.run();
