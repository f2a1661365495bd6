/* f32-pack-scalar.c - rows in panels of 8 rows (K for the fused kernel; K,
 * V, Q and dout for the backward) and V in panels of 8 columns (the fused
 * kernel), the readable spec (layouts in kernels.h). Pure copies: the SIMD
 * twin gives the same floats. */
#include <assert.h>

#include "kernels.h"

void attn__f32_pack_rows_scalar(const float* x, size_t x_stride, size_t n, size_t d, float* panels) {
  assert(x != NULL && panels != NULL);
  const size_t n_panels = attn__round_up(n, ATTN__PAD) / ATTN__PAD;
  for (size_t s = 0; s < n_panels; s++) {
    const float* rows = x + s * ATTN__PAD * x_stride;  /* (up to 8, d) rows x_stride apart */
    const size_t n_rows = n - s * ATTN__PAD < ATTN__PAD ? n - s * ATTN__PAD : ATTN__PAD;
    float* dst = panels + s * d * ATTN__PAD;           /* (d, 8) */
    for (size_t p = 0; p < d; p++) {
      for (size_t jj = 0; jj < ATTN__PAD; jj++) dst[p * ATTN__PAD + jj] = jj < n_rows ? rows[jj * x_stride + p] : 0.0f;
    }
  }
}

/* V is read once, row by row (a panel at a time would re-read every row for
 * each panel), and each panel is written sequentially. */
void attn__f32_pack_cols_scalar(const float* v, size_t v_stride, size_t n_k, size_t d_v, float* panels) {
  assert(v != NULL && panels != NULL);
  const size_t full = d_v / ATTN__PAD;  /* panels with 8 real columns */
  for (size_t j = 0; j < n_k; j++) {
    const float* row = v + j * v_stride;  /* (d_v) */
    for (size_t s = 0; s < full; s++) {
      float* dst = panels + (s * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) dst[cc] = row[s * ATTN__PAD + cc];
    }
    if (full * ATTN__PAD < d_v) {
      float* dst = panels + (full * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) {
        const size_t c = full * ATTN__PAD + cc;
        dst[cc] = c < d_v ? row[c] : 0.0f;
      }
    }
  }
}
