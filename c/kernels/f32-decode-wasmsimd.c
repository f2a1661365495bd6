/* f32-decode-wasmsimd.c - the output path for few query rows with SIMD128.
 * Same algorithm and summation order as f32-decode-scalar.c (read that
 * first), so both give the same bits:
 *   - logits 4 keys at a time: one accumulator per key over d_k, so lane t
 *     holds the partial sum over p = t mod 4; a 4x4 shuffle transpose adds
 *     them as (s0 + s2) + (s1 + s3) for the 4 keys at once;
 *   - exp over whole vectors, the row padded with -Infinity (exp gives 0);
 *   - P V column by column in key order, several columns per vector.
 * Rows go in pairs that share every load of K and V (decoding is bound by
 * reading them): the pair's logits take 2 query vectors against 4 keys, and
 * P V 2 rows x 16 columns. A row's sums run over its own keys in the same
 * order as alone, so pairing changes no bits. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-tanh-wasmsimd.h"
#include "kernels.h"

/* Lane t of the result: (a_t[0] + a_t[2]) + (a_t[1] + a_t[3]). */
static inline v128_t attn__hsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t x01 = wasm_f32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t x23 = wasm_f32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

/* z[j] = (q . k_j) * scale for keys j0 <= j < j1, one row; key rows are
 * k_stride apart. */
static void attn__logits_wasmsimd(const float* q, const float* k, size_t k_stride, size_t j0, size_t j1,
                                  size_t d_k, float scale, float* z) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const float* k0 = k + j * k_stride;  /* (4, d_k) keys j .. j+3 */
    const float* k1 = k0 + k_stride;
    const float* k2 = k1 + k_stride;
    const float* k3 = k2 + k_stride;
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
      vdot = attn__f32x4_madd(wasm_f32x4_splat(q[p]), wasm_f32x4_make(k0[p], k1[p], k2[p], k3[p]), vdot);
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
static void attn__logits2_wasmsimd(const float* qa, const float* qb, const float* k, size_t k_stride, size_t n,
                                   size_t d_k, float scale, float* za, float* zb) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + j * k_stride;  /* (4, d_k) keys j .. j+3 */
    const float* k1 = k0 + k_stride;
    const float* k2 = k1 + k_stride;
    const float* k3 = k2 + k_stride;
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
      const v128_t vk = wasm_f32x4_make(k0[p], k1[p], k2[p], k3[p]);
      vdota = attn__f32x4_madd(wasm_f32x4_splat(qa[p]), vk, vdota);
      vdotb = attn__f32x4_madd(wasm_f32x4_splat(qb[p]), vk, vdotb);
    }
    wasm_v128_store(za + j, wasm_f32x4_mul(vdota, vscale));
    wasm_v128_store(zb + j, wasm_f32x4_mul(vdotb, vscale));
  }
  attn__logits_wasmsimd(qa, k, k_stride, j, n, d_k, scale, za);
  attn__logits_wasmsimd(qb, k, k_stride, j, n, d_k, scale, zb);
}

/* Row r's logits z (n, its key range from lo) become weights: softcap,
 * bias, mask, -Infinity padding to a multiple of 4, exp(z - max) in place.
 * Returns the sum of the weights, 0 when no key is allowed; *m gets the max. */
