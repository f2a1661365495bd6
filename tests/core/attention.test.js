// The JavaScript API: input forms, results as copies, multi-head attention,
// matmul and softmax, loading options, errors and instance life.
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, NumpyRandom, loadAttention, simdSupported } from '../../web/attention.js';
import { RTOL_REFERENCE, assertClose, rejects } from '../helpers.js';

const rand = (seed, rows, cols) => new Matrix(rows, cols, Float32Array.from(new NumpyRandom(seed).randn(rows, cols)));

// float64 reference for one head, written from the definition.
function reference(q, k, v, { causal = false, mask, bias, scale = 1 / Math.sqrt(q.cols) } = {}) {
  const out = new Float64Array(q.rows * v.cols);
  for (let i = 0; i < q.rows; i++) {
    const z = [];
    for (let j = 0; j < k.rows; j++) {
      let dot = 0;
      for (let p = 0; p < q.cols; p++) dot += q.get(i, p) * k.get(j, p);
      let x = dot * scale + (bias ? bias[i][j] : 0);
      if ((causal && j > i) || (mask && !mask[i][j])) x = -Infinity;
      z.push(x);
    }
    const m = Math.max(...z);
    if (m === -Infinity) continue;
    const e = z.map((x) => Math.exp(x - m));
    const sum = e.reduce((a, b) => a + b);
    for (let c = 0; c < v.cols; c++) out[i * v.cols + c] = e.reduce((acc, w, j) => acc + w * v.get(j, c), 0) / sum;
  }
  return out;
}

const api = suite('API');
api.before(async (ctx) => {
  ctx.attn = await loadAttention();
});

api('default build is SIMD where the engine validates the SIMD probe', ({ attn }) => {
  assert.is(simdSupported(), true); // Node 20 has SIMD128
  assert.is(attn.simd, true);
  assert.ok(attn.memory instanceof WebAssembly.Memory);
});

api('Matrix, { rows, cols, data } and number[][] give the same answer', ({ attn }) => {
  const q = rand(1, 3, 4), k = rand(2, 5, 4), v = rand(3, 5, 2);
  const a = attn.attention(q, k, v).output;
  const b = attn.attention({ rows: 3, cols: 4, data: q.data }, { rows: 5, cols: 4, data: Array.from(k.data) }, v.toArray()).output;
  assert.equal(Array.from(a.data), Array.from(b.data));
  assertClose(a.data, reference(q, k, v), { rtol: RTOL_REFERENCE });
});

api('steps: scores, scaled, weights are the textbook matrices', ({ attn }) => {
  const q = rand(4, 3, 2), k = rand(5, 4, 2), v = rand(6, 4, 3);
  const r = attn.attention(q, k, v, { steps: true, scale: 0.7 });
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 4; j++) {
      const dot = q.get(i, 0) * k.get(j, 0) + q.get(i, 1) * k.get(j, 1);
      assert.ok(Math.abs(r.scores.get(i, j) - dot) < 1e-5);
      assert.is(r.scaled.get(i, j), Math.fround(r.scores.get(i, j) * 0.7));
    }
  }
  assertClose(r.output.data, reference(q, k, v, { scale: 0.7 }), { rtol: RTOL_REFERENCE });
});

