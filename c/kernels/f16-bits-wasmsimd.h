/* f16-bits-wasmsimd.h - eight float16 values widened to their bits'
 * float32 (the value times 2^-112, attn__f16_f32_bits) in registers, for
 * the float16 rows' loads and the float16 logits (private). */
#ifndef ATTN_F16_BITS_WASMSIMD_H
#define ATTN_F16_BITS_WASMSIMD_H

#include <wasm_simd128.h>

/* Eight float16 values h (bits) as their bits' float32 (the value times
 * 2^-112) in two vectors: in 16-bit lanes the high half of each result,
 * sign and then h's 12 bits below it (h >> 3 with its sign, the sign's
 * copies masked off; or_hi sets the exponent's top 3 bits of the lanes
 * that are to be Infinity or NaN), and the low half, h's last 3 bits
 * (h << 13); two shuffles pair them. */
static inline void attn__f16x8_bits(v128_t h, v128_t or_hi, v128_t* lo4, v128_t* hi4) {
  const v128_t hi = wasm_v128_or(wasm_v128_and(wasm_i16x8_shr(h, 3), wasm_i16x8_splat((int16_t)0x8fff)), or_hi);
  const v128_t lo = wasm_i16x8_shl(h, 13);
  *lo4 = wasm_i16x8_shuffle(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11);
  *hi4 = wasm_i16x8_shuffle(lo, hi, 4, 12, 5, 13, 6, 14, 7, 15);
}

#endif /* ATTN_F16_BITS_WASMSIMD_H */
