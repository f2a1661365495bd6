/* f32-logits-wasmsimd.c - the decode kernel's logits from float32 K with
 * SIMD128, the bits of f32-logits-scalar.c (read that first; kernels.h
 * states the contract): 4 keys at a time, one accumulator per key over
 * d_k, so lane t holds the partial sum over p = t mod 4, and a 4x4 shuffle
 * transpose (attn__hsum4) adds them as (s0 + s2) + (s1 + s3) for the 4
 * keys at once. Two rows share every load of K. */
#include <wasm_simd128.h>

#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "kernels.h"

/* Keys j .. j+3 (rows k_stride apart), and their element p as one vector
 * (the d_k mod 4 tail). */
typedef struct attn__keys4 {
  const float* row[4];
} attn__keys4;
static inline attn__keys4 attn__keys4_at(const float* k, size_t k_stride, size_t j) {
  const float* k0 = k + j * k_stride;
  return (attn__keys4){{k0, k0 + k_stride, k0 + 2 * k_stride, k0 + 3 * k_stride}};
}
static inline v128_t attn__keys4_element(attn__keys4 keys, size_t p) {
  return wasm_f32x4_make(keys.row[0][p], keys.row[1][p], keys.row[2][p], keys.row[3][p]);
}

/* z[j] = (q . k_j) * scale for keys j0 <= j < j1, one row; key rows are
 * k_stride apart. */
void attn__f32_logits_wasmsimd(const float* q, const float* k, size_t k_stride, size_t j0, size_t j1, size_t d_k,
                               float scale, float* z) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const attn__keys4 keys = attn__keys4_at(k, k_stride, j);
    const float *k0 = keys.row[0], *k1 = keys.row[1], *k2 = keys.row[2], *k3 = keys.row[3];
    v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
    for (size_t p = 0; p < d_k4; p += 4) {
      const v128_t vq = wasm_v128_load(q + p);
      vacc0 = attn__f32x4_madd(vq, wasm_v128_load(k0 + p), vacc0);
      vacc1 = attn__f32x4_madd(vq, wasm_v128_load(k1 + p), vacc1);
      vacc2 = attn__f32x4_madd(vq, wasm_v128_load(k2 + p), vacc2);
      vacc3 = attn__f32x4_madd(vq, wasm_v128_load(k3 + p), vacc3);
    }
    v128_t vdot = attn__hsum4(vacc0, vacc1, vacc2, vacc3);
    for (size_t p = d_k4; p < d_k; p++) {
      vdot = attn__f32x4_madd(wasm_f32x4_splat(q[p]), attn__keys4_element(keys, p), vdot);
    }
    wasm_v128_store(z + j, wasm_f32x4_mul(vdot, vscale));
  }
  for (; j < j1; j++) {
    const float* k_row = k + j * k_stride;  /* (d_k) */
    v128_t vacc = wasm_f32x4_splat(0.0f);
    for (size_t p = 0; p < d_k4; p += 4) {
      vacc = attn__f32x4_madd(wasm_v128_load(q + p), wasm_v128_load(k_row + p), vacc);
    }
    float dot = (wasm_f32x4_extract_lane(vacc, 0) + wasm_f32x4_extract_lane(vacc, 2)) +
                (wasm_f32x4_extract_lane(vacc, 1) + wasm_f32x4_extract_lane(vacc, 3));
    for (size_t p = d_k4; p < d_k; p++) dot = dot + q[p] * k_row[p];
    z[j] = dot * scale;
  }
}

/* The same for two rows a and b and keys j < n, sharing the loads of K. */
void attn__f32_logits2_wasmsimd(const float* qa, const float* qb, const float* k, size_t k_stride, size_t n,
                                size_t d_k, float scale, float* za, float* zb) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const attn__keys4 keys = attn__keys4_at(k, k_stride, j);
    const float *k0 = keys.row[0], *k1 = keys.row[1], *k2 = keys.row[2], *k3 = keys.row[3];
    v128_t va0 = wasm_f32x4_splat(0.0f), va1 = va0, va2 = va0, va3 = va0;
    v128_t vb0 = va0, vb1 = va0, vb2 = va0, vb3 = va0;
    for (size_t p = 0; p < d_k4; p += 4) {
      const v128_t vqa = wasm_v128_load(qa + p);
      const v128_t vqb = wasm_v128_load(qb + p);
      v128_t vk = wasm_v128_load(k0 + p);
      va0 = attn__f32x4_madd(vqa, vk, va0);
      vb0 = attn__f32x4_madd(vqb, vk, vb0);
      vk = wasm_v128_load(k1 + p);
      va1 = attn__f32x4_madd(vqa, vk, va1);
      vb1 = attn__f32x4_madd(vqb, vk, vb1);
      vk = wasm_v128_load(k2 + p);
      va2 = attn__f32x4_madd(vqa, vk, va2);
      vb2 = attn__f32x4_madd(vqb, vk, vb2);
      vk = wasm_v128_load(k3 + p);
      va3 = attn__f32x4_madd(vqa, vk, va3);
      vb3 = attn__f32x4_madd(vqb, vk, vb3);
    }
    v128_t vdota = attn__hsum4(va0, va1, va2, va3);
    v128_t vdotb = attn__hsum4(vb0, vb1, vb2, vb3);
    for (size_t p = d_k4; p < d_k; p++) {
      const v128_t vk = attn__keys4_element(keys, p);
      vdota = attn__f32x4_madd(wasm_f32x4_splat(qa[p]), vk, vdota);
      vdotb = attn__f32x4_madd(wasm_f32x4_splat(qb[p]), vk, vdotb);
    }
    wasm_v128_store(za + j, wasm_f32x4_mul(vdota, vscale));
    wasm_v128_store(zb + j, wasm_f32x4_mul(vdotb, vscale));
  }
  attn__f32_logits_wasmsimd(qa, k, k_stride, j, n, d_k, scale, za);
  attn__f32_logits_wasmsimd(qb, k, k_stride, j, n, d_k, scale, zb);
}
