/* test_attention.c - native tests of the scalar C core, run under
 * AddressSanitizer and UndefinedBehaviorSanitizer by tests/run.js.
 * References are float64 loops written here from the definition. Prints one
 * line per check and a closing "N passed, N failed". */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../c/attention.h"
#include "../../c/kernels/f32-exp.h"
#include "../../c/kernels/f32-rope.h"
#include "../../c/kernels/f32-tanh.h"

#include "check.h"
#include "twins.h"

static float* fill(size_t n, float amp) {
  float* x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = uniform() * amp;
  return x;
}

typedef struct {
  int batch, heads, kv_heads, n_q, n_k, d_k, d_v, causal, use_mask, use_bias;
  float amp;
} shape;

/* float64 reference of attention.h's definition. */
static void reference(const shape* s, const float* q, const float* k, const float* v,
                      const uint8_t* mask, const float* bias, float scale, double* out) {
  const int group = s->heads / s->kv_heads;
  double* z = malloc((size_t)s->n_k * sizeof *z);
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads; h++) {
      const int kvh = b * s->kv_heads + h / group, qh = b * s->heads + h;
      for (int i = 0; i < s->n_q; i++) {
        double m = -INFINITY;
        for (int j = 0; j < s->n_k; j++) {
          double dot = 0;
          for (int p = 0; p < s->d_k; p++)
            dot += (double)q[((size_t)qh * s->n_q + i) * s->d_k + p] *
                   k[((size_t)kvh * s->n_k + j) * s->d_k + p];
          double zj = dot * scale + (bias ? bias[i * s->n_k + j] : 0.0);
          if ((s->causal && j > i) || (mask && !mask[i * s->n_k + j])) zj = -INFINITY;
          z[j] = zj;
          if (zj > m) m = zj;
        }
        double sum = 0;
        for (int j = 0; j < s->n_k; j++) {
          z[j] = m == -INFINITY ? 0.0 : exp(z[j] - m);
          sum += z[j];
        }
        for (int c = 0; c < s->d_v; c++) {
          double o = 0;
          for (int j = 0; j < s->n_k; j++) o += z[j] * v[((size_t)kvh * s->n_k + j) * s->d_v + c];
          out[((size_t)qh * s->n_q + i) * s->d_v + c] = sum == 0 ? 0.0 : o / sum;
        }
      }
    }
  free(z);
}

