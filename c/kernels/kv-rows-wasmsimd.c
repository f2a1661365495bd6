/* kv-rows-wasmsimd.c - rows of a compact KV cache to and from float32 with
 * SIMD128; same values as kv-rows-scalar.c (read that first):
 *   float16: eight halves a load, each shuffled into the high half of a
 *            32-bit lane (h << 16), shifted right by 3 with its sign
 *            (sign, then the 5 exponent and 10 mantissa bits at a float32's
 *            exponent and mantissa), the sign's copies masked off and
 *            multiplied by 2^112 (the rebias, exact; halves' subnormals
 *            land on float32 subnormals): 4 operations per 4 values.
 *            Exponent 31 (Infinity, NaN) would come out finite, so the
 *            loads keep the max of |h| and redo the rows in the exact
 *            four-lane form of attn__f16_value when one of them holds it;
 *   int8:    eight bytes a load, sign-extended to 32-bit lanes, converted
 *            (exactly) and multiplied by the row's scale;
 *   store:   int8 rows with the row max of |x| and x / s rounded to
 *            nearest even in lanes; float16 through attn__f16_bits.
 * and float16 as its bits' float32, which needs no rebias multiply (the
 * decode kernel moves the 2^112 to q and the weights). */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f16-bits-wasmsimd.h"
#include "f32-exp-wasmsimd.h"
#include "kernels.h"

/* Four float16 values (bits in the low 16 of each 32-bit lane) as float32. */
static inline v128_t attn__f16x4_value(v128_t h) {
  const v128_t o = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t special = wasm_i32x4_eq(wasm_v128_and(h, wasm_i32x4_splat(0x7c00)), wasm_i32x4_splat(0x7c00));
  v128_t f = wasm_f32x4_mul(o, wasm_f32x4_splat(0x1p112f));
  f = wasm_v128_bitselect(wasm_v128_or(o, wasm_i32x4_splat(0x7f800000)), f, special);
  return wasm_v128_or(f, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
}

static inline void attn__f16x8_bits_store(v128_t h, v128_t or_hi, float* out) {
  v128_t lo4, hi4;
  attn__f16x8_bits(h, or_hi, &lo4, &hi4);
  wasm_v128_store(out, lo4);
  wasm_v128_store(out + 4, hi4);
}

/* Rows [j0, j0 + n) of a float16 K or V, their first d8 values (d rounded
 * down to 8) as their bits' float32, times 2^112 when `value` (the values,
 * exact where finite); returns whether a value had exponent 31 (Infinity
 * or NaN, which this leaves wrong). Called with a constant `value`. */
static inline int attn__f16_rows(const attn__kv_rows* src, size_t j0, size_t n, size_t d8, float* dst, size_t dst_stride,
                                 int value) {
  const v128_t vzero = wasm_i16x8_splat(0), vabs = wasm_i16x8_splat(0x7fff), vup = wasm_f32x4_splat(0x1p112f);
  v128_t vmax = vzero;  /* max of |h| over every lane */
  for (size_t j = 0; j < n; j++) {
    const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    float* out = dst + j * dst_stride;
    for (size_t c = 0; c < d8; c += 8) {
      const v128_t h = wasm_v128_load(row + c);
      vmax = wasm_u16x8_max(vmax, wasm_v128_and(h, vabs));
      v128_t lo4, hi4;
      attn__f16x8_bits(h, vzero, &lo4, &hi4);
      if (value) lo4 = wasm_f32x4_mul(lo4, vup), hi4 = wasm_f32x4_mul(hi4, vup);
      wasm_v128_store(out + c, lo4);
      wasm_v128_store(out + c + 4, hi4);
    }
  }
  return wasm_v128_any_true(wasm_u16x8_ge(vmax, wasm_i16x8_splat(0x7c00)));
}

void attn__f16_f32_kv_load_bits_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                         size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_F16);
  const size_t d8 = d / 8 * 8;
  const v128_t vinf = wasm_i16x8_splat(0x7c00);
  const int special = attn__f16_rows(src, j0, n, d8, dst, dst_stride, 0);
  for (size_t j = 0; j < n; j++) {
    const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    for (size_t c = d8; c < d; c++) dst[j * dst_stride + c] = attn__f16_value(row[c]) * 0x1p-112f;
  }
  if (!special) return;
  /* Exponent 31 somewhere: the rows again, those lanes as Infinity or NaN. */
  for (size_t j = 0; j < n; j++) {
    const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    for (size_t c = 0; c < d8; c += 8) {
      const v128_t h = wasm_v128_load(row + c);
      const v128_t special = wasm_i16x8_eq(wasm_v128_and(h, vinf), vinf);
      attn__f16x8_bits_store(h, wasm_v128_and(special, wasm_i16x8_splat(0x7000)), dst + j * dst_stride + c);
    }
  }
}

