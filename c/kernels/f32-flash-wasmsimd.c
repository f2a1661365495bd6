/* f32-flash-wasmsimd.c - fused attention for one (batch, head) with SIMD128.
 * Same algorithm and invariants as f32-flash-scalar.c (read that first); the
 * differences are only in how the work is laid on lanes:
 *   - the score tile is 4 queries x 8 keys per step: one query element is
 *     splatted against 8 packed keys (two vectors of K^T), 8 accumulators;
 *   - P V is 4 queries x 8 output columns per step, 8 accumulators;
 *   - a query tile with fewer than 4 rows aliases its last row and gives the
 *     extra rows logits of -Infinity, so they add nothing and are not stored;
 *   - key columns past the block (padding of the packed K^T) or outside a
 *     row's key range get -Infinity.
 * Each logit, exp and acc element matches the scalar twin bit for bit; only
 * the row sums l run in four lanes and may differ by rounding. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-alibi-wasmsimd.h"
#include "f32-exp-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-tanh-wasmsimd.h"
#include "f32-tile-wasmsimd.h"
#include "kernels.h"

/* z (4, KB): z[r][jj] = (q_r . k_(j0 + jj)) * scale + alibi[MR - 1 - r + jj]
 * for jj < nbp (a multiple of 8), without the last term when alibi is NULL.
 * qt is the query tile interleaved, (d_k, 4): element p of row r at
 * qt[p * 4 + r], so the four splats of a step read one 16-byte line.
 * k_panels points at the panel of key j0. vmax[r] gets the lanes of row r's
 * max, for blocks that need no masking, taken with f32x4.pmax as
 * attn__max_nan_of_wasmsimd does (f32-exp-wasmsimd.h, which says why), and
 * the function returns 0 when a logit may be NaN (their sum is NaN): the
 * caller then takes the max over z. The dot products
 * are the shared 4 x 8 tile (f32-tile-wasmsimd.h; a 6 x 8 tile's 12
 * accumulators would spill). */
