// pool.js - the pool's scheduler: AttentionPool, the same calls as the
// synchronous API as Promises, each run on the calling thread, whole on one
// worker, or cut into parts by the planner (planner.js) that the workers
// (workers.js) and the calling thread compute at once.
//
// A part is an ordinary sdpa call on sliced inputs (copied to the worker, so
// no cross-origin isolation is needed) that the C core computes exactly as
// in the whole call, so the result has the same bits as attn.sdpa with the
// same module. A call cut into T parts (T = threads) sends T - 1 to workers
// and computes the last on the calling thread's instance, in place, while
// they run: a caller that only waited would leave a core idle and pay one
// more copy and message (so a split call blocks its caller for about 1/T of
// its work; on the shared memory, for the blocks it claims and a bounded
// wait for the workers' last ones). On a page's main thread that would freeze the page for that
// long, so there the caller only waits (option callerShare; default: share
// everywhere but a window).
//
// Calls below SPLIT_MIN_FLOPS, and calls whose arguments are not plainly
// valid or cannot be posted to a worker, run on the calling thread's
// instance: no message round trip, and an invalid call throws exactly what
// attn.sdpa throws, before any worker takes it. So does every call of a pool
// with one thread: there the caller's share is the whole call. Valid calls
// with options the planner does not split run whole on one worker.

import { compileAttention, loadAttention } from '../attention.js';
import { Matrix, describe, toMatrix } from '../core/matrix.js';
import {
  SPLIT_MIN_FLOPS, blockOptions, mhaGroups, mhaPartOptions, mhaPlan, plainMatrix, plainSdpaOptions, sdpaBlocks, sdpaPlan, sdpaUnits,
} from './planner.js';
import { createPoolKVCache } from './kvcache.js';
import {
  CONTROL, claimBack, computeBlock, controlWords, createShared, sharedMemoryUnavailable, waitBlocks,
} from './shared.js';
import { Staging, stageViews } from './staging.js';
import { Workers, defaultThreads, newCall } from './workers.js';

// A page's main thread must stay free to paint; Node and workers may compute.
const DEFAULT_CALLER_SHARE = typeof document === 'undefined';
// Each thread is a worker with its own wasm memory and start-up cost: more
// than a machine has cores only adds both, and thousands look like a hang.
const MAX_THREADS = 256;
// A worker's block of a split matmul has at least this many rows of a: fewer
// and copying b to it costs more than its share of the product.
const MATMUL_ROWS_MIN = 32;
// pool.array's largest length: 2^30 floats are all of wasm32's 4 GiB.
const ARRAY_MAX = 2 ** 30 - 1;
// On the shared path, how long the calling thread, its own blocks done,
// waits on the memory for the workers' last ones (or as long as its own
// took, when that is longer) before it leaves them to the workers' answers.
const CALLER_WAIT_MS = 5;
// Runs f after the messages that already wait on this thread: a call that
// the calling thread finished itself resolves only then, so a caller that
// awaits call after call still lets the workers' answers in between (they
// free the workers and the calls' memory; resolved at once, a loop of
// awaits would hold them off until it ends).
const soon = typeof setImmediate === 'function' ? setImmediate : (f) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    f();
  };
  channel.port2.postMessage(null);
};

const POOL_KEYS = ['threads', 'simd', 'deterministic', 'wasm', 'worker', 'callerShare', 'memory'];
const MEMORY_MODES = ['auto', 'shared', 'copy'];

/**
 * Starts a pool of workers. Resolves when every worker has its instance;
 * rejects when one fails to start or does not answer within
 * WORKER_START_MS (workers.js).
 * @param {{ threads?: number, simd?: boolean, deterministic?: boolean,
 *   wasm?: URL | string | BufferSource | Response | WebAssembly.Module, worker?: URL | string,
 *   callerShare?: boolean, memory?: 'auto' | 'shared' | 'copy' }} [options]
 *   threads: default navigator.hardwareConcurrency (browser) or
 *   os.availableParallelism() (Node); simd, deterministic, wasm: as
 *   loadAttention; worker: where web/pool-worker.js is, for hosts that move files;
 *   callerShare: the calling thread computes one part of a split call (and a
 *   one-thread pool's calls) instead of waiting; default true in Node and in
 *   workers, false on a page's main thread, which must stay free to paint;
 *   memory: how split sdpa calls reach the workers: 'shared' (one shared
 *   WebAssembly.Memory, inputs written once and read in place: needs
 *   SharedArrayBuffer, so Node or a crossOriginIsolated page, and a SIMD
 *   build of the package's own modules, not a `wasm` option), 'copy' (each
 *   worker gets a copy of its part), or 'auto' (the default: shared where it
 *   can be, else copy). Forcing 'shared' where it cannot be rejects, saying why.
 * @returns {Promise<AttentionPool>}
 */