static float attn__weights_wasmsimd(const attn__rows* rw, size_t r, size_t lo, size_t n, float* z, float* m) {
  const size_t padded = attn__round_up(n, 4);
  if (rw->softcap > 0.0f) attn__softcap_wasmsimd(z, padded, rw->softcap);
  for (size_t j = n; j < padded; j++) z[j] = -INFINITY;
  if (rw->bias != NULL) {
    const float* bias_row = rw->bias + r * rw->bias_stride + lo;  /* (n) */
    for (size_t j = 0; j < n; j++) z[j] = z[j] + bias_row[j];
  }
  if (rw->mask != NULL) {
    const uint8_t* mask_row = rw->mask + r * rw->mask_stride + lo;  /* (n) */
    for (size_t j = 0; j < n; j++) z[j] = mask_row[j] != 0 ? z[j] : -INFINITY;
  }
  v128_t vmax = wasm_f32x4_splat(-INFINITY);
  for (size_t j = 0; j < padded; j += 4) vmax = wasm_f32x4_max(vmax, wasm_v128_load(z + j));
  *m = attn__hmax_nan_wasmsimd(vmax);
  if (*m == -INFINITY) return 0.0f;  /* exp(z - m) > 0 for the max, so l > 0 otherwise */
  return attn__exp_sub_sum_wasmsimd(z, padded, *m);
}

/* out (d_v) = (sum_j p_j v_j) / l over keys j < visible, in key order; v
 * has rows of v_stride floats, of which the first d_v are used. */
static void attn__weighted_sum_wasmsimd(const float* p, size_t visible, const float* v, size_t v_stride,
                                        size_t d_v, float l, float* out) {
  const v128_t vl = wasm_f32x4_splat(l);
  size_t c = 0;
  for (; c + 32 <= d_v; c += 32) {
    v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
    v128_t vacc4 = vacc0, vacc5 = vacc0, vacc6 = vacc0, vacc7 = vacc0;
    const float* v_col = v + c;  /* (visible, 32) with row stride v_stride */
    for (size_t j = 0; j < visible; j++) {
      const v128_t vp = wasm_v128_load32_splat(p + j);
      vacc0 = attn__f32x4_madd(vp, wasm_v128_load(v_col), vacc0);
      vacc1 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 4), vacc1);
      vacc2 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 8), vacc2);
      vacc3 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 12), vacc3);
      vacc4 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 16), vacc4);
      vacc5 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 20), vacc5);
      vacc6 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 24), vacc6);
      vacc7 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 28), vacc7);
      v_col += v_stride;
    }
    wasm_v128_store(out + c, wasm_f32x4_div(vacc0, vl));
    wasm_v128_store(out + c + 4, wasm_f32x4_div(vacc1, vl));
    wasm_v128_store(out + c + 8, wasm_f32x4_div(vacc2, vl));
    wasm_v128_store(out + c + 12, wasm_f32x4_div(vacc3, vl));
    wasm_v128_store(out + c + 16, wasm_f32x4_div(vacc4, vl));
    wasm_v128_store(out + c + 20, wasm_f32x4_div(vacc5, vl));
    wasm_v128_store(out + c + 24, wasm_f32x4_div(vacc6, vl));
    wasm_v128_store(out + c + 28, wasm_f32x4_div(vacc7, vl));
  }
  for (; c + 4 <= d_v; c += 4) {
    v128_t vacc = wasm_f32x4_splat(0.0f);
    for (size_t j = 0; j < visible; j++) {
      vacc = attn__f32x4_madd(wasm_v128_load32_splat(p + j), wasm_v128_load(v + j * v_stride + c), vacc);
    }
    wasm_v128_store(out + c, wasm_f32x4_div(vacc, vl));
  }
  for (; c < d_v; c++) {
    float acc = 0.0f;
    for (size_t j = 0; j < visible; j++) acc = acc + p[j] * v[j * v_stride + c];
    out[c] = acc / l;
  }
}

/* The same for two rows a and b (visible_a <= visible_b), sharing the loads
 * of V for their common keys; row b then goes on alone. */
