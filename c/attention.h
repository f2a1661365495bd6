/* attention.h - scaled dot-product attention over float32 buffers.
 *
 * This is the only public C header of attention-wasm. The same sources build
 * a WebAssembly module with SIMD128 kernels, the same with relaxed SIMD, a
 * scalar WebAssembly module, and a native library (scalar) used by the
 * sanitizer tests and the fuzzer.
 * attn_sdpa computes attention; attn_sdpa_backward its gradients (the
 * BACKWARD PASS comment near the end of this file).
 *
 * WHAT IS COMPUTED
 *
 *   output = softmax(logits over allowed keys, and the sink) V
 *   logits = softcap(rope(Q) rope(K)^T * scale) + bias + alibi
 *
 *   Q  (batch, heads,    n_q, d_k)   shapes and strides in attn_shape:
 *   K  (batch, kv_heads, n_k, d_k)   contiguous (batch, heads, n, d) by
 *   V  (batch, kv_heads, n_k, d_v)   default, or any row/head/batch strides
 *   O  (batch, heads,    n_q, d_v)   (e.g. (batch, n, heads, d)), read in place
 *
 *   Grouped-query attention: query head h reads kv head h / (heads / kv_heads)
 *   (integer division; heads must be a multiple of kv_heads). kv_heads ==
 *   heads is ordinary multi-head attention, kv_heads == 1 is multi-query.
 *
 *   softcap(x) = c * tanh(x / c) with c = options.softcap > 0 (Gemma 2);
 *   c = 0 leaves x as it is. It applies before bias and masks, as in ONNX.
 *
 *   rope, alibi and the sink are options (POSITIONS AND SINKS below); without
 *   them rope(x) = x, alibi = 0 and no sink.
 *
 *   Query i of batch entry b sits at position p = i + off among the keys,
 *   off = query_offsets[b] if given, else query_offset (0 by default: top-
 *   left aligned like PyTorch's is_causal; n_k - n_q gives bottom-right like
 *   FlashAttention). Key j is ALLOWED for (b, h, i) when all of these hold:
 *     - not ATTN_CAUSAL, or j <= p;
 *     - not ATTN_WINDOW, or p - window_left <= j <= p + window_right (a side
 *       of -1 is unbounded);
 *     - kv_lengths is NULL or j < kv_lengths[b];
 *     - mask is NULL, or j < its cols and mask(b, h, i, j) != 0;
 *     - bias is NULL, or j < its cols;
 *     - the logit is not -Infinity (a -Infinity bias masks).
 *   Mask and bias broadcast to (batch, heads, n_q, n_k) by strides
 *   (attn_bcast). Keys outside the causal frontier, the window and
 *   kv_lengths are skipped, not computed: a window of w keys costs about w,
 *   not n_k.
 *
 *   A row with no allowed key gets weights 0, output 0 and lse -Infinity,
 *   never NaN (as PyTorch >= 2.5 and ONNX do). NaN in Q, K or V reaches
 *   the output rows that read it: a NaN in row i of Q makes output row i
 *   NaN. Keys skipped by position (causal frontier, window, kv_lengths, a
 *   mask's or bias's missing columns) take no part in the output on any
 *   path (the step path still shows their scores), so NaN or Infinity in
 *   their K or V reaches no output. A key masked by a keep-mask 0 or a
 *   -Infinity bias is read with weight 0, and 0 * NaN and 0 * Infinity are
 *   NaN: NaN or Infinity in V at such a key makes the row's output NaN (as
 *   in ONNX and PyTorch), unless the row has no allowed key at all (then 0).
 *
 * POSITIONS AND SINKS
 *
 *   RoPE (options.rope_dims > 0): each q row at its position p = i + off
 *   and each k row at its position j turns by angles p w_c, w_c =
 *   rope_theta^(-2c / rope_dims), c < rope_dims / 2: pairs (c, c +
 *   rope_dims / 2) (Hugging Face's rotate_half, Llama; ONNX
 *   RotaryEmbedding interleaved = 0), or (2c, 2c + 1) with
 *   ATTN_ROPE_INTERLEAVED (GPT-J; interleaved = 1); elements from rope_dims
 *   to d_k stay (partial rotary). cos and sin are computed in float64 and
 *   rounded to float32 (c/kernels/f32-rope.h), the turn in float32:
 *   (a cos - b sin, b cos + a sin), each product rounded. ATTN_ROPE_QUERIES
 *   turns the queries only: keys already turned (a KV cache turns them as
 *   they are appended, attn_rope). The builds turn alike, bit for bit.
 *   Cost: a cos and sin table of (n_q + n_k) rope_dims floats per call and
 *   one turn of Q and K, every call; through a KV cache, whose keys turn
 *   once at append, only the query turns. Scratch grows by the table and by
 *   n_k d_k + max(n_q, heads / kv_heads) d_k floats
 *   (attn_sdpa_scratch_size_with).
 *   Errors: ATTN_ERR_ROPE.
 *
 *   ALiBi (options.alibi, a slope per query head): logit(i, j) +=
 *   slope_h * (j - p), that is -slope_h (p - j), added after the bias, in
 *   the kernels: no (n_q, n_k) array. Softmax is shift invariant, so the
 *   kernels add it relative to the row's reference key r, the last key
 *   its position rule lets it see (the first for a negative slope):
 *   slope_h * (j - r), exact distances whatever the query offset, so the
 *   weights and output are float64's within float32 rounding at any
 *   offset; every allowed key's term is <= 0 and r's is 0, so a huge slope
 *   weighs far keys 0 (never NaN). lse and the step logits add the row's
 *   constant slope_h * (r - p) back (one rounding), so they are as
 *   defined above (where that constant leaves float32's range, as with a
 *   slope of 3e38 far from the keys, they are +-Infinity while the weights
 *   and output stay those of the relative form); the backward recomputes the rows' log-sum-exp of a head
 *   with a slope rather than read a given lse (which far from the keys
 *   holds few bits of the row's constant). With a sink, the sink joins in
 *   the same frame. Cost: one multiply and one add per logit.
 *   Errors: ATTN_ERR_ALIBI (a slope not finite).
 *
 *   Sinks (options.sinks, a logit s_h per query head, GPT-OSS; ONNX
 *   GroupQueryAttention's head_sink): s_h joins every row's softmax
 *   denominator and carries no value:
 *     weight_j = exp(z_j) / (sum_k exp(z_k) + exp(s_h)),  lse = log(that sum).
 *   A row with no allowed key gets output 0, weights 0 and lse = s_h.
 *   Cost: one exp per row. Errors: ATTN_ERR_SINKS (a sink not finite).
 *
 * TWO PATHS
 *
 *   Output path (no step buffers): a fused kernel in the FlashAttention style.
 *   Keys are visited in blocks with a running row max and sum (online
 *   softmax), so working memory is O(n_k * d_k + d_v), never O(n_q * n_k).
 *   With fewer than 4 query rows (decoding a token at a time), and for tiny
 *   problems, a decode kernel reads K and V in place instead: packing them
 *   for the fused kernel would cost more than the attention. Same results
 *   up to rounding; attn_sdpa_kernel() states the rule.
 *
 *   Step path (scores, scaled and weights given): the textbook order, writing
 *   every step, each (batch, heads, n_q, n_k):
 *     scores  = Q K^T
 *     scaled  = scores * scale              before softcap, mask and bias
 *     logits  = softcap(scaled) + bias      -Infinity where not allowed
 *     weights = softmax of the logits       0 where not allowed
 *     output  = weights V
 *   lse (batch, heads, n_q) = log(sum_j exp(logits_j)), natural log, on
 *   either path: what a backward pass needs to recompute the weights.
 *
 * NUMERICS
 *
 *   Everything is float32, accumulated in float32. The SIMD128 and scalar
 *   builds round every product before its add (no FMA; compiled with
 *   -ffp-contract=off): their results are deterministic, the same bits on
 *   every engine and machine for a given module. The relaxed-SIMD build
 *   differs; see RELAXED SIMD below. Softmax subtracts the row max before
 *   exp, so finite logits of any size give finite weights. The output
 *   paths sum weights of at most 1 times V before dividing by their sum,
 *   so outputs are finite when n_k max |v| <= FLT_MAX (larger V may
 *   overflow to Infinity).
 *   exp is a polynomial after range reduction (XNNPACK's rr2-p5 scheme) on
 *   [-87.34, 0], used by every build; max relative error 1.7e-7
 *   (about 1.4 ulp), see tests/native/test_attention.c and
 *   c/kernels/f32-exp.h. Below -87.34 it returns 0 (the true value
 *   is below FLT_MIN and cannot change a softmax sum of at least 1).
 *   tanh (softcap) is -e / (2 + e) with e = expm1(-2|x|) from the same
 *   range reduction and polynomial, sign restored (c/kernels/f32-tanh.h);
 *   max error against double tanh 1.5e-7 absolute (at most 11 ulp,
 *   for |x| near 0.06), so softcap(x) = c tanh(x / c) is within 1.5e-7 c
 *   (tests/native/test_attention.c).
 *   lse = m + log(l) with the row max m and sum l of the softmax, log from
 *   the C library (the same code in every build).
 *   Against a float64 reference the outputs agree to about 1e-6 times the
 *   largest magnitude at the sizes tested; the tests use 2e-5.
 *   The SIMD128 and scalar builds compute every logit, exp and tanh with the
 *   same bits; they sum in different orders in the fused kernel and the
 *   step path's softmax, so they agree there to rounding; the decode kernel
 *   (fewer than 4 query rows) gives the same bits in both builds, lse
 *   included. The output path and the step path agree to rounding.
 *
 * RELAXED SIMD
 *
 *   The third build (dist/attention-relaxed.wasm) is the SIMD128 kernels
 *   compiled with -mrelaxed-simd: every multiply-add of their hot loops
 *   (Q K^T, P V, the decode kernel's dot products, the backward's products)
 *   and of the SIMD exp and tanh (range reduction, polynomial, the final
 *   s + t s p) is one f32x4.relaxed_madd (c/kernels/f32-madd-wasmsimd.h, the
 *   only place the builds differ). The engine makes it fused (one rounding)
 *   where the CPU has FMA and mul then add (two roundings) where it has not,
 *   so this build's results may differ in the last bits between machines,
 *   and from the SIMD128 and scalar builds (an engine on a given CPU makes
 *   one choice, so they repeat there). Plain C in the kernels (the step path's logits, scalar tails)
 *   is not fused. Fusing drops roundings, so no error bound above grows;
 *   in the tests the relaxed build stays within 2e-6 of the largest
 *   magnitude of the scalar build's result, forward and backward
 *   (tests/fixtures.test.js, tests/backward.test.js). Where the same bits
 *   on every machine matter, use the SIMD128 build (the JavaScript loader's
 *   deterministic: true).
 *
 * SIMD
 *
 *   Chosen at compile time: compiled with -msimd128 (__wasm_simd128__) the
 *   kernels in c/kernels/ *-wasmsimd.c are used, otherwise their scalar twins
 *   in *-scalar.c; -mrelaxed-simd on top gives the relaxed build. The
 *   JavaScript loader picks a module by probing WebAssembly.validate.
 *
 * ERRORS
 *
 *   Every function checks its arguments and returns an attn_status; nothing
 *   calls exit or abort, and nothing is written when a check fails.
 *   attn_status_string() turns a status into a message.
 *
 * MEMORY
 *
 *   No function allocates. The caller provides the scratch buffer sized by
 *   attn_sdpa_call_scratch_size() (or the larger attn_sdpa_scratch_size());
 *   buffers must not overlap except where stated. A call's memory is its
 *   tensors, its step matrices when it asks for them, and its scratch,
 *   which is O((n_k + rows) (d_k + d_v)) and never (n_q, n_k): only the
 *   step path's (batch, heads, n_q, n_k) count must fit, elsewhere the
 *   sizes are bounded by what the buffers need (ATTN_ERR_OVERFLOW when an
 *   extent does not fit size_t).
 *   Struct fields are 4 bytes each in wasm32 (pointers and size_t
 *   included), in the order declared, so JavaScript fills them by offset.
 */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attn_status {
  ATTN_OK = 0,
  ATTN_ERR_NULL = 1,      /* a required pointer is NULL */
  ATTN_ERR_SHAPE = 2,     /* a size is zero, negative or too large */
  ATTN_ERR_HEADS = 3,     /* heads is not a multiple of kv_heads */
  ATTN_ERR_SCALE = 4,     /* scale is NaN or infinite */
  ATTN_ERR_FLAGS = 5,     /* unknown bits in flags */
  ATTN_ERR_SCRATCH = 6,   /* scratch buffer NULL or smaller than required */
  ATTN_ERR_OVERFLOW = 7,  /* an element count does not fit in size_t */
  ATTN_ERR_STEPS = 8,     /* some but not all of scores, scaled, weights */
  ATTN_ERR_SOFTCAP = 9,   /* softcap is negative, NaN or infinite */
  ATTN_ERR_WINDOW = 10,   /* a window side is below -1 */
  ATTN_ERR_LENGTHS = 11,  /* a kv_lengths entry is outside [0, n_k] */
  ATTN_ERR_MASK = 12,     /* a mask or bias has cols outside [0, n_k] */
  ATTN_ERR_ROPE = 13,     /* rope_dims odd, negative or above d_k, rope_theta not finite >= 1,
                             or unknown rope_flags */
  ATTN_ERR_SINKS = 14,    /* a sink is NaN or infinite */
  ATTN_ERR_ALIBI = 15,    /* an ALiBi slope is NaN or infinite */
  ATTN_ERR_DTYPE = 16,    /* a KV cache's dtype is not an attn_kv_dtype */
} attn_status;

