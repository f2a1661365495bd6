/* keys.h - one (batch, query head) as the kernels see it and the rule of
 * which keys each query row may see (position span, mask), with the
 * spans of row and key blocks built on it, and ALiBi's bias by position
 * (private). attention.c turns the options into this rule in one place
 * (attn__head_view). */
#ifndef ATTN_KERNELS_KEYS_H
#define ATTN_KERNELS_KEYS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "kv-numerics.h"

/* One (batch, query head) of a call, as every kernel sees it: the head's
 * n_q query rows, its kv head's keys and values, and which keys each row
 * may see. attention.c builds it in one place (attn__head_view) for the
 * forward and the backward. Each pointer advances by its row stride per
 * row. */
typedef struct attn__head {
  const float* q;        /* (n_q, d_k) queries */
  const float* k;        /* (n_k, d_k) the kv head's keys */
  const float* v;        /* (n_k, d_v) the kv head's values */
  float* out;            /* (n_q, d_v) output: the forward writes it; the backward reads it, or NULL */
  float* lse;            /* (n_q) log-sum-exp of each row's logits: the forward writes it (or
                            NULL); the backward reads it */
  const uint8_t* mask;   /* (n_q, >= n_k) keep-mask, or NULL */
  const float* bias;     /* (n_q, >= n_k) bias, or NULL */
  size_t q_stride, k_stride, v_stride, out_stride, mask_stride, bias_stride;
  size_t n_q;
  size_t n_k;            /* keys that exist for this head: n_k clipped to kv_lengths[b]
                            and to the mask's and bias's cols */
  size_t d_k, d_v;
  float scale;
  float softcap;         /* > 0: logits = softcap * tanh(scaled / softcap); 0: none */
  float alibi;           /* ALiBi slope: logits += alibi * (j - p) (attn__alibi_bias); 0: none */
  float sink;            /* a logit in every row's softmax denominator, with no value
                            (attn__sink_join); -Infinity: none */
  int64_t offset;        /* position of query row 0 among the keys */
  int64_t keys_before;   /* the query at position p sees keys p - keys_before .. */
  int64_t keys_after;    /* .. p + keys_after: the window and the causal frontier;
                            ATTN__UNBOUNDED on a side without a bound */
  attn__kv_rows k_rows;  /* a compact cache's K and V (k and v are then NULL); dtype */
  attn__kv_rows v_rows;  /* ATTN__KV_F32 (0) when k and v hold them */
} attn__head;

/* Farther than any key from any query position (both are below 2^32). */
#define ATTN__UNBOUNDED (INT64_C(1) << 40)

/* Keys [lo, hi) of a query row, or query rows [lo, hi) of a key block. */
typedef struct attn__span {
  size_t lo, hi;
} attn__span;

/* The rule by position (attention.h): the keys query row i may see, those
 * that exist (j < n_k) from keys_before before to keys_after after its
 * position i + offset. lo == hi when none. Keys outside are never computed.
 * Both ends never decrease as i grows: the spans of row and key blocks
 * below rely on it. */
static inline attn__span attn__key_span(const attn__head* h, size_t i) {
  const int64_t p = (int64_t)i + h->offset;
  int64_t lo = p - h->keys_before, hi = p + h->keys_after + 1;
  if (hi > (int64_t)h->n_k) hi = (int64_t)h->n_k;
  if (hi < 0) hi = 0;
  if (lo < 0) lo = 0;
  if (lo > hi) lo = hi;
  return (attn__span){(size_t)lo, (size_t)hi};
}

/* Keys [a, b) of row span s within the block [j0, j0 + nb): empty when
 * they do not meet. */
static inline attn__span attn__block_part(attn__span s, size_t j0, size_t nb) {
  const size_t a = s.lo > j0 ? s.lo : j0, b = s.hi < j0 + nb ? s.hi : j0 + nb;
  return a < b ? (attn__span){a, b} : (attn__span){a, a};
}

/* The whole rule: key j is allowed for query row i when it lies in the
 * row's span (attn__key_span(h, i), which the caller computes once per row)
 * and the mask keeps it. A -Infinity logit (bias) masks too; that is for
 * the softmax to see. */
static inline int attn__key_allowed(const attn__head* h, attn__span span, size_t i, size_t j) {
  return span.lo <= j && j < span.hi && (h->mask == NULL || h->mask[i * h->mask_stride + j] != 0);
}

/* The keys some row of [i0, i1) may see: from the first row's span start
 * to the last row's span end. */
static inline attn__span attn__rows_key_span(const attn__head* h, size_t i0, size_t i1) {
  return (attn__span){attn__key_span(h, i0).lo, attn__key_span(h, i1 - 1).hi};
}

/* Whether every row of [i0, i1) may see every key of [j0, j1) by position:
 * the last row's span starts by j0 and the first row's reaches j1 - 1. */
static inline int attn__spans_cover(const attn__head* h, size_t i0, size_t i1, size_t j0, size_t j1) {
  return attn__key_span(h, i1 - 1).lo <= j0 && j1 <= attn__key_span(h, i0).hi;
}

