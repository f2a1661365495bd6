/* f32-transpose-scalar.c - t (cols, rows) = x (rows, cols) transposed, a
 * pure copy, in 8 x 8 blocks so both sides stay in cache. */
#include <assert.h>

#include "kernels.h"

void attn__f32_transpose_scalar(size_t rows, size_t cols, const float* x, float* t) {
  assert(x != NULL && t != NULL);
  for (size_t i0 = 0; i0 < rows; i0 += 8) {
    const size_t i1 = i0 + 8 < rows ? i0 + 8 : rows;
    for (size_t j0 = 0; j0 < cols; j0 += 8) {
      const size_t j1 = j0 + 8 < cols ? j0 + 8 : cols;
      for (size_t i = i0; i < i1; i++) {
        for (size_t j = j0; j < j1; j++) t[j * rows + i] = x[i * cols + j];
      }
    }
  }
}