static void attn__weighted_sum2_wasmsimd(const float* pa, size_t visible_a, float la, float* out_a,
                                         const float* pb, size_t visible_b, float lb, float* out_b,
                                         const float* v, size_t v_stride, size_t d_v) {
  assert(visible_a <= visible_b);
  const v128_t vla = wasm_f32x4_splat(la), vlb = wasm_f32x4_splat(lb);
  size_t c = 0;
  for (; c + 16 <= d_v; c += 16) {
    v128_t va0 = wasm_f32x4_splat(0.0f), va1 = va0, va2 = va0, va3 = va0;
    v128_t vb0 = va0, vb1 = va0, vb2 = va0, vb3 = va0;
    const float* v_col = v + c;  /* (visible_b, 16) with row stride v_stride */
    size_t j = 0;
    for (; j < visible_a; j++) {
      const v128_t vpa = wasm_v128_load32_splat(pa + j);
      const v128_t vpb = wasm_v128_load32_splat(pb + j);
      v128_t vv = wasm_v128_load(v_col);
      va0 = attn__f32x4_madd(vpa, vv, va0);
      vb0 = attn__f32x4_madd(vpb, vv, vb0);
      vv = wasm_v128_load(v_col + 4);
      va1 = attn__f32x4_madd(vpa, vv, va1);
      vb1 = attn__f32x4_madd(vpb, vv, vb1);
      vv = wasm_v128_load(v_col + 8);
      va2 = attn__f32x4_madd(vpa, vv, va2);
      vb2 = attn__f32x4_madd(vpb, vv, vb2);
      vv = wasm_v128_load(v_col + 12);
      va3 = attn__f32x4_madd(vpa, vv, va3);
      vb3 = attn__f32x4_madd(vpb, vv, vb3);
      v_col += v_stride;
    }
    for (; j < visible_b; j++) {
      const v128_t vpb = wasm_v128_load32_splat(pb + j);
      vb0 = attn__f32x4_madd(vpb, wasm_v128_load(v_col), vb0);
      vb1 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 4), vb1);
      vb2 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 8), vb2);
      vb3 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 12), vb3);
      v_col += v_stride;
    }
    wasm_v128_store(out_a + c, wasm_f32x4_div(va0, vla));
    wasm_v128_store(out_a + c + 4, wasm_f32x4_div(va1, vla));
    wasm_v128_store(out_a + c + 8, wasm_f32x4_div(va2, vla));
    wasm_v128_store(out_a + c + 12, wasm_f32x4_div(va3, vla));
    wasm_v128_store(out_b + c, wasm_f32x4_div(vb0, vlb));
    wasm_v128_store(out_b + c + 4, wasm_f32x4_div(vb1, vlb));
    wasm_v128_store(out_b + c + 8, wasm_f32x4_div(vb2, vlb));
    wasm_v128_store(out_b + c + 12, wasm_f32x4_div(vb3, vlb));
  }
  /* The last d_v % 16 columns: each row alone. */
  if (c < d_v) {
    attn__weighted_sum_wasmsimd(pa, visible_a, v + c, v_stride, d_v - c, la, out_a + c);
    attn__weighted_sum_wasmsimd(pb, visible_b, v + c, v_stride, d_v - c, lb, out_b + c);
  }
}

/* One row's output from its weights p (n), their sum l and max m; a row
 * with no allowed key (l = 0) is 0, even where V holds Infinity. */
static void attn__output_row_wasmsimd(const attn__rows* rw, size_t r, const float* p, size_t n, float l, float m,
                                      const float* v, size_t v_stride) {
  float* out = rw->out + r * rw->out_stride;  /* (d_v) */
  if (l == 0.0f) {
    for (size_t c = 0; c < rw->d_v; c++) out[c] = 0.0f;
  } else {
    attn__weighted_sum_wasmsimd(p, n, v, v_stride, rw->d_v, l, out);
  }
  if (rw->lse != NULL) rw->lse[r] = l == 0.0f ? -INFINITY : m + logf(l);
}

/* acc (d_v) += sum_j p_j v_j over keys j < n, in key order per column; v
 * rows v_stride apart. acc is read and written back as is, so a row's sum
 * taken block by block has the same bits as in one pass. */