/* Flags for attn_options.flags. */
#define ATTN_CAUSAL 1u  /* key j allowed only when j <= i + query offset */
#define ATTN_WINDOW 2u  /* window_left and window_right apply */

/* Flags for attn_options.rope_flags. */
#define ATTN_ROPE_INTERLEAVED 1u  /* pairs (2c, 2c + 1) (GPT-J); else (c, c + rope_dims / 2) */
#define ATTN_ROPE_QUERIES 2u      /* turn q only: k holds keys turned already (attn_rope) */

/* Where element (b, h, i, c) of a (batch, heads, n, d) tensor lives:
 *   base[b * batch_stride + h * head_stride + i * row_stride + c]
 * All in elements; the last dimension is always contiguous. A tensor whose
 * three strides are all 0 is read as contiguous (batch, heads, n, d), the
 * PyTorch layout ("bhsd"). The (batch, seq, heads, d) layout ("bshd", the
 * same bytes as ONNX's 3-D (batch, seq, heads * d)) is
 *   batch_stride = n * heads * d, head_stride = d, row_stride = heads * d. */
typedef struct attn_strides {
  size_t batch_stride;
  size_t head_stride;
  size_t row_stride;
} attn_strides;

/* Sizes and strides of one attention call. q and out have `heads` heads,
 * k and v have `kv_heads` heads. */
