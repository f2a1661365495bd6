/* f32-backward-scalar.c - the backward pass of attention for one (batch,
 * query head), the readable spec of f32-backward-wasmsimd.c.
 *
 * FlashAttention-2 order (Dao, 2023, algorithm 2): key blocks outside,
 * query tiles inside, the weights recomputed tile by tile from the row
 * log-sum-exp, so working memory is two (MR, BWD_BC) tiles whatever n_q
 * and n_k are. The formulas are in kernels.h above attn__bwd_args.
 *
 * Why p = exp(z - lse) needs no row max: lse >= every allowed z of its row,
 * so the argument is <= 0 and exp cannot overflow. The lse a caller passes
 * may come from a forward pass that summed in another order and sit a few
 * ulp below some z; the argument is clamped to 0, so p <= 1 still holds.
 *
 * Summation orders (the SIMD twin keeps them, so both give the same bits):
 * dot products run over d in order; dv_j and dk_j add the rows in order
 * onto the running value; dq_i adds the keys in order; the row pass takes
 * the keys in the SIMD twin's blocks. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "kernels.h"

/* The packed panels (pack_k layout) read back: element c of key j. */
static float attn__panel(const float* panels, size_t d, size_t j, size_t c) {
  return panels[((j / ATTN__PAD) * d + c) * ATTN__PAD + j % ATTN__PAD];
}

/* (q_i . k_j) * scale, summed over d_k in order. */
static float attn__scaled_score(const attn__bwd_args* a, size_t i, size_t j) {
  float s = 0.0f;
  for (size_t c = 0; c < a->d_k; c++) s = s + a->q[i * a->q_stride + c] * attn__panel(a->kp, a->d_k, j, c);
  return s * a->scale;
}

/* dout_i . v_j, summed over d_v in order. */
static float attn__dout_v(const attn__bwd_args* a, size_t i, size_t j) {
  float dp = 0.0f;
  for (size_t c = 0; c < a->d_v; c++) dp = dp + a->dout[i * a->dout_stride + c] * attn__panel(a->vp, a->d_v, j, c);
  return dp;
}

void attn__f32_backward_rows_scalar(const attn__bwd_args* a, const float* out, size_t out_stride,
                                    float* lse, float* delta) {
  assert(a != NULL && delta != NULL);
  const size_t n_q = a->n_q, d_v = a->d_v;
  if (out != NULL) {
    for (size_t i = 0; i < n_q; i++) {
      float d = 0.0f;
      for (size_t c = 0; c < d_v; c++) d = d + a->dout[i * a->dout_stride + c] * out[i * out_stride + c];
      delta[i] = d;
    }
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
    size_t k_lo, k_hi;
    attn__bwd_keys(a, i0, i1, &k_lo, &k_hi);
    for (size_t j0 = k_lo / 8 * 8; j0 < k_hi; j0 += ATTN__BWD_BC) {
      const size_t nb = k_hi - j0 < ATTN__BWD_BC ? k_hi - j0 : ATTN__BWD_BC;
      float z[ATTN__BWD_BC];  /* (nb) this block's logits */
      float block_max = -INFINITY;
      for (size_t jj = 0; jj < nb; jj++) {
        float th;
        z[jj] = attn__bwd_logit(a, i, j0 + jj, attn__scaled_score(a, i, j0 + jj), &th);
        block_max = attn__max_nan(block_max, z[jj]);
      }
      const float m_new = attn__max_nan(m, block_max);
      if (m_new == -INFINITY) continue;  /* nothing allowed yet */
      float sum = 0.0f, dsum = 0.0f;
      for (size_t jj = 0; jj < nb; jj++) {
        const float e = attn__expf_nonpos(z[jj] - m_new);
        sum = sum + e;
        if (out == NULL && e != 0.0f) dsum = dsum + e * attn__dout_v(a, i, j0 + jj);
      }
      const float alpha = attn__expf_nonpos(m - m_new);
      l = l * alpha + sum;
      acc = acc * alpha + dsum;
      m = m_new;
    }
    if (lse != NULL) lse[i] = m == -INFINITY ? -INFINITY : m + logf(l);
    if (out == NULL) delta[i] = l == 0.0f ? 0.0f : acc / l;
  }
}