/* Runs both paths against the reference; error relative to max |ref|. */
static void run_case(const shape* s) {
  const size_t nq = (size_t)s->batch * s->heads * s->n_q, nk = (size_t)s->batch * s->kv_heads * s->n_k;
  float* q = fill(nq * s->d_k, s->amp);
  float* k = fill(nk * s->d_k, s->amp);
  float* v = fill(nk * s->d_v, 1.0f);
  uint8_t* mask = NULL;
  float* bias = NULL;
  if (s->use_mask) {
    mask = malloc((size_t)s->n_q * s->n_k);
    for (int i = 0; i < s->n_q * s->n_k; i++) mask[i] = uniform() > -0.4f;
    for (int j = 0; j < s->n_k; j++) mask[j] = 0; /* row 0 fully masked */
  }
  if (s->use_bias) {
    bias = fill((size_t)s->n_q * s->n_k, 2.0f);
    for (int i = 0; i < s->n_q * s->n_k; i += 5) bias[i] = -INFINITY;
  }
  const float scale = attn_default_scale(s->d_k);
  double* ref = malloc(nq * s->d_v * sizeof *ref);
  reference(s, q, k, v, mask, bias, scale, ref);
  /* Contiguous (batch, heads, n, d) tensors; the (n_q, n_k) mask and bias
   * broadcast over batch and heads (strides 0). */
  const attn_shape sh = {.batch = s->batch, .heads = s->heads, .kv_heads = s->kv_heads, .n_q = s->n_q,
                         .n_k = s->n_k, .d_k = s->d_k, .d_v = s->d_v};
  const attn_options op = {.scale = scale, .flags = s->causal ? ATTN_CAUSAL : 0u,
                           .mask = mask, .mask_layout = {.row_stride = (size_t)s->n_k},
                           .bias = bias, .bias_layout = {.row_stride = (size_t)s->n_k}};
  const size_t scratch_n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc(scratch_n * sizeof *scratch);
  float* out = malloc(nq * s->d_v * sizeof *out);
  float* out2 = malloc(nq * s->d_v * sizeof *out2);
  const size_t steps_n = nq * s->n_k;
  float* scores = malloc(steps_n * sizeof *scores);
  float* scaled = malloc(steps_n * sizeof *scaled);
  float* weights = malloc(steps_n * sizeof *weights);
  const attn_steps steps = {.scores = scores, .scaled = scaled, .weights = weights};
  int st1 = attn_sdpa(&sh, q, k, v, out, &op, NULL, scratch, scratch_n);
  int st2 = attn_sdpa(&sh, q, k, v, out2, &op, &steps, scratch, scratch_n);
  double maxref = 0, err1 = 0, err2 = 0;
  int finite = 1;
  for (size_t i = 0; i < nq * s->d_v; i++) {
    if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
    if (!isfinite(out[i]) || !isfinite(out2[i])) finite = 0;
    if (fabs(out[i] - ref[i]) > err1) err1 = fabs(out[i] - ref[i]);
    if (fabs(out2[i] - ref[i]) > err2) err2 = fabs(out2[i] - ref[i]);
  }
  if (maxref == 0) maxref = 1;
  char name[200];
  snprintf(name, sizeof name,
           "b%d h%d kv%d nq%d nk%d dk%d dv%d causal%d mask%d bias%d amp%g: fused err %.2e, steps err %.2e",
           s->batch, s->heads, s->kv_heads, s->n_q, s->n_k, s->d_k, s->d_v, s->causal, s->use_mask,
           s->use_bias, s->amp, err1 / maxref, err2 / maxref);
  check(st1 == ATTN_OK && st2 == ATTN_OK && finite && err1 <= 2e-5 * maxref && err2 <= 2e-5 * maxref,
        name);
  /* Weight rows sum to 1, or are all 0 when fully masked. */
  int rows_ok = 1;
  for (size_t r = 0; r < nq; r++) {
    double sum = 0;
    for (int j = 0; j < s->n_k; j++) sum += weights[r * s->n_k + j];
    if (!(fabs(sum - 1) < 1e-5 || sum == 0)) rows_ok = 0;
  }
  check(rows_ok, "weight rows sum to 1 or 0");
  if (mask) {
    int zero = 1;
    for (int hh = 0; hh < s->batch * s->heads; hh++)
      for (int c = 0; c < s->d_v; c++) zero &= out[(size_t)hh * s->n_q * s->d_v + c] == 0.0f;
    check(zero, "fully masked row gives output 0");
  }
  free(q), free(k), free(v), free(mask), free(bias), free(ref), free(scratch), free(out);
  free(out2), free(scores), free(scaled), free(weights);
}

static void test_exp(void) {
  double max_rel = 0;
  for (float x = -87.0f; x <= 0.0f; x = nextafterf(x, 1.0f) + (x < -1 ? 1e-4f * -x : 1e-5f)) {
    const double want = exp((double)x);
    const double rel = fabs(attn__expf_nonpos(x) - want) / want;
    if (rel > max_rel) max_rel = rel;
  }
  printf("exp: max relative error on [-87, 0] = %.3e\n", max_rel);
  check(max_rel < 2.5e-7, "exp error within 2.5e-7 (about 2 ulp)");
  check(attn__expf_nonpos(0.0f) == 1.0f, "exp(0) is exactly 1");
  check(attn__expf_nonpos(-INFINITY) == 0.0f, "exp(-inf) is 0");
  check(attn__expf_nonpos(-100.0f) == 0.0f, "exp below range is 0");
  check(isnan(attn__expf_nonpos(NAN)), "exp(NaN) is NaN");
}

/* tanh of softcap: error against double tanh, absolute and in ulp of the
 * result, over [-20, 20] (beyond 9, tanh is 1 in float). */
