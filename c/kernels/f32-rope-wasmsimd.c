/* f32-rope-wasmsimd.c - RoPE rotation of rows with SIMD128, and the decode
 * kernel's logits over keys turned as they are read. The rotation has the
 * algorithm and bits of f32-rope-scalar.c (read that first): plain
 * multiplies and adds (never attn__f32x4_madd), so every build rotates
 * alike; the logits' dot products use attn__f32x4_madd, as the decode
 * kernel's own.
 *   - rotate_half pairs: 4 pairs per step, a from [c, c + 4), b from
 *     [c + half, c + half + 4), a loop each for forward and inverse (one
 *     loop with the sign chosen per step compiles to a select and a
 *     negation per vector);
 *   - interleaved pairs: 2 pairs per vector [a0 b0 a1 b1], against
 *     [cos0 cos0 cos1 cos1] and, swapped to [b0 a0 b1 a1], against
 *     [-sin0 sin0 -sin1 sin1] (x + (-y) is x - y, bit for bit). */
#include <assert.h>
#include <wasm_simd128.h>

#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-rope.h"
#include "kernels.h"

static inline float attn__rope_a(float a, float b, float cs, float sn, int inverse) {
  return inverse ? a * cs + b * sn : a * cs - b * sn;
}
static inline float attn__rope_b(float a, float b, float cs, float sn, int inverse) {
  return inverse ? b * cs - a * sn : b * cs + a * sn;
}

void attn__f32_rope_wasmsimd(const float* x, size_t x_stride, size_t n, size_t d, const float* table, size_t dims,
                             uint32_t flags, float* y, size_t y_stride) {
  assert(dims % 2 == 0 && dims <= d);
  const size_t half = dims / 2;
  const int interleaved = (flags & ATTN__ROPE_PAIRS_INTERLEAVED) != 0;
  const int inverse = (flags & ATTN__ROPE_INVERSE) != 0;
  /* The sine's sign per lane: forward turns a by -sin, inverse by +sin. */
  const v128_t vsign = inverse ? wasm_f32x4_make(1.0f, -1.0f, 1.0f, -1.0f) : wasm_f32x4_make(-1.0f, 1.0f, -1.0f, 1.0f);
  for (size_t r = 0; r < n; r++) {
    const float* x_row = x + r * x_stride;    /* (d) */
    float* y_row = y + r * y_stride;          /* (d) */
    const float* cos_row = table + r * dims;  /* (dims / 2) */
    const float* sin_row = cos_row + half;    /* (dims / 2) */
    size_t c = 0;
    if (interleaved) {
      for (; c + 2 <= half; c += 2) {
        const v128_t vx = wasm_v128_load(x_row + 2 * c);  /* a0 b0 a1 b1 */
        const v128_t vswap = wasm_i32x4_shuffle(vx, vx, 1, 0, 3, 2);
        const v128_t vcs = wasm_f32x4_make(cos_row[c], cos_row[c], cos_row[c + 1], cos_row[c + 1]);
        const v128_t vsn = wasm_f32x4_mul(wasm_f32x4_make(sin_row[c], sin_row[c], sin_row[c + 1], sin_row[c + 1]), vsign);
        wasm_v128_store(y_row + 2 * c, wasm_f32x4_add(wasm_f32x4_mul(vx, vcs), wasm_f32x4_mul(vswap, vsn)));
      }
      for (; c < half; c++) {
        const float a = x_row[2 * c], b = x_row[2 * c + 1];
        y_row[2 * c] = attn__rope_a(a, b, cos_row[c], sin_row[c], inverse);
        y_row[2 * c + 1] = attn__rope_b(a, b, cos_row[c], sin_row[c], inverse);
      }
    } else if (inverse) {
      for (; c + 4 <= half; c += 4) {
        const v128_t va = wasm_v128_load(x_row + c), vb = wasm_v128_load(x_row + c + half);
        const v128_t vcs = wasm_v128_load(cos_row + c), vsn = wasm_v128_load(sin_row + c);
        wasm_v128_store(y_row + c, wasm_f32x4_add(wasm_f32x4_mul(va, vcs), wasm_f32x4_mul(vb, vsn)));
        wasm_v128_store(y_row + c + half, wasm_f32x4_sub(wasm_f32x4_mul(vb, vcs), wasm_f32x4_mul(va, vsn)));
      }
    } else {
      for (; c + 4 <= half; c += 4) {
        const v128_t va = wasm_v128_load(x_row + c), vb = wasm_v128_load(x_row + c + half);
        const v128_t vcs = wasm_v128_load(cos_row + c), vsn = wasm_v128_load(sin_row + c);
        wasm_v128_store(y_row + c, wasm_f32x4_sub(wasm_f32x4_mul(va, vcs), wasm_f32x4_mul(vb, vsn)));
        wasm_v128_store(y_row + c + half, wasm_f32x4_add(wasm_f32x4_mul(vb, vcs), wasm_f32x4_mul(va, vsn)));
      }
    }
    if (!interleaved) {
      for (; c < half; c++) {
        const float a = x_row[c], b = x_row[c + half];
        y_row[c] = attn__rope_a(a, b, cos_row[c], sin_row[c], inverse);
        y_row[c + half] = attn__rope_b(a, b, cos_row[c], sin_row[c], inverse);
      }
    }
    if (y_row != x_row) {
      for (size_t c2 = dims; c2 < d; c2++) y_row[c2] = x_row[c2];
    }
  }
}

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
 * rounded), and the sums run over p in the order of attn__logits_wasmsimd
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
