/* f32-transpose-wasmsimd.c - f32-transpose-scalar.c's copy with 4 x 4
 * blocks transposed in registers (shuffles), the edges one value at a
 * time: the same floats. */
#include <assert.h>
#include <wasm_simd128.h>

#include "kernels.h"

void attn__f32_transpose_wasmsimd(size_t rows, size_t cols, const float* x, float* t) {
  assert(x != NULL && t != NULL);
  const size_t r4 = rows & ~(size_t)3, c4 = cols & ~(size_t)3;
  for (size_t i = 0; i < r4; i += 4) {
    for (size_t j = 0; j < c4; j += 4) {
      const v128_t v0 = wasm_v128_load(x + i * cols + j);
      const v128_t v1 = wasm_v128_load(x + (i + 1) * cols + j);
      const v128_t v2 = wasm_v128_load(x + (i + 2) * cols + j);
      const v128_t v3 = wasm_v128_load(x + (i + 3) * cols + j);
      const v128_t a01 = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5);  /* x00 x10 x01 x11 */
      const v128_t b01 = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7);  /* x02 x12 x03 x13 */
      const v128_t a23 = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5);
      const v128_t b23 = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
      wasm_v128_store(t + j * rows + i, wasm_i32x4_shuffle(a01, a23, 0, 1, 4, 5));
      wasm_v128_store(t + (j + 1) * rows + i, wasm_i32x4_shuffle(a01, a23, 2, 3, 6, 7));
      wasm_v128_store(t + (j + 2) * rows + i, wasm_i32x4_shuffle(b01, b23, 0, 1, 4, 5));
      wasm_v128_store(t + (j + 3) * rows + i, wasm_i32x4_shuffle(b01, b23, 2, 3, 6, 7));
    }
    for (size_t r = i; r < i + 4; r++) {
      for (size_t j = c4; j < cols; j++) t[j * rows + r] = x[r * cols + j];
    }
  }
  for (size_t r = r4; r < rows; r++) {
    for (size_t j = 0; j < cols; j++) t[j * rows + r] = x[r * cols + j];
  }
}
