/* f32-flash-scalar.c - fused attention for one (batch, head), the readable
 * spec of f32-flash-wasmsimd.c.
 *
 * Queries go in tiles of MR rows; for each tile the keys are visited in
 * blocks of KB. Per query row r the loop keeps
 *   m[r]   = max of the allowed logits seen so far (-Infinity if none),
 *   l[r]   = sum over those keys of exp(z_j - m[r]),
 *   acc[r] = sum over those keys of exp(z_j - m[r]) v_j          (d_v)
 * When a block raises the max to m', the old terms are multiplied by
 * alpha = exp(m - m') <= 1 before the block's terms are added, which keeps
 * every exp argument <= 0 (no overflow, whatever the logits). At the end
 * out[r] = acc[r] / l[r], or 0 when no key was allowed (l = 0), and
 * lse[r] = m[r] + log(l[r]), after a sink joins m and l (attn__sink_join).
 * ALiBi's bias is added after the bias.
 * A tile visits only the keys from the first any of its rows may see
 * (rounded down to a panel of 8) to the last (attn__tile_keys); keys there
 * that a row may not see (attn__key_allowed) are cut to -Infinity. */
#include <assert.h>
#include <math.h>

#include "f32-exp.h"
#include "f32-tanh.h"
#include "kernels.h"

void attn__f32_flash_scalar(const attn__flash_args* args) {
  assert(args != NULL && args->tile != NULL);
  const attn__head* h = &args->head;
  const size_t n_q = h->n_q, n_k = h->n_k, d_k = h->d_k, d_v = h->d_v;
  const size_t d_v_pad = args->d_v_pad;
  const attn__flash_tile tile = attn__flash_tile_parts(args);
  float *s = tile.s, *acc = tile.acc, *m = tile.m, *l = tile.l;
  attn__span spans[ATTN__MR];                /* each row's keys */

  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__MR) {
    const size_t rows = n_q - i0 < ATTN__MR ? n_q - i0 : ATTN__MR;
    for (size_t r = 0; r < ATTN__MR; r++) {
      m[r] = -INFINITY;
      l[r] = 0.0f;
      for (size_t c = 0; c < d_v_pad; c++) acc[r * d_v_pad + c] = 0.0f;
    }
    const attn__span keys = attn__tile_keys(h, i0, rows, spans);
    for (size_t j0 = keys.lo; j0 < keys.hi; j0 += ATTN__KB) {
      const size_t nb = keys.hi - j0 < ATTN__KB ? keys.hi - j0 : ATTN__KB;
      for (size_t r = 0; r < rows; r++) {
        const size_t i = i0 + r;
        const float* q_row = h->q + i * h->q_stride;  /* (d_k) */
        float* z = s + r * ATTN__KB;                  /* (nb) this row's logits */
        /* Scores q_i . k_j, summed over d_k in order. */
        for (size_t jj = 0; jj < nb; jj++) z[jj] = 0.0f;
        for (size_t p = 0; p < d_k; p++) {
          for (size_t jj = 0; jj < nb; jj++) {
            const size_t j = j0 + jj;
            const float k_jp = args->k_panels[((j / ATTN__PAD) * d_k + p) * ATTN__PAD + j % ATTN__PAD];
            z[jj] = z[jj] + q_row[p] * k_jp;
          }
        }
        /* Logits: softcap of the scaled score plus bias, -Infinity where not
         * allowed. */
        float block_max = -INFINITY;
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          float zj = z[jj] * h->scale;
          if (h->softcap > 0.0f) zj = attn__softcapf(zj, h->softcap);
          if (h->bias != NULL) zj = zj + h->bias[i * h->bias_stride + j];
          if (h->alibi != 0.0f) zj = zj + attn__alibi_bias(h, i, j);
          if (!attn__key_allowed(h, spans[r], i, j)) zj = -INFINITY;
          z[jj] = zj;
          block_max = attn__max_nan(block_max, zj);
        }
        /* Online softmax update. */
        const float m_new = attn__max_nan(m[r], block_max);
        const float m_sub = m_new == -INFINITY ? 0.0f : m_new;  /* nothing allowed yet */
        const float alpha = attn__expf_nonpos(m[r] - m_sub);
        float block_sum = 0.0f;
        for (size_t jj = 0; jj < nb; jj++) {
          z[jj] = attn__expf_nonpos(z[jj] - m_sub);
          block_sum = block_sum + z[jj];
        }
        l[r] = l[r] * alpha + block_sum;
        m[r] = m_new;
        float* acc_row = acc + r * d_v_pad;  /* (d_v_pad) */
        for (size_t c = 0; c < d_v_pad; c++) acc_row[c] = acc_row[c] * alpha;
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          for (size_t c = 0; c < d_v_pad; c++) {
            const float v_jc = args->v_col_panels[((c / ATTN__PAD) * n_k + j) * ATTN__PAD + c % ATTN__PAD];
            acc_row[c] = acc_row[c] + z[jj] * v_jc;
          }
        }
      }
    }
    for (size_t r = 0; r < rows; r++) {
      float* out_row = h->out + (i0 + r) * h->out_stride;  /* (d_v) */
      const float* acc_row = acc + r * d_v_pad;
      const float l_keys = l[r];
      const float alpha = attn__sink_join(attn__row_sink(h, i0 + r), &m[r], &l[r]);
      for (size_t c = 0; c < d_v; c++) {
        out_row[c] = l_keys == 0.0f ? 0.0f : alpha == 1.0f ? acc_row[c] / l[r] : acc_row[c] * alpha / l[r];
      }
      if (h->lse != NULL) h->lse[i0 + r] = attn__row_lse(h, i0 + r, m[r], l[r]);
    }
  }
}
