// The worker pool (web/pool.js): the same bits as one instance of the same
// module for every way it splits a call, on all three builds; the same
// errors as the synchronous API, also for options a worker cannot receive
// (a function, a Proxy), and no worker left busy; a dead worker is replaced;
// module Workers in Chromium on an ordinary page. Node 20 needs a flag for
// relaxed SIMD: without it this file runs itself again with the flag.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';
import { start } from '../browser.js';
import { BUILDS, rejects, runWithRelaxedSimd } from '../helpers.js';

runWithRelaxedSimd(import.meta.url);

// Deterministic inputs in [-2, 2].
const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);

function sdpaCase({ name: _, parts: __, batch = 1, heads = 1, kvHeads = heads, nq, nk, d, dk = d, dv = d, mask = false, bias = false, ...extra }) {
  const q = draw(batch * heads * nq * dk, 1), k = draw(batch * kvHeads * nk * dk, 2), v = draw(batch * kvHeads * nk * dv, 3);
  const options = { batch, heads, kvHeads, nq, nk, dk, dv, ...extra };
  if (mask) options.mask = Uint8Array.from(draw(nq * nk, 4), (x) => (x > -1.5 ? 1 : 0));
  if (bias) options.bias = draw(nq * nk, 5);
  return { q, k, v, options };
}

function sameBits(actual, expected, what) {
  assert.is(actual.length, expected.length, `${what}: length`);
  const at = expected.findIndex((x, i) => !Object.is(x, actual[i]));
  assert.is(at, -1, `${what}: element ${at}: pool ${actual[at]}, single instance ${expected[at]}`);
}

// Shapes that take each way of splitting (work above the pool's threshold).
// parts: how many parts the pool of 3 threads cuts it into (1: whole, on a worker;
// more: the calling thread computes the last one, workers the others).
const SPLITS = [
  { name: '12 heads: head groups', parts: 3, heads: 12, nq: 256, nk: 256, d: 64 },
  { name: 'one head: query blocks', parts: 3, nq: 1030, nk: 1024, d: 64 },
  { name: 'GQA heads=8 kv=2, fewer groups than threads: query blocks', parts: 6, heads: 8, kvHeads: 2, nq: 301, nk: 300, d: 32 },
  { name: 'batch 2 x 3 heads causal with mask and bias', parts: 3, batch: 2, heads: 3, nq: 300, nk: 257, d: 32, causal: true, mask: true, bias: true },
  { name: 'causal one head: query blocks through queryOffset', parts: 3, nq: 1024, nk: 1024, d: 64, causal: true },
  { name: 'causal nq < nk with queryOffset', parts: 3, nq: 517, nk: 900, d: 32, causal: true, queryOffset: 383 },
  { name: 'window and softcap: query blocks', parts: 3, nq: 800, nk: 800, d: 64, window: [64, 16], softcap: 20 },
  { name: 'grouped-query decoding nq=1', parts: 3, heads: 16, kvHeads: 4, nq: 1, nk: 8192, d: 64 },
  { name: "layout 'bshd' (not split: one worker)", parts: 1, heads: 2, nq: 512, nk: 512, d: 64, layout: 'bshd' },
  // Each part gets the rope and the sinks and ALiBi slopes of its own heads;
  // batch 2 puts kv head 0 of batch 1 after kv head 1 of batch 0 in a part.
  {
    name: 'batch 2, GQA 6 over 3, causal, rope, standard alibi, sinks: head groups',
    parts: 3, batch: 2, heads: 6, kvHeads: 3, nq: 200, nk: 200, d: 32, causal: true,
    rope: { theta: 500000, dims: 16 }, alibi: true, sinks: Float32Array.of(0.5, -1, 2, 0, 1.5, -0.5),
  },
  {
    name: 'one head, rope interleaved, alibi slope, sink: query blocks through queryOffset',
    parts: 3, nq: 1030, nk: 1100, d: 64, causal: true, queryOffset: 70,
    rope: { interleaved: true }, alibi: Float32Array.of(0.25), sinks: Float32Array.of(3),
  },
];

// The memory paths of each build (docs/pool.md#memory): the scalar build has no threads module.
const MEMORIES = (isa) => (isa === 'scalar' ? ['copy'] : ['shared', 'copy']);

