// shared.js - the pool's shared-memory path: one WebAssembly.Memory that
// the calling thread and every worker instantiate a threads build of the
// module on (dist/attention-*-threads.wasm: build.sh's threads block), so a
// split sdpa call writes its inputs once, each part reads its rows in place,
// and each output lands in place.
//
// Only the calling thread allocates in that memory (the module's allocator,
// c/attention-alloc.c, is single-threaded): arenas for calls, and a stack
// for each worker's instance, whose __stack_pointer is set to it before any
// call. A worker only gets addresses and calls attn_sdpa on them. Each
// part's structs (c/attention.h: shape, options, steps) are written here at
// core/abi.js's offsets from the same checked call (core/calls.js) the
// synchronous sdpa makes, and a part's rows of q and of the output are
// described by strides, so every part runs the kernel on the same numbers as
// one instance's call on those rows: the same bits.
//
// Used where SharedArrayBuffer exists (Node; a page that is
// crossOriginIsolated) for the builds that have a threads module; the pool's
// memory option forces either path (docs/pool.md#memory).

import { FORWARD, SHAPE, STEPS, perCallLength, writeOptions, writeStrides } from '../core/abi.js';
import { newCall, sdpaCall } from '../core/calls.js';
import { blockOptions } from './planner.js';

// 2 MiB to start, growing to all of wasm32: the limits build.sh links the threads modules with.
const INITIAL_PAGES = 32, MAXIMUM_PAGES = 65536;
// Each worker instance's stack, as build.sh gives the calling thread's (-z stack-size).
const STACK_BYTES = 256 * 1024;
// An idle arena larger than this is freed after its call; smaller ones wait for the next.
const KEEP_ARENA_BYTES = 2 ** 26;

const align = (bytes) => Math.ceil(bytes / 16) * 16;

/** Where each build's threads module is (literal URLs, so bundlers see and copy the files). */
function threadsModuleUrl(isa) {
  if (isa === 'relaxed-simd') return new URL('../../dist/attention-relaxed-threads.wasm', import.meta.url);
  if (isa === 'simd128') return new URL('../../dist/attention-simd-threads.wasm', import.meta.url);
  return null;
}

/**
 * Why shared memory cannot be used here, or null when it can: it needs
 * SharedArrayBuffer, which a page has only when cross-origin isolated.
 */
export function sharedMemoryUnavailable() {
  if (typeof SharedArrayBuffer !== 'function') {
    return 'SharedArrayBuffer is not available (a page has it only when cross-origin isolated: served with ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if (globalThis.crossOriginIsolated === false) return 'this page is not cross-origin isolated (crossOriginIsolated is false)';
  return null;
}

/**
 * The calling thread's side of the shared path for build `isa`, or throws
 * an Error saying why not (no threads build of it, the module or memory
 * could not be made). compile(url) compiles a module (the loader's own).
 */
export async function createShared(isa, compile) {
  const url = threadsModuleUrl(isa);
  if (url === null) throw new Error(`there is no threads build of the ${isa} module (build.sh makes them for relaxed-simd and simd128)`);
  const module = await compile(url);
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAXIMUM_PAGES, shared: true });
  // The first instance fills the memory's data; the workers' find it filled.
  const instance = await WebAssembly.instantiate(module, { env: { memory } });
  return new Shared(module, memory, instance.exports);
}

class Shared {
  #f32 = new Float32Array(0);
  #i32 = new Int32Array(0);
  #u8 = new Uint8Array(0);
  #idle = []; // arenas no call is using: { at, bytes }

  constructor(module, memory, exports) {
    this.module = module;
    this.memory = memory;
    this.exports = exports;
  }

  /**
   * A worker's stack: the byte address of its top (stacks grow down), or
   * throws. Never freed: a worker that died may not have stopped writing it
   * yet, and workers die rarely.
   */
  stack() {
    const at = this.exports.malloc(STACK_BYTES) >>> 0;
    if (at === 0) throw new RangeError('attention-wasm pool: the shared memory cannot grow for a worker\'s stack');
    return at + STACK_BYTES;
  }

