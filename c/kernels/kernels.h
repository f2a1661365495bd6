/* kernels.h - private kernel declarations (not installed, not public).
 *
 * Every kernel family has a scalar twin (the readable spec and the test
 * oracle, also compiled natively) and a wasm SIMD128 variant with the same
 * signature and algorithm. attention.c picks one at compile time through the
 * ATTN__KERNEL() macro below.
 *
 * What the two builds share bit for bit (attention.h states the same):
 *   - exp, tanh (softcap), gemm, the packing and every logit: the same
 *     operations in the same order;
 *   - the decode kernel, lse included: its twins sum in the same order;
 * and where they differ by rounding only:
 *   - the fused kernel's row sums l (four lanes, then combined);
 *   - softmax's row sum in the step path (four lanes, then combined).
 *
 * Kernels only assert; the public functions in attention.c check arguments.
 * ./build.sh debug keeps the asserts (tests/debug.test.js runs it).
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "f32-tanh.h"

/* Query rows per tile of the fused kernel, and keys per key block. */
#define ATTN__MR 4
#define ATTN__KB 256

/* Packing width: the fused kernel reads K and V in panels of this many keys
 * or value columns (zero padded), so the SIMD kernels always read whole
 * vectors from consecutive addresses. */
#define ATTN__PAD 8

static inline size_t attn__round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* max(a, b) where NaN wins, as wasm's f32x4.max: a row with a NaN logit gets
 * a NaN max, so its output is NaN rather than a softmax that skipped it. */
static inline float attn__max_nan(float a, float b) {
  if (a != a || b != b) return a + b;
  return a > b ? a : b;
}

/* c (m, n) = a (m, k) b (k, n); strides in elements. The sum over k runs in
 * order 0..k-1 with the product rounded before each add, in both twins, so
 * the two give identical bits. */
typedef void (*attn__f32_gemm_fn)(size_t m, size_t n, size_t k, const float* a, size_t a_stride,
                                  const float* b, size_t b_stride, float* c, size_t c_stride);
void attn__f32_gemm_scalar(size_t m, size_t n, size_t k, const float* a, size_t a_stride,
                           const float* b, size_t b_stride, float* c, size_t c_stride);
void attn__f32_gemm_wasmsimd(size_t m, size_t n, size_t k, const float* a, size_t a_stride,
                             const float* b, size_t b_stride, float* c, size_t c_stride);

/* y (n) = softmax of x (n), -Infinity entries weigh 0, an all -Infinity row
 * gives all 0. y may equal x. */
void attn__f32_softmax_scalar(size_t n, const float* x, float* y);
void attn__f32_softmax_wasmsimd(size_t n, const float* x, float* y);

/* kp (n_k_pad / 8, d_k, 8) = k (n_k, d_k, rows k_stride apart) in panels of
 * 8 keys, the layout of attn__flash_args.kp; keys past n_k are 0. */
void attn__f32_pack_k_scalar(const float* k, size_t k_stride, size_t n_k, size_t d_k, float* kp);
void attn__f32_pack_k_wasmsimd(const float* k, size_t k_stride, size_t n_k, size_t d_k, float* kp);

/* What one (batch, head) of the output path reads and writes besides K and V,
 * shared by the flash and decode kernels. Rows are query rows, or with
 * decode's one_query the heads of one query (grouped-query decoding); every
 * pointer below advances by its row stride per row. */
typedef struct attn__rows {
  const float* q;        /* (n_q, d_k) queries, rows q_stride apart */
  float* out;            /* (n_q, d_v) output, rows out_stride apart */
  const uint8_t* mask;   /* (n_q, >= n_k) keep-mask rows mask_stride apart, or NULL */
  const float* bias;     /* (n_q, >= n_k) bias rows bias_stride apart, or NULL */
  float* lse;            /* (n_q) log-sum-exp of each row's logits, or NULL */
  size_t q_stride, out_stride, mask_stride, bias_stride;
  size_t n_q;
  size_t n_k;            /* keys that exist for this head: n_k clipped to kv_lengths[b]
                            and to the mask's and bias's cols */
  size_t d_k, d_v;
  float scale;
  float softcap;         /* > 0: logits = softcap * tanh(scaled / softcap) */
  int64_t offset;        /* position of query 0 among the keys */
  int32_t window_left, window_right;  /* -1: that side unbounded */
  int causal;
} attn__rows;

