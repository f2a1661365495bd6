/* f32-tanh-wasmsimd.h - four-lane twin of attn__tanhf (f32-tanh.h): the same
 * constants and operations in the same order, so each lane gives the same
 * bits as the scalar function. Method and error: f32-tanh.h. */
#ifndef ATTN_F32_TANH_WASMSIMD_H
#define ATTN_F32_TANH_WASMSIMD_H

#include <wasm_simd128.h>

#include "f32-tanh.h"

static inline v128_t attn__tanhf_wasmsimd(v128_t vx) {
  const v128_t vsign = wasm_v128_and(vx, wasm_i32x4_splat((int32_t)0x80000000u));
  const v128_t va = wasm_v128_xor(vx, vsign);
  const v128_t vy = wasm_f32x4_mul(va, wasm_f32x4_splat(-2.0f));
  const v128_t vmagic = wasm_f32x4_splat(ATTN__EXP_MAGIC);
  const v128_t vbiased = wasm_f32x4_add(wasm_f32x4_mul(vy, wasm_f32x4_splat(ATTN__LOG2E)), vmagic);
  const v128_t vs = wasm_i32x4_shl(vbiased, 23);
  const v128_t vn = wasm_f32x4_sub(vbiased, vmagic);
  v128_t vt = wasm_f32x4_sub(vy, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_HI)));
  vt = wasm_f32x4_sub(vt, wasm_f32x4_mul(vn, wasm_f32x4_splat(ATTN__LN2_LO)));
  v128_t vp = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(ATTN__EXP_C5), vt), wasm_f32x4_splat(ATTN__EXP_C4));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C3));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C2));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__EXP_C1));
  vt = wasm_f32x4_mul(vt, vs);
  v128_t ve = wasm_f32x4_add(wasm_f32x4_mul(vt, vp), wasm_f32x4_sub(vs, wasm_f32x4_splat(1.0f)));
  ve = wasm_v128_bitselect(wasm_f32x4_splat(-1.0f), ve, wasm_f32x4_lt(vy, wasm_f32x4_splat(ATTN__EXPM1_CUTOFF)));
  v128_t vr = wasm_f32x4_div(wasm_f32x4_neg(ve), wasm_f32x4_add(ve, wasm_f32x4_splat(2.0f)));
  vr = wasm_v128_bitselect(va, vr, wasm_f32x4_lt(va, wasm_f32x4_splat(ATTN__TANH_TINY)));
  return wasm_v128_or(vr, vsign);
}

/* z (n, a multiple of 4) = c tanh(z / c) in place. */
static inline void attn__softcap_wasmsimd(float* z, size_t n, float c) {
  const v128_t vc = wasm_f32x4_splat(c);
  for (size_t j = 0; j < n; j += 4) {
    wasm_v128_store(z + j, wasm_f32x4_mul(vc, attn__tanhf_wasmsimd(wasm_f32x4_div(wasm_v128_load(z + j), vc))));
  }
}

#endif /* ATTN_F32_TANH_WASMSIMD_H */
