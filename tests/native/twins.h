/* twins.h - the scalar twins of the decode kernel's SIMD functions (the
 * logits families and the compact rows' loads) and of the block's kernels
 * (block.h), each against a float64 loop written here from the contract. Included once by
 * test_attention.c, after its check() and uniform(). */
#include "../../c/kernels/kernels.h"

/* |x - ref| <= tol * size, counted as one check. */
static int twin_close(double x, double ref, double tol, double size) { return fabs(x - ref) <= tol * size; }

static void test_twin_f32_logits(void) {
  enum { N = 13, D = 19 };
  float q[D], qb[D], k[N * D], z[N], zb[N];
  for (int p = 0; p < D; p++) q[p] = uniform(), qb[p] = uniform();
  for (int x = 0; x < N * D; x++) k[x] = uniform();
  attn__f32_logits_scalar(q, k, D, 2, N, D, 0.5f, z);
  attn__f32_logits2_scalar(q, qb, k, D, N, D, 0.5f, z, zb);
  int ok = 1;
  for (int j = 0; j < N; j++) {
    double dot = 0, dotb = 0, size = 0;
    for (int p = 0; p < D; p++) dot += (double)q[p] * k[j * D + p], dotb += (double)qb[p] * k[j * D + p], size += fabs(q[p] * k[j * D + p]) + fabs(qb[p] * k[j * D + p]);
    ok = ok && twin_close(z[j], 0.5 * dot, 1e-6, size) && twin_close(zb[j], 0.5 * dotb, 1e-6, size);
  }
  check(ok, "twin attn__f32_logits_scalar, attn__f32_logits2_scalar: (q . k_j) * scale");
}

static void test_twin_f16(void) {
  enum { N = 9, D = 16 };
  uint16_t k[N * D];
  float q[4 * D], q_up[4 * D], zs[4][N], kv[N * D], bits[N * D];
  for (int x = 0; x < N * D; x++) k[x] = attn__f16_bits(uniform() * 3.0f);
  k[5] = attn__f16_bits(3e-6f);  /* a subnormal half */
  for (int x = 0; x < 4 * D; x++) q[x] = uniform(), q_up[x] = q[x] * 0x1p112f;
  const float scale[4] = {1.0f, 0.5f, 0.25f, 2.0f};
  float* const z[4] = {zs[0], zs[1], zs[2], zs[3]};
  int ok = attn__f16_f32_logits4_scalar(q_up, k, D, 0, N, D, scale, z) == 1;
  for (int t = 0; t < 4; t++) {
    for (int j = 0; j < N; j++) {
      double dot = 0, size = 0;
      for (int p = 0; p < D; p++) {
        dot += (double)q[t * D + p] * attn__f16_value(k[j * D + p]);
        size += fabs(q[t * D + p] * attn__f16_value(k[j * D + p]));
      }
      ok = ok && twin_close(zs[t][j], scale[t] * dot, 1e-6, size);
    }
  }
  check(ok, "twin attn__f16_f32_logits4_scalar: float16 keys' logits, the 2^112 in q");
  const attn__kv_rows rows = {.dtype = ATTN__KV_F16, .data = k, .stride = D};
  attn__f16_f32_kv_load_scalar(&rows, 1, N - 1, D, kv, D);
  attn__f16_f32_kv_load_bits_scalar(&rows, 1, N - 1, D, bits, D);
  ok = 1;
  for (int x = 0; x < (N - 1) * D; x++) ok = ok && kv[x] == attn__f16_value(k[D + x]) && bits[x] * 0x1p112f == kv[x];
  check(ok, "twin attn__f16_f32_kv_load(_bits)_scalar: each value exactly, the bits form 2^-112 of it");
  k[3 * D + 2] = 0x7c00;  /* Infinity */
  check(attn__f16_f32_logits4_scalar(q_up, k, D, 0, N, D, scale, z) == 0, "twin attn__f16_f32_logits4_scalar: 0 for a key with Infinity");
  attn__f16_f32_kv_load_bits_scalar(&rows, 3, 1, D, bits, D);
  check(isinf(bits[2]) && bits[2] > 0, "twin attn__f16_f32_kv_load_bits_scalar: Infinity stays Infinity");
}

