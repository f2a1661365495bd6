// Attention on every core: a pool of workers splits a call by heads and
// rows, and gives the same bits as one instance on the calling thread.
//   node pool.mjs
import { loadAttention } from 'attention-wasm';
import { createAttentionPool } from 'attention-wasm/pool';

const heads = 12, n = 512, d = 64;
const draw = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 12.9898 + s * 78.233));
const q = draw(heads * n * d, 1), k = draw(heads * n * d, 2), v = draw(heads * n * d, 3);
const options = { heads, nq: n, nk: n, dk: d, dv: d, causal: true };

const pool = await createAttentionPool({ threads: 2 });
const attn = await loadAttention();
let t = performance.now();
const pooled = await pool.sdpa(q, k, v, options);
const poolMs = performance.now() - t;
t = performance.now();
const single = attn.sdpa(q, k, v, options);
const singleMs = performance.now() - t;
const same = pooled.every((x, i) => Object.is(x, single[i]));
console.log(`${pool.threads} workers, ${pool.isa}: ${poolMs.toFixed(1)} ms; one instance: ${singleMs.toFixed(1)} ms; same bits: ${same}`);
pool.dispose();
attn.dispose();
