/* f32-rope.h - rotary position embeddings (RoPE): the cos and sin table
 * that attention.c computes once per call and the rotation kernels apply
 * (f32-rope-scalar.c, f32-rope-wasmsimd.c).
 *
 * Pair c of a row (c < dims / 2) turns by the angle p w_c at position p,
 * w_c = theta^(-2c / dims) (Su et al., RoFormer; Hugging Face's inv_freq).
 * The pairs are (c, c + dims / 2) (rotate_half, Llama, the default) or
 * (2c, 2c + 1) (interleaved, GPT-J); elements from dims on stay as they are
 * (partial rotary).
 *
 * The table holds cos(p w_c) and sin(p w_c) rounded to float32 from float64
 * values: w_c = theta^(-2c / dims) as exp(-2c / dims ln theta) in float64,
 * then, per pair, the angle at each multiple of ATTN__ROPE_ANCHOR positions
 * from attn__sincos_f64 of (double)p * w_c, and the positions between by
 * angle addition in float64 (at most ATTN__ROPE_ANCHOR - 1 steps of a unit
 * rotation, each adding about 1e-16 of relative error, far below float32's
 * 6e-8). A value depends on the position only, not on where a table starts,
 * so a cache that turns its keys one append at a time gets the bits of one
 * call over all of them.
 *
 * The float64 log, exp, sin and cos are here rather than the C library's:
 * the same code in every build, and without the library's tables. Their
 * errors are a few ulp of float64 (tests/native/test_attention.c checks
 * them against the C library),
 * far below the float32 rounding that follows. theta >= 1 keeps every
 * frequency at most 1, so angles stay below 2^33 (positions are int32 plus
 * a row), where the reduction by pi/2 below is accurate.
 */
#ifndef ATTN_F32_ROPE_H
#define ATTN_F32_ROPE_H

#include <stddef.h>
#include <stdint.h>

#define ATTN__ROPE_ANCHOR 64

/* ln 2 in two parts (the first with 32 bits, so n * it is exact for |n| < 2^21). */
#define ATTN__LN2_HI_F64 0x1.62e42feep-1
#define ATTN__LN2_LO_F64 0x1.a39ef35793c76p-33

/* ln x for finite x > 0 (a float32's value, so a normal double): x = m 2^e
 * with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1),
 * |s| < 0.172, its series to s^23 (the next term is below 1e-18 of it). */
static inline double attn__log_f64(double x) {
  union { double d; uint64_t u; } b = {x};
  int e = (int)((b.u >> 52) & 0x7ff) - 1023;
  b.u = (b.u & UINT64_C(0x000fffffffffffff)) | UINT64_C(0x3ff0000000000000);
  double m = b.d;
  if (m > 0x1.6a09e667f3bcdp+0) m = m * 0.5, e = e + 1;
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double t = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) t = t * s2 + 1.0 / k;
  return (double)e * ATTN__LN2_HI_F64 + ((double)e * ATTN__LN2_LO_F64 + 2.0 * s * t);
}

/* e^x for |x| < 700: x = n ln 2 + r, |r| <= ln 2 / 2, e^r by its Taylor
 * series to r^13 (the next term is below 5e-18), times 2^n. */
static inline double attn__exp_f64(double x) {
  const double n = (double)(int64_t)(x * 0x1.71547652b82fep+0 + (x >= 0.0 ? 0.5 : -0.5));
  const double r = (x - n * ATTN__LN2_HI_F64) - n * ATTN__LN2_LO_F64;
  double t = 1.0;
  for (int k = 13; k >= 1; k--) t = 1.0 + t * r / k;
  union { uint64_t u; double d; } scale = {(uint64_t)((int64_t)n + 1023) << 52};
  return t * scale.d;
}

/* sin a and cos a for |a| < 2^33: a = k pi/2 + r with pi/2 in five parts of
 * at most 22 bits (k * part is exact for |k| < 2^31, and a few ulp of r
 * past it), |r| <= pi/4; sin r and cos r by their Taylor series to r^17
 * and r^16 (the next terms are below 3e-17); the quadrant k mod 4 picks
 * and signs them. */
static inline void attn__sincos_f64(double a, double* s, double* c) {
  const double k = (double)(int64_t)(a * 0x1.45f306dc9c883p-1 + (a >= 0.0 ? 0.5 : -0.5));
  double r = a - k * 0x1.921fbp+0;
  r = r - k * 0x1.5110bp-22;
  r = r - k * 0x1.184698p-44;
  r = r - k * 0x1.3198ap-69;
  r = r - k * 0x1.701b8p-92;
  const double r2 = r * r;
  double sn = 1.0, cs = 1.0;
  for (int j = 16; j >= 2; j -= 2) {
    sn = 1.0 - sn * r2 / ((double)j * (double)(j + 1));
    cs = 1.0 - cs * r2 / ((double)(j - 1) * (double)j);
  }
  sn = sn * r;
  switch ((int64_t)k & 3) {
    case 0: *s = sn, *c = cs; break;
    case 1: *s = cs, *c = -sn; break;
    case 2: *s = -sn, *c = -cs; break;
    default: *s = -cs, *c = sn; break;
  }
}

/* Flags of the rotation kernels. */
#define ATTN__ROPE_PAIRS_INTERLEAVED 1u  /* pairs (2c, 2c + 1); else (c, c + dims / 2) */
#define ATTN__ROPE_INVERSE 2u            /* turn back by the angle (R^T, for gradients) */

