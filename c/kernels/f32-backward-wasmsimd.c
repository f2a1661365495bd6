/* f32-backward-wasmsimd.c - the backward pass for one (batch, query head)
 * with SIMD128. Same algorithm, formulas and summation orders as
 * f32-backward-scalar.c (read that first), so the SIMD128 build gives the
 * scalar twin's bits (the relaxed build fuses each multiply-add of the hot
 * loops, attn__f32x4_madd); how the work is laid on lanes:
 *   - blocks are 32 keys x 64 query rows, computed key-major: the scores
 *     and dout . v of a block are 4 keys x 8 rows per step (the keys'
 *     element splatted from the packed K or V, 8 rows from the query or
 *     dout panels), so 4 consecutive rows share a vector afterwards;
 *   - p and ds go 4 rows to a vector (their lse and delta load as vectors)
 *     when the block has no bias, mask, softcap or dbias and a row count
 *     that is a multiple of 4; a causal frontier or window crossing the
 *     block is a lane mask. Other blocks go element by element with the
 *     scalar twin's helpers (the same operations);
 *   - dv += p^T dout and dk += ds^T q are 4 keys x 8 columns per step over
 *     the block's rows, dq += ds k 4 rows x 8 columns over its keys: every
 *     product has the forward's 4 x 8 register tile;
 *   - rows with no allowed key read as zeros with lse +Infinity, so their p
 *     is 0 and they add nothing, even with Infinity in their q or dout. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-tile-wasmsimd.h"
#include "kernels.h"

/* t (BWD_BC, BWD_BR): t[jj][ii] = sum_c kp(jj, c) xp(ii, c) for keys jj <
 * nk4 (a multiple of 4) and rows ii < nr8 (a multiple of 8). kp points at the
 * panel of the block's first key (K or V), xp at the panel of its first row
 * (q or dout; all pack_rows layout, d columns). Per step 4 keys x 8 rows: the four keys'
 * element c splatted (4 consecutive floats of a key panel) against 8 rows'
 * element c (two vectors of a row panel), 8 accumulators; sums over c in
 * order, as the scalar twin. */
__attribute__((noinline)) static void attn__bwd_kx_tile_wasmsimd(const float* kp, const float* xp, size_t d, size_t nk4,
                                       size_t nr8, float* t) {
  for (size_t j = 0; j < nk4; j += 4) {
    const float* k_group = kp + (j / 8) * d * 8 + j % 8;  /* keys j .. j+3 at k_group[c * 8 + 0..3] */
    for (size_t i = 0; i < nr8; i += 8) {
      const float* x_panel = xp + (i / 8) * d * 8;  /* (d, 8) rows i .. i+7 */
      const size_t k_cols[4] = {0, 1, 2, 3};
      const attn__tile4x8 tile = attn__tile4x8_wasmsimd(d, k_group, k_cols, 8, x_panel, 8);
      float* t_row = t + j * ATTN__BWD_BR + i;  /* (4, 8) of the (BWD_BC, BWD_BR) tile */
      for (size_t r = 0; r < 4; r++) {
        wasm_v128_store(t_row + r * ATTN__BWD_BR, tile.acc[r][0]);
        wasm_v128_store(t_row + r * ATTN__BWD_BR + 4, tile.acc[r][1]);
      }
    }
  }
}

/* acc_j (d) += sum_r w[j][r] x_r over rows r < nr, in order, for keys
 * j < nb: dv (w = p, x = dout) and dk (w = ds, x = q). w is a (BWD_BC,
 * BWD_BR) tile, x (nr, d) row-major, acc (nb, d) rows acc_stride apart. Per step 4 keys x 8
 * columns: 8 accumulators over the rows, one x row (two vectors) and the
 * four keys' w splatted per row. */
__attribute__((noinline)) static void attn__bwd_wx_wasmsimd(const float* w, size_t nb, const float* x, size_t nr, size_t d,
                                  float* acc, size_t acc_stride) {
  attn__rows_add_wasmsimd(acc, acc_stride, nb, d, nr, w, ATTN__BWD_BR, 1, x, d);
}

