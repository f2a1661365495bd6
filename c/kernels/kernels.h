/* kernels.h - private kernel declarations (not installed, not public).
 *
 * Every kernel family has a scalar twin (the readable spec and the test
 * oracle, also compiled natively) and a wasm SIMD128 variant with the same
 * signature and algorithm. attention.c picks one at compile time through the
 * ATTN__KERNEL() macro below.
 *
 * What the SIMD128 and scalar builds share bit for bit (attention.h states
 * the same; the relaxed build fuses the SIMD multiply-adds instead,
 * f32-madd-wasmsimd.h):
 *   - exp, tanh (softcap), gemm, the packing and every logit: the same
 *     operations in the same order;
 *   - the decode kernel, lse included, and the backward kernels: their
 *     twins sum in the same order;
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

#include "f32-exp.h"
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

/* Packing, both pure copies (the twins give the same floats):
 * pack_rows: x (n, d, rows x_stride apart) into panels of 8 rows,
 *   (n_pad / 8, d, 8): element c of row j at panels[((j / 8) * d + c) * 8 + j % 8],
 *   rows past n are 0. K for the fused kernel; K, V, Q and dout for the backward.
 * pack_cols: v (n_k, d_v, rows v_stride apart) into panels of 8 columns,
 *   (d_v_pad / 8, n_k, 8): column c of key j at panels[((c / 8) * n_k + j) * 8 + c % 8],
 *   columns past d_v are 0. V for the fused kernel. */
void attn__f32_pack_rows_scalar(const float* x, size_t x_stride, size_t n, size_t d, float* panels);
void attn__f32_pack_rows_wasmsimd(const float* x, size_t x_stride, size_t n, size_t d, float* panels);
void attn__f32_pack_cols_scalar(const float* v, size_t v_stride, size_t n_k, size_t d_v, float* panels);
void attn__f32_pack_cols_wasmsimd(const float* v, size_t v_stride, size_t n_k, size_t d_v, float* panels);

/* The element types of a cache's K and V (attention.h, attn_kv_dtype). */
#define ATTN__KV_F32 0
#define ATTN__KV_F16 1
#define ATTN__KV_I8 2

/* K or V of one kv head in a compact cache: row j's d elements (float16
 * bits, or int8) start at element j * stride of data; an int8 row's value
 * c is (float)data[j * stride + c] * scales[j * scale_stride]. */
typedef struct attn__kv_rows {
  int32_t dtype;        /* ATTN__KV_F16 or ATTN__KV_I8; ATTN__KV_F32: the head's k or v hold it */
  const void* data;
  size_t stride;
  const float* scales;  /* int8 only */
  size_t scale_stride;
} attn__kv_rows;

/* The float32 value of float16 bits h, exactly: the 15 bits below the sign
 * shifted into a float32's exponent and mantissa are the value times
 * 2^-112 (subnormal halves land on float32 subnormals, which wasm keeps),
 * so one multiply by 2^112 rebiases; exponent 31 (Infinity, NaN) maps to
 * 255. The SIMD loads (kv-rows-wasmsimd.c) do the same on four lanes. */
static inline float attn__f16_value(uint16_t h) {
  union { uint32_t u; float f; } x = {.u = (uint32_t)(h & 0x7fff) << 13};
  if ((h & 0x7c00) == 0x7c00) {
    x.u |= 0x7f800000u;
  } else {
    x.f = x.f * 0x1p112f;
  }
  x.u |= (uint32_t)(h & 0x8000) << 16;
  return x.f;
}

/* The float16 bits nearest to x, ties to even (web/core/float16.js's
 * halfBits): past 65504 Infinity, below 2^-25 a signed zero, NaN stays NaN. */
static inline uint16_t attn__f16_bits(float x) {
  const union { float f; uint32_t u; } in = {.f = x};
  const uint32_t b = in.u, sign = (b >> 16) & 0x8000u, exp = (b >> 23) & 0xffu;
  uint32_t mant = b & 0x7fffffu;
  if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant != 0 ? 0x200u | (mant >> 13) : 0u));
  const int32_t e = (int32_t)exp - 112;  /* rebias 127 -> 15 */
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {  /* a subnormal half, or zero */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - e), half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    return (uint16_t)(sign | (half + (rest > mid || (rest == mid && (half & 1u) != 0))));
  }
  const uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fffu;
  /* A carry out of the mantissa moves to the next binade (or Infinity): still right. */
  return (uint16_t)(sign | (half + (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0))));
}

