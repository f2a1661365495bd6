/* f16-logits-wasmsimd.c - the decode kernel's logits of four rows from a
 * float16 K read in place with SIMD128, the bits of f16-logits-scalar.c
 * (read that first; kernels.h states the contract). */
#include <wasm_simd128.h>

#include "f16-bits-wasmsimd.h"
#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "kernels.h"

/* Logits of four rows q (4, d_k) (times 2^112) for float16 keys [j0, j1)
 * (bits, rows k_stride apart), d_k a multiple of 8, each widened in
 * registers and used by the four rows: key j's logit of row t goes to
 * z[t][j - j0], times scale[t]. One accumulator per row and key holds the
 * partial sums over p mod 4 in p order, added as attn__hsum4 adds them (its
 * lane t is row t): the bits of attn__f32_logits_wasmsimd. Returns 0 when a key
 * has exponent 31 (Infinity or NaN), whose logits are then wrong. */
int attn__f16_f32_logits4_wasmsimd(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1,
                                   size_t d_k, const float scale[4], float* const z[4]) {
  const v128_t vscale = wasm_v128_load(scale);
  const float* q0 = q;  /* (d_k) each */
  const float* q1 = q0 + d_k;
  const float* q2 = q1 + d_k;
  const float* q3 = q2 + d_k;
  const v128_t vzero = wasm_i16x8_splat(0), vabs = wasm_i16x8_splat(0x7fff);
  v128_t vmax = vzero;  /* max of |h| */
  for (size_t j = j0; j < j1; j += 2) {
    const int two = j + 1 < j1;
    const uint16_t* ka = k + j * k_stride;  /* (d_k) key j, and j + 1 when two */
    const uint16_t* kb = two ? ka + k_stride : ka;
    v128_t va0 = wasm_f32x4_splat(0.0f), va1 = va0, va2 = va0, va3 = va0;
    v128_t vb0 = va0, vb1 = va0, vb2 = va0, vb3 = va0;
    for (size_t p = 0; p < d_k; p += 8) {
      const v128_t ha = wasm_v128_load(ka + p), hb = wasm_v128_load(kb + p);
      vmax = wasm_u16x8_max(vmax, wasm_u16x8_max(wasm_v128_and(ha, vabs), wasm_v128_and(hb, vabs)));
      v128_t ka_lo, ka_hi, kb_lo, kb_hi;
      attn__f16x8_bits(ha, vzero, &ka_lo, &ka_hi);
      attn__f16x8_bits(hb, vzero, &kb_lo, &kb_hi);
      v128_t vq = wasm_v128_load(q0 + p), vq4 = wasm_v128_load(q0 + p + 4);
      va0 = attn__f32x4_madd(vq4, ka_hi, attn__f32x4_madd(vq, ka_lo, va0));
      vb0 = attn__f32x4_madd(vq4, kb_hi, attn__f32x4_madd(vq, kb_lo, vb0));
      vq = wasm_v128_load(q1 + p), vq4 = wasm_v128_load(q1 + p + 4);
      va1 = attn__f32x4_madd(vq4, ka_hi, attn__f32x4_madd(vq, ka_lo, va1));
      vb1 = attn__f32x4_madd(vq4, kb_hi, attn__f32x4_madd(vq, kb_lo, vb1));
      vq = wasm_v128_load(q2 + p), vq4 = wasm_v128_load(q2 + p + 4);
      va2 = attn__f32x4_madd(vq4, ka_hi, attn__f32x4_madd(vq, ka_lo, va2));
      vb2 = attn__f32x4_madd(vq4, kb_hi, attn__f32x4_madd(vq, kb_lo, vb2));
      vq = wasm_v128_load(q3 + p), vq4 = wasm_v128_load(q3 + p + 4);
      va3 = attn__f32x4_madd(vq4, ka_hi, attn__f32x4_madd(vq, ka_lo, va3));
      vb3 = attn__f32x4_madd(vq4, kb_hi, attn__f32x4_madd(vq, kb_lo, vb3));
    }
    const v128_t vza = wasm_f32x4_mul(attn__hsum4(va0, va1, va2, va3), vscale);
    z[0][j - j0] = wasm_f32x4_extract_lane(vza, 0);
    z[1][j - j0] = wasm_f32x4_extract_lane(vza, 1);
    z[2][j - j0] = wasm_f32x4_extract_lane(vza, 2);
    z[3][j - j0] = wasm_f32x4_extract_lane(vza, 3);
    if (!two) break;
    const v128_t vzb = wasm_f32x4_mul(attn__hsum4(vb0, vb1, vb2, vb3), vscale);
    z[0][j + 1 - j0] = wasm_f32x4_extract_lane(vzb, 0);
    z[1][j + 1 - j0] = wasm_f32x4_extract_lane(vzb, 1);
    z[2][j + 1 - j0] = wasm_f32x4_extract_lane(vzb, 2);
    z[3][j + 1 - j0] = wasm_f32x4_extract_lane(vzb, 3);
  }
  return !wasm_v128_any_true(wasm_u16x8_ge(vmax, wasm_i16x8_splat(0x7c00)));
}
