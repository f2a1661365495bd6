/* f32-tanh-wasmsimd.h - four-lane twin of attn__tanhf (f32-tanh.h): expm1
 * from the exp parts of f32-exp-wasmsimd.h, then the same operations in the
 * same order, so in the SIMD128 build each lane gives the same bits as the
 * scalar function. In the relaxed-SIMD build every mul+add pair of the exp
 * parts and expm1's last add are one relaxed_madd, as in exp
 * (f32-exp-wasmsimd.h says what fusing changes). Method and error:
 * f32-tanh.h. */
#ifndef ATTN_F32_TANH_WASMSIMD_H
#define ATTN_F32_TANH_WASMSIMD_H

#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-tanh.h"

static inline v128_t attn__tanhf_wasmsimd(v128_t vx) {
  const v128_t vsign = wasm_v128_and(vx, wasm_i32x4_splat((int32_t)0x80000000u));
  const v128_t va = wasm_v128_xor(vx, vsign);
  const v128_t vy = wasm_f32x4_mul(va, wasm_f32x4_splat(-2.0f));
  v128_t vs, vp;
  const v128_t vts = attn__exp_parts_wasmsimd(vy, &vs, &vp);
  v128_t ve = attn__f32x4_madd(vts, vp, wasm_f32x4_sub(vs, wasm_f32x4_splat(1.0f)));  /* expm1(y) */
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
