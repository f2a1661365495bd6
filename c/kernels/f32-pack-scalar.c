/* f32-pack-scalar.c - K in panels of 8 keys and V in panels of 8 columns
 * for the fused kernel, the readable spec. Pure copies: the SIMD twin gives
 * the same floats. */
#include <assert.h>

#include "kernels.h"

void attn__f32_pack_k_scalar(const float* k, size_t k_stride, size_t n_k, size_t d_k, float* kp) {
  assert(k != NULL && kp != NULL);
  const size_t panels = attn__round_up(n_k, ATTN__PAD) / ATTN__PAD;
  for (size_t s = 0; s < panels; s++) {
    const float* rows = k + s * ATTN__PAD * k_stride;  /* (up to 8, d_k) rows k_stride apart */
    const size_t keys = n_k - s * ATTN__PAD < ATTN__PAD ? n_k - s * ATTN__PAD : ATTN__PAD;
    float* dst = kp + s * d_k * ATTN__PAD;        /* (d_k, 8) */
    for (size_t p = 0; p < d_k; p++) {
      for (size_t jj = 0; jj < ATTN__PAD; jj++) dst[p * ATTN__PAD + jj] = jj < keys ? rows[jj * k_stride + p] : 0.0f;
    }
  }
}

/* V is read once, row by row (a panel at a time would re-read every row for
 * each panel), and each panel is written sequentially. */
void attn__f32_pack_v_scalar(const float* v, size_t v_row_stride, size_t n_k, size_t d_v, float* vp) {
  assert(v != NULL && vp != NULL);
  const size_t full = d_v / ATTN__PAD;  /* panels with 8 real columns */
  for (size_t j = 0; j < n_k; j++) {
    const float* row = v + j * v_row_stride;  /* (d_v) */
    for (size_t s = 0; s < full; s++) {
      float* dst = vp + (s * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) dst[cc] = row[s * ATTN__PAD + cc];
    }
    if (full * ATTN__PAD < d_v) {
      float* dst = vp + (full * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) {
        const size_t c = full * ATTN__PAD + cc;
        dst[cc] = c < d_v ? row[c] : 0.0f;
      }
    }
  }
}