for (const isa of BUILDS) for (const memory of MEMORIES(isa)) {
  const s = suite(`pool on the ${isa} build, ${memory} memory, against one instance`);
  const loadOptions = { 'relaxed-simd': {}, simd128: { deterministic: true }, scalar: { simd: false } }[isa];
  s.before(async (ctx) => {
    ctx.pool = await createAttentionPool({ threads: 3, memory, ...loadOptions });
    ctx.attn = await loadAttention(loadOptions);
    assert.is(ctx.pool.isa, isa);
    assert.is(ctx.pool.memory, memory);
    assert.is(ctx.attn.isa, isa);
  });
  s.after(({ pool }) => pool.dispose());
  for (const c of isa === 'scalar' ? SPLITS.slice(0, 5) : SPLITS) {
    s(`${c.name}: ${c.parts} part${c.parts > 1 ? 's' : ''}, same bits`, async ({ pool, attn }) => {
      const { q, k, v, options } = sdpaCase(c);
      const before = pool.stats;
      sameBits(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), c.name);
      const after = pool.stats;
      // On the shared memory the parts are the threads taking part (3 here), which claim the call's blocks between them.
      assert.is(after.parts - before.parts, memory === 'shared' ? Math.min(3, c.parts) : c.parts, 'parts');
      // A split call's last part runs on the calling thread; a whole call goes to a worker.
      assert.is(after.here - before.here, c.parts > 1 ? 1 : 0, 'parts computed by the caller');
      assert.is(after.local, before.local, 'not run whole on the calling thread');
    });
  }
  s('out is filled and returned; stats come back as objects', async ({ pool, attn }) => {
    const { q, k, v, options } = sdpaCase({ heads: 4, nq: 256, nk: 256, d: 64 });
    const out = new Float32Array(4 * 256 * 64 + 3).fill(7);
    const r = await pool.sdpa(q, k, v, { ...options, out });
    assert.is(r, out);
    sameBits(out.subarray(0, 4 * 256 * 64), attn.sdpa(q, k, v, options), 'out');
    assert.equal(Array.from(out.subarray(-3)), [7, 7, 7]);
    const stats = await pool.sdpa(q, k, v, { ...options, stats: true });
    const want = attn.sdpa(q, k, v, { ...options, stats: true });
    sameBits(stats.output, want.output, 'stats output');
    sameBits(stats.lse, want.lse, 'stats lse');
  });
  s('small calls run on the calling thread', async ({ pool, attn }) => {
    const { q, k, v, options } = sdpaCase({ nq: 4, nk: 4, d: 3 });
    const before = pool.stats;
    sameBits(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), 'n=4');
    assert.equal(pool.stats, { ...before, local: before.local + 1 });
  });
  s('multiHeadAttention: same bits, split over head groups (with wo, GQA, rope, alibi and sinks) and small', async ({ pool, attn }) => {
    const m = (rows, cols, seed) => ({ rows, cols, data: draw(rows * cols, seed).map((x) => x / 8) });
    const positions = { rope: true, alibi: true, sinks: Float32Array.from({ length: 6 }, (_, h) => h - 2) };
    for (const [n, dModel, heads, kvHeads, dk, wo, extra] of [[256, 256, 8, 8, 32, true], [400, 96, 6, 2, 16, false], [5, 8, 2, 1, 4, true], [400, 96, 6, 3, 16, true, positions]]) {
      const options = { wq: m(dModel, heads * dk, 1), wk: m(dModel, kvHeads * dk, 2), wv: m(dModel, kvHeads * dk, 3), heads, kvHeads, causal: true, ...extra };
      if (wo) options.wo = m(heads * dk, dModel, 4);
      const x = m(n, dModel, 5);
      const before = pool.stats;
      const r = await pool.multiHeadAttention(x, options);
      const want = attn.multiHeadAttention(x, options);
      // The two large calls are split over kv-head groups (3 threads: min(3, kvHeads) parts).
      assert.is(pool.stats.parts - before.parts, n === 5 ? 0 : Math.min(3, kvHeads), `mha n=${n} parts`);
      assert.is(pool.stats.here - before.here, n === 5 ? 0 : 1, `mha n=${n} parts computed by the caller`);
      assert.equal([r.output.rows, r.output.cols], [want.output.rows, want.output.cols]);
      sameBits(r.output.data, want.output.data, `mha n=${n} heads=${heads}`);
    }
  });
  s.run();
}

