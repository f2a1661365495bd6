/* kernels.h - private kernel declarations (not installed, not public).
 *
 * Every kernel family has a scalar twin (the readable spec and the test
 * oracle, also compiled natively) and a wasm SIMD128 variant with the same
 * signature and algorithm. attention.c picks one at compile time through the
 * ATTN__KERNEL() macro below.
 *
 * Kernels only assert; the public functions in attention.c check arguments.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

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

/* kp (n_k_pad / 8, d_k, 8) = k (n_k, d_k) in panels of 8 keys, the layout
 * of attn__head_args.kp; keys past n_k are 0. */
void attn__f32_pack_k_scalar(const float* k, size_t n_k, size_t d_k, float* kp);
void attn__f32_pack_k_wasmsimd(const float* k, size_t n_k, size_t d_k, float* kp);

/* One (batch, head) of the output path, for either output kernel:
 *   flash:  the fused kernel, 4 query rows at a time over packed K and V;
 *   decode: query rows one or two at a time over K and V as given (fewer
 *           than 4 rows, or tiny problems; attention.c picks, see
 *           attn__use_decode).
 * attention.c calls them through a pointer (attn__head_fn): a function with
 * one caller is inlined by wasm-opt whatever its size, and V8 then allocates
 * registers for both kernels and the packing as one function, spilling in
 * the inner loops (measured: the fused kernel 38% slower, the decode kernel
 * 27%). */
typedef struct attn__head_args {
  const float* q;        /* (n_q, d_k) this head's queries, row stride d_k */
  const float* k;        /* (n_k, d_k) this head's keys as given (decode) */
  const float* v;        /* (n_k, d_v) this head's values as given (decode) */
  const float* kp;       /* flash: (n_k_pad / 8, d_k, 8) K in panels of 8 keys: key j,
                            element p at kp[((j / 8) * d_k + p) * 8 + j % 8]; keys past n_k are 0 */
  const float* vp;       /* flash: (v_stride / 8, n_k, 8) V in panels of 8 columns: key j,
                            column c at vp[((c / 8) * n_k + j) * 8 + c % 8]; columns past d_v are 0 */
  float* out;            /* (n_q, d_v) this head's output, row stride d_v */
  const uint8_t* mask;   /* (n_q, n_k) keep-mask or NULL */
  const float* bias;     /* (n_q, n_k) additive bias or NULL */
  float* scratch;        /* flash: attn__flash_tile_floats(d_k, d_v) floats;
                            decode: 2 * attn__round_up(n_k, 4) floats */
  size_t n_q, n_k, d_k, d_v;
  size_t v_stride;       /* flash: attn__round_up(d_v, ATTN__PAD), the accumulator row width */
  float scale;
  int causal;
  int one_query;         /* decode: the n_q rows are the heads of one query that share
                            this K and V (grouped-query decoding): every row takes query
                            index 0 for the mask, bias and causal */
} attn__head_args;

typedef void (*attn__head_fn)(const attn__head_args* args);

/* Scratch of the fused kernel besides the packed K and V:
 * (MR, KB) score tile, (MR, v_stride) accumulators, MR running maxima,
 * MR running sums and the (d_k, MR) interleaved query tile. */
static inline size_t attn__flash_tile_floats(size_t d_k, size_t d_v) {
  return ATTN__MR * ATTN__KB + ATTN__MR * attn__round_up(d_v, ATTN__PAD) + 2 * ATTN__MR +
         ATTN__MR * d_k;
}

void attn__f32_flash_scalar(const attn__head_args* args);
void attn__f32_flash_wasmsimd(const attn__head_args* args);
void attn__f32_decode_scalar(const attn__head_args* args);
void attn__f32_decode_wasmsimd(const attn__head_args* args);

#ifdef __wasm_simd128__
#define ATTN__KERNEL(name) attn__f32_##name##_wasmsimd
#else
#define ATTN__KERNEL(name) attn__f32_##name##_scalar
#endif

#endif /* ATTN_KERNELS_H */
