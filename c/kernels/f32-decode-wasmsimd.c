/* f32-decode-wasmsimd.c - the output path for few query rows with SIMD128.
 * Same algorithm and summation order as f32-decode-scalar.c (read that
 * first), so both give the same bits:
 *   - logits from the logits family of K's dtype (*-logits-wasmsimd.c);
 *   - exp over whole vectors, the row padded with -Infinity (exp gives 0);
 *   - P V column by column in key order, several columns per vector, added
 *     into the output row, which is divided by l at the end.
 * Rows go in pairs that share every load of K and V (decoding is bound by
 * reading them): the pair's logits take 2 query vectors against 4 keys, and
 * P V 2 rows x 16 columns. A row's sums run over its own keys in the same
 * order as alone, so pairing (and the group's key blocks) change no bits. */
#include <assert.h>
#include <math.h>
#include <wasm_simd128.h>

#include "f32-alibi-wasmsimd.h"
#include "f32-exp-wasmsimd.h"
#include "f32-hsum-wasmsimd.h"
#include "f32-madd-wasmsimd.h"
#include "f32-rope.h"
#include "f32-tanh-wasmsimd.h"
#include "f32-tile-wasmsimd.h"
#include "kernels.h"

/* The helpers that both decode paths call (float32 and compact K and V)
 * stay one function each rather than a copy inlined into each path. */
#define ATTN__SHARED __attribute__((noinline))

/* Row i's logits z (n, its key span from span.lo) become weights: softcap,
 * bias, mask, -Infinity padding to a multiple of 4, exp(z - max) in place.
 * Returns the sum of the weights, 0 when no key is allowed; *m gets the max. */
ATTN__SHARED static float attn__weights_wasmsimd(const attn__head* h, size_t i, attn__span span, float* z, float* m) {
  const size_t n = span.hi - span.lo, padded = attn__round_up(n, 4);
  if (h->softcap > 0.0f) attn__softcap_wasmsimd(z, padded, h->softcap);
  for (size_t j = n; j < padded; j++) z[j] = -INFINITY;
  if (h->bias != NULL) {
    const float* bias_row = h->bias + i * h->bias_stride + span.lo;  /* (n) */
    for (size_t j = 0; j < n; j++) z[j] = z[j] + bias_row[j];
  }
  attn__add_alibi_wasmsimd(h, i, span.lo, n, z);
  if (h->mask != NULL) {
    for (size_t j = 0; j < n; j++) z[j] = attn__key_allowed(h, span, i, span.lo + j) ? z[j] : -INFINITY;
  }
  *m = attn__max_nan_of_wasmsimd(z, padded);
  if (*m == -INFINITY) return 0.0f;  /* exp(z - m) > 0 for the max, so l > 0 otherwise */
  return attn__exp_sub_sum_wasmsimd(z, padded, *m);
}

/* acc (d_v) += sum_j p_j v_j over keys j < n, in key order per column; v
 * rows v_stride apart. acc is read and written back as is, so a sum taken
 * block by block has the same bits as in one pass. */
ATTN__SHARED static void attn__pv_acc_wasmsimd(const float* p, size_t n, const float* v, size_t v_stride, size_t d_v, float* acc) {
  size_t c = 0;
  for (; c + 32 <= d_v; c += 32) {
    v128_t vacc0 = wasm_v128_load(acc + c), vacc1 = wasm_v128_load(acc + c + 4);
    v128_t vacc2 = wasm_v128_load(acc + c + 8), vacc3 = wasm_v128_load(acc + c + 12);
    v128_t vacc4 = wasm_v128_load(acc + c + 16), vacc5 = wasm_v128_load(acc + c + 20);
    v128_t vacc6 = wasm_v128_load(acc + c + 24), vacc7 = wasm_v128_load(acc + c + 28);
    const float* v_col = v + c;  /* (n, 32) with row stride v_stride */
    for (size_t j = 0; j < n; j++) {
      const v128_t vw = wasm_v128_load32_splat(p + j);
      vacc0 = attn__f32x4_madd(vw, wasm_v128_load(v_col), vacc0);
      vacc1 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 4), vacc1);
      vacc2 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 8), vacc2);
      vacc3 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 12), vacc3);
      vacc4 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 16), vacc4);
      vacc5 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 20), vacc5);
      vacc6 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 24), vacc6);
      vacc7 = attn__f32x4_madd(vw, wasm_v128_load(v_col + 28), vacc7);
      v_col += v_stride;
    }
    wasm_v128_store(acc + c, vacc0);
    wasm_v128_store(acc + c + 4, vacc1);
    wasm_v128_store(acc + c + 8, vacc2);
    wasm_v128_store(acc + c + 12, vacc3);
    wasm_v128_store(acc + c + 16, vacc4);
    wasm_v128_store(acc + c + 20, vacc5);
    wasm_v128_store(acc + c + 24, vacc6);
    wasm_v128_store(acc + c + 28, vacc7);
  }
  attn__row_add_wasmsimd(acc + c, d_v - c, n, p, 1, v + c, v_stride);
}

