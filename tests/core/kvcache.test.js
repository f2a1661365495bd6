// attn.kvCache: keys and values kept in wasm memory, attended in place.
// Token-by-token decoding must give what sdpa gives over the whole K and V.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, loadAttention } from '../../web/attention.js';
import { RTOL_SIMD_VS_SCALAR, assertClose, rejects } from '../helpers.js';

const draw = (rng, n) => Float32Array.from(rng.randn(n));

// Token t of a (batch, h, n, d) array as (batch, h, 1, d), or of a
// (batch, n, h, d) array as (batch, 1, h, d): the rows append() takes.
function tokens(x, batch, h, n, d, t0, t1, bshd) {
  const t = t1 - t0, out = new Float32Array(batch * h * t * d);
  for (let b = 0; b < batch; b++) {
    if (bshd) {
      out.set(x.subarray((b * n + t0) * h * d, (b * n + t1) * h * d), b * t * h * d);
    } else {
      for (let hh = 0; hh < h; hh++) out.set(x.subarray(((b * h + hh) * n + t0) * d, ((b * h + hh) * n + t1) * d), ((b * h + hh) * t) * d);
    }
  }
  return out;
}

for (const simd of [true, false]) {
  const build = simd ? 'SIMD' : 'scalar';
  const s = suite(`kvCache, ${build} build`);
  s.before(async (ctx) => {
    ctx.attn = await loadAttention({ simd });
  });

  for (const layout of ['bhsd', 'bshd']) {
    for (const [batch, heads, kvHeads, n, dk, dv] of [[1, 4, 2, 37, 16, 8], [2, 3, 1, 12, 5, 7], [1, 12, 4, 20, 64, 64]]) {
      s(`${layout} batch=${batch} heads=${heads} kv=${kvHeads}: token by token equals causal sdpa over the whole K and V`, ({ attn }) => {
        const rng = new NumpyRandom(batch * 100 + heads);
        const q = draw(rng, batch * heads * n * dk), k = draw(rng, batch * kvHeads * n * dk), v = draw(rng, batch * kvHeads * n * dv);
        const bshd = layout === 'bshd';
        const whole = attn.sdpa(q, k, v, { batch, heads, kvHeads, nq: n, nk: n, dk, dv, causal: true, layout });
        const cache = attn.kvCache({ batch, kvHeads, dk, dv, capacity: n + 3, layout });
        try {
          const got = new Float32Array(whole.length);
          for (let t = 0; t < n; t++) {
            cache.append(tokens(k, batch, kvHeads, n, dk, t, t + 1, bshd), tokens(v, batch, kvHeads, n, dv, t, t + 1, bshd));
            assert.is(cache.length, t + 1);
            const o = cache.attend(tokens(q, batch, heads, n, dk, t, t + 1, bshd), { heads, causal: true });
            // Put the row back in place: (batch, heads, 1, dv) or (batch, 1, heads, dv).
            for (let b = 0; b < batch; b++) {
              for (let h = 0; h < heads; h++) {
                const from = (b * heads + h) * dv;
                const to = bshd ? ((b * n + t) * heads + h) * dv : ((b * heads + h) * n + t) * dv;
                got.set(o.subarray(from, from + dv), to);
              }
            }
          }
          assertClose(got, whole, { rtol: RTOL_SIMD_VS_SCALAR, what: 'decode vs whole' });
          assert.equal(Array.from(cache.keys()), Array.from(k));
          assert.equal(Array.from(cache.values()), Array.from(v));
        } finally {
          cache.dispose();
        }
      });
    }
  }

  s('chunked prefill: several tokens a call, queryOffset defaults to length - nq', ({ attn }) => {
    const [heads, kvHeads, n, d] = [4, 2, 23, 8];
    const rng = new NumpyRandom(5);
    const q = draw(rng, heads * n * d), k = draw(rng, kvHeads * n * d), v = draw(rng, kvHeads * n * d);
    const whole = attn.sdpa(q, k, v, { heads, kvHeads, nq: n, nk: n, dk: d, dv: d, causal: true, softcap: 2, window: [6, 0] });
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: n });
    const got = new Float32Array(whole.length);
    for (let t0 = 0; t0 < n; t0 += 5) {
      const t1 = Math.min(n, t0 + 5);
      cache.append(tokens(k, 1, kvHeads, n, d, t0, t1, false), tokens(v, 1, kvHeads, n, d, t0, t1, false));
      const r = cache.attend(tokens(q, 1, heads, n, d, t0, t1, false), { heads, causal: true, softcap: 2, window: [6, 0], stats: true });
      assert.is(r.lse.length, heads * (t1 - t0));
      for (let h = 0; h < heads; h++) got.set(r.output.subarray(h * (t1 - t0) * d, (h + 1) * (t1 - t0) * d), (h * n + t0) * d);
    }
    assertClose(got, whole, { rtol: RTOL_SIMD_VS_SCALAR, what: 'chunked vs whole' });
    cache.dispose();
  });

  s('capacity: appending past it is a RangeError naming it, and the cache is unchanged', ({ attn }) => {
    const cache = attn.kvCache({ kvHeads: 2, dk: 3, capacity: 4 });
    const one = (x) => new Float32Array(2 * 3).fill(x);
    cache.append(one(1), one(2));
    cache.append(new Float32Array(2 * 2 * 3).fill(3), new Float32Array(2 * 2 * 3).fill(4));
    const keys = Array.from(cache.keys()), values = Array.from(cache.values());
    rejects(() => cache.append(new Float32Array(2 * 2 * 3), new Float32Array(2 * 2 * 3)), RangeError, /capacity of 4/);
    assert.is(cache.length, 3);
    assert.equal(Array.from(cache.keys()), keys);
    assert.equal(Array.from(cache.values()), values);
    cache.append(one(5), one(6)); // exactly full is fine
    assert.is(cache.length, 4);
    rejects(() => cache.append(one(7), new Float32Array(5)), RangeError, /v has 5 values/);
    rejects(() => cache.append([1, 2], one(1)), TypeError, /k must be a Float32Array/);
    rejects(() => cache.attend(new Float32Array(5)), RangeError, /q has 5 values/);
    rejects(() => cache.attend(new Float32Array(6), { window: [-4, 0] }), RangeError, /kvCache.attend: window/);
    cache.clear();
    assert.is(cache.length, 0);
    assert.throws(() => cache.attend(new Float32Array(6)), /the cache is empty/);
    cache.dispose();
  });

  s('several caches live side by side; dispose returns the memory and ends that cache only', ({ attn }) => {
    const a = attn.kvCache({ dk: 4, capacity: 64 }), b = attn.kvCache({ dk: 4, capacity: 64, layout: 'bshd' });
    const rng = new NumpyRandom(9);
    const ka = draw(rng, 4), va = draw(rng, 4), kb = draw(rng, 4), vb = draw(rng, 4);
    a.append(ka, va);
    b.append(kb, vb);
    // Calls in between (arena growth included) leave both caches intact.
    const x = draw(rng, 300 * 300);
    attn.sdpa(x, x, x, { nq: 300, nk: 300, dk: 300, dv: 300, steps: true });
    assert.equal(Array.from(a.keys()), Array.from(ka));
    assert.equal(Array.from(b.values()), Array.from(vb));
    const q = draw(rng, 4);
    assert.equal(Array.from(a.attend(q)), Array.from(va)); // one key: the output is its value
    a.dispose();
    a.dispose(); // twice is harmless
    assert.throws(() => a.append(ka, va), /disposed/);
    assert.throws(() => a.attend(q), /disposed/);
    assert.equal(Array.from(b.attend(q)), Array.from(vb));
    // Memory comes back: many caches made and disposed do not grow the memory.
    attn.kvCache({ kvHeads: 4, dk: 64, capacity: 1024 }).dispose();
    const before = attn.memory.buffer.byteLength;
    for (let i = 0; i < 200; i++) attn.kvCache({ kvHeads: 4, dk: 64, capacity: 1024 }).dispose();
    assert.is(attn.memory.buffer.byteLength, before);
    b.dispose();
  });

  s('bad kvCache options are TypeError/RangeError naming the option', ({ attn }) => {
    rejects(() => attn.kvCache({ dk: 4 }), TypeError, /kvCache: capacity must be a positive integer/);
    rejects(() => attn.kvCache({ dk: 4, capacity: 0 }), RangeError, /kvCache: capacity/);
    rejects(() => attn.kvCache({ dk: 4, capacity: 8, layout: 'sbhd' }), RangeError, /kvCache: layout/);
    rejects(() => attn.kvCache({ dk: 4, capacity: 8, size: 3 }), TypeError, /unknown option "size"/);
    rejects(() => attn.kvCache({ dk: 1024, kvHeads: 64, capacity: 2 ** 20 }), RangeError, /wasm32 holds at most 4 GiB/);
    assert.equal(attn.matmul([[1, 2]], [[3], [4]]).toArray(), [[11]]);
  });
  s.run();
}