/* Value c of row j of a compact K or V (one element; the scalar kernels'
 * reads, the same float the SIMD loads give). */
static inline float attn__kv_value(const attn__kv_rows* r, size_t j, size_t c) {
  if (r->dtype == ATTN__KV_F16) return attn__f16_value(((const uint16_t*)r->data)[j * r->stride + c]);
  return (float)((const int8_t*)r->data)[j * r->stride + c] * r->scales[j * r->scale_stride];
}

/* A query row q (d) rounded to 16 bits for the integer logits of an int8
 * K: sq = max |q| / 32767, qi = round-to-even(q / sq) in [-32767, 32767];
 * returns sq (0 for a zero row, NaN for a row with NaN or Infinity, whose
 * logits are then NaN as on the float path). Each value moves by at most
 * sq / 2 = max |q| / 65534, next to int8 K's max |k| / 254. */
static inline float attn__q16_row(const float* q, size_t d, int16_t* qi) {
  float amax = 0.0f;
  for (size_t c = 0; c < d; c++) amax = attn__max_nan(amax, fabsf(q[c]));
  const float sq = amax / 32767.0f;
  const int usable = sq > 0.0f && isfinite(sq);
  for (size_t c = 0; c < d; c++) {
    const float x = usable ? nearbyintf(q[c] / sq) : 0.0f;
    qi[c] = (int16_t)(x > 32767.0f ? 32767.0f : x < -32767.0f ? -32767.0f : x);
  }
  return isfinite(amax) ? sq : NAN;
}

/* Key j's logit from an int8 K row and a row qi of attn__q16_row with
 * qs = sq * scale: ((float)(k8_j . qi) * qs) * s_j, the dot exact in
 * integers. */
static inline float attn__i8_logit(const attn__kv_rows* k, size_t j, const int16_t* qi, size_t d, float qs) {
  const int8_t* row = (const int8_t*)k->data + j * k->stride;
  int32_t dot = 0;
  for (size_t c = 0; c < d; c++) dot += (int32_t)row[c] * qi[c];
  return ((float)dot * qs) * k->scales[j * k->scale_stride];
}

/* Rows of a compact K or V to and from float32, one kernel family
 * (kv-rows-*.c), the same floats and bits in both twins:
 * kv_load: rows [j0, j0 + n) of src, d elements each, into dst (n, d)
 *   with rows dst_stride apart;
 * kv_store: x (n, d) contiguous into n consecutive rows of the cache's
 *   dtype at dst (row stride d), int8 rows getting their scale in
 *   scales[0 .. n): float16 rounds each value to nearest even; int8 takes
 *   s = max_c |x_c| / 127 and stores round-to-even(x_c / s) (in [-127, 127]);
 *   a row of zeros gets s = 0, a row with NaN or Infinity s = NaN (it reads
 *   back as NaN). */
void attn__f32_kv_load_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride);
void attn__f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride);
void attn__f32_kv_store_scalar(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales);
void attn__f32_kv_store_wasmsimd(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales);

/* One (batch, query head) of a call, as every kernel sees it: the head's
 * n_q query rows, its kv head's keys and values, and which keys each row
 * may see. attention.c builds it in one place (attn__head_view) for the
 * forward and the backward. Each pointer advances by its row stride per
 * row. */
