// pool.js - attention on several cores: a pool of workers (Node worker
// threads, browser module Workers), each with its own instance of one
// compiled module, behind the same calls as the synchronous API, as Promises.
//
// A large sdpa call is cut into parts that the C core computes exactly as
// it would in one call: whole (batch, kv head) groups (a kv head with all
// of its query heads), or, when there are fewer groups than workers and the
// call is not causal, blocks of query rows whose bounds are multiples of the
// kernel's 4-row tile. Each part is an ordinary sdpa call on sliced inputs
// (copied to the worker, so no cross-origin isolation is needed), so the
// result has the same bits as attn.sdpa with the same module. A call cut
// into T parts (T = threads) sends T - 1 to workers and computes the last
// on the calling thread's instance, in place, while they run: a caller that
// only waited would leave a core idle and pay one more copy and message
// (so a split call blocks its caller for about 1/T of its work). On a page's
// main thread that would freeze the page for that long, so there the caller
// only waits (option callerShare; default: share everywhere but a window).
// Calls below
// SPLIT_MIN_FLOPS, and calls whose arguments are not plainly valid, run on
// an instance on the calling thread: no message round trip, and an invalid
// call throws exactly what attn.sdpa throws. So does every call of a pool
// with one thread: there the caller's share is the whole call. Valid calls
// with options the pool does not know how to split run whole on one worker.

import { compileAttention, loadAttention } from './attention.js';
import { Matrix, describe, toMask, toMatrix } from './core/matrix.js';

// Work (FLOPs, 2 (dk + dv) per query-key pair) below which a call runs on
// the calling thread (about 1 ms of one core): a sleeping worker wakes in
// tens of microseconds on an idle machine but in milliseconds on a busy one,
// and below this the threads could not win that back (bench/pool.js times a
// call just above it).
const SPLIT_MIN_FLOPS = 2 ** 25;
// The smallest block of query rows a worker gets: a multiple of the fused
// kernel's 4-row tile, and far above the decode kernel's sizes (fewer than 4
// rows, or n_q n_k d_k <= 2048), so every block takes the fused kernel as
// the whole call does.
const MIN_BLOCK_ROWS = 64;
const TILE_ROWS = 4;

// sdpa options the pool splits; the others run whole on one worker.
const SDPA_KEYS = new Set(['batch', 'heads', 'kvHeads', 'nq', 'nk', 'dk', 'dv', 'causal', 'mask', 'bias', 'scale', 'out',
  'softcap', 'window', 'queryOffset']);
const INT32_MAX = 2 ** 31 - 1;
// multiHeadAttention options split over head groups (the others are per
// head or per query and go to every worker as they are).
const MHA_KEYS = new Set(['wq', 'wk', 'wv', 'wo', 'heads', 'kvHeads', 'context', 'causal', 'mask', 'bias', 'scale', 'steps',
  'softcap', 'window', 'queryOffset']);

const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined && typeof window === 'undefined';
// A page's main thread must stay free to paint; Node and workers may compute.
const DEFAULT_CALLER_SHARE = typeof document === 'undefined';
const POOL_KEYS = ['threads', 'simd', 'deterministic', 'wasm', 'worker', 'callerShare'];