// Shapes where a split could hand a block to another kernel than one
// instance runs for the whole call (c/attention.c: decode for fewer than 4
// query rows or n_q n_k d_k <= 2048, one decode call for a group's heads
// when n_q is 1; fused otherwise), all large enough to leave the calling thread.
const KERNEL_SWEEP = [
  { name: 'causal, queryOffset -120: a 2-row tail after 128 rows', heads: 16, kvHeads: 1, nq: 130, nk: 64, d: 64, causal: true, queryOffset: -120 },
  { name: 'decode nq=1, GQA 16 over 4', heads: 16, kvHeads: 4, nq: 1, nk: 8192, d: 64 },
  { name: 'decode nq=2', heads: 16, kvHeads: 4, nq: 2, nk: 8192, d: 64 },
  { name: 'decode nq=3, one kv head', heads: 16, kvHeads: 1, nq: 3, nk: 8192, d: 64 },
  { name: 'tail of 1 row', nq: 129, nk: 1024, d: 64 },
  { name: 'tail of 3 rows', nq: 131, nk: 1024, d: 64, causal: true },
  { name: 'causal, queryOffset -127: a 1-row tail of tiny decode rows, 16 heads over 1', heads: 16, kvHeads: 1, nq: 129, nk: 3, dk: 4, dv: 2800, causal: true, queryOffset: -127 },
  { name: 'tiny problem (n_q n_k d_k = 2048): decode on every block', nq: 1024, nk: 2, dk: 1, dv: 8192 },
  { name: 'causal, queryOffset -1000, mask and bias', nq: 1030, nk: 1024, d: 32, causal: true, queryOffset: -1000, mask: true, bias: true },
  { name: 'GQA 8 over 2, causal, odd rows', heads: 8, kvHeads: 2, nq: 301, nk: 300, d: 32, causal: true, queryOffset: -250 },
  { name: 'batch 2, 4 heads over 1', batch: 2, heads: 4, kvHeads: 1, nq: 259, nk: 256, d: 64, causal: true, queryOffset: -200 },
  { name: 'window [3, 0] with softcap', nq: 1027, nk: 1024, d: 32, window: [3, 0], softcap: 30 },
  { name: 'window [-1, 2], queryOffset 5', heads: 2, kvHeads: 1, nq: 517, nk: 530, d: 32, window: [-1, 2], queryOffset: 5 },
  { name: 'kvLengths (whole on one worker)', batch: 2, heads: 4, nq: 256, nk: 512, d: 64, kvLengths: Int32Array.of(300, 2) },
];

for (const isa of BUILDS) for (const memory of MEMORIES(isa)) {
  const s = suite(`pool on the ${isa} build, ${memory} memory: the kernels one instance runs`);
  const loadOptions = { 'relaxed-simd': {}, simd128: { deterministic: true }, scalar: { simd: false } }[isa];
  s.before(async (ctx) => {
    ctx.pool = await createAttentionPool({ threads: 3, memory, ...loadOptions });
    ctx.attn = await loadAttention(loadOptions);
    assert.is(ctx.pool.isa, isa);
  });
  s.after(({ pool, attn }) => {
    pool.dispose();
    attn.dispose();
  });
  s(`${KERNEL_SWEEP.length} shapes: the same bits as one instance, each off the calling thread`, async ({ pool, attn }) => {
    for (const c of KERNEL_SWEEP) {
      const { q, k, v, options } = sdpaCase(c);
      const before = pool.stats;
      sameBits(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), c.name);
      assert.is(pool.stats.local, before.local, `${c.name}: not run whole on the calling thread`);
    }
  });
  s.run();
}

// The error attn.sdpa (or another sync call) throws, or null.
function syncError(fn) {
  try {
    fn();
    return null;
  } catch (err) {
    return err;
  }
}