void attn__f16_f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
                                    size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_F16);
  const size_t d8 = d / 8 * 8;
  const int special = attn__f16_rows(src, j0, n, d8, dst, dst_stride, 1);
  for (size_t j = 0; j < n; j++) {
    float* out = dst + j * dst_stride;                                          /* (d) */
    const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    for (size_t c = 0; special && c < d8; c += 8) {
      const v128_t h = wasm_v128_load(row + c);
      wasm_v128_store(out + c, attn__f16x4_value(wasm_u32x4_extend_low_u16x8(h)));
      wasm_v128_store(out + c + 4, attn__f16x4_value(wasm_u32x4_extend_high_u16x8(h)));
    }
    for (size_t c = d8; c < d; c++) out[c] = attn__kv_value(src, j0 + j, c);
  }
}

void attn__i8_f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype == ATTN__KV_I8);
  const size_t d8 = d / 8 * 8;
  for (size_t j = 0; j < n; j++) {
    float* out = dst + j * dst_stride;                                     /* (d) */
    const int8_t* row = (const int8_t*)src->data + (j0 + j) * src->stride;  /* (d) */
    const v128_t vs = wasm_f32x4_splat(src->scales[(j0 + j) * src->scale_stride]);
    for (size_t c = 0; c < d8; c += 8) {
      const v128_t w = wasm_i16x8_load8x8(row + c);
      wasm_v128_store(out + c, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(w)), vs));
      wasm_v128_store(out + c + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(w)), vs));
    }
    for (size_t c = d8; c < d; c++) out[c] = attn__kv_value(src, j0 + j, c);
  }
}

void attn__f32_kv_store_wasmsimd(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales) {
  assert(x != NULL && dst != NULL && dtype != ATTN__KV_F32);
  if (dtype == ATTN__KV_F16) {
    attn__f16_store(x, n * d, dst);
    return;
  }
  int8_t* q = dst;  /* (n, d) */
  const size_t d4 = d / 4 * 4;
  for (size_t j = 0; j < n; j++) {
    const float* row = x + j * d;
    v128_t vmax = wasm_f32x4_splat(0.0f);
    for (size_t c = 0; c < d4; c += 4) vmax = wasm_f32x4_max(vmax, wasm_f32x4_abs(wasm_v128_load(row + c)));
    float amax = attn__hmax_nan_wasmsimd(vmax);
    for (size_t c = d4; c < d; c++) amax = attn__max_nan(amax, fabsf(row[c]));
    const float s = amax / 127.0f;
    const int usable = s > 0.0f && isfinite(s);
    scales[j] = isfinite(amax) ? s : NAN;
    if (!usable) {
      for (size_t c = 0; c < d; c++) q[j * d + c] = 0;
      continue;
    }
    const v128_t vs = wasm_f32x4_splat(s), vlim = wasm_f32x4_splat(127.0f);
    size_t c = 0;
    for (; c < d4; c += 4) {
      v128_t r = wasm_f32x4_nearest(wasm_f32x4_div(wasm_v128_load(row + c), vs));
      r = wasm_f32x4_pmax(wasm_f32x4_pmin(r, vlim), wasm_f32x4_neg(vlim));
      const v128_t i32 = wasm_i32x4_trunc_sat_f32x4(r);
      const v128_t i16 = wasm_i16x8_narrow_i32x4(i32, i32);
      const v128_t i8 = wasm_i8x16_narrow_i16x8(i16, i16);
      wasm_v128_store32_lane(q + j * d + c, i8, 0);
    }
    for (; c < d; c++) {
      float r = nearbyintf(row[c] / s);
      r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
      q[j * d + c] = (int8_t)r;
    }
  }
}
