/* f32-rope-wasmsimd.c - RoPE rotation of rows with SIMD128, the algorithm
 * and bits of f32-rope-scalar.c (read that first): plain multiplies and
 * adds (never attn__f32x4_madd), so every build rotates alike.
 *   - rotate_half pairs: 4 pairs per step, a from [c, c + 4), b from
 *     [c + half, c + half + 4), a loop each for forward and inverse (one
 *     loop with the sign chosen per step compiles to a select and a
 *     negation per vector);
 *   - interleaved pairs: 2 pairs per vector [a0 b0 a1 b1], against
 *     [cos0 cos0 cos1 cos1] and, swapped to [b0 a0 b1 a1], against
 *     [-sin0 sin0 -sin1 sin1] (x + (-y) is x - y, bit for bit). */
#include <assert.h>
#include <wasm_simd128.h>

#include "f32-rope.h"
#include "kernels.h"

void attn__f32_rope_wasmsimd(const float* x, size_t x_stride, size_t n, size_t d, const float* table, size_t dims,
                             uint32_t flags, float* y, size_t y_stride) {
  assert(dims % 2 == 0 && dims <= d);
  const attn__rope_mode mode = attn__rope_mode_of(dims, flags);
  const size_t half = mode.half;
  const int interleaved = mode.interleaved, inverse = mode.inverse;
  /* The sine's sign per lane: forward turns a by -sin, inverse by +sin. */
  const v128_t vsign = inverse ? wasm_f32x4_make(1.0f, -1.0f, 1.0f, -1.0f) : wasm_f32x4_make(-1.0f, 1.0f, -1.0f, 1.0f);
  for (size_t r = 0; r < n; r++) {
    const attn__rope_row row = attn__rope_row_at(x, x_stride, y, y_stride, table, dims, r);
    const float* x_row = row.x;
    float* y_row = row.y;
    const float *cos_row = row.cos, *sin_row = row.sin;
    size_t c = 0;
    if (interleaved) {
      for (; c + 2 <= half; c += 2) {
        const v128_t vx = wasm_v128_load(x_row + 2 * c);  /* a0 b0 a1 b1 */
        const v128_t vswap = wasm_i32x4_shuffle(vx, vx, 1, 0, 3, 2);
        const v128_t vcs = wasm_f32x4_make(cos_row[c], cos_row[c], cos_row[c + 1], cos_row[c + 1]);
        const v128_t vsn = wasm_f32x4_mul(wasm_f32x4_make(sin_row[c], sin_row[c], sin_row[c + 1], sin_row[c + 1]), vsign);
        wasm_v128_store(y_row + 2 * c, wasm_f32x4_add(wasm_f32x4_mul(vx, vcs), wasm_f32x4_mul(vswap, vsn)));
      }
      for (; c < half; c++) {
        const float a = x_row[2 * c], b = x_row[2 * c + 1];
        y_row[2 * c] = attn__rope_a(a, b, cos_row[c], sin_row[c], inverse);
        y_row[2 * c + 1] = attn__rope_b(a, b, cos_row[c], sin_row[c], inverse);
      }
    } else if (inverse) {
      for (; c + 4 <= half; c += 4) {
        const v128_t va = wasm_v128_load(x_row + c), vb = wasm_v128_load(x_row + c + half);
        const v128_t vcs = wasm_v128_load(cos_row + c), vsn = wasm_v128_load(sin_row + c);
        wasm_v128_store(y_row + c, wasm_f32x4_add(wasm_f32x4_mul(va, vcs), wasm_f32x4_mul(vb, vsn)));
        wasm_v128_store(y_row + c + half, wasm_f32x4_sub(wasm_f32x4_mul(vb, vcs), wasm_f32x4_mul(va, vsn)));
      }
    } else {
      for (; c + 4 <= half; c += 4) {
        const v128_t va = wasm_v128_load(x_row + c), vb = wasm_v128_load(x_row + c + half);
        const v128_t vcs = wasm_v128_load(cos_row + c), vsn = wasm_v128_load(sin_row + c);
        wasm_v128_store(y_row + c, wasm_f32x4_sub(wasm_f32x4_mul(va, vcs), wasm_f32x4_mul(vb, vsn)));
        wasm_v128_store(y_row + c + half, wasm_f32x4_add(wasm_f32x4_mul(vb, vcs), wasm_f32x4_mul(va, vsn)));
      }
    }
    if (!interleaved) {
      for (; c < half; c++) {
        const float a = x_row[c], b = x_row[c + half];
        y_row[c] = attn__rope_a(a, b, cos_row[c], sin_row[c], inverse);
        y_row[c + half] = attn__rope_b(a, b, cos_row[c], sin_row[c], inverse);
      }
    }
    attn__rope_copy_rest(row, dims, d);
  }
}
