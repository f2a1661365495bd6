/* f32-exp.h - exp(x) for x <= 0, float32, shared by the scalar kernels.
 *
 * The SIMD twin in f32-exp-wasmsimd.h is the same sequence of operations on
 * four lanes, so both builds give the same bits for the same input.
 *
 * Method (the "rr2-p5" scheme of XNNPACK's exp kernels, without FMA):
 *   n = round(x log2(e)), by the "magic bias" trick: adding 1.5 * 2^23 + 127
 *     to x log2(e) leaves n + 127 in the low mantissa bits, so shifting those
 *     bits left by 23 gives the float s = 2^n, and subtracting the bias again
 *     gives n; no float-to-int conversion, which is slow in SIMD128 on x86;
 *   t = x - n ln2, with ln2 split in two parts (the high part has 16
 *     significant bits, so n * LN2_HI is exact for the n used here);
 *   exp(t) ~ 1 + t p(t) on |t| <= ln2 / 2, p of degree 4 (minimax
 *     coefficients from XNNPACK), evaluated as s + (t s) p(t);
 *   x below the cutoff gives 0 (tested first here, masked last in SIMD).
 * Range: x >= -87.336544 (the smallest x whose exp is a normal float); n is
 * in [-126, 0] there, so 2^n is a normal float. Below that the result is 0
 * (true value < 1.2e-38); -Infinity gives 0, NaN gives NaN, exp(0) is 1.
 * Error: the max relative error against double exp over [-87, 0] is
 * 1.7e-7 (about 1.4 ulp; tests/native/test_attention.c checks it; a
 * Cephes-style polynomial is more accurate but costs 4 more operations).
 */
#ifndef ATTN_F32_EXP_H
#define ATTN_F32_EXP_H

#include <stdint.h>
#include <string.h>

#define ATTN__EXP_CUTOFF (-0x1.5D589Ep6f)   /* -87.336544: exp below is not normal */
#define ATTN__EXP_MAGIC 0x1.8000FEp23f      /* 1.5 * 2^23 + 127 */
#define ATTN__LOG2E 0x1.715476p+0f
#define ATTN__LN2_HI 0x1.62E400p-1f
#define ATTN__LN2_LO 0x1.7F7D1Cp-20f
#define ATTN__EXP_C1 0x1.FFFFF6p-1f
#define ATTN__EXP_C2 0x1.FFFDC6p-2f
#define ATTN__EXP_C3 0x1.555A80p-3f
#define ATTN__EXP_C4 0x1.573A1Ap-5f
#define ATTN__EXP_C5 0x1.0F9F9Cp-7f

/* The two parts of exp(x) = s + (t s) p(t) for x in the range above: stores
 * s = 2^n and returns (t s) p(t). exp adds s; expm1 adds s - 1 instead
 * (f32-tanh.h), so both share one reduction and one polynomial. */
static inline float attn__exp_parts(float x, float* s_out) {
  const float biased = x * ATTN__LOG2E + ATTN__EXP_MAGIC;  /* n + 127 in the low bits */
  uint32_t bits;
  memcpy(&bits, &biased, sizeof bits);
  bits <<= 23;  /* the float 2^n, n in [-126, 0] */
  float s;
  memcpy(&s, &bits, sizeof s);
  const float n = biased - ATTN__EXP_MAGIC;
  float t = x - n * ATTN__LN2_HI;
  t = t - n * ATTN__LN2_LO;
  float p = ATTN__EXP_C5 * t + ATTN__EXP_C4;
  p = p * t + ATTN__EXP_C3;
  p = p * t + ATTN__EXP_C2;
  p = p * t + ATTN__EXP_C1;
  t = t * s;
  *s_out = s;
  return t * p;
}

static inline float attn__expf_nonpos(float x) {
  if (x < ATTN__EXP_CUTOFF) return 0.0f; /* and -Infinity; NaN goes on */
  float s;
  const float tsp = attn__exp_parts(x, &s);
  return tsp + s;
}

#endif /* ATTN_F32_EXP_H */
