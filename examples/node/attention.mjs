// The handbook's worked example: four tokens, embeddings X (4, 6) and
// projections W_Q, W_K, W_V (6, 3) drawn with numpy's generator at seed 7
// (np.random.seed(7); X = randn(4, 6); W = randn(6, 3) * 0.5, in that
// order), then softmax(Q K^T / sqrt(d_k)) V step by step.
//   node attention.mjs
import { Matrix, NumpyRandom, loadAttention } from 'attention-wasm';

const tokens = ['the', 'cat', 'sat', 'there'];
const dModel = 6, dk = 3;
const rng = new NumpyRandom(7);
const x = new Matrix(tokens.length, dModel, Float32Array.from(rng.randn(tokens.length, dModel)));
const projection = () => new Matrix(dModel, dk, Float32Array.from(rng.randn(dModel, dk), (w) => w * 0.5));
const wq = projection(), wk = projection(), wv = projection();

const attn = await loadAttention();
const q = attn.matmul(x, wq), k = attn.matmul(x, wk), v = attn.matmul(x, wv);
const { scores, scaled, weights, output } = attn.attention(q, k, v, { steps: true });

const show = (name, m, decimals) => {
  console.log(name);
  for (let i = 0; i < m.rows; i++) {
    const row = Array.from({ length: m.cols }, (_, j) => m.get(i, j).toFixed(decimals).padStart(8));
    console.log(`  ${(tokens[i] ?? '').padEnd(6)}${row.join('')}`);
  }
};
show('raw scores Q K^T', scores, 3);
show(`scaled scores (/ sqrt(${dk}))`, scaled, 3);
show('weights softmax(scaled), rows sum to 1', weights, 4);
show('output weights V', output, 4);
attn.dispose();