/* The same for two rows a and b over the same keys, sharing the loads of V. */
ATTN__SHARED static void attn__pv_acc2_wasmsimd(const float* pa, const float* pb, size_t n, const float* v, size_t v_stride,
                                   size_t d_v, float* acc_a, float* acc_b) {
  size_t c = 0;
  for (; c + 16 <= d_v; c += 16) {
    v128_t va0 = wasm_v128_load(acc_a + c), va1 = wasm_v128_load(acc_a + c + 4);
    v128_t va2 = wasm_v128_load(acc_a + c + 8), va3 = wasm_v128_load(acc_a + c + 12);
    v128_t vb0 = wasm_v128_load(acc_b + c), vb1 = wasm_v128_load(acc_b + c + 4);
    v128_t vb2 = wasm_v128_load(acc_b + c + 8), vb3 = wasm_v128_load(acc_b + c + 12);
    const float* v_col = v + c;  /* (n, 16) with row stride v_stride */
    for (size_t j = 0; j < n; j++) {
      const v128_t vwa = wasm_v128_load32_splat(pa + j);
      const v128_t vwb = wasm_v128_load32_splat(pb + j);
      v128_t vv = wasm_v128_load(v_col);
      va0 = attn__f32x4_madd(vwa, vv, va0);
      vb0 = attn__f32x4_madd(vwb, vv, vb0);
      vv = wasm_v128_load(v_col + 4);
      va1 = attn__f32x4_madd(vwa, vv, va1);
      vb1 = attn__f32x4_madd(vwb, vv, vb1);
      vv = wasm_v128_load(v_col + 8);
      va2 = attn__f32x4_madd(vwa, vv, va2);
      vb2 = attn__f32x4_madd(vwb, vv, vb2);
      vv = wasm_v128_load(v_col + 12);
      va3 = attn__f32x4_madd(vwa, vv, va3);
      vb3 = attn__f32x4_madd(vwb, vv, vb3);
      v_col += v_stride;
    }
    wasm_v128_store(acc_a + c, va0);
    wasm_v128_store(acc_a + c + 4, va1);
    wasm_v128_store(acc_a + c + 8, va2);
    wasm_v128_store(acc_a + c + 12, va3);
    wasm_v128_store(acc_b + c, vb0);
    wasm_v128_store(acc_b + c + 4, vb1);
    wasm_v128_store(acc_b + c + 8, vb2);
    wasm_v128_store(acc_b + c + 12, vb3);
  }
  if (c < d_v) {
    attn__pv_acc_wasmsimd(pa, n, v + c, v_stride, d_v - c, acc_a + c);
    attn__pv_acc_wasmsimd(pb, n, v + c, v_stride, d_v - c, acc_b + c);
  }
}

static void attn__zero_row(float* out, size_t d_v) {
  for (size_t c = 0; c < d_v; c++) out[c] = 0.0f;
}

/* Query row i of h from its sum of p_j v_j in out, the weights' sum l and
 * max m: out /= l, or 0 when no key is allowed (l = 0, even where V holds
 * Infinity); and its lse. */