/* dq_r (d_k) += sum_j ds[j][r] k_j over keys j < nb, in order, for rows
 * r < nr: ds a (BWD_BC, BWD_BR) tile, k (nb, d_k) rows k_stride apart, dq
 * (nr, d_k) rows dq_stride apart. Per step 4 rows x 8 columns: 8 accumulators over the keys, one
 * k row (two vectors) and the four rows' ds (consecutive floats) splatted. */
__attribute__((noinline)) static void attn__bwd_dq_wasmsimd(const float* ds, size_t nb, const float* k, size_t k_stride,
                                  size_t nr, size_t d_k, float* dq, size_t dq_stride) {
  attn__rows_add_wasmsimd(dq, dq_stride, nr, d_k, nb, ds, 1, ATTN__BWD_BR, k, k_stride);
}

void attn__f32_backward_rows_wasmsimd(const attn__bwd_args* a, float* lse) {
  assert(a != NULL && a->delta != NULL && a->scratch != NULL);
  const attn__head* h = &a->head;
  const size_t n_q = h->n_q, d_k = h->d_k, d_v = h->d_v;
  const int with_out = h->out != NULL;
  if (with_out) {
    attn__bwd_delta(a);
    if (lse == NULL) return;
  }
  /* The block loop's layout (attn__bwd_tile_floats); q and dout go into the
   * panels as given. */
  const size_t q_pad = attn__round_up(n_q, ATTN__PAD);
  float* q_panels = a->scratch + 2 * q_pad + n_q * (d_k + d_v);  /* (q_pad / 8, d_k, 8) */
  float* dout_panels = q_panels + q_pad * d_k;                    /* (q_pad / 8, d_v, 8) */
  float* zt = dout_panels + q_pad * d_v;                          /* (BWD_BC, BWD_BR) logits, then exp */
  float* dpt = zt + ATTN__BWD_BC * ATTN__BWD_BR;                  /* (BWD_BC, BWD_BR) dout . v */
  float* m = dpt + 2 * ATTN__BWD_BC * ATTN__BWD_BR;               /* (BWD_BR) running max */
  float* l = m + ATTN__BWD_BR;                                    /* (BWD_BR) running sum */
  float* acc = l + ATTN__BWD_BR;                                  /* (BWD_BR) running sum of exp dp */
  attn__f32_pack_rows_wasmsimd(h->q, h->q_stride, n_q, d_k, q_panels);
  if (!with_out) attn__f32_pack_rows_wasmsimd(a->dout, h->out_stride, n_q, d_v, dout_panels);
  const v128_t vscale = wasm_f32x4_splat(h->scale);
  const v128_t vzero = wasm_f32x4_splat(0.0f);
  const v128_t vminus_inf = wasm_f32x4_splat(-INFINITY);
  const int plain_kind = h->softcap == 0.0f && h->bias == NULL && h->mask == NULL && h->alibi == 0.0f;

  /* Online, per row, the invariants of the scalar twin, with 4 rows to a
   * vector: m the max of the allowed logits so far, l the sum of exp(z - m),
   * acc the sum of exp(z - m) dp; a block that raises the max rescales l and
   * acc by exp(m_old - m_new). Each lane sums its row in key order, as the
   * scalar twin does. */
  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__BWD_BR) {
    const size_t nr = n_q - i0 < ATTN__BWD_BR ? n_q - i0 : ATTN__BWD_BR;
    const size_t nr8 = attn__round_up(nr, 8);
    for (size_t ii = 0; ii < nr8; ii++) m[ii] = -INFINITY, l[ii] = 0.0f, acc[ii] = 0.0f;
    const attn__span keys = attn__rows_key_span(h, i0, i0 + nr);
    /* Key blocks start on a panel boundary of the key panels. */
    for (size_t j0 = keys.lo / 8 * 8; j0 < keys.hi; j0 += ATTN__BWD_BC) {
      const size_t nb = keys.hi - j0 < ATTN__BWD_BC ? keys.hi - j0 : ATTN__BWD_BC;
      attn__bwd_kx_tile_wasmsimd(a->k_panels + j0 * d_k, q_panels + i0 * d_k, d_k, attn__round_up(nb, 4), nr8, zt);
      if (!with_out) {
        attn__bwd_kx_tile_wasmsimd(a->v_key_panels + j0 * d_v, dout_panels + i0 * d_v, d_v, attn__round_up(nb, 4), nr8,
                                   dpt);
      }
      if (plain_kind && attn__spans_cover(h, i0, i0 + nr, j0, j0 + nb)) {
        for (size_t jj = 0; jj < nb; jj++) {
          float* z_row = zt + jj * ATTN__BWD_BR;
          for (size_t ii = 0; ii < nr8; ii += 4) wasm_v128_store(z_row + ii, wasm_f32x4_mul(wasm_v128_load(z_row + ii), vscale));
        }
      } else {
        for (size_t jj = 0; jj < nb; jj++) {
          float* z_row = zt + jj * ATTN__BWD_BR;
          for (size_t ii = 0; ii < nr8; ii++) {
            float th;
            z_row[ii] = ii < nr ? attn__bwd_logit(h, i0 + ii, j0 + jj, z_row[ii] * h->scale, &th) : -INFINITY;
          }
        }
      }
      for (size_t ii = 0; ii < nr8; ii += 4) {
        v128_t vblock_max = vminus_inf;
        for (size_t jj = 0; jj < nb; jj++) vblock_max = wasm_f32x4_max(vblock_max, wasm_v128_load(zt + jj * ATTN__BWD_BR + ii));
        const v128_t vm = wasm_v128_load(m + ii);
        const v128_t vm_new = wasm_f32x4_max(vm, vblock_max);
        /* Rows with nothing allowed yet subtract 0: their terms are all exp(-Infinity) = 0. */
        const v128_t vm_sub = wasm_v128_bitselect(vzero, vm_new, wasm_f32x4_eq(vm_new, vminus_inf));
        v128_t vsum = vzero, vdsum = vzero;
        for (size_t jj = 0; jj < nb; jj++) {
          const v128_t ve = attn__expf_nonpos_wasmsimd(wasm_f32x4_sub(wasm_v128_load(zt + jj * ATTN__BWD_BR + ii), vm_sub));
          vsum = wasm_f32x4_add(vsum, ve);
          if (!with_out) {
            const v128_t vterm = wasm_f32x4_mul(ve, wasm_v128_load(dpt + jj * ATTN__BWD_BR + ii));
            vdsum = wasm_f32x4_add(vdsum, wasm_v128_and(vterm, wasm_f32x4_ne(ve, vzero)));
          }
        }
        const v128_t valpha = attn__expf_nonpos_wasmsimd(wasm_f32x4_sub(vm, vm_sub));
        wasm_v128_store(l + ii, wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(l + ii), valpha), vsum));
        wasm_v128_store(acc + ii, wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(acc + ii), valpha), vdsum));
        wasm_v128_store(m + ii, vm_new);
      }
    }
    for (size_t ii = 0; ii < nr; ii++) {
      const float l_keys = l[ii];
      const float alpha = attn__sink_join(attn__row_sink(h, i0 + ii), &m[ii], &l[ii]);
      if (lse != NULL) lse[i0 + ii] = attn__lse(m[ii], l[ii]);
      if (!with_out) a->delta[i0 + ii] = l_keys == 0.0f ? 0.0f : alpha == 1.0f ? acc[ii] / l[ii] : acc[ii] * alpha / l[ii];
    }
  }
}

