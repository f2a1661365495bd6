/* f32-exp-wasmsimd.h - four-lane twin of attn__expf_nonpos (f32-exp.h):
 * the same constants and the same operations in the same order, so each lane
 * gives the same bits as the scalar function. Range and error: f32-exp.h. */
#ifndef ATTN_F32_EXP_WASMSIMD_H
#define ATTN_F32_EXP_WASMSIMD_H

#include <wasm_simd128.h>

#include "f32-exp.h"
#include "kernels.h"

static inline v128_t attn__expf_nonpos_wasmsimd(v128_t vx) {
  const v128_t vmagic = wasm_f32x4_splat(ATTN__EXP_MAGIC);
  const v128_t vbiased = wasm_f32x4_add(wasm_f32x4_mul(vx, wasm_f32x4_splat(ATTN__LOG2E)), vmagic);
  const v128_t vs = wasm_i32x4_shl(vbiased, 23);
  const v128_t vn = wasm_f32x4_sub(vbiased, vmagic);
  v128_t vt = wasm_f32x4_sub(vx, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_HI)));
  vt = wasm_f32x4_sub(vt, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_LO)));
  v128_t vp = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(ATTN__EXP_C5), vt), wasm_f32x4_splat(ATTN__EXP_C4));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C3));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C2));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C1));
  vt = wasm_f32x4_mul(vt, vs);
  const v128_t vy = wasm_f32x4_add(wasm_f32x4_mul(vt, vp), vs);
  /* Lanes below the cutoff hold garbage and are cleared. A NaN lane is NaN
   * through every step above, and x < cutoff is false for it, so it stays. */
  return wasm_v128_andnot(vy, wasm_f32x4_lt(vx, wasm_f32x4_splat(ATTN__EXP_CUTOFF)));
}

/* The largest of the four lanes, NaN winning (as attn__max_nan). */
static inline float attn__hmax_nan_wasmsimd(v128_t v) {
  return attn__max_nan(attn__max_nan(wasm_f32x4_extract_lane(v, 0), wasm_f32x4_extract_lane(v, 1)),
                       attn__max_nan(wasm_f32x4_extract_lane(v, 2), wasm_f32x4_extract_lane(v, 3)));
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
