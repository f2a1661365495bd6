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
#include "kernels.h"

/* Lane t of the result: (a_t[0] + a_t[2]) + (a_t[1] + a_t[3]). */
static inline v128_t attn__hsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t x01 = wasm_f32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t x23 = wasm_f32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

/* z[j] = (q . k_j) * scale for keys j0 <= j < j1, one row. */
static void attn__logits_wasmsimd(const float* q, const float* k, size_t j0, size_t j1, size_t d_k,
                                  float scale, float* z) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const float* k0 = k + j * d_k;  /* (4, d_k) keys j .. j+3 */
    const float* k1 = k0 + d_k;
    const float* k2 = k1 + d_k;
    const float* k3 = k2 + d_k;
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
    const float* k_row = k + j * d_k;  /* (d_k) */
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
static void attn__logits2_wasmsimd(const float* qa, const float* qb, const float* k, size_t n, size_t d_k,
                                   float scale, float* za, float* zb) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + j * d_k;  /* (4, d_k) keys j .. j+3 */
    const float* k1 = k0 + d_k;
    const float* k2 = k1 + d_k;
    const float* k3 = k2 + d_k;
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
  attn__logits_wasmsimd(qa, k, j, n, d_k, scale, za);
  attn__logits_wasmsimd(qb, k, j, n, d_k, scale, zb);
}

/* Row i's logits z (visible) become weights: bias, mask, -Infinity padding
 * to a multiple of 4, exp(z - max) in place. Returns the sum of the weights,
 * 0 when no key is allowed. */
static float attn__weights_wasmsimd(const attn__head_args* args, size_t i, size_t visible, float* z) {
  const size_t n_k = args->n_k, padded = attn__round_up(visible, 4);
  if (args->bias != NULL) {
    const float* bias_row = args->bias + i * n_k;  /* (n_k) */
    for (size_t j = 0; j < visible; j++) z[j] = z[j] + bias_row[j];
  }
  if (args->mask != NULL) {
    const uint8_t* mask_row = args->mask + i * n_k;  /* (n_k) */
    for (size_t j = 0; j < visible; j++) z[j] = mask_row[j] != 0 ? z[j] : -INFINITY;
  }
  for (size_t j = visible; j < padded; j++) z[j] = -INFINITY;
  v128_t vmax = wasm_f32x4_splat(-INFINITY);
  for (size_t j = 0; j < padded; j += 4) vmax = wasm_f32x4_max(vmax, wasm_v128_load(z + j));
  const float m = attn__hmax_nan_wasmsimd(vmax);
  if (m == -INFINITY) return 0.0f;  /* exp(z - m) > 0 for the max, so l > 0 otherwise */
  return attn__exp_sub_sum_wasmsimd(z, padded, m);
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
                                         const float* v, size_t d_v) {
  assert(visible_a <= visible_b);
  const v128_t vla = wasm_f32x4_splat(la), vlb = wasm_f32x4_splat(lb);
  size_t c = 0;
  for (; c + 16 <= d_v; c += 16) {
    v128_t va0 = wasm_f32x4_splat(0.0f), va1 = va0, va2 = va0, va3 = va0;
    v128_t vb0 = va0, vb1 = va0, vb2 = va0, vb3 = va0;
    const float* v_col = v + c;  /* (visible_b, 16) with row stride d_v */
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
      v_col += d_v;
    }
    for (; j < visible_b; j++) {
      const v128_t vpb = wasm_v128_load32_splat(pb + j);
      vb0 = attn__f32x4_madd(vpb, wasm_v128_load(v_col), vb0);
      vb1 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 4), vb1);
      vb2 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 8), vb2);
      vb3 = attn__f32x4_madd(vpb, wasm_v128_load(v_col + 12), vb3);
      v_col += d_v;
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
    attn__weighted_sum_wasmsimd(pa, visible_a, v + c, d_v, d_v - c, la, out_a + c);
    attn__weighted_sum_wasmsimd(pb, visible_b, v + c, d_v, d_v - c, lb, out_b + c);
  }
}

/* Row r's query index: its own, or 0 for every row when the rows are the
 * heads of one query (see attn__head_args.one_query). */
static inline size_t attn__query_index(const attn__head_args* args, size_t r) {
  return args->one_query ? 0 : r;
}

/* Keys query i may see: all, or with causal those up to i. */
static inline size_t attn__visible(const attn__head_args* args, size_t i) {
  return args->causal && i + 1 < args->n_k ? i + 1 : args->n_k;
}

/* One row's output from its weights p (visible) and their sum l; a row with
 * no allowed key (l = 0) is 0, even where V holds Infinity. */
static void attn__output_row_wasmsimd(const float* p, size_t visible, float l, const float* v, size_t d_v,
                                      float* out) {
  if (l == 0.0f) {
    for (size_t c = 0; c < d_v; c++) out[c] = 0.0f;
  } else {
    attn__weighted_sum_wasmsimd(p, visible, v, d_v, d_v, l, out);
  }
}

void attn__f32_decode_wasmsimd(const attn__head_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const size_t n_q = args->n_q, n_k = args->n_k, d_k = args->d_k, d_v = args->d_v;
  float* za = args->scratch;                /* (n_k rounded up to 4) logits, then weights */
  float* zb = za + attn__round_up(n_k, 4);  /* the same for the pair's second row */
  size_t r = 0;
  for (; r + 2 <= n_q; r += 2) {
    const size_t ia = attn__query_index(args, r), ib = attn__query_index(args, r + 1);
    const size_t visible_a = attn__visible(args, ia), visible_b = attn__visible(args, ib);
    assert(visible_a <= visible_b);  /* query indices do not decrease */
    const float* qa = args->q + r * d_k;  /* (d_k) */
    const float* qb = qa + d_k;
    float* out_a = args->out + r * d_v;   /* (d_v) */
    float* out_b = out_a + d_v;
    attn__logits2_wasmsimd(qa, qb, args->k, visible_a, d_k, args->scale, za, zb);
    attn__logits_wasmsimd(qb, args->k, visible_a, visible_b, d_k, args->scale, zb);
    const float la = attn__weights_wasmsimd(args, ia, visible_a, za);
    const float lb = attn__weights_wasmsimd(args, ib, visible_b, zb);
    if (la != 0.0f && lb != 0.0f) {
      attn__weighted_sum2_wasmsimd(za, visible_a, la, out_a, zb, visible_b, lb, out_b, args->v, d_v);
    } else {
      attn__output_row_wasmsimd(za, visible_a, la, args->v, d_v, out_a);
      attn__output_row_wasmsimd(zb, visible_b, lb, args->v, d_v, out_b);
    }
  }
  if (r < n_q) {
    const size_t i = attn__query_index(args, r), visible = attn__visible(args, i);
    attn__logits_wasmsimd(args->q + r * d_k, args->k, 0, visible, d_k, args->scale, za);
    const float l = attn__weights_wasmsimd(args, i, visible, za);
    attn__output_row_wasmsimd(za, visible, l, args->v, d_v, args->out + r * d_v);
  }
}
