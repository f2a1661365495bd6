// Types for attention-wasm's entry point (web/attention.js).

/** A row-major float32 matrix. */
export declare class Matrix {
  /** data is kept, not copied; zeros when omitted. Throws RangeError on a wrong length. */
  constructor(rows: number, cols: number, data?: Float32Array);
  readonly rows: number;
  readonly cols: number;
  readonly data: Float32Array;
  /** Element (i, j); RangeError outside the matrix. */
  get(i: number, j: number): number;
  toArray(): number[][];
  /** [rows, cols]: a Matrix is also a 2-D tensor { data, dims }. */
  readonly dims: [number, number];
  /** A new Matrix with its own data (always copied) from a Matrix, { rows, cols, data }, a 2-D { data, dims } or number[][]. */
  static from(x: MatrixLike): Matrix;
}

/**
 * A tensor as transformers.js and onnxruntime-web hold one: flat data and its dims. sdpa reads
 * its sizes from them: (batch, heads, n, d) for layout 'bhsd', (batch, n, heads, d) for 'bshd';
 * rank 3 drops batch, rank 2 also heads.
 */
export interface Tensor<T extends ArrayBufferView = Float32Array> {
  data: T;
  dims: readonly number[];
}

/** sdpa's result for tensor inputs with steps or stats: each step (batch, heads, nq, nk), lse (batch, heads, nq). */
export interface SdpaTensorResult {
  output: Tensor;
  scores?: Tensor;
  scaled?: Tensor;
  logits?: Tensor;
  weights?: Tensor;
  lse?: Tensor;
}