// Rejects when `promise` has not settled after `ms`: a call that waits for a
// worker left busy would otherwise hang the test instead of failing it.
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const unposted = suite('pool options that cannot be posted to a worker');
unposted.before(async (ctx) => {
  ctx.pool = await createAttentionPool({ threads: 2, callerShare: false });
  ctx.attn = await loadAttention();
  ctx.big = sdpaCase({ heads: 4, nq: 512, nk: 512, d: 64 });
});
unposted.after(({ pool, attn }) => {
  pool.dispose();
  attn.dispose();
});
unposted('a function option and a Proxy mask shape: the TypeError or RangeError attn.sdpa throws', async ({ pool, attn, big }) => {
  const data = new Uint8Array(512 * 512).fill(1);
  const cases = [
    { ...big.options, onProgress: () => 1 },
    { ...big.options, layout: () => 'bhsd' },
    { ...big.options, stats: () => true },
    { ...big.options, mask: { data, shape: new Proxy([1, 2, 512, 512], {}) } },
    { ...big.options, mask: { data, shape: new Proxy([1, 1, 512, 'x'], {}) } },
  ];
  for (const options of cases) {
    const want = syncError(() => attn.sdpa(big.q, big.k, big.v, options));
    assert.ok(want instanceof TypeError || want instanceof RangeError, 'attn.sdpa rejects it');
    await rejects(within(pool.sdpa(big.q, big.k, big.v, options), 60000, want.message), want.constructor, want.message);
  }
});
unposted('what sdpa accepts through a Proxy or an array with a method is copied: the same bits on a worker', async ({ pool, attn, big }) => {
  const data = Uint8Array.from({ length: 512 * 512 }, (_, i) => (i % 7 ? 1 : 0));
  for (const options of [
    { ...big.options, mask: { data, shape: new Proxy([1, 1, 512, 512], {}) } },
    { ...big.options, window: Object.assign([64, 16], { describe() { return 'local'; } }) },
    { ...big.options, window: new Proxy([8, 8], {}), layout: 'bhsd' },
  ]) {
    const before = pool.stats;
    sameBits(await within(pool.sdpa(big.q, big.k, big.v, options), 60000, 'proxy'), attn.sdpa(big.q, big.k, big.v, options), 'copied options');
    assert.is(pool.stats.local, before.local, 'run on the workers');
  }
});
unposted('multiHeadAttention: a nested mask and a Proxy window are copied (same bits); a function in window: the sync error', async ({ pool, attn }) => {
  const n = 300, m = (rows, cols, seed) => ({ rows, cols, data: draw(rows * cols, seed).map((x) => x / 8) });
  const mask = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i + j) % 5 !== 0));
  const options = { wq: m(96, 96, 1), wk: m(96, 32, 2), wv: m(96, 32, 3), heads: 6, kvHeads: 2, mask, bias: m(n, n, 4), window: new Proxy([40, 3], {}), softcap: 20 };
  const x = m(n, 96, 5);
  const before = pool.stats;
  sameBits((await within(pool.multiHeadAttention(x, options), 60000, 'mha')).output.data, attn.multiHeadAttention(x, options).output.data, 'mha');
  assert.is(pool.stats.split - before.split, 1, 'split over head groups');
  const bad = { ...options, window: [() => 1, 0] };
  const want = syncError(() => attn.multiHeadAttention(x, bad));
  assert.instance(want, TypeError);
  await rejects(within(pool.multiHeadAttention(x, bad), 60000, 'mha function'), want.constructor, want.message);
});
unposted('afterwards both workers take parts of a split call', async ({ pool, attn, big }) => {
  const before = pool.stats;
  sameBits(await within(pool.sdpa(big.q, big.k, big.v, big.options), 60000, 'split call'), attn.sdpa(big.q, big.k, big.v, big.options), 'after');
  assert.equal(pool.stats, { ...before, split: before.split + 1, parts: before.parts + 2 });
});
unposted('an idle pool lets Node exit after such a call', () => {
  const script = `
    import { createAttentionPool } from ${JSON.stringify(new URL('../../web/pool.js', import.meta.url).href)};
    const pool = await createAttentionPool({ threads: 2 });
    const n = 512, q = new Float32Array(4 * n * 64);
    const options = { heads: 4, nq: n, nk: n, dk: 64, dv: 64 };
    const mask = { data: new Uint8Array(n * n), shape: new Proxy([1, 2, n, n], {}) };
    for (const o of [{ ...options, onProgress: () => 1 }, { ...options, mask }]) {
      await pool.sdpa(q, q, q, o).catch((err) => console.log(err.constructor.name));
    }
  `;
  // A file, not --eval: workers inherit the process's flags.
  const file = new URL('../output/pool-exit.mjs', import.meta.url);
  mkdirSync(new URL('.', file), { recursive: true });
  writeFileSync(file, script);
  // Generous: a pool that keeps a worker busy never exits, and the timeout ends it.
  const r = spawnSync(process.execPath, [fileURLToPath(file)], { encoding: 'utf8', timeout: 120000 });
  assert.is(r.error?.code, undefined, 'the process exited by itself');
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), ['TypeError', 'RangeError']);
});
unposted.run();

