/* f32-tanh.h - tanh(x) in float32 for logit soft-capping, shared by the
 * scalar kernels. The SIMD twin in f32-tanh-wasmsimd.h is the same sequence
 * of operations on four lanes, so both builds give the same bits.
 *
 * Method: tanh is odd, so with a = |x| and e = expm1(-2a) in [-1, 0],
 *   tanh(a) = (1 - exp(-2a)) / (1 + exp(-2a)) = -e / (2 + e),
 * and the sign of x is put back. expm1 comes from the exp polynomial of
 * f32-exp.h: exp(y) = s + (t s) p(t) with s = 2^n, so
 *   expm1(y) = (s - 1) + (t s) p(t),
 * where s - 1 is exact; for |y| <= ln2 / 2 (n = 0) this is t p(t), with no
 * cancellation, so small arguments keep their relative accuracy.
 * Below y = -18 expm1 is -1 to float precision (tanh = 1). For a < 2^-12,
 * tanh(a) = a to float precision (the next term, a^3 / 3, is below half an
 * ulp of a), so a is returned. NaN stays NaN, +-Infinity give +-1.
 * Error against double tanh, checked by tests/native/test_attention.c over
 * [-20, 20]: at most 1.5e-7 absolute (about 1.3 ulp of results near 1); in
 * ulp of the result at most 11, reached for |x| around 0.06, where the exp
 * polynomial's absolute error of about 1e-7 is large next to expm1 ~ -2|x|.
 * For softcap, c tanh(x / c), that is an error of at most 1.5e-7 c. */
#ifndef ATTN_F32_TANH_H
#define ATTN_F32_TANH_H

#include <stdint.h>
#include <string.h>

#include "f32-exp.h"

#define ATTN__EXPM1_CUTOFF (-18.0f)  /* expm1 below is -1 in float */
#define ATTN__TANH_TINY 0x1p-12f     /* tanh(a) = a below */

static inline float attn__tanhf(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  float a;
  memcpy(&a, &bits, sizeof a);  /* |x| */
  const float y = a * -2.0f;
  float s;
  const float tsp = attn__exp_parts(y, &s);
  float e = tsp + (s - 1.0f); /* expm1(y) */
  if (y < ATTN__EXPM1_CUTOFF) e = -1.0f;
  float r = -e / (e + 2.0f);
  if (a < ATTN__TANH_TINY) r = a;
  memcpy(&bits, &r, sizeof bits);
  bits |= sign;
  memcpy(&r, &bits, sizeof r);
  return r;
}

/* softcap(x) = c tanh(x / c), c > 0. */
static inline float attn__softcapf(float x, float c) { return c * attn__tanhf(x / c); }

#endif /* ATTN_F32_TANH_H */