/* The query rows whose spans meet keys [j0, j1): consecutive, since spans
 * never move back, so two bisections on attn__key_span find them: the
 * first row whose span ends after j0, and the first after it whose span
 * starts at j1 or later. */
static inline attn__span attn__key_rows(const attn__head* h, size_t j0, size_t j1) {
  size_t lo = 0, hi = h->n_q;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (attn__key_span(h, mid).hi > j0) hi = mid; else lo = mid + 1;
  }
  const size_t first = lo;
  hi = h->n_q;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (attn__key_span(h, mid).lo >= j1) hi = mid; else lo = mid + 1;
  }
  return (attn__span){first, lo};
}

/* The keys a tile of query rows [i0, i0 + rows) visits: spans[r] gets row
 * i0 + r's span (an empty one for r >= rows, up to MR), and the result runs
 * from the first key any row may see, rounded down to a panel of 8, to the
 * last. */
static inline attn__span attn__tile_keys(const attn__head* h, size_t i0, size_t rows, attn__span spans[ATTN__MR]) {
  size_t begin = h->n_k, end = 0;
  for (size_t r = 0; r < ATTN__MR; r++) {
    spans[r] = (attn__span){0, 0};
    if (r >= rows) continue;
    spans[r] = attn__key_span(h, i0 + r);
    if (spans[r].lo < spans[r].hi) {
      begin = spans[r].lo < begin ? spans[r].lo : begin;
      end = spans[r].hi > end ? spans[r].hi : end;
    }
  }
  return (attn__span){begin / ATTN__PAD * ATTN__PAD, end};
}
/* ALiBi's reference key of query row i: the key of its span with the
 * largest bias slope * (j - p), p = i + offset: the span's last key for a
 * positive slope, its first for a negative one (the position when the span
 * is empty). Softmax is shift invariant, so every kernel adds the bias
 * relative to it, slope * (j - ref), and adds the row's constant
 * slope * (ref - p) back only to what it reports (lse, the step logits):
 * the relative distances stay small whatever the query offset, so the
 * bias is one rounded product of an exact distance, every allowed bias
 * is <= 0 (a huge slope makes far keys -Infinity, never +Infinity) and
 * the reference key's is 0. */
static inline int64_t attn__alibi_ref(const attn__head* h, size_t i) {
  const attn__span s = attn__key_span(h, i);
  if (s.lo == s.hi) return (int64_t)i + h->offset;
  return h->alibi > 0.0f ? (int64_t)s.hi - 1 : (int64_t)s.lo;
}

/* ALiBi's bias of key j for query row i relative to its reference key:
 * slope * (j - ref), one rounded product ((float)(j - ref) is exact below
 * 2^24). Every kernel adds it to the logit right after the bias, each with
 * this expression (plain C in the SIMD kernels too), so the builds give
 * the same bits. */
static inline float attn__alibi_bias(const attn__head* h, size_t i, size_t j) {
  return h->alibi * (float)((int64_t)j - attn__alibi_ref(h, i));
}

/* The row's constant the relative bias leaves out, slope * (ref - p),
 * rounded once from double (exact distance); 0 without a slope. */
static inline float attn__alibi_shift(const attn__head* h, size_t i) {
  if (h->alibi == 0.0f) return 0.0f;
  return (float)((double)h->alibi * (double)(attn__alibi_ref(h, i) - ((int64_t)i + h->offset)));
}

/* The sink logit of row i in the relative logits' frame (the sink minus the
 * row's constant), -Infinity without a sink. */
static inline float attn__row_sink(const attn__head* h, size_t i) {
  if (h->alibi == 0.0f || h->sink == -INFINITY) return h->sink;
  return h->sink - attn__alibi_shift(h, i);
}

/* The log-sum-exp row i reports from its relative max m and sum l: the
 * row's constant added back (attn__lse without a slope). When the sink set
 * the max, the sink itself is that max in the caller's frame: adding the
 * constant back to sink - constant would round the sink away far from the
 * keys, and a row with no allowed key must report exactly its sink. */
static inline float attn__row_lse(const attn__head* h, size_t i, float m, float l) {
  if (h->alibi == 0.0f) return attn__lse(m, l);
  if (l != 0.0f && h->sink != -INFINITY && m == attn__row_sink(h, i)) return h->sink + logf(l);
  return attn__lse(m, l) + attn__alibi_shift(h, i);
}

/* z[jj] += the ALiBi bias of key j0 + jj for row i, jj < n; nothing
 * without a slope. */
static inline void attn__add_alibi(const attn__head* h, size_t i, size_t j0, size_t n, float* z) {
  if (h->alibi == 0.0f) return;
  const int64_t ref = attn__alibi_ref(h, i);
  for (size_t jj = 0; jj < n; jj++) z[jj] = z[jj] + h->alibi * (float)((int64_t)(j0 + jj) - ref);
}

#endif /* ATTN_KERNELS_KEYS_H */