export async function createAttentionPool(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`createAttentionPool: options must be an object, got ${describe(options)}`);
  }
  for (const key in options) {
    if (!POOL_KEYS.includes(key)) {
      throw new TypeError(`createAttentionPool: unknown option ${JSON.stringify(key)} (known: ${POOL_KEYS.join(', ')})`);
    }
  }
  const threads = options.threads ?? await defaultThreads();
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    const E = typeof threads === 'number' ? RangeError : TypeError;
    throw new E(`createAttentionPool: threads must be an integer from 1 to ${MAX_THREADS}, got ${describe(threads)}`);
  }
  const worker = options.worker ?? null;
  if (worker !== null && !(worker instanceof URL) && typeof worker !== 'string') {
    throw new TypeError(`createAttentionPool: worker must be a URL or string, got ${describe(worker)}`);
  }
  const callerShare = options.callerShare ?? DEFAULT_CALLER_SHARE;
  if (typeof callerShare !== 'boolean') {
    throw new TypeError(`createAttentionPool: callerShare must be a boolean, got ${describe(callerShare)}`);
  }
  const memory = options.memory ?? 'auto';
  if (!MEMORY_MODES.includes(memory)) {
    throw new TypeError(`createAttentionPool: memory must be one of ${MEMORY_MODES.map((m) => `'${m}'`).join(', ')}, got ${describe(memory)}`);
  }
  const loadOptions = {};
  for (const key of ['simd', 'deterministic', 'wasm']) if (options[key] !== undefined) loadOptions[key] = options[key];
  const module = await compileAttention(loadOptions);
  const local = await loadAttention({ wasm: module });
  let shared = null;
  if (memory !== 'copy') {
    let why = options.wasm !== undefined ? 'it runs the package\'s threads builds, and a wasm option names another module' : sharedMemoryUnavailable();
    if (why === null) {
      try {
        shared = await createShared(local.isa, (url) => compileAttention({ wasm: url }));
      } catch (err) {
        why = err.message;
      }
    }
    if (shared === null && memory === 'shared') {
      local.dispose();
      throw new Error(`createAttentionPool: memory 'shared' cannot be used here: ${why}; memory 'auto' (the default) falls back to copies`);
    }
  }
  const init = shared === null ? undefined
    : () => ({ shared: { module: shared.module, memory: shared.memory, stack: shared.stack() } });
  const pool = new AttentionPool(new Workers(worker, module, init), local, threads, callerShare, shared);
  try {
    await pool._start();
  } catch (err) {
    pool.dispose();
    throw err;
  }
  return pool;
}

/** A pool of workers, each with an instance of one module. Make one with createAttentionPool(). */
export class AttentionPool {
  #workers;
  #local;
  #threads;
  #callerShare;
  #staging;
  #shared;
  #disposed = false;
  #stats = { local: 0, whole: 0, split: 0, parts: 0, here: 0 };

  /** @internal use createAttentionPool() */
  constructor(workers, local, threads, callerShare, shared) {
    this.#workers = workers;
    this.#local = local;
    this.#threads = threads;
    this.#callerShare = callerShare;
    this.#staging = new Staging(threads);
    this.#shared = shared;
  }

  /**
   * How split sdpa calls reach the workers: 'shared' (one shared memory,
   * inputs read in place) or 'copy' (a copy of each part); see the memory
   * option of createAttentionPool.
   * @returns {'shared' | 'copy'}
   */
  get memory() {
    return this.#shared === null ? 'copy' : 'shared';
  }