static void attn__finish_row_wasmsimd(const attn__head* h, size_t i, float l, float m) {
  float* out = h->out + i * h->out_stride;  /* (d_v) */
  const float l_keys = l;
  const float alpha = attn__sink_join(attn__row_sink(h, i), &m, &l);
  if (l_keys == 0.0f) {
    attn__zero_row(out, h->d_v);
  } else if (alpha != 1.0f) {
    for (size_t c = 0; c < h->d_v; c++) out[c] = out[c] * alpha / l;
  } else {
    const v128_t vl = wasm_f32x4_splat(l);
    size_t c = 0;
    for (; c + 4 <= h->d_v; c += 4) wasm_v128_store(out + c, wasm_f32x4_div(wasm_v128_load(out + c), vl));
    for (; c < h->d_v; c++) out[c] = out[c] / l;
  }
  if (h->lse != NULL) h->lse[i] = attn__row_lse(h, i, m, l);
}

/* Keys per block of the logits when RoPE turns them (a part of
 * ATTN__DECODE_KB's tile): the turn of a short run of keys reads K from
 * memory while the logits of the run before it still compute from L1, so
 * the two overlap; a turn of 64 keys at once waits on memory alone and
 * then computes alone. Blocks change no bits: each logit is its own key's
 * dot product. */
#define ATTN__DECODE_ROPE_KB 16

/* Grouped-query decoding of three or more heads, or of any with RoPE's
 * k_table (one query row each, all with the same key span): logits block
 * by block for all rows, then each row's weights, then P V block by block
 * into the output rows, divided by l at the end. With RoPE, up to 4 rows
 * of rotate_half pairs take each key turned as it is read
 * (attn__f32_rope_logits4_wasmsimd, f32-rope-logits-wasmsimd.c: the turn's arithmetic computes while K
 * streams in, as the logits' does, and no tile is written and read back);
 * other rows and pairs turn blocks of ATTN__DECODE_ROPE_KB keys into
 * args->tile first. */