static void test_tanh(void) {
  double max_abs = 0, max_ulp = 0;
  for (float x = -20.0f; x <= 20.0f; x = nextafterf(x, 30.0f) + (fabsf(x) > 1 ? 1e-5f * fabsf(x) : 3e-7f)) {
    const double want = tanh((double)x), got = attn__tanhf(x);
    const double err = fabs(got - want);
    const double ulp = err / (want == 0 ? FLT_TRUE_MIN : ldexp(1.0, ilogb(want) - 23));
    if (err > max_abs) max_abs = err;
    if (ulp > max_ulp) max_ulp = ulp;
  }
  for (float x = 1e-30f; x < 1e-3f; x *= 1.37f) {
    const double want = tanh((double)x), ulp = fabs(attn__tanhf(x) - want) / ldexp(1.0, ilogb(want) - 23);
    if (ulp > max_ulp) max_ulp = ulp;
  }
  printf("tanh: max error on [-20, 20] = %.3e absolute, %.2f ulp\n", max_abs, max_ulp);
  check(max_abs < 2e-7 && max_ulp < 16.0, "tanh error within 2e-7 absolute and 16 ulp");
  check(attn__tanhf(0.0f) == 0.0f && attn__tanhf(-0.0f) == 0.0f, "tanh(0) is 0");
  check(attn__tanhf(INFINITY) == 1.0f && attn__tanhf(-INFINITY) == -1.0f, "tanh(+-inf) is +-1");
  check(attn__tanhf(50.0f) == 1.0f, "tanh(50) is 1");
  check(isnan(attn__tanhf(NAN)), "tanh(NaN) is NaN");
  check(attn__tanhf(-0.3f) == -attn__tanhf(0.3f), "tanh is odd");
}

/* RoPE's float64 log, exp, sin and cos (c/kernels/f32-rope.h) against the
 * C library: relative error for log and exp over RoPE's arguments (theta
 * from 1 to 3.4e38, exponents down to -88.7), absolute for sin and cos over
 * angles up to 2^32 (positions times a frequency of at most 1). */
static void test_rope_math(void) {
  double log_err = 0, exp_err = 0, trig_err = 0;
  for (double x = 1.0; x < 3.4e38; x *= 1.0137) {
    log_err = fmax(log_err, fabs(attn__log_f64(x) - log(x)) / fmax(fabs(log(x)), 1e-300));
  }
  for (double x = -88.7; x < 88.7; x += 0.00731) exp_err = fmax(exp_err, fabs(attn__exp_f64(x) - exp(x)) / exp(x));
  for (double a = -5.0; a < 5.0; a += 0.000317) {
    double s, c;
    attn__sincos_f64(a, &s, &c);
    trig_err = fmax(trig_err, fmax(fabs(s - sin(a)), fabs(c - cos(a))));
  }
  for (double a = 1.0; a < 4294967296.0; a = a * 1.00731 + 0.37) {
    double s, c;
    attn__sincos_f64(a, &s, &c);
    trig_err = fmax(trig_err, fmax(fabs(s - sin(a)), fabs(c - cos(a))));
  }
  printf("rope math: log %.2e, exp %.2e relative; sin and cos %.2e absolute\n", log_err, exp_err, trig_err);
  check(log_err < 1e-15 && exp_err < 1e-15 && trig_err < 1e-15, "RoPE's float64 log, exp, sin and cos within 1e-15 of the C library");
}

/* The statuses of the options of attn_options. */
static void test_option_errors(void) {
  float buf[64] = {0};
  const attn_shape sh = {.batch = 2, .heads = 1, .kv_heads = 1, .n_q = 2, .n_k = 2, .d_k = 2, .d_v = 2};
  const size_t n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc(n * sizeof *scratch);
  attn_options o = {0};
  o.scale = 1.0f;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_OK, "zeroed options are valid");
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, NULL, NULL, scratch, n) == ATTN_ERR_NULL, "NULL options");
  o.softcap = -1.0f;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_ERR_SOFTCAP, "negative softcap");
  o.softcap = NAN;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_ERR_SOFTCAP, "NaN softcap");
  o.softcap = 0.0f;
  o.flags = ATTN_WINDOW, o.window_left = -2;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_ERR_WINDOW, "window left -2");
  o.flags = 0;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_OK, "window ignored without ATTN_WINDOW");
  const int32_t lengths[2] = {2, 3};
  o.kv_lengths = lengths;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_ERR_LENGTHS, "kv_lengths past n_k");
  o.kv_lengths = NULL;
  const uint8_t mask[4] = {1, 1, 1, 1};
  o.mask = mask, o.mask_layout.cols = 3;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, NULL, scratch, n) == ATTN_ERR_MASK, "mask cols past n_k");
  o.mask = NULL;
  attn_steps st = {0};
  st.logits = buf;
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &o, &st, scratch, n) == ATTN_ERR_STEPS, "logits without the step path");
  check(strcmp(attn_status_string(ATTN_ERR_WINDOW), "window sides must be -1 (unbounded) or at least 0") == 0, "window status string");
  free(scratch);
}

