/* fuzz_attention.c - libFuzzer harness over the C API (scalar build), run
 * with AddressSanitizer and UndefinedBehaviorSanitizer:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     tests/fuzz/fuzz_attention.c c/attention.c c/kernels/ *-scalar.c -lm -o fuzz_attention
 *   ./fuzz_attention tests/fuzz/corpus -max_total_time=600
 *
 * The input bytes choose sizes, flags, scale, a mask, a bias and the values
 * (drawn from a palette with NaN, +-Infinity, denormals, huge and tiny
 * numbers). Checked on every input:
 *   - attn_sdpa and attn_matmul/attn_softmax return a status, never crash;
 *   - bad sizes give an error status and leave the output untouched;
 *   - a fully masked query row gives output 0 on both paths;
 *   - when every input is finite and of moderate size, every output is
 *     finite and the fused and step paths agree to 1e-4 of the largest
 *     |V| value; every weight row sums to 1 or is all 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "../../c/attention.h"

/* The flat (n_q, n_k) mask and bias and contiguous tensors of the tests,
 * through the struct API. */
static attn_shape flat_shape(int32_t batch, int32_t heads, int32_t kv_heads, int32_t n_q, int32_t n_k,
                             int32_t d_k, int32_t d_v) {
  attn_shape s = {0};
  s.batch = batch, s.heads = heads, s.kv_heads = kv_heads;
  s.n_q = n_q, s.n_k = n_k, s.d_k = d_k, s.d_v = d_v;
  return s;
}