static void attn__decode_group_wasmsimd(const attn__decode_args* args) {
  const attn__head* heads = args->heads;
  const size_t n_rows = args->n_heads, d_k = heads[0].d_k, d_v = heads[0].d_v;
  const size_t z_stride = attn__round_up(heads[0].n_k, 4);
  const attn__span span = attn__key_span(&heads[0], 0);
  const size_t n = span.hi - span.lo, k_stride = heads[0].k_stride, v_stride = heads[0].v_stride;
  const float* k = heads[0].k + span.lo * k_stride;  /* (n, d_k) */
  const float* v = heads[0].v + span.lo * v_stride;  /* (n, d_v) */
  float* z = args->logits;                           /* (n_rows, z_stride) logits, then weights */
  float* l = z + n_rows * z_stride;                  /* (n_rows) sums */
  float* m = l + n_rows;                             /* (n_rows) maxima */
  const size_t half = args->rope_dims / 2;
  const int fused = args->k_table != NULL && n_rows <= 4 && (args->rope_flags & ATTN__ROPE_PAIRS_INTERLEAVED) == 0 &&
                    d_k % 4 == 0 && half % 4 == 0;
  if (fused) {
    const float* rows[4] = {heads[0].q, NULL, NULL, NULL};
    float scales[4] = {heads[0].scale, 0.0f, 0.0f, 0.0f};
    for (size_t r = 1; r < n_rows; r++) rows[r] = heads[r].q, scales[r] = heads[r].scale;
    attn__f32_rope_logits4_wasmsimd(rows, scales, n_rows, k, k_stride, n, d_k, args->k_table + span.lo * args->rope_dims,
                                args->rope_dims, z, z_stride);
  }
  const size_t kb_keys = args->k_table != NULL ? ATTN__DECODE_ROPE_KB : ATTN__DECODE_KB;
  for (size_t j0 = fused ? n : 0; j0 < n; j0 += kb_keys) {
    const size_t nb = n - j0 < kb_keys ? n - j0 : kb_keys;
    const float* kb = k + j0 * k_stride;  /* (nb, d_k) the block's keys, rows kb_stride apart */
    size_t kb_stride = k_stride;
    if (args->k_table != NULL) {
      attn__f32_rope_wasmsimd(kb, k_stride, nb, d_k, args->k_table + (span.lo + j0) * args->rope_dims, args->rope_dims,
                              args->rope_flags, args->tile, d_k);
      kb = args->tile, kb_stride = d_k;
    }
    size_t r = 0;
    for (; r + 2 <= n_rows; r += 2) {
      attn__f32_logits2_wasmsimd(heads[r].q, heads[r + 1].q, kb, kb_stride, nb, d_k, heads[r].scale,
                             z + r * z_stride + j0, z + (r + 1) * z_stride + j0);
    }
    if (r < n_rows) attn__f32_logits_wasmsimd(heads[r].q, kb, kb_stride, 0, nb, d_k, heads[r].scale, z + r * z_stride + j0);
  }
  for (size_t r = 0; r < n_rows; r++) {
    l[r] = attn__weights_wasmsimd(&heads[r], 0, span, z + r * z_stride, &m[r]);
    attn__zero_row(heads[r].out, d_v);  /* the accumulator until the end */
  }
  for (size_t j0 = 0; j0 < n; j0 += ATTN__DECODE_KB) {
    const size_t nb = n - j0 < ATTN__DECODE_KB ? n - j0 : ATTN__DECODE_KB;
    size_t r = 0;
    while (r < n_rows) {
      if (l[r] == 0.0f) {
        r++;
        continue;
      }
      size_t r2 = r + 1;  /* the next row with allowed keys, to pair with */
      while (r2 < n_rows && l[r2] == 0.0f) r2++;
      if (r2 < n_rows) {
        attn__pv_acc2_wasmsimd(z + r * z_stride + j0, z + r2 * z_stride + j0, nb, v + j0 * v_stride, v_stride, d_v,
                               heads[r].out, heads[r2].out);
        r = r2 + 1;
      } else {
        attn__pv_acc_wasmsimd(z + r * z_stride + j0, nb, v + j0 * v_stride, v_stride, d_v, heads[r].out);
        r = r2;
      }
    }
  }
  for (size_t r = 0; r < n_rows; r++) attn__finish_row_wasmsimd(&heads[r], 0, l[r], m[r]);
}

static void attn__decode_compact_wasmsimd(const attn__decode_args* args);

/* The compact caches' decode is called through a pointer read as volatile,
 * for the reason attention.c calls the kernels so (kernels.h): inlined into
 * this kernel, whose only caller it has, it would make one function of
 * both, whose register allocation slows the float32 decode. */
static void (*volatile attn__decode_compact)(const attn__decode_args*) = attn__decode_compact_wasmsimd;