static void test_errors(void) {
  float buf[64] = {0};
  const attn_shape sh = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = 2, .n_k = 2, .d_k = 2, .d_v = 2};
  const attn_options op = {.scale = 1.0f};
  const size_t n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc(n * sizeof *scratch);
  check(attn_sdpa(&sh, NULL, buf, buf, buf + 32, &op, NULL, scratch, n) == ATTN_ERR_NULL, "NULL q");
  attn_shape no_rows = sh;
  no_rows.n_q = 0;
  check(attn_sdpa(&no_rows, buf, buf, buf, buf + 32, &op, NULL, scratch, n) == ATTN_ERR_SHAPE, "n_q 0");
  attn_shape heads = sh;
  heads.heads = 3, heads.kv_heads = 2;
  check(attn_sdpa(&heads, buf, buf, buf, buf + 32, &op, NULL, scratch, n) == ATTN_ERR_HEADS, "heads 3 kv 2");
  const attn_options nan_scale = {.scale = NAN};
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &nan_scale, NULL, scratch, n) == ATTN_ERR_SCALE, "NaN scale");
  const attn_options bad_flags = {.scale = 1.0f, .flags = 6};
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &bad_flags, NULL, scratch, n) == ATTN_ERR_FLAGS, "bad flags");
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &op, NULL, scratch, attn_sdpa_call_scratch_size(&sh, ATTN_KV_FLOAT32, 0) - 1) == ATTN_ERR_SCRATCH, "small scratch");
  const attn_steps partial = {.scores = buf};
  check(attn_sdpa(&sh, buf, buf, buf, buf + 32, &op, &partial, scratch, n) == ATTN_ERR_STEPS, "partial steps");
  const attn_shape huge = {.batch = 65536, .heads = 65536, .kv_heads = 65536, .n_q = 65536, .n_k = 65536,
                           .d_k = 65536, .d_v = 65536};
  check(attn_sdpa(&huge, buf, buf, buf, buf + 32, &op, NULL, scratch, n) == ATTN_ERR_OVERFLOW, "overflowing sizes");
  check(attn_sdpa_scratch_size(&no_rows) == 0, "scratch size of invalid sizes is 0");
  check(attn_matmul(buf, buf, buf + 32, 2, -1, 2) == ATTN_ERR_SHAPE, "matmul negative k");
  check(attn_softmax(buf, NULL, 2, 2) == ATTN_ERR_NULL, "softmax NULL y");
  check(strcmp(attn_status_string(ATTN_ERR_HEADS), "heads must be a multiple of kv_heads") == 0, "status string");
  check(strcmp(attn_status_string(99), "unknown status") == 0, "unknown status string");
  free(scratch);
}

static void test_softmax_edges(void) {
  float x[6] = {1e30f, -1e30f, 3e38f, -INFINITY, 0, 1};
  float y[6];
  attn_softmax(x, y, 1, 6);
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= isfinite(y[i]);
  check(ok && y[2] == 1.0f && y[3] == 0.0f, "huge logits give finite weights");
  float all_masked[3] = {-INFINITY, -INFINITY, -INFINITY};
  attn_softmax(all_masked, all_masked, 1, 3);
  check(all_masked[0] == 0 && all_masked[1] == 0 && all_masked[2] == 0, "all -inf row gives 0");
  float with_nan[4] = {1, NAN, 2, 3}, out_nan[4];
  attn_softmax(with_nan, out_nan, 1, 4);
  check(isnan(out_nan[0]) && isnan(out_nan[3]), "NaN poisons its row");
}

static void test_nan_row(void) {
  /* NaN in row 1 of Q poisons output row 1 only. */
  enum { NQ = 5, NK = 7, D = 3 };
  float* q = fill(NQ * D, 1), * k = fill(NK * D, 1), * v = fill(NK * D, 1);
  q[1 * D + 2] = NAN;
  const attn_shape sh = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = NQ, .n_k = NK, .d_k = D, .d_v = D};
  const attn_options op = {.scale = attn_default_scale(D)};
  const size_t n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc(n * sizeof *scratch);
  float out[NQ * D];
  attn_sdpa(&sh, q, k, v, out, &op, NULL, scratch, n);
  int ok = 1;
  for (int i = 0; i < NQ; i++)
    for (int c = 0; c < D; c++) ok &= (i == 1) == (isnan(out[i * D + c]) != 0);
  check(ok, "NaN in a query row poisons that output row only");
  free(q), free(k), free(v), free(scratch);
}

