// keySpan (web/core/options.js), the one JS rule of which keys a query may
// see, against the kernels themselves: for random causal, window and query
// offset settings, the keys the module leaves at -Infinity in the logits
// are exactly those outside keySpan, on every build; blockedBy agrees.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { blockedBy, keySpan } from '../../web/core/options.js';
import { BUILDS, loadBuild, runWithRelaxedSimd } from '../helpers.js';

await runWithRelaxedSimd(import.meta.url);

const CASES = 150;

const test = suite('keySpan is the kernels\' rule');

for (const isa of BUILDS) {
  test(`${isa}: allowed keys of random causal, window and offset settings`, async () => {
    const attn = await loadBuild(isa);
    const rng = new NumpyRandom(24);
    const int = (lo, hi) => lo + Math.floor(rng.random() * (hi - lo + 1));
    let cut = 0;
    for (let n = 0; n < CASES; n++) {
      const nq = int(1, 6), nk = int(1, 9), dk = 2;
      const options = { nq, nk, dk, dv: 1, steps: true };
      if (rng.random() < 0.5) options.causal = true;
      if (rng.random() < 0.6) options.window = [int(-1, 4), int(-1, 4)];
      if (rng.random() < 0.7) options.queryOffset = int(-4, 10);
      const q = Float32Array.from(rng.randn(nq * dk)), k = Float32Array.from(rng.randn(nk * dk)), v = new Float32Array(nk);
      const { logits } = attn.sdpa(q, k, v, options);
      for (let i = 0; i < nq; i++) {
        const { lo, hi } = keySpan(options, i, nk);
        assert.ok(lo >= 0 && lo <= hi && hi <= nk, `span [${lo}, ${hi}) within the keys`);
        for (let j = 0; j < nk; j++) {
          const allowed = logits[i * nk + j] !== -Infinity;
          assert.is(j >= lo && j < hi, allowed, `case ${n} ${JSON.stringify(options)}: row ${i}, key ${j}`);
          assert.is(blockedBy(options, i, j) === '', allowed, `blockedBy, case ${n}: row ${i}, key ${j}`);
          if (!allowed) cut++;
        }
      }
    }
    assert.ok(cut > 100, `the cases cut keys (${cut})`);
    attn.dispose();
  });
}

test('blockedBy names causal for a key after the query, window otherwise', () => {
  assert.is(blockedBy({ causal: true, window: [1, 3], queryOffset: 2 }, 0, 3), 'causal');
  assert.is(blockedBy({ causal: true, window: [1, 3], queryOffset: 2 }, 0, 0), 'window');
  assert.is(blockedBy({ window: [-1, 0] }, 1, 2), 'window');
  assert.is(blockedBy({}, 5, 100), '');
});

test.run();