static void attn__pv_acc_wasmsimd(const float* p, size_t n, const float* v, size_t v_stride, size_t d_v, float* acc) {
  size_t c = 0;
  for (; c + 16 <= d_v; c += 16) {
    v128_t vacc0 = wasm_v128_load(acc + c), vacc1 = wasm_v128_load(acc + c + 4);
    v128_t vacc2 = wasm_v128_load(acc + c + 8), vacc3 = wasm_v128_load(acc + c + 12);
    const float* v_col = v + c;  /* (n, 16) with row stride v_stride */
    for (size_t j = 0; j < n; j++) {
      const v128_t vp = wasm_v128_load32_splat(p + j);
      vacc0 = attn__f32x4_madd(vp, wasm_v128_load(v_col), vacc0);
      vacc1 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 4), vacc1);
      vacc2 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 8), vacc2);
      vacc3 = attn__f32x4_madd(vp, wasm_v128_load(v_col + 12), vacc3);
      v_col += v_stride;
    }
    wasm_v128_store(acc + c, vacc0);
    wasm_v128_store(acc + c + 4, vacc1);
    wasm_v128_store(acc + c + 8, vacc2);
    wasm_v128_store(acc + c + 12, vacc3);
  }
  for (; c + 4 <= d_v; c += 4) {
    v128_t vacc = wasm_v128_load(acc + c);
    for (size_t j = 0; j < n; j++) {
      vacc = attn__f32x4_madd(wasm_v128_load32_splat(p + j), wasm_v128_load(v + j * v_stride + c), vacc);
    }
    wasm_v128_store(acc + c, vacc);
  }
  for (; c < d_v; c++) {
    float a = acc[c];
    for (size_t j = 0; j < n; j++) a = a + p[j] * v[j * v_stride + c];
    acc[c] = a;
  }
}

/* The same for two rows a and b over the same keys, sharing the loads of V. */
static void attn__pv_acc2_wasmsimd(const float* pa, const float* pb, size_t n, const float* v, size_t v_stride,
                                   size_t d_v, float* acc_a, float* acc_b) {
  size_t c = 0;
  for (; c + 16 <= d_v; c += 16) {
    v128_t va0 = wasm_v128_load(acc_a + c), va1 = wasm_v128_load(acc_a + c + 4);
    v128_t va2 = wasm_v128_load(acc_a + c + 8), va3 = wasm_v128_load(acc_a + c + 12);
    v128_t vb0 = wasm_v128_load(acc_b + c), vb1 = wasm_v128_load(acc_b + c + 4);
    v128_t vb2 = wasm_v128_load(acc_b + c + 8), vb3 = wasm_v128_load(acc_b + c + 12);
    const float* v_col = v + c;  /* (n, 16) with row stride v_stride */
    for (size_t j = 0; j < n; j++) {
      const v128_t vpa = wasm_v128_load32_splat(pa + j);
      const v128_t vpb = wasm_v128_load32_splat(pb + j);
      v128_t vv = wasm_v128_load(v_col);
      va0 = attn__f32x4_madd(vpa, vv, va0);
      vb0 = attn__f32x4_madd(vpb, vv, vb0);
      vv = wasm_v128_load(v_col + 4);
      va1 = attn__f32x4_madd(vpa, vv, va1);
      vb1 = attn__f32x4_madd(vpb, vv, vb1);
      vv = wasm_v128_load(v_col + 8);
      va2 = attn__f32x4_madd(vpa, vv, va2);
      vb2 = attn__f32x4_madd(vpb, vv, vb2);
      vv = wasm_v128_load(v_col + 12);
      va3 = attn__f32x4_madd(vpa, vv, va3);
      vb3 = attn__f32x4_madd(vpb, vv, vb3);
      v_col += v_stride;
    }
    wasm_v128_store(acc_a + c, va0);
    wasm_v128_store(acc_a + c + 4, va1);
    wasm_v128_store(acc_a + c + 8, va2);
    wasm_v128_store(acc_a + c + 12, va3);
    wasm_v128_store(acc_b + c, vb0);
    wasm_v128_store(acc_b + c + 4, vb1);
    wasm_v128_store(acc_b + c + 8, vb2);
    wasm_v128_store(acc_b + c + 12, vb3);
  }
  if (c < d_v) {
    attn__pv_acc_wasmsimd(pa, n, v + c, v_stride, d_v - c, acc_a + c);
    attn__pv_acc_wasmsimd(pb, n, v + c, v_stride, d_v - c, acc_b + c);
  }
}