/* Keys [*lo, *hi) that query index i may see by position: n_k, the causal
 * frontier and the window, as attention.h defines them. Keys outside are
 * never computed. lo == hi when none. */
static inline void attn__key_range(const attn__rows* rows, size_t i, size_t* lo, size_t* hi) {
  const int64_t p = (int64_t)i + rows->offset;
  int64_t l = 0, h = (int64_t)rows->n_k;
  if (rows->causal && p + 1 < h) h = p + 1;
  if (rows->window_right >= 0 && p + rows->window_right + 1 < h) h = p + rows->window_right + 1;
  if (rows->window_left >= 0 && p - rows->window_left > l) l = p - rows->window_left;
  if (h < 0) h = 0;
  if (l > h) l = h;
  *lo = (size_t)l;
  *hi = (size_t)h;
}

/* The fused kernel: 4 query rows at a time over packed K and V. */
typedef struct attn__flash_args {
  attn__rows rows;
  const float* kp;       /* (n_k_pad / 8, d_k, 8) K in panels of 8 keys: key j,
                            element p at kp[((j / 8) * d_k + p) * 8 + j % 8]; keys past n_k are 0 */
  const float* vp;       /* (v_stride / 8, n_k, 8) V in panels of 8 columns: key j,
                            column c at vp[((c / 8) * n_k + j) * 8 + c % 8]; columns past d_v are 0 */
  size_t v_stride;       /* attn__round_up(d_v, ATTN__PAD), the accumulator row width */
  float* tile;           /* attn__flash_tile_floats(d_k, d_v) floats */
} attn__flash_args;

/* The decode kernel: query rows one or two at a time over K and V where
 * they are (fewer than 4 rows, or tiny problems; attention.c picks, see
 * attn__use_decode). */
typedef struct attn__decode_args {
  attn__rows rows;
  const float* k;        /* (n_k, d_k) keys, rows k_stride apart */
  const float* v;        /* (n_k, d_v) values, rows v_stride apart */
  size_t k_stride, v_stride;
  float* scratch;        /* attn__decode_scratch_floats(n_q, n_k) floats */
  int one_query;         /* the n_q rows are the heads of one query that share this K
                            and V (grouped-query decoding): every row takes query
                            index 0 for its key range */
} attn__decode_args;

/* Scratch of the decode kernel: a row of logits for each of n_q rows (at
 * least 2), and a sum and a max per row. */
static inline size_t attn__decode_scratch_floats(size_t n_q, size_t n_k) {
  const size_t rows = n_q < 2 ? 2 : n_q;
  return rows * attn__round_up(n_k, 4) + 2 * rows;
}

/* Scratch of the fused kernel besides the packed K and V:
 * (MR, KB) score tile, (MR, v_stride) accumulators, MR running maxima,
 * MR running sums and the (d_k, MR) interleaved query tile. */
static inline size_t attn__flash_tile_floats(size_t d_k, size_t d_v) {
  return ATTN__MR * ATTN__KB + ATTN__MR * attn__round_up(d_v, ATTN__PAD) + 2 * ATTN__MR +
         ATTN__MR * d_k;
}

/* attention.c calls the two output kernels through pointers it reads as
 * volatile: a function with one caller is inlined by wasm-opt whatever its
 * size, and V8 then allocates registers for both kernels and the packing as
 * one function, spilling in the inner loops (bench/RESULTS.md). */
void attn__f32_flash_scalar(const attn__flash_args* args);
void attn__f32_flash_wasmsimd(const attn__flash_args* args);
void attn__f32_decode_scalar(const attn__decode_args* args);
void attn__f32_decode_wasmsimd(const attn__decode_args* args);

/* vp (v_stride / 8, n_k, 8) = v (n_k, d_v, rows v_row_stride apart) in
 * panels of 8 columns, the layout of attn__flash_args.vp; columns past d_v
 * are 0. A pure copy: both twins give the same floats. */
void attn__f32_pack_v_scalar(const float* v, size_t v_row_stride, size_t n_k, size_t d_v, float* vp);
void attn__f32_pack_v_wasmsimd(const float* v, size_t v_row_stride, size_t n_k, size_t d_v, float* vp);

/* The step path of one (batch, head): every step matrix written, see
 * attention.h. The rows' n_k is the keys that exist (clipped as for the
 * output kernels); the step matrices have n_cols >= n_k columns, the n_k of
 * the call, and columns from n_k on are not allowed. */