static void test_masked_row_with_infinite_values(void) {
  /* Row 0 fully masked, and V holds Infinity: both paths still give 0. */
  enum { N = 3, D = 2 };
  float q[N * D] = {1, 2, 3, 4, 5, 6}, k[N * D] = {1, 0, 0, 1, 1, 1};
  float v[N * D] = {INFINITY, 1, 2, NAN, 3, 4};
  uint8_t mask[N * N] = {0, 0, 0, 1, 1, 1, 1, 1, 1};
  const attn_shape sh = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = N, .n_k = N, .d_k = D, .d_v = D};
  const attn_options op = {.scale = 1.0f, .mask = mask, .mask_layout = {.row_stride = N}};
  const size_t n = attn_sdpa_scratch_size(&sh);
  float* scratch = malloc(n * sizeof *scratch);
  float out[N * D], out2[N * D], sc[N * N], sd[N * N], w[N * N];
  const attn_steps steps = {.scores = sc, .scaled = sd, .weights = w};
  attn_sdpa(&sh, q, k, v, out, &op, NULL, scratch, n);
  attn_sdpa(&sh, q, k, v, out2, &op, &steps, scratch, n);
  check(out[0] == 0 && out[1] == 0 && out2[0] == 0 && out2[1] == 0,
        "fully masked row is 0 on both paths even with Infinity/NaN in V");
  free(scratch);
}

static void test_masked_row_alibi_sink(void) {
  /* A row with no allowed key reports exactly its sink as lse, with ALiBi
   * too: far from the keys its row constant is ~1e8, and sink - c + c
   * would round the sink away. Row 1 is masked, rows 0 and 2 are not. */
  enum { N = 3, D = 2 };
  float q[N * D] = {1, 2, 3, 4, 5, 6}, k[N * D] = {1, 0, 0, 1, 1, 1}, v[N * D] = {1, 2, 3, 4, 5, 6};
  uint8_t mask[N * N] = {1, 1, 1, 0, 0, 0, 1, 1, 1};
  const float sinks[1] = {0.3f}, slopes[1] = {0.75f};
  const attn_shape sh = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = N, .n_k = N, .d_k = D, .d_v = D};
  const int32_t offsets[3] = {0, 5, (1 << 27) + 3};
  int ok = 1;
  for (int o = 0; o < 3; o++) {
    const attn_options op = {.scale = 1.0f, .mask = mask, .mask_layout = {.row_stride = N}, .sinks = sinks,
                             .alibi = slopes, .query_offset = offsets[o]};
    const size_t n = attn_sdpa_scratch_size_with(&sh, &op);
    float* scratch = malloc(n * sizeof *scratch);
    float out[N * D], out2[N * D], sc[N * N], sd[N * N], lg[N * N], w[N * N], lse[N], lse2[N];
    const attn_steps fused = {.lse = lse};
    const attn_steps steps = {.scores = sc, .scaled = sd, .logits = lg, .weights = w, .lse = lse2};
    ok &= attn_sdpa(&sh, q, k, v, out, &op, &fused, scratch, n) == ATTN_OK;
    ok &= attn_sdpa(&sh, q, k, v, out2, &op, &steps, scratch, n) == ATTN_OK;
    ok &= lse[1] == sinks[0] && lse2[1] == sinks[0] && out[2] == 0 && out[3] == 0 && out2[2] == 0 && out2[3] == 0;
    /* Far from the keys they weigh exp(-1e8): the sink alone, exactly. */
    ok &= o < 2 ? lse[0] > sinks[0] && lse[2] > sinks[0] : lse[0] == sinks[0] && lse[2] == sinks[0];
    free(scratch);
  }
  check(ok, "fully masked row with ALiBi and a sink: lse is the sink, far from the keys too");
}

/* ---- backward ---------------------------------------------------------- */

/* float64 loss L = sum(out * dout) of one head, with element probe_at of
 * q (probe_which 0), k (1) or v (2) moved by h, for central differences;
 * positions and softcap as attention.h's backward section. */
