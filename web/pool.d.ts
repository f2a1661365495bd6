// Types for attention-wasm/pool (web/pool.js).
import type { Isa, LoadOptions, MatrixLike, MultiHeadOptions, MultiHeadResult, SdpaOptions, SdpaResult } from './attention.js';

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
  /** attn.sdpa on the pool: same arguments, same result (same bits with the same module), as a Promise. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps?: false | null; stats?: false | null }): Promise<Float32Array>;
  /** With steps: true or stats: true: { output, scores?, scaled?, logits?, weights?, lse? }. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps: true }): Promise<SdpaResult>;
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { stats: true }): Promise<SdpaResult>;
  /** steps or stats not known at compile time. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions): Promise<Float32Array | SdpaResult>;
  /** attn.multiHeadAttention on the pool, as a Promise; large calls are split over groups of heads. */
  multiHeadAttention(x: MatrixLike, options: MultiHeadOptions): Promise<MultiHeadResult>;
  /** Calls so far: on the calling thread (small or invalid), whole on one worker, split into parts (of which `here` the calling thread computed: the last part of each split call). */
  readonly stats: { local: number; whole: number; split: number; parts: number; here: number };
  /** Stops the workers; later calls throw, calls in flight reject. */
  dispose(): void;
}

/** Starts the workers; resolves when each has its instance. */
export declare function createAttentionPool(options?: PoolOptions): Promise<AttentionPool>;
