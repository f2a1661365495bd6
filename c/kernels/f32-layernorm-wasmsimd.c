/* f32-layernorm-wasmsimd.c - layer norm and RMS norm with SIMD128: the
 * operations of f32-layernorm-scalar.c in the same order, four columns per
 * vector (lane k sums the columns j mod 4 = k), the tail one column at a
 * time, so both give the same bits. */
#include <assert.h>
#include <wasm_simd128.h>

#include "kernels.h"

static inline float attn__lanes_total(v128_t v, const float* tail, size_t n_tail) {
  float s = (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 2)) +
            (wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 3));
  for (size_t j = 0; j < n_tail; j++) s += tail[j];
  return s;
}

static float attn__row_scale_wasmsimd(const float* x, size_t cols) {
  const size_t n4 = cols & ~(size_t)3;
  v128_t vm = wasm_f32x4_splat(0.0f);
  for (size_t j = 0; j < n4; j += 4) vm = wasm_f32x4_max(vm, wasm_f32x4_abs(wasm_v128_load(x + j)));
  float m = attn__max_nan(attn__max_nan(wasm_f32x4_extract_lane(vm, 0), wasm_f32x4_extract_lane(vm, 1)),
                          attn__max_nan(wasm_f32x4_extract_lane(vm, 2), wasm_f32x4_extract_lane(vm, 3)));
  for (size_t j = n4; j < cols; j++) m = attn__max_nan(m, fabsf(x[j]));
  return attn__norm_scale(m);
}

static void attn__ln_stats_wasmsimd(const float* x, size_t cols, float s, float eps, float* mu_out, float* c_out,
                                    float* r_out) {
  const size_t n4 = cols & ~(size_t)3;
  const v128_t vs = wasm_f32x4_splat(s);
  v128_t va = wasm_f32x4_splat(0.0f), va2 = va;
  float tail[3], tail2[3];
  for (size_t j = 0; j < n4; j += 4) va = wasm_f32x4_add(va, wasm_f32x4_mul(wasm_v128_load(x + j), vs));
  for (size_t j = n4; j < cols; j++) tail[j - n4] = x[j] * s;
  const float mu = attn__lanes_total(va, tail, cols - n4) / (float)cols;
  const v128_t vmu = wasm_f32x4_splat(mu);
  va = va2;
  for (size_t j = 0; j < n4; j += 4) {
    const v128_t d = wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vmu);
    va = wasm_f32x4_add(va, d);
    va2 = wasm_f32x4_add(va2, wasm_f32x4_mul(d, d));
  }
  for (size_t j = n4; j < cols; j++) {
    const float d = x[j] * s - mu;
    tail[j - n4] = d;
    tail2[j - n4] = d * d;
  }
  const float c = attn__lanes_total(va, tail, cols - n4) / (float)cols;
  float var = attn__lanes_total(va2, tail2, cols - n4) / (float)cols - c * c;
  if (var < 0.0f) var = 0.0f;
  *mu_out = mu;
  *c_out = c;
  *r_out = 1.0f / sqrtf(var + attn__norm_eps(eps, s));
}

static float attn__rms_stat_wasmsimd(const float* x, size_t cols, float s, float eps) {
  const size_t n4 = cols & ~(size_t)3;
  const v128_t vs = wasm_f32x4_splat(s);
  v128_t va = wasm_f32x4_splat(0.0f);
  float tail[3];
  for (size_t j = 0; j < n4; j += 4) {
    const v128_t v = wasm_f32x4_mul(wasm_v128_load(x + j), vs);
    va = wasm_f32x4_add(va, wasm_f32x4_mul(v, v));
  }
  for (size_t j = n4; j < cols; j++) {
    const float v = x[j] * s;
    tail[j - n4] = v * v;
  }
  return 1.0f / sqrtf(attn__lanes_total(va, tail, cols - n4) / (float)cols + attn__norm_eps(eps, s));
}

