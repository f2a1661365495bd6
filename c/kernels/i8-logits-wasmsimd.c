/* i8-logits-wasmsimd.c - the decode kernel's logits from an int8 K with
 * SIMD128, the bits of i8-logits-scalar.c (read that first; kernels.h
 * states the contract). */
#include <wasm_simd128.h>

#include "f32-hsum-wasmsimd.h"
#include "kernels.h"

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
 * the scalar twin (i8-logits-scalar.c) gives the same bits. `space` holds the rows' qi
 * (n_rows, d_k) and sq * scale (n_rows). */
void attn__i8_f32_logits_wasmsimd(const attn__decode_args* args, size_t lo, size_t hi, float* z, size_t z_stride,
                                  void* space) {
  const attn__head* h0 = &args->heads[0];
  const size_t n_rows = attn__decode_rows(args), d_k = h0->d_k;
  int16_t* qi = space;                       /* (n_rows, d_k) */
  float* qs = attn__i8_queries(args, space);  /* (n_rows) */
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