/**
 * Starts a pool of workers. Resolves when every worker has its instance.
 * @param {{ threads?: number, simd?: boolean, deterministic?: boolean,
 *   wasm?: URL | string | BufferSource | Response | WebAssembly.Module, worker?: URL | string,
 *   callerShare?: boolean }} [options]
 *   threads: default navigator.hardwareConcurrency (browser) or
 *   os.availableParallelism() (Node); simd, deterministic, wasm: as
 *   loadAttention; worker: where web/pool-worker.js is, for hosts that move files;
 *   callerShare: the calling thread computes one part of a split call (and a
 *   one-thread pool's calls) instead of waiting; default true in Node and in
 *   workers, false on a page's main thread, which must stay free to paint.
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
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1) {
    const E = typeof threads === 'number' ? RangeError : TypeError;
    throw new E(`createAttentionPool: threads must be a positive integer, got ${describe(threads)}`);
  }
  const worker = options.worker ?? new URL('./pool-worker.js', import.meta.url);
  if (!(worker instanceof URL) && typeof worker !== 'string') {
    throw new TypeError(`createAttentionPool: worker must be a URL or string, got ${describe(worker)}`);
  }
  const callerShare = options.callerShare ?? DEFAULT_CALLER_SHARE;
  if (typeof callerShare !== 'boolean') {
    throw new TypeError(`createAttentionPool: callerShare must be a boolean, got ${describe(callerShare)}`);
  }
  const loadOptions = {};
  for (const key of ['simd', 'deterministic', 'wasm']) if (options[key] !== undefined) loadOptions[key] = options[key];
  const module = await compileAttention(loadOptions);
  const local = await loadAttention({ wasm: module });
  const pool = new AttentionPool(module, local, threads, worker, callerShare);
  try {
    await pool._start();
  } catch (err) {
    pool.dispose();
    throw err;
  }
  return pool;
}

async function defaultThreads() {
  if (isNode) {
    const osName = 'node:os';
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ osName);
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 1);
}

// One worker, Node or browser, behind one small interface.
async function spawn(url, onMessage, onDeath) {
  let dead = false;
  const die = (err) => {
    if (!dead) {
      dead = true;
      onDeath(err);
    }
  };
  if (isNode) {
    const name = 'node:worker_threads';
    const { Worker } = await import(/* webpackIgnore: true */ /* @vite-ignore */ name);
    const w = new Worker(typeof url === 'string' ? new URL(url, `file://${process.cwd()}/`) : url);
    w.on('message', onMessage);
    w.on('error', (err) => die(err));
    w.on('exit', (code) => die(new Error(`exited with code ${code}`)));
    return {
      post: (m, t) => w.postMessage(m, t),
      terminate() {
        dead = true;
        return w.terminate();
      },
      // An idle pool does not keep Node running.
      ref: () => w.ref(),
      unref: () => w.unref(),
    };
  }
  const w = new Worker(url, { type: 'module' });
  w.onmessage = (event) => onMessage(event.data);
  w.onerror = (event) => {
    event.preventDefault?.();
    die(new Error(event.message || 'the worker failed to load or threw'));
  };
  w.onmessageerror = () => die(new Error('a message could not be read'));
  return {
    post: (m, t) => w.postMessage(m, t),
    terminate() {
      dead = true;
      w.terminate();
    },
    ref() {},
    unref() {},
  };
}

const ERRORS = { TypeError, RangeError };

/** A pool of workers, each with an instance of one module. Make one with createAttentionPool(). */
export class AttentionPool {
  #module;
  #local;
  #threads;
  #workerURL;
  #callerShare;
  #slots = [];
  #queue = [];
  #nextId = 1;
  #disposed = false;
  #stats = { local: 0, whole: 0, split: 0, parts: 0, here: 0 };

