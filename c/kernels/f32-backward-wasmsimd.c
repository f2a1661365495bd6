/* f32-backward-wasmsimd.c - the backward pass for one (batch, query head)
 * with SIMD128. Same algorithm, formulas and summation orders as
 * f32-backward-scalar.c (read that first); how the work is laid on lanes:
 *   - scores and dout . v are 4 queries x 8 keys per step: one element of
 *     the interleaved query (or dout) tile splatted against 8 packed keys;
 *   - a tile whose keys are all visible, with no bias, mask, softcap or
 *     dbias, computes p and ds in vectors; any other tile does it element
 *     by element with the scalar twin's helpers (the same operations);
 *   - dv, dk: per key, the four rows' p (or ds) splatted against 4 columns
 *     of dout (or q) rows; dq: 4 rows x 8 columns of accumulators per step,
 *     over the block's keys;
 *   - rows that are missing (the last tile) or have no allowed key read a
 *     zero row and write their dq to a junk row, with p = ds = 0, so they
 *     add nothing. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "kernels.h"

/* z (4, BWD_BC) = xt (d, 4)^T . panels (nbp keys); xt holds row r's element
 * c at xt[c * 4 + r]; panels point at the first key's panel. Sums over d in
 * order, as the scalar twin. */
static void attn__bwd_dot_tile_wasmsimd(const float* xt, const float* panels, size_t d,
                                        size_t nbp, float* z) {
  for (size_t jj = 0; jj < nbp; jj += 8) {
    v128_t vacc0x0123 = wasm_f32x4_splat(0.0f), vacc0x4567 = vacc0x0123;
    v128_t vacc1x0123 = vacc0x0123, vacc1x4567 = vacc0x0123;
    v128_t vacc2x0123 = vacc0x0123, vacc2x4567 = vacc0x0123;
    v128_t vacc3x0123 = vacc0x0123, vacc3x4567 = vacc0x0123;
    const float* panel = panels + (jj / 8) * d * 8;  /* (d, 8) keys jj .. jj+7 */
    const float* x_col = xt;                         /* (d, 4) */
    for (size_t c = 0; c < d; c++) {
      const v128_t vk0123 = wasm_v128_load(panel);
      const v128_t vk4567 = wasm_v128_load(panel + 4);
      panel += 8;
      const v128_t vx0 = wasm_v128_load32_splat(x_col);
      const v128_t vx1 = wasm_v128_load32_splat(x_col + 1);
      const v128_t vx2 = wasm_v128_load32_splat(x_col + 2);
      const v128_t vx3 = wasm_v128_load32_splat(x_col + 3);
      x_col += 4;
      vacc0x0123 = wasm_f32x4_add(vacc0x0123, wasm_f32x4_mul(vx0, vk0123));
      vacc0x4567 = wasm_f32x4_add(vacc0x4567, wasm_f32x4_mul(vx0, vk4567));
      vacc1x0123 = wasm_f32x4_add(vacc1x0123, wasm_f32x4_mul(vx1, vk0123));
      vacc1x4567 = wasm_f32x4_add(vacc1x4567, wasm_f32x4_mul(vx1, vk4567));
      vacc2x0123 = wasm_f32x4_add(vacc2x0123, wasm_f32x4_mul(vx2, vk0123));
      vacc2x4567 = wasm_f32x4_add(vacc2x4567, wasm_f32x4_mul(vx2, vk4567));
      vacc3x0123 = wasm_f32x4_add(vacc3x0123, wasm_f32x4_mul(vx3, vk0123));
      vacc3x4567 = wasm_f32x4_add(vacc3x4567, wasm_f32x4_mul(vx3, vk4567));
    }
    wasm_v128_store(z + jj, vacc0x0123);
    wasm_v128_store(z + jj + 4, vacc0x4567);
    wasm_v128_store(z + ATTN__BWD_BC + jj, vacc1x0123);
    wasm_v128_store(z + ATTN__BWD_BC + jj + 4, vacc1x4567);
    wasm_v128_store(z + 2 * ATTN__BWD_BC + jj, vacc2x0123);
    wasm_v128_store(z + 2 * ATTN__BWD_BC + jj + 4, vacc2x4567);
    wasm_v128_store(z + 3 * ATTN__BWD_BC + jj, vacc3x0123);
    wasm_v128_store(z + 3 * ATTN__BWD_BC + jj + 4, vacc3x4567);
  }
}

/* xt (d, 4) = the four rows interleaved. */
static void attn__bwd_interleave(const float* const rows[4], size_t d, float* xt) {
  for (size_t c = 0; c < d; c++) {
    xt[c * 4] = rows[0][c];
    xt[c * 4 + 1] = rows[1][c];
    xt[c * 4 + 2] = rows[2][c];
    xt[c * 4 + 3] = rows[3][c];
  }
}

