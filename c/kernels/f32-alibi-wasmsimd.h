/* f32-alibi-wasmsimd.h - ALiBi's bias added to a row of logits, or
 * written as a row of biases, with SIMD128, the same bits as
 * attn__add_alibi (keys.h): per key one exact conversion of j - ref (the
 * row's reference key, attn__alibi_ref) to float, one rounded product by
 * the slope, one rounded add. The conversion is exact in both while
 * |j - ref| < 2^24; past that the scalar helper runs. */
#ifndef ATTN_F32_ALIBI_WASMSIMD_H
#define ATTN_F32_ALIBI_WASMSIMD_H

#include <wasm_simd128.h>

#include "kernels.h"

/* z[jj] += slope * (j0 + jj - ref) for jj < n, ref row i's reference key. */
static inline void attn__add_alibi_wasmsimd(const attn__head* h, size_t i, size_t j0, size_t n, float* z) {
  if (h->alibi == 0.0f) return;
  const int64_t first = (int64_t)j0 - attn__alibi_ref(h, i);  /* j0 - ref */
  const int64_t exact = INT64_C(1) << 24;
  if (first <= -exact || first + (int64_t)n >= exact) {
    attn__add_alibi(h, i, j0, n, z);
    return;
  }
  const v128_t vslope = wasm_f32x4_splat(h->alibi);
  v128_t vdist = wasm_i32x4_add(wasm_i32x4_splat((int32_t)first), wasm_i32x4_make(0, 1, 2, 3));
  const v128_t vfour = wasm_i32x4_splat(4);
  size_t jj = 0;
  for (; jj + 4 <= n; jj += 4) {
    const v128_t vbias = wasm_f32x4_mul(vslope, wasm_f32x4_convert_i32x4(vdist));
    wasm_v128_store(z + jj, wasm_f32x4_add(wasm_v128_load(z + jj), vbias));
    vdist = wasm_i32x4_add(vdist, vfour);
  }
  for (; jj < n; jj++) z[jj] = z[jj] + h->alibi * (float)(first + (int64_t)jj);
}

/* bias[t] = slope * (first + t) for t < n (a multiple of 4), the bits of
 * attn__alibi_bias at distance j - ref = first + t; 0 (nothing written) when
 * a distance leaves the range where its conversion is exact. */
static inline int attn__alibi_row_wasmsimd(float slope, int64_t first, size_t n, float* bias) {
  const int64_t exact = INT64_C(1) << 24;
  if (first <= -exact || first + (int64_t)n >= exact) return 0;
  const v128_t vslope = wasm_f32x4_splat(slope);
  v128_t vdist = wasm_i32x4_add(wasm_i32x4_splat((int32_t)first), wasm_i32x4_make(0, 1, 2, 3));
  const v128_t vfour = wasm_i32x4_splat(4);
  for (size_t t = 0; t < n; t += 4) {
    wasm_v128_store(bias + t, wasm_f32x4_mul(vslope, wasm_f32x4_convert_i32x4(vdist)));
    vdist = wasm_i32x4_add(vdist, vfour);
  }
  return 1;
}

#endif /* ATTN_F32_ALIBI_WASMSIMD_H */
