// attention-wasm in a browser with no bundler: import the modules from where
// npm put them; each finds its wasm beside itself (../dist/ from web/).
import { Matrix, loadAttention } from './node_modules/attention-wasm/web/attention.js';
import './node_modules/attention-wasm/web/explorer.js';

const tokens = ['the', 'cat', 'sat', 'there'];
const q = Matrix.from([[1, 0, 1], [0, 2, 0], [1, 1, 0], [0, 0, 1]]);
const k = Matrix.from([[1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 1, 0]]);
const v = Matrix.from([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]);

const attn = await loadAttention();
const { weights } = attn.attention(q, k, v, { steps: true });
const table = document.querySelector('#weights');
table.append(row('th', ['', ...tokens]));
tokens.forEach((token, i) => table.append(row('td', [token, ...tokens.map((_, j) => weights.get(i, j).toFixed(4))])));
table.dataset.isa = attn.isa;

function row(cell, texts) {
  const tr = document.createElement('tr');
  for (const text of texts) {
    const td = document.createElement(cell);
    td.textContent = text;
    tr.append(td);
  }
  return tr;
}
