// An instance's life under load (web/core/instance.js): no leaks over tens
// of thousands of calls, a failed allocation is a RangeError that leaves the
// instance working, working memory that grows with n * d without steps, and
// instances in worker threads independent of each other.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { Matrix, NumpyRandom, loadAttention } from '../../web/attention.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { rejects } from '../helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const test = suite('reliability');

test('tens of thousands of calls of every kind leave the memory size unchanged', async () => {
  const attn = await loadAttention();
  const rng = new NumpyRandom(5);
  const m = (rows, cols) => new Matrix(rows, cols, Float32Array.from(rng.randn(rows, cols)));
  const shapes = [[1, 1, 1], [4, 3, 3], [9, 17, 5], [33, 8, 64], [70, 64, 7]];
  const inputs = shapes.map(([n, dk, dv]) => ({ q: m(n, dk), k: m(n + 3, dk), v: m(n + 3, dv), x: m(n, 8), w: m(8, 8), w4: m(8, 4) }));
  const round = (i) => {
    const { q, k, v, x, w, w4 } = inputs[i % inputs.length];
    attn.attention(q, k, v);
    attn.attention(q, k, v, { steps: true, causal: i % 2 === 0 });
    attn.sdpa(q.data, k.data, v.data, { nq: q.rows, nk: k.rows, dk: q.cols, dv: v.cols, causal: true });
    attn.multiHeadAttention(x, { wq: w, wk: w4, wv: w4, wo: w, heads: 2, kvHeads: 1, steps: i % 3 === 0 });
    attn.matmul(x, w);
    attn.softmax(q);
    try {
      attn.attention(q, k, [[1]]);
    } catch {
      // the error path must not leak either
    }
  };
  for (let i = 0; i < 500; i++) round(i); // reach the steady state
  const before = attn.memory.buffer.byteLength;
  for (let i = 0; i < 4000; i++) round(i); // 7 calls a round: 28,000 calls
  assert.is(attn.memory.buffer.byteLength, before);
});

test('a failed allocation is a RangeError; the instance keeps working', async () => {
  // The same sources built with a 16 MiB ceiling, so malloc fails for real.
  const out = `${root}tests/output`;
  mkdirSync(out, { recursive: true });
  const wasm = `${out}/attention-16mib.wasm`;
  // build.sh's own sources and exports, so the module is the release one but for its memory.
  const script = readFileSync(`${root}build.sh`, 'utf8');
  const list = (name) => script.match(new RegExp(`^${name}=\\(([^)]*)\\)`, 'm'))[1].split(/\s+/).filter(Boolean);
  const exports = list('exports');
  // build.sh's rule for its sources: every c/*.c but the allocator of the clang link and the debug build's assert.
  const sources = readdirSync(`${root}c`).filter((f) => f.endsWith('.c') && f !== 'attention-alloc.c' && f !== 'debug-assert.c').map((f) => `c/${f}`);
  execFileSync('emcc', ['-std=c11', '-O2', '-DNDEBUG', '-msimd128', '--no-entry', '-sSTANDALONE_WASM=1', `-sEXPORTED_FUNCTIONS=${exports.map((e) => `_${e}`).join(',')}`,
    '-sALLOW_MEMORY_GROWTH=1', '-sINITIAL_MEMORY=2MB', '-sMAXIMUM_MEMORY=16MB', '-sTOTAL_STACK=256KB', '-sABORTING_MALLOC=0',
    ...sources, ...readdirSync(`${root}c/kernels`).filter((f) => f.endsWith('-wasmsimd.c')).map((f) => `c/kernels/${f}`), '-o', wasm], { cwd: root });
  const attn = await loadAttention({ wasm: readFileSync(wasm) });
  const small = attn.attention([[1, 2]], [[3, 4]], [[5, 6]]).output.toArray();
  const x = { rows: 1200, cols: 2, data: new Float32Array(2400).fill(0.5) };
  rejects(() => attn.attention(x, x, x, { steps: true }), RangeError, /could not grow/);
  rejects(() => attn.matmul({ rows: 2100, cols: 2100, data: new Float32Array(2100 * 2100) }, { rows: 2100, cols: 2, data: new Float32Array(4200) }),
    RangeError, /matmul needs .* of wasm memory/);
  assert.equal(attn.attention([[1, 2]], [[3, 4]], [[5, 6]]).output.toArray(), small);
  // A KV cache too big for the memory: RangeError, and what it took is freed.
  rejects(() => attn.kvCache({ kvHeads: 4, dk: 64, capacity: 8192 }), RangeError, /kvCache: a capacity of 8192 needs .* could not grow/);
  const fits = attn.kvCache({ kvHeads: 4, dk: 64, capacity: 4096 }); // 8 MiB: fits only if the failed one was freed
  fits.append(new Float32Array(4 * 64).fill(1), new Float32Array(4 * 64).fill(2));
  assert.equal(Array.from(fits.attend(new Float32Array(4 * 64))).slice(0, 2), [2, 2]);
  fits.dispose();
  const ex = computeExample(attn, normalizeConfig());
  assert.is(ex.heads[0].weights.get(1, 2).toFixed(4), '0.0806');
});

test('without steps, working memory grows with n * d, not n^2: n = 16384 fits in 32 MiB', async () => {
  const attn = await loadAttention();
  const n = 16384, d = 8; // (n, n) float32 steps would be 1 GiB
  const rng = new NumpyRandom(3);
  const q = Float32Array.from(rng.randn(n * d)), k = Float32Array.from(rng.randn(n * d)), v = Float32Array.from(rng.randn(n * d));
  const out = attn.sdpa(q, k, v, { nq: n, nk: n, dk: d, dv: d, causal: true });
  assert.ok(attn.memory.buffer.byteLength <= 32 * 2 ** 20, `${attn.memory.buffer.byteLength} bytes`);
  assert.ok(out.every(Number.isFinite));
  // Row 0 sees only key 0 (causal): its output is v_0.
  assert.equal(Array.from(out.subarray(0, d)), Array.from(v.subarray(0, d)));
});

function inWorker(source) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, type: 'module' });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

test('instances in Node worker threads are independent and agree with the main thread', async () => {
  const url = new URL('../../web/attention.js', import.meta.url).href;
  const example = new URL('../../web/worked/computation.js', import.meta.url).href;
  const source = (seed) => `
    import { parentPort } from 'node:worker_threads';
    import { loadAttention } from ${JSON.stringify(url)};
    import { computeExample, normalizeConfig } from ${JSON.stringify(example)};
    const attn = await loadAttention();
    const ex = computeExample(attn, normalizeConfig({ seed: ${seed} }));
    attn.dispose();
    parentPort.postMessage(Array.from(ex.heads[0].output.data));`;
  const [a, b] = await Promise.all([inWorker(source(7)), inWorker(source(8))]);
  const attn = await loadAttention();
  assert.equal(a, Array.from(computeExample(attn, normalizeConfig({ seed: 7 })).heads[0].output.data));
  assert.equal(b, Array.from(computeExample(attn, normalizeConfig({ seed: 8 })).heads[0].output.data));
  assert.not.equal(a, b);
});

test.run();