static double loss64(const float* q, const float* k, const float* v, const float* dout,
                     int probe_which, size_t probe_at, double h,
                     int n_q, int n_k, int d, const uint8_t* mask, float scale, float softcap,
                     int wl, int wr, int off, int causal) {
  double total = 0;
  double* z = malloc((size_t)n_k * sizeof *z);
  for (int i = 0; i < n_q; i++) {
    double m = -INFINITY;
    for (int j = 0; j < n_k; j++) {
      const int pos = i + off;
      int ok = (!causal || j <= pos) && (wr < 0 || j <= pos + wr) && (wl < 0 || j >= pos - wl) &&
               (mask == NULL || mask[i * n_k + j]);
      double s = 0;
      for (int c = 0; c < d; c++) {
        double qv = q[i * d + c], kv = k[j * d + c];
        if (probe_which == 0 && probe_at == (size_t)(i * d + c)) qv += h;
        if (probe_which == 1 && probe_at == (size_t)(j * d + c)) kv += h;
        s += qv * kv;
      }
      s *= scale;
      if (softcap > 0) s = softcap * tanh(s / softcap);
      z[j] = ok ? s : -INFINITY;
      if (z[j] > m) m = z[j];
    }
    if (m == -INFINITY) continue;
    double l = 0;
    for (int j = 0; j < n_k; j++) l += exp(z[j] - m);
    for (int c = 0; c < d; c++) {
      double o = 0;
      for (int j = 0; j < n_k; j++) {
        double vv = v[j * d + c];
        if (probe_which == 2 && probe_at == (size_t)(j * d + c)) vv += h;
        o += exp(z[j] - m) / l * vv;
      }
      total += o * dout[i * d + c];
    }
  }
  free(z);
  return total;
}

typedef struct {
  int n_q, n_k, d, causal, with_mask, wl, wr, off;
  float softcap;
} bwd_shape;

static void run_backward_case(const bwd_shape* s, const char* name) {
  const size_t nq = (size_t)s->n_q, nk = (size_t)s->n_k, d = (size_t)s->d;
  float* q = fill(nq * d, 1), * k = fill(nk * d, 1), * v = fill(nk * d, 1), * dout = fill(nq * d, 1);
  uint8_t* mask = NULL;
  if (s->with_mask) {
    mask = malloc(nq * nk);
    for (size_t i = 0; i < nq * nk; i++) mask[i] = uniform() > -0.5f;
    for (size_t j = 0; j < nk; j++) mask[j] = 0; /* row 0 fully masked */
  }
  const float scale = attn_default_scale(s->d);
  const attn_shape shape = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = s->n_q, .n_k = s->n_k, .d_k = s->d, .d_v = s->d};
  attn_options options = {.scale = scale, .flags = s->causal ? ATTN_CAUSAL : 0, .mask = mask,
                          .mask_layout = {0, 0, nk, 0}, .softcap = s->softcap, .query_offset = s->off};
  if (s->wl != -1 || s->wr != -1) {
    options.flags |= ATTN_WINDOW;
    options.window_left = s->wl;
    options.window_right = s->wr;
  }
  const size_t n = attn_sdpa_backward_scratch_size(&shape);
  float* scratch = malloc(n * sizeof *scratch);
  float* g[3] = {malloc(nq * d * sizeof(float)), malloc(nk * d * sizeof(float)), malloc(nk * d * sizeof(float))};
  const attn_grads grads = {g[0], g[1], g[2], NULL, NULL};
  const int st = attn_sdpa_backward(&shape, q, k, v, NULL, dout, NULL, &options, &grads, scratch, n);
  double worst = 0, largest = 0;
  const size_t sizes[3] = {nq * d, nk * d, nk * d};
  int finite = 1;
  for (int w = 0; w < 3; w++) {
    for (size_t at = 0; at < sizes[w]; at++) {
      const double h = 1e-4;
      const double up = loss64(q, k, v, dout, w, at, h, s->n_q, s->n_k, s->d, mask, scale, s->softcap, s->wl, s->wr, s->off, s->causal);
      const double down = loss64(q, k, v, dout, w, at, -h, s->n_q, s->n_k, s->d, mask, scale, s->softcap, s->wl, s->wr, s->off, s->causal);
      const double fd = (up - down) / (2 * h);
      finite &= isfinite(g[w][at]) != 0;
      if (fabs(fd) > largest) largest = fabs(fd);
      if (fabs(fd - g[w][at]) > worst) worst = fabs(fd - g[w][at]);
    }
  }
  /* Central differences of a float64 loss over float32 inputs: the step
   * 1e-4 leaves O(h^2) ~ 1e-8 relative error, below the float32 kernels'. */
  check(st == ATTN_OK && finite && worst <= 1e-4 * (largest > 1 ? largest : 1), name);
  if (mask != NULL) {
    int zero = 1;
    for (size_t c = 0; c < d; c++) zero &= g[0][c] == 0.0f;
    check(zero, "backward: a fully masked row has dq 0");
  }
  free(q), free(k), free(v), free(dout), free(mask), free(scratch), free(g[0]), free(g[1]), free(g[2]);
}