  /** @internal use createAttentionPool() */
  constructor(module, local, threads, workerURL, callerShare) {
    this.#module = module;
    this.#local = local;
    this.#threads = threads;
    this.#workerURL = workerURL;
    this.#callerShare = callerShare;
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
   * What the pool did with its calls so far: `local` ran on the calling
   * thread (small or invalid), `whole` went to one worker unsplit, `split`
   * were cut into `parts` in all, `here` of which the calling thread
   * computed (the last part of each split call; workers the others). A copy.
   * @returns {{ local: number, whole: number, split: number, parts: number, here: number }}
   */
  get stats() {
    return { ...this.#stats };
  }

  /** @internal starts the workers; createAttentionPool awaits it. */
  async _start() {
    await Promise.all(Array.from({ length: this.#threads }, () => this.#addSlot()));
  }

  // A new worker with its instance; resolves when it is ready.
  async #addSlot() {
    const slot = { handle: null, item: null, ready: false };
    this.#slots.push(slot);
    let readyResolve, readyReject;
    const ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    const onMessage = (data) => {
      if (data.type === 'ready') {
        slot.ready = true;
        slot.handle.unref();
        readyResolve();
        this.#pump();
      } else if (data.type === 'failed') {
        readyReject(rebuild(data, 'createAttentionPool: a worker could not load the module'));
      } else {
        this.#done(slot, data);
      }
    };
    const onDeath = (err) => {
      readyReject(new Error(`createAttentionPool: a worker failed to start: ${err.message}`));
      this.#died(slot, err);
    };
    slot.handle = await spawn(this.#workerURL, onMessage, onDeath);
    slot.handle.post({ type: 'init', module: this.#module });
    return ready;
  }

  // A worker died: its call fails, and a new worker takes its place.
  #died(slot, err) {
    const i = this.#slots.indexOf(slot);
    if (i < 0) return;
    this.#slots.splice(i, 1);
    const item = slot.item;
    slot.item = null;
    if (item) item.call.fail(new Error(`attention-wasm pool: a worker stopped during this call (${err.message}); the pool has replaced it, later calls work`));
    if (this.#disposed || !slot.ready) return; // a worker that never started is not retried
    this.#addSlot().catch(() => {
      // No worker could start again: calls waiting for one must not wait forever.
      if (this.#slots.length === 0) for (const queued of this.#queue.splice(0)) queued.call.fail(new Error('attention-wasm pool: no worker could be started'));
    });
  }

  #done(slot, data) {
    const item = slot.item;
    slot.item = null;
    slot.handle.unref();
    if (item && item.id === data.id) {
      if (data.error) item.call.fail(rebuild(data.error));
      else item.deliver(data.result);
    }
    this.#pump();
  }

  // Hands queued parts to idle workers.
  #pump() {
    for (const slot of this.#slots) {
      if (!slot.ready || slot.item) continue;
      let item;
      do item = this.#queue.shift(); while (item !== undefined && item.call.failed);
      if (item === undefined) return;
      slot.item = item;
      slot.handle.ref();
      slot.handle.post({ id: item.id, ...item.message }, item.transfer);
    }
  }

  #live() {
    if (this.#disposed) throw new Error('attention-wasm pool: this pool was disposed; call createAttentionPool() for a new one');
  }

  // Runs parts (each { message, transfer, deliver(result) }) on the workers;
  // resolves with finish() once all have delivered, rejects on the first error.
  // A last part with here() instead of a message runs on the calling thread
  // once the others are posted: the caller computes a share instead of idling.
  #run(parts, finish) {
    if (parts.length === 1) this.#stats.whole++;
    else this.#stats.split++;
    this.#stats.parts += parts.length;
    return new Promise((resolve, reject) => {
      let left = parts.length;
      const call = {
        failed: false,
        fail(err) {
          if (!call.failed) {
            call.failed = true;
            reject(err);
          }
        },
      };
      const own = parts.at(-1).here ? parts.at(-1) : null;
      for (const part of own ? parts.slice(0, -1) : parts) {
        this.#queue.push({
          id: this.#nextId++, call, message: part.message, transfer: part.transfer,
          deliver(result) {
            if (call.failed) return;
            part.deliver(result);
            if (--left === 0) resolve(finish());
          },
        });
      }
      this.#pump();
      if (own) {
        this.#stats.here++;
        try {
          own.here();
        } catch (err) {
          call.fail(err);
          return;
        }
        if (--left === 0) resolve(finish());
      }
    });
  }

  /**
   * attn.sdpa on the pool: the same arguments, the same result (bits
   * included, with the same module), as a Promise.
   * @returns {Promise<Float32Array>}
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
    const { batch, heads, kvHeads, nq, nk, dk, dv } = plan;
    if (plan.unknown || alone) {
      // Options this pool does not split, or one thread and a caller that
      // must not compute: the whole call on one worker. Its
      // output lands in out when given; results with steps or stats are
      // objects and come back as they are.
      const { out: given, ...rest } = options;
      const qc = q.slice(), kc = k.slice(), vc = v.slice();
      let result;
      return this.#run([{
        message: { method: 'sdpa', q: qc, k: kc, v: vc, options: rest },
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
    const out = options.out ?? new Float32Array(batch * heads * nq * dv);
    const group = heads / kvHeads, units = batch * kvHeads, T = this.#threads;
    const common = { nq, nk, dk, dv };
    for (const key of ['causal', 'scale', 'softcap', 'window']) if (options[key] != null) common[key] = options[key];
    const offset = options.queryOffset ?? 0;
    const parts = [];
    const blocks = units >= T ? 1 : Math.min(T / gcd(units, T), Math.floor(nq / MIN_BLOCK_ROWS));
    if (blocks <= 1) {
      // Whole (batch, kv head) groups: contiguous in q, k, v and the output.
      const count = Math.min(T, units);
      for (let p = 0; p < count; p++) {
        const u0 = Math.floor(units * p / count), u1 = Math.floor(units * (p + 1) / count);
        const opts = { ...common, heads: (u1 - u0) * group, kvHeads: u1 - u0 };
        if (options.queryOffset != null) opts.queryOffset = offset;
        if (options.mask != null) opts.mask = options.mask;
        if (options.bias != null) opts.bias = options.bias;
        if (p === count - 1 && count > 1 && this.#callerShare) {
          // The caller's share reads the inputs in place and writes straight into out.
          parts.push({
            here: () => this.#local.sdpa(q.subarray(u0 * group * nq * dk, u1 * group * nq * dk),
              k.subarray(u0 * nk * dk, u1 * nk * dk), v.subarray(u0 * nk * dv, u1 * nk * dv),
              { ...opts, out: out.subarray(u0 * group * nq * dv, u1 * group * nq * dv) }),
          });
          continue;
        }
        const qc = q.slice(u0 * group * nq * dk, u1 * group * nq * dk);
        const kc = k.slice(u0 * nk * dk, u1 * nk * dk), vc = v.slice(u0 * nk * dv, u1 * nk * dv);
        parts.push({
          message: { method: 'sdpa', q: qc, k: kc, v: vc, options: opts },
          transfer: [qc.buffer, kc.buffer, vc.buffer],
          deliver: (result) => out.set(result, u0 * group * nq * dv),
        });
      }
    } else {
      // Blocks of query rows of each group, bounds on the 4-row tile; block
      // rows keep their positions through queryOffset (causal, window).
      const bounds = rowBlocks(nq, nk, blocks, options.causal === true, offset);
      for (let u = 0; u < units; u++) {
        const kc = k.subarray(u * nk * dk, (u + 1) * nk * dk), vc = v.subarray(u * nk * dv, (u + 1) * nk * dv);
        for (let r = 0; r + 1 < bounds.length; r++) {
          const i0 = bounds[r], i1 = bounds[r + 1];
          const rows = i1 - i0;
          const qc = new Float32Array(group * rows * dk);
          for (let h = 0; h < group; h++) {
            const from = ((u * group + h) * nq + i0) * dk;
            qc.set(q.subarray(from, from + rows * dk), h * rows * dk);
          }
          const opts = { ...common, heads: group, kvHeads: 1, nq: rows, queryOffset: offset + i0 };
          if (options.mask != null) opts.mask = options.mask.slice(i0 * nk, i1 * nk);
          if (options.bias != null) opts.bias = options.bias.slice(i0 * nk, i1 * nk);
          const deliver = (result) => {
            for (let h = 0; h < group; h++) {
              out.set(result.subarray(h * rows * dv, (h + 1) * rows * dv), ((u * group + h) * nq + i0) * dv);
            }
          };
          if (u === units - 1 && r + 2 === bounds.length && units * (bounds.length - 1) > 1 && this.#callerShare) {
            // The caller's share reads K and V in place.
            parts.push({ here: () => deliver(this.#local.sdpa(qc, kc, vc, opts)) });
            continue;
          }
          // Copies of K and V are moved, not cloned a second time.
          const kk = kc.slice(), vv = vc.slice();
          parts.push({
            message: { method: 'sdpa', q: qc, k: kk, v: vv, options: opts },
            transfer: [qc.buffer, kk.buffer, vv.buffer],
            deliver,
          });
        }
      }
    }
    return this.#run(parts, () => out);
  }

  /**
   * attn.multiHeadAttention on the pool: the same arguments and result, as a
   * Promise. Large calls are split over groups of heads: each worker
   * projects and attends its heads (with its columns of wq, wk, wv); the
   * heads are concatenated here and multiplied by wo.
   * @returns {Promise<{ output: import('./core/matrix.js').Matrix, weights?: import('./core/matrix.js').Matrix[], scores?: import('./core/matrix.js').Matrix[], scaled?: import('./core/matrix.js').Matrix[] }>}
   */
  async multiHeadAttention(x, options) {
    this.#live();
    const plan = mhaPlan(x, options);
    if (plan === null || plan.work < SPLIT_MIN_FLOPS || (this.#threads === 1 && this.#callerShare)) {
      this.#stats.local++;
      return this.#local.multiHeadAttention(x, options);
    }
    const { X, C, WQ, WK, WV, WO, heads, kvHeads, dk, dv } = plan;
    const group = heads / kvHeads, count = Math.min(this.#threads, kvHeads), n = X.rows;
    const concat = new Float32Array(n * heads * dv);
    const plain = (m) => ({ rows: m.rows, cols: m.cols, data: m.data });
    const common = {};
    for (const key of ['causal', 'scale', 'mask', 'bias', 'softcap', 'window', 'queryOffset']) if (options[key] != null) common[key] = options[key];
    const parts = [];
    for (let p = 0; p < count; p++) {
      const g0 = Math.floor(kvHeads * p / count), g1 = Math.floor(kvHeads * (p + 1) / count);
      const opts = {
        ...common,
        wq: columns(WQ, g0 * group * dk, g1 * group * dk), wk: columns(WK, g0 * dk, g1 * dk), wv: columns(WV, g0 * dv, g1 * dv),
        heads: (g1 - g0) * group, kvHeads: g1 - g0,
      };
      if (C !== X) opts.context = plain(C);
      const width = (g1 - g0) * group * dv, at = g0 * group * dv;
      const deliver = (result) => {
        const data = result.output.data;
        for (let i = 0; i < n; i++) concat.set(data.subarray(i * width, (i + 1) * width), i * heads * dv + at);
      };
      if (p === count - 1 && count > 1 && this.#callerShare) {
        // The caller's share of the heads.
        parts.push({ here: () => deliver(this.#local.multiHeadAttention(X, opts)) });
        continue;
      }
      parts.push({
        message: { method: 'multiHeadAttention', x: plain(X), options: opts },
        transfer: [opts.wq.data.buffer, opts.wk.data.buffer, opts.wv.data.buffer],
        deliver,
      });
    }
    return this.#run(parts, () => {
      const output = new Matrix(n, heads * dv, concat);
      return { output: WO ? this.#local.matmul(output, WO) : output };
    });
  }

  /** Stops the workers and frees the instances; later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const slot of this.#slots.splice(0)) {
      slot.item?.call.fail(new Error('attention-wasm pool: disposed during this call'));
      slot.handle?.terminate();
    }
    for (const item of this.#queue.splice(0)) item.call.fail(new Error('attention-wasm pool: disposed during this call'));
    this.#local.dispose();
  }
}

function rebuild(error, prefix) {
  const E = ERRORS[error.name] ?? Error;
  return new E(prefix ? `${prefix}: ${error.message}` : error.message);
}

function gcd(a, b) {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

const isCount = (n) => typeof n === 'number' && Number.isInteger(n) && n >= 1;

// The shapes of a plainly valid sdpa call, or null (the calling thread's
// instance then runs it and throws what attn.sdpa throws). unknown: it has
// options this pool does not split (layout 'bshd', per-batch offsets,
// kvLengths, broadcast masks, steps, stats, or names added later); such a
// call runs whole on one worker, which checks it as attn.sdpa does.
function sdpaPlan(q, k, v, o) {
  if (o === null || typeof o !== 'object') return null;
  let unknown = false;
  for (const key in o) if (!SDPA_KEYS.has(key)) unknown = true;
  const { batch = 1, heads = 1, nq, nk, dk, dv } = o;
  const kvHeads = o.kvHeads ?? heads;
  if (![batch, heads, kvHeads, nq, nk, dk, dv].every(isCount) || heads % kvHeads !== 0) return null;
  const flat = (x, Type, length) => x instanceof Type && x.length === length;
  if (!flat(q, Float32Array, batch * heads * nq * dk) || !flat(k, Float32Array, batch * kvHeads * nk * dk) ||
      !flat(v, Float32Array, batch * kvHeads * nk * dv)) return null;
  if (o.out != null && !(o.out instanceof Float32Array && o.out.length >= batch * heads * nq * dv)) return null;
  if (o.mask != null && !flat(o.mask, Uint8Array, nq * nk)) unknown = true;
  if (o.bias != null && !flat(o.bias, Float32Array, nq * nk)) unknown = true;
  if (o.scale != null && !(typeof o.scale === 'number' && Number.isFinite(o.scale))) return null;
  if (o.causal != null && typeof o.causal !== 'boolean') return null;
  if (o.softcap != null && !(typeof o.softcap === 'number' && o.softcap > 0 && Number.isFinite(o.softcap))) return null;
  if (o.window != null && !(Array.isArray(o.window) && o.window.length === 2 && o.window.every((x) => Number.isInteger(x) && x >= -1 && x <= INT32_MAX))) return null;
  if (o.queryOffset != null && !(typeof o.queryOffset === 'number' && Number.isInteger(o.queryOffset) && Math.abs(o.queryOffset) <= INT32_MAX)) unknown = true;
  return { batch, heads, kvHeads, nq, nk, dk, dv, unknown, work: 2 * batch * heads * nq * nk * (dk + dv) };
}

// Bounds of `blocks` blocks of query rows, multiples of the 4-row tile,
// with about equal work each: a row costs the keys it may see (all of them,
// or with causal those up to its position i + offset).
function rowBlocks(nq, nk, blocks, causal, offset) {
  const cost = (i) => (causal ? Math.max(0, Math.min(nk, i + 1 + offset)) : nk);
  let total = 0;
  for (let i = 0; i < nq; i++) total += cost(i);
  const bounds = [0];
  let acc = 0;
  for (let i = 0; i < nq && bounds.length < blocks; i++) {
    acc += cost(i);
    if (acc >= total * bounds.length / blocks) {
      const at = Math.round((i + 1) / TILE_ROWS) * TILE_ROWS;
      if (at > bounds.at(-1) && at < nq) bounds.push(at);
    }
  }
  bounds.push(nq);
  return bounds;
}

// The same for multiHeadAttention; split only without steps and with dk, dv
// multiples of 4, so each worker's projection columns take the same gemm
// paths (no scalar column tail) as the whole projection.
function mhaPlan(x, o) {
  if (o === null || typeof o !== 'object' || o.steps) return null;
  for (const key in o) if (!MHA_KEYS.has(key)) return null;
  try {
    const { heads } = o;
    const kvHeads = o.kvHeads ?? heads;
    if (!isCount(heads) || !isCount(kvHeads) || heads % kvHeads !== 0) return null;
    const X = toMatrix(x, 'x'), C = o.context == null ? X : toMatrix(o.context, 'context');
    const WQ = toMatrix(o.wq, 'wq', X.cols), WK = toMatrix(o.wk, 'wk', C.cols), WV = toMatrix(o.wv, 'wv', C.cols);
    if (WQ.cols % heads !== 0 || WV.cols % kvHeads !== 0) return null;
    const dk = WQ.cols / heads, dv = WV.cols / kvHeads;
    if (WK.cols !== kvHeads * dk || dk % 4 !== 0 || dv % 4 !== 0) return null;
    const WO = o.wo == null ? null : toMatrix(o.wo, 'wo', heads * dv);
    if (o.mask != null) toMask(o.mask, 'mask', X.rows, C.rows);
    if (o.bias != null) toMatrix(o.bias, 'bias', X.rows, C.rows);
    if (o.scale != null && !(typeof o.scale === 'number' && Number.isFinite(o.scale))) return null;
    if (o.causal != null && typeof o.causal !== 'boolean') return null;
    const work = 2 * heads * X.rows * C.rows * (dk + dv) + 2 * X.rows * X.cols * WQ.cols + 2 * C.rows * C.cols * (WK.cols + WV.cols);
    return { X, C, WQ, WK, WV, WO, heads, kvHeads, dk, dv, work };
  } catch {
    return null;
  }
}

// Columns [c0, c1) of a matrix, as a new { rows, cols, data }.
function columns(m, c0, c1) {
  const width = c1 - c0, data = new Float32Array(m.rows * width);
  for (let i = 0; i < m.rows; i++) data.set(m.data.subarray(i * m.cols + c0, i * m.cols + c1), i * width);
  return { rows: m.rows, cols: width, data };
}