void attn__f32_decode_wasmsimd(const attn__decode_args* args) {
  assert(args != NULL && args->logits != NULL);
  if (args->heads[0].k_rows.dtype != ATTN__KV_F32) {
    attn__decode_compact(args);
    return;
  }
  if (args->n_heads > 2 || args->k_table != NULL) {
    assert(args->heads[0].n_q == 1 && (args->k_table == NULL || args->tile != NULL));
    attn__decode_group_wasmsimd(args);
    return;
  }
  const size_t n_rows = attn__decode_rows(args);
  float* za = args->logits;                               /* (n_k rounded up to 4) logits, then weights */
  float* zb = za + attn__round_up(args->heads[0].n_k, 4);  /* the same for the pair's second row */
  size_t r = 0;
  while (r < n_rows) {
    size_t ia, ib = 0;
    const attn__head* ha = attn__decode_head(args, r, &ia);
    const attn__head* hb = r + 1 < n_rows ? attn__decode_head(args, r + 1, &ib) : NULL;
    const attn__span sa = attn__key_span(ha, ia);
    const attn__span sb = hb != NULL ? attn__key_span(hb, ib) : (attn__span){0, 0};
    const size_t d_k = ha->d_k, d_v = ha->d_v, k_stride = ha->k_stride, v_stride = ha->v_stride;
    const float* k = ha->k + sa.lo * k_stride;  /* (span, d_k) the row's keys */
    const float* v = ha->v + sa.lo * v_stride;  /* (span, d_v) */
    const float* qa = ha->q + ia * ha->q_stride;  /* (d_k) */
    float* out_a = ha->out + ia * ha->out_stride;  /* (d_v) */
    const size_t na = sa.hi - sa.lo;
    float ma, la;
    attn__zero_row(out_a, d_v);
    if (hb != NULL && sb.lo == sa.lo && sb.hi >= sa.hi) {
      /* A pair whose key spans start together (query rows do not move back,
       * so b sees at least a's keys). */
      const size_t nb = sb.hi - sa.lo;
      const float* qb = hb->q + ib * hb->q_stride;  /* (d_k) */
      float* out_b = hb->out + ib * hb->out_stride;  /* (d_v) */
      float mb;
      attn__f32_logits2_wasmsimd(qa, qb, k, k_stride, na, d_k, ha->scale, za, zb);
      attn__f32_logits_wasmsimd(qb, k, k_stride, na, nb, d_k, hb->scale, zb);
      la = attn__weights_wasmsimd(ha, ia, sa, za, &ma);
      const float lb = attn__weights_wasmsimd(hb, ib, sb, zb, &mb);
      attn__zero_row(out_b, d_v);
      if (la != 0.0f && lb != 0.0f) {
        attn__pv_acc2_wasmsimd(za, zb, na, v, v_stride, d_v, out_a, out_b);
        attn__pv_acc_wasmsimd(zb + na, nb - na, v + na * v_stride, v_stride, d_v, out_b);
      } else if (lb != 0.0f) {
        attn__pv_acc_wasmsimd(zb, nb, v, v_stride, d_v, out_b);
      } else if (la != 0.0f) {
        attn__pv_acc_wasmsimd(za, na, v, v_stride, d_v, out_a);
      }
      attn__finish_row_wasmsimd(hb, ib, lb, mb);
      r += 2;
    } else {
      attn__f32_logits_wasmsimd(qa, k, k_stride, 0, na, d_k, ha->scale, za);
      la = attn__weights_wasmsimd(ha, ia, sa, za, &ma);
      if (la != 0.0f) attn__pv_acc_wasmsimd(za, na, v, v_stride, d_v, out_a);
      r += 1;
    }
    attn__finish_row_wasmsimd(ha, ia, la, ma);
  }
}

/* x (n) *= s. */
static void attn__scale_wasmsimd(float* x, size_t n, float s) {
  const v128_t vs = wasm_f32x4_splat(s);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) wasm_v128_store(x + j, wasm_f32x4_mul(wasm_v128_load(x + j), vs));
  for (; j < n; j++) x[j] = x[j] * s;
}

/* Whether args has one query row per head, all with the same key span. */
static int attn__one_span(const attn__decode_args* args) {
  if (args->heads[0].n_q != 1) return 0;
  const attn__span s0 = attn__key_span(&args->heads[0], 0);
  for (size_t r = 1; r < args->n_heads; r++) {
    const attn__span s = attn__key_span(&args->heads[r], 0);
    if (s.lo != s0.lo || s.hi != s0.hi) return 0;
  }
  return 1;
}

/* Whether every query row of args has |q_p| < 2^16 (no NaN): then each
 * row times 2^112 (exact) goes to q_up (n_rows, d_k). */
static int attn__queries_up_wasmsimd(const attn__decode_args* args, float* q_up) {
  const size_t n_rows = attn__decode_rows(args), d_k = args->heads[0].d_k, d_k4 = d_k / 4 * 4;
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const float* q = h->q + i * h->q_stride;  /* (d_k) */
    v128_t vmax = wasm_f32x4_splat(0.0f);
    for (size_t p = 0; p < d_k4; p += 4) vmax = wasm_f32x4_max(vmax, wasm_f32x4_abs(wasm_v128_load(q + p)));
    float amax = attn__hmax_nan_wasmsimd(vmax);
    for (size_t p = d_k4; p < d_k; p++) amax = attn__max_nan(amax, fabsf(q[p]));
    if (!(amax < 0x1p16f)) return 0;
  }
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const float* q = h->q + i * h->q_stride;  /* (d_k) */
    for (size_t p = 0; p < d_k; p++) q_up[r * d_k + p] = q[p] * 0x1p112f;
  }
  return 1;
}

