/* f32-pack-scalar.c - K in panels of 8 keys for the fused kernel, the
 * readable spec. A pure copy: the SIMD twin gives the same floats. */
#include <assert.h>

#include "kernels.h"

void attn__f32_pack_k_scalar(const float* k, size_t n_k, size_t d_k, float* kp) {
  assert(k != NULL && kp != NULL);
  const size_t panels = attn__round_up(n_k, ATTN__PAD) / ATTN__PAD;
  for (size_t s = 0; s < panels; s++) {
    const float* rows = k + s * ATTN__PAD * d_k;  /* (up to 8, d_k) */
    const size_t keys = n_k - s * ATTN__PAD < ATTN__PAD ? n_k - s * ATTN__PAD : ATTN__PAD;
    float* dst = kp + s * d_k * ATTN__PAD;        /* (d_k, 8) */
    for (size_t p = 0; p < d_k; p++) {
      for (size_t jj = 0; jj < ATTN__PAD; jj++) dst[p * ATTN__PAD + jj] = jj < keys ? rows[jj * d_k + p] : 0.0f;
    }
  }
}
