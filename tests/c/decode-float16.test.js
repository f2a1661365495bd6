// A float16 cache's decode step reads its halves as their bits' float32
// (the values times 2^-112) and moves the 2^112 to the queries and the
// weights (c/kernels/f32-decode-wasmsimd.c): the same bits as reading the
// values. Checked on what could break that: subnormal halves, 65504,
// Infinity and NaN in K or V, query values at and past 2^16 (where the
// queries cannot take the 2^112 and K is read as values), NaN queries,
// key counts around the kernel's block of 64 keys, and d with a tail
// past a multiple of 8. Each build against a float32 cache holding the
// same values (same module, same bits), and the SIMD128 build against the
// scalar one.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { NumpyRandom } from '../../web/attention.js';
import { BUILDS, loadBuild, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

// Float32 values that are float16 values: randn, with the half range's
// edges mixed in (subnormals, zeros of both signs, 65504).
function halves(rng, n, spice) {
  const x = Float32Array.from(rng.randn(n));
  const edges = [2 ** -24, -3 * 2 ** -24, 2 ** -14 - 2 ** -24, 0, -0, 65504, -65504, 1e-5, 0.5];
  if (spice) for (let i = 0; i < n; i += 7) x[i] = edges[(i / 7) % edges.length];
  return x;
}

// Object.is for every element, naming the first that differs.
function assertSameFloats(got, want, what) {
  assert.is(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (!Object.is(got[i], want[i])) assert.unreachable(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`);
  }
}

// The cases: K and V with or without edge halves, a key or value that is
// Infinity or NaN, and query rows scaled so that |q| reaches given values.
const HOSTILE = [
  { name: 'randn', spice: false },
  { name: 'edge halves', spice: true },
  { name: 'Infinity in V', spice: true, v: [5, -Infinity] },
  { name: 'NaN in K', spice: false, k: [3, NaN] },
  { name: 'Infinity in K, q with zeros', spice: false, k: [2, Infinity], qZero: true },
  { name: 'a query value just under 2^16', spice: true, q: 65535.99 },
  { name: 'a query value of 2^16', spice: true, q: 65536 },
  { name: 'a query value of 1e30', spice: false, q: 1e30 },
  { name: 'a NaN query value', spice: false, q: NaN },
];
const SHAPES = [[4, 1, 64], [2, 2, 12], [3, 1, 3]]; // heads, kvHeads, d
const NKS = [1, 63, 64, 65, 127, 301];

function run(attn, dtype, heads, kvHeads, d, nk, nq, c, seed) {
  const rng = new NumpyRandom(seed);
  const k = halves(rng, kvHeads * nk * d, c.spice), v = halves(rng, kvHeads * nk * d, c.spice);
  const q = Float32Array.from(rng.randn(heads * nq * d));
  const at = (x, [i, val]) => { x[Math.min(i, x.length - 1)] = val; };
  if (c.k) at(k, c.k);
  if (c.v) at(v, c.v);
  if (c.q !== undefined) q[q.length - 1] = c.q;
  if (c.qZero) q.fill(0, 0, d);
  const cache = attn.kvCache({ kvHeads, dk: d, capacity: nk, dtype });
  cache.append(k, v);
  let out;
  if (dtype === 'float32') {
    // The float32 cache holds the float16 values.
    const half = attn.kvCache({ kvHeads, dk: d, capacity: nk, dtype: 'float16' });
    half.append(k, v);
    const values = [half.keys(), half.values()];
    half.dispose();
    cache.clear();
    cache.append(...values);
  }
  out = cache.attend(q, { heads, causal: true });
  cache.dispose();
  return out;
}

const t = suite('float16 cache decode: the same bits as the values');
t.before(async (ctx) => {
  ctx.builds = Object.fromEntries(await Promise.all(BUILDS.map(async (b) => [b, await loadBuild(b)])));
});

// With nq > 1 the float32 cache's decode pairs its rows within a head and
// the float16 cache's across the group; in the relaxed module a key's logit
// is fused or not by where its group of 4 falls, so only the deterministic
// builds promise the same bits there.
t('each build: a float16 cache gives the bits of a float32 cache holding its values (decode step, GQA; nq 3 but relaxed)', ({ builds }) => {
  for (const build of BUILDS) {
    for (const [heads, kvHeads, d] of SHAPES) {
      for (const nk of NKS) {
        for (const nq of build === 'relaxed-simd' ? [1] : [1, 3]) {
          for (const [ci, c] of HOSTILE.entries()) {
            const what = `${build} heads ${heads}/${kvHeads} d ${d} nk ${nk} nq ${nq} ${c.name}`;
            const seed = nk * 31 + d * 7 + ci;
            assertSameFloats(run(builds[build], 'float16', heads, kvHeads, d, nk, nq, c, seed),
              run(builds[build], 'float32', heads, kvHeads, d, nk, nq, c, seed), what);
          }
        }
      }
    }
  }
});

t('the SIMD128 and scalar builds give the same bits from float16 caches with hostile values', ({ builds }) => {
  for (const [heads, kvHeads, d] of SHAPES) {
    for (const nk of NKS) {
      for (const [ci, c] of HOSTILE.entries()) {
        const seed = nk * 17 + d + ci;
        assertSameFloats(run(builds.simd128, 'float16', heads, kvHeads, d, nk, 1, c, seed),
          run(builds.scalar, 'float16', heads, kvHeads, d, nk, 1, c, seed), `heads ${heads}/${kvHeads} d ${d} nk ${nk} ${c.name}`);
      }
    }
  }
});

t('hostile cases reach what they name: Infinity and NaN make NaN outputs, a query at 2^16 stays finite', ({ builds }) => {
  const attn = builds.simd128;
  const finite = (c) => run(attn, 'float16', 4, 1, 64, 65, 1, c, 5).every(Number.isFinite);
  assert.is(finite(HOSTILE[1]), true, 'edge halves');
  assert.is(finite(HOSTILE[2]), false, 'Infinity in V');
  assert.is(finite(HOSTILE[3]), false, 'NaN in K');
  assert.is(finite(HOSTILE[6]), true, 'a query value of 2^16 (a large logit, still finite)');
});

t.run();