/* What the rotation kernels read of their flags, and row r's rows of x, y
 * and the table (cos of its dims / 2 pairs, then sin). */
typedef struct attn__rope_mode {
  size_t half;  /* dims / 2 pairs */
  int interleaved, inverse;
} attn__rope_mode;
static inline attn__rope_mode attn__rope_mode_of(size_t dims, uint32_t flags) {
  return (attn__rope_mode){dims / 2, (flags & ATTN__ROPE_PAIRS_INTERLEAVED) != 0, (flags & ATTN__ROPE_INVERSE) != 0};
}
typedef struct attn__rope_row {
  const float* x;    /* (d) */
  float* y;          /* (d) */
  const float* cos;  /* (dims / 2) */
  const float* sin;  /* (dims / 2) */
} attn__rope_row;
static inline attn__rope_row attn__rope_row_at(const float* x, size_t x_stride, float* y, size_t y_stride,
                                               const float* table, size_t dims, size_t r) {
  const float* cos_row = table + r * dims;
  return (attn__rope_row){x + r * x_stride, y + r * y_stride, cos_row, cos_row + dims / 2};
}

/* One pair (a, b) turned by (cs, sn), forward or inverse: one rounded
 * product of each input with cos and sin, then one rounded add or
 * subtract. */
static inline float attn__rope_a(float a, float b, float cs, float sn, int inverse) {
  return inverse ? a * cs + b * sn : a * cs - b * sn;
}
static inline float attn__rope_b(float a, float b, float cs, float sn, int inverse) {
  return inverse ? b * cs - a * sn : b * cs + a * sn;
}

/* Elements dims .. d of a row copied when y is not x. */
static inline void attn__rope_copy_rest(attn__rope_row row, size_t dims, size_t d) {
  if (row.y != row.x) {
    for (size_t c = dims; c < d; c++) row.y[c] = row.x[c];
  }
}

/* Pairs of a table strip: their angles advance together, position by
 * position, so the steps of different pairs overlap instead of waiting on
 * one pair's chain of multiply-adds. */
#define ATTN__ROPE_STRIP 16

/* One step of angle addition for each pair of a strip: angle += w. */
static inline void attn__rope_step(double cos_p[ATTN__ROPE_STRIP], double sin_p[ATTN__ROPE_STRIP],
                                   const double step_cos[ATTN__ROPE_STRIP], const double step_sin[ATTN__ROPE_STRIP]) {
  for (size_t t = 0; t < ATTN__ROPE_STRIP; t++) {
    const double next_cos = cos_p[t] * step_cos[t] - sin_p[t] * step_sin[t];
    sin_p[t] = sin_p[t] * step_cos[t] + cos_p[t] * step_sin[t];
    cos_p[t] = next_cos;
  }
}

/* table (n, dims): row r, for position pos0 + r, holds cos(p w_c) at [c]
 * and sin(p w_c) at [dims / 2 + c], c < dims / 2. */
static inline void attn__rope_table(double theta, size_t dims, int64_t pos0, size_t n, float* table) {
  const size_t half = dims / 2;
  const double log_theta = attn__log_f64(theta);
  for (size_t c0 = 0; c0 < half; c0 += ATTN__ROPE_STRIP) {
    /* A last strip of fewer pairs computes the missing ones with w = 0
     * and does not store them. */
    const size_t strip = half - c0 < ATTN__ROPE_STRIP ? half - c0 : ATTN__ROPE_STRIP;
    double w[ATTN__ROPE_STRIP], step_cos[ATTN__ROPE_STRIP], step_sin[ATTN__ROPE_STRIP];
    double cos_p[ATTN__ROPE_STRIP], sin_p[ATTN__ROPE_STRIP];
    for (size_t t = 0; t < ATTN__ROPE_STRIP; t++) {
      w[t] = t < strip ? attn__exp_f64(-2.0 * (double)(c0 + t) / (double)dims * log_theta) : 0.0;
      attn__sincos_f64(w[t], &step_sin[t], &step_cos[t]);
    }
    for (size_t r = 0; r < n; r++) {
      const int64_t p = pos0 + (int64_t)r;
      const int64_t from_anchor = ((p % ATTN__ROPE_ANCHOR) + ATTN__ROPE_ANCHOR) % ATTN__ROPE_ANCHOR;
      if (from_anchor == 0 || r == 0) {
        /* An anchor, or the first row: from the anchor at or before p. */
        for (size_t t = 0; t < ATTN__ROPE_STRIP; t++) attn__sincos_f64((double)(p - from_anchor) * w[t], &sin_p[t], &cos_p[t]);
        for (int64_t s = 0; s < from_anchor; s++) attn__rope_step(cos_p, sin_p, step_cos, step_sin);
      } else {
        attn__rope_step(cos_p, sin_p, step_cos, step_sin);
      }
      float* row = table + r * dims + c0;  /* (strip) cosines, then at + half their sines */
      if (strip == ATTN__ROPE_STRIP) {
        for (size_t t = 0; t < ATTN__ROPE_STRIP; t++) row[t] = (float)cos_p[t], row[half + t] = (float)sin_p[t];
      } else {
        for (size_t t = 0; t < strip; t++) row[t] = (float)cos_p[t], row[half + t] = (float)sin_p[t];
      }
    }
  }
}

#endif /* ATTN_F32_ROPE_H */
