/* f32-rope-logits-scalar.c - logits over float32 keys turned by RoPE as
 * they are read, the readable spec of f32-rope-logits-wasmsimd.c
 * (kernels.h states the contract): each turned element is
 * attn__f32_rope_scalar's (a cs - b sn, b cs + a sn, every product
 * rounded) and each dot runs in attn__f32_logits_scalar's order. */
#include "kernels.h"

/* Element p of key row k turned by its table row t (cos, then sin),
 * rotate_half pairs (p, p + half) over the first dims elements. */
static float attn__turned(const float* k, const float* t, size_t half, size_t p) {
  if (p < half) return k[p] * t[p] - k[p + half] * t[half + p];
  if (p < 2 * half) return k[p] * t[p - half] + k[p - half] * t[p];
  return k[p];
}

void attn__f32_rope_logits4_scalar(const float* const rows[4], const float scales[4], size_t n_rows, const float* k,
                                   size_t k_stride, size_t n, size_t d_k, const float* table, size_t dims, float* z,
                                   size_t z_stride) {
  const size_t half = dims / 2;
  for (size_t j = 0; j < n; j++) {
    const float* k_row = k + j * k_stride;  /* (d_k) */
    const float* t = table + j * dims;      /* (dims) key j's cos, then sin */
    for (size_t h = 0; h < n_rows; h++) {
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (size_t p = 0; p < d_k; p++) s[p % 4] = s[p % 4] + rows[h][p] * attn__turned(k_row, t, half, p);
      z[h * z_stride + j] = ((s[0] + s[2]) + (s[1] + s[3])) * scales[h];
    }
  }
}
