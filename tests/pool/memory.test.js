// The pool's memory paths (docs/pool.md#memory): the memory option chooses
// shared memory or copies and is honoured; forcing 'shared' where it cannot
// be rejects saying why; many calls do not add memory on either path (the
// copy path's staging buffers come back and are reused, the shared path's
// arenas are freed or reused); a failed part does not leave a later call
// reading memory it still writes; a cross-origin isolated page in Chromium
// shares memory with the same bits. The same bits as one instance on both
// paths for every way of splitting are in pool.test.js.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { start } from '../browser.js';
import { rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);

function sameBits(actual, expected, what) {
  assert.is(actual.length, expected.length, `${what}: length`);
  const at = expected.findIndex((x, i) => !Object.is(x, actual[i]));
  assert.is(at, -1, `${what}: element ${at}: pool ${actual[at]}, single instance ${expected[at]}`);
}

function problem({ heads = 4, kvHeads = heads, n = 256, d = 64, ...extra } = {}) {
  const q = draw(heads * n * d, 1), k = draw(kvHeads * n * d, 2), v = draw(kvHeads * n * d, 3);
  return { q, k, v, options: { heads, kvHeads, nq: n, nk: n, dk: d, dv: d, ...extra } };
}

const choice = suite('memory option');

choice('auto shares memory in Node; shared and copy are honoured; every path gives the same bits', async () => {
  const attn = await loadAttention();
  const { q, k, v, options } = problem({ heads: 8, kvHeads: 2, causal: true, mask: Uint8Array.from(draw(256 * 256, 4), (x) => (x > -1.5 ? 1 : 0)) });
  const want = attn.sdpa(q, k, v, options);
  for (const [memory, expected] of [[undefined, 'shared'], ['auto', 'shared'], ['shared', 'shared'], ['copy', 'copy']]) {
    const pool = await createAttentionPool({ threads: 2, memory });
    try {
      assert.is(pool.memory, expected, `memory ${memory}`);
      const before = pool.stats.split;
      sameBits(await pool.sdpa(q, k, v, options), want, `memory ${memory}`);
      assert.is(pool.stats.split - before, 1, 'split');
    } finally {
      pool.dispose();
    }
  }
  attn.dispose();
});

choice('forcing shared where it cannot be rejects saying why; auto copies there', async () => {
  await rejects(createAttentionPool({ memory: 'yes' }), TypeError, /memory must be one of 'auto', 'shared', 'copy', got the string "yes"/);
  await rejects(createAttentionPool({ threads: 1, memory: 'shared', simd: false }), Error,
    /memory 'shared' cannot be used here: there is no threads build of the scalar module/);
  await rejects(createAttentionPool({ threads: 1, memory: 'shared', wasm: new URL('../../dist/attention-simd.wasm', import.meta.url) }), Error,
    /memory 'shared' cannot be used here: it runs the package's threads builds, and a wasm option names another module/);
  const copy = await createAttentionPool({ threads: 1, simd: false });
  assert.is(copy.memory, 'copy', 'the scalar build copies');
  copy.dispose();
  // A page that is not cross-origin isolated, and an engine without SharedArrayBuffer.
  const SAB = globalThis.SharedArrayBuffer;
  try {
    globalThis.crossOriginIsolated = false;
    await rejects(createAttentionPool({ threads: 1, memory: 'shared' }), Error, /memory 'shared' cannot be used here: this page is not cross-origin isolated/);
    delete globalThis.crossOriginIsolated;
    delete globalThis.SharedArrayBuffer;
    await rejects(createAttentionPool({ threads: 1, memory: 'shared' }), Error,
      /memory 'shared' cannot be used here: SharedArrayBuffer is not available \(a page has it only when cross-origin isolated: served with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp\); memory 'auto' \(the default\) falls back to copies/);
    const auto = await createAttentionPool({ threads: 2 });
    assert.is(auto.memory, 'copy');
    const { q, k, v, options } = problem();
    const attn = await loadAttention();
    sameBits(await auto.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), 'auto without SharedArrayBuffer');
    auto.dispose();
    attn.dispose();
  } finally {
    globalThis.SharedArrayBuffer = SAB;
    delete globalThis.crossOriginIsolated;
  }
});

choice.run();

const leaks = suite('many calls do not add memory');

