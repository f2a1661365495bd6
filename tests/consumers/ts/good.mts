// A strict TypeScript consumer: must type-check.
import { compileAttention, float32ToFloat16, loadAttention, Matrix, NumpyRandom, type AttentionResult, type Float16ArrayLike, type SdpaGradients, type SdpaOptions, type SdpaResult } from 'attention-wasm';
import 'attention-wasm/explorer';
import { createAttentionPool } from 'attention-wasm/pool';

const attn = await loadAttention({ simd: true });
const q: Matrix = Matrix.from([[1, 2], [3, 4]]);
const r: AttentionResult = attn.attention(q, q, q, { causal: true, steps: true, mask: [[true, false], [true, true]] });
const weights: Matrix | undefined = r.weights;
const flat: Float32Array = attn.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2 });
const grads: SdpaGradients = attn.sdpaBackward(new Float32Array(4), new Float32Array(4), new Float32Array(4), null, new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2, window: [1, 0] });
const dwq: Matrix = attn.multiHeadAttentionBackward(q, q, { wq: q, wk: q, wv: q, heads: 1 }).dwq;
const dq: Matrix = attn.attentionBackward(q, q, q, q, { softcap: 30 }).dq;
const draws: Float64Array = new NumpyRandom(7).randn(2, 3);
const el = document.createElement('attention-explorer');
el.heads = 2;
el.addEventListener('attention-change', (e) => console.log(e.detail.tokens.join(' ')));
console.log(weights?.get(0, 0), flat.length, grads.dq.length, dwq.rows, dq.cols, draws.length, el.state?.tokens);
// sdpa's options and the KV cache.
const full = attn.sdpa(new Float32Array(8), new Float32Array(8), new Float32Array(8), {
  batch: 2, nq: 2, nk: 2, dk: 2, dv: 2, layout: 'bshd', softcap: 30, window: [1, 0], queryOffset: Int32Array.of(0, 1),
  kvLengths: Int32Array.of(2, 1), mask: { data: new Uint8Array(4), shape: [2, 1, 1, 2] }, steps: true, stats: true,
});
const lse: Float32Array | undefined = full instanceof Float32Array ? undefined : full.lse;
const cache = attn.kvCache({ kvHeads: 1, dk: 2, capacity: 16 });
cache.append(new Float32Array(2), new Float32Array(2));
const next: Float32Array = cache.attend(new Float32Array(2), { causal: true, window: [8, 0] });
console.log(lse?.length, next.length, cache.length, cache.keys().length);
// steps: true / stats: true return SdpaResult, so .lse and .weights type-check without a narrowing.
const withStats = attn.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2, stats: true });
const withSteps = cache.attend(new Float32Array(2), { steps: true });
console.log(withStats.lse?.length, withSteps.weights?.length, cache.attend(new Float32Array(2), { stats: true }).output.length);
// null means "not given" everywhere the JS accepts it; shapes may be readonly tuples.
const shape = [1, 1, 2, 2] as const;
attn.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2, mask: { data: new Uint8Array(4), shape } });
attn.multiHeadAttention([[1, 2]], {
  wq: [[1], [0]], wk: [[1], [0]], wv: [[0], [1]], heads: 1,
  kvHeads: null, wo: null, context: null, causal: null, mask: null, bias: null, scale: null, steps: null,
});
attn.kvCache({ batch: null, kvHeads: null, dk: 2, dv: null, capacity: 4, layout: null }).dispose();
cache.attend(new Float32Array(2), { heads: null, nq: null });
cache.dispose();
// The pool's sdpa has attn.sdpa's overloads: a Float32Array without steps or stats, SdpaResult with them.
const pool = await createAttentionPool({ threads: 2, callerShare: false });
const small = { nq: 2, nk: 2, dk: 2, dv: 2 };
const pooled: Float32Array = await pool.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), small);
const pooledStats: SdpaResult = await pool.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { ...small, stats: true });
const pooledSteps: SdpaResult = await pool.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { ...small, steps: true });
const pooledEither: Float32Array | SdpaResult = await pool.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), small as SdpaOptions);
const pooledMha: Matrix = (await pool.multiHeadAttention([[1, 2]], { wq: [[1], [0]], wk: [[1], [0]], wv: [[0], [1]], heads: 1 })).output;
console.log(pooled.length, pooledStats.lse?.length, pooledSteps.weights?.length, pooledEither, pooledMha.rows, pool.stats.parts);
// A pool cache: its dtype and bytes, and append with rope as KVCache#append.
const poolCache = await pool.kvCache({ kvHeads: 1, dk: 2, capacity: 8, dtype: 'int8' });
await poolCache.append(new Float32Array(2), new Float32Array(2), { rope: { theta: 500000 } });
const poolBytes: number = poolCache.bytes, poolType: 'float32' | 'float16' | 'int8' = poolCache.dtype;
const poolCacheMemory: 'shared' | 'copy' = poolCache.memory;
console.log(poolBytes, poolType, poolCacheMemory, (await poolCache.attend(new Float32Array(2), { rope: { theta: 500000 } })).length);
pool.dispose();
// float16 matrices through attention().
const h = { rows: 1, cols: 2, data: new Uint16Array([0x3c00, 0]) };
const halfOut: Uint16Array = attn.attention(h, h, h, { dtype: 'float16', causal: true }).output.data;
console.log(halfOut.length);
// Float16Array tensors, typed by their tag (this project's lib, ES2022, has no Float16Array).
declare const f16: Float16ArrayLike;
const f16Out: Float16ArrayLike = attn.sdpa(f16, f16, f16, { nq: 1, nk: 1, dk: 2, dv: 2 });
const f16Stats = attn.sdpa(f16, f16, f16, { nq: 1, nk: 1, dk: 2, dv: 2, stats: true });
const f16Matrix: Float16ArrayLike = attn.attention({ rows: 1, cols: 2, data: f16 }, { rows: 1, cols: 2, data: f16 }, { rows: 1, cols: 2, data: f16 }).output.data;
const f16Made: Float16ArrayLike = float32ToFloat16([1, 2], f16);
// attn.rope over a (heads, n, d) block.
const turned: Matrix = attn.rope({ rows: 4, cols: 2, data: new Float32Array(8) }, { heads: 2, position: 3, theta: 500 });
console.log(f16Out.length, f16Stats, f16Matrix.length, f16Made.length, turned.rows);
// The host's WebAssembly types where the DOM lib declares them.
const compiled: WebAssembly.Module = await compileAttention();
const memory: WebAssembly.Memory = (await loadAttention({ wasm: compiled })).memory;
await loadAttention({ wasm: new Response(new Uint8Array(8)) }).catch(() => null);
console.log(memory.buffer.byteLength);
// Tensors { data, dims } and Symbol.dispose.
const t = attn.sdpa({ data: new Float32Array(12), dims: [1, 1, 3, 4] }, { data: new Float32Array(20), dims: [1, 1, 5, 4] }, { data: new Float32Array(20), dims: [1, 1, 5, 4] }, { causal: true });
const tDims: readonly number[] = t.dims;
const asMatrix: Matrix = attn.matmul({ data: new Float32Array(4), dims: [2, 2] }, q);
cache[Symbol.dispose]();
attn[Symbol.dispose]();
console.log(tDims.length, asMatrix.dims[0]);
