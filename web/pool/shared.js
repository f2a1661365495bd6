// shared.js - the pool's shared-memory path: one WebAssembly.Memory that
// the calling thread and every worker instantiate a threads build of the
// module on (dist/attention-*-threads.wasm: build.sh's threads block), so a
// split sdpa call writes its inputs once, each part reads its rows in place,
// and each output lands in place. The call is cut into more blocks than
// threads, and each thread taking part (the calling thread too, when it
// shares the work) claims the next block from a counter in that memory until
// none are left: a core slowed by another program computes fewer blocks
// instead of holding the call up, and the calling thread learns that the
// last block is done from the memory too (waiting there for a while),
// without waiting for a message.
//
// Only the calling thread allocates in that memory (the module's allocator,
// c/attention-alloc.c, is single-threaded): arenas for calls, and a stack
// for each worker's instance, whose __stack_pointer is set to it before any
// call. A worker only gets addresses and calls attn_sdpa (attn_sdpa_kv for
// a compact cache's keys) on them. Each
// part's structs (c/attention.h: shape, options, steps) are written here at
// core/abi.js's offsets from the same checked call (core/calls.js) the
// synchronous sdpa makes, and a part's rows of q and of the output are
// described by strides, so every part runs the kernel on the same numbers as
// one instance's call on those rows: the same bits.
//
// Used where SharedArrayBuffer exists (Node; a page that is
// crossOriginIsolated) for the builds that have a threads module; the pool's
// memory option forces either path (docs/pool.md#memory).

import { FORWARD, KV, SHAPE, STEPS, perCallLength, writeOptions, writeStrides } from '../core/abi.js';
import { Attention } from '../core/attention.js';
import { newCall, sdpaCall } from '../core/calls.js';
import { blockOptions } from './planner.js';

// 2 MiB to start, growing to all of wasm32: the limits build.sh links the threads modules with.
const INITIAL_PAGES = 32, MAXIMUM_PAGES = 65536;
// Each worker instance's stack, as build.sh gives the calling thread's (-z stack-size).
const STACK_BYTES = 256 * 1024;
// An idle arena larger than this is freed after its call; smaller ones wait for the next.
const KEEP_ARENA_BYTES = 2 ** 26, IDLE_ARENAS = 2;

const align = (bytes) => Math.ceil(bytes / 16) * 16;

/**
 * A split call's control words (Int32 indices from its control address):
 * CLAIM, the blocks left to claim as front | back << 16: workers take the
 * front one, the calling thread the back one (claimFront, claimBack; a
 * call has a few dozen blocks per thread at most, planner.js' sdpaUnits,
 * far below 2^16);
 * WRITTEN, how many blocks from the front have their inputs in place (the
 * calling thread writes them in order before it computes any; -1: the call
 * was given up); DONE, how many blocks are computed; FAILED, nonzero once a block
 * failed; then a word per block, 1 once it is computed.
 */
export const CONTROL = { CLAIM: 0, WRITTEN: 1, DONE: 2, FAILED: 3, FLAGS: 4 };

/** The front block left to claim, claimed; -1 when none is left. ctl: the call's control words. */
export function claimFront(ctl) {
  for (;;) {
    const c = Atomics.load(ctl, CONTROL.CLAIM), front = c & 0xffff, back = c >>> 16;
    if (front >= back) return -1;
    if (Atomics.compareExchange(ctl, CONTROL.CLAIM, c, (back << 16) | (front + 1)) === c) return front;
  }
}

/** The back block left to claim, claimed; -1 when none is left. */
export function claimBack(ctl) {
  for (;;) {
    const c = Atomics.load(ctl, CONTROL.CLAIM), front = c & 0xffff, back = c >>> 16;
    if (front >= back) return -1;
    if (Atomics.compareExchange(ctl, CONTROL.CLAIM, c, ((back - 1) << 16) | front) === c) return back - 1;
  }
}

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
  return new Shared(module, memory, instance);
}

// How long a thread waits at a time for the inputs of the block it claimed
// (the calling thread writes them all before it computes, so the wait ends
// as soon as they are there); it looks again after each wait.
const WRITTEN_WAIT_MS = 1000;

