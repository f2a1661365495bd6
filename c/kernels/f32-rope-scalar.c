/* f32-rope-scalar.c - RoPE rotation of rows, the readable spec of
 * f32-rope-wasmsimd.c (same bits: each output is one rounded product of
 * each input with cos and sin, then one rounded add or subtract).
 *
 * Row r of x turns by table row r (f32-rope.h): for a pair (a, b)
 *   forward: (a cos - b sin, b cos + a sin)
 *   inverse: (a cos + b sin, b cos - a sin)   (R^T: the gradient's way back)
 * and elements from dims to d are copied. y may equal x (same stride). */
#include <assert.h>

#include "f32-rope.h"
#include "kernels.h"

void attn__f32_rope_scalar(const float* x, size_t x_stride, size_t n, size_t d, const float* table, size_t dims,
                           uint32_t flags, float* y, size_t y_stride) {
  assert(dims % 2 == 0 && dims <= d);
  const size_t half = dims / 2;
  const int interleaved = (flags & ATTN__ROPE_PAIRS_INTERLEAVED) != 0;
  const int inverse = (flags & ATTN__ROPE_INVERSE) != 0;
  for (size_t r = 0; r < n; r++) {
    const float* x_row = x + r * x_stride;        /* (d) */
    float* y_row = y + r * y_stride;              /* (d) */
    const float* cos_row = table + r * dims;      /* (dims / 2) */
    const float* sin_row = cos_row + half;        /* (dims / 2) */
    for (size_t c = 0; c < half; c++) {
      const size_t ia = interleaved ? 2 * c : c, ib = interleaved ? 2 * c + 1 : c + half;
      const float a = x_row[ia], b = x_row[ib], cs = cos_row[c], sn = sin_row[c];
      y_row[ia] = inverse ? a * cs + b * sn : a * cs - b * sn;
      y_row[ib] = inverse ? b * cs - a * sn : b * cs + a * sn;
    }
    if (y_row != x_row) {
      for (size_t c = dims; c < d; c++) y_row[c] = x_row[c];
    }
  }
}
