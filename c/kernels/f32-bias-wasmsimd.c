/* f32-bias-wasmsimd.c - f32-bias-scalar.c four columns at a time (the
 * same additions in the same order: the same bits). */
#include <assert.h>
#include <wasm_simd128.h>

#include "kernels.h"

void attn__f32_bias_rows_wasmsimd(size_t rows, size_t cols, const float* bias, float* c) {
  assert(bias != NULL && c != NULL);
  for (size_t i = 0; i < rows; i++, c += cols) {
    size_t j = 0;
    for (; j + 4 <= cols; j += 4) wasm_v128_store(c + j, wasm_f32x4_add(wasm_v128_load(c + j), wasm_v128_load(bias + j)));
    for (; j < cols; j++) c[j] = c[j] + bias[j];
  }
}

void attn__f32_col_sums_wasmsimd(size_t rows, size_t cols, const float* x, float* sums) {
  assert(x != NULL && sums != NULL);
  for (size_t j = 0; j < cols; j++) sums[j] = 0.0f;
  for (size_t i = 0; i < rows; i++, x += cols) {
    size_t j = 0;
    for (; j + 4 <= cols; j += 4) wasm_v128_store(sums + j, wasm_f32x4_add(wasm_v128_load(sums + j), wasm_v128_load(x + j)));
    for (; j < cols; j++) sums[j] = sums[j] + x[j];
  }
}