static int attn__score_tile_wasmsimd(const float* qt, const float* k_panels, size_t d_k, size_t nbp,
                                     v128_t vscale, const float* alibi, float* z, v128_t vmax[4]) {
  v128_t vmax0 = wasm_f32x4_splat(-INFINITY), vmax1 = vmax0, vmax2 = vmax0, vmax3 = vmax0;
  v128_t vsum = wasm_f32x4_splat(0.0f);  /* NaN when any logit is (or two infinities cancel) */
  for (size_t jj = 0; jj < nbp; jj += 8) {
    const float* k_panel = k_panels + (jj / 8) * d_k * 8;  /* (d_k, 8) keys j0+jj .. j0+jj+7 */
    const size_t q_rows[4] = {0, 1, 2, 3};  /* qt (d_k, 4): row r's element p at [p * 4 + r] */
    const attn__tile4x8 t = attn__tile4x8_wasmsimd(d_k, qt, q_rows, 4, k_panel, 8);
    v128_t vacc0x0123 = t.acc[0][0], vacc0x4567 = t.acc[0][1], vacc1x0123 = t.acc[1][0], vacc1x4567 = t.acc[1][1];
    v128_t vacc2x0123 = t.acc[2][0], vacc2x4567 = t.acc[2][1], vacc3x0123 = t.acc[3][0], vacc3x4567 = t.acc[3][1];
    vacc0x0123 = wasm_f32x4_mul(vacc0x0123, vscale);
    vacc0x4567 = wasm_f32x4_mul(vacc0x4567, vscale);
    vacc1x0123 = wasm_f32x4_mul(vacc1x0123, vscale);
    vacc1x4567 = wasm_f32x4_mul(vacc1x4567, vscale);
    vacc2x0123 = wasm_f32x4_mul(vacc2x0123, vscale);
    vacc2x4567 = wasm_f32x4_mul(vacc2x4567, vscale);
    vacc3x0123 = wasm_f32x4_mul(vacc3x0123, vscale);
    vacc3x4567 = wasm_f32x4_mul(vacc3x4567, vscale);
    if (alibi != NULL) {  /* row r's keys are ALiBi's distances shifted by r: one table, four offsets */
      vacc0x0123 = wasm_f32x4_add(vacc0x0123, wasm_v128_load(alibi + 3 + jj));
      vacc0x4567 = wasm_f32x4_add(vacc0x4567, wasm_v128_load(alibi + 3 + jj + 4));
      vacc1x0123 = wasm_f32x4_add(vacc1x0123, wasm_v128_load(alibi + 2 + jj));
      vacc1x4567 = wasm_f32x4_add(vacc1x4567, wasm_v128_load(alibi + 2 + jj + 4));
      vacc2x0123 = wasm_f32x4_add(vacc2x0123, wasm_v128_load(alibi + 1 + jj));
      vacc2x4567 = wasm_f32x4_add(vacc2x4567, wasm_v128_load(alibi + 1 + jj + 4));
      vacc3x0123 = wasm_f32x4_add(vacc3x0123, wasm_v128_load(alibi + jj));
      vacc3x4567 = wasm_f32x4_add(vacc3x4567, wasm_v128_load(alibi + jj + 4));
    }
    vmax0 = wasm_f32x4_pmax(vmax0, wasm_f32x4_pmax(vacc0x0123, vacc0x4567));
    vmax1 = wasm_f32x4_pmax(vmax1, wasm_f32x4_pmax(vacc1x0123, vacc1x4567));
    vmax2 = wasm_f32x4_pmax(vmax2, wasm_f32x4_pmax(vacc2x0123, vacc2x4567));
    vmax3 = wasm_f32x4_pmax(vmax3, wasm_f32x4_pmax(vacc3x0123, vacc3x4567));
    vsum = wasm_f32x4_add(vsum, wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(vacc0x0123, vacc0x4567),
                                                              wasm_f32x4_add(vacc1x0123, vacc1x4567)),
                                               wasm_f32x4_add(wasm_f32x4_add(vacc2x0123, vacc2x4567),
                                                              wasm_f32x4_add(vacc3x0123, vacc3x4567))));
    wasm_v128_store(z + jj, vacc0x0123);
    wasm_v128_store(z + jj + 4, vacc0x4567);
    wasm_v128_store(z + ATTN__KB + jj, vacc1x0123);
    wasm_v128_store(z + ATTN__KB + jj + 4, vacc1x4567);
    wasm_v128_store(z + 2 * ATTN__KB + jj, vacc2x0123);
    wasm_v128_store(z + 2 * ATTN__KB + jj + 4, vacc2x4567);
    wasm_v128_store(z + 3 * ATTN__KB + jj, vacc3x0123);
    wasm_v128_store(z + 3 * ATTN__KB + jj + 4, vacc3x4567);
  }
  vmax[0] = vmax0;
  vmax[1] = vmax1;
  vmax[2] = vmax2;
  vmax[3] = vmax3;
  return !wasm_v128_any_true(wasm_f32x4_ne(vsum, vsum));
}

/* acc (4, d_v_pad) = acc * alpha_r + p (4, nb) v (nb, d_v_pad); v_col_panels
 * points at key j0 of the first column panel, panels are n_k * 8 floats
 * apart. */
static void attn__pv_tile_wasmsimd(const float* p, size_t nb, const float* v_col_panels, size_t n_k,
                                   size_t d_v_pad, const float* alpha, float* acc) {
  const v128_t valpha0 = wasm_f32x4_splat(alpha[0]);
  const v128_t valpha1 = wasm_f32x4_splat(alpha[1]);
  const v128_t valpha2 = wasm_f32x4_splat(alpha[2]);
  const v128_t valpha3 = wasm_f32x4_splat(alpha[3]);
  float* acc0 = acc;
  float* acc1 = acc0 + d_v_pad;
  float* acc2 = acc1 + d_v_pad;
  float* acc3 = acc2 + d_v_pad;
  for (size_t c = 0; c < d_v_pad; c += 8) {
    float* const acc_rows[4] = {acc0 + c, acc1 + c, acc2 + c, acc3 + c};  /* (4, 8) columns c .. c+7 */
    attn__tile4x8 t = attn__tile4x8_load(acc_rows);
    const v128_t valpha[4] = {valpha0, valpha1, valpha2, valpha3};
    for (size_t r = 0; r < 4; r++) t.acc[r][0] = wasm_f32x4_mul(t.acc[r][0], valpha[r]), t.acc[r][1] = wasm_f32x4_mul(t.acc[r][1], valpha[r]);
    const float* v_panel = v_col_panels + (c / 8) * n_k * 8;  /* (nb, 8) columns c .. c+7 */
    const size_t p_rows[4] = {0, ATTN__KB, 2 * ATTN__KB, 3 * ATTN__KB};
    attn__tile4x8_store(attn__tile4x8_add_wasmsimd(t, nb, p, p_rows, 1, v_panel, 8), acc_rows);
  }
}

