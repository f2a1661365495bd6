/* f32-pack-wasmsimd.c - rows in panels of 8 rows and V in panels of 8
 * columns, as f32-pack-scalar.c.
 * A full panel is transposed four elements at a time: 8 row loads, two 4x4
 * transposes (8 shuffles each, which V8 lowers to unpck/movlh/movhl), 8
 * stores, where a scalar gather costs several cycles an element
 * (bench/RESULTS.md). */
#include <assert.h>
#include <wasm_simd128.h>

#include "kernels.h"

/* Columns p .. p+3 of rows r0..r3 (4 floats each) as 4 vectors, one per
 * column: out[i] = (r0[p+i], r1[p+i], r2[p+i], r3[p+i]). */
static inline void attn__transpose4(v128_t r0, v128_t r1, v128_t r2, v128_t r3, v128_t out[4]) {
  const v128_t t01lo = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5);  /* r0p0 r1p0 r0p1 r1p1 */
  const v128_t t23lo = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);  /* r2p0 r3p0 r2p1 r3p1 */
  const v128_t t01hi = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);  /* r0p2 r1p2 r0p3 r1p3 */
  const v128_t t23hi = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);  /* r2p2 r3p2 r2p3 r3p3 */
  out[0] = wasm_i32x4_shuffle(t01lo, t23lo, 0, 1, 4, 5);
  out[1] = wasm_i32x4_shuffle(t01lo, t23lo, 2, 3, 6, 7);
  out[2] = wasm_i32x4_shuffle(t01hi, t23hi, 0, 1, 4, 5);
  out[3] = wasm_i32x4_shuffle(t01hi, t23hi, 2, 3, 6, 7);
}

void attn__f32_pack_rows_wasmsimd(const float* x, size_t x_stride, size_t n, size_t d, float* panels) {
  assert(x != NULL && panels != NULL && ATTN__PAD == 8);
  const size_t full = n / ATTN__PAD;  /* panels with 8 real rows */
  for (size_t s = 0; s < full; s++) {
    const float* r = x + s * ATTN__PAD * x_stride;  /* (8, d) rows x_stride apart */
    float* dst = panels + s * d * ATTN__PAD;     /* (d, 8) */
    size_t p = 0;
    for (; p + 4 <= d; p += 4) {
      v128_t lo[4], hi[4];  /* rows 0-3 and 4-7 of columns p .. p+3 */
      attn__transpose4(wasm_v128_load(r + p), wasm_v128_load(r + x_stride + p), wasm_v128_load(r + 2 * x_stride + p),
                       wasm_v128_load(r + 3 * x_stride + p), lo);
      attn__transpose4(wasm_v128_load(r + 4 * x_stride + p), wasm_v128_load(r + 5 * x_stride + p),
                       wasm_v128_load(r + 6 * x_stride + p), wasm_v128_load(r + 7 * x_stride + p), hi);
      for (size_t i = 0; i < 4; i++) {
        wasm_v128_store(dst + (p + i) * ATTN__PAD, lo[i]);
        wasm_v128_store(dst + (p + i) * ATTN__PAD + 4, hi[i]);
      }
    }
    for (; p < d; p++) {
      for (size_t jj = 0; jj < ATTN__PAD; jj++) dst[p * ATTN__PAD + jj] = r[jj * x_stride + p];
    }
  }
  if (full * ATTN__PAD < n) {
    const size_t n_rows = n - full * ATTN__PAD;
    const float* r = x + full * ATTN__PAD * x_stride;  /* (n_rows, d) rows x_stride apart */
    float* dst = panels + full * d * ATTN__PAD;     /* (d, 8) */
    for (size_t p = 0; p < d; p++) {
      for (size_t jj = 0; jj < ATTN__PAD; jj++) dst[p * ATTN__PAD + jj] = jj < n_rows ? r[jj * x_stride + p] : 0.0f;
    }
  }
}

void attn__f32_pack_cols_wasmsimd(const float* v, size_t v_stride, size_t n_k, size_t d_v, float* panels) {
  assert(v != NULL && panels != NULL && ATTN__PAD == 8);
  const size_t full = d_v / ATTN__PAD;  /* panels with 8 real columns */
  for (size_t j = 0; j < n_k; j++) {
    const float* row = v + j * v_stride;  /* (d_v) */
    for (size_t s = 0; s < full; s++) {
      float* dst = panels + (s * n_k + j) * ATTN__PAD;  /* (8) */
      wasm_v128_store(dst, wasm_v128_load(row + s * ATTN__PAD));
      wasm_v128_store(dst + 4, wasm_v128_load(row + s * ATTN__PAD + 4));
    }
    if (full * ATTN__PAD < d_v) {
      float* dst = panels + (full * n_k + j) * ATTN__PAD;  /* (8) */
      for (size_t cc = 0; cc < ATTN__PAD; cc++) {
        const size_t c = full * ATTN__PAD + cc;
        dst[cc] = c < d_v ? row[c] : 0.0f;
      }
    }
  }
}
