/* f32-bias-scalar.c - a bias added to every row, and the column sums (the
 * bias's gradient), the readable spec. */
#include <assert.h>

#include "kernels.h"

void attn__f32_bias_rows_scalar(size_t rows, size_t cols, const float* bias, float* c) {
  assert(bias != NULL && c != NULL);
  for (size_t i = 0; i < rows; i++, c += cols) {
    for (size_t j = 0; j < cols; j++) c[j] = c[j] + bias[j];
  }
}

void attn__f32_col_sums_scalar(size_t rows, size_t cols, const float* x, float* sums) {
  assert(x != NULL && sums != NULL);
  for (size_t j = 0; j < cols; j++) sums[j] = 0.0f;
  for (size_t i = 0; i < rows; i++, x += cols) {
    for (size_t j = 0; j < cols; j++) sums[j] = sums[j] + x[j];
  }
}
