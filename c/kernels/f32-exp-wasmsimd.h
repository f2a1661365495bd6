/* f32-exp-wasmsimd.h - four-lane twin of attn__expf_nonpos (f32-exp.h):
 * the same constants and the same operations in the same order, so each lane
 * gives the same bits as the scalar function. Range and error: f32-exp.h. */
#ifndef ATTN_F32_EXP_WASMSIMD_H
#define ATTN_F32_EXP_WASMSIMD_H

#include <wasm_simd128.h>

#include "f32-exp.h"

static inline v128_t attn__expf_nonpos_wasmsimd(v128_t vx) {
  const v128_t vlo = wasm_f32x4_splat(ATTN__EXP_LO);
  const v128_t vmagic = wasm_f32x4_splat(ATTN__EXP_MAGIC);
  const v128_t vbiased = wasm_f32x4_add(wasm_f32x4_mul(vx, wasm_f32x4_splat(ATTN__LOG2E)), vmagic);
  const v128_t vtwo_n = wasm_i32x4_shl(vbiased, 23);
  const v128_t vn = wasm_f32x4_sub(vbiased, vmagic);
  v128_t vr = wasm_f32x4_sub(vx, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_HI)));
  vr = wasm_f32x4_sub(vr, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_LO)));
  v128_t vp = wasm_f32x4_splat(ATTN__EXP_P0);
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vr), wasm_f32x4_splat(ATTN__EXP_P1));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vr), wasm_f32x4_splat(ATTN__EXP_P2));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vr), wasm_f32x4_splat(ATTN__EXP_P3));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vr), wasm_f32x4_splat(ATTN__EXP_P4));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vr), wasm_f32x4_splat(ATTN__EXP_P5));
  const v128_t vr2 = wasm_f32x4_mul(vr, vr);
  const v128_t vy =
      wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(vp, vr2), vr), wasm_f32x4_splat(1.0f));
  /* NaN and lanes below the range give garbage here; fixed below. */
  v128_t vresult = wasm_f32x4_mul(vy, vtwo_n);
  /* x >= lo keeps the polynomial; NaN (x != x) keeps x; the rest is 0. */
  const v128_t vin_range = wasm_f32x4_ge(vx, vlo);
  const v128_t vnan = wasm_f32x4_ne(vx, vx);
  vresult = wasm_v128_and(vresult, vin_range);
  return wasm_v128_or(vresult, wasm_v128_and(vx, vnan));
}

#endif /* ATTN_F32_EXP_WASMSIMD_H */
