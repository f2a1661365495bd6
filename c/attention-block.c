/* attention-block.c - the transformer block's entry points: matmul with a
 * transposed b and a bias, layer norm, RMS norm, GELU, and their backward
 * (attention.h, THE TRANSFORMER BLOCK). Each checks its arguments, then
 * hands whole matrices to the kernels (kernels/block.h, the GEMM). */
#include <math.h>
#include <stddef.h>

#include "attention.h"
#include "attention-internal.h"
#include "kernels/kernels.h"

/* Sizes each of at least 1 whose products, and the products' bytes, fit. */
static attn_status attn__block_sizes(int32_t m, int32_t k, int32_t n) {
  if (m < 1 || k < 1 || n < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)m, (size_t)k, 1, 1, &count) || !attn__count((size_t)k, (size_t)n, 1, 1, &count) ||
      !attn__count((size_t)m, (size_t)n, 1, 1, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  return ATTN_OK;
}

size_t attn_matmul_scratch_floats(int32_t m, int32_t k, int32_t n) {
  if (attn__block_sizes(m, k, n) != ATTN_OK) return 0;
  size_t most = (size_t)m * (size_t)k;
  if ((size_t)k * (size_t)n > most) most = (size_t)k * (size_t)n;
  if ((size_t)m * (size_t)n > most) most = (size_t)m * (size_t)n;
  return most;
}

attn_status attn_matmul_ex(const float* a, const float* b, const float* bias, float* c, int32_t m, int32_t k,
                           int32_t n, uint32_t flags, float* scratch, size_t scratch_floats) {
  if (a == NULL || b == NULL || c == NULL) return ATTN_ERR_NULL;
  if ((flags & ~ATTN_MATMUL_TRANSPOSE_B) != 0) return ATTN_ERR_FLAGS;
  const attn_status s = attn__block_sizes(m, k, n);
  if (s != ATTN_OK) return s;
  const size_t M = (size_t)m, K = (size_t)k, N = (size_t)n;
  if (flags & ATTN_MATMUL_TRANSPOSE_B) {
    if (scratch == NULL || scratch_floats < K * N) return ATTN_ERR_SCRATCH;
    ATTN__KERNEL(transpose)(N, K, b, scratch);  /* b (n, k) -> (k, n) */
    b = scratch;
  }
  ATTN__KERNEL(gemm)(M, N, K, a, K, b, N, c, N);
  if (bias != NULL) ATTN__KERNEL(bias_rows)(M, N, bias, c);
  return ATTN_OK;
}

attn_status attn_matmul_backward(const float* a, const float* b, const float* dout, float* da, float* db,
                                 float* dbias, int32_t m, int32_t k, int32_t n, uint32_t flags, float* scratch,
                                 size_t scratch_floats) {
  if (a == NULL || b == NULL || dout == NULL) return ATTN_ERR_NULL;
  if ((flags & ~ATTN_MATMUL_TRANSPOSE_B) != 0) return ATTN_ERR_FLAGS;
  const attn_status s = attn__block_sizes(m, k, n);
  if (s != ATTN_OK) return s;
  if (scratch == NULL || scratch_floats < attn_matmul_scratch_floats(m, k, n)) return ATTN_ERR_SCRATCH;
  const size_t M = (size_t)m, K = (size_t)k, N = (size_t)n;
  if (flags & ATTN_MATMUL_TRANSPOSE_B) {
    /* c = a b^T: da = dout b, db (n, k) = dout^T a. */
    if (da != NULL) ATTN__KERNEL(gemm)(M, K, N, dout, N, b, K, da, K);
    if (db != NULL) {
      ATTN__KERNEL(transpose)(M, N, dout, scratch);
      ATTN__KERNEL(gemm)(N, K, M, scratch, M, a, K, db, K);
    }
  } else {
    /* c = a b: da = dout b^T, db (k, n) = a^T dout. */
    if (da != NULL) {
      ATTN__KERNEL(transpose)(K, N, b, scratch);
      ATTN__KERNEL(gemm)(M, K, N, dout, N, scratch, K, da, K);
    }
    if (db != NULL) {
      ATTN__KERNEL(transpose)(M, K, a, scratch);
      ATTN__KERNEL(gemm)(K, N, M, scratch, M, dout, N, db, N);
    }
  }
  if (dbias != NULL) ATTN__KERNEL(col_sums)(M, N, dout, dbias);
  return ATTN_OK;
}

/* rows and cols at least 1, their product in range, eps finite and >= 0. */
static attn_status attn__norm_args(const float* x, const float* y, int32_t rows, int32_t cols, float eps) {
  if (x == NULL || y == NULL) return ATTN_ERR_NULL;
  if (!(eps >= 0.0f) || isinf(eps)) return ATTN_ERR_SCALE;
  return attn__block_sizes(rows, cols, 1);
}

attn_status attn_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y, int32_t rows,
                            int32_t cols) {
  const attn_status s = attn__norm_args(x, y, rows, cols, eps);
  if (s != ATTN_OK) return s;
  ATTN__KERNEL(layer_norm)((size_t)rows, (size_t)cols, x, gamma, beta, eps, y);
  return ATTN_OK;
}

attn_status attn_layer_norm_backward(const float* x, const float* dout, const float* gamma, float eps, float* dx,
                                     float* dgamma, float* dbeta, int32_t rows, int32_t cols) {
  const attn_status s = attn__norm_args(x, dx, rows, cols, eps);
  if (s != ATTN_OK) return s;
  if (dout == NULL) return ATTN_ERR_NULL;
  ATTN__KERNEL(layer_norm_backward)((size_t)rows, (size_t)cols, x, dout, gamma, eps, dx, dgamma, dbeta);
  return ATTN_OK;
}

attn_status attn_rms_norm(const float* x, const float* gamma, float eps, float* y, int32_t rows, int32_t cols) {
  const attn_status s = attn__norm_args(x, y, rows, cols, eps);
  if (s != ATTN_OK) return s;
  ATTN__KERNEL(rms_norm)((size_t)rows, (size_t)cols, x, gamma, eps, y);
  return ATTN_OK;
}

attn_status attn_rms_norm_backward(const float* x, const float* dout, const float* gamma, float eps, float* dx,
                                   float* dgamma, int32_t rows, int32_t cols) {
  const attn_status s = attn__norm_args(x, dx, rows, cols, eps);
  if (s != ATTN_OK) return s;
  if (dout == NULL) return ATTN_ERR_NULL;
  ATTN__KERNEL(rms_norm_backward)((size_t)rows, (size_t)cols, x, dout, gamma, eps, dx, dgamma);
  return ATTN_OK;
}

attn_status attn_gelu(const float* x, float* y, int32_t n, int32_t approximate) {
  if (x == NULL || y == NULL) return ATTN_ERR_NULL;
  if (approximate != 0 && approximate != 1) return ATTN_ERR_FLAGS;
  const attn_status s = attn__block_sizes(n, 1, 1);
  if (s != ATTN_OK) return s;
  ATTN__KERNEL(gelu)((size_t)n, x, approximate, y);
  return ATTN_OK;
}

attn_status attn_gelu_backward(const float* x, const float* dout, float* dx, int32_t n, int32_t approximate) {
  if (x == NULL || dout == NULL || dx == NULL) return ATTN_ERR_NULL;
  if (approximate != 0 && approximate != 1) return ATTN_ERR_FLAGS;
  const attn_status s = attn__block_sizes(n, 1, 1);
  if (s != ATTN_OK) return s;
  ATTN__KERNEL(gelu_backward)((size_t)n, x, dout, approximate, dx);
  return ATTN_OK;
}