for (const memory of ['shared', 'copy']) {
  leaks(`${memory}: 300 split calls, rows and head groups, the same bits each time`, async () => {
    const attn = await loadAttention();
    const pool = await createAttentionPool({ threads: 2, memory });
    try {
      // Head groups with a mask; rows of one head (k and v shared by the parts).
      const cases = [problem({ causal: true, mask: Uint8Array.from(draw(256 * 256, 4), (x) => (x > -1.5 ? 1 : 0)) }), problem({ heads: 1, n: 1024 })];
      const wants = cases.map(({ q, k, v, options }) => attn.sdpa(q, k, v, options));
      const outs = wants.map((w) => new Float32Array(w.length));
      const run = async (i) => {
        const { q, k, v, options } = cases[i % 2];
        outs[i % 2].fill(NaN);
        assert.is(await pool.sdpa(q, k, v, { ...options, out: outs[i % 2] }), outs[i % 2], 'the result is the caller\'s out');
      };
      for (let i = 0; i < 20; i++) await run(i);
      globalThis.gc?.();
      const base = process.memoryUsage();
      const before = pool.stats.split;
      for (let i = 0; i < 300; i++) {
        await run(i);
        if (i % 50 < 2) sameBits(outs[i % 2], wants[i % 2], `call ${i}`);
      }
      assert.is(pool.stats.split - before, 300, 'every call was split');
      globalThis.gc?.();
      const now = process.memoryUsage();
      // A call's inputs, output and scratch are about 1.5 MB: 300 calls that each kept theirs would add 450 MB.
      const grown = Math.max(now.arrayBuffers - base.arrayBuffers, now.rss - base.rss);
      assert.ok(grown < 64e6, `memory grew by ${(grown / 1e6).toFixed(1)} MB over 300 calls`);
    } finally {
      pool.dispose();
      attn.dispose();
    }
  });
}

leaks('an out that shares a buffer with q (one head earlier): the inputs as they were when the call was made, on both paths', async () => {
  const attn = await loadAttention();
  const heads = 12, n = 512, d = 64, size = heads * n * d, head = n * d;
  const { k, v, options } = problem({ heads, n, d });
  const want = attn.sdpa(draw(size, 1), k, v, options);
  for (const memory of ['shared', 'copy']) {
    const pool = await createAttentionPool({ threads: 2, memory });
    try {
      const buffer = new Float32Array(size + head);
      const q = buffer.subarray(head), out = buffer.subarray(0, size);
      q.set(draw(size, 1));
      assert.is(await pool.sdpa(q, k, v, { ...options, out }), out);
      sameBits(out, want, `${memory}: out one head before q`);
    } finally {
      pool.dispose();
    }
  }
  attn.dispose();
});

leaks('shared: calls made at once each get their own memory, the same bits', async () => {
  const attn = await loadAttention();
  const pool = await createAttentionPool({ threads: 2, memory: 'shared' });
  try {
    const cases = [problem(), problem({ heads: 1, n: 1024, causal: true }), problem({ heads: 6, kvHeads: 3, rope: { theta: 10000 } })];
    const wants = cases.map(({ q, k, v, options }) => attn.sdpa(q, k, v, options));
    // The inputs are read when the call is made: changing them afterwards changes nothing.
    const results = cases.map(({ q, k, v, options }) => pool.sdpa(q, k, v, options));
    for (const c of cases) c.q.fill(0);
    const got = await Promise.all(results);
    got.forEach((r, i) => sameBits(r, wants[i], `call ${i}`));
  } finally {
    pool.dispose();
    attn.dispose();
  }
});

leaks('shared: a part that fails rejects its call, and later calls still get the same bits', async () => {
  const attn = await loadAttention();
  // Only workers take part (see tests/pool/pool.test.js' dying worker), so the crashing one holds a block.
  const pool = await createAttentionPool({ threads: 2, memory: 'shared', callerShare: false, worker: new URL('../pages/pool-crash-worker.js', import.meta.url) });
  try {
    const deadly = problem({ n: 512, d: 13 });
    await rejects(pool.sdpa(deadly.q, deadly.k, deadly.v, deadly.options), Error, /a worker stopped during this call \(exited with code 3\)/);
    const { q, k, v, options } = problem({ heads: 1, n: 1024 });
    for (let i = 0; i < 3; i++) sameBits(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), `call ${i} after`);
  } finally {
    pool.dispose();
    attn.dispose();
  }
});

leaks.run();

const arrays = suite('pool.array: inputs and outputs in the pool\'s memory');

// The shared memory's size now: a new view's buffer is the memory's current one.
const memoryBytes = (pool) => pool.array(0).buffer.byteLength;

