/* f32-decode-scalar.c - the output path for few query rows (fewer than
 * ATTN__MR, as when decoding one token at a time, or tiny problems), the
 * readable spec of f32-decode-wasmsimd.c.
 *
 * The fused kernel packs K and V and computes ATTN__MR rows at a time; with
 * one query row, three quarters of its work and all of the packing are
 * wasted. Here K and V are read where they are, one query row at a time,
 * over the row's key range [lo, hi) (attn__key_range: causal frontier,
 * window, n_k); keys outside it are not read:
 *   z_j   = softcap((q . k_j) * scale) (+ bias), -Infinity where masked;
 *   m     = max_j z_j (NaN wins);
 *   p_j   = exp(z_j - m), l = sum_j p_j;
 *   out   = (sum_j p_j v_j) / l, or 0 when no key is allowed (m = -Inf);
 *   lse   = m + log(l), or -Infinity.
 * With one_query, the rows are the heads of one query (grouped-query
 * decoding) and all take query index 0 for their key range.
 * The sums run in the SIMD twin's order, so both give the same bits:
 *   q . k_j: four partial sums over p mod 4 (p < d_k rounded down to 4),
 *            combined as (s0 + s2) + (s1 + s3), then the tail p in order;
 *   l:       four partial sums over (j - lo) mod 4, combined (l0 + l1) + (l2 + l3);
 *   sum_j p_j v_j: in order j = lo, lo + 1, ... for each column. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "f32-tanh.h"
#include "kernels.h"

/* a . b in the SIMD twin's order (see above). */
static float attn__dot(const float* a, const float* b, size_t n) {
  const size_t n4 = n / 4 * 4;
  float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t p = 0; p < n4; p++) s[p % 4] = s[p % 4] + a[p] * b[p];
  float dot = (s[0] + s[2]) + (s[1] + s[3]);
  for (size_t p = n4; p < n; p++) dot = dot + a[p] * b[p];
  return dot;
}

void attn__f32_decode_scalar(const attn__decode_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const attn__rows* rw = &args->rows;
  const size_t d_k = rw->d_k, d_v = rw->d_v;
  float* z = args->scratch;  /* (hi - lo) logits, then exp */
  for (size_t r = 0; r < rw->n_q; r++) {
    const float* q_row = rw->q + r * rw->q_stride;  /* (d_k) */
    float* out_row = rw->out + r * rw->out_stride;  /* (d_v) */
    size_t lo, hi;
    attn__key_range(rw, args->one_query ? 0 : r, &lo, &hi);
    const size_t n = hi - lo;
    const float* k = args->k + lo * args->k_stride;  /* (n, d_k) this row's keys */
    const float* v = args->v + lo * args->v_stride;  /* (n, d_v) */
    const float* bias_row = rw->bias != NULL ? rw->bias + r * rw->bias_stride + lo : NULL;    /* (n) */
    const uint8_t* mask_row = rw->mask != NULL ? rw->mask + r * rw->mask_stride + lo : NULL;  /* (n) */
    float m = -INFINITY;
    for (size_t j = 0; j < n; j++) {
      float zj = attn__dot(q_row, k + j * args->k_stride, d_k) * rw->scale;
      if (rw->softcap > 0.0f) zj = attn__softcapf(zj, rw->softcap);
      if (bias_row != NULL) zj = zj + bias_row[j];
      if (mask_row != NULL && mask_row[j] == 0) zj = -INFINITY;
      z[j] = zj;
      m = attn__max_nan(m, zj);
    }
    if (m == -INFINITY) {  /* no allowed key */
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
      if (rw->lse != NULL) rw->lse[r] = -INFINITY;
      continue;
    }
    float l4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t j = 0; j < n; j++) {
      z[j] = attn__expf_nonpos(z[j] - m);
      l4[j % 4] = l4[j % 4] + z[j];
    }
    const float l = (l4[0] + l4[1]) + (l4[2] + l4[3]);
    for (size_t c = 0; c < d_v; c++) {
      float acc = 0.0f;
      for (size_t j = 0; j < n; j++) acc = acc + z[j] * v[j * args->v_stride + c];
      out_row[c] = acc / l;
    }
    if (rw->lse != NULL) rw->lse[r] = m + logf(l);
  }
}
