// NumpyRandom (web/core/numpy-random.js) against numpy's own draws
// (tests/fixtures/numpy-random.json): randn for several seeds with the state
// carried across calls, and the errors for bad seeds and sizes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { assertClose, generated, readJSON, rejects } from '../helpers.js';

// Math.log/Math.sqrt may differ from C's libm in the last bit.
const RTOL_NUMPY = 1e-12;
const fixture = readJSON('./fixtures/numpy-random.json');

for (const { seed, calls, draws } of generated(fixture.seeds, 7, 'numpy-random.json seeds')) {
  test(`randn matches numpy for seed ${seed}, state carried across odd-length calls`, () => {
    const rng = new NumpyRandom(seed);
    calls.forEach((shape, i) => {
      assertClose(rng.randn(...shape), draws[i], { rtol: RTOL_NUMPY, relativeTo: 'each', what: `seed ${seed} call ${i} randn(${shape})` });
    });
  });
}

test('randn() with no sizes draws one value; shape (2, 0) draws none', () => {
  assert.is(new NumpyRandom(1).randn().length, 1);
  assert.is(new NumpyRandom(1).randn(2, 0).length, 0);
});

test('bad seeds and sizes are RangeErrors naming the problem', () => {
  for (const seed of [-1, 2 ** 32, 1.5, NaN]) rejects(() => new NumpyRandom(seed), RangeError, /seed/);
  assert.throws(() => new NumpyRandom('7'), RangeError);
  rejects(() => new NumpyRandom(1).randn(-1), RangeError, /size 0/);
  assert.throws(() => new NumpyRandom(1).randn(2, 1.5), (e) => /size 1/.test(e.message));
});

test.run();