// x's values in an array of pool.array's (filled in place: a typed array's map makes an ordinary one).
function inPool(pool, x) {
  const a = pool.array(x.length);
  a.set(x);
  assert.is(a.buffer instanceof SharedArrayBuffer, pool.memory === 'shared', 'in the pool\'s memory');
  return a;
}

arrays('shared: q, k, v and out in place give the same bits, and the call copies none of them', async () => {
  const attn = await loadAttention();
  // Tensors of 6 MB: a call's structs and scratch take much less.
  const heads = 48, n = 512, d = 64, size = heads * n * d;
  const { q, k, v, options } = problem({ heads, n, d, causal: true });
  const want = attn.sdpa(q, k, v, options);
  // A call of ordinary arrays lays out a copy of all four; one of pool arrays only its structs and scratch.
  const grew = {};
  for (const placed of [false, true]) {
    const pool = await createAttentionPool({ threads: 2, memory: 'shared' });
    try {
      const args = placed ? [q, k, v].map((x) => inPool(pool, x)) : [q, k, v];
      const out = placed ? pool.array(size) : new Float32Array(size);
      const before = memoryBytes(pool), split = pool.stats.split;
      for (let i = 0; i < 3; i++) {
        out.fill(NaN);
        assert.is(await pool.sdpa(...args, { ...options, out }), out, 'the result is out');
        sameBits(out, want, `in place ${placed}, call ${i}`);
      }
      assert.is(pool.stats.split - split, 3, 'split');
      grew[placed] = memoryBytes(pool) - before;
    } finally {
      pool.dispose();
    }
  }
  // (Free memory the pool had already may take part of the copies.)
  assert.ok(grew[false] >= 3 * size * 4, `ordinary arrays grew the memory by ${grew[false]} bytes`);
  assert.ok(grew[true] < size * 4, `pool arrays grew the memory by ${grew[true]} bytes, as much as a copy of one tensor`);
  attn.dispose();
});

arrays('shared: subarrays of one array, an out that is q or overlaps k, a bias, rows of one head: the same bits', async () => {
  const attn = await loadAttention();
  const pool = await createAttentionPool({ threads: 2, memory: 'shared' });
  try {
    const cases = [
      problem({ heads: 8, kvHeads: 2, n: 256, causal: true, bias: draw(256 * 256, 5) }),
      problem({ heads: 1, n: 1024, window: [100, 0] }),
      problem({ heads: 4, n: 384, d: 32, rope: { theta: 10000 } }),
    ];
    for (const [c, { q, k, v, options }] of cases.entries()) {
      const want = attn.sdpa(q, k, v, options);
      // Room after v for an out that starts in q.
      const one = pool.array(q.length + k.length + v.length + want.length);
      const [qs, ks, vs] = [[0, q], [q.length, k], [q.length + k.length, v]].map(([at, x]) => {
        const view = one.subarray(at, at + x.length);
        view.set(x);
        return view;
      });
      const bias = options.bias ? pool.array(options.bias.length) : null;
      bias?.set(options.bias);
      const o = bias ? { ...options, bias } : options;
      sameBits(await pool.sdpa(qs, ks, vs, o), want, `case ${c}: a new output`);
      const into = pool.array(want.length);
      assert.is(await pool.sdpa(qs, ks, vs, { ...o, out: into }), into);
      sameBits(into, want, `case ${c}: out in place`);
      // Overlapping an input: every tensor copied, as ordinary ones are (no block reads rows another wrote).
      const overlap = one.subarray(q.length - 3, q.length - 3 + want.length);
      assert.is(await pool.sdpa(qs, ks, vs, { ...o, out: overlap }), overlap);
      sameBits(overlap, want, `case ${c}: out overlapping q and k`);
      qs.set(q); ks.set(k); vs.set(v);
      assert.is(await pool.sdpa(qs, ks, vs, { ...o, out: qs }), qs);
      sameBits(qs, want, `case ${c}: out is q`);
    }
  } finally {
    pool.dispose();
    attn.dispose();
  }
});

