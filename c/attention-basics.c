/* attention-basics.c - the entry points that need no call of the kernels'
 * machinery: status strings, whether this build has SIMD, the default
 * scale, and the two small helpers attn_matmul and attn_softmax. */
#include <math.h>
#include <stddef.h>

#include "attention.h"
#include "attention-internal.h"
#include "kernels/kernels.h"

const char* attn_status_string(int32_t status) {
  switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "a required buffer is missing (NULL pointer)";
    case ATTN_ERR_SHAPE: return "a size is not a positive integer in range";
    case ATTN_ERR_HEADS: return "heads must be a multiple of kv_heads";
    case ATTN_ERR_SCALE: return "scale must be a finite number";
    case ATTN_ERR_FLAGS: return "unknown flag bits";
    case ATTN_ERR_SCRATCH: return "scratch buffer missing or too small";
    case ATTN_ERR_OVERFLOW: return "the sizes are too large for this address space";
    case ATTN_ERR_STEPS: return "scores, scaled and weights must be given together (logits only with them)";
    case ATTN_ERR_SOFTCAP: return "softcap must be 0 (none) or a finite positive number";
    case ATTN_ERR_WINDOW: return "window sides must be -1 (unbounded) or at least 0";
    case ATTN_ERR_LENGTHS: return "kv_lengths entries must be in [0, n_k]";
    case ATTN_ERR_MASK: return "mask and bias cols must be in [0, n_k]";
    case ATTN_ERR_ROPE: return "rope_dims must be even and in [0, d_k], rope_theta finite and >= 1, rope_flags known";
    case ATTN_ERR_SINKS: return "sinks must be finite";
    case ATTN_ERR_ALIBI: return "alibi slopes must be finite";
    case ATTN_ERR_DTYPE: return "a KV cache's dtype must be float32, float16 or int8";
    default: return "unknown status";
  }
}

int32_t attn_simd_enabled(void) {
#ifdef __wasm_simd128__
  return 1;
#else
  return 0;
#endif
}

float attn_default_scale(int32_t d_k) {
  if (d_k < 1) return 0.0f;
  return (float)(1.0 / sqrt((double)d_k));
}

attn_status attn_matmul(const float* a, const float* b, float* c, int32_t m, int32_t k,
                        int32_t n) {
  if (a == NULL || b == NULL || c == NULL) return ATTN_ERR_NULL;
  if (m < 1 || k < 1 || n < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)m, (size_t)k, 1, 1, &count) ||
      !attn__count((size_t)k, (size_t)n, 1, 1, &count) ||
      !attn__count((size_t)m, (size_t)n, 1, 1, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  ATTN__KERNEL(gemm)((size_t)m, (size_t)n, (size_t)k, a, (size_t)k, b, (size_t)n, c, (size_t)n);
  return ATTN_OK;
}

attn_status attn_softmax(const float* x, float* y, int32_t rows, int32_t cols) {
  if (x == NULL || y == NULL) return ATTN_ERR_NULL;
  if (rows < 1 || cols < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)rows, (size_t)cols, 1, 1, &count)) return ATTN_ERR_OVERFLOW;
  for (size_t i = 0; i < (size_t)rows; i++) {
    ATTN__KERNEL(softmax)((size_t)cols, x + i * (size_t)cols, y + i * (size_t)cols);
  }
  return ATTN_OK;
}
