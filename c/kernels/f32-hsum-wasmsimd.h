/* f32-hsum-wasmsimd.h - four vectors' lanes added across, one result lane
 * per vector, for the kernels that take four dot products at once (the
 * decode kernel's logits, float32 and from compact caches). */
#ifndef ATTN_F32_HSUM_WASMSIMD_H
#define ATTN_F32_HSUM_WASMSIMD_H

#include <wasm_simd128.h>

/* Lane t of the result: (a_t[0] + a_t[2]) + (a_t[1] + a_t[3]). */
static inline v128_t attn__hsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t x01 = wasm_f32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t x23 = wasm_f32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

/* Lane t of the result: the sum of a_t's four lanes (integers: exact in
 * any order). */
static inline v128_t attn__hsum4_i32(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t x01 = wasm_i32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t x23 = wasm_i32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

#endif /* ATTN_F32_HSUM_WASMSIMD_H */
