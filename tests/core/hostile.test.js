// What a hostile caller tries against one instance and its caches: options
// whose getters dispose or refill a cache, or call the instance again, while
// the call reads them; an `out` that is a view of the instance's own wasm
// memory; a non-finite lse or an ALiBi slope whose bias overflows. Each
// either works or is a clear error naming the option, and no other cache's
// keys or values change.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom, loadAttention } from '../../web/attention.js';

const DK = 4;
const draw = (rng, n) => Float32Array.from(rng.randn(n));

const test = suite('hostile callers of one instance');
test.before(async (ctx) => {
  ctx.attn = await loadAttention({ simd: false });
  ctx.rng = new NumpyRandom(5);
});

test('a cache disposed by a getter during its own append throws, and the cache made in its place keeps its keys', ({ attn, rng }) => {
  const cache = attn.kvCache({ dk: DK, capacity: 4 });
  const mine = draw(rng, 2 * DK), theirs = draw(rng, 2 * DK);
  let other = null;
  const options = {
    get rope() {
      cache.dispose();
      other = attn.kvCache({ dk: DK, capacity: 4 }); // the allocator hands it the freed buffers
      other.append(theirs, theirs);
      return undefined;
    },
  };
  assert.throws(() => cache.append(mine, mine, options), (e) => e instanceof Error && /kvCache\.append: this cache was disposed/.test(e.message));
  assert.equal(Array.from(other.keys()), Array.from(theirs), 'the other cache\'s keys are its own');
  assert.equal(Array.from(other.values()), Array.from(theirs));
  other.dispose();
});

test('a cache disposed by a getter during its own attend throws rather than read another cache\'s values', ({ attn, rng }) => {
  const cache = attn.kvCache({ dk: DK, capacity: 4 });
  cache.append(draw(rng, 2 * DK), draw(rng, 2 * DK));
  let other = null;
  const options = {
    get causal() {
      cache.dispose();
      other = attn.kvCache({ dk: DK, capacity: 4 });
      other.append(draw(rng, 2 * DK), new Float32Array(2 * DK).fill(1e6));
      return false;
    },
  };
  assert.throws(() => cache.attend(draw(rng, DK), options), /kvCache\.attend: this cache was disposed/);
  other.dispose();
});

test('a cache cleared or refilled by a getter during attend throws naming the change', ({ attn, rng }) => {
  const cache = attn.kvCache({ dk: DK, capacity: 4 });
  cache.append(draw(rng, 2 * DK), draw(rng, 2 * DK));
  assert.throws(() => cache.attend(draw(rng, DK), { get scale() { cache.clear(); return 1; } }), /kvCache\.attend: the cache changed while the options were read/);
  cache.append(draw(rng, 2 * DK), draw(rng, 2 * DK));
  assert.throws(() => cache.attend(draw(rng, DK), { get scale() { cache.truncate(1); return 1; } }), /the cache changed/);
  cache.dispose();
});

test('an options getter that calls sdpa on the same instance: both calls give their own answer', ({ attn, rng }) => {
  const q = draw(rng, 3 * DK), k = draw(rng, 5 * DK), v = draw(rng, 5 * DK);
  const shape = { nq: 3, nk: 5, dk: DK, dv: DK };
  const alone = attn.sdpa(q, k, v, { ...shape, causal: true });
  const innerQ = draw(rng, DK), innerAlone = attn.sdpa(innerQ, k, v, { ...shape, nq: 1 });
  let inner = null;
  const options = {
    ...shape,
    get causal() {
      inner = attn.sdpa(innerQ, k, v, { ...shape, nq: 1 });
      return true;
    },
  };
  const outer = attn.sdpa(q, k, v, options);
  assert.equal(Array.from(outer), Array.from(alone));
  assert.equal(Array.from(inner), Array.from(innerAlone));
  // And from inside a cache's attend.
  const cache = attn.kvCache({ dk: DK, capacity: 5 });
  cache.append(k, v);
  const viaCache = cache.attend(innerQ, { get causal() { attn.sdpa(q, k, v, shape); return false; } });
  assert.equal(Array.from(viaCache), Array.from(innerAlone));
  cache.dispose();
});