static void test_twin_i8(void) {
  enum { N = 11, D = 16, HEADS = 3 };
  int8_t k8[N * D];
  float scales[N], q[HEADS * D], kv[N * D], logits[HEADS * 12];
  int16_t space[HEADS * D + 2 * HEADS];
  for (int x = 0; x < N * D; x++) k8[x] = (int8_t)(uniform() * 127.0f);
  for (int j = 0; j < N; j++) scales[j] = 0.01f + 0.001f * (float)j;
  for (int x = 0; x < HEADS * D; x++) q[x] = uniform();
  const attn__kv_rows rows = {.dtype = ATTN__KV_I8, .data = k8, .stride = D, .scales = scales, .scale_stride = 1};
  attn__head heads[HEADS];
  for (int h = 0; h < HEADS; h++) {
    heads[h] = (attn__head){.q = q + h * D, .q_stride = D, .n_q = 1, .n_k = N, .d_k = D, .d_v = D, .scale = 0.25f,
                            .offset = 4 + h, .keys_before = 6, .keys_after = 0, .k_rows = rows, .sink = -INFINITY};
  }
  const attn__decode_args args = {.heads = heads, .n_heads = HEADS};
  attn__i8_f32_logits_scalar(&args, 0, N, logits, 12, space);
  int ok = 1;
  for (int h = 0; h < HEADS; h++) {
    const attn__span s = attn__key_span(&heads[h], 0);
    for (size_t j = s.lo; j < s.hi; j++) {
      double dot = 0, size = 0;
      for (int p = 0; p < D; p++) {
        dot += (double)q[h * D + p] * k8[j * D + p] * scales[j];
        size += fabs(q[h * D + p] * k8[j * D + p] * scales[j]);
      }
      /* q rounded to 16 bits moves each product by at most 1 / 65534 of max |q|. */
      ok = ok && twin_close(logits[h * 12 + (j - s.lo)], 0.25 * dot, 1e-4, size + 1.0);
    }
  }
  check(ok, "twin attn__i8_f32_logits_scalar: int8 keys' logits over each row's span");
  attn__i8_f32_kv_load_scalar(&rows, 2, N - 2, D, kv, D);
  ok = 1;
  for (int x = 0; x < (N - 2) * D; x++) ok = ok && kv[x] == (float)k8[2 * D + x] * scales[2 + x / D];
  check(ok, "twin attn__i8_f32_kv_load_scalar: each value k8 * s exactly");
}

static void test_twin_rope_logits(void) {
  enum { N = 7, D = 12, DIMS = 8 };
  float q[3 * D], k[N * D], table[N * DIMS], z[3 * N];
  for (int x = 0; x < 3 * D; x++) q[x] = uniform();
  for (int x = 0; x < N * D; x++) k[x] = uniform();
  attn__rope_table(10000.0, DIMS, 3, N, table);
  const float* const rows[4] = {q, q + D, q + 2 * D, q};
  const float scales[4] = {1.0f, 0.5f, 2.0f, 1.0f};
  attn__f32_rope_logits4_scalar(rows, scales, 3, k, D, N, D, table, DIMS, z, N);
  int ok = 1;
  for (int h = 0; h < 3; h++) {
    for (int j = 0; j < N; j++) {
      const float* t = table + j * DIMS;
      double dot = 0, size = 0;
      for (int p = 0; p < D; p++) {
        double kt = k[j * D + p];
        if (p < DIMS / 2) kt = (double)k[j * D + p] * t[p] - (double)k[j * D + p + DIMS / 2] * t[DIMS / 2 + p];
        else if (p < DIMS) kt = (double)k[j * D + p] * t[p - DIMS / 2] + (double)k[j * D + p - DIMS / 2] * t[p];
        dot += q[h * D + p] * kt;
        size += fabs(q[h * D + p] * kt);
      }
      ok = ok && twin_close(z[h * N + j], scales[h] * dot, 1e-6, size);
    }
  }
  check(ok, "twin attn__f32_rope_logits4_scalar: logits over keys turned by rotate_half");
}

#define TWIN_PI 3.14159265358979323846