typedef struct attn_shape {
  int32_t batch, heads, kv_heads;
  int32_t n_q, n_k, d_k, d_v;
  attn_strides q;    /* (batch, heads,    n_q, d_k) */
  attn_strides k;    /* (batch, kv_heads, n_k, d_k) */
  attn_strides v;    /* (batch, kv_heads, n_k, d_v) */
  attn_strides out;  /* (batch, heads,    n_q, d_v) */
} attn_shape;

/* A mask or bias broadcast to (batch, heads, n_q, n_k): element (b, h, i, j)
 * for j < cols is data[b * batch_stride + h * head_stride + i * row_stride + j];
 * a stride of 0 repeats that dimension (numpy broadcasting of a size-1 dim).
 * Keys j >= cols are not allowed (ONNX pads a short last dimension so);
 * cols 0 means n_k. A flat (n_q, n_k) array is {0, 0, n_k, 0}. */
typedef struct attn_bcast {
  size_t batch_stride;
  size_t head_stride;
  size_t row_stride;
  int32_t cols;
} attn_bcast;

/* Everything besides the tensors. Zero-initialised options mean no flags,
 * mask, bias, softcap, window, offsets or lengths; the scale is always read
 * (attn_default_scale(d_k) is the usual choice). */
typedef struct attn_options {
  float scale;                  /* any finite float; attn_default_scale(d_k) is the usual */
  uint32_t flags;               /* ATTN_CAUSAL */
  const uint8_t* mask;          /* keep-mask (nonzero = allowed) or NULL */
  attn_bcast mask_layout;
  const float* bias;            /* added to the logits, or NULL */
  attn_bcast bias_layout;
  float softcap;                /* > 0: logits = softcap * tanh(scaled / softcap); 0: none */
  int32_t window_left;          /* with ATTN_WINDOW: keys p - window_left .. p + window_right, */
  int32_t window_right;         /* p = i + query offset; -1 leaves that side unbounded */
  int32_t query_offset;         /* position of query row 0 among the keys (all batches) */
  const int32_t* query_offsets; /* (batch) per batch entry, or NULL for query_offset */
  const int32_t* kv_lengths;    /* (batch) keys j >= kv_lengths[b] not allowed, or NULL */
  const float* sinks;           /* (heads) a logit per query head joining every softmax, or NULL */
  const float* alibi;           /* (heads) ALiBi slopes: logits += slope (j - p), or NULL */
  float rope_theta;             /* RoPE's base, finite >= 1 (10000 in most models), read when rope_dims > 0 */
  int32_t rope_dims;            /* 0: no RoPE; else even, at most d_k: the leading dims turned */
  uint32_t rope_flags;          /* ATTN_ROPE_INTERLEAVED, ATTN_ROPE_QUERIES */
} attn_options;

