/* f32-rope-logits-wasmsimd.c - the decode kernel's logits over float32
 * keys turned by RoPE as they are read, with SIMD128, the bits of
 * f32-rope-logits-scalar.c (read that first; kernels.h states the
 * contract). The turn is plain multiplies and adds as attn__f32_rope_*'s
 * (never attn__f32x4_madd); the dot products use attn__f32x4_madd as
 * f32-logits-wasmsimd.c's. */
#include <wasm_simd128.h>

#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "kernels.h"

/* The accumulators of 4 heads' logits of two keys a and b. */
typedef struct attn__acc_4x2 {
  v128_t a[4], b[4];
} attn__acc_4x2;

/* acc += q[h][p .. p + 4) times key a's vka and key b's vkb, head by head. */
static inline void attn__madd_4x2(attn__acc_4x2* acc, const float* const q[4], size_t p, v128_t vka, v128_t vkb) {
  for (size_t h = 0; h < 4; h++) {
    const v128_t vq = wasm_v128_load(q[h] + p);
    acc->a[h] = attn__f32x4_madd(vq, vka, acc->a[h]);
    acc->b[h] = attn__f32x4_madd(vq, vkb, acc->b[h]);
  }
}

/* Logits of up to 4 rows (rows[h]: one query row of each head sharing K,
 * scales[h] its scale) for keys [0, n) of k turned by RoPE as they are
 * read: rotate_half pairs over the first dims elements (the table's rows,
 * (n, dims)), the rest as they are. Each turned element is
 * attn__f32_rope_wasmsimd's (a cs - b sn or b cs + a sn, every product
 * rounded), and the sums run over p in the order of attn__f32_logits_wasmsimd
 * (lane t over p = t mod 4 rising, then attn__hsum4), so z[h][j] has the
 * bits of a turn into a tile and the logits over it. Two keys at a time:
 * their 8 accumulators (head x key), the turned vector used at once by the
 * 4 heads; the turned halves take one pass each over the pairs (p < dims/2,
 * then p >= dims/2) to keep that order. Needs d_k and dims / 2 multiples
 * of 4. Rows past n_rows repeat row 0 and are not stored. */
void attn__f32_rope_logits4_wasmsimd(const float* const rows[4], const float scales[4], size_t n_rows, const float* k,
                                     size_t k_stride, size_t n, size_t d_k, const float* table, size_t dims, float* z,
                                     size_t z_stride) {
  const size_t half = dims / 2;
  const float* const q[4] = {rows[0], rows[n_rows > 1], rows[n_rows > 2 ? 2 : 0], rows[n_rows > 3 ? 3 : 0]};
  const v128_t vscale = wasm_f32x4_make(scales[0], scales[n_rows > 1], scales[n_rows > 2 ? 2 : 0], scales[n_rows > 3 ? 3 : 0]);
  for (size_t j = 0; j < n; j += 2) {
    const size_t keys = n - j < 2 ? 1 : 2;
    const float* ka = k + j * k_stride;                    /* (d_k) key j */
    const float* kb = keys == 2 ? ka + k_stride : ka;      /* (d_k) key j + 1, or j again */
    const float* ta = table + j * dims;                    /* (dims) key j's cos, then sin */
    const float* tb = keys == 2 ? ta + dims : ta;
    attn__acc_4x2 acc;
    for (size_t h = 0; h < 4; h++) acc.a[h] = acc.b[h] = wasm_f32x4_splat(0.0f);
    for (size_t c = 0; c < half; c += 4) {  /* p = c: a cs - b sn */
      const v128_t vka = wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(ka + c), wasm_v128_load(ta + c)),
                                        wasm_f32x4_mul(wasm_v128_load(ka + c + half), wasm_v128_load(ta + half + c)));
      const v128_t vkb = wasm_f32x4_sub(wasm_f32x4_mul(wasm_v128_load(kb + c), wasm_v128_load(tb + c)),
                                        wasm_f32x4_mul(wasm_v128_load(kb + c + half), wasm_v128_load(tb + half + c)));
      attn__madd_4x2(&acc, q, c, vka, vkb);
    }
    for (size_t c = 0; c < half; c += 4) {  /* p = half + c: b cs + a sn */
      const v128_t vka = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(ka + c + half), wasm_v128_load(ta + c)),
                                        wasm_f32x4_mul(wasm_v128_load(ka + c), wasm_v128_load(ta + half + c)));
      const v128_t vkb = wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(kb + c + half), wasm_v128_load(tb + c)),
                                        wasm_f32x4_mul(wasm_v128_load(kb + c), wasm_v128_load(tb + half + c)));
      attn__madd_4x2(&acc, q, half + c, vka, vkb);
    }
    for (size_t p = dims; p < d_k; p += 4) {  /* partial rotary: the rest as it is */
      const v128_t vka = wasm_v128_load(ka + p), vkb = wasm_v128_load(kb + p);
      attn__madd_4x2(&acc, q, p, vka, vkb);
    }
    /* Lane h: head h's logit of the key. */
    const v128_t vza = wasm_f32x4_mul(attn__hsum4(acc.a[0], acc.a[1], acc.a[2], acc.a[3]), vscale);
    const v128_t vzb = wasm_f32x4_mul(attn__hsum4(acc.b[0], acc.b[1], acc.b[2], acc.b[3]), vscale);
    float za[4], zb[4];
    wasm_v128_store(za, vza);
    wasm_v128_store(zb, vzb);
    for (size_t h = 0; h < n_rows; h++) {
      z[h * z_stride + j] = za[h];
      if (keys == 2) z[h * z_stride + j + 1] = zb[h];
    }
  }
}