/**
 * A worker's part of a split call: claim the front block, wait until its
 * inputs are written, compute it, mark it done; until no block is left or
 * one failed. exports: the threads module's, on `memory`; args, control:
 * the call's layout; scratch: this thread's slot of it; check(status)
 * throws a failed block's error (after the call is marked failed, so no
 * thread claims another). Returns the blocks computed here.
 */
export function claimBlocks(exports, memory, args, control, scratch, check) {
  const ctl = controlWords(memory, control, args.length);
  const done = [];
  while (Atomics.load(ctl, CONTROL.FAILED) === 0) {
    const p = claimFront(ctl);
    if (p < 0) break;
    for (let w = Atomics.load(ctl, CONTROL.WRITTEN); w <= p; w = Atomics.load(ctl, CONTROL.WRITTEN)) {
      if (w < 0) return done;
      Atomics.wait(ctl, CONTROL.WRITTEN, w, WRITTEN_WAIT_MS);
    }
    computeBlock(exports, ctl, args, p, scratch, check);
    done.push(p);
  }
  return done;
}

/** A call's control words (CONTROL) as an Int32Array, for `blocks` blocks. */
export function controlWords(memory, control, blocks) {
  return new Int32Array(memory.buffer, control, CONTROL.FLAGS + blocks);
}

/**
 * Computes block p with this thread's scratch and marks it done (or failed,
 * then throws). args[p] is attn_sdpa's 9 arguments, or attn_sdpa_kv's 8 (a
 * compact cache's keys and values): scratch and its size last either way.
 */
export function computeBlock(exports, ctl, args, p, scratch, check) {
  const a = args[p].slice();
  a[a.length - 2] = scratch;
  const status = a.length === 9 ? exports.attn_sdpa(...a) : exports.attn_sdpa_kv(...a);
  if (status !== 0) {
    Atomics.store(ctl, CONTROL.FAILED, 1);
    Atomics.notify(ctl, CONTROL.DONE);
    check(status);
  }
  Atomics.store(ctl, CONTROL.FLAGS + p, 1);
  Atomics.add(ctl, CONTROL.DONE, 1);
  Atomics.notify(ctl, CONTROL.DONE);
}

/**
 * Blocks the calling thread until all `count` blocks of a call (its
 * control words ctl) are done, at most `ms`: true when they are; false when the time ran out, a block
 * failed, or this thread may not block (a page's main thread), and then the
 * workers' answers tell.
 */
export function waitBlocks(ctl, count, ms) {
  const end = performance.now() + ms;
  try {
    for (;;) {
      const d = Atomics.load(ctl, CONTROL.DONE);
      if (d >= count) return true;
      const left = end - performance.now();
      if (Atomics.load(ctl, CONTROL.FAILED) !== 0 || left <= 0) return false;
      Atomics.wait(ctl, CONTROL.DONE, d, left);
    }
  } catch {
    return false;
  }
}

class Shared {
  #f32 = new Float32Array(0);
  #i32 = new Int32Array(0);
  #u8 = new Uint8Array(0);
  #idle = []; // arenas no call is using: { at, bytes }
  #arrays = []; // array()'s allocations, never freed: { at, end } in bytes
  #buffers = new WeakSet(); // the memory's buffers that array() made views on

  #attention = null;

  constructor(module, memory, instance) {
    this.module = module;
    this.memory = memory;
    this.exports = instance.exports;
  }