/* Optional outputs. scores, scaled, logits and weights are each
 * (batch, heads, n_q, n_k) contiguous; scores, scaled and weights are given
 * together (the step path), logits only with them. lse (batch, heads, n_q)
 * works on every path. */
typedef struct attn_steps {
  float* scores;   /* Q K^T */
  float* scaled;   /* scores * scale */
  float* logits;   /* softcap(scaled) + bias, -Infinity where not allowed, or NULL */
  float* weights;  /* softmax of the logits; 0 where not allowed */
  float* lse;      /* natural log of sum_j exp(logit_j): -Infinity for a row with no allowed key, or NULL */
} attn_steps;

/* A short English message for a status, never NULL. */
const char* attn_status_string(int32_t status);

/* 1 when this build uses the SIMD128 kernels, 0 for the scalar kernels. */
int32_t attn_simd_enabled(void);

/* The default scale 1 / sqrt(d_k), rounded to float32. 0 when d_k < 1. */
float attn_default_scale(int32_t d_k);

/* Floats of scratch that is enough for every call of attn_sdpa with this
 * shape (sizes only; strides do not matter): the packed K and V of one kv
 * head, a few small tiles and a row of n_k logits per query head of a kv
 * head (grouped-query decoding). attn_sdpa_call_scratch_size gives what one
 * call needs, often less. Returns 0 when the sizes are invalid or the count
 * overflows. */
