/* f32-backward-scalar.c - the backward pass of attention for one (batch,
 * query head), the readable spec of f32-backward-wasmsimd.c.
 *
 * FlashAttention-2 order (Dao, 2023, algorithm 2): key blocks outside,
 * query tiles inside, the weights recomputed tile by tile from the row
 * log-sum-exp, so working memory is two (MR, BWD_BC) tiles whatever n_q
 * and n_k are. The formulas are in kernels.h above attn__bwd_args.
 *
 * Why p = exp(z - lse) needs no row max: lse >= every allowed z of its row,
 * so the argument is <= 0 and exp cannot overflow (attn__bwd_weight clamps
 * it for an lse from another summation order).
 *
 * Summation orders (the SIMD twin keeps them, so both give the same bits):
 * dot products run over d in order; dv_j and dk_j add the rows in order
 * onto the running value; dq_i adds the keys in order; the row pass takes
 * the keys in the SIMD twin's blocks. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "kernels.h"

/* Panels of 8 rows (pack_rows layout) read back: element c of row j. */
static float attn__panel(const float* panels, size_t d, size_t j, size_t c) {
  return panels[((j / ATTN__PAD) * d + c) * ATTN__PAD + j % ATTN__PAD];
}

/* (q_i . k_j) * scale, summed over d_k in order. */
static float attn__scaled_score(const attn__bwd_args* a, size_t i, size_t j) {
  const attn__head* h = &a->head;
  float s = 0.0f;
  for (size_t c = 0; c < h->d_k; c++) s = s + h->q[i * h->q_stride + c] * attn__panel(a->k_panels, h->d_k, j, c);
  return s * h->scale;
}

/* dout_i . v_j, summed over d_v in order. */
static float attn__dout_v(const attn__bwd_args* a, size_t i, size_t j) {
  const attn__head* h = &a->head;
  float dp = 0.0f;
  for (size_t c = 0; c < h->d_v; c++) dp = dp + a->dout[i * h->out_stride + c] * attn__panel(a->v_key_panels, h->d_v, j, c);
  return dp;
}

void attn__f32_backward_rows_scalar(const attn__bwd_args* a, float* lse) {
  assert(a != NULL && a->delta != NULL);
  const attn__head* h = &a->head;
  const size_t n_q = h->n_q;
  const int with_out = h->out != NULL;
  if (with_out) {
    attn__bwd_delta(a);
    if (lse == NULL) return;
  }
  /* Online per row over key blocks: m is the max of the allowed logits seen
   * so far, l the sum of exp(z - m) over them, acc the sum of
   * exp(z - m) (dout_i . v_j) (without out, delta = acc / l); a block that
   * raises the max rescales l and acc by exp(m_old - m_new) <= 1. */
  for (size_t i = 0; i < n_q; i++) {
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    /* Key blocks as the SIMD twin forms them for the row's block of BWD_BR
     * rows (from the first key any of them sees, rounded down to 8), so
     * both rescale at the same keys and give the same bits. */
    const size_t i0 = i / ATTN__BWD_BR * ATTN__BWD_BR;
    const size_t i1 = n_q - i0 < ATTN__BWD_BR ? n_q : i0 + ATTN__BWD_BR;
    const attn__span keys = attn__rows_key_span(h, i0, i1);
    for (size_t j0 = keys.lo / 8 * 8; j0 < keys.hi; j0 += ATTN__BWD_BC) {
      const size_t nb = keys.hi - j0 < ATTN__BWD_BC ? keys.hi - j0 : ATTN__BWD_BC;
      float z[ATTN__BWD_BC];  /* (nb) this block's logits */
      float block_max = -INFINITY;
      for (size_t jj = 0; jj < nb; jj++) {
        float th;
        z[jj] = attn__bwd_logit(h, i, j0 + jj, attn__scaled_score(a, i, j0 + jj), &th);
        block_max = attn__max_nan(block_max, z[jj]);
      }
      const float m_new = attn__max_nan(m, block_max);
      if (m_new == -INFINITY) continue;  /* nothing allowed yet */
      float sum = 0.0f, dsum = 0.0f;
      for (size_t jj = 0; jj < nb; jj++) {
        const float e = attn__expf_nonpos(z[jj] - m_new);
        sum = sum + e;
        if (!with_out && e != 0.0f) dsum = dsum + e * attn__dout_v(a, i, j0 + jj);
      }
      const float alpha = attn__expf_nonpos(m - m_new);
      l = l * alpha + sum;
      acc = acc * alpha + dsum;
      m = m_new;
    }
    const float l_keys = l;
    const float alpha = attn__sink_join(attn__row_sink(h, i), &m, &l);
    if (lse != NULL) lse[i] = attn__lse(m, l);
    if (!with_out) a->delta[i] = l_keys == 0.0f ? 0.0f : alpha == 1.0f ? acc / l : acc * alpha / l;
  }
}