api('causal, mask and bias combine; a fully masked row is 0', ({ attn }) => {
  const q = rand(7, 4, 3), k = rand(8, 6, 3), v = rand(9, 6, 2);
  const mask = [[false, false, false, false, false, false], [true, true, false, true, true, true], [true, false, true, true, true, true], [true, true, true, true, true, false]];
  const bias = [[0, 0, 0, 0, 0, 0], [0.5, -Infinity, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [-1, 0, 0, 2, 0, 0]];
  const r = attn.attention(q, k, v, { causal: true, mask, bias, steps: true });
  assertClose(r.output.data, reference(q, k, v, { causal: true, mask, bias }), { rtol: RTOL_REFERENCE });
  assert.equal(Array.from(r.output.data.subarray(0, 2)), [0, 0]);
  assert.equal(Array.from(r.weights.data.subarray(0, 6)), [0, 0, 0, 0, 0, 0]);
  assert.is(r.weights.get(1, 1), 0); // -Infinity bias
  assert.is(r.weights.get(1, 2), 0); // causal... and masked
  assert.is(r.weights.get(2, 1), 0); // masked
  const fused = attn.attention(q, k, v, { causal: true, mask, bias }).output;
  assertClose(fused.data, r.output.data, { rtol: 1e-6 });
  const maskObj = { rows: 4, cols: 6, data: Uint8Array.from(mask.flat(), Number) };
  assert.equal(attn.attention(q, k, v, { causal: true, mask: maskObj, bias }).output.data, fused.data);
});

api('huge logits give finite weights; NaN in a query row poisons that row only', ({ attn }) => {
  const q = rand(10, 3, 4), k = rand(11, 5, 4), v = rand(12, 5, 2);
  const big = new Matrix(3, 4, q.data.map((x) => x * 1e18));
  const r = attn.attention(big, k, v, { steps: true });
  assert.ok(r.weights.data.every(Number.isFinite) && r.output.data.every(Number.isFinite));
  const bad = new Matrix(3, 4, q.data.slice());
  bad.data[1 * 4 + 2] = NaN;
  const out = attn.attention(bad, k, v).output;
  assert.ok(out.toArray()[1].every(Number.isNaN));
  assert.ok([...out.toArray()[0], ...out.toArray()[2]].every(Number.isFinite));
});

api('results are copies: later calls and memory growth leave them intact', ({ attn }) => {
  const q = rand(13, 2, 3), k = rand(14, 2, 3), v = rand(15, 2, 3);
  const first = attn.attention(q, k, v, { steps: true });
  const saved = Array.from(first.output.data);
  const pagesBefore = attn.memory.buffer.byteLength;
  const n = 1500; // steps matrices of 3 x 9 MB force growth
  const x = rand(16, n, 8);
  attn.attention(x, x, x, { steps: true });
  assert.ok(attn.memory.buffer.byteLength > pagesBefore, 'memory grew');
  assert.equal(Array.from(first.output.data), saved);
  assert.ok(!(first.output.data.buffer instanceof SharedArrayBuffer) && first.output.data.buffer !== attn.memory.buffer);
  assert.equal(Array.from(attn.attention(q, k, v, { steps: true }).output.data), saved);
});

api('memory grown from outside (attn.memory.grow) is picked up by the next call', ({ attn }) => {
  const q = new Float32Array([1, 2, 3, 4]);
  const before = Array.from(attn.sdpa(q, q, q, { nq: 2, nk: 2, dk: 2, dv: 2 }));
  attn.memory.grow(2); // detaches every view of the old buffer
  assert.equal(Array.from(attn.sdpa(q, q, q, { nq: 2, nk: 2, dk: 2, dv: 2 })), before);
  assert.equal(attn.matmul([[1, 2]], [[3], [4]]).toArray(), [[11]]);
});

api('sdpa: batch, GQA and out buffer', ({ attn }) => {
  const [batch, heads, kvHeads, nq, nk, dk, dv] = [2, 4, 2, 3, 5, 4, 3];
  const rng = new NumpyRandom(17);
  const q = Float32Array.from(rng.randn(batch * heads * nq * dk));
  const k = Float32Array.from(rng.randn(batch * kvHeads * nk * dk));
  const v = Float32Array.from(rng.randn(batch * kvHeads * nk * dv));
  const out = new Float32Array(batch * heads * nq * dv + 2).fill(7);
  const r = attn.sdpa(q, k, v, { batch, heads, kvHeads, nq, nk, dk, dv, out });
  assert.is(r, out);
  assert.is(out[out.length - 1], 7);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const kv = b * kvHeads + Math.floor(h / 2), qh = b * heads + h;
      const m = (data, idx, rows, cols) => new Matrix(rows, cols, data.slice(idx * rows * cols, (idx + 1) * rows * cols));
      const want = reference(m(q, qh, nq, dk), m(k, kv, nk, dk), m(v, kv, nk, dv));
      assertClose(out.subarray(qh * nq * dv, (qh + 1) * nq * dv), want, { rtol: RTOL_REFERENCE, what: `b${b} h${h}` });
    }
  }
});

