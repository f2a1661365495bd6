/* fuzz_attention.c - libFuzzer harness over the C API (scalar build), run
 * with AddressSanitizer and UndefinedBehaviorSanitizer:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     tests/fuzz/fuzz_attention.c c/attention.c c/attention-basics.c c/attention-kv.c \
 *     c/kernels/ *-scalar.c -lm -o fuzz_attention
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
 *     |V| value; every weight row sums to 1 or is all 0.
 * Then, reading the input from its end, the options of attn_options on the same
 * tensors: softcap, window, query offsets (scalar or per batch, now and then
 * far past the keys), ALiBi slopes (now and then +-3e38), kv_lengths,
 * a mask and a bias broadcast by strides with a short last dimension, and
 * the bshd layout by strides. There the step path's logits say which keys
 * are allowed: a row without one is 0 on both paths with lse -Infinity, and
 * with moderate inputs outputs and lse agree between the paths.
 * Last, attn_sdpa_backward on the first tensors: a status, fully masked
 * rows with dq 0, and with moderate inputs finite gradients that agree with
 * and without the forward's output.
 * Besides, on q and k as drawn, the decode kernel's scalar twins that
 * attn_sdpa does not call on the scalar build: float16 logits and rows
 * against the float32 logits of the same values, RoPE logits against a
 * turn and the float32 logits, the same bits (fuzz_twins). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "../../c/kernels/f32-rope.h"
#include "../../c/kernels/kernels.h"

#include "../../c/attention.h"

/* attn_sdpa_backward with its scratch allocated here. */
static attn_status backward(const attn_shape* sh, const float* q, const float* k, const float* v, const float* out,
                            const float* dout, const attn_options* o, const attn_grads* g) {
  const size_t n = attn_sdpa_backward_scratch_size(sh);
  float* scratch = malloc((n ? n : 1) * sizeof *scratch);
  const attn_status st = attn_sdpa_backward(sh, q, k, v, out, dout, NULL, o, g, scratch, n);
  free(scratch);
  return st;
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

/* A broadcast layout for a mask or bias of (batch, heads, n_q, n_k): one of
 * four patterns, with a last dimension of cols <= n_k; returns the elements
 * the data must hold. */
static size_t pick_bcast(reader* r, int32_t batch, int32_t heads, int32_t n_q, int32_t n_k, attn_bcast* m) {
  const uint8_t b = take(r);
  const size_t cols = (size_t)n_k - (size_t)(take(r) % 4 == 0 ? take(r) % n_k : 0);
  m->cols = (int32_t)cols;
  switch (b % 4) {
    case 0: m->batch_stride = 0, m->head_stride = 0, m->row_stride = cols; return (size_t)n_q * cols;
    case 1: m->batch_stride = cols, m->head_stride = 0, m->row_stride = 0; return (size_t)batch * cols;
    case 2: m->batch_stride = 0, m->head_stride = (size_t)n_q * cols, m->row_stride = cols; return (size_t)heads * n_q * cols;
    default:
      m->row_stride = cols, m->head_stride = (size_t)n_q * cols, m->batch_stride = (size_t)heads * n_q * cols;
      return (size_t)batch * heads * n_q * cols;
  }
}

static void fuzz_options(reader* r, int32_t batch, int32_t heads, int32_t kv_heads, int32_t n_q, int32_t n_k,
                         int32_t d_k, int32_t d_v, const float* q, const float* k, const float* v, int moderate) {
  attn_shape sh = {.batch = batch, .heads = heads, .kv_heads = kv_heads, .n_q = n_q, .n_k = n_k, .d_k = d_k, .d_v = d_v};
  if (take(r) & 1) {  /* bshd: the same buffers read with other strides */
    sh.q = (attn_strides){(size_t)n_q * heads * d_k, (size_t)d_k, (size_t)heads * d_k};
    sh.k = (attn_strides){(size_t)n_k * kv_heads * d_k, (size_t)d_k, (size_t)kv_heads * d_k};
    sh.v = (attn_strides){(size_t)n_k * kv_heads * d_v, (size_t)d_v, (size_t)kv_heads * d_v};
    sh.out = (attn_strides){(size_t)n_q * heads * d_v, (size_t)d_v, (size_t)heads * d_v};
  }
  attn_options o = {0};
  o.scale = attn_default_scale(d_k);
  const uint8_t f = take(r);
  o.flags = (f & 1 ? ATTN_CAUSAL : 0) | (f & 2 ? ATTN_WINDOW : 0);
  o.window_left = (int32_t)(take(r) % 12) - 1;
  o.window_right = (int32_t)(take(r) % 12) - 1;
  if (f & 4) o.softcap = (float)(1 + take(r)) / 16.0f;
  int32_t offsets[2], lengths[2];
  o.query_offset = (int32_t)(take(r) % 80) - 10;
  if (f & 8) {
    for (int32_t b = 0; b < batch; b++) offsets[b] = (int32_t)(take(r) % 80) - 10;
    o.query_offsets = offsets;
  }
  if (f & 16) {
    for (int32_t b = 0; b < batch; b++) lengths[b] = (int32_t)(take(r) % (n_k + 1));
    o.kv_lengths = lengths;
  }
  uint8_t* mask = NULL;
  float* bias = NULL;
  int bias_moderate = 1;
  if (f & 32) {
    const size_t n = pick_bcast(r, batch, heads, n_q, n_k, &o.mask_layout);
    mask = malloc(n);
    for (size_t i = 0; i < n; i++) mask[i] = take(r) % 4 != 0;
    o.mask = mask;
  }
  if (f & 64) {
    const size_t n = pick_bcast(r, batch, heads, n_q, n_k, &o.bias_layout);
    bias = malloc(n * sizeof *bias);
    fill(r, bias, n, &bias_moderate);
    for (size_t i = 0; i < n; i++) {
      if (!(isinf(bias[i]) && bias[i] < 0) && !(fabsf(bias[i]) <= 8.0f)) moderate = 0;
    }
    o.bias = bias;
  }
  /* Positions and sinks: RoPE (any even dims up to d_k, either pairing),
   * a sink per head, ALiBi slopes; finite values in the options so the
   * call is valid (invalid ones are the unit tests' business). */
  const uint8_t g = take(r);
  float sinks[9], slopes[9];
  if ((g & 1) && d_k >= 2) {
    o.rope_dims = 2 * (1 + take(r) % (d_k / 2));
    o.rope_theta = g & 2 ? 10000.0f : 1.0f + (float)take(r);
    o.rope_flags = g & 4 ? ATTN_ROPE_INTERLEAVED : 0;
  }
  if (g & 8) {
    for (int32_t h = 0; h < heads; h++) sinks[h] = ((float)take(r) - 128.0f) / 16.0f;
    o.sinks = sinks;
  }
  if (g & 16) {
    /* Now and then the largest slopes of either sign: far keys weigh 0. */
    for (int32_t h = 0; h < heads; h++) {
      const uint8_t x = take(r);
      slopes[h] = g & 32 ? (x & 1 ? 3e38f : -3e38f) : (float)x / 64.0f;
    }
    o.alibi = slopes;
  }
  /* Query offsets far past the keys, where p - j leaves float32's exact
   * integers (ALiBi is measured from each row's reference key there). */
  if (g & 64) o.query_offset = g & 128 ? INT32_MAX - 80 - (int32_t)(take(r) % 8) : (1 << 24) + (int32_t)take(r);
  const size_t rows = (size_t)batch * heads * n_q, out_n = rows * d_v, steps_n = rows * n_k;
  const size_t scratch_n = attn_sdpa_scratch_size_with(&sh, &o);
  if (scratch_n == 0) FAIL("options: no scratch size for valid options");
  float* scratch = malloc(scratch_n * sizeof *scratch);
  float* out = malloc(out_n * sizeof *out);
  float* out2 = malloc(out_n * sizeof *out2);
  float* lse = malloc(rows * sizeof *lse);
  float* lse2 = malloc(rows * sizeof *lse2);
  float* scores = malloc(steps_n * sizeof *scores);
  float* scaled = malloc(steps_n * sizeof *scaled);
  float* logits = malloc(steps_n * sizeof *logits);
  float* weights = malloc(steps_n * sizeof *weights);
  const attn_steps fused = {NULL, NULL, NULL, NULL, lse};
  const attn_steps steps = {scores, scaled, logits, weights, lse2};
  const attn_status s1 = attn_sdpa(&sh, q, k, v, out, &o, &fused, scratch, scratch_n);
  const attn_status s2 = attn_sdpa(&sh, q, k, v, out2, &o, &steps, scratch, scratch_n);
  if (s1 != ATTN_OK || s2 != ATTN_OK) FAIL("options: status %d %d", s1, s2);
  float vmax = 1.0f;
  for (size_t i = 0; i < (size_t)batch * kv_heads * n_k * d_v; i++) vmax = fmaxf(vmax, fabsf(v[i]));
  /* Row (b, h, i) of the step matrices and lse; the output row by strides. */
  for (size_t row = 0; row < rows; row++) {
    const size_t b = row / ((size_t)heads * n_q), h = row / (size_t)n_q % heads, i = row % (size_t)n_q;
    const size_t at = b * (sh.out.batch_stride ? sh.out.batch_stride : (size_t)heads * n_q * d_v) +
                      h * (sh.out.head_stride ? sh.out.head_stride : (size_t)n_q * d_v) +
                      i * (sh.out.row_stride ? sh.out.row_stride : (size_t)d_v);
    int any = 0;
    for (int32_t j = 0; j < n_k; j++) any |= !(isinf(logits[row * n_k + j]) && logits[row * n_k + j] < 0);
    /* The step logits add ALiBi's row constant slope * (r - p) back: with a
     * slope of 3e38 it leaves float32's range, every logit reads -Infinity
     * and says nothing of which keys are allowed (attention.h). */
    if (o.alibi != NULL && (g & 32) != 0) continue;
    /* A row with no allowed key: lse is -Infinity, or the sink with one. */
    const float empty = o.sinks ? o.sinks[h] : -INFINITY;
    if (!any && (lse[row] != empty || lse2[row] != empty)) FAIL("options: row %zu has no key but lse %g %g", row, lse[row], lse2[row]);
    if (moderate) {
      double sum = 0;
      for (int32_t j = 0; j < n_k; j++) sum += weights[row * n_k + j];
      /* Weights sum to 1, or less when a sink takes its share; 0 with no key. */
      if (!any ? sum != 0.0 : o.sinks ? !(sum <= 1.0 + 1e-4 && sum >= 0.0) : !(fabs(sum - 1.0) < 1e-4)) {
        FAIL("options: weights row %zu sum to %g", row, sum);
      }
    }
    for (int32_t c = 0; c < d_v; c++) {
      const float a = out[at + c], bb = out2[at + c];
      if (!any && (a != 0.0f || bb != 0.0f)) FAIL("options: fully masked row %zu: %g %g", row, a, bb);
      if (moderate && (!isfinite(a) || !isfinite(bb))) FAIL("options: non-finite output row %zu: %g %g", row, a, bb);
      if (moderate && fabsf(a - bb) > 1e-4f * vmax) FAIL("options: fused %g vs steps %g, row %zu", a, bb, row);
    }
    /* (Equal covers an lse past float32's range: a slope of 3e38 far from the keys.) */
    if (moderate && any && lse[row] != lse2[row] && !(fabsf(lse[row] - lse2[row]) <= 1e-4f * fmaxf(1.0f, fabsf(lse2[row])))) {
      FAIL("options: lse fused %g vs steps %g, row %zu", lse[row], lse2[row], row);
    }
  }
  /* With RoPE: keys turned beforehand by attn_rope and ATTN_ROPE_QUERIES
   * (what a KV cache does) give the same bits as turning both in the call. */
  if (o.rope_dims > 0 && sh.k.head_stride == 0) {
    const size_t k_n = (size_t)batch * kv_heads * n_k * d_k;
    float* turned = malloc(k_n * sizeof *turned);
    float* table = malloc((size_t)n_k * o.rope_dims * sizeof *table);
    memcpy(turned, k, k_n * sizeof *turned);
    const attn_status sr = attn_rope(turned, batch * kv_heads, (size_t)n_k * d_k, n_k, (size_t)d_k, d_k, 0, o.rope_theta,
                                     o.rope_dims, o.rope_flags, table, (size_t)n_k * o.rope_dims);
    if (sr != ATTN_OK) FAIL("attn_rope status %d", sr);
    attn_options oq = o;
    oq.rope_flags |= ATTN_ROPE_QUERIES;
    const attn_status s3 = attn_sdpa(&sh, q, turned, v, out2, &oq, NULL, scratch, scratch_n);
    if (s3 != ATTN_OK) FAIL("options: queries-only RoPE status %d", s3);
    for (size_t i = 0; i < out_n; i++) {
      if (memcmp(&out[i], &out2[i], sizeof(float)) != 0 && !(isnan(out[i]) && isnan(out2[i]))) {
        FAIL("options: RoPE in the call %g, keys turned before %g, at %zu", out[i], out2[i], i);
      }
    }
    free(turned), free(table);
  }
  free(mask), free(bias), free(scratch), free(out), free(out2), free(lse), free(lse2);
  free(scores), free(scaled), free(logits), free(weights);
}

/* The twins on q (4 rows cycled from n_rows) and k (n_k, d_k): float16
 * logits equal the float32 logits of the same values where every key is
 * finite (each product the same real number), the bits form of a row is
 * 2^-112 of its values, and RoPE's logits are those of the turned keys. */
static void fuzz_twins(const float* q, size_t n_rows, const float* k, size_t n_k, size_t d_k) {
  const size_t d8 = d_k / 8 * 8, n = n_k < 16 ? n_k : 16;
  if (d8 == 0) return;
  uint16_t* k16 = malloc(n * d8 * sizeof *k16);    /* (n, d8) */
  float* kv = malloc(n * d8 * sizeof *kv);         /* (n, d8) values, then turned keys */
  float* bits = malloc(n * d8 * sizeof *bits);     /* (n, d8) */
  float* q_up = malloc(4 * d8 * sizeof *q_up);     /* (4, d8) */
  float* z = malloc(8 * n * sizeof *z);            /* (4, n) twice */
  float* table = malloc(n * d8 * sizeof *table);   /* (n, d8) cos and sin */
  for (size_t j = 0; j < n; j++)
    for (size_t c = 0; c < d8; c++) k16[j * d8 + c] = attn__f16_bits(k[j * d_k + c]);
  const attn__kv_rows rows = {.dtype = ATTN__KV_F16, .data = k16, .stride = d8};
  attn__f16_f32_kv_load_scalar(&rows, 0, n, d8, kv, d8);
  attn__f16_f32_kv_load_bits_scalar(&rows, 0, n, d8, bits, d8);
  int finite = 1, small = 1;
  for (size_t x = 0; x < n * d8; x++) {
    finite = finite && isfinite(kv[x]);
    if (isfinite(kv[x]) && bits[x] * 0x1p112f != kv[x]) abort();
  }
  const float* rows4[4];
  for (size_t t = 0; t < 4; t++) {
    rows4[t] = q + (t % n_rows) * d_k;
    for (size_t c = 0; c < d8; c++) {
      small = small && fabsf(rows4[t][c]) < 0x1p16f;
      q_up[t * d8 + c] = rows4[t][c] * 0x1p112f;
    }
  }
  const float scale[4] = {1.0f, 0.5f, 0.25f, 2.0f};
  float* const z4[4] = {z, z + n, z + 2 * n, z + 3 * n};
  if (attn__f16_f32_logits4_scalar(q_up, k16, d8, 0, n, d8, scale, z4) != finite) abort();
  for (size_t t = 0; small && finite && t < 4; t++) {
    attn__f32_logits_scalar(rows4[t], kv, d8, 0, n, d8, scale[t], z + 4 * n);
    if (memcmp(z4[t], z + 4 * n, n * sizeof *z) != 0) abort();
  }
  /* RoPE over all of d8 (dims / 2 a multiple of 4). */
  attn__rope_table(10000.0, d8, 7, n, table);
  attn__f32_rope_logits4_scalar(rows4, scale, 4, k, d_k, n, d8, table, d8, z, n);
  attn__f32_rope_scalar(k, d_k, n, d8, table, d8, 0, kv, d8);
  for (size_t t = 0; t < 4; t++) {
    attn__f32_logits_scalar(rows4[t], kv, d8, 0, n, d8, scale[t], z + 4 * n);
    for (size_t j = 0; j < n; j++) {
      const float a = z[t * n + j], b = z[4 * n + j];
      if (!(a == b || (a != a && b != b))) abort();
    }
  }
  free(k16), free(kv), free(bits), free(q_up), free(z), free(table);
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
  fuzz_twins(q, nq_all, k, (size_t)n_k, (size_t)d_k);
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
  /* Contiguous tensors; the (n_q, n_k) mask and bias broadcast over batch
   * and heads (strides 0). */
  const attn_shape sh = {.batch = batch, .heads = heads, .kv_heads = kv_heads, .n_q = n_q, .n_k = n_k, .d_k = d_k, .d_v = d_v};
  const attn_options options = {.scale = scale, .flags = flags,
                                .mask = mask, .mask_layout = {.row_stride = (size_t)n_k},
                                .bias = bias, .bias_layout = {.row_stride = (size_t)n_k}};
  const size_t scratch_n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc((scratch_n ? scratch_n : 1) * sizeof *scratch);
  const size_t out_n = nq_all * d_v, steps_n = nq_all * n_k;
  float* out = malloc(out_n * sizeof *out);
  float* out2 = malloc(out_n * sizeof *out2);
  float* scores = malloc(steps_n * sizeof *scores);
  float* scaled = malloc(steps_n * sizeof *scaled);
  float* weights = malloc(steps_n * sizeof *weights);
  for (size_t i = 0; i < out_n; i++) out[i] = out2[i] = 12345.0f;

  const attn_steps steps = {.scores = scores, .scaled = scaled, .weights = weights};
  const attn_status s1 = attn_sdpa(&sh, q, k, v, out, &options, NULL, scratch, scratch_n);
  const attn_status s2 = attn_sdpa(&sh, q, k, v, out2, &options, &steps, scratch, scratch_n);
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
  if (heads % kv_heads == 0) {
    /* The options read the input from its end, so short inputs (which the
     * tensors above use up) reach them too. */
    uint8_t* reversed = malloc(size ? size : 1);
    for (size_t i = 0; i < size; i++) reversed[i] = data[size - 1 - i];
    reader back = {reversed, size};
    fuzz_options(&back, batch, heads, kv_heads, n_q, n_k, d_k, d_v, q, k, v, moderate);
    free(reversed);
  }
  /* The backward pass on the same inputs, with and without the forward's
   * output: a status, never a crash; bad heads write nothing; a fully
   * masked row has dq 0; moderate inputs give finite gradients that agree
   * between the two ways of getting delta. */
  {
    int dout_moderate = 1;
    float* dout = malloc(out_n * sizeof *dout);
    fill(&r, dout, out_n, &dout_moderate);
    float* g1 = malloc((nq_all * d_k + nk_all * (d_k + d_v) + (size_t)n_q * n_k) * sizeof *g1);
    float* g2 = malloc((nq_all * d_k + nk_all * (d_k + d_v) + (size_t)n_q * n_k) * sizeof *g2);
    const size_t g_n = nq_all * d_k + nk_all * (d_k + d_v);
    g1[0] = g2[0] = 12345.0f;
    float* dbias1 = use_bias ? g1 + g_n : NULL;
    const attn_grads grads1 = {.dq = g1, .dk = g1 + nq_all * d_k, .dv = g1 + nq_all * d_k + nk_all * d_k, .dbias = dbias1};
    const attn_grads grads2 = {.dq = g2, .dk = g2 + nq_all * d_k, .dv = g2 + nq_all * d_k + nk_all * d_k};
    const attn_status b1 = backward(&sh, q, k, v, heads % kv_heads == 0 ? out : NULL, dout, &options, &grads1);
    const attn_status b2 = backward(&sh, q, k, v, NULL, dout, &options, &grads2);
    if (heads % kv_heads != 0) {
      if (b1 != ATTN_ERR_HEADS || b2 != ATTN_ERR_HEADS || g1[0] != 12345.0f) FAIL("backward: bad heads accepted");
    } else {
      if (b1 != ATTN_OK || b2 != ATTN_OK) FAIL("backward status %d %d", b1, b2);
      for (size_t row = 0; row < nq_all; row++) {
        const size_t i = row % (size_t)n_q;
        int any = 0;
        for (int32_t j = 0; j < n_k; j++) {
          const float z = bias ? scaled[row * n_k + j] + bias[i * n_k + j] : 0.0f;
          any |= !(flags && (size_t)j > i) && !(mask && !mask[i * n_k + j]) && !(isinf(z) && z < 0);
        }
        for (int32_t c = 0; c < d_k && !any; c++) {
          if (g1[row * d_k + c] != 0.0f || g2[row * d_k + c] != 0.0f) FAIL("backward: fully masked row %zu has dq", row);
        }
      }
      if (moderate && dout_moderate) {
        float gmax = 1.0f;
        for (size_t i = 0; i < g_n; i++) {
          if (!isfinite(g1[i]) || !isfinite(g2[i])) FAIL("backward: non-finite gradient %zu: %g %g", i, g1[i], g2[i]);
          gmax = fmaxf(gmax, fabsf(g1[i]));
        }
        /* dq and dk are sums of P (dout . v - D) terms: when those cancel
         * (equal values everywhere), what is left is rounding of D, whose
         * size follows the terms, not the gradient. So the bound is
         * relative to the larger of the two. */
        float qk = 0.0f, dmax = 0.0f, vabs = 0.0f;
        for (size_t i = 0; i < nq_all * d_k; i++) qk = fmaxf(qk, fabsf(q[i]));
        for (size_t i = 0; i < nk_all * d_k; i++) qk = fmaxf(qk, fabsf(k[i]));
        for (size_t i = 0; i < nk_all * d_v; i++) vabs = fmaxf(vabs, fabsf(v[i]));
        for (size_t i = 0; i < out_n; i++) dmax = fmaxf(dmax, fabsf(dout[i]));
        const float terms = fabsf(scale) * (float)d_v * dmax * vabs * qk;
        for (size_t i = 0; i < g_n; i++) {
          if (fabsf(g1[i] - g2[i]) > 1e-3f * gmax + 1e-4f * terms) FAIL("backward: with output %g, without %g at %zu", g1[i], g2[i], i);
        }
      }
    }
    free(dout), free(g1), free(g2);
  }
  /* The small helpers on the same buffers. */
  if (attn_softmax(scores, scaled, (int32_t)nq_all, n_k) != ATTN_OK) FAIL("softmax status");
  if (attn_matmul(q, v, out, n_q, d_k < d_v ? d_k : d_v, 1) != ATTN_OK) FAIL("matmul status");
  free(q), free(k), free(v), free(mask), free(bias), free(scratch), free(out), free(out2);
  free(scores), free(scaled), free(weights);
  return 0;
}