typedef struct attn__steps_args {
  attn__rows rows;
  const float* k;        /* (n_k, d_k) keys, rows k_stride apart */
  const float* v;        /* (n_k, d_v) values, rows v_stride apart */
  size_t k_stride, v_stride;
  size_t n_cols;         /* columns of the step matrices, >= rows.n_k */
  float* kt;             /* (d_k, round_up(n_cols, 8)) scratch for K^T */
  float* scores;         /* (n_q, n_k) each */
  float* scaled;
  float* logits;         /* or NULL */
  float* weights;
} attn__steps_args;

void attn__f32_steps_scalar(const attn__steps_args* args);
void attn__f32_steps_wasmsimd(const attn__steps_args* args);

/* The backward pass (FlashAttention-2 order) for one (batch, query head).
 * Keys go in blocks of BWD_BC; for each block, the query rows that may see
 * one of its keys go in blocks of BWD_BR (tiles of MR in the scalar twin).
 * Per block the weights are recomputed from the saved row log-sum-exp,
 * never stored for the whole head:
 *   p[i][j]  = exp(z_ij - lse_i)                    allowed keys, else 0
 *   dp[i][j] = dout_i . v_j
 *   dz[i][j] = p (dp - delta_i), 0 where p is 0     delta_i = dout_i . out_i
 *   ds[i][j] = dz * (1 - tanh^2(s_ij / c)) * scale  (the softcap factor when c > 0)
 * and the gradients are added into the outputs:
 *   dv_j += sum_i p dout_i,  dk_j += sum_i ds q_i,  dq_i += sum_j ds k_j,
 *   dbias_ij += dz.
 * A row whose lse is -Infinity (no allowed key) adds nothing anywhere. */
#define ATTN__BWD_BC 32
#define ATTN__BWD_BR 64

typedef struct attn__bwd_args {
  const float* q;        /* (n_q, d_k) this query head, rows q_stride apart */
  const float* k;        /* (n_k, d_k) its kv head's keys, rows k_stride apart */
  const float* kp;       /* (n_k_pad / 8, d_k, 8) the same keys in panels of 8 (pack_k) */
  const float* vp;       /* (n_k_pad / 8, d_v, 8) V in panels of 8 keys (pack_k of V) */
  const float* dout;     /* (n_q, d_v) gradient of the output, rows dout_stride apart */
  const float* lse;      /* (n_q) log-sum-exp of each logits row; -Infinity: no allowed key */
  const float* delta;    /* (n_q) dout_i . out_i */
  float* dq;             /* (n_q, d_k) added to, rows dq_stride apart */
  float* dk;             /* (n_k, d_k) added to, rows dk_stride apart */
  float* dv;             /* (n_k, d_v) added to, rows dv_stride apart */
  float* dbias;          /* (n_q, >= n_k) added to, rows bias_stride apart (the bias's layout), or NULL */
  const uint8_t* mask;   /* (n_q, >= n_k) keep-mask rows mask_stride apart, or NULL */
  const float* bias;     /* (n_q, >= n_k) bias rows bias_stride apart, or NULL */
  float* scratch;        /* attn__bwd_tile_floats(n_q, d_k, d_v) floats */
  size_t q_stride, k_stride, dout_stride, dq_stride, dk_stride, dv_stride;
  size_t mask_stride, bias_stride;
  size_t n_q;
  size_t n_k;            /* keys that exist for this head (kv_lengths, mask and bias cols) */
  size_t d_k, d_v;
  float scale;
  float softcap;         /* c > 0: logits c tanh(scaled / c); 0: none */
  int causal;
  int64_t offset;        /* query i sits at position i + offset */
  int32_t window_left, window_right;  /* -1: unbounded on that side */
} attn__bwd_args;

/* Scratch of the backward kernels for one head: lse and delta padded to
 * n_q rounded up to 8; q and dout copied with empty rows zeroed, (n_q, d_k)
 * and (n_q, d_v); the same in panels of 8 rows (pack_k layout); three
 * (BWD_BC, BWD_BR) tiles and three BWD_BR rows of running row statistics.
 * The scalar twin uses the same size (and less of it). */
static inline size_t attn__bwd_tile_floats(size_t n_q, size_t d_k, size_t d_v) {
  const size_t q_pad = attn__round_up(n_q, ATTN__PAD);
  return 2 * q_pad + n_q * (d_k + d_v) + q_pad * (d_k + d_v) + 3 * ATTN__BWD_BC * ATTN__BWD_BR +
         3 * ATTN__BWD_BR;
}