api('multiHeadAttention follows PyTorch: column blocks per head, concat, then wo', ({ attn }) => {
  const n = 5, m = 7, dModel = 8, heads = 4, kvHeads = 2, dk = 2, dv = 3;
  const x = rand(20, n, dModel), ctxM = rand(21, m, 6);
  const wq = rand(22, dModel, heads * dk), wk = rand(23, 6, kvHeads * dk), wv = rand(24, 6, kvHeads * dv), wo = rand(25, heads * dv, 4);
  const r = attn.multiHeadAttention(x, { wq, wk, wv, wo, heads, kvHeads, context: ctxM, steps: true });
  assert.is(r.output.rows, n);
  assert.is(r.output.cols, 4);
  assert.is(r.weights.length, heads);
  const Q = attn.matmul(x, wq), K = attn.matmul(ctxM, wk), V = attn.matmul(ctxM, wv);
  const cols = (M, start, count) => new Matrix(M.rows, count, Float32Array.from({ length: M.rows * count }, (_, idx) => M.get(Math.floor(idx / count), start + (idx % count))));
  const concat = new Matrix(n, heads * dv);
  for (let h = 0; h < heads; h++) {
    const g = Math.floor(h / 2);
    const o = attn.attention(cols(Q, h * dk, dk), cols(K, g * dk, dk), cols(V, g * dv, dv)).output;
    for (let i = 0; i < n; i++) for (let c = 0; c < dv; c++) concat.data[i * heads * dv + h * dv + c] = o.get(i, c);
  }
  assertClose(r.output.data, attn.matmul(concat, wo).data, { rtol: 1e-6 });
  const noWo = attn.multiHeadAttention(x, { wq, wk, wv, heads, kvHeads, context: ctxM });
  assertClose(noWo.output.data, concat.data, { rtol: 1e-6 });
});

api('matmul and softmax', ({ attn }) => {
  const c = attn.matmul([[1, 2], [3, 4], [5, 6]], [[1, 0, 2], [0, 1, 3]]);
  assert.equal(c.toArray(), [[1, 2, 8], [3, 4, 18], [5, 6, 28]]);
  const s = attn.softmax([[0, 0], [1000, -1000], [-Infinity, -Infinity], [1, -Infinity]]);
  assert.equal(s.toArray(), [[0.5, 0.5], [1, 0], [0, 0], [1, 0]]);
});

api('matmul writes into out (a Matrix or a Float32Array of m * n), which may hold an operand', ({ attn }) => {
  const a = rand(50, 5, 3), b = rand(51, 3, 4);
  const fresh = attn.matmul(a, b);
  const m = new Matrix(5, 4);
  assert.is(attn.matmul(a, b, { out: m }), m);
  assert.equal(m.data, fresh.data);
  const flat = new Float32Array(20).fill(7);
  const r = attn.matmul(a, b, { out: flat });
  assert.is(r.data, flat);
  assert.is(r.rows, 5);
  assert.is(r.cols, 4);
  assert.equal(flat, fresh.data);
  // out is a's own data: both operands are copied in before the product comes out.
  const square = rand(52, 4, 4), other = rand(53, 4, 4);
  const expected = attn.matmul(square, other).data;
  attn.matmul(square, other, { out: square.data });
  assert.equal(square.data, expected);
  assert.equal(attn.matmul(a, b, { out: null }).data, fresh.data);
  assert.equal(attn.matmul(a, b, {}).data, fresh.data);
});

api('matmul out of the wrong kind or size is an error naming out and the shape', ({ attn }) => {
  const a = rand(54, 2, 3), b = rand(55, 3, 4);
  const bad = [
    [{ out: new Float32Array(7) }, RangeError, /^matmul: out has 7 values, needs 2 x 4 = 8 for the result \(2, 4\)$/],
    [{ out: new Float32Array(9) }, RangeError, /^matmul: out has 9 values, needs 2 x 4 = 8/],
    [{ out: new Matrix(4, 2) }, RangeError, /^matmul: out must have shape \(2, 4\), got \(4, 2\)$/],
    [{ out: new Float64Array(8) }, TypeError, /^matmul: out must be a Matrix \(2, 4\) or a Float32Array of 2 x 4 = 8 values, got a Float64Array of length 8$/],
    [{ out: [[0, 0, 0, 0], [0, 0, 0, 0]] }, TypeError, /^matmul: out must be a Matrix/],
    [{ output: new Float32Array(8) }, TypeError, /^matmul: unknown option "output" \(known: out, transposeB, bias\)$/],
    [7, TypeError, /^matmul: options must be an object/],
  ];
  for (const [options, E, message] of bad) {
    rejects(() => attn.matmul(a, b, options), E, message, JSON.stringify(options));
  }
});

