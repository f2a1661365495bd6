// The core, the pool (its workers) and the explorer (its model worker) from one bundle.
import { loadAttention } from 'attention-wasm';
import 'attention-wasm/explorer';
import { createAttentionPool } from 'attention-wasm/pool';

const heads = 4, n = 256, d = 64;
const draw = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 12.9898 + s * 78.233));
const q = draw(heads * n * d, 1), k = draw(heads * n * d, 2), v = draw(heads * n * d, 3);
const options = { heads, nq: n, nk: n, dk: d, dv: d, causal: true };

const out = document.querySelector('#pool');
try {
  const pool = await createAttentionPool({ threads: 2 });
  const attn = await loadAttention();
  const pooled = await pool.sdpa(q, k, v, options);
  const single = attn.sdpa(q, k, v, options);
  const same = pooled.every((x, i) => Object.is(x, single[i]));
  out.textContent = same ? `the same bits (${pool.threads} workers, ${pool.isa})` : 'different numbers';
  pool.dispose();
} catch (err) {
  out.textContent = `the pool failed: ${err.message}`;
}