const errors = suite('pool errors');
errors.before(async (ctx) => {
  ctx.pool = await createAttentionPool({ threads: 2 });
  ctx.attn = await loadAttention();
});
errors.after(({ pool }) => pool.dispose());

errors('invalid calls reject with the TypeError or RangeError attn.sdpa throws, small or large', async ({ pool, attn }) => {
  const big = sdpaCase({ heads: 4, nq: 512, nk: 512, d: 64 });
  const cases = [
    [big.q, big.k, big.v, { ...big.options, scale: Infinity }],
    [big.q, big.k, big.v, { ...big.options, nq: 511 }],
    [big.q, big.k, new Float64Array(big.v), big.options],
    [big.q, big.k, big.v, { ...big.options, layout: 'xyz' }], // unknown to the pool: checked in a worker
    [big.q, big.k, big.v, { ...big.options, window: [-2, 3] }],
    [big.q, big.k, big.v, { ...big.options, queryOffset: new Int32Array(2) }], // checked in a worker
    [big.q, big.k, big.v, { ...big.options, nope: 1 }],
    [draw(6, 1), draw(6, 2), draw(6, 3), { nq: 2, nk: 2, dk: 3, dv: 3, causal: 'yes' }],
    [draw(6, 1), draw(6, 2), draw(6, 3), null],
  ];
  for (const args of cases) {
    const want = syncError(() => attn.sdpa(...args));
    assert.ok(want instanceof TypeError || want instanceof RangeError, `case ${JSON.stringify(args[3])} must throw`);
    await rejects(pool.sdpa(...args), want.constructor, want.message);
  }
  const x = { rows: 300, cols: 64, data: draw(300 * 64, 1) };
  const mhaWant = syncError(() => attn.multiHeadAttention(x, { wq: x, wk: x, wv: x, heads: 3 }));
  await rejects(pool.multiHeadAttention(x, { wq: x, wk: x, wv: x, heads: 3 }), mhaWant.constructor, mhaWant.message);
  // And the pool still works.
  sameBits(await pool.sdpa(big.q, big.k, big.v, big.options), attn.sdpa(big.q, big.k, big.v, big.options), 'after errors');
});

errors('bad createAttentionPool options; a disposed pool throws', async () => {
  for (const [options, E, re] of [[{ threads: 0 }, RangeError, /threads must be an integer from 1 to 256/], [{ threads: '2' }, TypeError, /threads must be an integer from 1 to 256/],
    [{ threads: 1000 }, RangeError, /threads must be an integer from 1 to 256, got 1000/],
    [{ thread: 2 }, TypeError, /unknown option "thread"/], [{ deterministic: 'yes' }, TypeError, /deterministic must be a boolean/]]) {
    await rejects(createAttentionPool(options), E, re);
  }
  const pool = await createAttentionPool({ threads: 1 });
  assert.is(pool.threads, 1);
  // One thread: even a large call runs on the calling thread (a worker would only add copies).
  const big = sdpaCase({ heads: 4, nq: 512, nk: 512, d: 64 });
  const attn = await loadAttention();
  sameBits(await pool.sdpa(big.q, big.k, big.v, big.options), attn.sdpa(big.q, big.k, big.v, big.options), 'threads 1');
  assert.equal(pool.stats, { local: 1, whole: 0, split: 0, parts: 0, here: 0 });
  attn.dispose();
  pool.dispose();
  await rejects(pool.sdpa(draw(4, 1), draw(4, 2), draw(4, 3), { nq: 2, nk: 2, dk: 2, dv: 2 }), Error, /disposed/);
});