/* Keys per block when the heads of one query share K and V: a block of K or
 * V (64 keys of up to a few hundred floats) stays in L1 while every row of
 * the group reads it, so K and V come from memory once per group, not once
 * per pair of rows. */
#define ATTN__DECODE_KB 64

/* Grouped-query decoding of three or more rows (the heads of one query, all
 * with the same key range [lo, lo + n)): logits block by block for all rows,
 * then each row's weights, then P V block by block into the output rows,
 * divided by l at the end. Every per-key and per-column sum runs in the same
 * order as the one-row path, so the bits are those of the scalar twin. */
static void attn__decode_group_wasmsimd(const attn__decode_args* args, size_t lo, size_t n) {
  const attn__rows* rw = &args->rows;
  const size_t n_q = rw->n_q, d_k = rw->d_k, d_v = rw->d_v, z_stride = attn__round_up(rw->n_k, 4);
  const size_t k_stride = args->k_stride, v_stride = args->v_stride;
  const float* k = args->k + lo * k_stride;  /* (n, d_k) */
  const float* v = args->v + lo * v_stride;  /* (n, d_v) */
  float* z = args->scratch;                  /* (n_q, z_stride) logits, then weights */
  float* l = z + n_q * z_stride;             /* (n_q) sums */
  float* m = l + n_q;                        /* (n_q) maxima */
  for (size_t j0 = 0; j0 < n; j0 += ATTN__DECODE_KB) {
    const size_t nb = n - j0 < ATTN__DECODE_KB ? n - j0 : ATTN__DECODE_KB;
    size_t r = 0;
    for (; r + 2 <= n_q; r += 2) {
      attn__logits2_wasmsimd(rw->q + r * rw->q_stride, rw->q + (r + 1) * rw->q_stride, k + j0 * k_stride, k_stride,
                             nb, d_k, rw->scale, z + r * z_stride + j0, z + (r + 1) * z_stride + j0);
    }
    if (r < n_q) attn__logits_wasmsimd(rw->q + r * rw->q_stride, k + j0 * k_stride, k_stride, 0, nb, d_k, rw->scale, z + r * z_stride + j0);
  }
  for (size_t r = 0; r < n_q; r++) {
    l[r] = attn__weights_wasmsimd(rw, r, lo, n, z + r * z_stride, &m[r]);
    float* out = rw->out + r * rw->out_stride;  /* (d_v) the accumulator until the end */
    for (size_t c = 0; c < d_v; c++) out[c] = 0.0f;
  }
  for (size_t j0 = 0; j0 < n; j0 += ATTN__DECODE_KB) {
    const size_t nb = n - j0 < ATTN__DECODE_KB ? n - j0 : ATTN__DECODE_KB;
    size_t r = 0;
    while (r < n_q) {
      if (l[r] == 0.0f) {
        r++;
        continue;
      }
      size_t r2 = r + 1;  /* the next row with allowed keys, to pair with */
      while (r2 < n_q && l[r2] == 0.0f) r2++;
      if (r2 < n_q) {
        attn__pv_acc2_wasmsimd(z + r * z_stride + j0, z + r2 * z_stride + j0, nb, v + j0 * v_stride, v_stride, d_v,
                               rw->out + r * rw->out_stride, rw->out + r2 * rw->out_stride);
        r = r2 + 1;
      } else {
        attn__pv_acc_wasmsimd(z + r * z_stride + j0, nb, v + j0 * v_stride, v_stride, d_v, rw->out + r * rw->out_stride);
        r = r2;
      }
    }
  }
  for (size_t r = 0; r < n_q; r++) {
    float* out = rw->out + r * rw->out_stride;  /* (d_v) */
    if (l[r] == 0.0f) {  /* no allowed key: 0, even where V holds Infinity */
      for (size_t c = 0; c < d_v; c++) out[c] = 0.0f;
    } else {
      const v128_t vl = wasm_f32x4_splat(l[r]);
      size_t c = 0;
      for (; c + 4 <= d_v; c += 4) wasm_v128_store(out + c, wasm_f32x4_div(wasm_v128_load(out + c), vl));
      for (; c < d_v; c++) out[c] = out[c] / l[r];
    }
    if (rw->lse != NULL) rw->lse[r] = l[r] == 0.0f ? -INFINITY : m[r] + logf(l[r]);
  }
}

