// Types for attention-wasm/pool (web/pool.js).
import type { AttendOptions, Isa, KVCacheOptions, KVCacheShape, LoadOptions, Matrix, MatmulOptions, MatrixLike, MultiHeadOptions, MultiHeadResult, RopeOptions, SdpaOptions, SdpaResult } from './attention.js';

export interface PoolOptions extends LoadOptions {
  /** Workers. Default: navigator.hardwareConcurrency (browser) or os.availableParallelism() (Node). */
  threads?: number;
  /** Where web/pool-worker.js is, for hosts that move files. Default: beside pool.js. */
  worker?: URL | string;
  /**
   * The calling thread computes one part of each split call (and every call of a one-thread pool)
   * instead of only waiting. Default: true in Node and in workers, false on a page's main thread,
   * which must stay free to paint.
   */
  callerShare?: boolean;
  /**
   * How split sdpa calls and KV caches reach the workers. 'shared': one shared WebAssembly.Memory,
   * inputs written once and read in place, a kvCache kept there whole (needs SharedArrayBuffer: Node
   * or a crossOriginIsolated page, and the relaxed-SIMD or SIMD128 build of the package's own
   * modules; elsewhere createAttentionPool rejects saying why). 'copy': each worker gets a copy of its
   * part in a staging buffer moved there and back, and keeps its segments of a kvCache in its own
   * memory. Default 'auto': shared where it can be, else copy.
   */
  memory?: 'auto' | 'shared' | 'copy';
}

/** Workers, each with an instance of one compiled module. */
export declare class AttentionPool {
  private constructor();
  /** Number of workers. */
  readonly threads: number;
  /** Whether the calling thread computes a share of split calls. */
  readonly callerShare: boolean;
  /** The build every worker (and the calling thread's instance) runs. */
  readonly isa: Isa;
  /** The memory path split sdpa calls and KV caches take: 'shared' or 'copy' (see PoolOptions.memory). */
  readonly memory: 'shared' | 'copy';
  /**
   * A Float32Array of `length` zeros that split sdpa calls read (as q, k, v or bias, or a subarray
   * of one) and write (as `out`, unless it overlaps one of those) in place: on the shared memory it
   * lives there and a call copies nothing of it; on copies it is an ordinary Float32Array. It lasts
   * as long as the pool (there is no free: allocate once and reuse). Until a call resolves its
   * inputs must not change, and its out holds partial results. TypeError for a non-number,
   * RangeError for a length that is not an integer from 0 to 2^30 - 1 or that the memory cannot hold,
   * Error once the pool is disposed.
   */
  array(length: number): Float32Array;
  /** attn.sdpa on the pool: same arguments, same result (same bits with the same module), as a Promise. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps?: false | null; stats?: false | null }): Promise<Float32Array>;
  /** With steps: true or stats: true: { output, scores?, scaled?, logits?, weights?, lse? }. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps: true }): Promise<SdpaResult>;
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { stats: true }): Promise<SdpaResult>;
  /** steps or stats not known at compile time. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions): Promise<Float32Array | SdpaResult>;
  /** attn.multiHeadAttention on the pool, as a Promise; large calls are split over groups of heads. */
  multiHeadAttention(x: MatrixLike, options: MultiHeadOptions): Promise<MultiHeadResult>;
  /** sdpa, multiHeadAttention and matmul calls so far (a kvCache's calls are not counted): on the calling thread (small or invalid), whole on one worker, split into parts (of which `here` the calling thread computed: the last part of each split call; on the shared memory the parts are the threads that took part, which claim the call's blocks between them). */
  readonly stats: { local: number; whole: number; split: number; parts: number; here: number };
  /**
   * attn.kvCache on the pool, attended by the workers and the calling thread at once (on the shared
   * memory one cache whose key ranges every thread claims, else positions split over their own
   * memories), so a decode step's attend runs on every core. Same options and errors; resolves when
   * every part has its memory.
   */
  kvCache(options: KVCacheOptions): Promise<PoolKVCache>;
  /**
   * attn.matmul on the pool: the same arguments and result (bits included). A large product is
   * split by rows of a over the workers and the calling thread; with options it runs here.
   */
  matmul(a: MatrixLike, b: MatrixLike, options?: MatmulOptions): Promise<Matrix>;
  /** Stops the workers; later calls throw, calls in flight reject. */
  dispose(): void;
  /** dispose(), for `using pool = await createAttentionPool()`. */
  [Symbol.dispose](): void;
}

/**
 * Starts the workers; resolves when each has its instance. Rejects when a worker fails to start, or
 * loads but does not answer within 10 s (WORKER_START_MS in web/pool/workers.js: a `worker` that is not
 * web/pool-worker.js), with an Error saying so. In Node the workers get the main thread's flags but
 * those naming its main program (-e, -p, --input-type, --test, --watch...), and an idle pool (no call
 * running) never keeps Node running.
 */
export declare function createAttentionPool(options?: PoolOptions): Promise<AttentionPool>;

/**
 * A KV cache attended by every thread of a pool (split-KV decoding). On the pool's shared memory
 * the calling thread holds it there and each attend's key ranges are claimed by every thread; on the
 * copy path segments of consecutive positions are dealt round-robin to the calling thread and the
 * workers, each in its own wasm memory. The calls of KVCache, as Promises; errors are KVCache's,
 * raised before any worker is asked. Calls may follow each other without awaiting: they run in order.
 * A cache of up to one segment (2048 tokens) is attended on the calling thread alone.
 */
export interface PoolKVCache extends KVCacheShape {}
export declare class PoolKVCache {
  private constructor();
  /** Bytes of wasm memory held for the keys and values over all threads (int8 scales included). */
  readonly bytes: number;
  /**
   * Where the keys and values are: 'shared', all in the pool's shared memory, each attend's ranges
   * claimed by every thread; 'copy', each segment in the memory of the thread that holds it.
   */
  readonly memory: 'shared' | 'copy';
  /**
   * Appends t >= 1 tokens, as KVCache#append (with rope, the keys turn at their positions in the
   * whole cache); past the capacity it rejects and the cache is unchanged.
   */
  append(k: Float32Array, v: Float32Array, options?: { rope?: boolean | RopeOptions | null }): Promise<void>;
  /** A copy of the held keys, (batch, kvHeads, length, dk) in the cache's layout. */
  keys(): Promise<Float32Array>;
  /** A copy of the held values, (batch, kvHeads, length, dv) in the cache's layout. */
  values(): Promise<Float32Array>;
  /**
   * KVCache#attend over every holder's keys, the parts merged by their log-sum-exp: equal to one
   * instance's result within float32 rounding (the tests use 4e-5 of the largest output), not bit for bit.
   */
  attend(q: Float32Array, options?: AttendOptions & { steps?: false | null; stats?: false | null }): Promise<Float32Array>;
  attend(q: Float32Array, options: AttendOptions & { steps: true }): Promise<SdpaResult>;
  attend(q: Float32Array, options: AttendOptions & { stats: true }): Promise<SdpaResult>;
  attend(q: Float32Array, options: AttendOptions): Promise<Float32Array | SdpaResult>;
  /** Keeps the first `length` tokens (rejected draft tokens); only the segments past the new end change. */
  truncate(length: number): Promise<void>;
  /** Length back to 0; the memory stays reserved. */
  clear(): Promise<void>;
  /** Frees the memory on the calling thread and in the workers; later calls reject. */
  dispose(): void;
  /** dispose(), for `using cache = await pool.kvCache(...)`. */
  [Symbol.dispose](): void;
}
