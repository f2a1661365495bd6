// A pool of two module Workers against one instance on the page: the same
// bits, on an ordinary page (copies) and on a cross-origin isolated one
// (shared memory); tests/pool/pool.test.js and memory.test.js read the result.
import { loadAttention } from '../../web/attention.js';
import { createAttentionPool } from '../../web/pool.js';

const draw = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 2);
const out = document.getElementById('result');
try {
  const pool = await createAttentionPool({ threads: 2 });
  const attn = await loadAttention();
  const same = (x, y) => x.length === y.length && x.every((a, i) => Object.is(a, y[i]));
  const checks = {};
  for (const [name, h, nq, nk, d, extra] of [['heads', 4, 256, 256, 64, {}], ['rows', 1, 1024, 1024, 64, {}], ['causal rows', 1, 1024, 1024, 32, { causal: true }]]) {
    const q = draw(h * nq * d, 1), k = draw(h * nk * d, 2), v = draw(h * nk * d, 3);
    const options = { heads: h, nq, nk, dk: d, dv: d, ...extra };
    checks[name] = same(await pool.sdpa(q, k, v, options), attn.sdpa(q, k, v, options));
  }
  const { here, parts } = pool.stats;
  let error = null;
  try {
    await pool.sdpa(draw(4, 1), draw(4, 2), draw(4, 3), { nq: 2, nk: 2, dk: 2, dv: 2, scale: Infinity });
  } catch (err) {
    error = `${err.name}: ${err.message}`;
  }
  // The page's main thread computing its share (callerShare: true): a call it
  // finishes resolves after a MessageChannel turn (no setImmediate here), and
  // it may not block on the memory (Atomics.wait throws on a main thread), so
  // the workers' answers tell it when their blocks are done. Five calls in a
  // row, the same bits each time.
  let sharing;
  {
    const p = await createAttentionPool({ threads: 2, callerShare: true });
    const h = 12, n = 256, d = 64, q = draw(h * n * d, 4), k = draw(h * n * d, 5), v = draw(h * n * d, 6);
    const options = { heads: h, nq: n, nk: n, dk: d, dv: d };
    const want = attn.sdpa(q, k, v, options);
    let ok = true;
    for (let i = 0; i < 5; i++) ok &&= same(await p.sdpa(q, k, v, options), want);
    sharing = { same: ok, here: p.stats.here, memory: p.memory };
    p.dispose();
  }
  // A pool KV cache with the page's main thread sharing the work: on the
  // shared memory its ranges are claimed by every thread (the main thread
  // learns of the workers' ranges from their answers), else shards. Three
  // attends in a row, float32 and int8, against one instance's cache
  // (the parts are merged in another order: close, not the same bits).
  let kv;
  {
    const p = await createAttentionPool({ threads: 2, callerShare: true });
    const heads = 8, kvHeads = 2, d = 64, n = 6000, k = draw(kvHeads * n * d, 7), v = draw(kvHeads * n * d, 8);
    let close = true, memory = null;
    for (const dtype of ['float32', 'int8']) {
      const options = { kvHeads, dk: d, capacity: n, dtype };
      const one = attn.kvCache(options), split = await p.kvCache(options);
      one.append(k, v);
      await split.append(k, v);
      memory = split.memory;
      for (let i = 0; i < 3; i++) {
        const q = draw(heads * d, 9 + i), want = one.attend(q, { heads }), got = await split.attend(q, { heads });
        const big = Math.max(...want.map(Math.abs));
        close &&= got.every((x, j) => Math.abs(x - want[j]) <= 4e-5 * big);
      }
      one.dispose();
      split.dispose();
    }
    kv = { close, memory };
    p.dispose();
  }
  // Inputs and out made by pool.array (in the shared memory where the page
  // is isolated, ordinary arrays elsewhere): three calls in a row, writing
  // new q each time, on the pool whose main thread only waits and on one
  // where it shares the work; the same bits as one instance.
  const arrays = {};
  for (const [name, p] of [['waiting', pool], ['sharing', await createAttentionPool({ threads: 2, callerShare: true })]]) {
    const h = 12, n = 256, d = 64, size = h * n * d;
    const [q, k, v, o] = [0, 1, 2, 3].map(() => p.array(size));
    k.set(draw(size, 11));
    v.set(draw(size, 12));
    const options = { heads: h, nq: n, nk: n, dk: d, dv: d, causal: true };
    let ok = true;
    for (let i = 0; i < 3; i++) {
      q.set(draw(size, 13 + i));
      ok &&= (await p.sdpa(q, k, v, { ...options, out: o })) === o && same(o, attn.sdpa(q, k, v, options));
    }
    arrays[name] = { same: ok, shared: q.buffer instanceof (globalThis.SharedArrayBuffer ?? class {}) };
    if (p !== pool) p.dispose();
  }
  // Forcing shared memory: works where isolated, else rejects saying why.
  let forced;
  try {
    const p = await createAttentionPool({ threads: 2, memory: 'shared' });
    forced = p.memory;
    p.dispose();
  } catch (err) {
    forced = `${err.name}: ${err.message}`;
  }
  out.textContent = JSON.stringify({
    isa: pool.isa, pageIsa: attn.isa, threads: pool.threads, callerShare: pool.callerShare, here, parts, checks, error,
    isolated: globalThis.crossOriginIsolated === true, memory: pool.memory, forced, sharing, kv, arrays,
  });
  pool.dispose();
} catch (err) {
  out.textContent = JSON.stringify({ failed: `${err.name}: ${err.message}` });
}
