/* f32-gelu.h - GELU in float32 (private), the scalar kernels' functions;
 * f32-gelu-wasmsimd.c does the same operations on four lanes.
 *
 * Exact form (approximate 'none'): gelu(x) = x Phi(x). For a = |x|,
 * Phi(-a) = erfc(a / sqrt 2) / 2 and Phi(a) = 1 - Phi(-a); erfc(z) for
 * z >= 0 is t exp(-z^2 - 1.26551223 + t P(t)), t = 1 / (1 + z / 2)
 * (Numerical Recipes' erfcc, relative error below 1.2e-7 for every z >= 0),
 * so Phi keeps its relative accuracy far into the left tail. z^2 = a^2 / 2
 * is split as h^2 / 2 + (h l + l^2 / 2) with h = a to 12 bits (h^2 exact):
 * exp(-h^2 / 2) takes the large exact part, and rounding a^2 does not
 * cost relative accuracy where exp(-z^2) is tiny. a is clamped to 16
 * (Phi(-16) is below float's smallest subnormal), so Infinity and huge x
 * give x and -0; NaN gives NaN. gelu'(x) = Phi(x) + x phi(x).
 *
 * Tanh form: gelu(x) = x sigma(2u), u = sqrt(2 / pi) (x + 0.044715 x^3),
 * the same as x (1 + tanh u) / 2 without its cancellation for x < 0:
 * e = exp(-2 |u|), sigma(2u) = 1 / (1 + e) for u >= 0, e / (1 + e) else.
 * gelu'(x) = sigma + x e / (1 + e)^2 2 sqrt(2 / pi) (1 + 3 0.044715 x^2),
 * x^2 there clamped to 16^2 (e is 0 past it; an infinite factor would
 * make 0 times Infinity).
 *
 * exp is attn__expf_nonpos (f32-exp.h). docs/numerics.md states the error
 * against float64 measured by tests/core/gelu.test.js. */
#ifndef ATTN_F32_GELU_H
#define ATTN_F32_GELU_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "f32-exp.h"

#define ATTN__GELU_CLAMP 16.0f
#define ATTN__SQRT1_2 0.707106781f
#define ATTN__INV_SQRT_2PI 0.398942280f
#define ATTN__GELU_C 0.797884561f  /* sqrt(2 / pi) */
#define ATTN__GELU_A 0.044715f
#define ATTN__GELU_2C (2.0f * ATTN__GELU_C)
#define ATTN__GELU_3A (3.0f * ATTN__GELU_A)
/* erfcc's polynomial P(t), highest power first, and its constant. */
#define ATTN__ERFC_P9 0.17087277f
#define ATTN__ERFC_P8 -0.82215223f
#define ATTN__ERFC_P7 1.48851587f
#define ATTN__ERFC_P6 -1.13520398f
#define ATTN__ERFC_P5 0.27886807f
#define ATTN__ERFC_P4 -0.18628806f
#define ATTN__ERFC_P3 0.09678418f
#define ATTN__ERFC_P2 0.37409196f
#define ATTN__ERFC_P1 1.00002368f
#define ATTN__ERFC_K 1.26551223f

/* Phi(x); with pdf not NULL also phi(x) = exp(-x^2 / 2) / sqrt(2 pi) into it. */
static inline float attn__gelu_phi(float x, float* pdf) {
  float a = fabsf(x);
  a = a < ATTN__GELU_CLAMP ? a : ATTN__GELU_CLAMP;
  uint32_t bits;
  memcpy(&bits, &a, sizeof bits);
  bits &= 0xfffff000u;
  float h;
  memcpy(&h, &bits, sizeof h);
  const float l = a - h;
  const float q = (h * h) * 0.5f;
  const float rest = h * l + (l * l) * 0.5f;
  const float z = a * ATTN__SQRT1_2;
  const float t = 1.0f / (1.0f + z * 0.5f);
  float p = ATTN__ERFC_P9 * t + ATTN__ERFC_P8;
  p = p * t + ATTN__ERFC_P7;
  p = p * t + ATTN__ERFC_P6;
  p = p * t + ATTN__ERFC_P5;
  p = p * t + ATTN__ERFC_P4;
  p = p * t + ATTN__ERFC_P3;
  p = p * t + ATTN__ERFC_P2;
  p = p * t + ATTN__ERFC_P1;
  const float e1 = attn__expf_nonpos(-q);
  const float e2 = attn__expf_nonpos((p * t - ATTN__ERFC_K) - rest);
  const float half = (t * 0.5f) * (e1 * e2);
  if (pdf != NULL) *pdf = (e1 * attn__expf_nonpos(-rest)) * ATTN__INV_SQRT_2PI;
  return x < 0.0f ? half : 1.0f - half;
}

/* sigma(2u) of the tanh form, and e / (1 + e)^2 into *slope. */
static inline float attn__gelu_sigma(float x, float* slope) {
  const float u = ATTN__GELU_C * (x + ATTN__GELU_A * (x * x * x));
  const float e = attn__expf_nonpos(fabsf(u) * -2.0f);
  const float inv = 1.0f / (1.0f + e);
  *slope = (e * inv) * inv;
  return u >= 0.0f ? inv : e * inv;
}

static inline float attn__gelu(float x, int approximate) {
  float unused;
  return x * (approximate ? attn__gelu_sigma(x, &unused) : attn__gelu_phi(x, NULL));
}

static inline float attn__gelu_grad(float x, int approximate) {
  if (approximate) {
    float slope;
    const float sg = attn__gelu_sigma(x, &slope);
    float x2 = x * x;
    x2 = x2 < ATTN__GELU_CLAMP * ATTN__GELU_CLAMP ? x2 : ATTN__GELU_CLAMP * ATTN__GELU_CLAMP;
    return sg + x * (slope * (ATTN__GELU_2C * (1.0f + ATTN__GELU_3A * x2)));
  }
  float pdf;
  const float phi = attn__gelu_phi(x, &pdf);
  return phi + x * pdf;
}

#endif /* ATTN_F32_GELU_H */