static void test_twin_block(void) {
  enum { R = 3, C = 7 };
  float x[R * C], g[C], b[C], dy[R * C], y[R * C], dx[R * C], dg[C], db[C], t[R * C];
  for (int i = 0; i < R * C; i++) x[i] = uniform() * 3.0f + 0.5f, dy[i] = uniform();
  for (int j = 0; j < C; j++) g[j] = 1.0f + 0.5f * uniform(), b[j] = uniform();
  attn__f32_layer_norm_scalar(R, C, x, g, b, 1e-5f, y);
  attn__f32_layer_norm_backward_scalar(R, C, x, dy, g, 1e-5f, dx, dg, db);
  int ok = 1, okg = 1;
  double dg64[C] = {0}, db64[C] = {0};
  for (int i = 0; i < R; i++) {
    double mu = 0, var = 0, mg = 0, mgx = 0;
    for (int j = 0; j < C; j++) mu += x[i * C + j] / (double)C;
    for (int j = 0; j < C; j++) var += (x[i * C + j] - mu) * (x[i * C + j] - mu) / C;
    const double r = 1.0 / sqrt(var + 1e-5);
    for (int j = 0; j < C; j++) {
      const double xh = (x[i * C + j] - mu) * r, gg = (double)dy[i * C + j] * g[j];
      ok = ok && twin_close(y[i * C + j], xh * g[j] + b[j], 1e-6, 4.0);
      mg += gg / C, mgx += gg * xh / C;
      dg64[j] += dy[i * C + j] * xh, db64[j] += dy[i * C + j];
    }
    for (int j = 0; j < C; j++) {
      const double xh = (x[i * C + j] - mu) * r, gg = (double)dy[i * C + j] * g[j];
      okg = okg && twin_close(dx[i * C + j], r * (gg - mg - xh * mgx), 1e-6, 4.0 * r);
    }
  }
  for (int j = 0; j < C; j++) okg = okg && twin_close(dg[j], dg64[j], 1e-6, 8.0) && twin_close(db[j], db64[j], 1e-6, 8.0);
  check(ok, "twin attn__f32_layer_norm_scalar: (x - mean) / sqrt(var + eps) gamma + beta");
  check(okg, "twin attn__f32_layer_norm_backward_scalar: dx, dgamma, dbeta");
  attn__f32_rms_norm_scalar(R, C, x, g, 1e-6f, y);
  attn__f32_rms_norm_backward_scalar(R, C, x, dy, g, 1e-6f, dx, dg);
  ok = 1, okg = 1;
  for (int j = 0; j < C; j++) dg64[j] = 0;
  for (int i = 0; i < R; i++) {
    double ms = 0, mgx = 0;
    for (int j = 0; j < C; j++) ms += (double)x[i * C + j] * x[i * C + j] / C;
    const double r = 1.0 / sqrt(ms + 1e-6);
    for (int j = 0; j < C; j++) {
      const double xh = x[i * C + j] * r;
      ok = ok && twin_close(y[i * C + j], xh * g[j], 1e-6, 4.0);
      mgx += (double)dy[i * C + j] * g[j] * xh / C;
      dg64[j] += dy[i * C + j] * xh;
    }
    for (int j = 0; j < C; j++) okg = okg && twin_close(dx[i * C + j], r * ((double)dy[i * C + j] * g[j] - x[i * C + j] * r * mgx), 1e-6, 4.0 * r);
  }
  for (int j = 0; j < C; j++) okg = okg && twin_close(dg[j], dg64[j], 1e-6, 8.0);
  check(ok, "twin attn__f32_rms_norm_scalar: x / sqrt(mean(x^2) + eps) gamma");
  check(okg, "twin attn__f32_rms_norm_backward_scalar: dx, dgamma");
  /* GELU over [-12, 12): the exact form against libm's erfc, the tanh form against tanh. */
  enum { N = 97 };
  float gx[N], gy[N], gt[N], gd[N], gdt[N], ones[N];
  for (int i = 0; i < N; i++) gx[i] = -12.0f + 0.25f * (float)i, ones[i] = 1.0f;
  attn__f32_gelu_scalar(N, gx, 0, gy);
  attn__f32_gelu_scalar(N, gx, 1, gt);
  attn__f32_gelu_backward_scalar(N, gx, ones, 0, gd);
  attn__f32_gelu_backward_scalar(N, gx, ones, 1, gdt);
  ok = 1, okg = 1;
  for (int i = 0; i < N; i++) {
    const double v = gx[i], phi = 0.5 * erfc(-v / sqrt(2.0)), pdf = exp(-v * v / 2) / sqrt(2 * TWIN_PI);
    const double u = sqrt(2 / TWIN_PI) * (v + 0.044715 * v * v * v), th = tanh(u);
    const double gte = v * 0.5 * (1 + th), gtd = 0.5 * (1 + th) + v * 0.5 * (1 - th * th) * sqrt(2 / TWIN_PI) * (1 + 3 * 0.044715 * v * v);
    ok = ok && twin_close(gy[i], v * phi, 1e-6, fabs(v * phi) + 1e-30) && twin_close(gt[i], gte, 1e-6, 12.0);
    okg = okg && twin_close(gd[i], phi + v * pdf, 1e-6, 1.0) && twin_close(gdt[i], gtd, 1e-6, 1.0);
  }
  check(ok, "twin attn__f32_gelu_scalar: x Phi(x) to 1e-6 relative, the tanh form to 1e-6 of 12");
  check(okg, "twin attn__f32_gelu_backward_scalar: Phi + x phi, the tanh form's derivative");
  attn__f32_transpose_scalar(R, C, x, t);
  ok = 1;
  for (int i = 0; i < R; i++) for (int j = 0; j < C; j++) ok = ok && t[j * R + i] == x[i * C + j];
  attn__f32_col_sums_scalar(R, C, x, dg);
  memcpy(y, x, sizeof y);
  attn__f32_bias_rows_scalar(R, C, b, y);
  for (int j = 0; j < C; j++) {
    double sum = 0;
    for (int i = 0; i < R; i++) sum += x[i * C + j], ok = ok && y[i * C + j] == x[i * C + j] + b[j];
    ok = ok && twin_close(dg[j], sum, 1e-6, 12.0);
  }
  check(ok, "twin attn__f32_transpose_scalar, col_sums, bias_rows");
}

static void test_twins(void) {
  test_twin_block();
  test_twin_f32_logits();
  test_twin_f16();
  test_twin_i8();
  test_twin_rope_logits();
}