static void test_backward(void) {
  const bwd_shape cases[] = {
      {4, 5, 3, 0, 0, -1, -1, 0, 0.0f},   {5, 33, 4, 1, 0, -1, -1, 0, 0.0f},
      {7, 40, 5, 0, 1, -1, -1, 0, 0.0f},  {9, 9, 2, 0, 0, 2, 0, 0, 0.0f},
      {6, 12, 3, 1, 0, -1, 3, 4, 0.0f},   {5, 8, 3, 0, 0, -1, -1, 0, 1.5f},
  };
  const char* names[] = {"backward: plain vs float64 finite differences", "backward: causal, 33 keys",
                         "backward: mask with a fully masked row", "backward: window [2, 0]",
                         "backward: causal with queryOffset 4", "backward: softcap 1.5"};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) run_backward_case(&cases[c], names[c]);

  float buf[64] = {0};
  const attn_shape two = {.batch = 1, .heads = 1, .kv_heads = 1, .n_q = 2, .n_k = 2, .d_k = 2, .d_v = 2};
  const size_t n = attn_sdpa_backward_scratch_size(&two);
  float* scratch = malloc(n * sizeof *scratch);
  float* o = buf + 32;  /* the gradients: 7 until something writes them */
  for (int i = 32; i < 64; i++) buf[i] = 7;
  const attn_grads grads = {o, o + 8, o + 16, NULL, NULL};
  const attn_options plain = {.scale = 1};
  attn_options bad_softcap = plain, bad_window = plain, bad_flags = plain;
  bad_softcap.softcap = -1;
  bad_window.flags = ATTN_WINDOW, bad_window.window_left = -2;
  bad_flags.flags = 4;
  attn_shape bad_heads = two;
  bad_heads.heads = 3, bad_heads.kv_heads = 2;
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, NULL, NULL, &plain, &grads, scratch, n) == ATTN_ERR_NULL, "backward: NULL dout");
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, buf, NULL, &bad_softcap, &grads, scratch, n) == ATTN_ERR_SOFTCAP, "backward: negative softcap");
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, buf, NULL, &bad_window, &grads, scratch, n) == ATTN_ERR_WINDOW, "backward: window -2");
  check(attn_sdpa_backward(&bad_heads, buf, buf, buf, NULL, buf, NULL, &plain, &grads, scratch, n) == ATTN_ERR_HEADS, "backward: heads 3 kv 2");
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, buf, NULL, &bad_flags, &grads, scratch, n) == ATTN_ERR_FLAGS, "backward: bad flags");
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, buf, NULL, &plain, &grads, scratch, n - 1) == ATTN_ERR_SCRATCH, "backward: small scratch");
  check(o[0] == 7 && o[8] == 7 && o[16] == 7, "backward: nothing written when a check fails");
  check(attn_sdpa_backward(&two, buf, buf, buf, NULL, buf, NULL, &plain, &grads, scratch, n) == ATTN_OK && o[0] == 0,
        "backward: a valid call writes");
  attn_shape none = two;
  none.n_k = 0;
  check(attn_sdpa_backward_scratch_size(&none) == 0, "backward: scratch size of invalid sizes is 0");
  free(scratch);
}

/* A float16 cache with RoPE: only the queries turn (its keys were turned as
 * written), in exactly attn_sdpa_call_scratch_size_with floats (the decode
 * kernel takes 4 heads of 4 rows at once: q_rot holds 16 rows), the same
 * values as attn_sdpa over the float32 values it holds; keys to turn are
 * ATTN_ERR_ROPE. Then the path past ATTN_KV_DECODE_ROWS. */