size_t attn_sdpa_scratch_size(const attn_shape* shape);

/* The same for a call with these options: more with RoPE (POSITIONS AND
 * SINKS), enough for every float32 call. 0 when the sizes or the RoPE
 * options are invalid or the count overflows. attn_sdpa checks its scratch
 * against attn_sdpa_call_scratch_size_with, never more than this. */
size_t attn_sdpa_scratch_size_with(const attn_shape* shape, const attn_options* options);

/* Turns, in place, the leading dims of rows of x as RoPE does (POSITIONS
 * AND SINKS; theta, dims, flags as rope_theta, rope_dims and rope_flags'
 * ATTN_ROPE_INTERLEAVED): `heads` groups of n rows of d floats, group g
 * from x + g * head_stride, rows row_stride apart, row i at position
 * position + i. A KV cache calls it on the keys it appends. scratch holds
 * n * dims floats (the cos and sin table). */
attn_status attn_rope(float* x, int32_t heads, size_t head_stride, int32_t n, size_t row_stride, int32_t d,
                      int32_t position, float theta, int32_t dims, uint32_t flags, float* scratch,
                      size_t scratch_floats);

/* Scaled dot-product attention, shapes and semantics above. shape, q, k, v,
 * out, options and scratch are required; steps may be NULL. out must not
 * overlap the inputs. */
attn_status attn_sdpa(const attn_shape* shape, const float* q, const float* k, const float* v,
                      float* out, const attn_options* options, const attn_steps* steps,
                      float* scratch, size_t scratch_floats);

/* Floats of scratch that this very call of attn_sdpa or attn_sdpa_kv
 * needs: kv_dtype its K and V's attn_kv_dtype (ATTN_KV_FLOAT32 for
 * attn_sdpa), with_steps nonzero when it gives step buffers. Each path
 * reserves only what it uses (MEMORY above): a decode call (fewer than 4
 * query rows, tiny problems, and a compact cache's calls of up to
 * ATTN_KV_DECODE_ROWS rows) a row of n_k logits per row it holds at once
 * and, for a compact cache, one block of K or V as float32; the fused
 * kernel K and V of one kv head packed; the step path K^T of one kv head;
 * a compact cache on the fused or step path adds its kv head's K and V as
 * float32. Never more than attn_sdpa_scratch_size() for float32. 0 when
 * the sizes or the dtype are invalid or the count overflows. */
size_t attn_sdpa_call_scratch_size(const attn_shape* shape, int32_t kv_dtype, int32_t with_steps);

/* The same for a call with these options: more with RoPE, after the rest
 * (POSITIONS AND SINKS). With a compact cache RoPE turns only the queries
 * (the keys were turned as they were written), so rope_flags must hold
 * ATTN_ROPE_QUERIES (else the call returns ATTN_ERR_ROPE). attn_sdpa and
 * attn_sdpa_kv check their scratch against this. 0 as above, or when the
 * RoPE options are invalid. */
size_t attn_sdpa_call_scratch_size_with(const attn_shape* shape, const attn_options* options, int32_t kv_dtype,
                                        int32_t with_steps);

/* The kernel attn_sdpa runs on the output path (no step buffers, float32
 * K and V) for n_q query rows, n_k keys, rows of d_k and `group` query heads
 * per kv head:
 *   ATTN_KERNEL_FUSED           n_q >= 4 and n_q n_k d_k > 2048;
 *   ATTN_KERNEL_GROUPED_DECODE  otherwise, with n_q = 1 and group > 1: one
 *                               call of the decode kernel takes the one query
 *                               row of every head of the group (up to 64);
 *   ATTN_KERNEL_DECODE          otherwise: the decode kernel, head by head.
 * The kernels round differently, so a caller that splits a call into parts
 * (rows, heads) gets the whole call's bits only where every part runs the
 * whole call's kernel. attn_sdpa decides with this function.
 * ATTN_KERNEL_INVALID when a size is below 1. */
