/* f32-exp-wasmsimd.h - four-lane twin of attn__expf_nonpos (f32-exp.h):
 * the same constants and the same operations in the same order, so in the
 * SIMD128 build each lane gives the same bits as the scalar function.
 * x - n ln2 is written x + n (-ln2): negating a constant is exact, so the
 * bits are those of x - n ln2. In the relaxed-SIMD build every mul+add pair
 * is one relaxed_madd (f32-madd-wasmsimd.h): fused, it skips the product's
 * rounding, which leaves n the same or off by one at a rounding tie (both
 * reduce t into range) and the polynomial no less accurate. Range and
 * error: f32-exp.h. */
#ifndef ATTN_F32_EXP_WASMSIMD_H
#define ATTN_F32_EXP_WASMSIMD_H

#include <wasm_simd128.h>

#include "f32-exp.h"
#include "f32-madd-wasmsimd.h"
#include "kernels.h"

/* The parts of exp(x) = s + (t s) p(t), as attn__exp_parts (f32-exp.h):
 * returns t s and stores s = 2^n and p(t). exp adds s, expm1 s - 1
 * (f32-tanh-wasmsimd.h), each with one madd, so both share one reduction,
 * one polynomial and the madd seam. */
static inline v128_t attn__exp_parts_wasmsimd(v128_t vx, v128_t* vs_out, v128_t* vp_out) {
  const v128_t vmagic = wasm_f32x4_splat(ATTN__EXP_MAGIC);
  const v128_t vbiased = attn__f32x4_madd(vx, wasm_f32x4_splat(ATTN__LOG2E), vmagic);
  const v128_t vs = wasm_i32x4_shl(vbiased, 23);
  const v128_t vn = wasm_f32x4_sub(vbiased, vmagic);
  v128_t vt = attn__f32x4_madd(vn, wasm_f32x4_splat(-ATTN__LN2_HI), vx);
  vt = attn__f32x4_madd(vn, wasm_f32x4_splat(-ATTN__LN2_LO), vt);
  v128_t vp = attn__f32x4_madd(wasm_f32x4_splat(ATTN__EXP_C5), vt, wasm_f32x4_splat(ATTN__EXP_C4));
  vp = attn__f32x4_madd(vp, vt, wasm_f32x4_splat(ATTN__EXP_C3));
  vp = attn__f32x4_madd(vp, vt, wasm_f32x4_splat(ATTN__EXP_C2));
  vp = attn__f32x4_madd(vp, vt, wasm_f32x4_splat(ATTN__EXP_C1));
  *vs_out = vs;
  *vp_out = vp;
  return wasm_f32x4_mul(vt, vs);
}

static inline v128_t attn__expf_nonpos_wasmsimd(v128_t vx) {
  v128_t vs, vp;
  const v128_t vts = attn__exp_parts_wasmsimd(vx, &vs, &vp);
  const v128_t vy = attn__f32x4_madd(vts, vp, vs);
  /* Lanes below the cutoff hold garbage and are cleared. A NaN lane is NaN
   * through every step above, and x < cutoff is false for it, so it stays. */
  return wasm_v128_andnot(vy, wasm_f32x4_lt(vx, wasm_f32x4_splat(ATTN__EXP_CUTOFF)));
}

/* The largest of the four lanes, NaN winning (as attn__max_nan). */
static inline float attn__hmax_nan_wasmsimd(v128_t v) {
  return attn__max_nan(attn__max_nan(wasm_f32x4_extract_lane(v, 0), wasm_f32x4_extract_lane(v, 1)),
                       attn__max_nan(wasm_f32x4_extract_lane(v, 2), wasm_f32x4_extract_lane(v, 3)));
}

/* The largest of z (n, a multiple of 4), NaN winning (as attn__max_nan
 * over z). The lanes run f32x4.pmax, one x86 maxps where f32x4.max's NaN
 * and signed-zero rules cost eight instructions: pmax may drop a NaN, so
 * when the lanes' running sum is NaN (a NaN in z, or infinities of both
 * signs) the max is taken again with f32x4.max. It may give -0 where max
 * gives +0; callers only subtract it, exponentiate the difference and add
 * it to a log of a sum of at least 1, which no zero's sign changes. */
static inline float attn__max_nan_of_wasmsimd(const float* z, size_t n) {
  v128_t vmax = wasm_f32x4_splat(-INFINITY), vsum = wasm_f32x4_splat(0.0f);
  for (size_t j = 0; j < n; j += 4) {
    const v128_t vz = wasm_v128_load(z + j);
    vmax = wasm_f32x4_pmax(vmax, vz);
    vsum = wasm_f32x4_add(vsum, vz);
  }
  if (wasm_v128_any_true(wasm_f32x4_ne(vsum, vsum))) {
    vmax = wasm_f32x4_splat(-INFINITY);
    for (size_t j = 0; j < n; j += 4) vmax = wasm_f32x4_max(vmax, wasm_v128_load(z + j));
  }
  return attn__hmax_nan_wasmsimd(vmax);
}

/* z (n, a multiple of 4) = exp(z - m) in place. Returns their sum, taken in
 * four lanes (lane t sums z[j] for j = t mod 4) and then as
 * (l0 + l1) + (l2 + l3); the scalar twins sum in that order too. */
static inline float attn__exp_sub_sum_wasmsimd(float* z, size_t n, float m) {
  const v128_t vm = wasm_f32x4_splat(m);
  v128_t vsum = wasm_f32x4_splat(0.0f);
  for (size_t j = 0; j < n; j += 4) {
    const v128_t vp = attn__expf_nonpos_wasmsimd(wasm_f32x4_sub(wasm_v128_load(z + j), vm));
    wasm_v128_store(z + j, vp);
    vsum = wasm_f32x4_add(vsum, vp);
  }
  return (wasm_f32x4_extract_lane(vsum, 0) + wasm_f32x4_extract_lane(vsum, 1)) +
         (wasm_f32x4_extract_lane(vsum, 2) + wasm_f32x4_extract_lane(vsum, 3));
}

#endif /* ATTN_F32_EXP_WASMSIMD_H */
