/* f32-madd-wasmsimd.h - a * b + c on four lanes, the one operation in which
 * the SIMD128 and the relaxed-SIMD builds differ.
 *
 * Built with -mrelaxed-simd (dist/attention-relaxed.wasm) it is
 * f32x4.relaxed_madd: fused (one rounding) where the CPU has FMA, mul then
 * add (two roundings) where it has not, so that module's bits depend on the
 * machine. Otherwise it is f32x4.mul then f32x4.add, the same bits on every
 * engine; the SIMD128 build (and so loadAttention({ deterministic: true }))
 * keeps that guarantee, and matches the scalar twins where they promise it.
 * The kernels call this for every multiply-accumulate of their hot loops; a
 * multiply or add on its own stays a plain f32x4.mul or f32x4.add. */
#ifndef ATTN_F32_MADD_WASMSIMD_H
#define ATTN_F32_MADD_WASMSIMD_H

#include <wasm_simd128.h>

static inline v128_t attn__f32x4_madd(v128_t a, v128_t b, v128_t c) {
#ifdef __wasm_relaxed_simd__
  return wasm_f32x4_relaxed_madd(a, b, c);
#else
  return wasm_f32x4_add(c, wasm_f32x4_mul(a, b));
#endif
}

#endif /* ATTN_F32_MADD_WASMSIMD_H */
