// A decode loop as a language model runs it: grouped-query heads (8 query
// heads over 2 kv heads), RoPE, a KV cache that keeps the keys and values in
// wasm memory, one new token a step. At the end the last step is checked
// against attention over the whole sequence at once.
//   node decode.mjs
import { Matrix, loadAttention } from 'attention-wasm';

const heads = 8, kvHeads = 2, d = 64, steps = 32;
const rope = { theta: 10000 };
let seed = 1;
const draw = (n) => Float32Array.from({ length: n }, () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 30 - 1;
});

const attn = await loadAttention();
const cache = attn.kvCache({ kvHeads, dk: d, capacity: steps, dtype: 'float32' });
const qs = [], ks = [], vs = [];
let last = null;
for (let t = 0; t < steps; t++) {
  // This step's projections: q (heads, 1, d), k and v (kvHeads, 1, d).
  const q = draw(heads * d), k = draw(kvHeads * d), v = draw(kvHeads * d);
  qs.push(q); ks.push(k); vs.push(v);
  cache.append(k, v, { rope });             // keys turned at their positions 0, 1, 2, ...
  last = cache.attend(q, { heads, rope });  // the query turned at position t; sees every key so far
}
console.log(`decoded ${cache.length} tokens: ${heads} query heads over ${kvHeads} kv heads, d = ${d}, cache ${cache.bytes} bytes`);

// The same last step from scratch: every token's q, k, v as (heads, steps, d) tensors, causal.
const stack = (rows, h) => {
  const out = new Float32Array(h * steps * d);
  rows.forEach((r, t) => { for (let i = 0; i < h; i++) out.set(r.subarray(i * d, (i + 1) * d), (i * steps + t) * d); });
  return out;
};
const turned = (rows, h) => attn.rope(new Matrix(h * steps, d, stack(rows, h)), { heads: h, ...rope }).data;
const full = attn.sdpa(turned(qs, heads), turned(ks, kvHeads), stack(vs, kvHeads), { heads, kvHeads, nq: steps, nk: steps, dk: d, dv: d, causal: true });
let diff = 0;
for (let h = 0; h < heads; h++) {
  for (let c = 0; c < d; c++) diff = Math.max(diff, Math.abs(last[h * d + c] - full[(h * steps + steps - 1) * d + c]));
}
console.log(`last step against full causal attention: largest difference ${diff.toExponential(2)}`);
cache.dispose();
attn.dispose();