test('a getter that calls every other method (and grows the memory) leaves the outer call\'s answer as it was', ({ attn, rng }) => {
  const q = draw(rng, 2 * DK), k = draw(rng, 3 * DK), v = draw(rng, 3 * DK);
  const shape = { nq: 2, nk: 3, dk: DK, dv: DK, causal: true };
  const alone = attn.sdpa(q, k, v, shape);
  const M = { rows: 3, cols: DK, data: k };
  const everything = () => {
    attn.attention(M, M, M, { steps: true });
    attn.multiHeadAttention({ rows: 3, cols: 2, data: Float32Array.of(1, 2, 3, 4, 5, 6) }, { wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]], wv: [[1, 0], [0, 1]], heads: 1 });
    attn.matmul(M, { rows: DK, cols: 1, data: draw(rng, DK) });
    attn.softmax(M);
    attn.rope(M, { position: 2 });
    attn.sdpaBackward(q, k, v, null, draw(rng, 2 * DK), shape);
    const big = attn.kvCache({ dk: DK, capacity: 2 ** 18 }); // 4 MiB each for K and V: the memory grows
    big.append(k, v);
    big.attend(draw(rng, DK));
    big.dispose();
    return true;
  };
  for (const key of ['causal', 'scale', 'window', 'mask', 'stats']) {
    const options = { ...shape };
    Object.defineProperty(options, key, { enumerable: true, get: () => (everything(), shape[key]) });
    assert.equal(Array.from(attn.sdpa(q, k, v, options)), Array.from(alone), key);
  }
});

test('an out that is a view of the instance\'s own memory is a RangeError naming out, and the cache is untouched', ({ attn, rng }) => {
  const cache = attn.kvCache({ dk: DK, capacity: 4 });
  const k = draw(rng, 2 * DK), v = draw(rng, 2 * DK);
  cache.append(k, v);
  const q = draw(rng, DK), shape = { nq: 1, nk: 2, dk: DK, dv: DK };
  const inMemory = () => new Float32Array(attn.memory.buffer, 0, 4 * DK * DK);
  assert.throws(() => attn.sdpa(q, k, v, { ...shape, out: inMemory() }), (e) => e instanceof RangeError && /sdpa: out is a view of this instance's wasm memory/.test(e.message));
  assert.throws(() => cache.attend(q, { out: inMemory() }), (e) => e instanceof RangeError && /kvCache\.attend: out/.test(e.message));
  assert.throws(() => attn.matmul({ rows: 1, cols: 1, data: Float32Array.of(2) }, { rows: 1, cols: 1, data: Float32Array.of(3) }, { out: inMemory().subarray(0, 1) }),
    (e) => e instanceof RangeError && /matmul: out/.test(e.message));
  assert.throws(() => attn.softmax({ rows: 1, cols: 2, data: Float32Array.of(2, 3) }, { out: inMemory().subarray(0, 2) }), (e) => e instanceof RangeError && /softmax: out/.test(e.message));
  const dOut = draw(rng, DK);
  assert.throws(() => attn.sdpaBackward(q, k, v, null, dOut, { ...shape, out: { dk: inMemory() } }), (e) => e instanceof RangeError && /sdpaBackward: out\.dk/.test(e.message));
  assert.equal(Array.from(cache.keys()), Array.from(k));
  assert.equal(Array.from(cache.values()), Array.from(v));
  // An array of its own still works.
  const out = new Float32Array(DK);
  assert.is(attn.sdpa(q, k, v, { ...shape, out }), out);
  cache.dispose();
});

test('sdpaBackward refuses a NaN or +Infinity lse naming it; -Infinity (a row with no allowed key) is taken', ({ attn, rng }) => {
  const q = draw(rng, 2 * DK), k = draw(rng, 3 * DK), v = draw(rng, 3 * DK), dOut = draw(rng, 2 * DK);
  const shape = { nq: 2, nk: 3, dk: DK, dv: DK };
  for (const bad of [NaN, Infinity]) {
    assert.throws(() => attn.sdpaBackward(q, k, v, null, dOut, { ...shape, lse: Float32Array.of(0, bad) }), (e) => e instanceof RangeError && /sdpaBackward: lse\[1\] is/.test(e.message));
  }
  const mask = Uint8Array.of(0, 0, 0, 1, 1, 1); // row 0 sees no key: its lse is -Infinity
  const { lse } = attn.sdpa(q, k, v, { ...shape, mask, stats: true });
  assert.is(lse[0], -Infinity);
  const g = attn.sdpaBackward(q, k, v, null, dOut, { ...shape, mask, lse });
  assert.ok(g.dq.every(Number.isFinite));
});

test('a non-finite ALiBi slope is a RangeError naming it; the largest finite ones give finite output', ({ attn, rng }) => {
  const q = draw(rng, DK), k = draw(rng, 3 * DK), v = draw(rng, 3 * DK);
  const shape = { nq: 1, nk: 3, dk: DK, dv: DK };
  for (const slope of [NaN, Infinity, -Infinity]) {
    assert.throws(() => attn.sdpa(q, k, v, { ...shape, alibi: Float32Array.of(slope) }), (e) => e instanceof RangeError && /sdpa: alibi\[0\] is .*must be finite/.test(e.message), String(slope));
  }
  for (const slope of [3e38, -3e38]) {
    const out = attn.sdpa(q, k, v, { ...shape, alibi: Float32Array.of(slope) });
    assert.ok(out.every(Number.isFinite), `slope ${slope}: finite output`);
  }
});

test.after(({ attn }) => attn.dispose());
test.run();