  // Views of the memory as it is now (another call's malloc may have grown it).
  #views() {
    if (this.#u8.buffer !== this.memory.buffer) {
      this.#f32 = new Float32Array(this.memory.buffer);
      this.#i32 = new Int32Array(this.memory.buffer);
      this.#u8 = new Uint8Array(this.memory.buffer);
    }
  }

  #arena(bytes) {
    const i = this.#idle.findIndex((a) => a.bytes >= bytes);
    if (i >= 0) return this.#idle.splice(i, 1)[0];
    for (const a of this.#idle.splice(0)) this.exports.free(a.at);
    const at = this.exports.malloc(bytes) >>> 0;
    if (at === 0) throw new RangeError(`attention-wasm pool: a split call needs ${bytes} bytes of shared memory, and it could not grow that far`);
    return { at, bytes };
  }

  #release(arena) {
    if (arena.bytes > KEEP_ARENA_BYTES || this.#idle.length > 0) this.exports.free(arena.at);
    else this.#idle.push(arena);
  }

  /**
   * Lays out one split sdpa call (plan and blocks from planner.js) in an
   * arena of its own: the whole q, k, v, mask and bias, the output, and per
   * block its structs and scratch. Returns { args, input, output, check,
   * done }: args[p], the arguments of attn_sdpa for block p (byte
   * addresses); input(p), which copies what block p reads (every block's
   * before its part runs; blocks of rows share k and v, which input(0)
   * copies whole); output(p, out), which copies block p's rows of the output
   * into out; check(status), which throws a failed part's error; done(), once
   * no part of the call runs any more.
   */
  layout(plan, blocks, q, k, v) {
    const { nq, nk, dk, dv, group, mask, bias } = plan;
    const ex = this.exports;
    const rowBlocks = blocks.some((b) => b.i0 !== 0 || b.i1 !== nq);
    // Checked calls of each block, as attn.sdpa would make them; the structs
    // need the sizes only, so a row block's q is a stand-in of its length.
    const calls = blocks.map((b) => sdpaCall(newCall(), q.subarray(0, (b.u1 - b.u0) * group * (b.i1 - b.i0) * dk),
      k.subarray(b.u0 * nk * dk, b.u1 * nk * dk), v.subarray(b.u0 * nk * dv, b.u1 * nk * dv), blockOptions(plan, b)));
    const headerBytes = calls.map((c) => align(FORWARD.i32 * 4 + perCallLength(c) * 4));
    // Tensors first, then each block's structs; scratch after all of them.
    const regions = [q.length * 4, k.length * 4, v.length * 4, mask?.length ?? 0, (bias?.length ?? 0) * 4, plan.batch * plan.heads * nq * dv * 4, ...headerBytes];
    const offsets = [];
    let total = 0;
    for (const r of regions) {
      offsets.push(total);
      total += align(r);
    }
    // Each block's scratch, in floats (attn_sdpa_call_scratch_size's unit).
    const scratch = new Array(blocks.length).fill(0);
    let arena = null;
    for (;;) {
      let bytes = total;
      for (const s of scratch) bytes += align(s * 4);
      if (arena === null || arena.bytes < bytes) {
        if (arena !== null) this.#release(arena);
        arena = this.#arena(Math.max(bytes, Math.min(2 * bytes, bytes + (1 << 20))));
        this.#views();
      }
      const at = (r) => arena.at + offsets[r];
      const [qAt, kAt, vAt, mAt, bAt, oAt] = [0, 1, 2, 3, 4, 5].map(at);
      let sAt = arena.at + total, fits = true;
      const args = blocks.map((b, p) => {
        const c = calls[p], base = at(6 + p), rows = b.i1 - b.i0;
        const qb = qAt + ((b.u0 * group * nq + b.i0) * dk) * 4, ob = oAt + ((b.u0 * group * nq + b.i0) * dv) * 4;
        this.#writeShape(base >>> 2, c, rowBlocks ? [nq * dk, dk] : null, rowBlocks ? [nq * dv, dv] : null);
        writeOptions(this.#f32, this.#i32, (base >>> 2) + FORWARD.options, c,
          mask ? mAt + b.i0 * nk : 0, bias ? bAt + b.i0 * nk * 4 : 0, base + FORWARD.i32 * 4);
        for (let i = 0; i < STEPS.WORDS; i++) this.#i32[(base >>> 2) + FORWARD.steps + i] = 0;
        const need = c.rope
          ? ex.attn_sdpa_call_scratch_size_with(base + FORWARD.shape * 4, base + FORWARD.options * 4, 0, 0) >>> 0
          : ex.attn_sdpa_call_scratch_size(base + FORWARD.shape * 4, 0, 0) >>> 0;
        if (need === 0) throw new RangeError(`attention-wasm: sizes nq=${c.nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
        if (need > scratch[p]) fits = false;
        scratch[p] = Math.max(scratch[p], need);
        const a = [base + FORWARD.shape * 4, qb, kAt + b.u0 * nk * dk * 4, vAt + b.u0 * nk * dv * 4, ob,
          base + FORWARD.options * 4, base + FORWARD.steps * 4, sAt, scratch[p]];
        sAt += align(scratch[p] * 4);
        return a;
      });
      if (!fits) continue; // the scratch sizes are known now: lay out again
      const f32 = this.#f32, u8 = this.#u8, heads = blocks.map((b) => (b.u1 - b.u0) * group);
      let released = false;
      return {
        args,
        input: (p) => {
          const b = blocks[p];
          if (rowBlocks) {
            if (p === 0) {
              f32.set(k, kAt >>> 2);
              f32.set(v, vAt >>> 2);
              if (mask) u8.set(mask, mAt);
              if (bias) f32.set(bias, bAt >>> 2);
            }
            for (let h = 0; h < heads[p]; h++) {
              const from = ((b.u0 * group + h) * nq + b.i0) * dk, n = (b.i1 - b.i0) * dk;
              f32.set(q.subarray(from, from + n), (qAt >>> 2) + from);
            }
          } else {
            f32.set(q.subarray(b.u0 * group * nq * dk, b.u1 * group * nq * dk), (qAt >>> 2) + b.u0 * group * nq * dk);
            f32.set(k.subarray(b.u0 * nk * dk, b.u1 * nk * dk), (kAt >>> 2) + b.u0 * nk * dk);
            f32.set(v.subarray(b.u0 * nk * dv, b.u1 * nk * dv), (vAt >>> 2) + b.u0 * nk * dv);
            if (p === 0 && mask) u8.set(mask, mAt);
            if (p === 0 && bias) f32.set(bias, bAt >>> 2);
          }
        },
        output: (p, out) => {
          const b = blocks[p];
          if (!rowBlocks) {
            const from = b.u0 * group * nq * dv, to = b.u1 * group * nq * dv;
            out.set(f32.subarray((oAt >>> 2) + from, (oAt >>> 2) + to), from);
            return;
          }
          for (let h = 0; h < heads[p]; h++) {
            const from = ((b.u0 * group + h) * nq + b.i0) * dv, n = (b.i1 - b.i0) * dv;
            out.set(f32.subarray((oAt >>> 2) + from, (oAt >>> 2) + from + n), from);
          }
        },
        check: (status) => {
          if (status === 0) return;
          const bytes = new Uint8Array(this.memory.buffer);
          const ptr = ex.attn_status_string(status) >>> 0;
          const message = new TextDecoder().decode(bytes.slice(ptr, bytes.indexOf(0, ptr)));
          throw new Error(`attention-wasm: attention: ${message} (status ${status})`);
        },
        done: () => {
          if (released) return;
          released = true;
          this.#release(arena);
        },
      };
    }
  }

  // attn_shape at int index o for a block's checked call c: sizes, and the
  // row and head strides of q and of the output when the block is a run of
  // rows of each head (null: contiguous); k and v are whole heads.
  #writeShape(o, c, qStrides, oStrides) {
    const i32 = this.#i32;
    i32[o + SHAPE.batch] = c.batch; i32[o + SHAPE.heads] = c.heads; i32[o + SHAPE.kv_heads] = c.kvHeads;
    i32[o + SHAPE.n_q] = c.nq; i32[o + SHAPE.n_k] = c.nk; i32[o + SHAPE.d_k] = c.dk; i32[o + SHAPE.d_v] = c.dv;
    for (let i = SHAPE.q; i < SHAPE.WORDS; i++) i32[o + i] = 0;
    if (qStrides) writeStrides(i32, o + SHAPE.q, [c.heads * qStrides[0], qStrides[0], qStrides[1]]);
    if (oStrides) writeStrides(i32, o + SHAPE.out, [c.heads * oStrides[0], oStrides[0], oStrides[1]]);
  }
}
