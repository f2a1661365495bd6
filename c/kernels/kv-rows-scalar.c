/* kv-rows-scalar.c - rows of a compact KV cache (float16 or int8) to and
 * from float32, the readable spec of kv-rows-wasmsimd.c (kernels.h states
 * the contract). Every value is converted alone, so both twins give the
 * same floats and bits. */
#include <assert.h>
#include <math.h>

#include "kernels.h"

/* Rows of a compact K or V as float32 values, one value at a time. */
static void attn__kv_load_values(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride) {
  for (size_t j = 0; j < n; j++) {
    for (size_t c = 0; c < d; c++) dst[j * dst_stride + c] = attn__kv_value(src, j0 + j, c);
  }
}

void attn__f16_f32_kv_load_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_F16);
  attn__kv_load_values(src, j0, n, d, dst, dst_stride);
}

void attn__i8_f32_kv_load_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_I8);
  attn__kv_load_values(src, j0, n, d, dst, dst_stride);
}

void attn__f16_f32_kv_load_bits_scalar(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                       size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_F16);
  for (size_t j = 0; j < n; j++) {
    const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    for (size_t c = 0; c < d; c++) dst[j * dst_stride + c] = attn__f16_f32_bits(row[c]);
  }
}

/* max_c |x_c| of a row, NaN when one is NaN. */
static float attn__row_amax(const float* x, size_t d) {
  float amax = 0.0f;
  for (size_t c = 0; c < d; c++) amax = attn__max_nan(amax, fabsf(x[c]));
  return amax;
}

void attn__f32_kv_store_scalar(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales) {
  assert(x != NULL && dst != NULL && dtype != ATTN__KV_F32);
  if (dtype == ATTN__KV_F16) {
    attn__f16_store(x, n * d, dst);
    return;
  }
  int8_t* q = dst;  /* (n, d) */
  for (size_t j = 0; j < n; j++) {
    const float* row = x + j * d;
    const float amax = attn__row_amax(row, d), s = amax / 127.0f;
    /* s = 0 (zeros, or an amax below 127 float32 subnormal steps) stores
     * zeros; a non-finite s stores zeros that read back as NaN. */
    const int usable = s > 0.0f && isfinite(s);
    scales[j] = isfinite(amax) ? s : NAN;
    for (size_t c = 0; c < d; c++) {
      float r = usable ? nearbyintf(row[c] / s) : 0.0f;
      r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
      q[j * d + c] = (int8_t)r;
    }
  }
}