typedef struct attn__head {
  const float* q;        /* (n_q, d_k) queries */
  const float* k;        /* (n_k, d_k) the kv head's keys */
  const float* v;        /* (n_k, d_v) the kv head's values */
  float* out;            /* (n_q, d_v) output: the forward writes it; the backward reads it, or NULL */
  float* lse;            /* (n_q) log-sum-exp of each row's logits: the forward writes it (or
                            NULL); the backward reads it */
  const uint8_t* mask;   /* (n_q, >= n_k) keep-mask, or NULL */
  const float* bias;     /* (n_q, >= n_k) bias, or NULL */
  size_t q_stride, k_stride, v_stride, out_stride, mask_stride, bias_stride;
  size_t n_q;
  size_t n_k;            /* keys that exist for this head: n_k clipped to kv_lengths[b]
                            and to the mask's and bias's cols */
  size_t d_k, d_v;
  float scale;
  float softcap;         /* > 0: logits = softcap * tanh(scaled / softcap); 0: none */
  float alibi;           /* ALiBi slope: logits += alibi * (j - p) (attn__alibi_bias); 0: none */
  float sink;            /* a logit in every row's softmax denominator, with no value
                            (attn__sink_join); -Infinity: none */
  int64_t offset;        /* position of query row 0 among the keys */
  int64_t keys_before;   /* the query at position p sees keys p - keys_before .. */
  int64_t keys_after;    /* .. p + keys_after: the window and the causal frontier;
                            ATTN__UNBOUNDED on a side without a bound */
  attn__kv_rows k_rows;  /* a compact cache's K and V (k and v are then NULL); dtype */
  attn__kv_rows v_rows;  /* ATTN__KV_F32 (0) when k and v hold them */
} attn__head;

/* Whether the decode kernel takes a head's logits from its int8 K in
 * integers (attn__q16_row): int8, d_k a multiple of 8 (whole vectors) and
 * at most 512 (d_k products of at most 127 * 32767 stay below 2^31). */
static inline int attn__i8_logits_ok(const attn__head* h) {
  return h->k_rows.dtype == ATTN__KV_I8 && h->d_k % 8 == 0 && h->d_k <= 512;
}

/* Farther than any key from any query position (both are below 2^32). */
#define ATTN__UNBOUNDED (INT64_C(1) << 40)

/* Keys [lo, hi) of a query row, or query rows [lo, hi) of a key block. */
typedef struct attn__span {
  size_t lo, hi;
} attn__span;

/* The rule by position (attention.h): the keys query row i may see, those
 * that exist (j < n_k) from keys_before before to keys_after after its
 * position i + offset. lo == hi when none. Keys outside are never computed.
 * Both ends never decrease as i grows: the spans of row and key blocks
 * below rely on it. */
static inline attn__span attn__key_span(const attn__head* h, size_t i) {
  const int64_t p = (int64_t)i + h->offset;
  int64_t lo = p - h->keys_before, hi = p + h->keys_after + 1;
  if (hi > (int64_t)h->n_k) hi = (int64_t)h->n_k;
  if (hi < 0) hi = 0;
  if (lo < 0) lo = 0;
  if (lo > hi) lo = hi;
  return (attn__span){(size_t)lo, (size_t)hi};
}

/* Keys [a, b) of row span s within the block [j0, j0 + nb): empty when
 * they do not meet. */
static inline attn__span attn__block_part(attn__span s, size_t j0, size_t nb) {
  const size_t a = s.lo > j0 ? s.lo : j0, b = s.hi < j0 + nb ? s.hi : j0 + nb;
  return a < b ? (attn__span){a, b} : (attn__span){a, a};
}

/* The whole rule: key j is allowed for query row i when it lies in the
 * row's span (attn__key_span(h, i), which the caller computes once per row)
 * and the mask keeps it. A -Infinity logit (bias) masks too; that is for
 * the softmax to see. */
static inline int attn__key_allowed(const attn__head* h, attn__span span, size_t i, size_t j) {
  return span.lo <= j && j < span.hi && (h->mask == NULL || h->mask[i * h->mask_stride + j] != 0);
}

/* The keys some row of [i0, i1) may see: from the first row's span start
 * to the last row's span end. */
static inline attn__span attn__rows_key_span(const attn__head* h, size_t i0, size_t i1) {
  return (attn__span){attn__key_span(h, i0).lo, attn__key_span(h, i1 - 1).hi};
}

/* Whether every row of [i0, i1) may see every key of [j0, j1) by position:
 * the last row's span starts by j0 and the first row's reaches j1 - 1. */
