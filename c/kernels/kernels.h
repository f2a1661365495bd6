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

#include "common.h"
#include "block.h"
#include "f32-backward.h"
#include "f32-exp.h"
#include "f32-sink.h"
#include "f32-tanh.h"
#include "keys.h"
#include "kv-numerics.h"

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

/* Rows of a compact K or V to and from float32, one kernel family
 * (kv-rows-*.c, pure conversion), the same floats and bits in both twins:
 * f16_f32_kv_load, i8_f32_kv_load: rows [j0, j0 + n) of a float16 or an
 *   int8 src, d elements each, into dst (n, d) with rows dst_stride apart,
 *   each value as attn__kv_value gives it;
 * f16_f32_kv_load_bits: the same for float16, each value times 2^-112,
 *   exactly (its bits' float32: attn__f16_f32_bits), Infinity and NaN as
 *   they are;
 * f32_kv_store: x (n, d) contiguous into n consecutive rows of the cache's
 *   dtype at dst (row stride d), int8 rows getting their scale in
 *   scales[0 .. n): float16 rounds each value to nearest even; int8 takes
 *   s = max_c |x_c| / 127 and stores round-to-even(x_c / s) (in [-127, 127]);
 *   a row of zeros gets s = 0, a row with NaN or Infinity s = NaN (it reads
 *   back as NaN). */
void attn__f16_f32_kv_load_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride);
void attn__f16_f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                    size_t dst_stride);
void attn__i8_f32_kv_load_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride);
void attn__i8_f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride);
void attn__f16_f32_kv_load_bits_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                       size_t dst_stride);
void attn__f16_f32_kv_load_bits_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                         size_t dst_stride);
void attn__f32_kv_store_scalar(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales);
void attn__f32_kv_store_wasmsimd(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales);

/* Whether the decode kernel takes a head's logits from its int8 K in
 * integers (attn__q16_row): int8, d_k a multiple of 8 (whole vectors) and
 * at most 512 (d_k products of at most 127 * 32767 stay below 2^31). */
static inline int attn__i8_logits_ok(const attn__head* h) {
  return h->k_rows.dtype == ATTN__KV_I8 && h->d_k % 8 == 0 && h->d_k <= 512;
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
 * attn_sdpa_kernel). Its rows are the n_q query rows of one head, or, for
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

/* The decode kernel's logits, one family per dtype of K (*-logits-*.c;
 * every one has the bits of its scalar twin):
 * f32_logits: z[j] = (q . k_j) * scale for keys j0 <= j < j1 of float32 K
 *   (rows k_stride apart), the dot as four partial sums over p mod 4
 *   (p < d_k rounded down to 4) combined as (s0 + s2) + (s1 + s3), then
 *   the tail p in order;
 * f32_logits2: the same for two rows qa and qb over keys j < n, za and zb;
 * f16_f32_logits4: four rows q (4, d_k) (times 2^112) over float16 keys
 *   [j0, j1) read in place (rows k_stride apart, d_k a multiple of 8), each
 *   value as its bits' float32 (attn__f16_f32_bits): row t's logit of key
 *   j to z[t][j - j0], times scale[t], in f32_logits's order; returns 0
 *   when a key has exponent 31 (Infinity or NaN), whose logits are then
 *   wrong (the caller takes the block through f16_f32_kv_load_bits);
 * i8_f32_logits: every row of args's logits from an int8 K
 *   (attn__i8_logits_ok) for keys [lo, hi), row r's from its span's start
 *   at z + r * z_stride (keys outside its span not written): q rounded to
 *   16 bits per row (attn__q16_row) into space ((n_rows, d_k) int16, then
 *   n_rows floats), each logit attn__i8_logit's;
 * f32_rope_logits4: up to 4 rows (rows[h], one query row of each head
 *   sharing K, scales[h] its scale) over keys [0, n) of float32 k turned by
 *   RoPE as they are read (rotate_half pairs over the first dims elements,
 *   table rows (n, dims), the rest as it is; d_k and dims / 2 multiples of
 *   4): the bits of attn__f32_rope_* into a tile and f32_logits over it;
 *   z[h * z_stride + j]. */
void attn__f32_logits_scalar(const float* q, const float* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                             float scale, float* z);
void attn__f32_logits_wasmsimd(const float* q, const float* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                               float scale, float* z);
void attn__f32_logits2_scalar(const float* qa, const float* qb, const float* k, size_t k_stride, size_t n, size_t d_k,
                              float scale, float* za, float* zb);
void attn__f32_logits2_wasmsimd(const float* qa, const float* qb, const float* k, size_t k_stride, size_t n,
                                size_t d_k, float scale, float* za, float* zb);
int attn__f16_f32_logits4_scalar(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                                 const float scale[4], float* const z[4]);
int attn__f16_f32_logits4_wasmsimd(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1,
                                   size_t d_k, const float scale[4], float* const z[4]);
void attn__i8_f32_logits_scalar(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                                void* space);
void attn__i8_f32_logits_wasmsimd(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                                  void* space);
void attn__f32_rope_logits4_scalar(const float* const rows[4], const float scales[4], size_t n_rows, const float* k,
                                   size_t k_stride, size_t n, size_t d_k, const float* table, size_t dims, float* z,
                                   size_t z_stride);
void attn__f32_rope_logits4_wasmsimd(const float* const rows[4], const float scales[4], size_t n_rows, const float* k,
                                     size_t k_stride, size_t n, size_t d_k, const float* table, size_t dims, float* z,
                                     size_t z_stride);

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

/* The rows of args rounded to 16 bits for i8_f32_logits into space:
 * (n_rows, d_k) int16 (attn__q16_row), then each row's sq * scale, whose
 * address it returns. */
static inline float* attn__i8_queries(const attn__decode_args* args, void* space) {
  const size_t n_rows = attn__decode_rows(args), d_k = args->heads[0].d_k;
  int16_t* qi = space;                      /* (n_rows, d_k) */
  float* qs = (float*)(qi + n_rows * d_k);  /* (n_rows) */
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    qs[r] = attn__q16_row(h->q + i * h->q_stride, d_k, qi + r * d_k) * h->scale;
  }
  return qs;
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

/* ATTN__ISA(f16_f32_kv_load): the build's twin of a kernel function;
 * ATTN__KERNEL(flash) the same for the float32 families (attn__f32_...). */
#ifdef __wasm_simd128__
#define ATTN__ISA(name) attn__##name##_wasmsimd
#else
#define ATTN__ISA(name) attn__##name##_scalar
#endif
#define ATTN__KERNEL(name) ATTN__ISA(f32_##name)

/* Rows of a compact K or V as float32 values, by its dtype. */
static inline void attn__kv_load(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                 size_t dst_stride) {
  if (src->dtype == ATTN__KV_F16) {
    ATTN__ISA(f16_f32_kv_load)(src, j0, n, d, dst, dst_stride);
  } else {
    ATTN__ISA(i8_f32_kv_load)(src, j0, n, d, dst, dst_stride);
  }
}

#endif /* ATTN_KERNELS_H */