arrays('pool.array: zeros; ordinary arrays on copies; bad lengths and a disposed pool throw; calls not split and KV caches take them too', async () => {
  const attn = await loadAttention();
  for (const memory of ['shared', 'copy']) {
    const pool = await createAttentionPool({ threads: 2, memory });
    try {
      const a = pool.array(1000);
      assert.ok(a instanceof Float32Array && a.length === 1000 && a.every((x) => x === 0), `${memory}: zeros`);
      assert.is(a.buffer instanceof SharedArrayBuffer, memory === 'shared', `${memory}: in the shared memory`);
      assert.is(pool.array(0).length, 0);
      assert.throws(() => pool.array('8'), (e) => e instanceof TypeError && /pool.array: length must be an integer from 0 to 1073741823, got the string "8"/.test(e.message));
      assert.throws(() => pool.array(8n), (e) => e instanceof TypeError && /pool.array: length must be an integer from 0 to 1073741823, got the bigint 8n/.test(e.message));
      for (const bad of [-1, 1.5, NaN, 2 ** 30]) {
        assert.throws(() => pool.array(bad), (e) => e instanceof RangeError && /pool.array: length must be an integer from 0 to 1073741823/.test(e.message), `${bad}`);
      }
      if (memory === 'shared') {
        assert.throws(() => pool.array(2 ** 30 - 1), (e) => e instanceof RangeError && /^pool.array: length 1073741823 needs 4294967292 bytes of shared memory, and it could not grow that far$/.test(e.message));
      }
      // Too small to split, one worker's whole call, and a kv cache: the arrays are ordinary inputs there.
      for (const { q, k, v, options } of [problem({ heads: 1, n: 16, d: 8 }), problem({ heads: 2, n: 256, steps: true })]) {
        const [qa, ka, va] = [q, k, v].map((x) => inPool(pool, x));
        const want = attn.sdpa(q, k, v, options), got = await pool.sdpa(qa, ka, va, options);
        sameBits(got.output ?? got, want.output ?? want, `${memory}: not split`);
      }
      // A KV cache on the calling thread alone (8 tokens) and split over the threads (5000), out a pool array too.
      for (const t of [8, 5000]) {
        const cache = await pool.kvCache({ kvHeads: 2, dk: 16, capacity: t });
        const [kq, kk, kv] = [4 * 16, 2 * t * 16, 2 * t * 16].map((n, s) => inPool(pool, Float32Array.from({ length: n }, (_, i) => Math.sin(i + s))));
        await cache.append(kk, kv);
        const out = pool.array(4 * 16);
        const one = attn.kvCache({ kvHeads: 2, dk: 16, capacity: t });
        one.append(kk, kv);
        const want = one.attend(kq, { heads: 4 });
        // out made, and given first, where the memory has its size now.
        for (const got of [await cache.attend(kq, { heads: 4, out }), (await cache.attend(kq, { heads: 4, out, stats: true })).output, await cache.attend(kq, { heads: 4 })]) {
          assert.ok(got.every((x, i) => Math.abs(x - want[i]) < 1e-5), `${memory}: a kv cache of ${t} tokens`);
        }
        assert.is(await cache.attend(kq, { heads: 4, out }), out, `${memory}, ${t} tokens: the result is out`);
        cache.dispose();
        one.dispose();
      }
    } finally {
      pool.dispose();
    }
    assert.throws(() => pool.array(4), /this pool was disposed/);
  }
  attn.dispose();
});

arrays.run();

const isolated = suite('pool in Chromium on a cross-origin isolated page');
isolated.before(async (ctx) => {
  ctx.env = await start({ isolate: true });
});
isolated.after(async ({ env }) => env.close());
isolated('module Workers share the memory: same bits as the page instance, forcing shared works', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/pool.html`);
  await page.waitForFunction(() => document.getElementById('result').textContent !== 'running', null, { timeout: 60000 });
  const result = JSON.parse(await page.textContent('#result'));
  assert.equal(result.failed, undefined);
  assert.is(result.isolated, true);
  assert.is(result.memory, 'shared');
  assert.is(result.forced, 'shared');
  assert.is(result.isa, 'relaxed-simd');
  assert.equal(result.checks, { heads: true, rows: true, 'causal rows': true });
  assert.is(result.here, 0, 'the page\'s main thread only waits');
  assert.ok(result.parts >= 6, `parts ${result.parts}`);
  assert.match(result.error, /^RangeError: sdpa: scale must be finite/);
  assert.equal(result.sharing, { same: true, here: 5, memory: 'shared' }, 'the main thread computing its share');
  assert.equal(result.kv, { close: true, memory: 'shared' }, 'a pool KV cache on the shared memory');
  assert.equal(result.arrays, { waiting: { same: true, shared: true }, sharing: { same: true, shared: true } }, 'pool.array in place');
  assert.equal(problems, []);
});
isolated.run();