api('softmax writes into out like matmul, which may be x\'s data; a wrong out names it and the shape', ({ attn }) => {
  const x = rand(56, 3, 5);
  const fresh = attn.softmax(x);
  const m = new Matrix(3, 5);
  assert.is(attn.softmax(x, { out: m }), m);
  assert.equal(m.data, fresh.data);
  const r = attn.softmax(x, { out: x.data });
  assert.is(r.data, x.data);
  assert.equal(x.data, fresh.data);
  rejects(() => attn.softmax(x, { out: new Float32Array(14) }), RangeError, /^softmax: out has 14 values, needs 3 x 5 = 15 for the result \(3, 5\)$/);
  rejects(() => attn.softmax(x, { out: new Matrix(5, 3) }), RangeError, /^softmax: out must have shape \(3, 5\), got \(5, 3\)$/);
  rejects(() => attn.softmax(x, { out: [1] }), TypeError, /^softmax: out must be a Matrix \(3, 5\) or a Float32Array of 3 x 5 = 15 values, got an array of length 1$/);
  rejects(() => attn.softmax(x, { into: m }), TypeError, /^softmax: unknown option "into" \(known: out\)$/);
});

api('null means "not given" for optional options', ({ attn }) => {
  const q = rand(30, 3, 2), k = rand(31, 4, 2), v = rand(32, 4, 2);
  const plain = attn.attention(q, k, v).output.data;
  assert.equal(attn.attention(q, k, v, { mask: null, bias: null, scale: null, causal: null, steps: null }).output.data, plain);
  const flat = attn.sdpa(q.data, k.data, v.data, { nq: 3, nk: 4, dk: 2, dv: 2, kvHeads: null, mask: null, bias: null, scale: null, causal: null, out: null });
  assert.equal(flat, plain);
});

api('steps return logits; attention and multiHeadAttention take softcap, window and queryOffset', ({ attn }) => {
  const q = rand(40, 5, 4), k = rand(41, 7, 4), v = rand(42, 7, 3);
  const opts = { softcap: 1.5, window: [2, 0], queryOffset: 2, causal: true, steps: true };
  const r = attn.attention(q, k, v, opts);
  const flat = attn.sdpa(q.data, k.data, v.data, { nq: 5, nk: 7, dk: 4, dv: 3, ...opts, stats: true });
  assert.equal(Array.from(r.output.data), Array.from(flat.output));
  assert.equal(Array.from(r.logits.data), Array.from(flat.logits));
  for (let i = 0; i < 5; i++) {
    for (let j = 0; j < 7; j++) {
      const allowed = j <= i + 2 && j >= i + 2 - 2;
      const want = allowed ? 1.5 * Math.tanh(r.scaled.get(i, j) / 1.5) : -Infinity;
      assert.ok(allowed ? Math.abs(r.logits.get(i, j) - want) < 1e-6 : r.logits.get(i, j) === -Infinity, `logit ${i},${j}`);
      if (!allowed) assert.is(r.weights.get(i, j), 0);
    }
  }
  // multiHeadAttention: one head equals attention() on the projections.
  const x = rand(43, 5, 6), wq = rand(44, 6, 4), wk = rand(45, 6, 4), wv = rand(46, 6, 3);
  const mha = attn.multiHeadAttention(x, { wq, wk, wv, heads: 1, ...opts });
  const one = attn.attention(attn.matmul(x, wq), attn.matmul(x, wk), attn.matmul(x, wv), opts);
  assert.equal(Array.from(mha.output.data), Array.from(one.output.data));
  assert.equal(Array.from(mha.logits[0].data), Array.from(one.logits.data));
});

api('stats: lse is the log-sum-exp of each logits row, -Infinity for a row with no allowed key', ({ attn }) => {
  const rng = new NumpyRandom(47);
  const [batch, heads, nq, nk, d] = [2, 2, 6, 9, 4];
  const q = Float32Array.from(rng.randn(batch * heads * nq * d)), k = Float32Array.from(rng.randn(batch * heads * nk * d));
  const o = { batch, heads, nq, nk, dk: d, dv: d, causal: true, queryOffset: Int32Array.of(-1, 3), steps: true, stats: true };
  const r = attn.sdpa(q, k, k, o);
  assert.is(r.lse.length, batch * heads * nq);
  for (let row = 0; row < batch * heads * nq; row++) {
    const z = r.logits.subarray(row * nk, (row + 1) * nk);
    const m = Math.max(...z);
    const want = m === -Infinity ? -Infinity : m + Math.log(z.reduce((acc, x) => acc + Math.exp(x - m), 0));
    assert.ok(want === -Infinity ? r.lse[row] === -Infinity : Math.abs(r.lse[row] - want) < 1e-5, `row ${row}: ${r.lse[row]} vs ${want}`);
  }
  assert.is(r.lse[0], -Infinity); // batch 0, query 0 at position -1: no key
  const fused = attn.sdpa(q, k, k, { ...o, steps: false });
  assertClose(fused.lse.map((x) => (x === -Infinity ? 0 : x)), r.lse.map((x) => (x === -Infinity ? 0 : x)), { rtol: 1e-6 });
  assert.ok(fused.output instanceof Float32Array && !('logits' in fused));
});

