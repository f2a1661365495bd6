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
 * And the decode kernel's reads of a compact cache (kernels.h states
 * them): float16 as its bits' float32, which needs no rebias multiply
 * (the decode moves the 2^112 to q and the weights), into a block or
 * into registers for four rows' logits at once; int8 K's logits in
 * integers. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "kernels.h"

/* Four float16 values (bits in the low 16 of each 32-bit lane) as float32. */
static inline v128_t attn__f16x4_value(v128_t h) {
  const v128_t o = wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t special = wasm_i32x4_eq(wasm_v128_and(h, wasm_i32x4_splat(0x7c00)), wasm_i32x4_splat(0x7c00));
  v128_t f = wasm_f32x4_mul(o, wasm_f32x4_splat(0x1p112f));
  f = wasm_v128_bitselect(wasm_v128_or(o, wasm_i32x4_splat(0x7f800000)), f, special);
  return wasm_v128_or(f, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
}

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

void attn__f16_kv_load_bits_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst,
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

void attn__f32_kv_load_wasmsimd(const attn__kv_rows* src, size_t j0, size_t n, size_t d, float* dst, size_t dst_stride) {
  assert(src != NULL && dst != NULL && src->dtype != ATTN__KV_F32);
  const size_t d8 = d / 8 * 8;
  const int special = src->dtype == ATTN__KV_F16 && attn__f16_rows(src, j0, n, d8, dst, dst_stride, 1);
  for (size_t j = 0; j < n; j++) {
    float* out = dst + j * dst_stride;  /* (d) */
    if (src->dtype == ATTN__KV_F16) {
      const uint16_t* row = (const uint16_t*)src->data + (j0 + j) * src->stride;  /* (d) */
      for (size_t c = 0; special && c < d8; c += 8) {
        const v128_t h = wasm_v128_load(row + c);
        wasm_v128_store(out + c, attn__f16x4_value(wasm_u32x4_extend_low_u16x8(h)));
        wasm_v128_store(out + c + 4, attn__f16x4_value(wasm_u32x4_extend_high_u16x8(h)));
      }
    } else {
      const int8_t* row = (const int8_t*)src->data + (j0 + j) * src->stride;  /* (d) */
      const v128_t vs = wasm_f32x4_splat(src->scales[(j0 + j) * src->scale_stride]);
      for (size_t c = 0; c < d8; c += 8) {
        const v128_t w = wasm_i16x8_load8x8(row + c);
        wasm_v128_store(out + c, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(w)), vs));
        wasm_v128_store(out + c + 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(w)), vs));
      }
    }
    for (size_t c = d8; c < d; c++) out[c] = attn__kv_value(src, j0 + j, c);
  }
}

void attn__f32_kv_store_wasmsimd(int32_t dtype, const float* x, size_t n, size_t d, void* dst, float* scales) {
  assert(x != NULL && dst != NULL && dtype != ATTN__KV_F32);
  if (dtype == ATTN__KV_F16) {
    uint16_t* h = dst;  /* (n, d) */
    for (size_t i = 0; i < n * d; i++) h[i] = attn__f16_bits(x[i]);
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

/* Integer logits of rows a and b (their q rounded to 16 bits, qa and qb;
 * qs_a, qs_b = sq * scale) for int8 keys [j0, j1) 4 at a time, sharing each
 * load of K; za[j - j0], zb[j - j0] get key j's logits. Returns the first
 * key not done (fewer than 4 left). */
static size_t attn__i8_logits2_wasmsimd(const attn__kv_rows* kr, size_t j0, size_t j1, size_t d_k, const int16_t* qa,
                                        const int16_t* qb, float qs_a, float qs_b, float* za, float* zb) {
  const int8_t* k8 = kr->data;
  const size_t ks = kr->stride, ss = kr->scale_stride;
  const v128_t vzero = wasm_i32x4_splat(0), vqsa = wasm_f32x4_splat(qs_a), vqsb = wasm_f32x4_splat(qs_b);
  size_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const int8_t* k0 = k8 + j * ks;  /* (4, d_k) keys j .. j+3 */
    v128_t va0 = vzero, va1 = vzero, va2 = vzero, va3 = vzero, vb0 = vzero, vb1 = vzero, vb2 = vzero, vb3 = vzero;
    for (size_t p = 0; p < d_k; p += 8) {
      const v128_t vqa = wasm_v128_load(qa + p), vqb = wasm_v128_load(qb + p);
      v128_t vk = wasm_i16x8_load8x8(k0 + p);
      va0 = wasm_i32x4_add(va0, wasm_i32x4_dot_i16x8(vk, vqa));
      vb0 = wasm_i32x4_add(vb0, wasm_i32x4_dot_i16x8(vk, vqb));
      vk = wasm_i16x8_load8x8(k0 + ks + p);
      va1 = wasm_i32x4_add(va1, wasm_i32x4_dot_i16x8(vk, vqa));
      vb1 = wasm_i32x4_add(vb1, wasm_i32x4_dot_i16x8(vk, vqb));
      vk = wasm_i16x8_load8x8(k0 + 2 * ks + p);
      va2 = wasm_i32x4_add(va2, wasm_i32x4_dot_i16x8(vk, vqa));
      vb2 = wasm_i32x4_add(vb2, wasm_i32x4_dot_i16x8(vk, vqb));
      vk = wasm_i16x8_load8x8(k0 + 3 * ks + p);
      va3 = wasm_i32x4_add(va3, wasm_i32x4_dot_i16x8(vk, vqa));
      vb3 = wasm_i32x4_add(vb3, wasm_i32x4_dot_i16x8(vk, vqb));
    }
    const float* sc = kr->scales + j * ss;
    const v128_t vsk = wasm_f32x4_make(sc[0], sc[ss], sc[2 * ss], sc[3 * ss]);
    wasm_v128_store(za + (j - j0), wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(attn__hsum4_i32(va0, va1, va2, va3)), vqsa), vsk));
    wasm_v128_store(zb + (j - j0), wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(attn__hsum4_i32(vb0, vb1, vb2, vb3)), vqsb), vsk));
  }
  return j;
}

