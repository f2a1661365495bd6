// What a hostile caller tries against a pool's KV cache: options whose
// getters dispose the cache while its append or attend reads them (the call
// rejects naming the disposal instead of going on with freed buffers), and
// options the single-instance cache refuses (the same errors, before any
// worker is asked).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';

const DK = 4;
const draw = (rng, n) => Float32Array.from(rng.randn(n));

const pool = suite('hostile callers of a pool cache');

pool('a pool cache disposed by a getter during its own append or attend rejects', async () => {
  const p = await createAttentionPool({ threads: 1 });
  try {
    const rng = new NumpyRandom(6);
    const cache = await p.kvCache({ dk: DK, capacity: 8 });
    const k = draw(rng, 2 * DK);
    await cache.append(k, k);
    let threw = null;
    try {
      await cache.attend(draw(rng, DK), { get causal() { cache.dispose(); return false; } });
    } catch (e) {
      threw = e;
    }
    assert.match(threw?.message ?? 'no error', /kvCache\.attend: this cache was disposed/);
    const again = await p.kvCache({ dk: DK, capacity: 8 });
    threw = null;
    try {
      await again.append(k, k, { get rope() { again.dispose(); return undefined; } });
    } catch (e) {
      threw = e;
    }
    assert.match(threw?.message ?? 'no error', /kvCache\.append: this cache was disposed/);
  } finally {
    p.dispose();
  }
});

pool('a pool cache checks its options by the single cache\'s rules, dtype included, before any worker is asked', async () => {
  const p = await createAttentionPool({ threads: 2, callerShare: false });
  try {
    for (const [options, E, message] of [
      [{ dk: DK, capacity: 8, dtype: 'int4' }, TypeError, /^kvCache: dtype must be 'float32', 'float16' or 'int8', got /],
      [{ dk: DK, capacity: 0 }, RangeError, /^kvCache: capacity must be/],
      [{ dk: DK, capacity: 8, layout: 'bhds' }, RangeError, /^kvCache: layout must be 'bhsd' or 'bshd'/],
    ]) {
      let threw = null;
      try {
        await p.kvCache(options);
      } catch (e) {
        threw = e;
      }
      assert.instance(threw, E, JSON.stringify(options));
      assert.match(threw.message, message);
    }
  } finally {
    p.dispose();
  }
});

pool.run();