declare global {
  // `using` needs Symbol.dispose, which lib.esnext.disposable and @types/node declare; this
  // declares it too (the same unique symbol), so a project with neither still type-checks.
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** What the API accepts as a matrix. */
export type MatrixLike =
  | Matrix
  | { rows: number; cols: number; data: Float32Array | Float64Array | ArrayLike<number> }
  | { data: Float32Array | Float64Array | ArrayLike<number>; dims: readonly [number, number] }
  | number[][];

/**
 * A Float16Array (engines with ES2025's Float16Array; TypeScript's lib has it from 5.7 with
 * "esnext"). Matched by its tag, so this file needs no lib that declares the type.
 */
export interface Float16ArrayLike extends ArrayLike<number> {
  readonly [Symbol.toStringTag]: 'Float16Array';
}

/** A float16 matrix for attention({ dtype: 'float16' }): its values as float16 bits. */
export interface HalfMatrix {
  rows: number;
  cols: number;
  data: Uint16Array;
}

/** attention()'s result for float16 matrices: the output in float16 bits, steps in float32. */
export interface HalfAttentionResult extends Omit<AttentionResult, 'output'> {
  output: HalfMatrix;
}

/** A matrix of a Float16Array: float16 by its type, no dtype needed. */
export interface Float16Matrix {
  rows: number;
  cols: number;
  data: Float16ArrayLike;
}

/** attention()'s result for Float16Array matrices: the output a Float16Array, steps in float32. */
export interface Float16AttentionResult extends Omit<AttentionResult, 'output'> {
  output: Float16Matrix;
}

/** A keep-mask (nq, nk): true / nonzero = may attend. */
export type MaskLike = boolean[][] | number[][] | { rows: number; cols: number; data: Uint8Array };

/** numpy's legacy global generator: np.random.seed(seed); np.random.randn(...). */
export declare class NumpyRandom {
  /** seed: integer in [0, 2^32 - 1]. */
  constructor(seed: number);
  /** Like np.random.randn(...shape): shape.reduce(*) normal draws, row-major. */
  randn(...shape: number[]): Float64Array;
  /** One standard normal draw (numpy's legacy_gauss). */
  gauss(): number;
  /** A double in [0, 1) (numpy's random_sample). */
  random(): number;
}

/** The instruction set of a build. */
export type Isa = 'relaxed-simd' | 'simd128' | 'scalar';

/**
 * WebAssembly.Module where the project's lib declares it (DOM, WebWorker), else an opaque object:
 * the types check in a Node-only project (`lib: ["ES2022"]`, `types: ["node"]`) as well.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : object;
/** WebAssembly.Memory where the project's lib declares it, else the part of it this API uses. */
export type WasmMemory = typeof globalThis extends { WebAssembly: { Memory: { prototype: infer M } } } ? M : { readonly buffer: ArrayBuffer; grow(delta: number): number };
/** Response where the project's lib (DOM or @types/node) declares it. */
export type ResponseLike = typeof globalThis extends { Response: { prototype: infer R } } ? R : never;
/** What `wasm` takes: a URL or string to fetch, the module's bytes, a Response or a compiled module. */
export type WasmSource = URL | string | ArrayBuffer | ArrayBufferView | ResponseLike | WasmModule;

export interface LoadOptions {
  /** false forces the scalar build; true insists on a SIMD build (relaxed or SIMD128). Default: the fastest the engine validates. */
  simd?: boolean;
  /** true picks SIMD128 over relaxed SIMD: the same bits on every engine. Default false. */
  deterministic?: boolean;
  /** Where to get the wasm when the default location does not work (bundlers, CDNs). */
  wasm?: WasmSource;
}

/** Options shared by attention(), sdpa(), multiHeadAttention() and KVCache#attend(). */
export interface PositionOptions {
  /**
   * Logit soft-capping (Gemma 2): logits = c * tanh(scaled / c), before bias and masks.
   * 0, null or absent: none (as ONNX's softcap = 0). Else > 0 and representable as a float32
   * (1.4e-45 to 3.4e38): a RangeError otherwise, never a silent 0.
   */
  softcap?: number | null;
  /**
   * Sliding window [left, right]: key j is allowed for query i only when
   * p - left <= j <= p + right, p = i + queryOffset; -1 leaves a side unbounded,
   * so [-1, -1] is no window. Sides are integers from -1 to 2^31 - 1.
   */
  window?: readonly [number, number] | null;
  /**
   * Position of query row 0 among the keys: an integer, or an Int32Array(batch) (sdpa, attend).
   * Causal allows j <= i + queryOffset. Default 0 (top-left); nk - nq gives bottom-right.
   */
  queryOffset?: number | Int32Array | null;
  /**
   * Rotary position embeddings in the kernel (ONNX RotaryEmbedding, Hugging Face apply_rotary_pos_emb):
   * q row i turned at position i + queryOffset, key j at j. true means all defaults. A KV cache
   * turns keys at append({ rope }) and attend({ rope }) turns only the queries.
   */
  rope?: boolean | RopeOptions | null;
  /**
   * One logit per query head that joins every row's softmax denominator and carries no value
   * (GPT-OSS sinks; ONNX GroupQueryAttention's head_sink). Finite values. A row with no
   * allowed key then gives output 0 and lse = the sink. The backward returns dsinks.
   */
  sinks?: Float32Array | null;
  /**
   * ALiBi (BLOOM, MPT; PyTorch/HF pass it as an attn_mask bias): logits += -slope_h * (p - j),
   * p = i + queryOffset, computed in the kernel. true: the standard slopes for the head count
   * (alibiSlopes); or a Float32Array(heads) of finite slopes (the bias is formed from each row's reference key, so even 3e38 gives no NaN).
   */
  alibi?: boolean | Float32Array | null;
}

/** RoPE's settings. */
export interface RopeOptions {
  /** The base: angle p * theta^(-2c / dims) for pair c. Default 10000 (Llama 3: 500000). Finite >= 1 as a float32. */
  theta?: number;
  /** Leading dims turned (partial rotary; ONNX rotary_embedding_dim), even, 2..dk. Default dk. */
  dims?: number;
  /** false (default): pairs (c, c + dims/2), HF rotate_half (Llama); true: pairs (2c, 2c + 1), GPT-J (ONNX interleaved = 1). */
  interleaved?: boolean;
}

/** A mask or bias broadcast numpy-style (right aligned, size-1 dims repeat) to (batch, heads, nq, nk). */
export interface Broadcast<T> {
  data: T;
  /** 2 to 4 dims; a last dim shorter than nk leaves the keys past it not allowed (ONNX pads so). */
  shape: readonly number[];
}

/** Optional options may also be null, which means "not given". */
export interface AttentionOptions extends PositionOptions {
  /** Query i sees key j only when j <= i (PyTorch's is_causal, top-left aligned). */
  causal?: boolean | null;
  /** (nq, nk) keep-mask. */
  mask?: MaskLike | null;
  /** (nq, nk) additive bias; -Infinity masks. */
  bias?: MatrixLike | null;
  /** Default 1 / sqrt(dk); must be finite as a float32 (magnitude below 3.4e38). */
  scale?: number | null;
  /** Also return scores, scaled, logits and weights. */
  steps?: boolean | null;
  /** 'float16': q, k, v and bias hold float16 bits in Uint16Arrays (see the float16 overload). */
  dtype?: 'float32' | 'float16' | null;
}

export interface AttentionResult {
  /** (nq, dv) */
  output: Matrix;
  /** (nq, nk) Q K^T, when steps: true */
  scores?: Matrix;
  /** (nq, nk) scores * scale, before mask and bias, when steps: true */
  scaled?: Matrix;
  /** (nq, nk) what enters the softmax: softcap(scaled) + bias, -Infinity where not allowed, when steps: true */
  logits?: Matrix;
  /** (nq, nk) softmax over allowed keys; a fully masked row is all 0, when steps: true */
  weights?: Matrix;
}

export interface SdpaOptions extends PositionOptions {
  /** 'float32' (default); 'float16' with Uint16Array tensors holding float16 bits (see the float16 overloads). */
  dtype?: 'float32' | 'float16' | null;
  batch?: number;
  heads?: number;
  /** Default: heads. heads must be a multiple of kvHeads. */
  kvHeads?: number;
  nq: number;
  nk: number;
  dk: number;
  dv: number;
  causal?: boolean | null;
  /** Keep-mask (nonzero = allowed): flat (nq, nk), or { data, shape } broadcast to (batch, heads, nq, nk). */
  mask?: Uint8Array | Broadcast<Uint8Array> | null;
  /** Added to the logits: flat (nq, nk), or { data, shape } broadcast; -Infinity masks. */
  bias?: Float32Array | Broadcast<Float32Array> | null;
  /** Default 1 / sqrt(dk); must be finite as a float32 (magnitude below 3.4e38). */
  scale?: number | null;
  /** 'bhsd' (default): [batch, heads, seq, d]; 'bshd': [batch, seq, heads, d], for q, k, v and the output. */
  layout?: 'bhsd' | 'bshd' | null;
  /** Int32Array(batch): keys j >= kvLengths[b] are not allowed for batch entry b. */
  kvLengths?: Int32Array | null;
  /** Return { output, scores, scaled, logits, weights }, each step flat (batch, heads, nq, nk). */
  steps?: boolean | null;
  /** Return lse too: (batch, heads, nq) natural log-sum-exp of each logits row, -Infinity when no key is allowed. */
  stats?: boolean | null;
  /** Written and returned instead of a new array; at least batch*heads*nq*dv long, not a view of the instance's memory. */
  out?: Float32Array | null;
}

/** sdpa's options for float16 tensors held as bits in Uint16Arrays. */
export interface SdpaHalfOptions extends Omit<SdpaOptions, 'bias' | 'out' | 'dtype'> {
  dtype: 'float16';
  /** float16 bits: flat (nq, nk), or { data, shape } broadcast to (batch, heads, nq, nk). */
  bias?: Uint16Array | Broadcast<Uint16Array> | null;
  out?: Uint16Array | null;
}

/** sdpa's result for float16 tensors with steps or stats: the output in float16 bits. */
export interface SdpaHalfResult extends Omit<SdpaResult, 'output'> {
  output: Uint16Array;
}

/** sdpa's options for Float16Array tensors (dtype may be left out: the arrays say float16). */
export interface SdpaFloat16Options extends Omit<SdpaOptions, 'bias' | 'out' | 'dtype'> {
  dtype?: 'float16' | null;
  bias?: Float16ArrayLike | Broadcast<Float16ArrayLike> | null;
  out?: Float16ArrayLike | null;
}

/** sdpa's result for Float16Array tensors with steps or stats: the output a Float16Array. */
export interface SdpaFloat16Result extends Omit<SdpaResult, 'output'> {
  output: Float16ArrayLike;
}

/** What sdpa() and KVCache#attend() return with steps or stats. */
export interface SdpaResult {
  output: Float32Array;
  scores?: Float32Array;
  scaled?: Float32Array;
  logits?: Float32Array;
  weights?: Float32Array;
  lse?: Float32Array;
}

export interface KVCacheOptions {
  batch?: number | null;
  kvHeads?: number | null;
  dk: number;
  /** Default: dk. */
  dv?: number | null;
  /** Tokens it can hold. */
  capacity: number;
  /** 'bhsd' (default) or 'bshd', for append(), keys(), values(), attend()'s q and output. */
  layout?: 'bhsd' | 'bshd' | null;
  /**
   * How the keys and values are held: 'float32' (default, exact), 'float16'
   * (half the memory; each value rounded to nearest even, relative error
   * 2^-11, Infinity past 65504) or 'int8' (0.266x of float32 at d = 64:
   * one float32 scale per token and kv head, error max|row| / 254 per
   * value). append() takes float32 and converts; attend() reads them in
   * place; keys() and values() give them back as float32. The output's
   * error against a float32 cache is bounded in c/attention.h.
   */
  dtype?: 'float32' | 'float16' | 'int8' | null;
}

export interface AttendOptions extends PositionOptions {
  /** Query heads; default kvHeads; a multiple of kvHeads. */
  heads?: number | null;
  /** Query rows; default q.length / (batch * heads * dk). */
  nq?: number | null;
  causal?: boolean | null;
  mask?: Uint8Array | Broadcast<Uint8Array> | null;
  bias?: Float32Array | Broadcast<Float32Array> | null;
  /** Default 1 / sqrt(dk); must be finite as a float32 (magnitude below 3.4e38). */
  scale?: number | null;
  kvLengths?: Int32Array | null;
  steps?: boolean | null;
  stats?: boolean | null;
  out?: Float32Array | null;
}

/** The sizes and types of a KV cache (KVCache and the pool's PoolKVCache), as KVCacheOptions made them. */
export interface KVCacheShape {
  readonly batch: number;
  readonly kvHeads: number;
  readonly dk: number;
  readonly dv: number;
  readonly capacity: number;
  readonly layout: 'bhsd' | 'bshd';
  readonly dtype: 'float32' | 'float16' | 'int8';
  /** Tokens held. */
  readonly length: number;
}

/** Keys and values in wasm memory; attend() reads them in place. */
export interface KVCache extends KVCacheShape {}
export declare class KVCache {
  private constructor();
  /** Bytes of wasm memory held for the keys and values (int8 scales included). */
  readonly bytes: number;
  /**
   * Appends t >= 1 tokens: k (batch, kvHeads, t, dk) and v (batch, kvHeads, t, dv), or (batch, t, kvHeads, d)
   * for layout 'bshd'. Past the capacity: a RangeError, the cache unchanged. With rope, the keys turn at
   * their positions (length ..) before they are stored (as float32, then compacted for float16 or int8);
   * attend takes the same rope and turns only the queries. Until the cache is empty again, every append
   * and attend must pass that rope (RangeError otherwise); over keys appended without rope, attend may
   * still turn its queries (keys the caller turned).
   */
  append(k: Float32Array, v: Float32Array, options?: { rope?: boolean | RopeOptions | null }): void;
  /** Copy of the held keys (batch, kvHeads, length, dk) in the cache's layout, as float32 (what attend computes with). */
  keys(): Float32Array;
  /** Copy of the held values (batch, kvHeads, length, dv) in the cache's layout, as float32. */
  values(): Float32Array;
  /**
   * sdpa of q over the held keys; queryOffset defaults to length - nq, or
   * with kvLengths to kvLengths[b] - nq for batch entry b.
   */
  attend(q: Float32Array, options?: AttendOptions & { steps?: false | null; stats?: false | null }): Float32Array;
  /** With steps: true or stats: true: { output, scores?, scaled?, logits?, weights?, lse? }. */
  attend(q: Float32Array, options: AttendOptions & { steps: true }): SdpaResult;
  attend(q: Float32Array, options: AttendOptions & { stats: true }): SdpaResult;
  attend(q: Float32Array, options: AttendOptions): Float32Array | SdpaResult;
  /** Length back to 0. */
  clear(): void;
  /**
   * Keeps the first `length` tokens (an integer in [0, this.length]) in
   * constant time: the draft tokens speculative decoding rejects.
   */
  truncate(length: number): void;
  /** Frees the memory; later calls throw. */
  dispose(): void;
  /** dispose(), for `using cache = attn.kvCache(...)`. */
  [Symbol.dispose](): void;
}

export interface MultiHeadOptions extends PositionOptions {
  /** (d_model, heads * dk) */
  wq: MatrixLike;
  /** (d_context, kvHeads * dk) */
  wk: MatrixLike;
  /** (d_context, kvHeads * dv) */
  wv: MatrixLike;
  /** (heads * dv, d_out), applied to the concatenated heads when given. */
  wo?: MatrixLike | null;
  heads: number;
  kvHeads?: number | null;
  /** Keys and values come from here (cross-attention); default: x. */
  context?: MatrixLike | null;
  causal?: boolean | null;
  mask?: MaskLike | null;
  bias?: MatrixLike | null;
  scale?: number | null;
  steps?: boolean | null;
  /**
   * A KV cache of this instance (batch 1, its kvHeads, dk and dv those of the projections): the
   * call appends its tokens' keys and values (x wk, x wv) and its queries attend every held key at
   * the cache's last positions, so a prompt and then one token a call decode as one causal call
   * over the whole sequence would. With `rope`, keys turn at append and queries at attend. Not
   * with context, mask, bias, queryOffset or kvLengths.
   */
  cache?: KVCache | null;
}

export interface MultiHeadResult {
  /** (n, heads * dv), or (n, d_out) with wo */
  output: Matrix;
  /** One (n, m) matrix per head, when steps: true */
  weights?: Matrix[];
  scores?: Matrix[];
  scaled?: Matrix[];
  logits?: Matrix[];
}

/** Options of Attention#matmul (softmax takes `out` only). */
export interface MatmulOptions {
  /** Where the result (m, n) goes: a Matrix of that shape or a Float32Array of exactly m * n values. */
  out?: Matrix | Float32Array | null;
  /** b is (n, k) and a times its transpose is computed; `bias`: n values added to every row. */
  transposeB?: boolean; bias?: Float32Array | number[] | null;
}
/** layerNorm's options (rmsNorm: no beta, eps 1e-6): gamma, beta (cols values; 1 and 0), eps (1e-5), out as matmul's. */
export interface NormOptions { gamma?: Float32Array | number[] | null; beta?: Float32Array | number[] | null; eps?: number; out?: Matrix | Float32Array | null }
/** gelu's form as PyTorch names it: 'none' (default) x Phi(x), 'tanh' the tanh form; out as matmul's. */
export interface GeluOptions { approximate?: 'none' | 'tanh'; out?: Matrix | Float32Array | null }
/** Gradients of matmul (db has b's shape; dbias null unless bias: true), of layerNorm and rmsNorm (no dbeta). */
export interface MatmulGradients { da: Matrix; db: Matrix; dbias: Float32Array | null } export interface NormGradients { dx: Matrix; dgamma: Float32Array; dbeta?: Float32Array }

/** attentionBackward's options: attention()'s without steps. */
export type AttentionBackwardOptions = Omit<AttentionOptions, 'steps' | 'dtype'>;

/** Gradients of one head, as Matrix objects. */
export interface AttentionGradients {
  /** (nq, dk) */
  dq: Matrix;
  /** (nk, dk) */
  dk: Matrix;
  /** (nk, dv) */
  dv: Matrix;
  /** (nq, nk), only when a bias was given */
  dbias?: Matrix;
  /** (1), only when sinks were given */
  dsinks?: Float32Array;
}

/** sdpaBackward's options: sdpa()'s (without steps and stats; out is where the gradients go) and the forward's lse. */
export interface SdpaBackwardOptions extends Omit<SdpaOptions, 'out' | 'steps' | 'stats'> {
  /** (batch, heads, nq) natural-log log-sum-exp of each logits row, from the forward; saves a pass. Finite, or -Infinity for a row with no allowed key. */
  lse?: Float32Array | null;
  /**
   * Arrays to write the gradients into (each at least as long as q, k or v, none a view of the
   * instance's memory); the result holds these arrays instead of new ones.
   */
  out?: { dq?: Float32Array | null; dk?: Float32Array | null; dv?: Float32Array | null } | null;
}

/** Flat gradients in sdpa's layout. */
export interface SdpaGradients {
  /** (batch, heads, nq, dk) */
  dq: Float32Array;
  /** (batch, kvHeads, nk, dk): a kv head sums the gradients of its query heads */
  dk: Float32Array;
  /** (batch, kvHeads, nk, dv) */
  dv: Float32Array;
  /**
   * Only when a bias was given: in the bias's own shape (a flat (nq, nk) bias gets (nq, nk);
   * a { data, shape } bias gets data.length values in that shape), summed over the dims it
   * broadcasts over.
   */
  dbias?: Float32Array;
  /** (heads), only when sinks were given: summed over batch and rows */
  dsinks?: Float32Array;
}

/** multiHeadAttentionBackward's options: multiHeadAttention()'s without steps. */
export type MultiHeadBackwardOptions = Omit<MultiHeadOptions, 'steps'>;

/** Gradients of one multi-head attention layer. */
export interface MultiHeadGradients {
  /** (n, d_model); with self-attention it includes the paths through K and V */
  dx: Matrix;
  /** like wq */
  dwq: Matrix;
  /** like wk */
  dwk: Matrix;
  /** like wv */
  dwv: Matrix;
  /** like wo, when wo was given */
  dwo?: Matrix;
  /** (m, d_context), for cross-attention (context given) */
  dcontext?: Matrix;
  /** (heads), only when sinks were given */
  dsinks?: Float32Array;
}

/** The API over one wasm instance. */
export declare class Attention {
  private constructor();
  /** True when a SIMD build (SIMD128 or relaxed SIMD) is running. */
  readonly simd: boolean;
  /** The running build; 'relaxed-simd' fuses multiply-adds where the CPU can, so its last bits may differ between machines. */
  readonly isa: Isa;
  /** The instance's memory. */
  readonly memory: WasmMemory;
  /**
   * softmax(q k^T * scale + bias) v for one head: q (nq, dk), k (nk, dk), v (nk, dv). This
   * overload: float16 matrices, data a Uint16Array of float16 bits with dtype: 'float16' (or a
   * Float16Array where the engine has one). Computed in float32; the output is rounded to float16
   * (nearest, ties to even) in q's array type; steps stay float32.
   */
  attention(q: HalfMatrix, k: HalfMatrix, v: HalfMatrix, options: Omit<AttentionOptions, 'bias'> & { dtype: 'float16'; bias?: HalfMatrix | null }): HalfAttentionResult;
  attention(q: Float16Matrix, k: Float16Matrix, v: Float16Matrix, options?: Omit<AttentionOptions, 'bias' | 'dtype'> & { dtype?: 'float16' | null; bias?: Float16Matrix | null }): Float16AttentionResult;
  /** softmax(q k^T * scale + bias) v for one head: q (nq, dk), k (nk, dk), v (nk, dv). */
  attention(q: MatrixLike, k: MatrixLike, v: MatrixLike, options?: AttentionOptions): AttentionResult;
  /** Flat PyTorch layout: q (batch, heads, nq, dk), k and v (batch, kvHeads, nk, d). Returns (batch, heads, nq, dv). */
  /**
   * sdpa over tensors { data, dims }: the sizes (batch, heads, kvHeads, nq, nk, dk, dv) come from
   * the dims and `layout`; sizes the options also give must agree. The output has q's rank and
   * layout with dv last.
   */
  sdpa(q: Tensor, k: Tensor, v: Tensor, options?: Partial<SdpaOptions> & { steps?: false | null; stats?: false | null }): Tensor;
  sdpa(q: Tensor, k: Tensor, v: Tensor, options: Partial<SdpaOptions>): Tensor | SdpaTensorResult;
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps?: false | null; stats?: false | null }): Float32Array;
  /** With steps: true or stats: true: { output, scores?, scaled?, logits?, weights?, lse? }. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { steps: true }): SdpaResult;
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions & { stats: true }): SdpaResult;
  /** steps or stats not known at compile time. */
  sdpa(q: Float32Array, k: Float32Array, v: Float32Array, options: SdpaOptions): Float32Array | SdpaResult;
  /**
   * float16 q, k, v (and bias, out): the bits in Uint16Arrays with dtype: 'float16' (or
   * Float16Arrays where the engine has them). Computed in float32; the output is rounded to
   * float16 (nearest, ties to even) and returned in q's type; steps and lse stay float32.
   */
  sdpa(q: Uint16Array, k: Uint16Array, v: Uint16Array, options: SdpaHalfOptions & { steps?: false | null; stats?: false | null }): Uint16Array;
  sdpa(q: Uint16Array, k: Uint16Array, v: Uint16Array, options: SdpaHalfOptions): Uint16Array | SdpaHalfResult;
  sdpa(q: Float16ArrayLike, k: Float16ArrayLike, v: Float16ArrayLike, options: SdpaFloat16Options & { steps?: false | null; stats?: false | null }): Float16ArrayLike;
  sdpa(q: Float16ArrayLike, k: Float16ArrayLike, v: Float16ArrayLike, options: SdpaFloat16Options): Float16ArrayLike | SdpaFloat16Result;
  /** A KV cache in this instance's memory. */
  kvCache(options: KVCacheOptions): KVCache;
  /** Projections, heads, concat and output projection, as torch.nn.MultiheadAttention. */
  multiHeadAttention(x: MatrixLike, options: MultiHeadOptions): MultiHeadResult;
  /**
   * Gradients of attention() given dOutput = dL/d(output) (nq, dv); PyTorch: autograd of
   * scaled_dot_product_attention. A fully masked row gives zero gradients.
   */
  attentionBackward(q: MatrixLike, k: MatrixLike, v: MatrixLike, dOutput: MatrixLike, options?: AttentionBackwardOptions): AttentionGradients;
  /**
   * Gradients of sdpa() in its flat layout; output is the forward's output or null (then
   * recomputed), dOutput (batch, heads, nq, dv).
   */
  sdpaBackward(q: Float32Array, k: Float32Array, v: Float32Array, output: Float32Array | null, dOutput: Float32Array, options: SdpaBackwardOptions): SdpaGradients;
  /** Gradients of multiHeadAttention() given dOutput (like its output). */
  multiHeadAttentionBackward(x: MatrixLike, dOutput: MatrixLike, options: MultiHeadBackwardOptions): MultiHeadGradients;
  /** a (m, k) times b (k, n) (b (n, k) with transposeB) + bias, float32; with `out` (a Matrix (m, n) or m * n floats; it may hold a's or b's data) the result is written there. */
  matmul(a: MatrixLike, b: MatrixLike, options?: MatmulOptions): Matrix;
  /** Gradients of matmul(a, b, { transposeB, bias }) from dOut (m, n). */
  matmulBackward(a: MatrixLike, b: MatrixLike, dOut: MatrixLike, options?: { transposeB?: boolean; bias?: boolean }): MatmulGradients;
  /** Rows over cols as PyTorch's layer_norm (biased variance): (x - mean) / sqrt(var + eps) gamma + beta. */
  layerNorm(x: MatrixLike, options?: NormOptions): Matrix;
  layerNormBackward(x: MatrixLike, dOut: MatrixLike, options?: Omit<NormOptions, 'out'>): NormGradients & { dbeta: Float32Array };
  /** Rows over cols as PyTorch's rms_norm: x / sqrt(mean(x^2) + eps) gamma. */
  rmsNorm(x: MatrixLike, options?: Omit<NormOptions, 'beta'>): Matrix;
  rmsNormBackward(x: MatrixLike, dOut: MatrixLike, options?: Omit<NormOptions, 'beta' | 'out'>): NormGradients;
  /** GELU elementwise; geluBackward: dOut times gelu'(x). */
  gelu(x: MatrixLike, options?: GeluOptions): Matrix;
  geluBackward(x: MatrixLike, dOut: MatrixLike, options?: Omit<GeluOptions, 'out'>): Matrix;
  /**
   * Row-wise softmax; -Infinity weighs 0; an all -Infinity row gives 0. With `out` (x's shape;
   * it may hold x's data) the result is written there, as matmul's.
   */
  softmax(x: MatrixLike, options?: Pick<MatmulOptions, 'out'>): Matrix;
  /**
   * A copy of x (n, d) with row i turned by RoPE at position `position + i` (default 0): the same
   * bits the `rope` option attends with (q at i + queryOffset, keys at j). With `heads`, x is
   * (heads, n / heads, d) (q or k of one batch entry) and row i of every head is at position + i.
   */
  rope(x: MatrixLike, options?: RopeOptions & { position?: number; heads?: number }): Matrix;
  /** Frees the instance; later calls throw. */
  dispose(): void;
  /** dispose(), for `using attn = await loadAttention()`. */
  [Symbol.dispose](): void;
}

