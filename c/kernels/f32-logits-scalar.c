/* f32-logits-scalar.c - the decode kernel's logits from float32 K, the
 * readable spec of f32-logits-wasmsimd.c (kernels.h states the contract):
 * each key's dot product as four partial sums over p mod 4, the SIMD
 * twin's lanes, combined as its horizontal add combines them. */
#include "kernels.h"

void attn__f32_logits_scalar(const float* q, const float* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                             float scale, float* z) {
  const size_t d_k4 = d_k / 4 * 4;
  for (size_t j = j0; j < j1; j++) {
    const float* k_row = k + j * k_stride;  /* (d_k) */
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t p = 0; p < d_k4; p++) s[p % 4] = s[p % 4] + q[p] * k_row[p];
    float dot = (s[0] + s[2]) + (s[1] + s[3]);
    for (size_t p = d_k4; p < d_k; p++) dot = dot + q[p] * k_row[p];
    z[j] = dot * scale;
  }
}

void attn__f32_logits2_scalar(const float* qa, const float* qb, const float* k, size_t k_stride, size_t n, size_t d_k,
                              float scale, float* za, float* zb) {
  attn__f32_logits_scalar(qa, k, k_stride, 0, n, d_k, scale, za);
  attn__f32_logits_scalar(qb, k, k_stride, 0, n, d_k, scale, zb);
}