void attn__f32_layer_norm_wasmsimd(size_t rows, size_t cols, const float* x, const float* gamma, const float* beta,
                                   float eps, float* y) {
  assert(x != NULL && y != NULL && cols >= 1);
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, y += cols) {
    const float s = attn__row_scale_wasmsimd(x, cols);
    float mu, c, r;
    attn__ln_stats_wasmsimd(x, cols, s, eps, &mu, &c, &r);
    const v128_t vs = wasm_f32x4_splat(s), vmu = wasm_f32x4_splat(mu), vc = wasm_f32x4_splat(c), vr = wasm_f32x4_splat(r);
    for (size_t j = 0; j < n4; j += 4) {
      v128_t v = wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vmu), vc), vr);
      if (gamma != NULL) v = wasm_f32x4_mul(v, wasm_v128_load(gamma + j));
      if (beta != NULL) v = wasm_f32x4_add(v, wasm_v128_load(beta + j));
      wasm_v128_store(y + j, v);
    }
    for (size_t j = n4; j < cols; j++) {
      float v = ((x[j] * s - mu) - c) * r;
      if (gamma != NULL) v = v * gamma[j];
      if (beta != NULL) v = v + beta[j];
      y[j] = v;
    }
  }
}

void attn__f32_layer_norm_backward_wasmsimd(size_t rows, size_t cols, const float* x, const float* dy,
                                            const float* gamma, float eps, float* dx, float* dgamma, float* dbeta) {
  assert(x != NULL && dy != NULL && dx != NULL && cols >= 1);
  if (dgamma != NULL) for (size_t j = 0; j < cols; j++) dgamma[j] = 0.0f;
  if (dbeta != NULL) for (size_t j = 0; j < cols; j++) dbeta[j] = 0.0f;
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, dy += cols, dx += cols) {
    const float s = attn__row_scale_wasmsimd(x, cols);
    float mu, c, r;
    attn__ln_stats_wasmsimd(x, cols, s, eps, &mu, &c, &r);
    const v128_t vs = wasm_f32x4_splat(s), vmu = wasm_f32x4_splat(mu), vc = wasm_f32x4_splat(c), vr = wasm_f32x4_splat(r);
    v128_t vg = wasm_f32x4_splat(0.0f), vgx = vg;
    float tg[3], tgx[3];
    for (size_t j = 0; j < n4; j += 4) {
      const v128_t vdy = wasm_v128_load(dy + j);
      const v128_t xh = wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vmu), vc), vr);
      const v128_t g = gamma != NULL ? wasm_f32x4_mul(vdy, wasm_v128_load(gamma + j)) : vdy;
      vg = wasm_f32x4_add(vg, g);
      vgx = wasm_f32x4_add(vgx, wasm_f32x4_mul(g, xh));
      if (dgamma != NULL) wasm_v128_store(dgamma + j, wasm_f32x4_add(wasm_v128_load(dgamma + j), wasm_f32x4_mul(vdy, xh)));
      if (dbeta != NULL) wasm_v128_store(dbeta + j, wasm_f32x4_add(wasm_v128_load(dbeta + j), vdy));
    }
    for (size_t j = n4; j < cols; j++) {
      const float xh = ((x[j] * s - mu) - c) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      tg[j - n4] = g;
      tgx[j - n4] = g * xh;
      if (dgamma != NULL) dgamma[j] += dy[j] * xh;
      if (dbeta != NULL) dbeta[j] += dy[j];
    }
    const float mg = attn__lanes_total(vg, tg, cols - n4) / (float)cols;
    const float mgx = attn__lanes_total(vgx, tgx, cols - n4) / (float)cols;
    const float rt = r * s;
    const v128_t vmg = wasm_f32x4_splat(mg), vmgx = wasm_f32x4_splat(mgx), vrt = wasm_f32x4_splat(rt);
    for (size_t j = 0; j < n4; j += 4) {
      const v128_t vdy = wasm_v128_load(dy + j);
      const v128_t xh = wasm_f32x4_mul(wasm_f32x4_sub(wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vmu), vc), vr);
      const v128_t g = gamma != NULL ? wasm_f32x4_mul(vdy, wasm_v128_load(gamma + j)) : vdy;
      wasm_v128_store(dx + j, wasm_f32x4_mul(vrt, wasm_f32x4_sub(wasm_f32x4_sub(g, vmg), wasm_f32x4_mul(xh, vmgx))));
    }
    for (size_t j = n4; j < cols; j++) {
      const float xh = ((x[j] * s - mu) - c) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      dx[j] = rt * ((g - mg) - xh * mgx);
    }
  }
}

