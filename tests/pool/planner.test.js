// The pool's split planner (web/pool/planner.js) alone, in Node: no
// workers. Its kernel rule against C's own (attn_sdpa_kernel); blocks that
// cover a call once, start on the 4-row tile and each run the whole call's
// kernel; options copied into data a worker can receive.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { compileAttention } from '../../web/attention.js';
import { blockOptions, plainSdpaOptions, sdpaBlocks, sdpaKernel, sdpaPlan, sdpaUnits } from '../../web/pool/planner.js';

const kernel = suite('sdpaKernel: the kernel attn_sdpa picks');
// The C rule itself: attn_sdpa_kernel, the function attn_sdpa decides with,
// asked of the scalar module (compileAttention's module, instantiated as
// loadAttention does), over a grid that holds each bound and its neighbours.
const C_KERNELS = { 0: 'decode', 1: 'grouped decode', 2: 'fused' };
kernel('agrees with C\'s attn_sdpa_kernel over a grid of sizes through every bound', async () => {
  const module = await compileAttention({ simd: false });
  const { exports } = await WebAssembly.instantiate(module, { env: { emscripten_notify_memory_growth() {} } });
  assert.type(exports.attn_sdpa_kernel, 'function', 'the module exports attn_sdpa_kernel');
  let checked = 0;
  for (const nq of [1, 2, 3, 4, 5, 8, 64, 128, 129, 2048, 2049, 2 ** 20]) {
    for (const nk of [1, 2, 7, 8, 16, 63, 64, 512, 2048, 2049, 2 ** 20]) {
      for (const dk of [1, 2, 4, 16, 64, 128, 2048, 2049]) {
        for (const group of [1, 2, 3, 64, 65]) {
          const want = C_KERNELS[exports.attn_sdpa_kernel(nq, nk, dk, group)];
          assert.is(sdpaKernel(nq, nk, dk, group), want, `nq ${nq} nk ${nk} dk ${dk} group ${group}`);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 5000, 'the whole grid ran');
  assert.is(exports.attn_sdpa_kernel(0, 8, 8, 1), -1, 'a size below 1 is ATTN_KERNEL_INVALID');
});
kernel.run();

// A plan for flat inputs of these sizes (the arrays only need their lengths).
function plan({ batch = 1, heads = 1, kvHeads = heads, nq, nk, d = 64, ...extra }) {
  const q = new Float32Array(batch * heads * nq * d), kv = new Float32Array(batch * kvHeads * nk * d);
  const p = sdpaPlan(q, kv, kv, { batch, heads, kvHeads, nq, nk, dk: d, dv: d, ...extra });
  assert.ok(p !== null && p.split, 'a plan the planner splits');
  return p;
}

// Every (unit, row) in exactly one block; inner row bounds on the tile; every
// block's kernel the whole call's.
function checkBlocks(p, blocks, what) {
  const units = p.batch * p.kvHeads;
  const seen = new Uint8Array(units * p.nq);
  const whole = sdpaKernel(p.nq, p.nk, p.dk, p.group);
  for (const { u0, u1, i0, i1 } of blocks) {
    assert.ok(u0 < u1 && i0 < i1, `${what}: empty block`);
    assert.ok(i0 % 4 === 0, `${what}: block starts at row ${i0}, not on the 4-row tile`);
    assert.is(sdpaKernel(i1 - i0, p.nk, p.dk, p.group), whole, `${what}: rows [${i0}, ${i1}) take another kernel than the whole call`);
    for (let u = u0; u < u1; u++) for (let i = i0; i < i1; i++) seen[u * p.nq + i]++;
  }
  assert.is(seen.findIndex((n) => n !== 1), -1, `${what}: every row of every group in exactly one block`);
}

const blocks = suite('sdpaBlocks');
blocks('the 2-row tail that took the decode kernel: rows [0, 124, 130], both blocks fused', () => {
  const p = plan({ heads: 16, kvHeads: 1, nq: 130, nk: 64, causal: true, queryOffset: -120 });
  const b = sdpaBlocks(p, 3);
  assert.equal(b.map(({ i0, i1 }) => [i0, i1]), [[0, 124], [124, 130]]);
  checkBlocks(p, b, 'example');
});
blocks('a sweep of shapes, thread counts, causal offsets and group sizes: every block takes the whole call\'s kernel', () => {
  let rowSplits = 0;
  for (const threads of [2, 3, 4, 7, 16]) {
    for (const nq of [1, 2, 3, 4, 5, 127, 128, 129, 130, 131, 133, 200, 257, 1030]) {
      for (const [nk, d] of [[64, 64], [1, 4], [2, 1], [8, 8], [3, 16], [1024, 1]]) {
        for (const [heads, kvHeads] of [[1, 1], [16, 1], [8, 2], [3, 3]]) {
          for (const extra of [{}, { causal: true }, { causal: true, queryOffset: -120 }, { causal: true, queryOffset: -nq + 2 }, { window: [5, 0] }]) {
            const p = plan({ heads, kvHeads, nq, nk, d, ...extra });
            const b = sdpaBlocks(p, threads);
            if (b.some(({ i0, i1 }) => i0 > 0 || i1 < nq)) rowSplits++;
            checkBlocks(p, b, JSON.stringify({ threads, nq, nk, d, heads, kvHeads, ...extra }));
          }
        }
      }
    }
  }
  assert.ok(rowSplits > 1000, `${rowSplits} sweeps split rows`);
});
blocks('head groups when there are at least as many as threads; rows not cut past int32 positions', () => {
  assert.equal(sdpaBlocks(plan({ heads: 12, nq: 256, nk: 256 }), 3), [
    { u0: 0, u1: 4, i0: 0, i1: 256 }, { u0: 4, u1: 8, i0: 0, i1: 256 }, { u0: 8, u1: 12, i0: 0, i1: 256 }]);
  const high = plan({ nq: 1024, nk: 64, queryOffset: 2 ** 31 - 1000 });
  assert.equal(sdpaBlocks(high, 3), [{ u0: 0, u1: 1, i0: 0, i1: 1024 }]);
  assert.is(sdpaBlocks(plan({ nq: 1024, nk: 64, queryOffset: 2 ** 31 - 1024 }), 3).length, 3);
});
blocks('sdpaUnits, the shared path\'s blocks: the same rules, at least as many as sdpaBlocks, about 8 a thread, runs of at least 256 full rows', () => {
  for (const threads of [2, 3, 4, 7]) {
    for (const nq of [1, 5, 130, 257, 511, 512, 1030, 4096]) {
      for (const [heads, kvHeads] of [[1, 1], [12, 12], [8, 2], [32, 8]]) {
        for (const extra of [{}, { causal: true }, { causal: true, queryOffset: -nq + 2 }, { window: [5, 0] }]) {
          const what = JSON.stringify({ threads, nq, heads, kvHeads, ...extra });
          const p = plan({ heads, kvHeads, nq, nk: 256, ...extra });
          const u = sdpaUnits(p, threads), fixed = sdpaBlocks(p, threads);
          checkBlocks(p, u, what);
          assert.ok(u.length >= fixed.length, `${what}: ${u.length} blocks, sdpaBlocks ${fixed.length}`);
          if (u.length > fixed.length) {
            assert.ok(u.length <= threads * 8 + kvHeads, `${what}: ${u.length} blocks`);
            // Rows that see every key: equal runs (a causal call's are balanced by the keys each row sees).
            if (!extra.causal && !extra.window) assert.ok(u.every(({ i0, i1 }) => i1 - i0 >= 256 || (i0 === 0 && i1 === nq)), `${what}: a run shorter than 256 rows`);
          }
        }
      }
    }
  }
  // 12 heads of 512 keys on 2 threads: 24 halves; of 1024 keys (K and V too long to pack twice): 12 heads.
  assert.is(sdpaUnits(plan({ heads: 12, nq: 512, nk: 512 }), 2).length, 24);
  assert.is(sdpaUnits(plan({ heads: 12, nq: 1024, nk: 1024 }), 2).length, 12);
  assert.is(sdpaUnits(plan({ heads: 32, kvHeads: 8, nq: 512, nk: 512 }), 2).length, 16, 'kv groups, 2 runs each');
  // Fewer groups than threads: sdpaBlocks' row blocks.
  const one = plan({ nq: 4096, nk: 4096 });
  assert.equal(sdpaUnits(one, 2), sdpaBlocks(one, 2));
});
blocks('blockOptions: plain values, row blocks keep their positions, mask rows as views', () => {
  const mask = Uint8Array.from({ length: 256 * 8 }, (_, i) => i % 3);
  const window = new Proxy([4, 0], {});
  const p = plan({ heads: 2, kvHeads: 1, nq: 256, nk: 8, d: 8, causal: true, queryOffset: 5, mask, window });
  const o = blockOptions(p, { u0: 0, u1: 1, i0: 128, i1: 256 });
  assert.equal(o, { causal: true, window: [4, 0], heads: 2, kvHeads: 1, nq: 128, nk: 8, dk: 8, dv: 8, queryOffset: 133, mask: mask.slice(128 * 8) });
  assert.is(o.mask.buffer, mask.buffer, 'a row block reads the rows of the caller\'s mask in place');
  assert.ok(Array.isArray(o.window) && structuredClone(o).window[0] === 4, 'the window is a plain array');
  assert.is(blockOptions(p, { u0: 0, u1: 1, i0: 0, i1: 256 }).mask, mask, 'a whole block reads the caller\'s mask');
});
blocks.run();

const options = suite('plainSdpaOptions and the options module');
options('copies what sdpa reads into data postMessage can clone; null for what it cannot', () => {
  const data = new Uint8Array(16);
  const shape = new Proxy([1, 1, 4, 4], {});
  const out = new Float32Array(4);
  const copy = plainSdpaOptions({ nq: 4, nk: 4, dk: 1, dv: 1, layout: 'bshd', mask: { data, shape, note: () => 1 }, out, window: Object.assign([2, 0], { f() {} }) });
  assert.equal(copy, { nq: 4, nk: 4, dk: 1, dv: 1, layout: 'bshd', mask: { data, shape: [1, 1, 4, 4] }, window: [2, 0] });
  assert.not.throws(() => structuredClone(copy));
  for (const bad of [{ nq: 4, f: () => 1 }, { layout: () => 'bhsd' }, { causal: Symbol('x') }, { mask: { data: new Proxy(data, {}), shape: [4, 4] } },
    { window: [() => 1, 0] }, { get scale() { throw new Error('no'); } }]) {
    assert.is(plainSdpaOptions(bad), null, Object.keys(bad).join());
  }
});
options('sdpaPlan accepts exactly what sdpa accepts: the options module decides both', async () => {
  const { loadAttention } = await import('../../web/attention.js');
  const attn = await loadAttention();
  const base = { nq: 4, nk: 4, dk: 1, dv: 1 };
  const f = () => new Float32Array(4);
  const variants = [
    {}, { window: [-1, 2 ** 31 - 1] }, { window: Int32Array.of(3, 0) }, { window: [-2, 0] }, { window: [1] }, { window: ['1', 0] },
    { softcap: 30 }, { softcap: 0 }, { softcap: Infinity }, { softcap: 1e-46 }, { scale: -2 }, { scale: NaN }, { scale: '1' }, { scale: 1e39 },
    { queryOffset: -(2 ** 31 - 1) }, { queryOffset: 2 ** 31 }, { queryOffset: Int32Array.of(1) }, { nq: 0 }, { nq: 1.5 },
    { mask: new Uint8Array(16) }, { mask: new Uint8Array(15) }, { causal: 1 }, { layout: 'bshd' }, { kvLengths: Int32Array.of(2) },
  ];
  for (const extra of variants) {
    const o = { ...base, ...extra };
    let thrown = false;
    try {
      attn.sdpa(f(), f(), f(), o);
    } catch {
      thrown = true;
    }
    assert.is(sdpaPlan(f(), f(), f(), o) === null, thrown, JSON.stringify(extra));
  }
  // A Proxy of a typed array passes sdpa's checks but cannot be posted: the caller's instance runs it.
  assert.is(sdpaPlan(new Proxy(f(), {}), f(), f(), base), null);
});
options.run();
