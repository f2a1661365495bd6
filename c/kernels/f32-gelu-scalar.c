/* f32-gelu-scalar.c - GELU and its gradient elementwise, the readable spec
 * (f32-gelu.h has the method). */
#include <assert.h>

#include "f32-gelu.h"
#include "kernels.h"

void attn__f32_gelu_scalar(size_t n, const float* x, int approximate, float* y) {
  assert(x != NULL && y != NULL);
  for (size_t j = 0; j < n; j++) y[j] = attn__gelu(x[j], approximate);
}

void attn__f32_gelu_backward_scalar(size_t n, const float* x, const float* dy, int approximate, float* dx) {
  assert(x != NULL && dy != NULL && dx != NULL);
  for (size_t j = 0; j < n; j++) dx[j] = dy[j] * attn__gelu_grad(x[j], approximate);
}
