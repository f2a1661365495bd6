// The debug build (./build.sh debug: the kernels' asserts compiled in, a
// failed one traps) on every fixture case, so the SIMD kernels' asserts run
// somewhere: both builds, fused, decode and step paths, a KV cache, and the
// backward pass.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention, NumpyRandom } from '../../web/attention.js';
import { RTOL_REFERENCE, assertClose, caseInputs, optionCaseInputs, optionCaseOptions, readJSON } from '../helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = ['dist/debug/attention-simd.wasm', 'dist/debug/attention-scalar.wasm'];
const mtime = (path) => {
  try {
    return statSync(`${root}${path}`).mtimeMs;
  } catch {
    return -Infinity;
  }
};
// Every C file the build reads: c/ and c/kernels/.
const sources = ['build.sh', ...readdirSync(`${root}c`).filter((f) => /\.[ch]$/.test(f)).map((f) => `c/${f}`),
  ...readdirSync(`${root}c/kernels`).map((f) => `c/kernels/${f}`)];
if (Math.min(...files.map(mtime)) < Math.max(...sources.map(mtime))) {
  const r = spawnSync(`${root}build.sh`, ['debug'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`./build.sh debug failed:\n${r.stderr}`);
}

const { cases } = readJSON('./fixtures/attention.json');
const { cases: optionCases } = readJSON('./fixtures/options.json');
const { cases: backwardCases } = readJSON('./fixtures/backward.json');
// tests/c/backward.test.js's bound against numpy's float64 gradients.
const RTOL_BACKWARD = 5e-6;

/** A backward.json case's inputs and options, drawn as make_fixtures.py's backward_case draws them. */
function backwardCase(c) {
  const rng = new NumpyRandom(c.seed);
  const inputs = caseInputs(c, rng);
  inputs.dout = Float32Array.from(rng.randn(c.batch, c.heads, c.nq, c.dv));
  const options = {
    batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv,
    causal: c.causal, mask: inputs.mask, bias: inputs.bias, window: c.window, queryOffset: c.queryOffset,
    ...(c.softcap > 0 ? { softcap: c.softcap } : {}), ...(c.scale === null ? {} : { scale: c.scale }),
  };
  return { inputs, options };
}

for (const file of files) {
  const s = suite(`debug build ${file}`);
  s.before(async (ctx) => {
    ctx.bytes = readFileSync(`${root}${file}`);
    ctx.attn = await loadAttention({ wasm: ctx.bytes });
  });
  s('it is the debug build (c/debug-assert.c linked in)', ({ bytes }) => {
    const names = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
    assert.ok(names.includes('attn__debug_asserts'), `exports: ${names.join(', ')}`);
  });
  s('every attention.json case on the output and step paths', ({ attn }) => {
    for (const c of cases) {
      const inputs = caseInputs(c);
      const o = {
        batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, nq: c.nq, nk: c.nk, dk: c.dk, dv: c.dv, causal: c.causal,
        mask: inputs.mask, bias: inputs.bias, ...(c.scale === null ? {} : { scale: c.scale }),
      };
      assertClose(attn.sdpa(inputs.q, inputs.k, inputs.v, o), c.output, { rtol: RTOL_REFERENCE, what: c.name });
      assertClose(attn.sdpa(inputs.q, inputs.k, inputs.v, { ...o, steps: true }).output, c.output, { rtol: RTOL_REFERENCE, what: `${c.name} steps` });
    }
  });
  s('every options.json case, bhsd and step path', ({ attn }) => {
    for (const c of optionCases) {
      const inputs = optionCaseInputs(c);
      assertClose(attn.sdpa(inputs.q, inputs.k, inputs.v, optionCaseOptions(c, inputs)), c.output, { rtol: RTOL_REFERENCE, what: c.name });
      const r = attn.sdpa(inputs.q, inputs.k, inputs.v, optionCaseOptions(c, inputs, { steps: true, stats: true }));
      assertClose(r.output, c.output, { rtol: RTOL_REFERENCE, what: `${c.name} steps` });
    }
  });
  s('every backward.json case, with and without the forward\'s output and lse', ({ attn }) => {
    assert.ok(backwardCases.length > 0);
    for (const c of backwardCases) {
      const { inputs, options } = backwardCase(c);
      const { q, k, v, dout } = inputs;
      const { output, lse } = attn.sdpa(q, k, v, { ...options, stats: true });
      for (const [how, g] of [['recomputed', attn.sdpaBackward(q, k, v, null, dout, options)],
        ['given', attn.sdpaBackward(q, k, v, output, dout, { ...options, lse })]]) {
        for (const key of ['dq', 'dk', 'dv', ...(c.bias ? ['dbias'] : [])]) {
          assertClose(g[key], c.grads[key], { rtol: RTOL_BACKWARD, what: `${c.name} ${key} (output and lse ${how})` });
        }
      }
    }
  });
  s('grouped-query decoding from a KV cache', ({ attn }) => {
    const [heads, kvHeads, n, d] = [12, 4, 70, 16];
    const x = Float32Array.from({ length: kvHeads * n * d }, (_, i) => Math.sin(i));
    const q = Float32Array.from({ length: heads * d }, (_, i) => Math.cos(i));
    const cache = attn.kvCache({ kvHeads, dk: d, capacity: n });
    cache.append(x, x);
    const want = attn.sdpa(q, x, x, { heads, kvHeads, nq: 1, nk: n, dk: d, dv: d, causal: true, queryOffset: n - 1 });
    assert.equal(Array.from(cache.attend(q, { heads, causal: true })), Array.from(want));
    cache.dispose();
  });
  s.run();
}