static inline int attn__spans_cover(const attn__head* h, size_t i0, size_t i1, size_t j0, size_t j1) {
  return attn__key_span(h, i1 - 1).lo <= j0 && j1 <= attn__key_span(h, i0).hi;
}

/* The query rows whose spans meet keys [j0, j1): consecutive, since spans
 * never move back, so two bisections on attn__key_span find them: the
 * first row whose span ends after j0, and the first after it whose span
 * starts at j1 or later. */
static inline attn__span attn__key_rows(const attn__head* h, size_t j0, size_t j1) {
  size_t lo = 0, hi = h->n_q;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (attn__key_span(h, mid).hi > j0) hi = mid; else lo = mid + 1;
  }
  const size_t first = lo;
  hi = h->n_q;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (attn__key_span(h, mid).lo >= j1) hi = mid; else lo = mid + 1;
  }
  return (attn__span){first, lo};
}

/* The keys a tile of query rows [i0, i0 + rows) visits: spans[r] gets row
 * i0 + r's span (an empty one for r >= rows, up to MR), and the result runs
 * from the first key any row may see, rounded down to a panel of 8, to the
 * last. */
static inline attn__span attn__tile_keys(const attn__head* h, size_t i0, size_t rows, attn__span spans[ATTN__MR]) {
  size_t begin = h->n_k, end = 0;
  for (size_t r = 0; r < ATTN__MR; r++) {
    spans[r] = (attn__span){0, 0};
    if (r >= rows) continue;
    spans[r] = attn__key_span(h, i0 + r);
    if (spans[r].lo < spans[r].hi) {
      begin = spans[r].lo < begin ? spans[r].lo : begin;
      end = spans[r].hi > end ? spans[r].hi : end;
    }
  }
  return (attn__span){begin / ATTN__PAD * ATTN__PAD, end};
}

/* The log-sum-exp of a row from its softmax max m and sum l: -Infinity for
 * a row with no allowed key (l = 0). */
static inline float attn__lse(float m, float l) { return l == 0.0f ? -INFINITY : m + logf(l); }

/* ALiBi's bias of key j for query row i at position p = i + offset:
 * slope * (j - p), that is -slope times the key's distance behind p, one
 * rounded product ((float)(j - p) is exact below 2^24). Every kernel adds
 * it to the logit right after the bias, each with this expression (plain
 * C in the SIMD kernels too), so the builds give the same bits. */
static inline float attn__alibi_bias(const attn__head* h, size_t i, size_t j) {
  return h->alibi * (float)((int64_t)j - ((int64_t)i + h->offset));
}

/* z[jj] += the ALiBi bias of key j0 + jj for row i, jj < n; nothing
 * without a slope. */
static inline void attn__add_alibi(const attn__head* h, size_t i, size_t j0, size_t n, float* z) {
  if (h->alibi == 0.0f) return;
  for (size_t jj = 0; jj < n; jj++) z[jj] = z[jj] + attn__alibi_bias(h, i, j0 + jj);
}

/* Joins the head's sink logit to a finished row's softmax (GPT-OSS's
 * sinks, ONNX GroupQueryAttention's head_sink): m and l, the max and the
 * sum of exp(z - m) over the row's allowed keys, become the max and sum
 * over those logits and the sink. Returns the factor (at most 1) by which
 * the row's sum of exp(z_j - m) v_j must be multiplied before it is
 * divided by the new l: 1 when the max stays, exp(m - sink) when the sink
 * raises it, 0 for a row with no allowed key (l = 0), which then gives
 * output 0 and lse = sink. Without a sink (-Infinity) nothing changes. */
static inline float attn__sink_join(float sink, float* m, float* l) {
  if (sink == -INFINITY) return 1.0f;
  if (*l != 0.0f && *m >= sink) {
    *l = *l + attn__expf_nonpos(sink - *m);
    return 1.0f;
  }
  const float alpha = *l == 0.0f ? 0.0f : attn__expf_nonpos(*m - sink);
  *l = *l * alpha + 1.0f;
  *m = sink;
  return alpha;
}

