/* attention-kv.c - the public entry points that fill and read a compact
 * KV cache's rows (attention.h, COMPACT KV CACHES): check arguments, call
 * the kv-rows kernel. attn_sdpa_kv itself is in attention.c. */
#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "kernels/kernels.h"

/* The checks of attn_kv_write and attn_kv_read. */
static attn_status attn__kv_rows_check(int32_t dtype, const void* x, const void* y, const float* scales,
                                       int32_t rows, int32_t d) {
  if (dtype != ATTN_KV_FLOAT16 && dtype != ATTN_KV_INT8) return ATTN_ERR_DTYPE;
  if (x == NULL || y == NULL || (dtype == ATTN_KV_INT8 && scales == NULL)) return ATTN_ERR_NULL;
  if (rows < 1 || d < 1) return ATTN_ERR_SHAPE;
  size_t count;
  return __builtin_mul_overflow((size_t)rows, (size_t)d, &count) || count > SIZE_MAX / sizeof(float)
             ? ATTN_ERR_OVERFLOW : ATTN_OK;
}

attn_status attn_kv_write(int32_t dtype, const float* x, int32_t rows, int32_t d, void* dst, float* scales) {
  const attn_status bad = attn__kv_rows_check(dtype, x, dst, scales, rows, d);
  if (bad != ATTN_OK) return bad;
  ATTN__KERNEL(kv_store)(dtype, x, (size_t)rows, (size_t)d, dst, scales);
  return ATTN_OK;
}

attn_status attn_kv_read(int32_t dtype, const void* src, const float* scales, int32_t rows, int32_t d,
                         float* dst) {
  const attn_status bad = attn__kv_rows_check(dtype, src, dst, scales, rows, d);
  if (bad != ATTN_OK) return bad;
  const attn__kv_rows r = {.dtype = dtype, .data = src, .stride = (size_t)d, .scales = scales, .scale_stride = 1};
  attn__kv_load(&r, 0, (size_t)rows, (size_t)d, dst, (size_t)d);
  return ATTN_OK;
}
