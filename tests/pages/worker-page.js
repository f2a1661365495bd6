// Two module workers and the page, each with its own instance, same numbers.
import { loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';

const ask = (seed) => new Promise((resolve, reject) => {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = (e) => resolve(e.data);
  worker.onerror = (e) => reject(new Error(e.message));
  worker.postMessage({ seed });
});

const [a, b] = await Promise.all([ask(7), ask(8)]);
const attn = await loadAttention();
const here = (seed) => Array.from(computeExample(attn, normalizeConfig({ seed })).heads[0].weights.data);
const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);
document.getElementById('result').textContent = JSON.stringify({
  simd: a.simd && b.simd, sevenMatches: same(a.weights, here(7)), eightMatches: same(b.weights, here(8)), differ: !same(a.weights, b.weights),
});
