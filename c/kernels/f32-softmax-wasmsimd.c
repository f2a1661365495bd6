/* f32-softmax-wasmsimd.c - SIMD128 twin of f32-softmax-scalar.c: the same
 * three passes on four lanes, then a scalar tail. The max and the per-element
 * exp match the scalar twin bit for bit; the sum runs in four lanes first, so
 * it may differ from the scalar sum by rounding. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "kernels.h"

void attn__f32_softmax_wasmsimd(size_t n, const float* x, float* y) {
  assert(x != NULL && y != NULL);
  /* Pass 1: row max. f32x4.max propagates NaN like the scalar twin. */
  v128_t vmax = wasm_f32x4_splat(-INFINITY);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) vmax = wasm_f32x4_max(vmax, wasm_v128_load(x + j));
  float lanes[4];
  wasm_v128_store(lanes, vmax);
  float m = lanes[0];
  for (int lane = 1; lane < 4; lane++) m = (lanes[lane] > m || lanes[lane] != lanes[lane]) ? lanes[lane] : m;
  for (; j < n; j++) {
    const float xj = x[j];
    m = (xj > m || xj != xj) ? xj : m;
  }
  if (m == -INFINITY) {
    for (j = 0; j < n; j++) y[j] = 0.0f;
    return;
  }
  /* Pass 2: e = exp(x - m) and the sum. */
  const v128_t vm = wasm_f32x4_splat(m);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  for (j = 0; j + 4 <= n; j += 4) {
    const v128_t ve = attn__expf_nonpos_wasmsimd(wasm_f32x4_sub(wasm_v128_load(x + j), vm));
    wasm_v128_store(y + j, ve);
    vsum = wasm_f32x4_add(vsum, ve);
  }
  float sum = (wasm_f32x4_extract_lane(vsum, 0) + wasm_f32x4_extract_lane(vsum, 1)) +
              (wasm_f32x4_extract_lane(vsum, 2) + wasm_f32x4_extract_lane(vsum, 3));
  for (; j < n; j++) {
    const float e = attn__expf_nonpos(x[j] - m);
    y[j] = e;
    sum = sum + e;
  }
  /* Pass 3: normalise. */
  const v128_t vs = wasm_f32x4_splat(sum);
  for (j = 0; j + 4 <= n; j += 4) wasm_v128_store(y + j, wasm_f32x4_div(wasm_v128_load(y + j), vs));
  for (; j < n; j++) y[j] = y[j] / sum;
}