typedef enum attn_kernel {
  ATTN_KERNEL_INVALID = -1,
  ATTN_KERNEL_DECODE = 0,
  ATTN_KERNEL_GROUPED_DECODE = 1,
  ATTN_KERNEL_FUSED = 2
} attn_kernel;

int32_t attn_sdpa_kernel(int32_t n_q, int32_t n_k, int32_t d_k, int32_t group);

/* COMPACT KV CACHES
 *
 * attn_sdpa_kv is attn_sdpa with K and V stored as float16 or int8 (a KV
 * cache that holds 2 or about 3.8 times the tokens in the same memory),
 * read where they are. On the decode path (up to ATTN_KV_DECODE_ROWS query
 * rows) the decode kernel takes every query row of a kv head at once and
 * goes through the keys in blocks of 64. A float16 value is read as its
 * bits' float32, which is the value times 2^-112 exactly, and the 2^112
 * goes onto the other factor (q for the logits, the weights for P V), a
 * power of two, so every product is the same real number: the same bits as
 * attn_sdpa over the values attn_kv_read gives. In a decode step (one query
 * row per head) four heads read each block of K in place; otherwise a
 * block of K, then of V, is widened once into scratch for all rows (the
 * decode scratch holds rows x d_k more floats for the scaled queries). A
 * call with a query value |q| >= 2^16 or NaN (2^112 q could overflow)
 * reads K widened to its values instead; a block holding Infinity or NaN
 * (found by the max of its |h|) gets those values rebuilt and goes through
 * scratch. An int8
 * K is read in place by integer dot products,
 * each query row rounded to 16 bits first (sq = max |q| / 32767, so each
 * value of q moves by at most max |q| / 65534), and an int8 V is loaded
 * as float32 by blocks. The SIMD128 and scalar builds give the same bits.
 * Calls of more rows convert one kv head's K and V to float32 scratch and
 * run the fused or step path on them (the same floats as attn_kv_read).
 *
 * float16: IEEE binary16, rounded to nearest even on store. Relative error
 *   at most 2^-11 (4.9e-4) per value in [6.1e-5, 65504]; smaller values
 *   have an absolute error of at most 2^-25; past 65504 a value becomes
 *   Infinity (then NaN in the output), as in every float16 cache.
 * int8: symmetric, one float32 scale per (token, kv head) row of d values,
 *   s = max |x| / 127, x stored as round(x / s) in [-127, 127], read as
 *   round(x / s) * s: absolute error at most s / 2 = max|x| / 254 per
 *   value, relative to the row's largest value. Per row because a token's
 *   row is complete when it is appended: it is quantized once, append and
 *   truncate cost O(1) per token, and the row never changes afterwards; the
 *   scale costs 4 bytes per row (d + 4 bytes a row against float32's 4 d).
 *   An outlier of size A in a row costs the row's other values A / 254
 *   each.
 *
 * Error of the output against the float32 cache: with key errors e_jc =
 * |k'_jc - k_jc|, the logits of a query row move by at most
 *   delta = scale * max_j sum_c (|q_c| e_jc + r |k'_jc|)
 * over the keys it sees, r = max |q| / 65534 for int8 on the decode path
 * (q rounded to 16 bits) and 0 otherwise; softcap never magnifies it. So
 * every weight moves by a factor within exp(+-2 delta), and each output
 * element by at most
 *   (exp(2 delta) - 1) * max_j |v_j| + max_jc |v'_jc - v_jc|
 * plus float32 rounding. For int8, e_jc <= s_j / 2; for float16, e_jc <=
 * 2^-11 |k_jc| (+ 2^-25). tests/kvcache-dtype.test.js checks this bound
 * on every row of tests/fixtures/kvcache.json (bench/RESULTS.md has the
 * errors found there).
 *
 * A row holding NaN or Infinity reads back as NaN throughout in int8 (its
 * scale is NaN), value by value in float16. */
typedef enum attn_kv_dtype {
  ATTN_KV_FLOAT32 = 0,  /* float */
  ATTN_KV_FLOAT16 = 1,  /* uint16_t: IEEE binary16 bits */
  ATTN_KV_INT8 = 2,     /* int8_t, with a float scale per (token, kv head) row */
} attn_kv_dtype;

/* Query rows up to which attn_sdpa_kv keeps a compact cache on the decode
 * path (speculative decoding verifies this many draft tokens at once). */
#define ATTN_KV_DECODE_ROWS 16

