/* f32-gemm-wasmsimd.c - c (m, n) = a (m, k) b (k, n) with SIMD128.
 * Same algorithm as f32-gemm-scalar.c: each c[i][j] sums k in order 0..k-1,
 * product rounded before the add, so both give identical bits (the relaxed
 * build fuses them, f32-madd-wasmsimd.h, and rounds once).
 * Tile: 4 rows x 8 columns (the shared tile, f32-tile-wasmsimd.h), then 4 rows x 4 columns, then a
 * scalar column tail that never reads b past column n. */
#include <assert.h>
#include <wasm_simd128.h>

#include "f32-madd-wasmsimd.h"
#include "f32-tile-wasmsimd.h"
#include "kernels.h"

static void attn__gemm_rows_wasmsimd(size_t rows, size_t n, size_t k, const float* a,
                                     size_t a_stride, const float* b, size_t b_stride, float* c,
                                     size_t c_stride) {
  assert(rows >= 1 && rows <= 4);
  /* Rows past `rows` alias the last real row: computed, never stored. */
  const float* a0 = a;
  const float* a1 = rows > 1 ? a0 + a_stride : a0;
  const float* a2 = rows > 2 ? a1 + a_stride : a1;
  const float* a3 = rows > 3 ? a2 + a_stride : a2;
  const size_t a_rows[4] = {0, (size_t)(a1 - a0), (size_t)(a2 - a0), (size_t)(a3 - a0)};
  float* c0 = c;
  float* c1 = rows > 1 ? c0 + c_stride : c0;
  float* c2 = rows > 2 ? c1 + c_stride : c1;
  float* c3 = rows > 3 ? c2 + c_stride : c2;
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const attn__tile4x8 t = attn__tile4x8_wasmsimd(k, a0, a_rows, 1, b + j, b_stride);
    /* Store the aliased rows first so the real rows win. */
    wasm_v128_store(c3 + j, t.acc[3][0]);
    wasm_v128_store(c3 + j + 4, t.acc[3][1]);
    wasm_v128_store(c2 + j, t.acc[2][0]);
    wasm_v128_store(c2 + j + 4, t.acc[2][1]);
    wasm_v128_store(c1 + j, t.acc[1][0]);
    wasm_v128_store(c1 + j + 4, t.acc[1][1]);
    wasm_v128_store(c0 + j, t.acc[0][0]);
    wasm_v128_store(c0 + j + 4, t.acc[0][1]);
  }
  for (; j + 4 <= n; j += 4) {
    v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
    for (size_t p = 0; p < k; p++) {
      const v128_t vb = wasm_v128_load(b + p * b_stride + j);
      vacc0 = attn__f32x4_madd(wasm_f32x4_splat(a0[p]), vb, vacc0);
      vacc1 = attn__f32x4_madd(wasm_f32x4_splat(a1[p]), vb, vacc1);
      vacc2 = attn__f32x4_madd(wasm_f32x4_splat(a2[p]), vb, vacc2);
      vacc3 = attn__f32x4_madd(wasm_f32x4_splat(a3[p]), vb, vacc3);
    }
    wasm_v128_store(c3 + j, vacc3);
    wasm_v128_store(c2 + j, vacc2);
    wasm_v128_store(c1 + j, vacc1);
    wasm_v128_store(c0 + j, vacc0);
  }
  for (; j < n; j++) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    attn__tile4x1_add(acc, k, a0, a_rows, 1, b + j, b_stride);
    c3[j] = acc[3];
    c2[j] = acc[2];
    c1[j] = acc[1];
    c0[j] = acc[0];
  }
}

void attn__f32_gemm_wasmsimd(size_t m, size_t n, size_t k, const float* a, size_t a_stride,
                             const float* b, size_t b_stride, float* c, size_t c_stride) {
  assert(a != NULL && b != NULL && c != NULL);
  for (size_t i = 0; i < m; i += 4) {
    const size_t rows = m - i < 4 ? m - i : 4;
    attn__gemm_rows_wasmsimd(rows, n, k, a + i * a_stride, a_stride, b, b_stride,
                             c + i * c_stride, c_stride);
  }
}
