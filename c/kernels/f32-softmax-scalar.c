/* f32-softmax-scalar.c - y = softmax(x) over one row, the readable spec.
 *
 * Three named passes:
 *   1. row max m (NaN propagates: a NaN anywhere makes the row NaN);
 *   2. e_j = exp(x_j - m) <= 1, and their sum s >= 1 (the max term is 1);
 *   3. y_j = e_j / s.
 * -Infinity gives e_j = 0. When every x_j is -Infinity, m is -Infinity and
 * the row is all 0 instead of 0/0. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "kernels.h"

void attn__f32_softmax_scalar(size_t n, const float* x, float* y) {
  assert(x != NULL && y != NULL);
  float m = -INFINITY;
  for (size_t j = 0; j < n; j++) {
    const float xj = x[j];
    m = (xj > m || xj != xj) ? xj : m;
    if (m != m) break;
  }
  if (m == -INFINITY) {
    for (size_t j = 0; j < n; j++) y[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (size_t j = 0; j < n; j++) {
    const float e = attn__expf_nonpos(x[j] - m);
    y[j] = e;
    sum = sum + e;
  }
  for (size_t j = 0; j < n; j++) y[j] = y[j] / sum;
}