/** Loads and instantiates the module (compiled modules are cached per build). */
export declare function loadAttention(options?: LoadOptions): Promise<Attention>;

/** The compiled module loadAttention(options) instantiates (cached per build); the pool hands it to its workers. */
export declare function compileAttention(options?: LoadOptions): Promise<WasmModule>;

/** True when this engine validates a WebAssembly SIMD128 probe. */
export declare function simdSupported(): boolean;

/** True when this engine validates a relaxed-SIMD probe (f32x4.relaxed_madd). */
export declare function relaxedSimdSupported(): boolean;

/** The standard ALiBi slopes for a head count (the ALiBi paper's get_slopes; BLOOM, MPT). */
export declare function alibiSlopes(heads: number): Float32Array;

/** The build loadAttention picks for these options on this engine. */
export declare function chooseIsa(options?: { simd?: boolean; deterministic?: boolean }): Isa;

/**
 * The values of an array of numbers as float16: a Float16Array when `like` is one, else a
 * Uint16Array of the IEEE half bits (what sdpa takes with dtype: 'float16'). Rounds to nearest,
 * ties to even; past 65504 gives Infinity.
 */
export declare function float32ToFloat16(values: ArrayLike<number>, like: Float16ArrayLike): Float16ArrayLike;
export declare function float32ToFloat16(values: ArrayLike<number>, like?: Uint16Array | object): Uint16Array;
/** The float32 values of float16 bits (a Uint16Array) or of a Float16Array. */
export declare function float16ToFloat32(half: Uint16Array | ArrayLike<number>): Float32Array;