/* Logits from an int8 K (attn__i8_logits_ok): q rounded to 16 bits per
 * row (attn__q16_row), z_j = ((float)(k8_j . qi) * (sq * scale)) * s_j,
 * the dot products in integers from the cache's rows where they are: eight
 * bytes sign-extended by their load and i32x4.dot_i16x8_s, 8 products in
 * two operations, K never converted. Integers sum exactly in any order, so
 * the scalar twin gives the same bits. `space` holds the rows' qi
 * (n_rows, d_k) and sq * scale (n_rows). */
void attn__i8_logits_wasmsimd(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                                     void* space) {
  const attn__head* h0 = &args->heads[0];
  const size_t n_rows = attn__decode_rows(args), d_k = h0->d_k;
  int16_t* qi = space;                       /* (n_rows, d_k) */
  float* qs = (float*)(qi + n_rows * d_k);   /* (n_rows) */
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    qs[r] = attn__q16_row(h->q + i * h->q_stride, d_k, qi + r * d_k) * h->scale;
  }
  const attn__kv_rows* kr = &h0->k_rows;
  const int8_t* k8 = kr->data;
  const size_t ks = kr->stride, ss = kr->scale_stride;
  const v128_t vzero = wasm_i32x4_splat(0);
  for (size_t j0 = lo; j0 < hi; j0 += ATTN__DECODE_KB) {
    const size_t nb = hi - j0 < ATTN__DECODE_KB ? hi - j0 : ATTN__DECODE_KB;
    for (size_t r = 0; r < n_rows; r++) {
      size_t i;
      const attn__head* h = attn__decode_head(args, r, &i);
      const attn__span s = attn__key_span(h, i), part = attn__block_part(s, j0, nb);
      const int16_t* q = qi + r * d_k;
      const v128_t vqs = wasm_f32x4_splat(qs[r]);
      float* zr = z + r * z_stride;  /* zr[j - s.lo]: key j's logit */
      size_t j = part.lo;
      if (r + 1 < n_rows && part.lo < part.hi) {
        size_t i2;
        const attn__head* h2 = attn__decode_head(args, r + 1, &i2);
        const attn__span s2 = attn__key_span(h2, i2), part2 = attn__block_part(s2, j0, nb);
        if (part2.lo == part.lo && part2.hi == part.hi) {
          float* zr2 = z + (r + 1) * z_stride;
          j = attn__i8_logits2_wasmsimd(kr, part.lo, part.hi, d_k, q, q + d_k, qs[r], qs[r + 1], zr + (part.lo - s.lo),
                                        zr2 + (part.lo - s2.lo));
          for (size_t jt = j; jt < part.hi; jt++) {
            zr[jt - s.lo] = attn__i8_logit(kr, jt, q, d_k, qs[r]);
            zr2[jt - s2.lo] = attn__i8_logit(kr, jt, q + d_k, d_k, qs[r + 1]);
          }
          r++;
          continue;
        }
      }
      for (; j + 4 <= part.hi; j += 4) {
        const int8_t* k0 = k8 + j * ks;  /* (4, d_k) keys j .. j+3 */
        v128_t vacc0 = vzero, vacc1 = vzero, vacc2 = vzero, vacc3 = vzero;
        for (size_t p = 0; p < d_k; p += 8) {
          const v128_t vq = wasm_v128_load(q + p);
          vacc0 = wasm_i32x4_add(vacc0, wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(k0 + p), vq));
          vacc1 = wasm_i32x4_add(vacc1, wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(k0 + ks + p), vq));
          vacc2 = wasm_i32x4_add(vacc2, wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(k0 + 2 * ks + p), vq));
          vacc3 = wasm_i32x4_add(vacc3, wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(k0 + 3 * ks + p), vq));
        }
        const v128_t vdot = attn__hsum4_i32(vacc0, vacc1, vacc2, vacc3);
        const float* sc = kr->scales + j * ss;
        const v128_t vsk = wasm_f32x4_make(sc[0], sc[ss], sc[2 * ss], sc[3 * ss]);
        wasm_v128_store(zr + (j - s.lo), wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(vdot), vqs), vsk));
      }
      for (; j < part.hi; j++) zr[j - s.lo] = attn__i8_logit(kr, j, q, d_k, qs[r]);
    }
  }
}

/* Logits of four rows q (4, d_k) (times 2^112) for float16 keys [j0, j1)
 * (bits, rows k_stride apart), d_k a multiple of 8, each widened in
 * registers and used by the four rows: key j's logit of row t goes to
 * z[t][j - j0], times scale[t]. One accumulator per row and key holds the
 * partial sums over p mod 4 in p order, added as attn__hsum4 adds them (its
 * lane t is row t): the bits of attn__logits_wasmsimd. Returns 0 when a key
 * has exponent 31 (Infinity or NaN), whose logits are then wrong. */
int attn__f16_logits4_wasmsimd(const float* q, const uint16_t* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                               const float scale[4], float* const z[4]) {
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