errors('callerShare false: every part goes to a worker, the same bits; one thread sends the call to its worker', async () => {
  const attn = await loadAttention();
  for (const threads of [3, 1]) {
    const pool = await createAttentionPool({ threads, callerShare: false });
    try {
      assert.is(pool.callerShare, false);
      for (const c of [SPLITS[0], SPLITS[1], SPLITS[4]]) {
        const { q, k, v, options } = sdpaCase(c);
        const before = pool.stats;
        sameBits(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options), `${c.name}, threads ${threads}`);
        const after = pool.stats;
        assert.is(after.here - before.here, 0, 'no part on the calling thread');
        assert.is(after.parts - before.parts, threads === 1 ? 1 : c.parts, 'parts');
        assert.is(after.local, before.local, 'not run on the calling thread');
      }
      const x = { rows: 256, cols: 96, data: draw(256 * 96, 7) };
      const w = { rows: 96, cols: 96, data: draw(96 * 96, 8) };
      const mha = { wq: w, wk: w, wv: w, heads: 6 };
      const before = pool.stats;
      sameBits((await pool.multiHeadAttention(x, mha)).output.data, attn.multiHeadAttention(x, mha).output.data, `mha, threads ${threads}`);
      assert.is(pool.stats.here - before.here, 0, 'mha: no part on the calling thread');
      assert.is(pool.stats.local, before.local, 'mha: not run on the calling thread');
    } finally {
      pool.dispose();
    }
  }
  await rejects(createAttentionPool({ callerShare: 'yes' }), TypeError, /callerShare must be a boolean/);
  attn.dispose();
});

for (const memory of ['shared', 'copy']) errors(`${memory} memory: a worker that dies: its call rejects with a clear Error, the pool replaces it and keeps working`, async () => {
  // On the shared memory the calling thread would compute every block a
  // worker has not claimed: only workers take part here, so the crashing
  // one surely holds a block of the deadly call.
  const pool = await createAttentionPool({ threads: 2, memory, callerShare: memory === 'copy', worker: new URL('../pages/pool-crash-worker.js', import.meta.url) });
  const attn = await loadAttention();
  try {
    const deadly = sdpaCase({ heads: 4, nq: 512, nk: 512, d: 13 });
    const err = await rejects(pool.sdpa(deadly.q, deadly.k, deadly.v, deadly.options), Error, /a worker stopped during this call \(exited with code 3\); the pool has replaced it/);
    assert.is(err.constructor, Error);
    const fine = sdpaCase({ heads: 4, nq: 512, nk: 512, d: 64 });
    for (let i = 0; i < 3; i++) sameBits(await pool.sdpa(fine.q, fine.k, fine.v, fine.options), attn.sdpa(fine.q, fine.k, fine.v, fine.options), `call ${i} after`);
    assert.is(pool.threads, 2);
  } finally {
    pool.dispose();
  }
});
errors.run();

const browser = suite('pool in Chromium');
browser.before(async (ctx) => {
  ctx.env = await start();
});
browser.after(async ({ env }) => env.close());
browser('module Workers on a page without cross-origin isolation: same bits as the page instance, same errors', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/tests/pages/pool.html`);
  await page.waitForFunction(() => document.getElementById('result').textContent !== 'running', null, { timeout: 60000 });
  const result = JSON.parse(await page.textContent('#result'));
  assert.equal(result.failed, undefined);
  assert.is(result.isolated, false);
  // No SharedArrayBuffer here: 'auto' copies, and forcing 'shared' rejects saying why.
  assert.is(result.memory, 'copy');
  assert.match(result.forced, /^Error: createAttentionPool: memory 'shared' cannot be used here: SharedArrayBuffer is not available \(a page has it only when cross-origin isolated/);
  assert.is(result.isa, 'relaxed-simd'); // Chromium has relaxed SIMD by default
  assert.is(result.pageIsa, 'relaxed-simd');
  assert.is(result.threads, 2);
  assert.equal(result.checks, { heads: true, rows: true, 'causal rows': true });
  // The page's main thread only waits: every part went to a worker.
  assert.is(result.callerShare, false);
  assert.is(result.here, 0);
  assert.ok(result.parts >= 6, `parts ${result.parts}`);
  assert.match(result.error, /^RangeError: sdpa: scale must be finite/);
  assert.equal(result.sharing, { same: true, here: 5, memory: 'copy' }, 'the main thread computing its share');
  assert.equal(result.kv, { close: true, memory: 'copy' }, 'a pool KV cache in shards');
  assert.equal(result.arrays, { waiting: { same: true, shared: false }, sharing: { same: true, shared: false } }, 'pool.array: ordinary arrays');
  assert.equal(problems, []);
});
browser.run();
