/* f32-tile-wasmsimd.h - the 4 x 8 register tile of dot products that the
 * fused, backward and GEMM kernels share (private): 8 accumulators, two
 * 4-lane vectors of 8 columns per row. 8 accumulators, the 2 column
 * vectors and the 4 splats fit x86-64's 16 vector registers without
 * spilling. */
#ifndef ATTN_F32_TILE_WASMSIMD_H
#define ATTN_F32_TILE_WASMSIMD_H

#include <stddef.h>
#include <wasm_simd128.h>

#include "f32-madd-wasmsimd.h"

/* acc[r][0] holds columns 0..3 of row r, acc[r][1] columns 4..7. */
typedef struct attn__tile4x8 {
  v128_t acc[4][2];
} attn__tile4x8;

/* t plus the sums over p < n of a[a_row[r] + p * a_step] times
 * b[p * b_step + c] (c < 8), each added to t in order of p with
 * attn__f32x4_madd: row r's factor splatted, the 8 columns two vectors at b.
 * When the row offsets a_row are constants after inlining, the four splats
 * share one pointer and the offsets become the loads' immediates, where
 * four row pointers would cost four address updates a step. */
static inline attn__tile4x8 attn__tile4x8_add_wasmsimd(attn__tile4x8 t, size_t n, const float* a, const size_t a_row[4],
                                                       size_t a_step, const float* b, size_t b_step) {
  v128_t vacc0x0123 = t.acc[0][0], vacc0x4567 = t.acc[0][1];
  v128_t vacc1x0123 = t.acc[1][0], vacc1x4567 = t.acc[1][1];
  v128_t vacc2x0123 = t.acc[2][0], vacc2x4567 = t.acc[2][1];
  v128_t vacc3x0123 = t.acc[3][0], vacc3x4567 = t.acc[3][1];
  const size_t a0 = a_row[0], a1 = a_row[1], a2 = a_row[2], a3 = a_row[3];
  for (size_t p = 0; p < n; p++) {
    const v128_t vb0123 = wasm_v128_load(b);
    const v128_t vb4567 = wasm_v128_load(b + 4);
    b += b_step;
    const v128_t va0 = wasm_v128_load32_splat(a + a0);
    const v128_t va1 = wasm_v128_load32_splat(a + a1);
    const v128_t va2 = wasm_v128_load32_splat(a + a2);
    const v128_t va3 = wasm_v128_load32_splat(a + a3);
    a += a_step;
    vacc0x0123 = attn__f32x4_madd(va0, vb0123, vacc0x0123);
    vacc0x4567 = attn__f32x4_madd(va0, vb4567, vacc0x4567);
    vacc1x0123 = attn__f32x4_madd(va1, vb0123, vacc1x0123);
    vacc1x4567 = attn__f32x4_madd(va1, vb4567, vacc1x4567);
    vacc2x0123 = attn__f32x4_madd(va2, vb0123, vacc2x0123);
    vacc2x4567 = attn__f32x4_madd(va2, vb4567, vacc2x4567);
    vacc3x0123 = attn__f32x4_madd(va3, vb0123, vacc3x0123);
    vacc3x4567 = attn__f32x4_madd(va3, vb4567, vacc3x4567);
  }
  return (attn__tile4x8){{{vacc0x0123, vacc0x4567}, {vacc1x0123, vacc1x4567}, {vacc2x0123, vacc2x4567},
                          {vacc3x0123, vacc3x4567}}};
}

/* The same from a tile of zeros. */
static inline attn__tile4x8 attn__tile4x8_wasmsimd(size_t n, const float* a, const size_t a_row[4], size_t a_step,
                                                   const float* b, size_t b_step) {
  const v128_t z = wasm_f32x4_splat(0.0f);
  return attn__tile4x8_add_wasmsimd((attn__tile4x8){{{z, z}, {z, z}, {z, z}, {z, z}}}, n, a, a_row, a_step, b, b_step);
}

/* The tile from rows[r] (8 floats each), and back. */
static inline attn__tile4x8 attn__tile4x8_load(float* const rows[4]) {
  return (attn__tile4x8){{{wasm_v128_load(rows[0]), wasm_v128_load(rows[0] + 4)},
                          {wasm_v128_load(rows[1]), wasm_v128_load(rows[1] + 4)},
                          {wasm_v128_load(rows[2]), wasm_v128_load(rows[2] + 4)},
                          {wasm_v128_load(rows[3]), wasm_v128_load(rows[3] + 4)}}};
}
static inline void attn__tile4x8_store(attn__tile4x8 t, float* const rows[4]) {
  for (size_t r = 0; r < 4; r++) {
    wasm_v128_store(rows[r], t.acc[r][0]);
    wasm_v128_store(rows[r] + 4, t.acc[r][1]);
  }
}

#endif /* ATTN_F32_TILE_WASMSIMD_H */