static size_t flat_scratch(int32_t n_q, int32_t n_k, int32_t d_k, int32_t d_v) {
  const attn_shape s = flat_shape(1, 1, 1, n_q, n_k, d_k, d_v);
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


/* A broken invariant: say which, then abort so libFuzzer keeps the input. */
#define FAIL(...)                  \
  do {                             \
    fprintf(stderr, __VA_ARGS__);  \
    fputc('\n', stderr);           \
    abort();                       \
  } while (0)

typedef struct {
  const uint8_t* data;
  size_t size;
} reader;

static uint8_t take(reader* r) {
  if (r->size == 0) return 0;
  r->size--;
  return *r->data++;
}

static float value(reader* r, int* moderate) {
  static const float palette[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, -7.25f, 1e-40f, -1e-45f,
                                  1e30f, -1e30f, 3.4e38f, INFINITY, -INFINITY, NAN, 1e-20f};
  const uint8_t b = take(r);
  if (b < 200) return ((float)b - 100.0f) / 25.0f;  /* mostly ordinary values in [-4, 4] */
  const float x = palette[b % (sizeof palette / sizeof *palette)];
  if (!(fabsf(x) <= 8.0f)) *moderate = 0;
  return x;
}

static void fill(reader* r, float* x, size_t n, int* moderate) {
  for (size_t i = 0; i < n; i++) x[i] = value(r, moderate);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reader r = {data, size};
  const uint8_t shape = take(&r);
  const int32_t batch = 1 + take(&r) % 2;
  int32_t kv_heads = 1 + take(&r) % 3;
  int32_t heads = kv_heads * (1 + take(&r) % 3);
  const int32_t n_q = 1 + take(&r) % 70;
  const uint8_t nk_byte = take(&r);
  /* Mostly small; bytes from 250 reach past the 256-key block of the kernel. */
  const int32_t n_k = nk_byte < 250 ? 1 + nk_byte % 70 : 250 + (nk_byte - 250) * 13;
  const int32_t d_k = 1 + take(&r) % 20, d_v = 1 + take(&r) % 20;
  const uint8_t flags_byte = take(&r);
  const uint32_t flags = flags_byte & 1u;
  const int use_mask = (flags_byte >> 1) & 1, use_bias = (flags_byte >> 2) & 1;
  const float scale = (flags_byte >> 3) & 1 ? (float)take(&r) / 64.0f : attn_default_scale(d_k);
  /* Now and then, sizes that must be refused. */
  if (shape == 255) heads = kv_heads + 1 + (kv_heads == 1);

  int moderate = 1;
  const size_t nq_all = (size_t)batch * heads * n_q, nk_all = (size_t)batch * kv_heads * n_k;
  float* q = malloc(nq_all * d_k * sizeof *q);
  float* k = malloc(nk_all * d_k * sizeof *k);
  float* v = malloc(nk_all * d_v * sizeof *v);
  fill(&r, q, nq_all * d_k, &moderate);
  fill(&r, k, nk_all * d_k, &moderate);
  fill(&r, v, nk_all * d_v, &moderate);
  uint8_t* mask = NULL;
  float* bias = NULL;
  if (use_mask) {
    mask = malloc((size_t)n_q * n_k);
    for (int32_t i = 0; i < n_q * n_k; i++) mask[i] = take(&r) & 1;
  }
  if (use_bias) {
    bias = malloc((size_t)n_q * n_k * sizeof *bias);
    int bias_moderate = 1;
    fill(&r, bias, (size_t)n_q * n_k, &bias_moderate);
    for (int32_t i = 0; i < n_q * n_k; i++) {
      if (isinf(bias[i]) && bias[i] < 0) continue;  /* -Infinity masks; allowed */
      if (!(fabsf(bias[i]) <= 8.0f)) moderate = 0;
    }
  }
  const size_t scratch_n = flat_scratch(n_q, n_k, d_k, d_v);
  float* scratch = malloc((scratch_n ? scratch_n : 1) * sizeof *scratch);
  const size_t out_n = nq_all * d_v, steps_n = nq_all * n_k;
  float* out = malloc(out_n * sizeof *out);
  float* out2 = malloc(out_n * sizeof *out2);
  float* scores = malloc(steps_n * sizeof *scores);
  float* scaled = malloc(steps_n * sizeof *scaled);
  float* weights = malloc(steps_n * sizeof *weights);
  for (size_t i = 0; i < out_n; i++) out[i] = out2[i] = 12345.0f;

  const attn_status s1 = flat_sdpa(q, k, v, out, batch, heads, kv_heads, n_q, n_k, d_k, d_v, mask, bias,
                                   scale, flags, NULL, NULL, NULL, scratch, scratch_n);
  const attn_status s2 = flat_sdpa(q, k, v, out2, batch, heads, kv_heads, n_q, n_k, d_k, d_v, mask, bias,
                                   scale, flags, scores, scaled, weights, scratch, scratch_n);
  if (heads % kv_heads != 0) {
    if (s1 != ATTN_ERR_HEADS || s2 != ATTN_ERR_HEADS || out[0] != 12345.0f) FAIL("bad heads accepted: %d %d", s1, s2);
  } else {
    if (s1 != ATTN_OK || s2 != ATTN_OK) FAIL("status %d %d", s1, s2);
    float vmax = 0.0f;
    for (size_t i = 0; i < nk_all * d_v; i++) vmax = fmaxf(vmax, fabsf(v[i]));
    for (size_t row = 0; row < nq_all; row++) {
      const size_t i = row % (size_t)n_q;
      int any = 0;
      for (int32_t j = 0; j < n_k; j++) {
        /* As attention.h defines it: -Infinity bias masks only when
         * scaled + bias is -Infinity (Infinity + -Infinity is NaN: allowed). */
        const float z = bias ? scaled[row * n_k + j] + bias[i * n_k + j] : 0.0f;
        const int allowed = !(flags && (size_t)j > i) && !(mask && !mask[i * n_k + j]) &&
                            !(isinf(z) && z < 0);
        any |= allowed;
      }
      for (int32_t c = 0; c < d_v; c++) {
        const float a = out[row * d_v + c], b = out2[row * d_v + c];
        if (!any && (a != 0.0f || b != 0.0f)) FAIL("fully masked row %zu: %g %g", row, a, b);
        if (moderate && (!isfinite(a) || !isfinite(b))) FAIL("non-finite output row %zu: %g %g", row, a, b);
        if (moderate && fabsf(a - b) > 1e-4f * (vmax > 1.0f ? vmax : 1.0f)) FAIL("fused %g vs steps %g, row %zu", a, b, row);
      }
      if (moderate) {
        double sum = 0;
        for (int32_t j = 0; j < n_k; j++) sum += weights[row * n_k + j];
        if (!(fabs(sum - 1.0) < 1e-4 || sum == 0.0)) FAIL("weights row %zu sums to %g", row, sum);
      }
    }
  }
  /* The small helpers on the same buffers. */
  if (attn_softmax(scores, scaled, (int32_t)nq_all, n_k) != ATTN_OK) FAIL("softmax status");
  if (attn_matmul(q, v, out, n_q, d_k < d_v ? d_k : d_v, 1) != ATTN_OK) FAIL("matmul status");
  free(q), free(k), free(v), free(mask), free(bias), free(scratch), free(out), free(out2);
  free(scores), free(scaled), free(weights);
  return 0;
}
