/* f32-layernorm-scalar.c - layer norm and RMS norm, forward and backward,
 * the readable spec (block.h states the operations and their order).
 * Every row sum runs in four lanes, j mod 4, combined (s0 + s2) + (s1 + s3),
 * then the tail, as the SIMD twin's vectors do. */
#include <assert.h>

#include "kernels.h"

/* The 4-lane sum's state: lanes, then the tail. */
typedef struct attn__sum4 {
  float lane[4];
} attn__sum4;

static inline float attn__sum4_total(const attn__sum4* a, const float* tail, size_t n_tail) {
  float s = (a->lane[0] + a->lane[2]) + (a->lane[1] + a->lane[3]);
  for (size_t j = 0; j < n_tail; j++) s += tail[j];
  return s;
}

static float attn__row_scale(const float* x, size_t cols) {
  float m = 0.0f;
  for (size_t j = 0; j < cols; j++) m = attn__max_nan(m, fabsf(x[j]));
  return attn__norm_scale(m);
}

/* mu, c and r of layer norm for row x scaled by s: the mean is mu + c, mu
 * the first pass's and c = mean(x s - mu) the second's (the corrected
 * two-pass algorithm), so x s - mu is exact for x near the mean and
 * (x s - mu) - c keeps its digits where the mean is large against the
 * spread; var = mean((x s - mu)^2) - c^2, at least 0. */
static void attn__ln_stats(const float* x, size_t cols, float s, float eps, float* mu_out, float* c_out, float* r_out) {
  const size_t n4 = cols & ~(size_t)3;
  attn__sum4 a = {{0.0f, 0.0f, 0.0f, 0.0f}};
  float tail[3], tail2[3];
  for (size_t j = 0; j < n4; j++) a.lane[j & 3] += x[j] * s;
  for (size_t j = n4; j < cols; j++) tail[j - n4] = x[j] * s;
  const float mu = attn__sum4_total(&a, tail, cols - n4) / (float)cols;
  attn__sum4 a2 = {{0.0f, 0.0f, 0.0f, 0.0f}};
  a = a2;
  for (size_t j = 0; j < n4; j++) {
    const float d = x[j] * s - mu;
    a.lane[j & 3] += d;
    a2.lane[j & 3] += d * d;
  }
  for (size_t j = n4; j < cols; j++) {
    const float d = x[j] * s - mu;
    tail[j - n4] = d;
    tail2[j - n4] = d * d;
  }
  const float c = attn__sum4_total(&a, tail, cols - n4) / (float)cols;
  float var = attn__sum4_total(&a2, tail2, cols - n4) / (float)cols - c * c;
  if (var < 0.0f) var = 0.0f;
  *mu_out = mu;
  *c_out = c;
  *r_out = 1.0f / sqrtf(var + attn__norm_eps(eps, s));
}

/* r of RMS norm for row x scaled by s. */
static float attn__rms_stat(const float* x, size_t cols, float s, float eps) {
  const size_t n4 = cols & ~(size_t)3;
  attn__sum4 a = {{0.0f, 0.0f, 0.0f, 0.0f}};
  float tail[3];
  for (size_t j = 0; j < n4; j++) {
    const float v = x[j] * s;
    a.lane[j & 3] += v * v;
  }
  for (size_t j = n4; j < cols; j++) {
    const float v = x[j] * s;
    tail[j - n4] = v * v;
  }
  return 1.0f / sqrtf(attn__sum4_total(&a, tail, cols - n4) / (float)cols + attn__norm_eps(eps, s));
}

void attn__f32_layer_norm_scalar(size_t rows, size_t cols, const float* x, const float* gamma, const float* beta,
                                 float eps, float* y) {
  assert(x != NULL && y != NULL && cols >= 1);
  for (size_t i = 0; i < rows; i++, x += cols, y += cols) {
    const float s = attn__row_scale(x, cols);
    float mu, c, r;
    attn__ln_stats(x, cols, s, eps, &mu, &c, &r);
    for (size_t j = 0; j < cols; j++) {
      float v = ((x[j] * s - mu) - c) * r;
      if (gamma != NULL) v = v * gamma[j];
      if (beta != NULL) v = v + beta[j];
      y[j] = v;
    }
  }
}

void attn__f32_layer_norm_backward_scalar(size_t rows, size_t cols, const float* x, const float* dy,
                                          const float* gamma, float eps, float* dx, float* dgamma, float* dbeta) {
  assert(x != NULL && dy != NULL && dx != NULL && cols >= 1);
  if (dgamma != NULL) for (size_t j = 0; j < cols; j++) dgamma[j] = 0.0f;
  if (dbeta != NULL) for (size_t j = 0; j < cols; j++) dbeta[j] = 0.0f;
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, dy += cols, dx += cols) {
    const float s = attn__row_scale(x, cols);
    float mu, c, r;
    attn__ln_stats(x, cols, s, eps, &mu, &c, &r);
    attn__sum4 ag = {{0.0f, 0.0f, 0.0f, 0.0f}}, agx = ag;
    float tg[3], tgx[3];
    for (size_t j = 0; j < cols; j++) {
      const float xh = ((x[j] * s - mu) - c) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      if (j < n4) {
        ag.lane[j & 3] += g;
        agx.lane[j & 3] += g * xh;
      } else {
        tg[j - n4] = g;
        tgx[j - n4] = g * xh;
      }
      if (dgamma != NULL) dgamma[j] += dy[j] * xh;
      if (dbeta != NULL) dbeta[j] += dy[j];
    }
    const float mg = attn__sum4_total(&ag, tg, cols - n4) / (float)cols;
    const float mgx = attn__sum4_total(&agx, tgx, cols - n4) / (float)cols;
    const float rt = r * s;
    for (size_t j = 0; j < cols; j++) {
      const float xh = ((x[j] * s - mu) - c) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      dx[j] = rt * ((g - mg) - xh * mgx);
    }
  }
}

void attn__f32_rms_norm_scalar(size_t rows, size_t cols, const float* x, const float* gamma, float eps, float* y) {
  assert(x != NULL && y != NULL && cols >= 1);
  for (size_t i = 0; i < rows; i++, x += cols, y += cols) {
    const float s = attn__row_scale(x, cols);
    const float r = attn__rms_stat(x, cols, s, eps);
    for (size_t j = 0; j < cols; j++) {
      float v = (x[j] * s) * r;
      if (gamma != NULL) v = v * gamma[j];
      y[j] = v;
    }
  }
}

void attn__f32_rms_norm_backward_scalar(size_t rows, size_t cols, const float* x, const float* dy,
                                        const float* gamma, float eps, float* dx, float* dgamma) {
  assert(x != NULL && dy != NULL && dx != NULL && cols >= 1);
  if (dgamma != NULL) for (size_t j = 0; j < cols; j++) dgamma[j] = 0.0f;
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, dy += cols, dx += cols) {
    const float s = attn__row_scale(x, cols);
    const float r = attn__rms_stat(x, cols, s, eps);
    attn__sum4 agx = {{0.0f, 0.0f, 0.0f, 0.0f}};
    float tgx[3];
    for (size_t j = 0; j < cols; j++) {
      const float xh = (x[j] * s) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      if (j < n4) agx.lane[j & 3] += g * xh;
      else tgx[j - n4] = g * xh;
      if (dgamma != NULL) dgamma[j] += dy[j] * xh;
    }
    const float mgx = attn__sum4_total(&agx, tgx, cols - n4) / (float)cols;
    const float rt = r * s;
    for (size_t j = 0; j < cols; j++) {
      const float xh = (x[j] * s) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      dx[j] = rt * (g - xh * mgx);
    }
  }
}
