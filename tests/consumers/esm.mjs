// Node ESM consumer of the installed tarball: prints the handbook weights.
import { loadAttention, NumpyRandom } from 'attention-wasm';

const attn = await loadAttention();
const rng = new NumpyRandom(7);
const X = { rows: 4, cols: 6, data: rng.randn(4, 6) };
const W = () => ({ rows: 6, cols: 3, data: rng.randn(6, 3).map((x) => x * 0.5) });
const [WQ, WK, WV] = [W(), W(), W()];
const { weights, output } = attn.attention(attn.matmul(X, WQ), attn.matmul(X, WK), attn.matmul(X, WV), { steps: true });
console.log(JSON.stringify({ simd: attn.simd, weights: weights.toArray().map((r) => r.map((x) => x.toFixed(4))), output: output.toArray().map((r) => r.map((x) => x.toFixed(4))) }));