void attn__f32_backward_scalar(const attn__bwd_args* a) {
  assert(a != NULL && a->scratch != NULL);
  const attn__head* h = &a->head;
  const size_t n_k = h->n_k, d_k = h->d_k, d_v = h->d_v;
  float* p = a->scratch;                       /* (MR, BWD_BC) weights */
  float* ds = p + ATTN__MR * ATTN__BWD_BC;     /* (MR, BWD_BC) score gradients */

  for (size_t j0 = 0; j0 < n_k; j0 += ATTN__BWD_BC) {
    const size_t nb = n_k - j0 < ATTN__BWD_BC ? n_k - j0 : ATTN__BWD_BC;
    const attn__span rows_seen = attn__key_rows(h, j0, j0 + nb);
    for (size_t i0 = rows_seen.lo; i0 < rows_seen.hi; i0 += ATTN__MR) {
      const size_t rows = rows_seen.hi - i0 < ATTN__MR ? rows_seen.hi - i0 : ATTN__MR;
      for (size_t r = 0; r < rows; r++) {
        const size_t i = i0 + r;
        const float lse = h->lse[i], delta = a->delta[i];
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          p[r * ATTN__BWD_BC + jj] = 0.0f;
          ds[r * ATTN__BWD_BC + jj] = 0.0f;
          if (lse == -INFINITY) continue;  /* no allowed key in this row */
          float th;
          const float pij = attn__bwd_weight(h, i, j, attn__scaled_score(a, i, j), lse, &th);
          if (pij == 0.0f) continue;  /* dz = 0 where p = 0, even if dp is not finite */
          p[r * ATTN__BWD_BC + jj] = pij;
          ds[r * ATTN__BWD_BC + jj] = attn__bwd_score_grad(a, i, j, pij, attn__dout_v(a, i, j), delta, th);
        }
      }
      /* dv_j += sum_r p[r][j] dout_r and dk_j += sum_r ds[r][j] q_r, rows in order. */
      for (size_t jj = 0; jj < nb; jj++) {
        float* dv_row = a->dv + (j0 + jj) * h->v_stride;  /* (d_v) */
        float* dk_row = a->dk + (j0 + jj) * h->k_stride;  /* (d_k) */
        for (size_t r = 0; r < rows; r++) {
          const float pr = p[r * ATTN__BWD_BC + jj], dsr = ds[r * ATTN__BWD_BC + jj];
          if (h->lse[i0 + r] == -INFINITY) continue;
          for (size_t c = 0; c < d_v; c++) dv_row[c] = dv_row[c] + pr * a->dout[(i0 + r) * h->out_stride + c];
          for (size_t c = 0; c < d_k; c++) dk_row[c] = dk_row[c] + dsr * h->q[(i0 + r) * h->q_stride + c];
        }
      }
      /* dq_i += sum_j ds[r][j] k_j, keys in order. */
      for (size_t r = 0; r < rows; r++) {
        if (h->lse[i0 + r] == -INFINITY) continue;
        float* dq_row = a->dq + (i0 + r) * h->q_stride;  /* (d_k) */
        for (size_t jj = 0; jj < nb; jj++) {
          const float dsr = ds[r * ATTN__BWD_BC + jj];
          const float* k_row = h->k + (j0 + jj) * h->k_stride;  /* (d_k) */
          for (size_t c = 0; c < d_k; c++) dq_row[c] = dq_row[c] + dsr * k_row[c];
        }
      }
    }
  }
}
