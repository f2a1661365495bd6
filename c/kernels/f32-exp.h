/* f32-exp.h - exp(x) for x <= 0, float32, shared by the scalar kernels.
 *
 * The SIMD twin in f32-exp-wasmsimd.h is the same sequence of operations on
 * four lanes, so both builds give the same bits for the same input.
 *
 * Method: n = round(x log2(e)), r = x - n ln2 with ln2 split in two parts
 * (the high part exact in 9 bits, so n * LN2_HI is exact for |n| < 2^15),
 * exp(r) ~ 1 + r + r^2 P(r) on |r| <= ln2 / 2 with Cephes' expf polynomial
 * P of degree 5, times 2^n. The rounding uses the "magic bias" trick (as
 * XNNPACK's exp kernels do): adding 1.5 * 2^23 + 127 to x log2(e) leaves
 * n + 127 in the low mantissa bits, so shifting those bits left by 23 gives
 * the float 2^n, and subtracting the bias again gives n; no float-to-int
 * conversion, which is slow in SIMD128 on x86.
 * Range: x in [-87.33, 0]; n is in [-126, 0] there, so 2^n is a normal float.
 * Below -87.33 the result is 0 (true value < 1.2e-38); -Infinity gives 0,
 * NaN gives NaN. Error: the max relative error against double exp over
 * [-87, 0] is measured by tests/native/test_attention.c: 7.8e-8.
 */
#ifndef ATTN_F32_EXP_H
#define ATTN_F32_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define ATTN__EXP_LO (-87.33f)
#define ATTN__EXP_MAGIC 12583039.0f /* 0x1.8000FEp23: 1.5 * 2^23 + 127 */
#define ATTN__LOG2E 1.44269504088896341f
#define ATTN__LN2_HI 0.693359375f
#define ATTN__LN2_LO (-2.12194440e-4f)
#define ATTN__EXP_P0 1.9875691500e-4f
#define ATTN__EXP_P1 1.3981999507e-3f
#define ATTN__EXP_P2 8.3334519073e-3f
#define ATTN__EXP_P3 4.1665795894e-2f
#define ATTN__EXP_P4 1.6666665459e-1f
#define ATTN__EXP_P5 5.0000001201e-1f

static inline float attn__expf_nonpos(float x) {
  if (!(x >= ATTN__EXP_LO)) return x != x ? x : 0.0f;  /* NaN stays NaN */
  const float biased = x * ATTN__LOG2E + ATTN__EXP_MAGIC;  /* n + 127 in the low bits */
  uint32_t bits;
  memcpy(&bits, &biased, sizeof bits);
  bits <<= 23;  /* the float 2^n, n in [-126, 0] */
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  const float n = biased - ATTN__EXP_MAGIC;
  float r = x - n * ATTN__LN2_HI;
  r = r - n * ATTN__LN2_LO;
  float p = ATTN__EXP_P0;
  p = p * r + ATTN__EXP_P1;
  p = p * r + ATTN__EXP_P2;
  p = p * r + ATTN__EXP_P3;
  p = p * r + ATTN__EXP_P4;
  p = p * r + ATTN__EXP_P5;
  const float r2 = r * r;
  const float y = p * r2 + r + 1.0f;
  return y * two_n;
}

#endif /* ATTN_F32_EXP_H */