  /**
   * The calling thread's Attention on the shared memory (made once): a pool
   * KV cache keeps its keys and values there, and the workers read them in
   * place.
   */
  attention() {
    this.#attention ??= new Attention({ exports: { ...this.exports, memory: this.memory } });
    return this.#attention;
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

  /**
   * A Float32Array of `length` zeros in the shared memory, kept as long as
   * the memory (AttentionPool#array). Growing the memory leaves it valid: a
   * shared memory's old buffers alias the new one.
   */
  array(length) {
    const bytes = Math.max(length * 4, 16);
    const at = this.exports.malloc(bytes) >>> 0;
    if (at === 0) throw new RangeError(`pool.array: length ${length} needs ${bytes} bytes of shared memory, and it could not grow that far`);
    this.#arrays.push({ at, end: at + bytes });
    this.#views();
    this.#buffers.add(this.memory.buffer);
    const array = new Float32Array(this.memory.buffer, at, length);
    array.fill(0); // malloc may hand back memory an arena used
    return array;
  }

  /** Whether x is a view of this memory (array()'s arrays and views of their buffers). */
  owns(x) {
    return ArrayBuffer.isView(x) && (x.buffer === this.memory.buffer || this.#buffers.has(x.buffer));
  }

  // x's byte address when it is a Float32Array within one of array()'s
  // allocations (a subarray of one, too), else -1: a split call reads it,
  // or writes it, in place.
  #place(x) {
    if (!(x instanceof Float32Array) || !this.#buffers.has(x.buffer)) return -1;
    const from = x.byteOffset, to = from + x.byteLength;
    return this.#arrays.some((a) => from >= a.at && to <= a.end) ? from : -1;
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

  // Two idle arenas: a decode loop's next call is often laid out while a
  // worker still holds the last one's, and then takes the other.
  // `arena` when it holds `bytes`, else a new arena (rounded up, so a call a
  // little larger next time fits) in place of it; the views then current.
  #fit(arena, bytes) {
    if (arena !== null && arena.bytes >= bytes) return arena;
    if (arena !== null) this.#release(arena);
    const fitted = this.#arena(Math.max(bytes, Math.min(2 * bytes, bytes + (1 << 20))));
    this.#views();
    return fitted;
  }

  // A call's control words (CONTROL) for `blocks` blocks, at byte address
  // `control`: zero, every block left to claim, as an Int32Array.
  #control(control, blocks) {
    const ctl = new Int32Array(this.memory.buffer, control, CONTROL.FLAGS + blocks);
    ctl.fill(0);
    ctl[CONTROL.CLAIM] = blocks << 16;
    return ctl;
  }

  #release(arena) {
    if (arena.bytes > KEEP_ARENA_BYTES || this.#idle.length >= IDLE_ARENAS) this.exports.free(arena.at);
    else this.#idle.push(arena);
  }

  /**
   * Lays out one split sdpa call (plan and blocks from planner.js) in an
   * arena of its own: the whole q, k, v, mask and bias, the output (each
   * tensor but the mask left where it is when it is in array()'s memory),
   * per block its structs, scratch for `slots` threads, and the call's control
   * words (CONTROL). Returns { args, control, scratch, input, written,
   * output, check, done }: args[p], the arguments of attn_sdpa for block p (byte addresses;
   * its scratch is slot 0's, which a thread replaces with scratch(slot),
   * its own); control, the byte address of the control words, zeroed;
   * input(p), which copies what block p reads, once (every block's before
   * it runs; the k and v of its groups, and the mask and bias, only with the
   * first block that reads them);
   * written(count), which tells the threads that blocks [0, count) have
   * their inputs (-1: the call is given up); output(p), which copies block
   * p's rows of the output into out (nothing when it is written in place);
   * check(status), which throws a failed part's error; done(), once no part
   * of the call runs any more.
   */
  layout(plan, blocks, q, k, v, out, slots) {
    const { nq, nk, dk, dv, group, mask, bias } = plan;
    const ex = this.exports;
    // Tensors in array()'s memory are read, and out written, where they
    // are; unless out overlaps one of them: then a block's output (or its
    // copy into out) could overwrite rows another block still reads, and
    // every tensor is copied, as ordinary arrays are.
    const tensors = [q, k, v, bias, out];
    const places = tensors.map((x) => (x === null ? -1 : this.#place(x)));
    const overlaps = (i) => places[i] >= 0 && places[i] < places[4] + out.byteLength && places[4] < places[i] + tensors[i].byteLength;
    if (places[4] >= 0 && [0, 1, 2, 3].some(overlaps)) places.fill(-1);
    const [inPlace, outAt] = [places.slice(0, 4), places[4]];
    const [qIn, kIn, vIn, bIn] = inPlace.map((at) => at >= 0), oIn = outAt >= 0;
    // Per region below, its address when it is in place.
    const where = [inPlace[0], inPlace[1], inPlace[2], -1, inPlace[3], outAt, -1];
    const rowBlocks = blocks.some((b) => b.i0 !== 0 || b.i1 !== nq);
    // Checked calls of each block, as attn.sdpa would make them; the structs
    // need the sizes only, so a row block's q is a stand-in of its length.
    const calls = blocks.map((b) => sdpaCall(newCall(), q.subarray(0, (b.u1 - b.u0) * group * (b.i1 - b.i0) * dk),
      k.subarray(b.u0 * nk * dk, b.u1 * nk * dk), v.subarray(b.u0 * nk * dv, b.u1 * nk * dv), blockOptions(plan, b)));
    const headerBytes = calls.map((c) => align(FORWARD.i32 * 4 + perCallLength(c) * 4));
    // Tensors first, then each block's structs; scratch after all of them.
    const regions = [qIn ? 0 : q.length * 4, kIn ? 0 : k.length * 4, vIn ? 0 : v.length * 4, mask?.length ?? 0,
      bIn ? 0 : (bias?.length ?? 0) * 4, oIn ? 0 : plan.batch * plan.heads * nq * dv * 4,
      (CONTROL.FLAGS + blocks.length) * 4, ...headerBytes];
    const offsets = [];
    let total = 0;
    for (const r of regions) {
      offsets.push(total);
      total += align(r);
    }
    // A slot's scratch, in floats (attn_sdpa_call_scratch_size's unit): the most any block needs.
    let scratch = 0;
    let arena = null;
    for (;;) {
      const bytes = total + slots * align(scratch * 4);
      arena = this.#fit(arena, bytes);
      const at = (r) => arena.at + offsets[r];
      const [qAt, kAt, vAt, mAt, bAt, oAt, control] = where.map((w, r) => (w >= 0 ? w : at(r)));
      const sAt = arena.at + total;
      let fits = true;
      const args = blocks.map((b, p) => {
        const c = calls[p], base = at(7 + p);
        const qb = qAt + ((b.u0 * group * nq + b.i0) * dk) * 4, ob = oAt + ((b.u0 * group * nq + b.i0) * dv) * 4;
        this.#writeShape(base >>> 2, c, rowBlocks ? [nq * dk, dk] : null, rowBlocks ? [nq * dv, dv] : null);
        writeOptions(this.#f32, this.#i32, (base >>> 2) + FORWARD.options, c,
          mask ? mAt + b.i0 * nk : 0, bias ? bAt + b.i0 * nk * 4 : 0, base + FORWARD.i32 * 4);
        for (let i = 0; i < STEPS.WORDS; i++) this.#i32[(base >>> 2) + FORWARD.steps + i] = 0;
        const need = c.rope
          ? ex.attn_sdpa_call_scratch_size_with(base + FORWARD.shape * 4, base + FORWARD.options * 4, 0, 0) >>> 0
          : ex.attn_sdpa_call_scratch_size(base + FORWARD.shape * 4, 0, 0) >>> 0;
        if (need === 0) throw new RangeError(`attention-wasm: sizes nq=${c.nq} nk=${nk} dk=${dk} dv=${dv} are too large for wasm32`);
        if (need > scratch) fits = false;
        return [base + FORWARD.shape * 4, qb, kAt + b.u0 * nk * dk * 4, vAt + b.u0 * nk * dv * 4, ob,
          base + FORWARD.options * 4, base + FORWARD.steps * 4, sAt, need];
      });
      if (!fits) {
        // The scratch size is known now: lay out again.
        scratch = Math.max(...args.map((a) => a[8]));
        continue;
      }
      const ctl = this.#control(control, blocks.length);
      const f32 = this.#f32, u8 = this.#u8, heads = blocks.map((b) => (b.u1 - b.u0) * group);
      // What input() has copied: blocks, (batch, kv head) groups of k and v, the mask and bias.
      const given = new Uint8Array(blocks.length), units = new Uint8Array(plan.batch * plan.kvHeads);
      let common = false, released = false;
      const slotBytes = align(scratch * 4);
      return {
        args,
        control,
        scratch: (slot) => sAt + slot * slotBytes,
        input: (p) => {
          if (given[p]) return;
          given[p] = 1;
          const b = blocks[p];
          if (!common) {
            common = true;
            if (mask) u8.set(mask, mAt);
            if (bias && !bIn) f32.set(bias, bAt >>> 2);
          }
          for (let u = b.u0; u < b.u1; u++) {
            if (units[u]) continue;
            units[u] = 1;
            if (!kIn) f32.set(k.subarray(u * nk * dk, (u + 1) * nk * dk), (kAt >>> 2) + u * nk * dk);
            if (!vIn) f32.set(v.subarray(u * nk * dv, (u + 1) * nk * dv), (vAt >>> 2) + u * nk * dv);
          }
          if (qIn) return;
          if (!rowBlocks) {
            f32.set(q.subarray(b.u0 * group * nq * dk, b.u1 * group * nq * dk), (qAt >>> 2) + b.u0 * group * nq * dk);
            return;
          }
          for (let h = 0; h < heads[p]; h++) {
            const from = ((b.u0 * group + h) * nq + b.i0) * dk, n = (b.i1 - b.i0) * dk;
            f32.set(q.subarray(from, from + n), (qAt >>> 2) + from);
          }
        },
        // Tells the threads that the inputs of blocks [0, count) are written (-1: the call is given up).
        written: (count) => {
          Atomics.store(ctl, CONTROL.WRITTEN, count);
          Atomics.notify(ctl, CONTROL.WRITTEN);
        },
        output: (p) => {
          if (oIn) return;
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
        check: (status) => this.#status(status),
        done: () => {
          if (released) return;
          released = true;
          this.#release(arena);
        },
      };
    }
  }

  /**
   * Lays out the parts of a pool KV cache's attend (web/pool/kvcache.js) in
   * an arena of its own: calls[p], a checked call over a range of the
   * cache's keys, read in place where the cache holds them in this memory
   * (KVCache#rangeCall), with its log-sum-exp asked; each with its own copy
   * of q, of its mask and bias, its output and lse, and its structs; scratch
   * for `slots` threads; the control words (CONTROL). Every input is
   * written here, before any thread is told. Returns what layout() returns,
   * with part(p), block p's { output, lse } (views: read them before
   * done()), in place of output; input(p) has nothing left to do; and
   * reading(), whether a thread may still read the cache for it, and
   * released, a Promise of done(); onDone() runs in done(), at once.
   */
  layoutRanges(calls, slots, onDone = () => {}) {
    const ex = this.exports;
    const sizes = calls.map((c) => {
      const rows = c.batch * c.heads * c.nq;
      return { q: rows * c.dk, out: rows * c.dv, lse: rows, bias: c.bias ? c.bias.data.length : 0, mask: c.mask ? c.mask.data.length : 0 };
    });
    // Per part: its structs and per-call arrays, q, output, lse, bias, then the mask's bytes.
    const partBytes = calls.map((c, p) => {
      const z = sizes[p];
      return align(FORWARD.i32 * 4 + perCallLength(c) * 4) + align(z.q * 4) + align(z.out * 4) + align(z.lse * 4) + align(z.bias * 4) + align(z.mask);
    });
    const controlBytes = align((CONTROL.FLAGS + calls.length) * 4);
    const total = controlBytes + partBytes.reduce((a, b) => a + b, 0);
    let scratch = 0, arena = null;
    try {
      for (;;) {
        const bytes = total + slots * align(scratch * 4);
        arena = this.#fit(arena, bytes);
        const f32 = this.#f32, i32 = this.#i32, u8 = this.#u8;
        const control = arena.at, sAt = arena.at + total;
        const parts = [];
        let at = control + controlBytes, fits = true;
        const args = calls.map((c, p) => {
          const z = sizes[p], base = at;
          const qAt = base + align(FORWARD.i32 * 4 + perCallLength(c) * 4), oAt = qAt + align(z.q * 4), lAt = oAt + align(z.out * 4);
          const bAt = lAt + align(z.lse * 4), mAt = bAt + align(z.bias * 4);
          at += partBytes[p];
          parts.push({ oAt, lAt, out: z.out, lse: z.lse });
          const o = base >>> 2;
          this.#writeShape(o + FORWARD.shape, c, null, null);
          if (c.layout === 'bshd') {
            writeStrides(i32, o + FORWARD.shape + SHAPE.q, [c.nq * c.heads * c.dk, c.dk, c.heads * c.dk]);
            writeStrides(i32, o + FORWARD.shape + SHAPE.out, [c.nq * c.heads * c.dv, c.dv, c.heads * c.dv]);
          }
          writeStrides(i32, o + FORWARD.shape + SHAPE.k, c.kStrides);
          writeStrides(i32, o + FORWARD.shape + SHAPE.v, c.vStrides);
          writeOptions(f32, i32, o + FORWARD.options, c, c.mask ? mAt : 0, c.bias ? bAt : 0, base + FORWARD.i32 * 4);
          for (let i = 0; i < STEPS.WORDS; i++) i32[o + FORWARD.steps + i] = 0;
          i32[o + FORWARD.steps + STEPS.lse] = lAt;
          const dtype = c.kvDtype ?? 0;
          if (dtype !== 0) {
            const k = o + FORWARD.kv;
            i32[k + KV.dtype] = dtype; i32[k + KV.k] = c.kAt; i32[k + KV.v] = c.vAt;
            i32[k + KV.k_scales] = c.kScalesAt ?? 0; i32[k + KV.v_scales] = c.vScalesAt ?? 0;
            writeStrides(i32, k + KV.k_scale, c.scaleStrides ?? [0, 0, 0]);
            writeStrides(i32, k + KV.v_scale, c.scaleStrides ?? [0, 0, 0]);
          }
          f32.set(c.q, qAt >>> 2);
          if (c.bias) f32.set(c.bias.data, bAt >>> 2);
          if (c.mask) u8.set(c.mask.data, mAt);
          const shapeAt = base + FORWARD.shape * 4, optionsAt = base + FORWARD.options * 4, stepsAt = base + FORWARD.steps * 4;
          const need = c.rope ? ex.attn_sdpa_call_scratch_size_with(shapeAt, optionsAt, dtype, 0) >>> 0
            : ex.attn_sdpa_call_scratch_size(shapeAt, dtype, 0) >>> 0;
          if (need === 0) throw new RangeError(`attention-wasm: sizes nq=${c.nq} nk=${c.nk} dk=${c.dk} dv=${c.dv} are too large for wasm32`);
          if (need > scratch) fits = false;
          return dtype === 0 ? [shapeAt, qAt, c.kAt, c.vAt, oAt, optionsAt, stepsAt, sAt, need]
            : [shapeAt, qAt, base + FORWARD.kv * 4, oAt, optionsAt, stepsAt, sAt, need];
        });
        if (!fits) {
          scratch = Math.max(...args.map((a) => a.at(-1)));
          continue;
        }
        const ctl = this.#control(control, calls.length);
        // Written: the calls need not keep the caller's arrays alive.
        for (const c of calls) c.q = c.mask = c.bias = c.kvLengths = c.queryOffsets = c.sinks = c.alibi = c.out = null;
        const slotBytes = align(scratch * 4);
        let released = false, release;
        return {
          args,
          control,
          scratch: (slot) => sAt + slot * slotBytes,
          // Whether some thread may still read the call's memory or the cache's: a block is not computed and some part still runs.
          reading: () => !released && Atomics.load(ctl, CONTROL.DONE) < calls.length,
          // Resolves once no part of the call runs any more (done()).
          released: new Promise((resolve) => {
            release = resolve;
          }),
          input: () => {},
          written: (count) => {
            Atomics.store(ctl, CONTROL.WRITTEN, count);
            Atomics.notify(ctl, CONTROL.WRITTEN);
          },
          part: (p) => {
            this.#views();
            const { oAt, lAt, out, lse } = parts[p];
            return { output: this.#f32.subarray(oAt >>> 2, (oAt >>> 2) + out), lse: this.#f32.subarray(lAt >>> 2, (lAt >>> 2) + lse) };
          },
          check: (status) => this.#status(status),
          done: () => {
            if (released) return;
            released = true;
            this.#release(arena);
            onDone();
            release();
          },
        };
      }
    } catch (err) {
      if (arena !== null) this.#release(arena);
      throw err;
    }
  }

  // Throws a failed part's error (status nonzero).
  #status(status) {
    if (status === 0) return;
    const bytes = new Uint8Array(this.memory.buffer);
    const ptr = this.exports.attn_status_string(status) >>> 0;
    const message = new TextDecoder().decode(bytes.slice(ptr, bytes.indexOf(0, ptr)));
    throw new Error(`attention-wasm: attention: ${message} (status ${status})`);
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
