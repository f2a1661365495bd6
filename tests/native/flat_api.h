/* flat_api.h - the flat (n_q, n_k) mask and bias and contiguous tensors of
 * the native tests and the fuzzer, through the struct API of attention.h.
 * Included by tests/native/test_attention.c and tests/fuzz/fuzz_attention.c,
 * which both use every function here. */
#ifndef ATTN_TESTS_FLAT_API_H
#define ATTN_TESTS_FLAT_API_H

#include <stddef.h>
#include <stdint.h>

#include "../../c/attention.h"

static attn_shape flat_shape(int32_t batch, int32_t heads, int32_t kv_heads, int32_t n_q, int32_t n_k,
                             int32_t d_k, int32_t d_v) {
  attn_shape s = {0};
  s.batch = batch, s.heads = heads, s.kv_heads = kv_heads;
  s.n_q = n_q, s.n_k = n_k, s.d_k = d_k, s.d_v = d_v;
  return s;
}

static size_t flat_scratch(int32_t heads, int32_t kv_heads, int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v) {
  const attn_shape s = flat_shape(1, heads, kv_heads, n_q, n_k, d_k, d_v);
  return attn_sdpa_scratch_size(&s);
}

static attn_status flat_sdpa(const float* q, const float* k, const float* v, float* out, int32_t batch,
                             int32_t heads, int32_t kv_heads, int32_t n_q, int32_t n_k, int32_t d_k,
                             int32_t d_v, const uint8_t* mask, const float* bias, float scale,
                             uint32_t flags, float* scores, float* scaled, float* weights,
                             float* scratch, size_t scratch_floats) {
  const attn_shape s = flat_shape(batch, heads, kv_heads, n_q, n_k, d_k, d_v);
  attn_options o = {0};
  o.scale = scale, o.flags = flags, o.mask = mask, o.bias = bias;
  o.mask_layout.row_stride = o.bias_layout.row_stride = n_k > 0 ? (size_t)n_k : 0;
  const attn_steps st = {scores, scaled, NULL, weights, NULL};
  return attn_sdpa(&s, q, k, v, out, &o, &st, scratch, scratch_floats);
}

#endif