  /**
   * A Float32Array of `length` zeros that split sdpa calls read in place
   * (as q, k, v or bias, or a subarray of one) and write in place (as
   * `out`, unless it overlaps one of the inputs): on the shared memory it
   * lives there, and a call that gets such arrays copies nothing of them;
   * on copies it is an ordinary Float32Array. It lasts as long as the pool
   * (allocate once and reuse it: there is no free). Until a call resolves,
   * its inputs must not change and its out holds partial results.
   * @param {number} length
   * @returns {Float32Array}
   */
  array(length) {
    this.#live();
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > ARRAY_MAX) {
      const E = typeof length === 'number' ? RangeError : TypeError;
      throw new E(`pool.array: length must be an integer from 0 to ${ARRAY_MAX}, got ${describe(length)}`);
    }
    return this.#shared === null ? new Float32Array(length) : this.#shared.array(length);
  }

  /** Whether the calling thread computes a share of split calls (see createAttentionPool). */
  get callerShare() {
    return this.#callerShare;
  }

  /** Number of workers. */
  get threads() {
    return this.#threads;
  }

  /** The build every worker runs: 'relaxed-simd', 'simd128' or 'scalar'. */
  get isa() {
    return this.#local.isa;
  }

  /**
   * What the pool did with its sdpa, multiHeadAttention and matmul calls
   * so far (a kvCache's calls are not counted): `local` ran on the calling
   * thread (small or invalid), `whole` went to one worker unsplit, `split`
   * were cut into `parts` in all, `here` of which the calling thread
   * computed (the last part of each split call; workers the others). On the
   * shared memory a split call's parts are the threads that take part, at
   * most `threads`, which claim its blocks between them. A copy.
   * @returns {{ local: number, whole: number, split: number, parts: number, here: number }}
   */
  get stats() {
    return { ...this.#stats };
  }

  /** @internal starts the workers; createAttentionPool awaits it. */
  async _start() {
    await this.#workers.start(this.#threads);
  }

  #live() {
    if (this.#disposed) throw new Error('attention-wasm pool: this pool was disposed; call createAttentionPool() for a new one');
  }

  // Runs parts (each { message, transfer, deliver(result) }) on the workers;
  // resolves with finish() once all have delivered, rejects on the first error.
  // A last part with here() instead of a message runs on the calling thread
  // once the others are queued: the caller computes a share instead of idling.
  #run(parts, finish) {
    if (parts.length === 1) this.#stats.whole++;
    else this.#stats.split++;
    this.#stats.parts += parts.length;
    return new Promise((resolve, reject) => {
      let left = parts.length;
      const call = newCall(reject);
      const own = parts.at(-1).here ? parts.at(-1) : null;
      this.#workers.submit((own ? parts.slice(0, -1) : parts).map((part) => ({
        call, message: part.message, transfer: part.transfer, settled: part.settled,
        deliver(result) {
          if (call.failed) return;
          part.deliver(result);
          if (--left === 0) resolve(finish());
        },
      })));
      if (own) {
        this.#stats.here++;
        try {
          own.here();
        } catch (err) {
          call.fail(err);
          return;
        } finally {
          own.settled?.();
        }
        if (--left === 0) resolve(finish());
      }
    });
  }

  /**
   * attn.sdpa on the pool: the same arguments, the same result (bits
   * included, with the same module), as a Promise.
   * @returns {Promise<Float32Array | object>} as attn.sdpa
   */
  async sdpa(q, k, v, options) {
    this.#live();
    const plan = sdpaPlan(q, k, v, options);
    // One thread: the caller's share is the whole call (a worker would only add copies).
    const alone = this.#threads === 1;
    if (plan === null || plan.work < SPLIT_MIN_FLOPS || (alone && this.#callerShare)) {
      this.#stats.local++;
      return this.#local.sdpa(q, k, v, options);
    }
    if (!plan.split || alone) return this.#sdpaWhole(q, k, v, options);
    const out = options.out ?? new Float32Array(plan.batch * plan.heads * plan.nq * plan.dv);
    const blocks = sdpaBlocks(plan, this.#threads);
    if (this.#shared !== null && blocks.length > 1) return this.#sdpaShared(plan, q, k, v, out);
    const parts = blocks.map((block, p) => sdpaPart(plan, block, q, k, v, out,
      p === blocks.length - 1 && blocks.length > 1 && this.#callerShare ? this.#local : null, this.#staging));
    return this.#run(parts, () => out);
  }

  // A split call on the shared memory: laid out in more blocks than threads
  // (sdpaUnits), which the workers claim from the front and, when it
  // shares, the calling thread from the back (shared.js). The calling
  // thread writes every block's inputs first, in order, announcing each, so
  // the workers start on the first blocks while the rest are copied (and
  // the calling thread, busy copying, claims fewer). Each block's output is
  // copied out once it is known to be done: between the calling thread's
  // blocks, from a worker's answer, or from the memory's count of done
  // blocks, which the calling thread waits on for a while after its own
  // last block instead of waiting for the answers' messages. The call's
  // arena is freed once every job has settled.
  #sdpaShared(plan, q, k, v, out) {
    const blocks = sdpaUnits(plan, this.#threads), n = blocks.length;
    const parts = Math.min(this.#threads, n);
    const call = this.#shared.layout(plan, blocks, q, k, v, out, parts);
    this.#stats.split++;
    this.#stats.parts += parts;
    if (this.#callerShare) this.#stats.here++;
    return this.#claimed(call, n, (p) => call.output(p), () => out);
  }

  // Runs a call laid out on the shared memory (shared.js: layout,
  // layoutRanges), n blocks claimed by the workers and, with callerShare,
  // the calling thread; take(p) as each block is done, once; resolves with
  // result() once all are.
  #claimed(call, n, take, result) {
    // The threads taking part: one part each, the calling thread's the last.
    const parts = Math.min(this.#threads, n);
    const caller = this.#callerShare, jobs = caller ? parts - 1 : parts;
    const shared = this.#shared;
    const ctl = controlWords(shared.memory, call.control, n);
    return new Promise((resolve, reject) => {
      const job = newCall(reject);
      const copied = new Uint8Array(n);
      let left = n, running = parts, written = 0;
      const settled = () => {
        if (--running === 0) call.done();
      };
      const once = (p) => {
        if (copied[p]) return;
        copied[p] = 1;
        take(p);
        left--;
      };
      // A call the calling thread finished itself resolves after the
      // messages already waiting (see soon). result() runs once: answers
      // that come after the call is done add nothing.
      const finish = (here) => {
        if (left === 0 && !job.failed && !job.finished) {
          // Its jobs still queued have nothing left to claim: the workers skip them.
          job.finished = true;
          (here ? soon : (f) => f())(() => resolve(result()));
        }
      };
      this.#workers.submit(Array.from({ length: jobs }, (_, j) => ({
        call: job,
        message: { method: 'sdpaClaim', args: call.args, control: call.control, scratch: call.scratch(j) },
        transfer: [],
        deliver: (list) => {
          if (job.failed) return;
          for (const p of list) once(p);
          finish(false);
        },
        settled,
      })));
      try {
        // Every input before any block's output lands in out (which may share a buffer with them),
        // block by block, so the workers start on the first while the rest are copied.
        for (; written < n; written++) {
          call.input(written);
          call.written(written + 1);
        }
        if (!caller) return;
        const t0 = performance.now(), scratch = call.scratch(jobs);
        for (let p; Atomics.load(ctl, CONTROL.FAILED) === 0 && (p = claimBack(ctl)) >= 0;) {
          computeBlock(shared.exports, ctl, call.args, p, scratch, call.check);
          once(p);
          for (let i = 0; i < n; i++) if (!copied[i] && Atomics.load(ctl, CONTROL.FLAGS + i) === 1) once(i);
        }
        if (left > 0 && waitBlocks(ctl, n, Math.max(CALLER_WAIT_MS, performance.now() - t0))) {
          for (let i = 0; i < n; i++) once(i);
        }
        finish(true);
      } catch (err) {
        call.written(-1);
        job.fail(err);
      } finally {
        if (caller) settled();
      }
    });
  }

  // Options the planner does not split, or one thread and a caller that must
  // not compute: the whole call on one worker. Its output lands in out when
  // given; results with steps or stats are objects and come back as they
  // are. Options that cannot be posted never reach a worker: the calling
  // thread's instance throws sdpa's error for them.
  #sdpaWhole(q, k, v, options) {
    const sent = plainSdpaOptions(options);
    if (sent === null) {
      this.#stats.local++;
      return this.#local.sdpa(q, k, v, options);
    }
    const given = options.out;
    const qc = q.slice(), kc = k.slice(), vc = v.slice();
    let result;
    return this.#run([{
      message: { method: 'sdpa', q: qc, k: kc, v: vc, options: sent },
      transfer: [qc.buffer, kc.buffer, vc.buffer],
      deliver: (r) => {
        result = r;
      },
    }], () => {
      if (given == null) return result;
      if (result instanceof Float32Array) {
        given.set(result);
        return given;
      }
      given.set(result.output);
      return { ...result, output: given };
    });
  }

  /**
   * attn.multiHeadAttention on the pool: the same arguments and result, as a
   * Promise. Large calls are split over groups of heads: each worker
   * projects and attends its heads (with its columns of wq, wk, wv); the
   * heads are concatenated here and multiplied by wo.
   * @returns {Promise<{ output: import('../core/matrix.js').Matrix, weights?: import('../core/matrix.js').Matrix[], scores?: import('../core/matrix.js').Matrix[], scaled?: import('../core/matrix.js').Matrix[] }>}
   */
  async multiHeadAttention(x, options) {
    this.#live();
    const plan = mhaPlan(x, options);
    if (plan === null || plan.work < SPLIT_MIN_FLOPS || (this.#threads === 1 && this.#callerShare)) {
      this.#stats.local++;
      return this.#local.multiHeadAttention(x, options);
    }
    const { X, WO, heads, group, dv } = plan, n = X.rows;
    const concat = new Float32Array(n * heads * dv);
    const groups = mhaGroups(plan, this.#threads);
    const parts = groups.map((g, p) => {
      const opts = mhaPartOptions(plan, g);
      const width = (g.g1 - g.g0) * group * dv, at = g.g0 * group * dv;
      const deliver = (result) => {
        const data = result.output.data;
        for (let i = 0; i < n; i++) concat.set(data.subarray(i * width, (i + 1) * width), i * heads * dv + at);
      };
      if (p === groups.length - 1 && groups.length > 1 && this.#callerShare) {
        // The caller's share of the heads.
        return { here: () => deliver(this.#local.multiHeadAttention(X, opts)) };
      }
      return {
        message: { method: 'multiHeadAttention', x: plainMatrix(X), options: opts },
        transfer: [opts.wq.data.buffer, opts.wk.data.buffer, opts.wv.data.buffer],
        deliver,
      };
    });
    return this.#run(parts, () => {
      const output = new Matrix(n, heads * dv, concat);
      return { output: WO ? this.#local.matmul(output, WO) : output };
    });
  }

  /**
   * attn.matmul on the pool: the same arguments and result (bits included),
   * as a Promise. A large product is split by rows of a: each worker
   * multiplies its block of rows by all of b, which gives each row the same
   * sums in the same order as one call does.
   * @returns {Promise<Matrix>}
   */
  async matmul(a, b, options) {
    this.#live();
    const A = toMatrix(a, 'matmul: a');
    const B = toMatrix(b, 'matmul: b', A.cols);
    const work = 2 * A.rows * A.cols * B.cols;
    const blocks = Math.min(this.#threads + (this.#callerShare ? 1 : 0), Math.floor(A.rows / MATMUL_ROWS_MIN));
    if (options != null || work < SPLIT_MIN_FLOPS || blocks < 2) {
      this.#stats.local++;
      return this.#local.matmul(A, B, options);
    }
    const out = new Float32Array(A.rows * B.cols);
    // Blocks of whole 4-row tiles (c/kernels/f32-gemm-*: each row's sums do not depend on its tile).
    const rows = Math.ceil(A.rows / blocks / 4) * 4;
    const parts = [];
    for (let r0 = 0; r0 < A.rows; r0 += rows) {
      const r1 = Math.min(A.rows, r0 + rows);
      const block = new Matrix(r1 - r0, A.cols, A.data.slice(r0 * A.cols, r1 * A.cols));
      const deliver = (data) => out.set(data, r0 * B.cols);
      if (r1 === A.rows && this.#callerShare) parts.push({ here: () => deliver(this.#local.matmul(block, B).data) });
      else {
        const bc = B.data.slice();
        parts.push({ message: { method: 'matmul', a: plainMatrix(block), b: { rows: B.rows, cols: B.cols, data: bc } }, transfer: [block.data.buffer, bc.buffer], deliver });
      }
    }
    return this.#run(parts, () => new Matrix(A.rows, B.cols, out));
  }

  /**
   * attn.kvCache on the pool: a cache that the workers and the calling
   * thread attend at once (web/pool/kvcache.js: on the shared memory, one
   * cache whose key ranges every thread claims; else split by position over
   * their own memories), so one decode step's attend runs on every core.
   * The same options and errors; resolves when every part has its memory.
   * @returns {Promise<import('./kvcache.js').PoolKVCache>}
   */
  kvCache(options) {
    const shared = this.#shared;
    return createPoolKVCache({
      local: this.#local, workers: this.#workers, threads: this.#threads, callerShare: this.#callerShare, live: () => this.#live(),
      shared: shared && {
        attention: () => shared.attention(),
        layout: (calls, slots, onDone) => shared.layoutRanges(calls, slots, onDone),
        owns: (x) => shared.owns(x),
        claimed: (call, n, take, result) => this.#claimed(call, n, take, result),
      },
    }, options);
  }

  /** Stops the workers and frees the instances; later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#workers.dispose(new Error('attention-wasm pool: disposed during this call'));
    this.#local.dispose();
  }

  /** dispose(), for `using pool = await createAttentionPool()`. */
  [Symbol.dispose]() {
    this.dispose();
  }
}

// One part of a split sdpa call: the block's inputs and where its output
// goes. With `local` (the calling thread's instance) the part runs there,
// reading the inputs in place; else it is a message for a worker: its heads
// or rows of q (with GQA, only the kv heads they read), its mask and bias
// rows, and room for its output, in one staging buffer that is moved there
// and back (staging.js). The worker writes its output into that buffer, and
// deliver copies it straight into `out`.
function sdpaPart(plan, block, q, k, v, out, local, staging) {
  const { nq, nk, dk, dv, group } = plan;
  const { u0, u1, i0, i1 } = block;
  const opts = blockOptions(plan, block);
  const kb = k.subarray(u0 * nk * dk, u1 * nk * dk), vb = v.subarray(u0 * nk * dv, u1 * nk * dv);
  const heads = (u1 - u0) * group, rows = i1 - i0;
  // Whole (batch, kv head) groups are contiguous in q, k, v and the output;
  // a row block [i0, i1) is a run of rows in each of its query heads.
  const whole = i0 === 0 && i1 === nq;
  const headAt = (h, d) => ((u0 * group + h) * nq + i0) * d;
  const gather = (into) => {
    if (whole) into.set(q.subarray(u0 * group * nq * dk, u1 * group * nq * dk));
    else for (let h = 0; h < heads; h++) into.set(q.subarray(headAt(h, dk), headAt(h, dk) + rows * dk), h * rows * dk);
    return into;
  };
  const scatter = (result) => {
    if (whole) out.set(result, u0 * group * nq * dv);
    else for (let h = 0; h < heads; h++) out.set(result.subarray(h * rows * dv, (h + 1) * rows * dv), headAt(h, dv));
  };
  if (local) {
    if (whole) {
      const at = u0 * group * nq * dv;
      const qb = q.subarray(u0 * group * nq * dk, u1 * group * nq * dk);
      return { here: () => local.sdpa(qb, kb, vb, { ...opts, out: out.subarray(at, at + heads * nq * dv) }) };
    }
    return { here: () => scatter(local.sdpa(gather(new Float32Array(heads * rows * dk)), kb, vb, opts)) };
  }
  const { mask = null, bias = null } = opts;
  const [qs, ks, vs, ms, bs, os] = stageViews(staging, [
    [Float32Array, heads * rows * dk], [Float32Array, kb.length], [Float32Array, vb.length],
    [mask?.constructor ?? Uint8Array, mask?.length ?? 0], [Float32Array, bias?.length ?? 0], [Float32Array, heads * rows * dv],
  ]);
  gather(qs);
  ks.set(kb);
  vs.set(vb);
  if (mask !== null) opts.mask = copied(ms, mask);
  if (bias !== null) opts.bias = copied(bs, bias);
  opts.out = os;
  return {
    message: { method: 'sdpa', q: qs, k: ks, v: vs, options: opts },
    transfer: [qs.buffer],
    deliver(result) {
      scatter(result);
      staging.give(result.buffer);
    },
  };
}

function copied(into, from) {
  into.set(from);
  return into;
}