/* Whether every key of [j0, j1) is visible by position to every row of
 * [i0, i1): the tiles inside a causal or window band. */
static int attn__bwd_all_visible(const attn__bwd_args* a, size_t i0, size_t i1, size_t j0,
                                 size_t j1) {
  const int64_t first = (int64_t)i0 + a->query_offset, last = (int64_t)i1 - 1 + a->query_offset;
  if (a->causal && (int64_t)j1 - 1 > first) return 0;
  if (a->window_right >= 0 && (int64_t)j1 - 1 > first + a->window_right) return 0;
  if (a->window_left >= 0 && (int64_t)j0 < last - a->window_left) return 0;
  return 1;
}

/* acc_j (d) += sum_r w[r][jj] x_r for each key jj < nb of the block: dv
 * (w = p, x = dout) and dk (w = ds, x = q). Rows added in order. */
static void attn__bwd_rank4_wasmsimd(const float* w, size_t nb, const float* const x[4], size_t d,
                                     float* acc, size_t acc_stride) {
  const float* x0 = x[0];
  const float* x1 = x[1];
  const float* x2 = x[2];
  const float* x3 = x[3];
  for (size_t jj = 0; jj < nb; jj++) {
    float* acc_row = acc + jj * acc_stride;  /* (d) */
    const float w0 = w[jj], w1 = w[ATTN__BWD_BC + jj];
    const float w2 = w[2 * ATTN__BWD_BC + jj], w3 = w[3 * ATTN__BWD_BC + jj];
    const v128_t vw0 = wasm_f32x4_splat(w0), vw1 = wasm_f32x4_splat(w1);
    const v128_t vw2 = wasm_f32x4_splat(w2), vw3 = wasm_f32x4_splat(w3);
    size_t c = 0;
    for (; c + 4 <= d; c += 4) {
      v128_t vacc = wasm_v128_load(acc_row + c);
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(vw0, wasm_v128_load(x0 + c)));
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(vw1, wasm_v128_load(x1 + c)));
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(vw2, wasm_v128_load(x2 + c)));
      vacc = wasm_f32x4_add(vacc, wasm_f32x4_mul(vw3, wasm_v128_load(x3 + c)));
      wasm_v128_store(acc_row + c, vacc);
    }
    for (; c < d; c++) {
      float s = acc_row[c];
      s = s + w0 * x0[c];
      s = s + w1 * x1[c];
      s = s + w2 * x2[c];
      s = s + w3 * x3[c];
      acc_row[c] = s;
    }
  }
}

