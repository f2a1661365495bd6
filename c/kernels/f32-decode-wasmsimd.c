/* f32-decode-wasmsimd.c - the output path for fewer than ATTN__MR query
 * rows with SIMD128. Same algorithm and summation order as
 * f32-decode-scalar.c (read that first), so both give the same bits:
 *   - logits 4 keys at a time: one accumulator per key over d_k, so lane t
 *     holds the partial sum over p = t mod 4; a 4x4 shuffle transpose adds
 *     them as (s0 + s2) + (s1 + s3) for the 4 keys at once;
 *   - exp over whole vectors, the row padded with -Infinity (exp gives 0);
 *   - P V over 32 output columns at a time (8 accumulators), then 4. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "kernels.h"

/* Lane t of the result: (a_t[0] + a_t[2]) + (a_t[1] + a_t[3]). */
static inline v128_t attn__hsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t x01 = wasm_f32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7));
  const v128_t x23 = wasm_f32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

/* z (visible) = (q . k_j) * scale for keys j < visible. */
static void attn__logits_wasmsimd(const float* q, const float* k, size_t visible, size_t d_k, float scale,
                                  float* z) {
  const size_t d_k4 = d_k / 4 * 4;
  const v128_t vscale = wasm_f32x4_splat(scale);
  size_t j = 0;
  for (; j + 4 <= visible; j += 4) {
    const float* k0 = k + j * d_k;  /* (4, d_k) keys j .. j+3 */
    const float* k1 = k0 + d_k;
    const float* k2 = k1 + d_k;
    const float* k3 = k2 + d_k;
    v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
    for (size_t p = 0; p < d_k4; p += 4) {
      const v128_t vq = wasm_v128_load(q + p);
      vacc0 = wasm_f32x4_add(vacc0, wasm_f32x4_mul(vq, wasm_v128_load(k0 + p)));
      vacc1 = wasm_f32x4_add(vacc1, wasm_f32x4_mul(vq, wasm_v128_load(k1 + p)));
      vacc2 = wasm_f32x4_add(vacc2, wasm_f32x4_mul(vq, wasm_v128_load(k2 + p)));
      vacc3 = wasm_f32x4_add(vacc3, wasm_f32x4_mul(vq, wasm_v128_load(k3 + p)));
    }
    v128_t vdot = attn__hsum4(vacc0, vacc1, vacc2, vacc3);
    for (size_t p = d_k4; p < d_k; p++) {
      vdot = wasm_f32x4_add(vdot, wasm_f32x4_mul(wasm_f32x4_splat(q[p]), wasm_f32x4_make(k0[p], k1[p], k2[p], k3[p])));
    }
    wasm_v128_store(z + j, wasm_f32x4_mul(vdot, vscale));
  }
  for (; j < visible; j++) {
    const float* k_row = k + j * d_k;  /* (d_k) */
    v128_t vacc = wasm_f32x4_splat(0.0f);
    for (size_t p = 0; p < d_k4; p += 4) {
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(wasm_v128_load(q + p), wasm_v128_load(k_row + p)));
    }
    float dot = (wasm_f32x4_extract_lane(vacc, 0) + wasm_f32x4_extract_lane(vacc, 2)) +
                (wasm_f32x4_extract_lane(vacc, 1) + wasm_f32x4_extract_lane(vacc, 3));
    for (size_t p = d_k4; p < d_k; p++) dot = dot + q[p] * k_row[p];
    z[j] = dot * scale;
  }
}

/* out (d_v) = (sum_j p_j v_j) / l over keys j < visible, in key order. */
static void attn__weighted_sum_wasmsimd(const float* p, size_t visible, const float* v, size_t d_v, float l,
                                        float* out) {
  const v128_t vl = wasm_f32x4_splat(l);
  size_t c = 0;
  for (; c + 32 <= d_v; c += 32) {
    v128_t vacc0 = wasm_f32x4_splat(0.0f), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
    v128_t vacc4 = vacc0, vacc5 = vacc0, vacc6 = vacc0, vacc7 = vacc0;
    const float* v_col = v + c;  /* (visible, 32) with row stride d_v */
    for (size_t j = 0; j < visible; j++) {
      const v128_t vp = wasm_v128_load32_splat(p + j);
      vacc0 = wasm_f32x4_add(vacc0, wasm_f32x4_mul(vp, wasm_v128_load(v_col)));
      vacc1 = wasm_f32x4_add(vacc1, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 4)));
      vacc2 = wasm_f32x4_add(vacc2, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 8)));
      vacc3 = wasm_f32x4_add(vacc3, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 12)));
      vacc4 = wasm_f32x4_add(vacc4, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 16)));
      vacc5 = wasm_f32x4_add(vacc5, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 20)));
      vacc6 = wasm_f32x4_add(vacc6, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 24)));
      vacc7 = wasm_f32x4_add(vacc7, wasm_f32x4_mul(vp, wasm_v128_load(v_col + 28)));
      v_col += d_v;
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
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(wasm_v128_load32_splat(p + j), wasm_v128_load(v + j * d_v + c)));
    }
    wasm_v128_store(out + c, wasm_f32x4_div(vacc, vl));
  }
  for (; c < d_v; c++) {
    float acc = 0.0f;
    for (size_t j = 0; j < visible; j++) acc = acc + p[j] * v[j * d_v + c];
    out[c] = acc / l;
  }
}

void attn__f32_decode_wasmsimd(const attn__head_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const size_t n_k = args->n_k, d_k = args->d_k, d_v = args->d_v;
  float* z = args->scratch;  /* (n_k rounded up to 4) logits, then exp */
  const v128_t vminus_inf = wasm_f32x4_splat(-INFINITY);
  for (size_t i = 0; i < args->n_q; i++) {
    const float* q_row = args->q + i * d_k;  /* (d_k) */
    float* out_row = args->out + i * d_v;    /* (d_v) */
    const size_t visible = args->causal && i + 1 < n_k ? i + 1 : n_k;
    const size_t padded = attn__round_up(visible, 4);
    attn__logits_wasmsimd(q_row, args->k, visible, d_k, args->scale, z);
    if (args->bias != NULL) {
      const float* bias_row = args->bias + i * n_k;  /* (n_k) */
      for (size_t j = 0; j < visible; j++) z[j] = z[j] + bias_row[j];
    }
    if (args->mask != NULL) {
      const uint8_t* mask_row = args->mask + i * n_k;  /* (n_k) */
      for (size_t j = 0; j < visible; j++) z[j] = mask_row[j] != 0 ? z[j] : -INFINITY;
    }
    for (size_t j = visible; j < padded; j++) z[j] = -INFINITY;
    v128_t vmax = vminus_inf;
    for (size_t j = 0; j < padded; j += 4) vmax = wasm_f32x4_max(vmax, wasm_v128_load(z + j));
    const float m = attn__hmax_nan_wasmsimd(vmax);
    if (m == -INFINITY) {  /* no allowed key */
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
      continue;
    }
    const float l = attn__exp_sub_sum_wasmsimd(z, padded, m);
    attn__weighted_sum_wasmsimd(z, visible, args->v, d_v, l, out_row);
  }
}
