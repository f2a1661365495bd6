// Gradients of attention: dQ, dK, dV for a loss on the output, checked
// against a central difference of the loss for one entry of q.
//   node backward.mjs
import { Matrix, loadAttention } from 'attention-wasm';

const attn = await loadAttention();
const n = 5, d = 4;
const fill = (s) => new Matrix(n, d, Float32Array.from({ length: n * d }, (_, i) => Math.cos(i * 0.7 + s)));
const q = fill(1), k = fill(2), v = fill(3);
// loss = sum of output * g, so dLoss/dOutput = g.
const g = fill(4);
const loss = (qm) => attn.attention(qm, k, v, { causal: true }).output.data.reduce((s, o, i) => s + o * g.data[i], 0);

const grads = attn.attentionBackward(q, k, v, g, { causal: true });
const h = 1e-2, at = 6;
const plus = new Matrix(n, d, q.data.slice()), minus = new Matrix(n, d, q.data.slice());
plus.data[at] += h;
minus.data[at] -= h;
const numeric = (loss(plus) - loss(minus)) / (2 * h);
console.log(`dq[${at}] from the backward pass ${grads.dq.data[at].toFixed(5)}, central difference ${numeric.toFixed(5)}`);
console.log(`dk (${grads.dk.rows} x ${grads.dk.cols}) and dv (${grads.dv.rows} x ${grads.dv.cols}) too`);
attn.dispose();
