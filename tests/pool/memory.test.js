// The pool's memory paths (docs/pool.md#memory): staging buffers on the
// copy path come back and are reused, so many calls do not add memory.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);

function sameBits(actual, expected, what) {
  assert.is(actual.length, expected.length, `${what}: length`);
  const at = expected.findIndex((x, i) => !Object.is(x, actual[i]));
  assert.is(at, -1, `${what}: element ${at}: pool ${actual[at]}, single instance ${expected[at]}`);
}

const copies = suite('copy path: staging buffers');

copies('many split calls do not add memory, and give the same bits each time', async () => {
  const attn = await loadAttention();
  const pool = await createAttentionPool({ threads: 2 });
  try {
    const heads = 4, n = 256, d = 64;
    const q = draw(heads * n * d, 1), k = draw(heads * n * d, 2), v = draw(heads * n * d, 3);
    const mask = Uint8Array.from(draw(n * n, 4), (x) => (x > -1.5 ? 1 : 0));
    const options = { heads, nq: n, nk: n, dk: d, dv: d, mask, causal: true };
    const expected = attn.sdpa(q, k, v, options);
    const out = new Float32Array(expected.length);
    const before = pool.stats.split;
    for (let i = 0; i < 20; i++) sameBits(await pool.sdpa(q, k, v, { ...options, out }), expected, `warm-up call ${i}`);
    globalThis.gc?.();
    const base = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 300; i++) {
      out.fill(NaN);
      const r = await pool.sdpa(q, k, v, { ...options, out });
      assert.is(r, out, 'the result is the caller\'s out');
      if (i % 50 === 0) sameBits(out, expected, `call ${i}`);
    }
    sameBits(out, expected, 'last call');
    assert.is(pool.stats.split - before, 320, 'every call was split');
    globalThis.gc?.();
    // One call's staging is about 0.6 MB; 300 calls that each kept theirs would hold 180 MB.
    const grown = process.memoryUsage().arrayBuffers - base;
    assert.ok(grown < 8e6, `array buffers grew by ${(grown / 1e6).toFixed(1)} MB over 300 calls`);
  } finally {
    pool.dispose();
    attn.dispose();
  }
});

copies.run();
