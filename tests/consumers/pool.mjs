// A consumer of the installed package's pool: its workers are found beside
// pool.js inside node_modules (its threads modules too: Node shares memory),
// and a split call gives the same bits as one instance, with ordinary arrays
// and with pool.array's. Prints JSON for tests/package/package.test.js.
import { loadAttention } from 'attention-wasm';
import { createAttentionPool } from 'attention-wasm/pool';

const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);
const attn = await loadAttention();
const pool = await createAttentionPool({ threads: 2 });
const heads = 4, n = 512, d = 64;
const q = draw(heads * n * d, 1), k = draw(heads * n * d, 2), v = draw(heads * n * d, 3);
const options = { heads, nq: n, nk: n, dk: d, dv: d, causal: true };
const got = await pool.sdpa(q, k, v, options);
const want = attn.sdpa(q, k, v, options);
const { split, here } = pool.stats;
// The same call with q, k, v and out in the pool's shared memory (read and written in place).
const [qa, ka, va] = [q, k, v].map((x) => {
  const a = pool.array(x.length);
  a.set(x);
  return a;
});
const out = pool.array(want.length);
const inPlace = (await pool.sdpa(qa, ka, va, { ...options, out })) === out && out.every((x, i) => Object.is(x, want[i]));
pool.dispose();
console.log(JSON.stringify({ same: got.every((x, i) => Object.is(x, want[i])), split, here, sameIsa: pool.isa === attn.isa,
  memory: pool.memory, inPlace, shared: out.buffer instanceof SharedArrayBuffer }));
