/* test_block.c - native tests of the transformer block's entry points
 * (attention.h, THE TRANSFORMER BLOCK) on the scalar C core, run under
 * AddressSanitizer and UndefinedBehaviorSanitizer by tests/run.js: the
 * statuses, the scratch rule, in-place calls, and each result against a
 * float64 loop written here. The kernels' twins are checked in twins.h.
 * Prints a line per failed check and a closing "N passed, N failed". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../c/attention.h"

#include "check.h"

static float* fill(size_t n) {
  float* x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = uniform();
  return x;
}

/* Every result within tol of a float64 value, relative to max(1, |ref|). */
static int near(float x, double ref, double tol) { return fabs(x - ref) <= tol * fmax(1.0, fabs(ref)); }

/* b (k, n) or bt (n, k): element (p, j) of the right factor. */
static double right(const float* b, int k, int n, int transpose_b, int p, int j) {
  (void)k;
  return transpose_b ? b[j * k + p] : b[p * n + j];
}

static void test_matmul(int m, int k, int n, int transpose_b) {
  float *a = fill((size_t)m * k), *b = fill((size_t)k * n), *bias = fill((size_t)n), *dout = fill((size_t)m * n);
  float *c = malloc((size_t)m * n * sizeof *c), *da = malloc((size_t)m * k * sizeof *da);
  float *db = malloc((size_t)k * n * sizeof *db), *dbias = malloc((size_t)n * sizeof *dbias);
  const size_t floats = attn_matmul_scratch_floats(m, k, n);
  float* scratch = malloc(floats * sizeof *scratch);
  const uint32_t flags = transpose_b ? ATTN_MATMUL_TRANSPOSE_B : 0;
  char name[96];
  snprintf(name, sizeof name, "matmul (%d, %d, %d)%s + bias", m, k, n, transpose_b ? " transposeB" : "");
  int ok = attn_matmul_ex(a, b, bias, c, m, k, n, flags, scratch, transpose_b ? (size_t)k * n : 0) == ATTN_OK;
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++) {
      double sum = bias[j];
      for (int p = 0; p < k; p++) sum += (double)a[i * k + p] * right(b, k, n, transpose_b, p, j);
      ok = ok && near(c[i * n + j], sum, 1e-5);
    }
  }
  check(ok, name);
  ok = attn_matmul_backward(a, b, dout, da, db, dbias, m, k, n, flags, scratch, floats) == ATTN_OK;
  for (int i = 0; i < m; i++) {
    for (int p = 0; p < k; p++) {
      double sum = 0;
      for (int j = 0; j < n; j++) sum += (double)dout[i * n + j] * right(b, k, n, transpose_b, p, j);
      ok = ok && near(da[i * k + p], sum, 1e-5);
    }
  }
  for (int p = 0; p < k; p++) {
    for (int j = 0; j < n; j++) {
      double sum = 0;
      for (int i = 0; i < m; i++) sum += (double)a[i * k + p] * dout[i * n + j];
      ok = ok && near(transpose_b ? db[j * k + p] : db[p * n + j], sum, 1e-5);
    }
  }
  for (int j = 0; j < n; j++) {
    double sum = 0;
    for (int i = 0; i < m; i++) sum += dout[i * n + j];
    ok = ok && near(dbias[j], sum, 1e-5);
  }
  check(ok, "matmul backward: da = dout b^T, db = a^T dout (or its transpose), dbias the column sums");
  check(attn_matmul_ex(a, b, NULL, c, m, k, n, ATTN_MATMUL_TRANSPOSE_B, scratch, (size_t)k * n - 1) == ATTN_ERR_SCRATCH &&
            attn_matmul_backward(a, b, dout, da, NULL, NULL, m, k, n, flags, scratch, floats - 1) == ATTN_ERR_SCRATCH &&
            attn_matmul_backward(a, b, dout, da, db, NULL, m, k, n, flags, NULL, floats) == ATTN_ERR_SCRATCH,
        "matmul: scratch too small or missing is ATTN_ERR_SCRATCH");
  free(a), free(b), free(bias), free(dout), free(c), free(da), free(db), free(dbias), free(scratch);
}