/* The fused kernel: 4 query rows at a time over packed K and V. */
typedef struct attn__flash_args {
  attn__head head;
  const float* k_panels;      /* (n_k_pad / 8, d_k, 8) K in panels of 8 keys (pack_rows) */
  const float* v_col_panels;  /* (d_v_pad / 8, n_k, 8) V in panels of 8 columns (pack_cols) */
  size_t d_v_pad;             /* attn__round_up(d_v, ATTN__PAD), the accumulator row width */
  float* tile;                /* attn__flash_tile_floats(d_k, d_v) floats */
} attn__flash_args;

/* The decode kernel: query rows one or two at a time over K and V where
 * they are (fewer than 4 rows, or tiny problems; attention.c picks, see
 * attn__use_decode). Its rows are the n_q query rows of one head, or, for
 * grouped-query decoding, the one query row of each of n_heads heads that
 * share this K and V, which are then read once for all of them. */
typedef struct attn__decode_args {
  const attn__head* heads;  /* (n_heads) views of one batch entry and kv head */
  size_t n_heads;           /* 1, or more with n_q == 1 (or any n_q from a compact cache) */
  float* logits;            /* attn__decode_scratch_floats(rows, n_k) floats */
  float* tile;              /* a compact cache: max(ATTN__DECODE_KB x max(d_k, d_v),
                               rows x (d_k / 2 + 1)) floats for one block of its K or V as
                               float32, or an int8 K's rows of q in 16 bits and their scales;
                               float16: and then rows x d_k for q times 2^112;
                               with k_table, (min(n_k, ATTN__DECODE_KB), d_k) turned keys */
  const float* k_table;     /* RoPE on float32 keys with one query row per head: (n_k, rope_dims)
                               cos and sin at key positions 0 .. n_k - 1 (f32-rope.h); the kernel
                               turns each block of keys as it reads it, once for all its heads.
                               NULL: the keys are read as they are */
  size_t rope_dims;
  uint32_t rope_flags;      /* ATTN__ROPE_PAIRS_INTERLEAVED or 0 */
} attn__decode_args;

/* The SIMD decode's reads of a compact cache (kv-rows-wasmsimd.c; its
 * spec is the scalar decode, which reads values with attn__kv_value and
 * int8 logits with attn__i8_logit):
 * f16_kv_load_bits: as kv_load on a float16 K or V, each value times
 *   2^-112, exactly (its bits' float32: attn__f16_value before the
 *   rebias), Infinity and NaN as they are;
 * i8_logits: every row's logits from an int8 K (attn__i8_logits_ok) for
 *   keys [lo, hi), row r's from its span's start at z + r * z_stride;
 *   space holds the rows' rounded queries;
 * f16_logits4: four rows' logits from float16 K read in place, the values
 *   times 2^-112 and q times 2^112; 0 when a value is Infinity or NaN (the
 *   caller takes the block through f16_kv_load_bits then). */
void attn__f16_kv_load_bits_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                     size_t dst_stride);
void attn__i8_logits_wasmsimd(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                              void* space);
int attn__f16_logits4_wasmsimd(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                               const float scale[4], float* const z[4]);

/* Keys per block of the decode kernel when several rows share K and V: a
 * block of K or V (64 keys of up to a few hundred floats) stays in L1 while
 * every row reads it, so K and V come from memory once for all rows. */
#define ATTN__DECODE_KB 64

/* The decode kernel's rows, n_q per head, and row r's head and query row
 * within it. */
static inline size_t attn__decode_rows(const attn__decode_args* a) { return a->n_heads * a->heads[0].n_q; }
static inline const attn__head* attn__decode_head(const attn__decode_args* a, size_t r, size_t* i) {
  *i = r % a->heads[0].n_q;
  return &a->heads[r / a->heads[0].n_q];
}

/* Scratch of the decode kernel: a row of logits for each of its rows (at
 * least 2), and a sum and a max per row. */
static inline size_t attn__decode_scratch_floats(size_t rows, size_t n_k) {
  if (rows < 2) rows = 2;
  return rows * attn__round_up(n_k, 4) + 2 * rows;
}

