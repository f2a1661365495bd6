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
  const attn__rope_mode mode = attn__rope_mode_of(dims, flags);
  for (size_t r = 0; r < n; r++) {
    const attn__rope_row row = attn__rope_row_at(x, x_stride, y, y_stride, table, dims, r);
    for (size_t c = 0; c < mode.half; c++) {
      const size_t ia = mode.interleaved ? 2 * c : c, ib = mode.interleaved ? 2 * c + 1 : c + mode.half;
      const float a = row.x[ia], b = row.x[ib];
      row.y[ia] = attn__rope_a(a, b, row.cos[c], row.sin[c], mode.inverse);
      row.y[ib] = attn__rope_b(a, b, row.cos[c], row.sin[c], mode.inverse);
    }
    attn__rope_copy_rest(row, dims, d);
  }
}