void attn__f32_rms_norm_wasmsimd(size_t rows, size_t cols, const float* x, const float* gamma, float eps, float* y) {
  assert(x != NULL && y != NULL && cols >= 1);
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, y += cols) {
    const float s = attn__row_scale_wasmsimd(x, cols);
    const float r = attn__rms_stat_wasmsimd(x, cols, s, eps);
    const v128_t vs = wasm_f32x4_splat(s), vr = wasm_f32x4_splat(r);
    for (size_t j = 0; j < n4; j += 4) {
      v128_t v = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vr);
      if (gamma != NULL) v = wasm_f32x4_mul(v, wasm_v128_load(gamma + j));
      wasm_v128_store(y + j, v);
    }
    for (size_t j = n4; j < cols; j++) {
      float v = (x[j] * s) * r;
      if (gamma != NULL) v = v * gamma[j];
      y[j] = v;
    }
  }
}

void attn__f32_rms_norm_backward_wasmsimd(size_t rows, size_t cols, const float* x, const float* dy,
                                          const float* gamma, float eps, float* dx, float* dgamma) {
  assert(x != NULL && dy != NULL && dx != NULL && cols >= 1);
  if (dgamma != NULL) for (size_t j = 0; j < cols; j++) dgamma[j] = 0.0f;
  const size_t n4 = cols & ~(size_t)3;
  for (size_t i = 0; i < rows; i++, x += cols, dy += cols, dx += cols) {
    const float s = attn__row_scale_wasmsimd(x, cols);
    const float r = attn__rms_stat_wasmsimd(x, cols, s, eps);
    const v128_t vs = wasm_f32x4_splat(s), vr = wasm_f32x4_splat(r);
    v128_t vgx = wasm_f32x4_splat(0.0f);
    float tgx[3];
    for (size_t j = 0; j < n4; j += 4) {
      const v128_t vdy = wasm_v128_load(dy + j);
      const v128_t xh = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vr);
      const v128_t g = gamma != NULL ? wasm_f32x4_mul(vdy, wasm_v128_load(gamma + j)) : vdy;
      vgx = wasm_f32x4_add(vgx, wasm_f32x4_mul(g, xh));
      if (dgamma != NULL) wasm_v128_store(dgamma + j, wasm_f32x4_add(wasm_v128_load(dgamma + j), wasm_f32x4_mul(vdy, xh)));
    }
    for (size_t j = n4; j < cols; j++) {
      const float xh = (x[j] * s) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      tgx[j - n4] = g * xh;
      if (dgamma != NULL) dgamma[j] += dy[j] * xh;
    }
    const float mgx = attn__lanes_total(vgx, tgx, cols - n4) / (float)cols;
    const float rt = r * s;
    const v128_t vmgx = wasm_f32x4_splat(mgx), vrt = wasm_f32x4_splat(rt);
    for (size_t j = 0; j < n4; j += 4) {
      const v128_t vdy = wasm_v128_load(dy + j);
      const v128_t xh = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + j), vs), vr);
      const v128_t g = gamma != NULL ? wasm_f32x4_mul(vdy, wasm_v128_load(gamma + j)) : vdy;
      wasm_v128_store(dx + j, wasm_f32x4_mul(vrt, wasm_f32x4_sub(g, wasm_f32x4_mul(xh, vmgx))));
    }
    for (size_t j = n4; j < cols; j++) {
      const float xh = (x[j] * s) * r;
      const float g = gamma != NULL ? dy[j] * gamma[j] : dy[j];
      dx[j] = rt * (g - xh * mgx);
    }
  }
}