void attn__f32_flash_wasmsimd(const attn__flash_args* args) {
  assert(args != NULL && args->tile != NULL);
  assert(args->d_v_pad % 8 == 0 && ATTN__PAD == 8 && ATTN__KB % 8 == 0 && ATTN__MR == 4);
  const attn__head* h = &args->head;
  const size_t n_q = h->n_q, n_k = h->n_k, d_k = h->d_k, d_v = h->d_v;
  const size_t d_v_pad = args->d_v_pad;
  const attn__flash_tile tile = attn__flash_tile_parts(args);
  float *s = tile.s, *acc = tile.acc, *m = tile.m, *l = tile.l;
  float* qt = l + ATTN__MR;  /* (d_k, MR) the query tile, interleaved */
  float alpha[ATTN__MR];
  float alibi_row[ATTN__KB + ATTN__MR];  /* a block's ALiBi biases, keys j0 - 3 .. j0 + KB - 1 of the tile's last row */
  attn__span spans[ATTN__MR];            /* each row's keys */
  const v128_t vscale = wasm_f32x4_splat(h->scale);
  const v128_t vminus_inf = wasm_f32x4_splat(-INFINITY);

  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__MR) {
    const size_t rows = n_q - i0 < ATTN__MR ? n_q - i0 : ATTN__MR;
    /* Interleave the tile's queries; missing rows repeat the last real one. */
    for (size_t r = 0; r < ATTN__MR; r++) {
      const float* q_row = h->q + (i0 + (r < rows ? r : rows - 1)) * h->q_stride;  /* (d_k) */
      for (size_t p = 0; p < d_k; p++) qt[p * ATTN__MR + r] = q_row[p];
    }
    for (size_t r = 0; r < ATTN__MR; r++) m[r] = -INFINITY, l[r] = 0.0f;
    const attn__span keys = attn__tile_keys(h, i0, rows, spans);
    for (size_t c = 0; c < ATTN__MR * d_v_pad; c += 4) wasm_v128_store(acc + c, wasm_f32x4_splat(0.0f));
    /* One table of ALiBi biases serves the tile when row r's reference key
     * is the last row's minus (MR - 1 - r), as where each row's span ends
     * at its own position. */
    const int64_t tile_ref = attn__alibi_ref(h, i0 + ATTN__MR - 1);
    int alibi_steps = h->alibi != 0.0f;
    for (size_t r = 0; alibi_steps && r < rows; r++) {
      alibi_steps = attn__alibi_ref(h, i0 + r) + (int64_t)(ATTN__MR - 1 - r) == tile_ref;
    }
    for (size_t j0 = keys.lo; j0 < keys.hi; j0 += ATTN__KB) {
      const size_t nb = keys.hi - j0 < ATTN__KB ? keys.hi - j0 : ATTN__KB;
      const size_t nbp = attn__round_up(nb, 8);
      /* ALiBi's biases of the block for the tile's last row, from key j0 - 3
       * on (row r reads them from 3 - r), added in the tile's store when
       * they are the last term of a logit (no softcap or bias before them)
       * and the rows' reference keys step with the rows (alibi_steps). */
      const int alibi_in_tile = alibi_steps && h->softcap == 0.0f && h->bias == NULL &&
                                attn__alibi_row_wasmsimd(h->alibi, (int64_t)j0 - tile_ref, nbp + ATTN__MR, alibi_row);
      v128_t vtile_max[4];
      const int tile_max_holds = attn__score_tile_wasmsimd(qt, args->k_panels + j0 * d_k, d_k, nbp, vscale,
                                                           alibi_in_tile ? alibi_row : NULL, s, vtile_max);
      for (size_t r = 0; r < ATTN__MR; r++) {
        float* z = s + r * ATTN__KB;  /* (nbp) this row's logits */
        /* The tile's row max holds when nothing below changes a logit. */
        int plain = 0;
        if (r >= rows) {
          for (size_t jj = 0; jj < nbp; jj += 4) wasm_v128_store(z + jj, vminus_inf);
        } else {
          const size_t i = i0 + r;
          plain = tile_max_holds && h->bias == NULL && h->mask == NULL && h->softcap == 0.0f &&
                  (h->alibi == 0.0f || alibi_in_tile) &&
                  nb == nbp && spans[r].lo <= j0 && spans[r].hi >= j0 + nb;
          if (h->softcap > 0.0f) attn__softcap_wasmsimd(z, nbp, h->softcap);
          if (h->bias != NULL) {
            const float* bias_row = h->bias + i * h->bias_stride + j0;  /* (nb) */
            size_t jj = 0;
            for (; jj + 4 <= nb; jj += 4) {
              wasm_v128_store(z + jj, wasm_f32x4_add(wasm_v128_load(z + jj), wasm_v128_load(bias_row + jj)));
            }
            for (; jj < nb; jj++) z[jj] = z[jj] + bias_row[jj];
          }
          if (!alibi_in_tile) attn__add_alibi_wasmsimd(h, i, j0, nb, z);
          /* attn__key_allowed on whole vectors (scalar stores followed by
           * a vector load of the same bytes stall store forwarding on x86):
           * a lane is cut when its key is outside the row's span or past
           * the block, or masked; the mask is read only below nb. */
          const uint8_t* mask_row = h->mask != NULL ? h->mask + i * h->mask_stride + j0 : NULL;  /* (nb) */
          const int64_t first = (int64_t)spans[r].lo - (int64_t)j0;  /* keys [first, last) of the block stay */
          int64_t last = (int64_t)spans[r].hi - (int64_t)j0;
          if (last > (int64_t)nb) last = (int64_t)nb;
          if (mask_row != NULL || first > 0 || last < (int64_t)nbp) {
            const v128_t vfirst = wasm_i32x4_splat((int32_t)(first < 0 ? 0 : first));
            const v128_t vlast = wasm_i32x4_splat((int32_t)(last < 0 ? 0 : last));
            for (size_t jj = 0; jj < nbp; jj += 4) {
              const v128_t vkey = wasm_i32x4_add(wasm_i32x4_splat((int32_t)jj), wasm_i32x4_make(0, 1, 2, 3));
              v128_t vcut = wasm_v128_or(wasm_i32x4_lt(vkey, vfirst), wasm_i32x4_ge(vkey, vlast));
              if (mask_row != NULL) {
                const int32_t m0 = jj < nb ? mask_row[jj] : 1, m1 = jj + 1 < nb ? mask_row[jj + 1] : 1;
                const int32_t m2 = jj + 2 < nb ? mask_row[jj + 2] : 1, m3 = jj + 3 < nb ? mask_row[jj + 3] : 1;
                vcut = wasm_v128_or(vcut, wasm_i32x4_eq(wasm_i32x4_make(m0, m1, m2, m3), wasm_i32x4_splat(0)));
              }
              wasm_v128_store(z + jj, wasm_v128_bitselect(vminus_inf, wasm_v128_load(z + jj), vcut));
            }
          }
        }
        const float block_max = plain ? attn__hmax_nan_wasmsimd(vtile_max[r]) : attn__max_nan_of_wasmsimd(z, nbp);
        const float m_new = attn__max_nan(m[r], block_max);
        const float m_sub = m_new == -INFINITY ? 0.0f : m_new;
        alpha[r] = attn__expf_nonpos(m[r] - m_sub);
        l[r] = l[r] * alpha[r] + attn__exp_sub_sum_wasmsimd(z, nbp, m_sub);
        m[r] = m_new;
      }
      attn__pv_tile_wasmsimd(s, nb, args->v_col_panels + j0 * 8, n_k, d_v_pad, alpha, acc);
    }
    for (size_t r = 0; r < rows; r++) {
      float* out_row = h->out + (i0 + r) * h->out_stride;  /* (d_v) */
      const float* acc_row = acc + r * d_v_pad;
      const float l_keys = l[r];
      const float sink_alpha = attn__sink_join(attn__row_sink(h, i0 + r), &m[r], &l[r]);
      if (h->lse != NULL) h->lse[i0 + r] = attn__row_lse(h, i0 + r, m[r], l[r]);
      if (l_keys == 0.0f) {  /* no allowed key */
        for (size_t c = 0; c < d_v; c++) out_row[c] = 0.0f;
        continue;
      }
      if (sink_alpha != 1.0f) {
        for (size_t c = 0; c < d_v; c++) out_row[c] = acc_row[c] * sink_alpha / l[r];
        continue;
      }
      const v128_t vl = wasm_f32x4_splat(l[r]);
      size_t c = 0;
      for (; c + 4 <= d_v; c += 4) wasm_v128_store(out_row + c, wasm_f32x4_div(wasm_v128_load(acc_row + c), vl));
      for (; c < d_v; c++) out_row[c] = acc_row[c] / l[r];
    }
  }
}