void attn__f32_backward_wasmsimd(const attn__bwd_args* a) {
  assert(a != NULL && a->scratch != NULL && ATTN__BWD_BC % 8 == 0 && ATTN__BWD_BR % 8 == 0);
  const attn__head* h = &a->head;
  const size_t n_q = h->n_q, n_k = h->n_k, d_k = h->d_k, d_v = h->d_v;
  const size_t q_pad = attn__round_up(n_q, ATTN__PAD);
  float* lse = a->scratch;                  /* (q_pad) lse, +Infinity for empty and padding rows */
  float* delta = lse + q_pad;               /* (q_pad) delta, 0 for padding rows */
  float* qs = delta + q_pad;                /* (n_q, d_k) q, empty rows 0 */
  float* dos = qs + n_q * d_k;              /* (n_q, d_v) dout, empty rows 0 */
  float* q_panels = dos + n_q * d_v;        /* (q_pad / 8, d_k, 8) qs in panels of 8 rows */
  float* dout_panels = q_panels + q_pad * d_k;  /* (q_pad / 8, d_v, 8) dos in panels of 8 rows */
  float* st = dout_panels + q_pad * d_v;    /* (BWD_BC, BWD_BR) scores, key-major */
  float* pt = st + ATTN__BWD_BC * ATTN__BWD_BR;   /* (BWD_BC, BWD_BR) weights */
  float* dst = pt + ATTN__BWD_BC * ATTN__BWD_BR;  /* (BWD_BC, BWD_BR) dout . v, then ds */

  /* Rows with no allowed key read as zeros and get lse = +Infinity, so
   * their weights are exp(-Infinity) = 0 and they add nothing, even where
   * their q or dout hold Infinity. */
  for (size_t i = 0; i < q_pad; i++) {
    const int live = i < n_q && h->lse[i] != -INFINITY;
    lse[i] = live ? h->lse[i] : INFINITY;
    delta[i] = live ? a->delta[i] : 0.0f;
    if (i >= n_q) continue;
    for (size_t c = 0; c < d_k; c++) qs[i * d_k + c] = live ? h->q[i * h->q_stride + c] : 0.0f;
    for (size_t c = 0; c < d_v; c++) dos[i * d_v + c] = live ? a->dout[i * h->out_stride + c] : 0.0f;
  }
  attn__f32_pack_rows_wasmsimd(qs, d_k, n_q, d_k, q_panels);
  attn__f32_pack_rows_wasmsimd(dos, d_v, n_q, d_v, dout_panels);

  const v128_t vscale = wasm_f32x4_splat(h->scale);
  const v128_t vzero = wasm_f32x4_splat(0.0f);
  const int plain_kind = h->softcap == 0.0f && h->bias == NULL && h->mask == NULL && h->alibi == 0.0f && a->dbias == NULL;
  int32_t key_lo[ATTN__BWD_BR], key_hi[ATTN__BWD_BR];  /* the rows' key spans, for lane masks */

  for (size_t j0 = 0; j0 < n_k; j0 += ATTN__BWD_BC) {
    const size_t nb = n_k - j0 < ATTN__BWD_BC ? n_k - j0 : ATTN__BWD_BC;
    const size_t nk4 = attn__round_up(nb, 4);
    const attn__span rows_seen = attn__key_rows(h, j0, j0 + nb);
    /* Row blocks start on a panel boundary of the row panels. */
    for (size_t i0 = rows_seen.lo / 8 * 8; i0 < rows_seen.hi; i0 += ATTN__BWD_BR) {
      const size_t nr = rows_seen.hi - i0 < ATTN__BWD_BR ? rows_seen.hi - i0 : ATTN__BWD_BR;
      const size_t nr8 = attn__round_up(nr, 8);
      attn__bwd_kx_tile_wasmsimd(a->k_panels + j0 * d_k, q_panels + i0 * d_k, d_k, nk4, nr8, st);
      attn__bwd_kx_tile_wasmsimd(a->v_key_panels + j0 * d_v, dout_panels + i0 * d_v, d_v, nk4, nr8, dst);
      if (plain_kind && nr % 4 == 0) {
        /* Lanes are 4 rows: their lse and delta load as vectors. In a block
         * that the causal frontier or the window crosses, a lane whose key
         * is outside its row's span gets p = 0 (attn__key_allowed on lanes:
         * no mask here). Spans lie in [0, n_k], which fits int32. */
        const int cut = !attn__spans_cover(h, i0, i0 + nr, j0, j0 + nb);
        if (cut) {
          for (size_t ii = 0; ii < nr; ii++) {
            const attn__span span = attn__key_span(h, i0 + ii);
            key_lo[ii] = (int32_t)span.lo, key_hi[ii] = (int32_t)span.hi;
          }
        }
        for (size_t jj = 0; jj < nb; jj++) {
          const float* s_row = st + jj * ATTN__BWD_BR;
          float* p_row = pt + jj * ATTN__BWD_BR;
          float* ds_row = dst + jj * ATTN__BWD_BR;
          const v128_t vkey = wasm_i32x4_splat((int32_t)(j0 + jj));
          for (size_t ii = 0; ii < nr; ii += 4) {
            const v128_t vz = wasm_f32x4_mul(wasm_v128_load(s_row + ii), vscale);
            /* pmin(x, 0) is 0 < x ? 0 : x: NaN stays NaN, as the scalar clamp. */
            const v128_t varg = wasm_f32x4_pmin(wasm_f32x4_sub(vz, wasm_v128_load(lse + i0 + ii)), vzero);
            v128_t vp = attn__expf_nonpos_wasmsimd(varg);
            if (cut) {
              const v128_t vhidden = wasm_v128_or(wasm_i32x4_lt(vkey, wasm_v128_load(key_lo + ii)),
                                                  wasm_i32x4_ge(vkey, wasm_v128_load(key_hi + ii)));
              vp = wasm_v128_andnot(vp, vhidden);
            }
            v128_t vdz = wasm_f32x4_mul(vp, wasm_f32x4_sub(wasm_v128_load(ds_row + ii), wasm_v128_load(delta + i0 + ii)));
            vdz = wasm_v128_and(vdz, wasm_f32x4_ne(vp, vzero));  /* dz = 0 where p = 0 */
            wasm_v128_store(p_row + ii, vp);
            wasm_v128_store(ds_row + ii, wasm_f32x4_mul(vdz, vscale));
          }
        }
      } else {
        for (size_t jj = 0; jj < nb; jj++) {
          const size_t j = j0 + jj;
          const float* s_row = st + jj * ATTN__BWD_BR;
          float* p_row = pt + jj * ATTN__BWD_BR;
          float* ds_row = dst + jj * ATTN__BWD_BR;
          for (size_t ii = 0; ii < nr; ii++) {
            const size_t i = i0 + ii;
            const float dp = ds_row[ii];
            p_row[ii] = 0.0f;
            ds_row[ii] = 0.0f;
            if (lse[i] == INFINITY) continue;  /* no allowed key in this row */
            float th;
            const float pij = attn__bwd_weight(h, i, j, s_row[ii] * h->scale, lse[i], &th);
            if (pij == 0.0f) continue;
            p_row[ii] = pij;
            ds_row[ii] = attn__bwd_score_grad(a, i, j, pij, dp, delta[i], th);
          }
        }
      }
      attn__bwd_wx_wasmsimd(pt, nb, dos + i0 * d_v, nr, d_v, a->dv + j0 * h->v_stride, h->v_stride);
      attn__bwd_wx_wasmsimd(dst, nb, qs + i0 * d_k, nr, d_k, a->dk + j0 * h->k_stride, h->k_stride);
      attn__bwd_dq_wasmsimd(dst, nb, h->k + j0 * h->k_stride, h->k_stride, nr, d_k, a->dq + i0 * h->q_stride,
                            h->q_stride);
    }
  }
}