static void test_compact_rope(void) {
  for (int32_t n_q = 4; n_q <= 20; n_q += 16) {
    const attn_shape sh = {.batch = 1, .heads = 8, .kv_heads = 2, .n_q = n_q, .n_k = 20, .d_k = 8, .d_v = 8};
    const size_t nq = (size_t)n_q, nk = 20, d = 8;
    float* q = malloc(8 * nq * d * sizeof(float));
    float* kv = malloc(2 * 2 * nk * d * sizeof(float));
    float* kv_f = malloc(2 * 2 * nk * d * sizeof(float));
    uint16_t* kv16 = malloc(2 * 2 * nk * d * sizeof(uint16_t));
    float* out = malloc(8 * nq * d * sizeof(float));
    float* ref = malloc(8 * nq * d * sizeof(float));
    uint32_t seed = 7;
    for (size_t i = 0; i < 8 * nq * d; i++) q[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < 4 * nk * d; i++) kv[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    check(attn_kv_write(ATTN_KV_FLOAT16, kv, (int32_t)(4 * nk), (int32_t)d, kv16, NULL) == ATTN_OK, "compact rope: write");
    check(attn_kv_read(ATTN_KV_FLOAT16, kv16, NULL, (int32_t)(4 * nk), (int32_t)d, kv_f) == ATTN_OK, "compact rope: read");
    const attn_kv c = {.dtype = ATTN_KV_FLOAT16, .k = kv16, .v = kv16 + 2 * nk * d};
    attn_options op = {.scale = 0.35f, .rope_theta = 10000.0f, .rope_dims = 8, .rope_flags = ATTN_ROPE_QUERIES};
    const size_t n = attn_sdpa_call_scratch_size_with(&sh, &op, ATTN_KV_FLOAT16, 0);
    check(n > attn_sdpa_call_scratch_size(&sh, ATTN_KV_FLOAT16, 0), "compact rope: scratch grows with rope");
    float* scratch = malloc(n * sizeof(float));
    check(attn_sdpa_kv(&sh, q, &c, out, &op, NULL, scratch, n - 1) == ATTN_ERR_SCRATCH, "compact rope: scratch - 1");
    check(attn_sdpa_kv(&sh, q, &c, out, &op, NULL, scratch, n) == ATTN_OK, "compact rope: ok");
    const size_t n32 = attn_sdpa_scratch_size_with(&sh, &op);
    float* scratch32 = malloc(n32 * sizeof(float));
    check(attn_sdpa(&sh, q, kv_f, kv_f + 2 * nk * d, ref, &op, NULL, scratch32, n32) == ATTN_OK, "compact rope: float32");
    float worst = 0.0f;
    for (size_t i = 0; i < 8 * nq * d; i++) worst = fmaxf(worst, fabsf(out[i] - ref[i]));
    check(worst < 1e-5f, "compact rope: as attn_sdpa over its values");
    op.rope_flags = 0;
    check(attn_sdpa_kv(&sh, q, &c, out, &op, NULL, scratch, n) == ATTN_ERR_ROPE, "compact rope: keys to turn");
    free(scratch32), free(scratch), free(ref), free(out), free(kv16), free(kv_f), free(kv), free(q);
  }
  check(ATTN_ERR_DTYPE == 16 && strcmp(attn_status_string(ATTN_ERR_DTYPE), "a KV cache's dtype must be float32, float16 or int8") == 0,
        "dtype status after rope's 13-15");
}

int main(void) {
  test_twins();
  test_backward();
  test_masked_row_with_infinite_values();
  test_masked_row_alibi_sink();
  test_exp();
  test_tanh();
  test_rope_math();
  test_option_errors();
  test_errors();
  test_compact_rope();
  test_softmax_edges();
  test_nan_row();
  const int sizes[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 129};
  for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
    shape s = {1, 1, 1, sizes[a], sizes[(a * 7 + 3) % 14], 1 + sizes[a] % 13, 1 + sizes[(a + 5) % 14] % 11, (int)(a % 2), (int)(a % 3 == 0), (int)(a % 4 == 1), 1.0f};
    run_case(&s);
  }
  shape gqa = {2, 6, 2, 9, 13, 8, 5, 1, 1, 1, 1.0f};
  run_case(&gqa);
  shape mqa = {1, 4, 1, 17, 70, 16, 16, 0, 0, 0, 1.0f};
  run_case(&mqa);
  shape huge = {1, 2, 2, 10, 12, 4, 4, 0, 0, 0, 1e6f};
  run_case(&huge);
  shape causal_wide = {1, 1, 1, 5, 130, 4, 4, 1, 0, 0, 1.0f};
  run_case(&causal_wide);
  shape blocks = {1, 2, 1, 7, 300, 5, 6, 0, 1, 1, 1.0f};  /* past one 256-key block */
  run_case(&blocks);
  shape causal_blocks = {1, 1, 1, 270, 600, 4, 3, 1, 0, 0, 1.0f};
  run_case(&causal_blocks);
  printf("native: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
