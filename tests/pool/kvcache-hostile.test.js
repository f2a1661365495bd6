// What a hostile caller tries against a pool's KV cache: options whose
// getters dispose the cache while its append or attend reads them. The call
// rejects naming the disposal instead of going on with freed buffers.
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

pool.run();
