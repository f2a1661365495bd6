/* f32-gemm-scalar.c - c (m, n) = a (m, k) b (k, n), the readable spec.
 * One row of c at a time; the sum over k runs in order 0..k-1. */
#include <assert.h>

#include "kernels.h"

void attn__f32_gemm_scalar(size_t m, size_t n, size_t k, const float* a, size_t a_stride,
                           const float* b, size_t b_stride, float* c, size_t c_stride) {
  assert(a != NULL && b != NULL && c != NULL);
  for (size_t i = 0; i < m; i++) {
    const float* a_row = a + i * a_stride;  /* (k) */
    float* c_row = c + i * c_stride;        /* (n) */
    for (size_t j = 0; j < n; j++) c_row[j] = 0.0f;
    for (size_t p = 0; p < k; p++) {
      const float a_ip = a_row[p];
      const float* b_row = b + p * b_stride;  /* (n) */
      for (size_t j = 0; j < n; j++) c_row[j] = c_row[j] + a_ip * b_row[j];
    }
  }
}