/* Whether key j is allowed for query i by position and mask (causal, window,
 * mask; a -Infinity logit is the caller's test). */
static inline int attn__bwd_visible(const attn__bwd_args* a, size_t i, size_t j) {
  const int64_t pos = (int64_t)i + a->offset, key = (int64_t)j;
  if (a->causal && key > pos) return 0;
  if (a->window_right >= 0 && key > pos + a->window_right) return 0;
  if (a->window_left >= 0 && key < pos - a->window_left) return 0;
  return a->mask == NULL || a->mask[i * a->mask_stride + j] != 0;
}

/* The query rows [*lo, *hi) that may see some key in [j0, j1) by position. */
static inline void attn__bwd_rows(const attn__bwd_args* a, size_t j0, size_t j1, size_t* lo,
                                  size_t* hi) {
  int64_t first = 0, end = (int64_t)a->n_q;
  const int64_t off = a->offset;
  if (a->causal && (int64_t)j0 - off > first) first = (int64_t)j0 - off;
  if (a->window_right >= 0 && (int64_t)j0 - off - a->window_right > first) {
    first = (int64_t)j0 - off - a->window_right;
  }
  if (a->window_left >= 0 && (int64_t)j1 - off + a->window_left < end) {
    end = (int64_t)j1 - off + a->window_left;
  }
  if (end < first) end = first;
  if (first > (int64_t)a->n_q) first = end = (int64_t)a->n_q;
  if (end < 0) first = end = 0;
  *lo = (size_t)first;
  *hi = (size_t)end;
}

/* The keys [*lo, *hi) that some query row of [i0, i1) may see by position. */
static inline void attn__bwd_keys(const attn__bwd_args* a, size_t i0, size_t i1, size_t* lo,
                                  size_t* hi) {
  int64_t first = 0, end = (int64_t)a->n_k;
  const int64_t last_pos = (int64_t)i1 - 1 + a->offset, first_pos = (int64_t)i0 + a->offset;
  if (a->causal && last_pos + 1 < end) end = last_pos + 1;
  if (a->window_right >= 0 && last_pos + a->window_right + 1 < end) end = last_pos + a->window_right + 1;
  if (a->window_left >= 0 && first_pos - a->window_left > first) first = first_pos - a->window_left;
  if (end < first) end = first;
  if (first > (int64_t)a->n_k) first = end = (int64_t)a->n_k;
  if (end < 0) first = end = 0;
  *lo = (size_t)first;
  *hi = (size_t)end;
}

/* The logit of a scaled score s for (i, j) and, with a softcap, th =
 * tanh(s / c) for the gradient: the forward's tanh (f32-tanh.h), so the
 * recomputed weights match the forward's lse. -Infinity when the key is not
 * allowed. */
static inline float attn__bwd_logit(const attn__bwd_args* a, size_t i, size_t j, float s,
                                    float* th) {
  float z = s;
  *th = 0.0f;
  if (a->softcap > 0.0f) {
    *th = attn__tanhf(s / a->softcap);
    z = a->softcap * *th;
  }
  if (a->bias != NULL) z = z + a->bias[i * a->bias_stride + j];
  return attn__bwd_visible(a, i, j) ? z : -INFINITY;
}

/* delta (n_q) = dout_i . out_i (out rows out_stride apart), or, when out is NULL, sum_j p_ij dout_i . v_j
 * (the same value without the forward's output); and, when lse is not NULL,
 * lse (n_q) = the log-sum-exp of each logits row (-Infinity for a row with
 * no allowed key). The lse of a->lse is not read. */
void attn__f32_backward_rows_scalar(const attn__bwd_args* a, const float* out, size_t out_stride,
                                    float* lse, float* delta);
void attn__f32_backward_rows_wasmsimd(const attn__bwd_args* a, const float* out, size_t out_stride,
                                      float* lse, float* delta);
void attn__f32_backward_scalar(const attn__bwd_args* a);
void attn__f32_backward_wasmsimd(const attn__bwd_args* a);

#ifdef __wasm_simd128__
#define ATTN__KERNEL(name) attn__f32_##name##_wasmsimd
#else
#define ATTN__KERNEL(name) attn__f32_##name##_scalar
#endif

#endif /* ATTN_KERNELS_H */
