/* kv-numerics.h - the numerics of a compact cache's elements (private):
 * float16 to and from float32, int8 rows with a scale per row, and the
 * integer logits of an int8 K. Each conversion is of one value alone, so
 * the kernels that use these give the same floats in every build. */
#ifndef ATTN_KERNELS_KV_NUMERICS_H
#define ATTN_KERNELS_KV_NUMERICS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* The element types of a cache's K and V (attention.h, attn_kv_dtype). */
#define ATTN__KV_F32 0
#define ATTN__KV_F16 1
#define ATTN__KV_I8 2

/* K or V of one kv head in a compact cache: row j's d elements (float16
 * bits, or int8) start at element j * stride of data; an int8 row's value
 * c is (float)data[j * stride + c] * scales[j * scale_stride]. */
typedef struct attn__kv_rows {
  int32_t dtype;        /* ATTN__KV_F16 or ATTN__KV_I8; ATTN__KV_F32: the head's k or v hold it */
  const void* data;
  size_t stride;
  const float* scales;  /* int8 only */
  size_t scale_stride;
} attn__kv_rows;

/* The float32 value of float16 bits h, exactly: the 15 bits below the sign
 * shifted into a float32's exponent and mantissa are the value times
 * 2^-112 (subnormal halves land on float32 subnormals, which wasm keeps),
 * so one multiply by 2^112 rebiases; exponent 31 (Infinity, NaN) maps to
 * 255. The SIMD loads (kv-rows-wasmsimd.c) do the same on four lanes. */
static inline float attn__f16_value(uint16_t h) {
  union { uint32_t u; float f; } x = {.u = (uint32_t)(h & 0x7fff) << 13};
  if ((h & 0x7c00) == 0x7c00) {
    x.u |= 0x7f800000u;
  } else {
    x.f = x.f * 0x1p112f;
  }
  x.u |= (uint32_t)(h & 0x8000) << 16;
  return x.f;
}

/* The float32 whose bits are float16 bits h's shifted into place: sign,
 * then the 15 bits below it at a float32's exponent and mantissa, that is
 * h's value times 2^-112, exactly (subnormal halves land on float32
 * subnormals); exponent 31 (Infinity, NaN) as attn__f16_value gives it.
 * The decode kernel reads float16 so and moves the 2^112 to q and the
 * weights. */
static inline float attn__f16_f32_bits(uint16_t h) {
  if ((h & 0x7c00) == 0x7c00) return attn__f16_value(h);
  union { uint32_t u; float f; } x = {.u = ((uint32_t)(h & 0x7fff) << 13) | ((uint32_t)(h & 0x8000) << 16)};
  return x.f;
}

/* The float16 bits nearest to x, ties to even (web/core/float16.js's
 * halfBits): past 65504 Infinity, below 2^-25 a signed zero, NaN stays NaN. */
static inline uint16_t attn__f16_bits(float x) {
  const union { float f; uint32_t u; } in = {.f = x};
  const uint32_t b = in.u, sign = (b >> 16) & 0x8000u, exp = (b >> 23) & 0xffu;
  uint32_t mant = b & 0x7fffffu;
  if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant != 0 ? 0x200u | (mant >> 13) : 0u));
  const int32_t e = (int32_t)exp - 112;  /* rebias 127 -> 15 */
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {  /* a subnormal half, or zero */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - e), half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    return (uint16_t)(sign | (half + (rest > mid || (rest == mid && (half & 1u) != 0))));
  }
  const uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fffu;
  /* A carry out of the mantissa moves to the next binade (or Infinity): still right. */
  return (uint16_t)(sign | (half + (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0))));
}

/* h (n) = the float16 bits of x (n), each rounded alone: a float16 cache's
 * store in both twins. */
static inline void attn__f16_store(const float* x, size_t n, uint16_t* h) {
  for (size_t i = 0; i < n; i++) h[i] = attn__f16_bits(x[i]);
}

/* Value c of row j of a compact K or V (one element; the scalar kernels'
 * reads, the same float the SIMD loads give). */
static inline float attn__kv_value(const attn__kv_rows* r, size_t j, size_t c) {
  if (r->dtype == ATTN__KV_F16) return attn__f16_value(((const uint16_t*)r->data)[j * r->stride + c]);
  return (float)((const int8_t*)r->data)[j * r->stride + c] * r->scales[j * r->scale_stride];
}

/* A query row q (d) rounded to 16 bits for the integer logits of an int8
 * K: sq = max |q| / 32767, qi = round-to-even(q / sq) in [-32767, 32767];
 * returns sq (0 for a zero row, NaN for a row with NaN or Infinity, whose
 * logits are then NaN as on the float path). Each value moves by at most
 * sq / 2 = max |q| / 65534, next to int8 K's max |k| / 254. */
static inline float attn__q16_row(const float* q, size_t d, int16_t* qi) {
  float amax = 0.0f;
  for (size_t c = 0; c < d; c++) amax = attn__max_nan(amax, fabsf(q[c]));
  const float sq = amax / 32767.0f;
  const int usable = sq > 0.0f && isfinite(sq);
  for (size_t c = 0; c < d; c++) {
    const float x = usable ? nearbyintf(q[c] / sq) : 0.0f;
    qi[c] = (int16_t)(x > 32767.0f ? 32767.0f : x < -32767.0f ? -32767.0f : x);
  }
  return isfinite(amax) ? sq : NAN;
}

/* Key j's logit from an int8 K row and a row qi of attn__q16_row with
 * qs = sq * scale: ((float)(k8_j . qi) * qs) * s_j, the dot exact in
 * integers. */
static inline float attn__i8_logit(const attn__kv_rows* k, size_t j, const int16_t* qi, size_t d, float qs) {
  const int8_t* row = (const int8_t*)k->data + j * k->stride;
  int32_t dot = 0;
  for (size_t c = 0; c < d; c++) dot += (int32_t)row[c] * qi[c];
  return ((float)dot * qs) * k->scales[j * k->scale_stride];
}

#endif /* ATTN_KERNELS_KV_NUMERICS_H */