// One-token decoding from a cache takes the decode kernel with the group's
// heads as its rows: both builds must give the same bits (attention.h), and
// sdpa's result over a copy of K and V to rounding.
const panels = suite('kvCache one-token decode');
panels.before(async (ctx) => {
  ctx.simd = await loadAttention({ simd: true });
  ctx.scalar = await loadAttention({ simd: false });
});

panels('SIMD and scalar builds give the same bits, sdpa the same to rounding: every option, group sizes 1-7', ({ simd, scalar }) => {
  const rng = new NumpyRandom(77);
  const cases = [];
  // [batch, kvHeads, group, nk, dk, dv]: group 1-7 (one head, pairs, and the
  // blocked group path from 3 heads), the 32/16-column and 4-column loops and
  // scalar tails of dv, dk not a multiple of 4, nk around the 4-key step.
  for (const shape of [[1, 1, 1, 1, 3, 1], [1, 2, 2, 5, 5, 5], [2, 1, 3, 13, 8, 12], [1, 4, 3, 37, 64, 64],
    [1, 1, 4, 12, 7, 17], [2, 2, 5, 24, 16, 67], [1, 1, 6, 4, 4, 4], [1, 1, 7, 11, 9, 28]]) {
    for (const opts of ['none', 'window', 'mask', 'bias', 'softcap', 'lengths', 'all']) cases.push([shape, opts]);
  }
  for (const [[batch, kvHeads, group, nk, dk, dv], kind] of cases) {
    const heads = kvHeads * group;
    const k = draw(rng, batch * kvHeads * nk * dk), v = draw(rng, batch * kvHeads * nk * dv), q = draw(rng, batch * heads * dk);
    const options = { heads, stats: true };
    if (kind === 'window' || kind === 'all') options.window = [Math.max(0, nk - 6), 0]; // starts at key 5: not a panel edge
    if (kind === 'mask' || kind === 'all') options.mask = { data: Uint8Array.from({ length: heads * nk }, (_, i) => (i * 7) % 3 !== 0), shape: [1, heads, 1, nk] };
    if (kind === 'bias' || kind === 'all') options.bias = { data: draw(rng, batch * nk), shape: [batch, 1, 1, nk] };
    if (kind === 'softcap' || kind === 'all') options.softcap = 1.5;
    if (kind === 'lengths' || kind === 'all') options.kvLengths = Int32Array.from({ length: batch }, (_, b) => Math.max(1, nk - 2 * b - 1));
    const what = `batch=${batch} kvHeads=${kvHeads} group=${group} nk=${nk} dk=${dk} dv=${dv} ${kind}`;
    const run = (attn) => {
      const cache = attn.kvCache({ batch, kvHeads, dk, dv, capacity: nk + 5 });
      try {
        // Appended in two parts.
        const t = Math.ceil(nk / 2);
        cache.append(tokens(k, batch, kvHeads, nk, dk, 0, t, false), tokens(v, batch, kvHeads, nk, dv, 0, t, false));
        if (t < nk) cache.append(tokens(k, batch, kvHeads, nk, dk, t, nk, false), tokens(v, batch, kvHeads, nk, dv, t, nk, false));
        return cache.attend(q, options);
      } finally {
        cache.dispose();
      }
    };
    const a = run(simd), b = run(scalar);
    assert.equal(Array.from(a.output), Array.from(b.output), `${what}: output bits`);
    assert.equal(Array.from(a.lse), Array.from(b.lse), `${what}: lse bits`);
    const { heads: _h, stats: _s, ...rest } = options;
    const queryOffset = options.kvLengths ? Int32Array.from(options.kvLengths, (n) => n - 1) : nk - 1;
    const want = scalar.sdpa(q, k, v, { batch, heads, kvHeads, nq: 1, nk, dk, dv, ...rest, queryOffset, stats: true });
    assertClose(a.output, want.output, { rtol: RTOL_SIMD_VS_SCALAR, what: `${what}: vs sdpa` });
    assertClose(a.lse, want.lse, { rtol: RTOL_SIMD_VS_SCALAR, what: `${what}: lse vs sdpa` });
  }
});

