/* f32-decode-scalar.c - the output path for few query rows (fewer than
 * ATTN__MR, as when decoding one token at a time, or tiny problems), the
 * readable spec of f32-decode-wasmsimd.c.
 *
 * The fused kernel packs K and V and computes ATTN__MR rows at a time; with
 * one query row, three quarters of its work and all of the packing are
 * wasted. Here K and V are read where they are, one query row at a time,
 * over the row's key span (attn__key_span: causal frontier, window, n_k);
 * keys outside it are not read:
 *   z_j   = softcap((q . k_j) * scale) (+ bias), -Infinity where masked;
 *   m     = max_j z_j (NaN wins);
 *   p_j   = exp(z_j - m), l = sum_j p_j;
 *   out   = (sum_j p_j v_j) / l, or 0 when no key is allowed (m = -Inf);
 *   lse   = m + log(l), or -Infinity;
 * with ALiBi's bias added after the bias, and a sink joined to m and l at
 * the end (attn__sink_join).
 * The rows are a head's query rows, or the one query row of each head of
 * a group (grouped-query decoding), or with a compact cache the query rows
 * of several heads: attn__decode_head. A compact cache's K and V are read
 * as the float32 values kv-rows gives (attn__kv_value), the same floats
 * the SIMD twin loads block by block; an int8 K's logits are integer dot
 * products with q rounded to 16 bits (attn__q16_row, attn__i8_logit), as
 * in the SIMD twin. With RoPE's k_table each key is turned as it is read
 * (attn__key_row), the bits the SIMD twin's turned blocks hold.
 * The sums run in the SIMD twin's order, so both give the same bits:
 *   q . k_j: four partial sums over p mod 4 (p < d_k rounded down to 4),
 *            combined as (s0 + s2) + (s1 + s3), then the tail p in order;
 *   l:       four partial sums over (j - span.lo) mod 4, combined (l0 + l1) + (l2 + l3);
 *   sum_j p_j v_j: in key order for each column. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "f32-tanh.h"
#include "kernels.h"

/* Row j of the head's keys: in place, turned by RoPE into buf (d_k) with
 * args->k_table, or a compact cache's row as float32 in buf. */
static const float* attn__key_row(const attn__decode_args* args, const attn__head* h, size_t j, float* buf) {
  if (args->k_table != NULL) {
    attn__f32_rope_scalar(h->k + j * h->k_stride, h->k_stride, 1, h->d_k, args->k_table + j * args->rope_dims,
                          args->rope_dims, args->rope_flags, buf, h->d_k);
    return buf;
  }
  if (h->k_rows.dtype == ATTN__KV_F32) return h->k + j * h->k_stride;
  if (h->k_rows.dtype == ATTN__KV_F16) {
    attn__f16_f32_kv_load_scalar(&h->k_rows, j, 1, h->d_k, buf, h->d_k);
  } else {
    attn__i8_f32_kv_load_scalar(&h->k_rows, j, 1, h->d_k, buf, h->d_k);
  }
  return buf;
}

/* Value c of the span's key j (rows v_stride apart from v), in place or
 * from a compact cache. */
static float attn__value(const attn__head* h, attn__span span, const float* v, size_t j, size_t c) {
  if (h->v_rows.dtype == ATTN__KV_F32) return v[j * h->v_stride + c];
  return attn__kv_value(&h->v_rows, span.lo + j, c);
}

void attn__f32_decode_scalar(const attn__decode_args* args) {
  assert(args != NULL && args->logits != NULL);
  assert((args->heads[0].k_rows.dtype == ATTN__KV_F32 && args->k_table == NULL) || args->tile != NULL);
  const attn__head* h0 = &args->heads[0];
  const size_t z_stride = attn__round_up(h0->n_k, 4);
  /* An int8 K takes its logits in integers (attn__i8_logits_ok), every
   * row's at once: row r's from its span's start at logits + r z_stride,
   * the rows' rounded queries in the tile. */
  const int integer_logits = attn__i8_logits_ok(h0);
  if (integer_logits) attn__i8_f32_logits_scalar(args, 0, h0->n_k, args->logits, z_stride, args->tile);
  for (size_t r = 0; r < attn__decode_rows(args); r++) {
    float* z = integer_logits ? args->logits + r * z_stride : args->logits;  /* (span) logits, then exp */
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const size_t d_k = h->d_k, d_v = h->d_v;
    const float* q_row = h->q + i * h->q_stride;  /* (d_k) */
    float* out_row = h->out + i * h->out_stride;  /* (d_v) */
    const attn__span span = attn__key_span(h, i);
    float m = -INFINITY;
    for (size_t j = span.lo; j < span.hi; j++) {
      float zj;
      if (integer_logits) {
        zj = z[j - span.lo];
      } else {
        attn__f32_logits_scalar(q_row, attn__key_row(args, h, j, args->tile), 0, 0, 1, d_k, h->scale, &zj);
      }
      if (h->softcap > 0.0f) zj = attn__softcapf(zj, h->softcap);
      if (h->bias != NULL) zj = zj + h->bias[i * h->bias_stride + j];
      if (h->alibi != 0.0f) zj = zj + attn__alibi_bias(h, i, j);
      if (!attn__key_allowed(h, span, i, j)) zj = -INFINITY;
      z[j - span.lo] = zj;
      m = attn__max_nan(m, zj);
    }
    const size_t n = span.hi - span.lo;
    const float* v = h->v != NULL ? h->v + span.lo * h->v_stride : NULL;  /* (n, d_v) the span's values */
    if (m == -INFINITY) {  /* no allowed key */
      float l0 = 0.0f;
      attn__sink_join(attn__row_sink(h, i), &m, &l0);
      for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
      if (h->lse != NULL) h->lse[i] = attn__row_lse(h, i, m, l0);
      continue;
    }
    float l4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t j = 0; j < n; j++) {
      z[j] = attn__expf_nonpos(z[j] - m);
      l4[j % 4] = l4[j % 4] + z[j];
    }
    float l = (l4[0] + l4[1]) + (l4[2] + l4[3]);
    const float alpha = attn__sink_join(attn__row_sink(h, i), &m, &l);
    for (size_t c = 0; c < d_v; c++) {
      float acc = 0.0f;
      for (size_t j = 0; j < n; j++) acc = acc + z[j] * attn__value(h, span, v, j, c);
      out_row[c] = alpha == 1.0f ? acc / l : acc * alpha / l;
    }
    if (h->lse != NULL) h->lse[i] = attn__row_lse(h, i, m, l);
  }
}