/* K and V of attn_sdpa_kv: k and v in shape->k's and shape->v's strides,
 * counted in elements of the dtype; for int8 the scales of K's and V's rows,
 * element (b, h, j) at b * batch_stride + h * head_stride + j * row_stride
 * of k_scales (k_scale strides) or v_scales (v_scale strides), in floats;
 * all three 0 is contiguous (batch, kv_heads, n_k). */
typedef struct attn_kv {
  int32_t dtype;            /* attn_kv_dtype */
  const void* k;            /* (batch, kv_heads, n_k, d_k) */
  const void* v;            /* (batch, kv_heads, n_k, d_v) */
  const float* k_scales;    /* int8: (batch, kv_heads, n_k); else ignored */
  const float* v_scales;
  attn_strides k_scale;
  attn_strides v_scale;
} attn_kv;

/* attn_sdpa over a compact (or float32) K and V; everything else as
 * attn_sdpa. ATTN_ERR_DTYPE for an unknown dtype, ATTN_ERR_NULL for int8
 * without scales. */
attn_status attn_sdpa_kv(const attn_shape* shape, const float* q, const attn_kv* kv, float* out,
                         const attn_options* options, const attn_steps* steps, float* scratch,
                         size_t scratch_floats);

/* Stores rows x (rows, d) contiguous into rows consecutive rows of a
 * compact cache at dst (float16 or int8, rows d elements apart), with int8
 * scales at scales[0 .. rows) (COMPACT KV CACHES above). */
attn_status attn_kv_write(int32_t dtype, const float* x, int32_t rows, int32_t d, void* dst, float* scales);

/* The float32 values of rows (rows, d) of a compact cache at src (and
 * scales, for int8) into dst (rows, d): what attn_sdpa_kv computes with. */
attn_status attn_kv_read(int32_t dtype, const void* src, const float* scales, int32_t rows, int32_t d,
                         float* dst);

/* c (m, n) = a (m, k) b (k, n), all row-major and contiguous. c must not
 * overlap a or b. */
attn_status attn_matmul(const float* a, const float* b, float* c, int32_t m, int32_t k,
                        int32_t n);

/* Row-wise numerically stable softmax of x (rows, cols) into y (same shape;
 * y may equal x). -Infinity entries get weight 0; a row of only -Infinity
 * becomes all 0. */
attn_status attn_softmax(const float* x, float* y, int32_t rows, int32_t cols);

/* THE TRANSFORMER BLOCK (attention-block.c; error: docs/numerics.md). Row-major, contiguous;
 * no output overlaps an input unless said.
 * attn_matmul_ex: c (m, n) = a (m, k) b (k, n) (b (n, k) transposed with ATTN_MATMUL_TRANSPOSE_B)
 *   + bias (n, or NULL) on every row; a transposed b needs k n floats of scratch, the backward
 *   attn_matmul_scratch_floats() = max(m k, k n, m n) (0 for invalid sizes). The backward
 *   writes da (m, k), db (b's shape), dbias (n) from dout (m, n); NULL: not wanted.
 * attn_layer_norm, attn_rms_norm: rows over cols as PyTorch's layer_norm (biased variance)
 *   and rms_norm; gamma NULL is 1, beta NULL 0; eps finite, >= 0 (else ATTN_ERR_SCALE); y may
 *   equal x. Backward: dx (may equal dout), dgamma, dbeta (cols, overwritten, or NULL).
 * attn_gelu: approximate 0 is x Phi(x), 1 the tanh form (else ATTN_ERR_FLAGS); y may equal x.
 *   Backward: dx = dout gelu'(x). */
#define ATTN_MATMUL_TRANSPOSE_B 1u
size_t attn_matmul_scratch_floats(int32_t m, int32_t k, int32_t n);
attn_status attn_matmul_ex(const float* a, const float* b, const float* bias, float* c, int32_t m, int32_t k, int32_t n,
                           uint32_t flags, float* scratch, size_t scratch_floats);
attn_status attn_matmul_backward(const float* a, const float* b, const float* dout, float* da, float* db, float* dbias,
                                 int32_t m, int32_t k, int32_t n, uint32_t flags, float* scratch, size_t scratch_floats);
attn_status attn_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y, int32_t rows, int32_t cols);
attn_status attn_layer_norm_backward(const float* x, const float* dout, const float* gamma, float eps, float* dx, float* dgamma,
                                     float* dbeta, int32_t rows, int32_t cols);
attn_status attn_rms_norm(const float* x, const float* gamma, float eps, float* y, int32_t rows, int32_t cols);
attn_status attn_rms_norm_backward(const float* x, const float* dout, const float* gamma, float eps, float* dx,
                                   float* dgamma, int32_t rows, int32_t cols);
