// pool.matmul: the same bits as one instance's matmul, split by rows of a
// over the workers and the calling thread when large, local when small; its
// errors are one instance's. Symbol.dispose on the pool (`using`).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { SPLIT_MIN_FLOPS } from '../../web/pool/planner.js';

const draw = (rows, cols, seed) => new Matrix(rows, cols, Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 3));

const test = suite('pool.matmul');
test.before(async (ctx) => {
  ctx.pool = await createAttentionPool({ threads: 2 });
  ctx.attn = await loadAttention();
});
test.after(({ pool, attn }) => {
  pool?.dispose();
  attn?.dispose();
});

test('large products are split and give one instance\'s bits; small ones run here', async ({ pool, attn }) => {
  for (const [m, k, n] of [[1024, 128, 256], [1001, 129, 257], [999, 64, 64], [4, 3, 5]]) {
    const a = draw(m, k, 1), b = draw(k, n, 2);
    const before = pool.stats.split;
    const got = await pool.matmul(a, b);
    const want = attn.matmul(a, b);
    assert.is(got.rows, m);
    assert.is(got.cols, n);
    const differ = got.data.findIndex((x, i) => !Object.is(x, want.data[i]));
    assert.is(differ, -1, `${m}x${k}x${n}: first differing value at ${differ}`);
    assert.is(pool.stats.split, before + (2 * m * k * n >= SPLIT_MIN_FLOPS ? 1 : 0), `${m}x${k}x${n} is split when large`);
  }
  const tiny = await pool.matmul([[1, 2]], [[3], [4]]);
  assert.equal(tiny.toArray(), [[11]]);
});

test('the errors of one instance', async ({ pool }) => {
  await pool.matmul(draw(2, 3, 1), draw(4, 2, 2)).then(() => assert.unreachable('shape mismatch'), (err) => {
    assert.instance(err, RangeError);
    assert.match(err.message, /matmul: b must have shape \(3,/);
  });
});

test('Symbol.dispose disposes the pool', async () => {
  const pool = await createAttentionPool({ threads: 1 });
  pool[Symbol.dispose]();
  await pool.matmul([[1]], [[1]]).then(() => assert.unreachable('disposed'), (err) => assert.match(err.message, /disposed/));
});

test.run();
