/* f32-decode-scalar.c - the output path for few query rows (fewer than
 * ATTN__MR, as when decoding one token at a time, or tiny problems), the
 * readable spec of f32-decode-wasmsimd.c.
 *
 * The fused kernel packs K and V and computes ATTN__MR rows at a time; with
 * one query row, three quarters of its work and all of the packing are
 * wasted. Here K and V are read where they are, one query row at a time:
 *   z_j   = (q . k_j) * scale (+ bias), -Infinity where masked, for the
 *           visible keys j < visible (causal: j <= i);
 *   m     = max_j z_j (NaN wins);
 *   p_j   = exp(z_j - m), l = sum_j p_j;
 *   out   = (sum_j p_j v_j) / l, or 0 when no key is allowed (m = -Inf).
 * With one_query, the rows are the heads of one query (grouped-query
 * decoding) and all take query index 0 for the mask, bias and causal.
 * The sums run in the SIMD twin's order, so both give the same bits:
 *   q . k_j: four partial sums over p mod 4 (p < d_k rounded down to 4),
 *            combined as (s0 + s2) + (s1 + s3), then the tail p in order;
 *   l:       four partial sums over j mod 4, combined (l0 + l1) + (l2 + l3);
 *   sum_j p_j v_j: in order j = 0, 1, ... for each column. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
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

void attn__f32_decode_scalar(const attn__head_args* args) {
  assert(args != NULL && args->scratch != NULL);
  const size_t n_k = args->n_k, d_k = args->d_k, d_v = args->d_v;
  float* z = args->scratch;  /* (n_k) logits, then exp */
  for (size_t r = 0; r < args->n_q; r++) {
    const float* q_row = args->q + r * d_k;  /* (d_k) */
    float* out_row = args->out + r * d_v;    /* (d_v) */
    const size_t i = args->one_query ? 0 : r;  /* query index, for mask, bias and causal */
    const size_t visible = args->causal && i + 1 < n_k ? i + 1 : n_k;
    float m = -INFINITY;
    for (size_t j = 0; j < visible; j++) {
      float zj = attn__dot(q_row, args->k + j * d_k, d_k) * args->scale;
      if (args->bias != NULL) zj = zj + args->bias[i * n_k + j];
      if (args->mask != NULL && args->mask[i * n_k + j] == 0) zj = -INFINITY;
      z[j] = zj;
      m = attn__max_nan(m, zj);
    }
    if (m == -INFINITY) {  /* no allowed key */
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
      continue;
    }
    float l4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t j = 0; j < visible; j++) {
      z[j] = attn__expf_nonpos(z[j] - m);
      l4[j % 4] = l4[j % 4] + z[j];
    }
    const float l = (l4[0] + l4[1]) + (l4[2] + l4[3]);
    for (size_t c = 0; c < d_v; c++) {
      float acc = 0.0f;
      for (size_t j = 0; j < visible; j++) acc = acc + z[j] * args->v[j * d_v + c];
      out_row[c] = acc / l;
    }
  }
}