static void test_statuses(void) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8], s[8];
  check(attn_matmul_ex(NULL, x, NULL, y, 2, 2, 2, 0, NULL, 0) == ATTN_ERR_NULL, "matmul_ex: NULL a");
  check(attn_matmul_ex(x, x, NULL, y, 2, 0, 2, 0, NULL, 0) == ATTN_ERR_SHAPE, "matmul_ex: k 0");
  check(attn_matmul_ex(x, x, NULL, y, 2, 2, 2, 2u, s, 8) == ATTN_ERR_FLAGS, "matmul_ex: unknown flag");
  check(attn_matmul_ex(x, x, NULL, y, 2, 2, 2, 0, NULL, 0) == ATTN_OK, "matmul_ex: no scratch without transposeB");
  check(attn_matmul_scratch_floats(0, 2, 2) == 0 && attn_matmul_scratch_floats(2, 3, 4) == 12, "matmul_scratch_floats: 0 for bad sizes, max of the products");
  check(attn_layer_norm(x, NULL, NULL, -1.0f, y, 2, 4) == ATTN_ERR_SCALE && attn_rms_norm(x, NULL, NAN, y, 2, 4) == ATTN_ERR_SCALE &&
            attn_layer_norm(x, NULL, NULL, INFINITY, y, 2, 4) == ATTN_ERR_SCALE, "norms: eps negative, NaN or infinite");
  check(attn_layer_norm(x, NULL, NULL, 1e-5f, NULL, 2, 4) == ATTN_ERR_NULL && attn_rms_norm_backward(x, NULL, NULL, 1e-6f, y, NULL, 2, 4) == ATTN_ERR_NULL,
        "norms: NULL y or dout");
  check(attn_layer_norm(x, NULL, NULL, 1e-5f, y, 0, 4) == ATTN_ERR_SHAPE && attn_rms_norm(x, NULL, 1e-6f, y, 2, -1) == ATTN_ERR_SHAPE, "norms: rows or cols below 1");
  check(attn_gelu(x, y, 8, 2) == ATTN_ERR_FLAGS && attn_gelu_backward(x, x, y, 8, -1) == ATTN_ERR_FLAGS, "gelu: approximate not 0 or 1");
  check(attn_gelu(x, y, 0, 0) == ATTN_ERR_SHAPE && attn_gelu(NULL, y, 8, 0) == ATTN_ERR_NULL, "gelu: n 0, NULL x");
}

static void test_norms_in_place(void) {
  enum { R = 4, C = 11 };
  float *x = fill(R * C), *dy = fill(R * C), y[R * C], yy[R * C], dx[R * C], dg[C], db[C], dg2[C];
  attn_layer_norm(x, NULL, NULL, 1e-5f, y, R, C);
  memcpy(yy, x, sizeof yy);
  check(attn_layer_norm(yy, NULL, NULL, 1e-5f, yy, R, C) == ATTN_OK && memcmp(y, yy, sizeof y) == 0, "layer_norm: y may equal x");
  int ok = 1;
  for (int i = 0; i < R; i++) {
    double mu = 0, var = 0;
    for (int j = 0; j < C; j++) mu += x[i * C + j] / (double)C;
    for (int j = 0; j < C; j++) var += (x[i * C + j] - mu) * (x[i * C + j] - mu) / C;
    for (int j = 0; j < C; j++) ok = ok && near(y[i * C + j], (x[i * C + j] - mu) / sqrt(var + 1e-5), 1e-6);
  }
  check(ok, "layer_norm: gamma and beta NULL are 1 and 0");
  attn_layer_norm_backward(x, dy, NULL, 1e-5f, dx, dg, db, R, C);
  float* d2 = malloc(sizeof dx);
  memcpy(d2, dy, sizeof dx);
  check(attn_layer_norm_backward(x, d2, NULL, 1e-5f, d2, dg2, NULL, R, C) == ATTN_OK && memcmp(d2, dx, sizeof dx) == 0 &&
            memcmp(dg, dg2, sizeof dg) == 0, "layer_norm_backward: dx may equal dout, dbeta NULL");
  const float row[5] = {2.5f, 2.5f, 2.5f, 2.5f, 2.5f}, beta[5] = {1, 2, 3, 4, 5};
  float out[5];
  attn_layer_norm(row, NULL, beta, 1e-5f, out, 1, 5);
  check(memcmp(out, beta, sizeof out) == 0, "layer_norm: a constant row gives beta");
  const float huge[4] = {3e38f, -3e38f, 1e38f, 0.0f};
  attn_rms_norm(huge, NULL, 1e-6f, out, 1, 4);
  const double q = sqrt((9e76 + 9e76 + 1e76) / 4);
  check(near(out[0], 3e38 / q, 1e-6) && near(out[1], -3e38 / q, 1e-6) && near(out[2], 1e38 / q, 1e-6) && out[3] == 0.0f, "rms_norm: rows near FLT_MAX");
  free(x), free(dy), free(d2);
}

int main(void) {
  test_statuses();
  const int shapes[][3] = {{1, 1, 1}, {1, 3, 5}, {4, 8, 8}, {5, 7, 9}, {9, 13, 17}, {33, 16, 12}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    test_matmul(shapes[i][0], shapes[i][1], shapes[i][2], 0);
    test_matmul(shapes[i][0], shapes[i][1], shapes[i][2], 1);
  }
  test_norms_in_place();
  printf("native: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