void attn__f32_backward_scalar(const attn__bwd_args* a) {
  assert(a != NULL && a->scratch != NULL);
  const size_t n_k = a->n_k, d_k = a->d_k, d_v = a->d_v;
  float* p = a->scratch;                       /* (MR, BWD_BC) weights */
  float* ds = p + ATTN__MR * ATTN__BWD_BC;     /* (MR, BWD_BC) score gradients */

  for (size_t j0 = 0; j0 < n_k; j0 += ATTN__BWD_BC) {
    const size_t nb = n_k - j0 < ATTN__BWD_BC ? n_k - j0 : ATTN__BWD_BC;
    size_t lo, hi;
    attn__bwd_rows(a, j0, j0 + nb, &lo, &hi);
    for (size_t i0 = lo; i0 < hi; i0 += ATTN__MR) {
      const size_t rows = hi - i0 < ATTN__MR ? hi - i0 : ATTN__MR;
      for (size_t r = 0; r < rows; r++) {
        const size_t i = i0 + r;
        const float lse = a->lse[i], delta = a->delta[i];
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          p[r * ATTN__BWD_BC + jj] = 0.0f;
          ds[r * ATTN__BWD_BC + jj] = 0.0f;
          if (lse == -INFINITY) continue;  /* no allowed key in this row */
          float th;
          const float z = attn__bwd_logit(a, i, j, attn__scaled_score(a, i, j), &th);
          if (z == -INFINITY) continue;
          float arg = z - lse;
          if (arg > 0.0f) arg = 0.0f;  /* rounding in lse; NaN stays NaN */
          const float pij = attn__expf_nonpos(arg);
          if (pij == 0.0f) continue;  /* dz = 0 where p = 0, even if dp is not finite */
          const float dp = attn__dout_v(a, i, j);
          const float dz = pij * (dp - delta);
          if (a->dbias != NULL) a->dbias[i * a->bias_stride + j] = a->dbias[i * a->bias_stride + j] + dz;
          float dsij = dz;
          if (a->softcap > 0.0f) dsij = dsij * (1.0f - th * th);
          p[r * ATTN__BWD_BC + jj] = pij;
          ds[r * ATTN__BWD_BC + jj] = dsij * a->scale;
        }
      }
      /* dv_j += sum_r p[r][j] dout_r and dk_j += sum_r ds[r][j] q_r, rows in order. */
      for (size_t jj = 0; jj < nb; jj++) {
        float* dv_row = a->dv + (j0 + jj) * a->dv_stride;  /* (d_v) */
        float* dk_row = a->dk + (j0 + jj) * a->dk_stride;  /* (d_k) */
        for (size_t r = 0; r < rows; r++) {
          const float pr = p[r * ATTN__BWD_BC + jj], dsr = ds[r * ATTN__BWD_BC + jj];
          if (a->lse[i0 + r] == -INFINITY) continue;
          for (size_t c = 0; c < d_v; c++) dv_row[c] = dv_row[c] + pr * a->dout[(i0 + r) * a->dout_stride + c];
          for (size_t c = 0; c < d_k; c++) dk_row[c] = dk_row[c] + dsr * a->q[(i0 + r) * a->q_stride + c];
        }
      }
      /* dq_i += sum_j ds[r][j] k_j, keys in order. */
      for (size_t r = 0; r < rows; r++) {
        if (a->lse[i0 + r] == -INFINITY) continue;
        float* dq_row = a->dq + (i0 + r) * a->dq_stride;  /* (d_k) */
        for (size_t jj = 0; jj < nb; jj++) {
          const float dsr = ds[r * ATTN__BWD_BC + jj];
          const float* k_row = a->k + (j0 + jj) * a->k_stride;  /* (d_k) */
          for (size_t c = 0; c < d_k; c++) dq_row[c] = dq_row[c] + dsr * k_row[c];
        }
      }
    }
  }
}