/* Scratch of the fused kernel besides the packed K and V:
 * (MR, KB) score tile, (MR, d_v_pad) accumulators, MR running maxima,
 * MR running sums and the (d_k, MR) interleaved query tile. */
static inline size_t attn__flash_tile_floats(size_t d_k, size_t d_v) {
  return ATTN__MR * ATTN__KB + ATTN__MR * attn__round_up(d_v, ATTN__PAD) + 2 * ATTN__MR +
         ATTN__MR * d_k;
}

/* attention.c calls the output and backward kernels through pointers it
 * reads as volatile: a function with one caller is inlined by wasm-opt
 * whatever its size, and V8 then allocates registers for both kernels and
 * the packing as one function, spilling in the inner loops
 * (bench/RESULTS.md). */
void attn__f32_flash_scalar(const attn__flash_args* args);
void attn__f32_flash_wasmsimd(const attn__flash_args* args);
void attn__f32_decode_scalar(const attn__decode_args* args);
void attn__f32_decode_wasmsimd(const attn__decode_args* args);

/* The step path of one (batch, head): every step matrix written, see
 * attention.h. The head's n_k is the keys that exist; the step matrices
 * have n_cols >= n_k columns, the n_k of the call, and columns from n_k on
 * are not allowed. */
typedef struct attn__steps_args {
  attn__head head;
  size_t n_cols;         /* columns of the step matrices, >= head.n_k */
  float* k_t;            /* (d_k, round_up(n_cols, 8)) scratch for K^T */
  float* scores;         /* (n_q, n_cols) each */
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

/* Each gradient has the strides of what it is the gradient of: dout out's,
 * dq q's, dk k's, dv v's, dbias the bias's. */
typedef struct attn__bwd_args {
  attn__head head;            /* q, k, out (or NULL), lse (-Infinity: no allowed key), mask, bias */
  const float* k_panels;      /* (n_k_pad / 8, d_k, 8) K in panels of 8 keys (pack_rows) */
  const float* v_key_panels;  /* (n_k_pad / 8, d_v, 8) V in panels of 8 keys (pack_rows) */
  const float* dout;          /* (n_q, d_v) gradient of the output */
  float* delta;               /* (n_q) dout_i . out_i (attn__f32_backward_rows writes it) */
  float* dq;                  /* (n_q, d_k) added to */
  float* dk;                  /* (n_k, d_k) added to */
  float* dv;                  /* (n_k, d_v) added to */
  float* dbias;               /* (n_q, >= n_k) added to, or NULL */
  float* scratch;             /* attn__bwd_tile_floats(n_q, d_k, d_v) floats */
} attn__bwd_args;

/* Scratch of the backward kernels for one head: lse and delta padded to
 * n_q rounded up to 8; q and dout copied with empty rows zeroed, (n_q, d_k)
 * and (n_q, d_v); the same in panels of 8 rows (pack_rows layout); three
 * (BWD_BC, BWD_BR) tiles and three BWD_BR rows of running row statistics.
 * The scalar twin uses the same size (and less of it). */
static inline size_t attn__bwd_tile_floats(size_t n_q, size_t d_k, size_t d_v) {
  const size_t q_pad = attn__round_up(n_q, ATTN__PAD);
  return 2 * q_pad + n_q * (d_k + d_v) + q_pad * (d_k + d_v) + 3 * ATTN__BWD_BC * ATTN__BWD_BR +
         3 * ATTN__BWD_BR;
}

/* The logit of a scaled score s for (i, j) and, with a softcap, th =
 * tanh(s / c) for the gradient: the forward's tanh (f32-tanh.h), so the
 * recomputed weights match the forward's lse. -Infinity when the key is not
 * allowed. */
static inline float attn__bwd_logit(const attn__head* h, size_t i, size_t j, float s, float* th) {
  float z = s;
  *th = 0.0f;
  if (h->softcap > 0.0f) {
    *th = attn__tanhf(s / h->softcap);
    z = h->softcap * *th;
  }
  if (h->bias != NULL) z = z + h->bias[i * h->bias_stride + j];
  if (h->alibi != 0.0f) z = z + attn__alibi_bias(h, i, j);
  return attn__key_allowed(h, attn__key_span(h, i), i, j) ? z : -INFINITY;
}

/* p_ij = exp(z - lse_i) for the scaled score s, in a row with an allowed
 * key (finite lse_i); 0 where key j is not allowed. lse >= every allowed z
 * of its row, but a caller's lse may have summed in another order and sit
 * a few ulp below: the argument is clamped to 0, so p <= 1 (NaN stays NaN). */
static inline float attn__bwd_weight(const attn__head* h, size_t i, size_t j, float s, float lse, float* th) {
  const float z = attn__bwd_logit(h, i, j, s, th);
  if (z == -INFINITY) return 0.0f;
  float arg = z - lse;
  if (arg > 0.0f) arg = 0.0f;
  return attn__expf_nonpos(arg);
}

/* ds_ij * scale from a weight p != 0, dp = dout_i . v_j, delta_i and th;
 * adds dz to dbias when there is one. */
static inline float attn__bwd_score_grad(const attn__bwd_args* a, size_t i, size_t j, float p, float dp,
                                         float delta, float th) {
  const float dz = p * (dp - delta);
  if (a->dbias != NULL) a->dbias[i * a->head.bias_stride + j] = a->dbias[i * a->head.bias_stride + j] + dz;
  float ds = dz;
  if (a->head.softcap > 0.0f) ds = ds * (1.0f - th * th);
  return ds * a->head.scale;
}

/* delta_i = dout_i . out_i, summed over d_v in order, from the forward's
 * output. */
static inline void attn__bwd_delta(const attn__bwd_args* a) {
  const attn__head* h = &a->head;
  for (size_t i = 0; i < h->n_q; i++) {
    float d = 0.0f;
    for (size_t c = 0; c < h->d_v; c++) d = d + a->dout[i * h->out_stride + c] * h->out[i * h->out_stride + c];
    a->delta[i] = d;
  }
}

/* a->delta, and, when lse is not NULL, lse (n_q) = the log-sum-exp of each
 * logits row (-Infinity for a row with no allowed key). Without the
 * forward's output (head.out NULL), delta_i = sum_j p_ij dout_i . v_j, the
 * same value. a->head.lse is not read. */
void attn__f32_backward_rows_scalar(const attn__bwd_args* a, float* lse);
void attn__f32_backward_rows_wasmsimd(const attn__bwd_args* a, float* lse);
void attn__f32_backward_scalar(const attn__bwd_args* a);
void attn__f32_backward_wasmsimd(const attn__bwd_args* a);

/* RoPE: n rows of x (d floats, x_stride apart) turned by the rows of a
 * cos and sin table (n, dims) into y (y_stride apart; y may equal x), the
 * first dims elements in pairs, the rest copied. f32-rope.h has the table
 * and the flags. */
void attn__f32_rope_scalar(const float* x, size_t x_stride, size_t n, size_t d, const float* table, size_t dims,
                           uint32_t flags, float* y, size_t y_stride);
void attn__f32_rope_wasmsimd(const float* x, size_t x_stride, size_t n, size_t d, const float* table, size_t dims,
                             uint32_t flags, float* y, size_t y_stride);
/* Logits of up to 4 query rows (one per head sharing K) over keys [0, n)
 * of k turned by RoPE (rotate_half, table rows (n, dims)) as they are read:
 * the bits of a turn into a tile and the decode kernel's logits over it.
 * d_k and dims / 2 multiples of 4. SIMD only: the scalar decode turns
 * into its tile. */
void attn__f32_rope_logits4_wasmsimd(const float* const rows[4], const float scales[4], size_t n_rows, const float* k,
                                     size_t k_stride, size_t n, size_t d_k, const float* table, size_t dims, float* z,
                                     size_t z_stride);

#ifdef __wasm_simd128__
#define ATTN__KERNEL(name) attn__f32_##name##_wasmsimd
#else
#define ATTN__KERNEL(name) attn__f32_##name##_scalar
#endif

#endif /* ATTN_KERNELS_H */