void attn__f32_decode_wasmsimd(const attn__decode_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const attn__rows* rw = &args->rows;
  const size_t n_q = rw->n_q, d_k = rw->d_k, d_v = rw->d_v;
  const size_t k_stride = args->k_stride, v_stride = args->v_stride;
  float* za = args->scratch;                    /* (n_k rounded up to 4) logits, then weights */
  float* zb = za + attn__round_up(rw->n_k, 4);  /* the same for the pair's second row */
  if (args->one_query && n_q > 2) {
    size_t lo, hi;
    attn__key_range(rw, 0, &lo, &hi);
    attn__decode_group_wasmsimd(args, lo, hi - lo);
    return;
  }
  size_t r = 0;
  while (r < n_q) {
    size_t lo_a, hi_a, lo_b = 0, hi_b = 0;
    attn__key_range(rw, args->one_query ? 0 : r, &lo_a, &hi_a);
    if (r + 1 < n_q) attn__key_range(rw, args->one_query ? 0 : r + 1, &lo_b, &hi_b);
    const float* k = args->k + lo_a * k_stride;  /* (hi - lo, d_k) the row's keys */
    const float* v = args->v + lo_a * v_stride;  /* (hi - lo, d_v) */
    const float* qa = rw->q + r * rw->q_stride;  /* (d_k) */
    if (r + 1 < n_q && lo_b == lo_a && hi_b >= hi_a) {
      /* A pair whose key ranges start together (query indices do not
       * decrease, so b sees at least a's keys). */
      const size_t na = hi_a - lo_a, nb = hi_b - lo_a;
      const float* qb = qa + rw->q_stride;
      float ma, mb;
      attn__logits2_wasmsimd(qa, qb, k, k_stride, na, d_k, rw->scale, za, zb);
      attn__logits_wasmsimd(qb, k, k_stride, na, nb, d_k, rw->scale, zb);
      const float la = attn__weights_wasmsimd(rw, r, lo_a, na, za, &ma);
      const float lb = attn__weights_wasmsimd(rw, r + 1, lo_a, nb, zb, &mb);
      if (la != 0.0f && lb != 0.0f) {
        attn__weighted_sum2_wasmsimd(za, na, la, rw->out + r * rw->out_stride, zb, nb, lb,
                                     rw->out + (r + 1) * rw->out_stride, v, v_stride, d_v);
        if (rw->lse != NULL) {
          rw->lse[r] = ma + logf(la);
          rw->lse[r + 1] = mb + logf(lb);
        }
      } else {
        attn__output_row_wasmsimd(rw, r, za, na, la, ma, v, v_stride);
        attn__output_row_wasmsimd(rw, r + 1, zb, nb, lb, mb, v, v_stride);
      }
      r += 2;
    } else {
      const size_t na = hi_a - lo_a;
      float ma;
      attn__logits_wasmsimd(qa, k, k_stride, 0, na, d_k, rw->scale, za);
      const float la = attn__weights_wasmsimd(rw, r, lo_a, na, za, &ma);
      attn__output_row_wasmsimd(rw, r, za, na, la, ma, v, v_stride);
      r += 1;
    }
  }
}