/* dq_r (d_k) += sum_jj ds[r][jj] k_jj over the block's nb keys, in order. */
static void attn__bwd_dq_wasmsimd(const float* ds, size_t nb, const float* k, size_t d_k,
                                  float* const dq[4]) {
  float* dq0 = dq[0];
  float* dq1 = dq[1];
  float* dq2 = dq[2];
  float* dq3 = dq[3];
  size_t c = 0;
  for (; c + 8 <= d_k; c += 8) {
    v128_t vacc0x0123 = wasm_v128_load(dq0 + c), vacc0x4567 = wasm_v128_load(dq0 + c + 4);
    v128_t vacc1x0123 = wasm_v128_load(dq1 + c), vacc1x4567 = wasm_v128_load(dq1 + c + 4);
    v128_t vacc2x0123 = wasm_v128_load(dq2 + c), vacc2x4567 = wasm_v128_load(dq2 + c + 4);
    v128_t vacc3x0123 = wasm_v128_load(dq3 + c), vacc3x4567 = wasm_v128_load(dq3 + c + 4);
    const float* k_col = k + c;
    for (size_t jj = 0; jj < nb; jj++) {
      const v128_t vk0123 = wasm_v128_load(k_col);
      const v128_t vk4567 = wasm_v128_load(k_col + 4);
      k_col += d_k;
      const v128_t vs0 = wasm_v128_load32_splat(ds + jj);
      const v128_t vs1 = wasm_v128_load32_splat(ds + ATTN__BWD_BC + jj);
      const v128_t vs2 = wasm_v128_load32_splat(ds + 2 * ATTN__BWD_BC + jj);
      const v128_t vs3 = wasm_v128_load32_splat(ds + 3 * ATTN__BWD_BC + jj);
      vacc0x0123 = wasm_f32x4_add(vacc0x0123, wasm_f32x4_mul(vs0, vk0123));
      vacc0x4567 = wasm_f32x4_add(vacc0x4567, wasm_f32x4_mul(vs0, vk4567));
      vacc1x0123 = wasm_f32x4_add(vacc1x0123, wasm_f32x4_mul(vs1, vk0123));
      vacc1x4567 = wasm_f32x4_add(vacc1x4567, wasm_f32x4_mul(vs1, vk4567));
      vacc2x0123 = wasm_f32x4_add(vacc2x0123, wasm_f32x4_mul(vs2, vk0123));
      vacc2x4567 = wasm_f32x4_add(vacc2x4567, wasm_f32x4_mul(vs2, vk4567));
      vacc3x0123 = wasm_f32x4_add(vacc3x0123, wasm_f32x4_mul(vs3, vk0123));
      vacc3x4567 = wasm_f32x4_add(vacc3x4567, wasm_f32x4_mul(vs3, vk4567));
    }
    wasm_v128_store(dq0 + c, vacc0x0123);
    wasm_v128_store(dq0 + c + 4, vacc0x4567);
    wasm_v128_store(dq1 + c, vacc1x0123);
    wasm_v128_store(dq1 + c + 4, vacc1x4567);
    wasm_v128_store(dq2 + c, vacc2x0123);
    wasm_v128_store(dq2 + c + 4, vacc2x4567);
    wasm_v128_store(dq3 + c, vacc3x0123);
    wasm_v128_store(dq3 + c + 4, vacc3x4567);
  }
  for (; c + 4 <= d_k; c += 4) {
    v128_t vacc0 = wasm_v128_load(dq0 + c), vacc1 = wasm_v128_load(dq1 + c);
    v128_t vacc2 = wasm_v128_load(dq2 + c), vacc3 = wasm_v128_load(dq3 + c);
    const float* k_col = k + c;
    for (size_t jj = 0; jj < nb; jj++) {
      const v128_t vk = wasm_v128_load(k_col);
      k_col += d_k;
      vacc0 = wasm_f32x4_add(vacc0, wasm_f32x4_mul(wasm_v128_load32_splat(ds + jj), vk));
      vacc1 = wasm_f32x4_add(vacc1, wasm_f32x4_mul(wasm_v128_load32_splat(ds + ATTN__BWD_BC + jj), vk));
      vacc2 = wasm_f32x4_add(vacc2, wasm_f32x4_mul(wasm_v128_load32_splat(ds + 2 * ATTN__BWD_BC + jj), vk));
      vacc3 = wasm_f32x4_add(vacc3, wasm_f32x4_mul(wasm_v128_load32_splat(ds + 3 * ATTN__BWD_BC + jj), vk));
    }
    wasm_v128_store(dq0 + c, vacc0);
    wasm_v128_store(dq1 + c, vacc1);
    wasm_v128_store(dq2 + c, vacc2);
    wasm_v128_store(dq3 + c, vacc3);
  }
  for (; c < d_k; c++) {
    for (size_t r = 0; r < 4; r++) {
      float s = dq[r][c];
      for (size_t jj = 0; jj < nb; jj++) s = s + ds[r * ATTN__BWD_BC + jj] * k[jj * d_k + c];
      dq[r][c] = s;
    }
  }
}