api('Matrix helpers', () => {
  const m = Matrix.from([[1, 2, 3], [4, 5, 6]]);
  assert.is(m.get(1, 2), 6);
  assert.equal(m.toArray(), [[1, 2, 3], [4, 5, 6]]);
  const copy = Matrix.from(m);
  copy.data[0] = 9;
  assert.is(m.get(0, 0), 1);
  assert.throws(() => m.get(2, 0), RangeError);
  assert.throws(() => new Matrix(2, 2, new Float32Array(3)), /expected 2 x 2 = 4/);
});
api.run();

const load = suite('loading');
const wasmURL = new URL('../../dist/attention-scalar.wasm', import.meta.url);
load('wasm as URL, path string, bytes, Response and Module; simd reported by the module', async () => {
  const bytes = readFileSync(wasmURL);
  const module = await WebAssembly.compile(bytes);
  const sources = [wasmURL, wasmURL.pathname, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    new Response(bytes, { headers: { 'content-type': 'application/wasm' } }), new Response(bytes, { headers: { 'content-type': 'text/plain' } }), module];
  for (const wasm of sources) {
    const attn = await loadAttention({ wasm });
    assert.is(attn.simd, false);
    assert.equal(attn.matmul([[2]], [[3]]).toArray(), [[6]]);
  }
  const simd = await loadAttention({ wasm: new URL('../../dist/attention-simd.wasm', import.meta.url) });
  assert.is(simd.simd, true);
});
load('bad load options are TypeErrors', async () => {
  for (const [opts, re] of [[{ simd: 'yes' }, /simd must be a boolean/], [{ wasm: 42 }, /wasm must be a URL/], [{ smd: true }, /unknown option "smd"/], [null, /options must be an object/]]) {
    await rejects(loadAttention(opts), TypeError, re, JSON.stringify(opts));
  }
  await rejects(loadAttention({ wasm: new Response('nope', { status: 404 }) }), Error, /HTTP 404/);
});
load('two instances are independent; dispose ends one only', async () => {
  const a = await loadAttention(), b = await loadAttention();
  assert.is.not(a.memory, b.memory);
  a.dispose();
  assert.throws(() => a.matmul([[1]], [[1]]), /disposed/);
  assert.throws(() => a.memory, /disposed/);
  a.dispose(); // twice is harmless
  assert.equal(b.matmul([[1]], [[2]]).toArray(), [[2]]);
});
load.run();

