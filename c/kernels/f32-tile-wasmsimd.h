/* f32-tile-wasmsimd.h - the 4 x 8 register tile of dot products that the
 * fused, backward and GEMM kernels share (private): 8 accumulators, two
 * 4-lane vectors of 8 columns per row. 8 accumulators, the 2 column
 * vectors and the 4 splats fit x86-64's 16 vector registers without
 * spilling. */
#ifndef ATTN_F32_TILE_WASMSIMD_H
#define ATTN_F32_TILE_WASMSIMD_H

#include <assert.h>
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
  /* The loop ends on b's address: no counter beside the two pointers, one
   * instruction fewer a step for a core whose limit is how many it
   * dispatches (Zen's mul and add pipes are separate). b_step > 0: every
   * caller's b is rows of at least 8 floats. */
  assert(b_step > 0 || n == 0);
  for (const float* const b_end = b + n * b_step; b != b_end;) {
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

/* The tile's scalar column: s[r] += the sum over p < n of
 * a[a_row[r] + p * a_step] times b[p * b_step], in order of p, each product
 * rounded before its add (as the scalar twins, in every build). */
static inline void attn__tile4x1_add(float s[4], size_t n, const float* a, const size_t a_row[4], size_t a_step,
                                     const float* b, size_t b_step) {
  float s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
  for (size_t p = 0; p < n; p++) {
    const float bp = b[p * b_step];
    const float* ap = a + p * a_step;
    s0 = s0 + ap[a_row[0]] * bp;
    s1 = s1 + ap[a_row[1]] * bp;
    s2 = s2 + ap[a_row[2]] * bp;
    s3 = s3 + ap[a_row[3]] * bp;
  }
  s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
}

/* One row of the tile: out (cols) += the sum over p < n of a[p * a_step]
 * times b[p * b_step + c], in order of p: 4 columns a vector with
 * attn__f32x4_madd, the last cols mod 4 one at a time as the scalar column. */
static inline void attn__row_add_wasmsimd(float* out, size_t cols, size_t n, const float* a, size_t a_step,
                                          const float* b, size_t b_step) {
  size_t c = 0;
  for (; c + 4 <= cols; c += 4) {
    v128_t vacc = wasm_v128_load(out + c);
    for (size_t p = 0; p < n; p++) {
      vacc = attn__f32x4_madd(wasm_v128_load32_splat(a + p * a_step), wasm_v128_load(b + p * b_step + c), vacc);
    }
    wasm_v128_store(out + c, vacc);
  }
  for (; c < cols; c++) {
    float sum = out[c];
    for (size_t p = 0; p < n; p++) sum = sum + a[p * a_step] * b[p * b_step + c];
    out[c] = sum;
  }
}

/* out (rows, cols; rows out_stride apart) += A B over p < n, A's element
 * (i, p) at a[i * a_row + p * a_step], B's (p, c) at b[p * b_step + c]:
 * each element sums its products in order of p. Four rows at a time: 8
 * columns a tile, then the scalar column; the last rows one at a time
 * (attn__row_add_wasmsimd). Always inlined: a_row and a_step are then
 * constants, and the tile's row offsets the loads' immediates. */
static inline __attribute__((always_inline)) void attn__rows_add_wasmsimd(float* out, size_t out_stride, size_t rows,
                                                                         size_t cols, size_t n, const float* a,
                                                                         size_t a_row, size_t a_step, const float* b,
                                                                         size_t b_step) {
  const size_t a_rows[4] = {0, a_row, 2 * a_row, 3 * a_row};
  size_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    float* const out0 = out + i * out_stride;
    const float* a_i = a + i * a_row;
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      float* const out_rows[4] = {out0 + c, out0 + out_stride + c, out0 + 2 * out_stride + c,
                                  out0 + 3 * out_stride + c};
      const attn__tile4x8 t = attn__tile4x8_load(out_rows);
      attn__tile4x8_store(attn__tile4x8_add_wasmsimd(t, n, a_i, a_rows, a_step, b + c, b_step), out_rows);
    }
    for (; c < cols; c++) {
      float s[4] = {out0[c], out0[out_stride + c], out0[2 * out_stride + c], out0[3 * out_stride + c]};
      attn__tile4x1_add(s, n, a_i, a_rows, a_step, b + c, b_step);
      out0[c] = s[0], out0[out_stride + c] = s[1], out0[2 * out_stride + c] = s[2], out0[3 * out_stride + c] = s[3];
    }
  }
  for (; i < rows; i++) attn__row_add_wasmsimd(out + i * out_stride, cols, n, a + i * a_row, a_step, b, b_step);
}

#endif /* ATTN_F32_TILE_WASMSIMD_H */