panels('keys outside the window or kvLengths are not read: NaN and Infinity there do not reach the output', ({ simd, scalar }) => {
  for (const attn of [simd, scalar]) {
    const [heads, kvHeads, nk, d] = [6, 2, 23, 8];
    const rng = new NumpyRandom(3);
    const k = draw(rng, kvHeads * nk * d), v = draw(rng, kvHeads * nk * d), q = draw(rng, heads * d);
    for (let g = 0; g < kvHeads; g++) for (let j = 0; j < 9; j++) for (let c = 0; c < d; c++) {
      k[(g * nk + j) * d + c] = NaN;
      v[(g * nk + j) * d + c] = j % 2 ? Infinity : NaN;
    }
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk });
    cache.append(k, v);
    const out = cache.attend(q, { heads, window: [nk - 10, 0] }); // keys 9 .. 22
    assert.ok(out.every(Number.isFinite), 'finite output');
    cache.dispose();
  }
});
panels('with kvLengths the default queryOffset is each entry\'s newest token (kvLengths[b] - nq), so a padded entry with a window is not empty', ({ simd }) => {
  const [batch, heads, nk, d] = [2, 2, 10, 4];
  const rng = new NumpyRandom(12);
  const k = draw(rng, batch * heads * nk * d), v = draw(rng, batch * heads * nk * d), q = draw(rng, batch * heads * d);
  const kvLengths = Int32Array.of(nk, 6);
  const cache = simd.kvCache({ batch, kvHeads: heads, dk: d, capacity: nk });
  cache.append(k, v);
  const got = cache.attend(q, { heads, window: [2, 0], kvLengths });
  cache.dispose();
  const want = simd.sdpa(q, k, v, { batch, heads, nq: 1, nk, dk: d, dv: d, window: [2, 0], kvLengths, queryOffset: Int32Array.of(nk - 1, 5) });
  assert.ok(got.subarray(heads * d).some((x) => x !== 0), 'the padded entry attends to its own last keys');
  assertClose(got, want, { rtol: RTOL_SIMD_VS_SCALAR, what: 'per-entry default offset' });
});
panels.run();