const errors = suite('bad input');
errors.before(async (ctx) => {
  ctx.attn = await loadAttention();
});
const q = [[1, 2], [3, 4]], k = [[1, 0], [0, 1], [1, 1]], v = [[1], [2], [3]];
const cases = [
  ['q not a matrix', (a) => a.attention('hello', k, v), TypeError, /attention: q must be a Matrix/],
  ['ragged q', (a) => a.attention([[1, 2], [3]], k, v), RangeError, /attention: q is ragged: row 0 has 2 values but row 1 has 1/],
  ['empty q', (a) => a.attention([], k, v), RangeError, /attention: q must have at least one row/],
  ['empty row', (a) => a.attention([[]], k, v), RangeError, /attention: q\[0\] is empty/],
  ['flat array for a matrix', (a) => a.attention([1, 2, 3], k, v), TypeError, /attention: q must be number\[\]\[\] \(an array of rows, shape \(rows, cols\)\); its first element is 1, not a row/],
  ['string entry', (a) => a.attention([[1, '2'], [3, 4]], k, v), TypeError, /attention: q\[0\]\[1\] must be a number/],
  ['k width differs from q', (a) => a.attention(q, [[1, 2, 3]], [[1]]), RangeError, /attention: k must have shape \(rows, 2\), got \(1, 3\)/],
  ['v rows differ from k', (a) => a.attention(q, k, [[1], [2]]), RangeError, /attention: v must have shape \(3, cols\), got \(2, 1\)/],
  ['short data', (a) => a.attention({ rows: 2, cols: 2, data: new Float32Array(3) }, k, v), RangeError, /attention: q.data has 3 values, expected 2 x 2 = 4/],
  ['fractional rows', (a) => a.attention({ rows: 1.5, cols: 2, data: new Float32Array(3) }, k, v), RangeError, /attention: q.rows must be a positive integer, got 1.5/],
  ['mask shape', (a) => a.attention(q, k, v, { mask: [[true, true, true]] }), RangeError, /attention: mask must have 2 rows \(shape \(2, 3\)\)/],
  ['mask type', (a) => a.attention(q, k, v, { mask: [['y', 1, 1], [1, 1, 1]] }), TypeError, /attention: mask\[0\]\[0\] must be a boolean/],
  ['bias shape', (a) => a.attention(q, k, v, { bias: [[0, 0], [0, 0]] }), RangeError, /attention: bias must have shape \(2, 3\), got \(2, 2\)/],
  ['causal type', (a) => a.attention(q, k, v, { causal: 'yes' }), TypeError, /attention: causal must be a boolean/],
  ['scale NaN', (a) => a.attention(q, k, v, { scale: NaN }), RangeError, /attention: scale must be finite/],
  ['scale type', (a) => a.attention(q, k, v, { scale: '2' }), TypeError, /attention: scale must be a number/],
  ['unknown option', (a) => a.attention(q, k, v, { casual: true }), TypeError, /attention: unknown option "casual"/],
  ['sdpa missing nq', (a) => a.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nk: 2, dk: 2, dv: 2 }), TypeError, /sdpa: nq must be a positive integer, got undefined/],
  ['sdpa zero dk', (a) => a.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 0, dv: 2 }), RangeError, /sdpa: dk must be a positive integer, got 0/],
  ['sdpa short q', (a) => a.sdpa(new Float32Array(3), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2 }), RangeError, /sdpa: q has 3 values, expected 4 for \(batch, heads, nq, dk\) = \(1, 1, 2, 2\)/],
  ['sdpa q not Float32Array', (a) => a.sdpa([1, 2, 3, 4], new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2 }), TypeError, /sdpa: q must be a Float32Array of 4 values/],
  ['sdpa heads vs kvHeads', (a) => a.sdpa(new Float32Array(12), new Float32Array(8), new Float32Array(8), { heads: 3, kvHeads: 2, nq: 2, nk: 2, dk: 2, dv: 2 }), RangeError, /sdpa: heads \(3\) must be a multiple of kvHeads \(2\)/],
  ['sdpa out too small', (a) => a.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2, out: new Float32Array(3) }), RangeError, /sdpa: out has 3 values, needs 4/],
  ['sdpa mask type', (a) => a.sdpa(new Float32Array(4), new Float32Array(4), new Float32Array(4), { nq: 2, nk: 2, dk: 2, dv: 2, mask: [1, 1, 1, 1] }), TypeError, /sdpa: mask must be a Uint8Array of 4 values \(nq, nk\)/],
  ['mha heads do not divide wq', (a) => a.multiHeadAttention([[1, 2]], { wq: [[1, 2, 3], [1, 2, 3]], wk: [[1], [1]], wv: [[1], [1]], heads: 2 }), RangeError, /multiHeadAttention: wq has 3 columns, which must be heads \* dk/],
  ['mha wk shape', (a) => a.multiHeadAttention([[1, 2]], { wq: [[1, 2], [1, 2]], wk: [[1, 2, 3], [1, 2, 3]], wv: [[1], [1]], heads: 1 }), RangeError, /multiHeadAttention: wk must have shape \(2, 2\), got \(2, 3\)/],
  ['matmul inner size', (a) => a.matmul([[1, 2]], [[1, 2]]), RangeError, /matmul: b must have shape \(2, cols\), got \(1, 2\)/],
  ...(() => {
    const f = (n) => new Float32Array(n);
    const sd = (a, o) => a.sdpa(f(16), f(16), f(16), { batch: 2, nq: 2, nk: 2, dk: 4, dv: 4, ...o });
    return [
      ['sdpa layout unknown', (a) => sd(a, { layout: 'bhds' }), RangeError, /sdpa: layout must be 'bhsd' or 'bshd', got the string "bhds"/],
      ['sdpa layout type', (a) => sd(a, { layout: 1 }), TypeError, /sdpa: layout must be 'bhsd' or 'bshd'/],
      ['sdpa softcap below the smallest float32', (a) => sd(a, { softcap: 1e-46 }), RangeError, /sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds .*got 1e-46/],
      ['sdpa softcap past the largest float32', (a) => sd(a, { softcap: 1e39 }), RangeError, /sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds .*got 1e\+39/],
      ['sdpa scale past the largest float32', (a) => sd(a, { scale: 1e39 }), RangeError, /sdpa: scale must be finite as a float32 .*got 1e\+39/],
      ['attention scale past the largest float32', (a) => a.attention([[1]], [[1]], [[1]], { scale: -1e39 }), RangeError, /attention: scale must be finite as a float32/],
      ['sdpa softcap negative', (a) => sd(a, { softcap: -1 }), RangeError, /sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds/],
      ['sdpa softcap NaN', (a) => sd(a, { softcap: NaN }), RangeError, /sdpa: softcap must be 0 \(none\) or a number > 0 that a float32 holds .*got NaN/],
      ['sdpa softcap Infinity', (a) => sd(a, { softcap: Infinity }), RangeError, /sdpa: softcap/],
      ['sdpa softcap type', (a) => sd(a, { softcap: '2' }), TypeError, /sdpa: softcap must be 0 \(none\) or a number > 0, got the string/],
      ['sdpa window left < -1', (a) => sd(a, { window: [-2, 0] }), RangeError, /sdpa: window\[0\] must be an integer from -1 \(unbounded\) to 2147483647, got -2/],
      ['sdpa window fractional', (a) => sd(a, { window: [1, 0.5] }), RangeError, /sdpa: window\[1\] must be an integer from -1 \(unbounded\) to 2147483647, got 0.5/],
      ['sdpa window not a pair', (a) => sd(a, { window: 3 }), TypeError, /sdpa: window must be \[left, right\]/],
      ['sdpa window string side', (a) => sd(a, { window: ['1', 0] }), TypeError, /sdpa: window\[0\] must be an integer/],
      ['sdpa queryOffset fractional', (a) => sd(a, { queryOffset: 1.5 }), RangeError, /sdpa: queryOffset must be an integer/],
      ['sdpa queryOffset type', (a) => sd(a, { queryOffset: [1, 2] }), TypeError, /sdpa: queryOffset must be an integer or an Int32Array of batch = 2/],
      ['sdpa queryOffset length', (a) => sd(a, { queryOffset: new Int32Array(3) }), RangeError, /sdpa: queryOffset has 3 values, expected batch = 2/],
      ['sdpa kvLengths out of range', (a) => sd(a, { kvLengths: Int32Array.of(2, 3) }), RangeError, /sdpa: kvLengths\[1\] is 3, must be in \[0, nk = 2\]/],
      ['sdpa kvLengths negative', (a) => sd(a, { kvLengths: Int32Array.of(-1, 1) }), RangeError, /sdpa: kvLengths\[0\] is -1/],
      ['sdpa kvLengths type', (a) => sd(a, { kvLengths: [2, 2] }), TypeError, /sdpa: kvLengths must be an Int32Array of batch = 2 lengths/],
      ['sdpa kvLengths length', (a) => sd(a, { kvLengths: Int32Array.of(2) }), RangeError, /sdpa: kvLengths has 1 values, expected batch = 2/],
      ['sdpa mask shape does not broadcast', (a) => sd(a, { mask: { data: new Uint8Array(12), shape: [3, 2, 2] } }), RangeError, /sdpa: mask.shape \[3, 2, 2\] does not broadcast to \(batch, heads, nq, nk\) = \(2, 1, 2, 2\)/],
      ['sdpa mask last dim too long', (a) => sd(a, { mask: { data: new Uint8Array(6), shape: [2, 3] } }), RangeError, /sdpa: mask.shape \[2, 3\] does not broadcast.*longer than nk/],
      ['sdpa mask rank 5', (a) => sd(a, { mask: { data: new Uint8Array(4), shape: [1, 1, 1, 2, 2] } }), TypeError, /sdpa: mask.shape must be an array of 2 to 4 dims/],
      ['sdpa mask rank 1', (a) => sd(a, { mask: { data: new Uint8Array(2), shape: [2] } }), TypeError, /sdpa: mask.shape must be an array of 2 to 4 dims/],
      ['sdpa mask data length', (a) => sd(a, { mask: { data: new Uint8Array(3), shape: [2, 2] } }), RangeError, /sdpa: mask.data has 3 values, expected 4 for shape \[2, 2\]/],
      ['sdpa bias data type', (a) => sd(a, { bias: { data: new Uint8Array(4), shape: [2, 2] } }), TypeError, /sdpa: bias.data must be a Float32Array of 4 values/],
      ['sdpa bias zero dim', (a) => sd(a, { bias: { data: new Float32Array(0), shape: [0, 2] } }), RangeError, /sdpa: bias.shape must hold positive integers/],
      ['sdpa steps type', (a) => sd(a, { steps: 1 }), TypeError, /sdpa: steps must be a boolean/],
      ['sdpa stats type', (a) => sd(a, { stats: 'yes' }), TypeError, /sdpa: stats must be a boolean/],
      ['sdpa bshd q length names bshd', (a) => a.sdpa(f(3), f(16), f(16), { batch: 2, nq: 2, nk: 2, dk: 4, dv: 4, layout: 'bshd' }), RangeError, /sdpa: q has 3 values, expected 16 for \(batch, nq, heads, dk\)/],
      ['attention softcap', (a) => a.attention(q, k, v, { softcap: -2 }), RangeError, /attention: softcap must be 0 \(none\) or a number > 0 that a float32 holds/],
      ['attention window', (a) => a.attention(q, k, v, { window: [0] }), TypeError, /attention: window must be \[left, right\]/],
      ['attention queryOffset', (a) => a.attention(q, k, v, { queryOffset: 0.5 }), RangeError, /attention: queryOffset must be an integer/],
      ['mha window', (a) => a.multiHeadAttention([[1, 2]], { wq: [[1, 2], [1, 2]], wk: [[1, 2], [1, 2]], wv: [[1], [1]], heads: 1, window: [-3, 1] }), RangeError, /multiHeadAttention: window\[0\] must be an integer from -1 \(unbounded\)/],
      ['attention mask as a broadcast { data, shape }', (a) => a.attention(q, k, v, { mask: { data: new Uint8Array(6), shape: [2, 3] } }), TypeError, /attention: mask must be boolean\[\]\[\] or \{ rows, cols, data: Uint8Array \} of shape \(2, 3\), got \{ data, shape \}: a broadcast mask is for sdpa\(\)/],
      ['attention mask one row, singular', (a) => a.attention([[1, 2]], k, v, { mask: [[true, true, true], [true, true, true]] }), RangeError, /attention: mask must have 1 row \(shape \(1, 3\)\), got 2/],
      ['append v names dv when dv == dk', (a) => a.kvCache({ dk: 4, capacity: 2 }).append(f(4), [1, 2, 3, 4]), TypeError, /kvCache.append: v must be a Float32Array \(batch, kvHeads, t, dv\) = \(1, 1, t, 4\)/],
      ['append k names dk when dv == dk', (a) => a.kvCache({ dk: 4, capacity: 2 }).append(f(3), f(4)), RangeError, /kvCache.append: k has 3 values, not a positive multiple of batch \* kvHeads \* dk = 4 for \(batch, kvHeads, t, dk\)/],
      ['mha softcap', (a) => a.multiHeadAttention([[1, 2]], { wq: [[1, 2], [1, 2]], wk: [[1, 2], [1, 2]], wv: [[1], [1]], heads: 1, softcap: NaN }), RangeError, /multiHeadAttention: softcap/],
    ];
  })(),
  ['too big for wasm32', (a) => { const x = { rows: 60000, cols: 1, data: new Float32Array(60000) }; a.attention(x, x, x, { steps: true }); }, RangeError, /wasm32 holds at most 4 GiB/],
];
for (const [name, call, Type, message] of cases) {
  errors(`${name}: ${Type.name} naming the argument, instance still right afterwards`, ({ attn }) => {
    rejects(() => call(attn), Type, message);
    assert.equal(attn.matmul([[1, 2]], [[3], [4]]).toArray(), [[11]]);
  });
}
errors.run();