attn_status attn_gelu(const float* x, float* y, int32_t n, int32_t approximate);
attn_status attn_gelu_backward(const float* x, const float* dout, float* dx, int32_t n, int32_t approximate);

/* BACKWARD PASS
 *
 * attn_sdpa_backward gives the gradients of a loss L with respect to Q, K,
 * V (and the bias) from dout = dL/dO, as PyTorch's autograd of
 * scaled_dot_product_attention does:
 *
 *   P = the weights (softmax over allowed keys),  D_i = dout_i . out_i
 *   dV = P^T dout                      (kv heads sum their query heads)
 *   dZ = P * (dout V^T - D)            dbias = dZ (summed where broadcast)
 *   dS = dZ * (1 - tanh^2(scaled / softcap)) when softcap > 0, else dZ
 *   dQ = scale dS K,  dK = scale dS^T Q
 *
 * Shape, strides, options and the rule for an allowed key are attn_sdpa's
 * (the same attn_shape and attn_options): dout has out's strides, dq q's,
 * dk k's, dv v's; dbias is written in the bias's attn_bcast layout, a
 * broadcast dimension (stride 0) summing its gradients.
 *
 * P is recomputed block by block from the row log-sum-exp (FlashAttention-2),
 * never stored for the whole problem: working memory is
 * attn_sdpa_backward_scratch_size() floats, O((n_k + n_q) (d_k + d_v)).
 * lse (batch, heads, n_q), natural log, as attn_steps.lse gives it, and out
 * are optional: pass the forward's, or NULL. Without lse, or without out
 * (D_i is then sum_j P_ij dout_i . v_j), one more pass over the keys
 * computes them. A given lse must come from the same logits: for logits of
 * magnitude M, an lse that summed in another order shifts the weights by
 * about ulp(M) relatively (1e-3 at M = 1e4), where the recomputed one
 * cancels exactly.
 *
 * With RoPE the gradients reach q and k through the turn: the kernels give
 * them for the turned rows and each is turned back (R^T, ATTN__ROPE_INVERSE).
 * With ALiBi the slopes get no gradient. With sinks, dsinks (heads) =
 *   -sum over batch and rows of exp(s_h - lse_i) D_i.
 *
 * A row with no allowed key adds nothing: its dq row is 0 and it adds 0 to
 * dk, dv and dbias, never NaN. NaN in q, dout or out row i makes dq row i
 * NaN and may reach all of dk, dv and dbias of its head (a masked weight 0
 * times NaN), as in PyTorch; other rows of dq stay clean.
 *
 * Numerics: float32 as the forward; the weights are recomputed with the
 * same exp and tanh. Against float64 analytic gradients the results agree
 * to about 1e-6 times the largest gradient at the sizes tested (tests use
 * 5e-6). The SIMD and scalar kernels keep the same summation orders: the
 * SIMD128 and scalar builds give the same bits; the relaxed-SIMD build
 * fuses the multiply-adds (RELAXED SIMD above) and stays within 2e-6 of
 * the largest gradient of the scalar build in the tests. */

/* Where attn_sdpa_backward writes; all overwritten (not added to), none may
 * overlap the inputs. */
typedef struct attn_grads {
  float* dq;     /* like q: (batch, heads, n_q, d_k), shape->q's strides */
  float* dk;     /* like k: (batch, kv_heads, n_k, d_k), shape->k's strides */
  float* dv;     /* like v: (batch, kv_heads, n_k, d_v), shape->v's strides */
  float* dbias;  /* like the bias, in options->bias_layout, or NULL; ignored without a bias */
  float* dsinks; /* (heads), or NULL; ignored without sinks */
} attn_grads;

/* Floats of scratch that attn_sdpa_backward needs for this shape: the packed
 * K and V of one kv head and about 4 n_q (d_k + d_v) for one query head.
 * 0 when the sizes are invalid or the count overflows. */
size_t attn_sdpa_backward_scratch_size(const attn_shape* shape);

/* The same for a call with these options (more with RoPE); the one
 * attn_sdpa_backward checks against. */
size_t attn_sdpa_backward_scratch_size_with(const attn_shape* shape, const attn_options* options);

/* Gradients of attn_sdpa. shape, q, k, v, dout, options, grads (dq, dk, dv)
 * and scratch are required; out and lse may be NULL. Errors as attn_sdpa;
 * nothing is written when a check fails. */
attn_status attn_sdpa_backward(const attn_shape* shape, const float* q, const float* k,
                               const float* v, const float* out, const float* dout,
                               const float* lse, const attn_options* options,
                               const attn_grads* grads, float* scratch, size_t scratch_floats);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTENTION_H */
