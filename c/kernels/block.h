/* block.h - the transformer block's kernels (private): layer norm, RMS
 * norm, GELU, the bias and the transpose around the GEMM. Each has a
 * scalar twin (f32-*-scalar.c) and a SIMD128 one (f32-*-wasmsimd.c) that
 * perform the same operations in the same order, so the two give the same
 * bits; only GELU's exp uses relaxed_madd (f32-exp-wasmsimd.h), so the
 * relaxed build gives those bits too for all the others. Matrices are
 * row-major and contiguous.
 *
 * A row's sum (in both twins): four partial sums over the
 * elements j mod 4 (j below cols rounded down to 4), combined as
 * (s0 + s2) + (s1 + s3), then the tail added in order.
 *
 * Norms: each row is first scaled by s, the power of two 2^-e with
 * max |x| in [2^(e-1), 2^e), when max |x| exceeds 2^60 and is finite
 * (else s = 1): the squares cannot overflow, and the scaled row gives the
 * same bits as the unscaled one wherever that one does not overflow.
 *   layer_norm: mu = sum(x s) / cols, d = x s - mu, c = sum(d) / cols,
 *     var = max(sum(d^2) / cols - c^2, 0), r = 1 / sqrt(var + eps s^2),
 *     y = (((x s - mu) - c) r) gamma + beta (the corrected two-pass mean);
 *   rms_norm: r = 1 / sqrt(sum((x s)^2) / cols + eps s^2), y = ((x s) r) gamma.
 * gamma NULL is 1, beta NULL is 0. The backward kernels recompute mu and r
 * from x and overwrite dx, and add each row's share to dgamma and dbeta
 * (cols each, rows in order; NULL: not wanted). */
#ifndef ATTN_KERNELS_BLOCK_H
#define ATTN_KERNELS_BLOCK_H

#include <math.h>
#include <stddef.h>

/* The scale s of a norm's row from max |x| (NaN wins, as attn__max_nan). */
static inline float attn__norm_scale(float max_abs) {
  if (!(max_abs > 0x1p60f) || max_abs > 3.40282347e38f) return 1.0f;
  int e;
  (void)frexpf(max_abs, &e);
  return ldexpf(1.0f, -e);
}

/* eps s^2, or at least FLT_MIN when the row is scaled (eps s^2 may vanish
 * there, and a constant row must still get a finite r, so y = beta). */
static inline float attn__norm_eps(float eps, float s) {
  const float e = eps * s * s;
  return s != 1.0f && e < 0x1p-126f ? 0x1p-126f : e;
}

void attn__f32_layer_norm_scalar(size_t rows, size_t cols, const float* x, const float* gamma, const float* beta,
                                 float eps, float* y);
void attn__f32_layer_norm_wasmsimd(size_t rows, size_t cols, const float* x, const float* gamma, const float* beta,
                                   float eps, float* y);
void attn__f32_layer_norm_backward_scalar(size_t rows, size_t cols, const float* x, const float* dy,
                                          const float* gamma, float eps, float* dx, float* dgamma, float* dbeta);
void attn__f32_layer_norm_backward_wasmsimd(size_t rows, size_t cols, const float* x, const float* dy,
                                            const float* gamma, float eps, float* dx, float* dgamma, float* dbeta);
void attn__f32_rms_norm_scalar(size_t rows, size_t cols, const float* x, const float* gamma, float eps, float* y);
void attn__f32_rms_norm_wasmsimd(size_t rows, size_t cols, const float* x, const float* gamma, float eps, float* y);
void attn__f32_rms_norm_backward_scalar(size_t rows, size_t cols, const float* x, const float* dy,
                                        const float* gamma, float eps, float* dx, float* dgamma);
void attn__f32_rms_norm_backward_wasmsimd(size_t rows, size_t cols, const float* x, const float* dy,
                                          const float* gamma, float eps, float* dx, float* dgamma);

/* GELU of n values, elementwise (f32-gelu.h has the method and the error):
 * approximate 0 is x Phi(x) (erf), 1 the tanh form. The backward writes
 * dx = dy * gelu'(x). y or dx may equal x. */
void attn__f32_gelu_scalar(size_t n, const float* x, int approximate, float* y);
void attn__f32_gelu_wasmsimd(size_t n, const float* x, int approximate, float* y);
void attn__f32_gelu_backward_scalar(size_t n, const float* x, const float* dy, int approximate, float* dx);
void attn__f32_gelu_backward_wasmsimd(size_t n, const float* x, const float* dy, int approximate, float* dx);

/* bias_rows: c (rows, cols) += bias (cols) on every row.
 * col_sums: sums (cols) = the sum over rows of x (rows, cols), rows in order. */
void attn__f32_bias_rows_scalar(size_t rows, size_t cols, const float* bias, float* c);
void attn__f32_bias_rows_wasmsimd(size_t rows, size_t cols, const float* bias, float* c);
void attn__f32_col_sums_scalar(size_t rows, size_t cols, const float* x, float* sums);
void attn__f32_col_sums_wasmsimd(size_t rows, size_t cols, const float* x, float* sums);

/* t (cols, rows) = the transpose of x (rows, cols); a pure copy. */
void attn__f32_transpose_scalar(size_t rows, size_t cols, const float* x, float* t);
void attn__f32_transpose_wasmsimd(size_t rows, size_t cols, const float* x, float* t);

#endif /* ATTN_KERNELS_BLOCK_H */