void attn__f32_backward_rows_wasmsimd(const attn__bwd_args* a, const float* out, float* lse,
                                      float* delta) {
  assert(a != NULL && delta != NULL && a->scratch != NULL);
  const size_t n_q = a->n_q, n_k = a->n_k, d_k = a->d_k, d_v = a->d_v;
  if (out != NULL) {
    for (size_t i = 0; i < n_q; i++) {
      float d = 0.0f;
      for (size_t c = 0; c < d_v; c++) d = d + a->dout[i * d_v + c] * out[i * d_v + c];
      delta[i] = d;
    }
    if (lse == NULL) return;
  }
  float* z = a->scratch;                                /* (MR, BWD_BC) logits, then exp */
  float* dp = z + ATTN__MR * ATTN__BWD_BC;              /* (MR, BWD_BC) dout . v */
  float* qt = z + 3 * ATTN__MR * ATTN__BWD_BC;          /* (d_k, MR) */
  float* dot = qt + ATTN__MR * attn__round_up(d_k, 4);  /* (d_v, MR) */
  float* zero = dot + ATTN__MR * attn__round_up(d_v, 4);
  for (size_t c = 0; c < attn__round_up(d_k > d_v ? d_k : d_v, 4); c++) zero[c] = 0.0f;
  const v128_t vscale = wasm_f32x4_splat(a->scale);
  for (size_t i0 = 0; i0 < n_q; i0 += ATTN__MR) {
    const size_t rows = n_q - i0 < ATTN__MR ? n_q - i0 : ATTN__MR;
    const float* q_rows[4];
    const float* dout_rows[4];
    for (size_t r = 0; r < 4; r++) {
      q_rows[r] = r < rows ? a->q + (i0 + r) * d_k : zero;
      dout_rows[r] = r < rows ? a->dout + (i0 + r) * d_v : zero;
    }
    attn__bwd_interleave(q_rows, d_k, qt);
    if (out == NULL) attn__bwd_interleave(dout_rows, d_v, dot);
    float m[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    float l[4] = {0.0f, 0.0f, 0.0f, 0.0f}, acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    /* Online log-sum-exp and delta, the invariants of the scalar twin. */
    for (size_t j0 = 0; j0 < n_k; j0 += ATTN__BWD_BC) {
      const size_t nb = n_k - j0 < ATTN__BWD_BC ? n_k - j0 : ATTN__BWD_BC;
      const size_t nbp = attn__round_up(nb, 8);
      attn__bwd_dot_tile_wasmsimd(qt, a->kp + j0 * d_k, d_k, nbp, z);
      if (out == NULL) attn__bwd_dot_tile_wasmsimd(dot, a->vp + j0 * d_v, d_v, nbp, dp);
      for (size_t r = 0; r < rows; r++) {
        float* zr = z + r * ATTN__BWD_BC;  /* (nbp) */
        for (size_t jj = 0; jj < nbp; jj += 4) {
          wasm_v128_store(zr + jj, wasm_f32x4_mul(wasm_v128_load(zr + jj), vscale));
        }
        float block_max = -INFINITY;
        for (size_t jj = 0; jj < nbp; jj++) {
          float th;
          zr[jj] = jj < nb ? attn__bwd_logit(a, i0 + r, j0 + jj, zr[jj], &th) : -INFINITY;
          block_max = attn__max_nan(block_max, zr[jj]);
        }
        const float m_new = attn__max_nan(m[r], block_max);
        if (m_new == -INFINITY) continue;
        const v128_t vm = wasm_f32x4_splat(m_new);
        for (size_t jj = 0; jj < nbp; jj += 4) {
          wasm_v128_store(zr + jj, attn__expf_nonpos_wasmsimd(wasm_f32x4_sub(wasm_v128_load(zr + jj), vm)));
        }
        float sum = 0.0f, dsum = 0.0f;
        for (size_t jj = 0; jj < nb; jj++) {
          sum = sum + zr[jj];
          if (out == NULL && zr[jj] != 0.0f) dsum = dsum + zr[jj] * dp[r * ATTN__BWD_BC + jj];
        }
        const float alpha = attn__expf_nonpos(m[r] - m_new);
        l[r] = l[r] * alpha + sum;
        acc[r] = acc[r] * alpha + dsum;
        m[r] = m_new;
      }
    }
    for (size_t r = 0; r < rows; r++) {
      if (lse != NULL) lse[i0 + r] = m[r] == -INFINITY ? -INFINITY : m[r] + logf(l[r]);
      if (out == NULL) delta[i0 + r] = l[r] == 0.0f ? 0.0f : acc[r] / l[r];
    }
  }
}

void attn__f32_backward_wasmsimd(const attn__bwd_args* a) {
  assert(a != NULL && a->scratch != NULL && ATTN__MR == 4 && ATTN__BWD_BC % 8 == 0);
  const size_t n_k = a->n_k, d_k = a->d_k, d_v = a->d_v;
  float* p = a->scratch;                                /* (MR, BWD_BC) weights */
  float* ds = p + ATTN__MR * ATTN__BWD_BC;              /* (MR, BWD_BC) dout . v, then ds */
  float* s = ds + ATTN__MR * ATTN__BWD_BC;              /* (MR, BWD_BC) scores */
  float* qt = s + ATTN__MR * ATTN__BWD_BC;              /* (d_k, MR) the query tile */
  float* dot = qt + ATTN__MR * attn__round_up(d_k, 4);  /* (d_v, MR) the dout tile */
  const size_t d = attn__round_up(d_k > d_v ? d_k : d_v, 4);
  float* zero = dot + ATTN__MR * attn__round_up(d_v, 4);  /* (d) zeros */
  float* junk = zero + d;                                 /* (d) dq of rows that add nothing */
  for (size_t c = 0; c < d; c++) zero[c] = 0.0f;
  const v128_t vscale = wasm_f32x4_splat(a->scale);
  const v128_t vzero = wasm_f32x4_splat(0.0f);
  const int plain_kind = a->softcap == 0.0f && a->bias == NULL && a->mask == NULL && a->dbias == NULL;

  for (size_t j0 = 0; j0 < n_k; j0 += ATTN__BWD_BC) {
    const size_t nb = n_k - j0 < ATTN__BWD_BC ? n_k - j0 : ATTN__BWD_BC;
    const size_t nbp = attn__round_up(nb, 8);
    const float* k_block = a->k + j0 * d_k;  /* (nb, d_k) */
    size_t lo, hi;
    attn__bwd_rows(a, j0, j0 + nb, &lo, &hi);
    for (size_t i0 = lo; i0 < hi; i0 += ATTN__MR) {
      const size_t rows = hi - i0 < ATTN__MR ? hi - i0 : ATTN__MR;
      const float* q_rows[4];
      const float* dout_rows[4];
      float* dq_rows[4];
      int live = 0;  /* rows with an allowed key */
      for (size_t r = 0; r < 4; r++) {
        const int on = r < rows && a->lse[i0 + r] != -INFINITY;
        live += on;
        q_rows[r] = on ? a->q + (i0 + r) * d_k : zero;
        dout_rows[r] = on ? a->dout + (i0 + r) * d_v : zero;
        dq_rows[r] = on ? a->dq + (i0 + r) * d_k : junk;
      }
      if (live == 0) continue;
      attn__bwd_interleave(q_rows, d_k, qt);
      attn__bwd_interleave(dout_rows, d_v, dot);
      attn__bwd_dot_tile_wasmsimd(qt, a->kp + j0 * d_k, d_k, nbp, s);
      attn__bwd_dot_tile_wasmsimd(dot, a->vp + j0 * d_v, d_v, nbp, ds);
      if (plain_kind && live == 4 && nb == nbp && attn__bwd_all_visible(a, i0, i0 + 4, j0, j0 + nb)) {
        for (size_t r = 0; r < 4; r++) {
          const v128_t vlse = wasm_f32x4_splat(a->lse[i0 + r]);
          const v128_t vdelta = wasm_f32x4_splat(a->delta[i0 + r]);
          float* pr = p + r * ATTN__BWD_BC;
          float* dsr = ds + r * ATTN__BWD_BC;
          const float* sr = s + r * ATTN__BWD_BC;
          for (size_t jj = 0; jj < nb; jj += 4) {
            const v128_t vz = wasm_f32x4_mul(wasm_v128_load(sr + jj), vscale);
            /* pmin(x, 0) is 0 < x ? 0 : x: NaN stays NaN, as the scalar clamp. */
            const v128_t varg = wasm_f32x4_pmin(wasm_f32x4_sub(vz, vlse), vzero);
            const v128_t vp = attn__expf_nonpos_wasmsimd(varg);
            const v128_t vdz = wasm_f32x4_mul(vp, wasm_f32x4_sub(wasm_v128_load(dsr + jj), vdelta));
            wasm_v128_store(pr + jj, vp);
            wasm_v128_store(dsr + jj, wasm_f32x4_mul(vdz, vscale));
          }
        }
      } else {
        for (size_t r = 0; r < 4; r++) {
          float* pr = p + r * ATTN__BWD_BC;
          float* dsr = ds + r * ATTN__BWD_BC;
          const float* sr = s + r * ATTN__BWD_BC;
          const int on = q_rows[r] != zero;
          const size_t i = i0 + r;
          for (size_t jj = 0; jj < nbp; jj++) {
            const float dp = dsr[jj];
            pr[jj] = 0.0f;
            dsr[jj] = 0.0f;
            if (!on || jj >= nb) continue;
            float th;
            const float z = attn__bwd_logit(a, i, j0 + jj, sr[jj] * a->scale, &th);
            if (z == -INFINITY) continue;
            float arg = z - a->lse[i];
            if (arg > 0.0f) arg = 0.0f;
            const float pij = attn__expf_nonpos(arg);
            const float dz = pij * (dp - a->delta[i]);
            if (a->dbias != NULL) a->dbias[i * n_k + j0 + jj] = a->dbias[i * n_k + j0 + jj] + dz;
            float dsij = dz;
            if (a->softcap > 0.0f) dsij = dsij * (1.0f - th * th);
            pr[jj] = pij;
            dsr[jj] = dsij * a->scale;
          }
        }
      }
      attn__bwd_rank4_wasmsimd(p, nb, dout_rows, d_v, a->dv + j0 * d_v, d_v);
      attn__bwd_rank4_wasmsimd(ds, nb, q_rows, d_k, a->dk + j0 * d_k, d_k);
      attn__bwd_dq_wasmsimd(ds, nb, k_block, d_k, dq_rows);
    }
  }
}