/* A compact cache's K and V (float16 or int8): every row of every head in
 * args (each with its own key span) goes through the keys in blocks of
 * ATTN__DECODE_KB, each block of K, then of V, loaded once as float32 into
 * args->tile and read from there by all rows, two at a time where their
 * parts of the block coincide. Logits, weights and P V are the float32
 * path's functions on those floats, so a row gets the bits the scalar twin
 * gives (each logit alone, P V added block by block in key order).
 * A float16 block is loaded as its bits' float32, the values times 2^-112
 * (attn__f16_f32_kv_load_bits_wasmsimd: no rebias multiply), and the 2^112
 * moves to the other factor: the query rows for the logits (when every
 * |q_p| < 2^16, else K is loaded as its values), the weights for P V (at
 * most 1). Powers of two multiply exactly short of overflow, so each
 * product q_p k_p and p_j v_j is the same real number as with the values
 * and rounds (alone or fused into its sum) to the same float. A decode
 * step's rows (one per head, one span) take their logits in fours that read
 * each float16 block of K in place, widened in registers (no block store
 * and reload), in the same order; a block with Infinity or NaN goes through
 * the tile. */
static void attn__decode_compact_wasmsimd(const attn__decode_args* args) {
  assert(args->tile != NULL);
  const attn__head* h0 = &args->heads[0];
  const size_t n_rows = attn__decode_rows(args), d_k = h0->d_k, d_v = h0->d_v;
  const size_t z_stride = attn__round_up(h0->n_k, 4);
  float* z = args->logits;           /* (n_rows, z_stride) logits, then weights, from each span's start */
  float* l = z + n_rows * z_stride;  /* (n_rows) sums */
  float* m = l + n_rows;             /* (n_rows) maxima */
  float* tile = args->tile;          /* (ATTN__DECODE_KB, d_k or d_v) one block as float32 */
  size_t lo = h0->n_k, hi = 0;       /* the keys some row sees */
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const attn__span s = attn__key_span(h, i);
    if (s.lo < s.hi) {
      lo = s.lo < lo ? s.lo : lo;
      hi = s.hi > hi ? s.hi : hi;
    }
  }
  const int integer_logits = attn__i8_logits_ok(h0), f16 = h0->k_rows.dtype == ATTN__KV_F16;
  float* q_up = tile + ATTN__DECODE_KB * (d_k > d_v ? d_k : d_v);  /* float16: (n_rows, d_k) q * 2^112 */
  const int k_bits = f16 && attn__queries_up_wasmsimd(args, q_up);
  if (integer_logits) attn__i8_f32_logits_wasmsimd(args, lo, hi, z, z_stride, tile);
  /* Rows in fours with one span (a decode step's heads), K widened in
   * registers (attn__f16_f32_logits4_wasmsimd). */
  const int fours = k_bits && n_rows % 4 == 0 && d_k % 8 == 0 && attn__one_span(args);
  for (size_t j0 = lo; !integer_logits && j0 < hi; j0 += ATTN__DECODE_KB) {
    const size_t nb = hi - j0 < ATTN__DECODE_KB ? hi - j0 : ATTN__DECODE_KB;
    int done = fours;
    for (size_t r = 0; done && r < n_rows; r += 4) {
      float* const zr[4] = {z + r * z_stride + (j0 - lo), z + (r + 1) * z_stride + (j0 - lo),
                            z + (r + 2) * z_stride + (j0 - lo), z + (r + 3) * z_stride + (j0 - lo)};
      const attn__head* h = &args->heads[r];  /* n_q = 1: row r is head r */
      const float scale[4] = {h[0].scale, h[1].scale, h[2].scale, h[3].scale};
      done = attn__f16_f32_logits4_wasmsimd(q_up + r * d_k, (const uint16_t*)h0->k_rows.data, h0->k_rows.stride, j0,
                                        j0 + nb, d_k, scale, zr);
    }
    if (done) continue;
    if (k_bits) {
      attn__f16_f32_kv_load_bits_wasmsimd(&h0->k_rows, j0, nb, d_k, tile, d_k);
    } else {
      attn__kv_load(&h0->k_rows, j0, nb, d_k, tile, d_k);
    }
    for (size_t r = 0; r < n_rows; r++) {
      size_t i, i2;
      const attn__head* h = attn__decode_head(args, r, &i);
      const attn__span s = attn__key_span(h, i), part = attn__block_part(s, j0, nb);
      if (part.lo == part.hi) continue;
      const float* k = tile + (part.lo - j0) * d_k;  /* (part, d_k) */
      const float* q = k_bits ? q_up + r * d_k : h->q + i * h->q_stride;
      if (r + 1 < n_rows) {
        const attn__head* h2 = attn__decode_head(args, r + 1, &i2);
        const attn__span s2 = attn__key_span(h2, i2), part2 = attn__block_part(s2, j0, nb);
        if (part2.lo == part.lo && part2.hi == part.hi) {
          attn__f32_logits2_wasmsimd(q, k_bits ? q_up + (r + 1) * d_k : h2->q + i2 * h2->q_stride, k, d_k,
                                 part.hi - part.lo, d_k, h->scale,
                                 z + r * z_stride + (part.lo - s.lo), z + (r + 1) * z_stride + (part.lo - s2.lo));
          r++;
          continue;
        }
      }
      attn__f32_logits_wasmsimd(q, k, d_k, 0, part.hi - part.lo, d_k, h->scale, z + r * z_stride + (part.lo - s.lo));
    }
  }
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    const attn__span s = attn__key_span(h, i);
    l[r] = attn__weights_wasmsimd(h, i, s, z + r * z_stride, &m[r]);
    attn__zero_row(h->out + i * h->out_stride, d_v);  /* the accumulator until the end */
    if (f16 && l[r] != 0.0f) attn__scale_wasmsimd(z + r * z_stride, s.hi - s.lo, 0x1p112f);
  }
  for (size_t j0 = lo; j0 < hi; j0 += ATTN__DECODE_KB) {
    const size_t nb = hi - j0 < ATTN__DECODE_KB ? hi - j0 : ATTN__DECODE_KB;
    if (f16) {
      attn__f16_f32_kv_load_bits_wasmsimd(&h0->v_rows, j0, nb, d_v, tile, d_v);
    } else {
      attn__kv_load(&h0->v_rows, j0, nb, d_v, tile, d_v);
    }
    for (size_t r = 0; r < n_rows; r++) {
      if (l[r] == 0.0f) continue;
      size_t i, i2;
      const attn__head* h = attn__decode_head(args, r, &i);
      const attn__span s = attn__key_span(h, i), part = attn__block_part(s, j0, nb);
      if (part.lo == part.hi) continue;
      const float* v = tile + (part.lo - j0) * d_v;  /* (part, d_v) */
      if (r + 1 < n_rows && l[r + 1] != 0.0f) {
        const attn__head* h2 = attn__decode_head(args, r + 1, &i2);
        const attn__span s2 = attn__key_span(h2, i2), part2 = attn__block_part(s2, j0, nb);
        if (part2.lo == part.lo && part2.hi == part.hi) {
          attn__pv_acc2_wasmsimd(z + r * z_stride + (part.lo - s.lo), z + (r + 1) * z_stride + (part.lo - s2.lo),
                                 part.hi - part.lo, v, d_v, d_v, h->out + i * h->out_stride,
                                 h2->out + i2 * h2->out_stride);
          r++;
          continue;
        }
      }
      attn__pv_acc_wasmsimd(z + r * z_stride + (part.lo - s.lo), part.hi - part.lo, v, d_v, d_v,
                            h->out + i * h->out_stride);
    }
  }
  for (size_t r = 0; r < n_rows; r++) {
    size_t i;
    const attn__head* h = attn__decode_head(args, r, &i);
    attn__finish_row_wasmsimd(h, i, l[r], m[r]);
  }
}
