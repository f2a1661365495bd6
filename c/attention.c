/* attention.c - the public entry points: check arguments, pick a kernel,
 * return a status. No intrinsics here; the manual is attention.h. */
#include "attention.h"

#include <math.h>
#include <stddef.h>

#include "attention-internal.h"
#include "kernels/f32-rope.h"

/* The struct layout web/attention.js writes by offset (4 bytes a field). */
#if defined(__wasm32__)
_Static_assert(sizeof(attn_shape) == 76 && offsetof(attn_shape, q) == 28 && offsetof(attn_shape, out) == 64,
               "attn_shape layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_options) == 92 && offsetof(attn_options, bias) == 28 &&
                   offsetof(attn_options, softcap) == 48 && offsetof(attn_options, kv_lengths) == 68 &&
                   offsetof(attn_options, sinks) == 72 && offsetof(attn_options, rope_flags) == 88,
               "attn_options layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_steps) == 20, "attn_steps layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_grads) == 20, "attn_grads layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_kv) == 44 && offsetof(attn_kv, k_scale) == 20, "attn_kv layout is fixed for web/core/instance.js");
#endif
_Static_assert(ATTN__KV_F32 == ATTN_KV_FLOAT32 && ATTN__KV_F16 == ATTN_KV_FLOAT16 && ATTN__KV_I8 == ATTN_KV_INT8,
               "kernels.h's dtypes are attention.h's");

/* The output kernels, called through pointers read as volatile so that
 * wasm-opt cannot inline them into attn_sdpa (kernels.h says why). */
static void (*volatile attn__flash_kernel)(const attn__flash_args*) = ATTN__KERNEL(flash);
static void (*volatile attn__decode_kernel)(const attn__decode_args*) = ATTN__KERNEL(decode);

/* Strides of a tensor (batch, heads, n, d): as given, or contiguous when all
 * three are 0. */
static attn_strides attn__strides(attn_strides s, size_t heads, size_t n, size_t d) {
  if (s.batch_stride == 0 && s.head_stride == 0 && s.row_stride == 0) {
    s.row_stride = d;
    s.head_stride = n * d;
    s.batch_stride = heads * n * d;
  }
  return s;
}

/* Whether the last element index a tensor touches, in bytes, fits size_t. */
static int attn__extent_fits(attn_strides s, size_t batch, size_t heads, size_t n, size_t d) {
  size_t a, b, c, x;
  return attn__mul(batch - 1, s.batch_stride, &a) && attn__mul(heads - 1, s.head_stride, &b) &&
         attn__mul(n - 1, s.row_stride, &c) && !__builtin_add_overflow(a, b, &x) &&
         !__builtin_add_overflow(x, c, &x) && !__builtin_add_overflow(x, d, &x) &&
         attn__mul(x, sizeof(float), &x);
}

static int attn__bcast_ok(const attn_bcast* m, int32_t n_k) { return m->cols >= 0 && m->cols <= n_k; }

static size_t attn__bcast_cols(const attn_bcast* m, size_t n_k) {
  return m->cols == 0 ? n_k : (size_t)m->cols;
}

/* One checked call of attn_sdpa or attn_sdpa_backward: the sizes, the
 * tensors' strides resolved, the options and the tensors. */
typedef struct attn__call {
  size_t batch, heads, kv_heads, n_q, n_k, d_k, d_v;
  size_t group;                 /* query heads per kv head */
  size_t cols;                  /* keys below the mask's and bias's cols: the others are not allowed */
  attn_strides qs, ks, vs, os;  /* of q, k, v and out (and of dq, dk, dv and dout) */
  attn_options op;
  const float* q;
  const float* k;
  const float* v;
  float* out;                   /* the forward writes it; the backward reads it, or NULL */
  float* lse;                   /* (batch, heads, n_q), or NULL */
  attn_kv kv;                   /* a compact cache's K and V (k and v NULL), or dtype ATTN_KV_FLOAT32 */
  attn_strides kss, vss;        /* of its int8 scales, (batch, kv_heads, n_k) */
} attn__call;

/* The checks of a shape and options that attn_sdpa and attn_sdpa_backward
 * share, in one order so both calls fail with the same status, and the
 * call they describe (tensors not yet set): ATTN_OK or the first failure. */
static attn_status attn__prepare(const attn_shape* shape, const attn_options* options, attn__call* c) {
  const attn_shape sh = *shape;
  const attn_options op = *options;
  if (sh.batch < 1 || sh.heads < 1 || sh.kv_heads < 1 || sh.n_q < 1 || sh.n_k < 1 || sh.d_k < 1 ||
      sh.d_v < 1) {
    return ATTN_ERR_SHAPE;
  }
  if (sh.heads % sh.kv_heads != 0) return ATTN_ERR_HEADS;
  if (!isfinite(op.scale)) return ATTN_ERR_SCALE;
  if ((op.flags & ~(ATTN_CAUSAL | ATTN_WINDOW)) != 0) return ATTN_ERR_FLAGS;
  if (!(op.softcap >= 0.0f) || !isfinite(op.softcap)) return ATTN_ERR_SOFTCAP;
  if ((op.flags & ATTN_WINDOW) != 0 && (op.window_left < -1 || op.window_right < -1)) {
    return ATTN_ERR_WINDOW;
  }
  if ((op.mask != NULL && !attn__bcast_ok(&op.mask_layout, sh.n_k)) ||
      (op.bias != NULL && !attn__bcast_ok(&op.bias_layout, sh.n_k))) {
    return ATTN_ERR_MASK;
  }
  if (op.kv_lengths != NULL) {
    for (int32_t b = 0; b < sh.batch; b++) {
      if (op.kv_lengths[b] < 0 || op.kv_lengths[b] > sh.n_k) return ATTN_ERR_LENGTHS;
    }
  }
  if (!attn__rope_ok(&op, sh.d_k)) return ATTN_ERR_ROPE;
  for (int32_t h = 0; h < sh.heads; h++) {
    if (op.sinks != NULL && !isfinite(op.sinks[h])) return ATTN_ERR_SINKS;
    if (op.alibi != NULL && !isfinite(op.alibi[h])) return ATTN_ERR_ALIBI;
  }
  const size_t batch = (size_t)sh.batch, heads = (size_t)sh.heads, kv_heads = (size_t)sh.kv_heads;
  const size_t nq = (size_t)sh.n_q, nk = (size_t)sh.n_k, dk = (size_t)sh.d_k, dv = (size_t)sh.d_v;
  *c = (attn__call){
      .batch = batch, .heads = heads, .kv_heads = kv_heads, .n_q = nq, .n_k = nk, .d_k = dk, .d_v = dv,
      .group = heads / kv_heads, .cols = nk,
      .qs = attn__strides(sh.q, heads, nq, dk), .ks = attn__strides(sh.k, kv_heads, nk, dk),
      .vs = attn__strides(sh.v, kv_heads, nk, dv), .os = attn__strides(sh.out, heads, nq, dv),
      .op = op,
  };
  if (op.mask != NULL && attn__bcast_cols(&op.mask_layout, nk) < c->cols) c->cols = attn__bcast_cols(&op.mask_layout, nk);
  if (op.bias != NULL && attn__bcast_cols(&op.bias_layout, nk) < c->cols) c->cols = attn__bcast_cols(&op.bias_layout, nk);
  return ATTN_OK;
}

/* Whether every tensor's span of a prepared call fits size_t, and with
 * step matrices their (batch, heads, n_q, n_k) count (ATTN_ERR_OVERFLOW
 * when not). Nothing else of a call is (n_q, n_k). */
static int attn__fits(const attn__call* c, int with_steps) {
  size_t count;
  return attn__extent_fits(c->qs, c->batch, c->heads, c->n_q, c->d_k) &&
         attn__extent_fits(c->ks, c->batch, c->kv_heads, c->n_k, c->d_k) &&
         attn__extent_fits(c->vs, c->batch, c->kv_heads, c->n_k, c->d_v) &&
         attn__extent_fits(c->os, c->batch, c->heads, c->n_q, c->d_v) &&
         (!with_steps || attn__count(c->batch, c->heads, c->n_q, c->n_k, &count));
}

/* Offsets of head h of batch entry b in a tensor and in a broadcast mask or bias. */
static size_t attn__at(attn_strides s, size_t b, size_t h) { return b * s.batch_stride + h * s.head_stride; }
static size_t attn__bcast_at(const attn_bcast* m, size_t b, size_t h) {
  return b * m->batch_stride + h * m->head_stride;
}

/* The view of query head h of batch entry b that every kernel takes
 * (kernels.h), for the forward and the backward alike. The options become
 * the rule of attn__key_span here: kv_lengths and the cols clip n_k; a
 * window side of -1, or no ATTN_WINDOW, leaves that side unbounded;
 * ATTN_CAUSAL ends the keys at the query's own position. */
static attn__head attn__head_view(const attn__call* c, size_t b, size_t h) {
  const attn_options* op = &c->op;
  const size_t g = h / c->group;  /* its kv head */
  size_t n_keys = c->cols;
  if (op->kv_lengths != NULL && (size_t)op->kv_lengths[b] < n_keys) n_keys = (size_t)op->kv_lengths[b];
  const int window = (op->flags & ATTN_WINDOW) != 0;
  int64_t before = window && op->window_left >= 0 ? op->window_left : ATTN__UNBOUNDED;
  int64_t after = window && op->window_right >= 0 ? op->window_right : ATTN__UNBOUNDED;
  if ((op->flags & ATTN_CAUSAL) != 0 && after > 0) after = 0;
  attn__head view = {
      .q = c->q + attn__at(c->qs, b, h),
      .k = c->k != NULL ? c->k + attn__at(c->ks, b, g) : NULL,
      .v = c->v != NULL ? c->v + attn__at(c->vs, b, g) : NULL,
      .out = c->out != NULL ? c->out + attn__at(c->os, b, h) : NULL,
      .lse = c->lse != NULL ? c->lse + (b * c->heads + h) * c->n_q : NULL,
      .q_stride = c->qs.row_stride, .k_stride = c->ks.row_stride, .v_stride = c->vs.row_stride,
      .out_stride = c->os.row_stride,
      .n_q = c->n_q, .n_k = n_keys, .d_k = c->d_k, .d_v = c->d_v,
      .scale = op->scale, .softcap = op->softcap,
      .alibi = op->alibi != NULL ? op->alibi[h] : 0.0f, .sink = op->sinks != NULL ? op->sinks[h] : -INFINITY,
      .offset = op->query_offsets != NULL ? op->query_offsets[b] : op->query_offset,
      .keys_before = before, .keys_after = after,
  };
  if (op->mask != NULL) {
    view.mask = op->mask + attn__bcast_at(&op->mask_layout, b, h);
    view.mask_stride = op->mask_layout.row_stride;
  }
  if (op->bias != NULL) {
    view.bias = op->bias + attn__bcast_at(&op->bias_layout, b, h);
    view.bias_stride = op->bias_layout.row_stride;
  }
  const attn_kv* kv = &c->kv;
  if (kv->dtype != ATTN_KV_FLOAT32) {
    const size_t bytes = attn__kv_bytes(kv->dtype);
    view.k_rows = (attn__kv_rows){
        .dtype = kv->dtype, .data = (const unsigned char*)kv->k + attn__at(c->ks, b, g) * bytes,
        .stride = c->ks.row_stride, .scale_stride = c->kss.row_stride,
        .scales = kv->k_scales != NULL ? kv->k_scales + attn__at(c->kss, b, g) : NULL,
    };
    view.v_rows = (attn__kv_rows){
        .dtype = kv->dtype, .data = (const unsigned char*)kv->v + attn__at(c->vs, b, g) * bytes,
        .stride = c->vs.row_stride, .scale_stride = c->vss.row_stride,
        .scales = kv->v_scales != NULL ? kv->v_scales + attn__at(c->vss, b, g) : NULL,
    };
  }
  return view;
}

/* A view that reads its kv head's K and V as float32 rows k (n_k, d_k)
 * and v (n_k, d_v), contiguous: a compact cache's on the fused and step
 * paths, converted once per kv head. */
static attn__head attn__float_rows(attn__head view, const float* k, const float* v) {
  view.k = k, view.k_stride = view.d_k, view.k_rows.dtype = ATTN_KV_FLOAT32;
  view.v = v, view.v_stride = view.d_v, view.v_rows.dtype = ATTN_KV_FLOAT32;
  return view;
}

/* attn_sdpa and attn_sdpa_kv: kv holds K and V, float32 or compact. */
static attn_status attn__sdpa(const attn_shape* shape, const float* q, const attn_kv* kv, float* out,
                              const attn_options* options, const attn_steps* steps, float* scratch,
                              size_t scratch_floats) {
  if (shape == NULL || options == NULL || q == NULL || kv == NULL || kv->k == NULL || kv->v == NULL || out == NULL) {
    return ATTN_ERR_NULL;
  }
  attn__call c;
  const attn_status bad = attn__prepare(shape, options, &c);
  if (bad != ATTN_OK) return bad;
  const attn_steps st = steps != NULL ? *steps : (attn_steps){0};
  const int with_steps = st.scores != NULL;
  if ((st.scaled != NULL) != with_steps || (st.weights != NULL) != with_steps ||
      (st.logits != NULL && !with_steps)) {
    return ATTN_ERR_STEPS;
  }
  const int32_t dtype = kv->dtype;
  if (attn__kv_bytes(dtype) == 0) return ATTN_ERR_DTYPE;
  if (dtype == ATTN_KV_INT8 && (kv->k_scales == NULL || kv->v_scales == NULL)) return ATTN_ERR_NULL;
  c.kv = *kv;
  c.kss = attn__strides(kv->k_scale, c.kv_heads, c.n_k, 1);
  c.vss = attn__strides(kv->v_scale, c.kv_heads, c.n_k, 1);
  if (!attn__fits(&c, with_steps) ||
      (dtype == ATTN_KV_INT8 && (!attn__extent_fits(c.kss, c.batch, c.kv_heads, c.n_k, 1) ||
                                 !attn__extent_fits(c.vss, c.batch, c.kv_heads, c.n_k, 1)))) {
    return ATTN_ERR_OVERFLOW;
  }
  attn__scratch at;
  const int compact = dtype != ATTN_KV_FLOAT32;
  /* A compact cache's keys were turned as they were written (a KV cache's
   * append): only the queries turn here. */
  if (compact && options->rope_dims != 0 && (options->rope_flags & ATTN_ROPE_QUERIES) == 0) return ATTN_ERR_ROPE;
  size_t rope_floats;
  if (!attn__scratch_layout(shape, dtype, with_steps, &at) || !attn__rope_floats(shape, options, 0, compact, &rope_floats)) {
    return ATTN_ERR_OVERFLOW;
  }
  if (scratch == NULL || scratch_floats < at.total || scratch_floats - at.total < rope_floats) return ATTN_ERR_SCRATCH;
  c.q = q, c.out = out, c.lse = st.lse;
  c.k = compact ? NULL : kv->k, c.v = compact ? NULL : kv->v;
  attn__rope_call rc;
  attn__rope_start(&c.op, c.n_q, c.n_k, c.d_k, c.group, 0, compact, scratch + at.total, &rc);

  const size_t nq = c.n_q, nk = c.n_k, dk = c.d_k, dv = c.d_v, group = c.group;
  float* k_panels = scratch + at.k_panels;          /* fused: (n_k_pad / 8, d_k, 8) */
  float* v_col_panels = scratch + at.v_col_panels;  /* fused: (d_v_pad / 8, n_k, 8) */
  float* tile = scratch + at.tile;                  /* fused: attn__flash_tile_floats(d_k, d_v) */
  float* k_t = scratch + at.k_t;                    /* steps: (d_k, n_k_pad) */
  float* k_rows = scratch + at.k_rows;              /* compact, fused and steps: (n_k, d_k) */
  float* v_rows = scratch + at.v_rows;              /* compact, fused and steps: (n_k, d_v) */
  float* logits = scratch + at.logits;              /* decode: a row of logits per row */
  float* kv_tile = compact ? scratch + at.kv_tile : NULL;  /* decode, compact: a block of K or V */

  for (size_t b = 0; b < c.batch; b++) {
    attn__rope_batch(&c.op, c.n_q, &rc, b);
    for (size_t g = 0; g < c.kv_heads; g++) {
      attn__head first = attn__head_view(&c, b, g * group);  /* the group's first head */
      if (at.path == ATTN__PATH_DECODE &&
          (compact || attn_sdpa_kernel(shape->n_q, shape->n_k, shape->d_k, (int32_t)group) == ATTN_KERNEL_GROUPED_DECODE)) {
        /* The decode kernel takes several heads of the group as its rows
         * and reads this K and V from memory once for all of them: the one
         * query row of each head (grouped-query decoding), or a compact
         * cache's n_q rows of as many heads as fit. It turns float32 keys
         * for RoPE itself, a block at a time, once for all those heads. */
        attn__head views[ATTN__DECODE_HEADS];
        const size_t per_call = compact ? attn__compact_heads(nq, group) : ATTN__DECODE_HEADS;
        for (size_t h0 = g * group; h0 < (g + 1) * group; h0 += per_call) {
          const size_t n = (g + 1) * group - h0 < per_call ? (g + 1) * group - h0 : per_call;
          for (size_t r = 0; r < n; r++) {
            views[r] = attn__head_view(&c, b, h0 + r);
            attn__rope_queries(&rc, &views[r], r * nq);
          }
          const attn__decode_args args = {.heads = views, .n_heads = n, .logits = logits,
                                          .tile = rc.k_rot != NULL ? rc.k_rot : kv_tile,
                                          .k_table = rc.k_rot != NULL ? rc.k_table : NULL,
                                          .rope_dims = rc.dims, .rope_flags = rc.flags};
          attn__decode_kernel(&args);
        }
        continue;
      }
      attn__rope_keys(&rc, c.n_k, &first);
      if (compact && first.n_k > 0) {
        attn__kv_load(&first.k_rows, 0, first.n_k, dk, k_rows, dk);
        attn__kv_load(&first.v_rows, 0, first.n_k, dv, v_rows, dv);
      }
      if (compact) first = attn__float_rows(first, k_rows, v_rows);
      if (at.path == ATTN__PATH_FUSED && first.n_k > 0) {
        ATTN__KERNEL(pack_rows)(first.k, first.k_stride, first.n_k, dk, k_panels);
        ATTN__KERNEL(pack_cols)(first.v, first.v_stride, first.n_k, dv, v_col_panels);
      }
      /* The query heads that share this kv head reuse the packed K and V. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        attn__head view = h == g * group ? first : attn__head_view(&c, b, h);
        attn__rope_view(&rc, &view, 0);
        if (compact) view = attn__float_rows(view, k_rows, v_rows);
        if (at.path == ATTN__PATH_STEPS) {
          const size_t off = (b * c.heads + h) * nq * nk;  /* (n_q, n_k) step matrices */
          const attn__steps_args args = {
              .head = view, .n_cols = nk, .k_t = k_t, .scores = st.scores + off, .scaled = st.scaled + off,
              .logits = st.logits != NULL ? st.logits + off : NULL, .weights = st.weights + off,
          };
          ATTN__KERNEL(steps)(&args);
        } else if (at.path == ATTN__PATH_DECODE) {
          const attn__decode_args args = {.heads = &view, .n_heads = 1, .logits = logits};
          attn__decode_kernel(&args);
        } else {
          const attn__flash_args args = {
              .head = view, .k_panels = k_panels, .v_col_panels = v_col_panels,
              .d_v_pad = attn__round_up(dv, ATTN__PAD), .tile = tile,
          };
          attn__flash_kernel(&args);
        }
      }
    }
  }
  return ATTN_OK;
}

attn_status attn_sdpa(const attn_shape* shape, const float* q, const float* k, const float* v,
                      float* out, const attn_options* options, const attn_steps* steps,
                      float* scratch, size_t scratch_floats) {
  const attn_kv kv = {.dtype = ATTN_KV_FLOAT32, .k = k, .v = v};
  return attn__sdpa(shape, q, &kv, out, options, steps, scratch, scratch_floats);
}

attn_status attn_sdpa_kv(const attn_shape* shape, const float* q, const attn_kv* kv, float* out,
                         const attn_options* options, const attn_steps* steps, float* scratch,
                         size_t scratch_floats) {
  return attn__sdpa(shape, q, kv, out, options, steps, scratch, scratch_floats);
}

/* The backward kernels, called through pointers read as volatile for the
 * reason the output kernels are (kernels.h): not inlined into the entry. */
static void (*volatile attn__backward_rows_kernel)(const attn__bwd_args*, float*) = ATTN__KERNEL(backward_rows);
static void (*volatile attn__backward_kernel)(const attn__bwd_args*) = ATTN__KERNEL(backward);

/* A head's part of dsinks: -sum_i exp(sink - lse_i) delta_i over its rows
 * in order (dL/ds through each row's softmax denominator). lse includes
 * the sink, so the argument is <= 0 (clamped for an lse from another
 * summation order). */
static float attn__dsink(const attn__bwd_args* a) {
  const attn__head* h = &a->head;
  float sum = 0.0f;
  for (size_t i = 0; i < h->n_q; i++) {
    float arg = attn__row_sink(h, i) - h->lse[i];
    if (arg > 0.0f) arg = 0.0f;
    sum = sum + attn__expf_nonpos(arg) * a->delta[i];
  }
  return -sum;
}

/* Zeroes d elements of each (b, h, i) row of a strided tensor. */
static void attn__zero_rows(float* x, attn_strides s, size_t batch, size_t heads, size_t n, size_t d) {
  for (size_t b = 0; b < batch; b++) {
    for (size_t h = 0; h < heads; h++) {
      for (size_t i = 0; i < n; i++) {
        float* row = x + b * s.batch_stride + h * s.head_stride + i * s.row_stride;
        for (size_t c = 0; c < d; c++) row[c] = 0.0f;
      }
    }
  }
}

attn_status attn_sdpa_backward(const attn_shape* shape, const float* q, const float* k,
                               const float* v, const float* out, const float* dout,
                               const float* lse, const attn_options* options,
                               const attn_grads* grads, float* scratch, size_t scratch_floats) {
  if (shape == NULL || options == NULL || grads == NULL || q == NULL || k == NULL || v == NULL ||
      dout == NULL || grads->dq == NULL || grads->dk == NULL || grads->dv == NULL) {
    return ATTN_ERR_NULL;
  }
  const attn_grads gr = *grads;
  /* The checks of attn_sdpa, so both calls fail alike. */
  attn__call c;
  const attn_status bad = attn__prepare(shape, options, &c);
  if (bad != ATTN_OK) return bad;
  if (!attn__fits(&c, 0)) return ATTN_ERR_OVERFLOW;
  const size_t need = attn_sdpa_backward_scratch_size_with(shape, options);
  if (need == 0) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < need) return ATTN_ERR_SCRATCH;
  /* out and lse are only read here; the head view's pointers are not const
   * because the forward writes through them. */
  c.q = q, c.k = k, c.v = v, c.out = (float*)out, c.lse = (float*)lse;

  const attn_options op = c.op;
  const size_t nq = c.n_q, dk = c.d_k, dv = c.d_v, group = c.group;
  const size_t k_pad = attn__round_up(c.n_k, ATTN__PAD);
  float* k_panels = scratch;                /* (k_pad / 8, d_k, 8) K in panels of 8 keys */
  float* v_key_panels = k_panels + dk * k_pad;  /* (k_pad / 8, d_v, 8) V in panels of 8 keys */
  float* lse_head = v_key_panels + dv * k_pad;  /* (n_q) this head's lse, when not given */
  float* delta = lse_head + nq;             /* (n_q) dout_i . out_i */
  float* tile = delta + nq;                 /* attn__bwd_tile_floats(n_q, d_k, d_v) */
  float* dbias = op.bias != NULL ? gr.dbias : NULL;
  float* dsinks = op.sinks != NULL ? gr.dsinks : NULL;
  attn__rope_call rc;
  attn__rope_start(&c.op, c.n_q, c.n_k, c.d_k, c.group, 1, 0, scratch + attn_sdpa_backward_scratch_size(shape), &rc);
  if (dsinks != NULL) {
    for (size_t h = 0; h < c.heads; h++) dsinks[h] = 0.0f;
  }
  /* The kernels add into the gradients: they start at 0. */
  attn__zero_rows(gr.dq, c.qs, c.batch, c.heads, nq, dk);
  attn__zero_rows(gr.dk, c.ks, c.batch, c.kv_heads, c.n_k, dk);
  attn__zero_rows(gr.dv, c.vs, c.batch, c.kv_heads, c.n_k, dv);
  if (dbias != NULL) {
    const attn_strides bs = {op.bias_layout.batch_stride, op.bias_layout.head_stride, op.bias_layout.row_stride};
    attn__zero_rows(dbias, bs, c.batch, c.heads, nq, attn__bcast_cols(&op.bias_layout, c.n_k));
  }

  for (size_t b = 0; b < c.batch; b++) {
    attn__rope_batch(&c.op, c.n_q, &rc, b);
    for (size_t g = 0; g < c.kv_heads; g++) {
      attn__head first = attn__head_view(&c, b, g * group);
      if (first.n_k == 0) continue;  /* no key allowed anywhere: every gradient is 0 */
      attn__rope_keys(&rc, c.n_k, &first);
      if (rc.dk_rot != NULL) {
        for (size_t x = 0; x < c.n_k * dk; x++) rc.dk_rot[x] = 0.0f;
      }
      ATTN__KERNEL(pack_rows)(first.k, first.k_stride, first.n_k, dk, k_panels);
      ATTN__KERNEL(pack_rows)(first.v, first.v_stride, first.n_k, dv, v_key_panels);
      /* The query heads that share this kv head add into its dk and dv. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        attn__bwd_args args = {
            .head = attn__head_view(&c, b, h), .k_panels = k_panels, .v_key_panels = v_key_panels,
            .dout = dout + attn__at(c.os, b, h), .delta = delta,
            .dq = gr.dq + attn__at(c.qs, b, h), .dk = gr.dk + attn__at(c.ks, b, g),
            .dv = gr.dv + attn__at(c.vs, b, g),
            .dbias = dbias != NULL ? dbias + attn__bcast_at(&op.bias_layout, b, h) : NULL,
            .scratch = tile,
        };
        attn__rope_view(&rc, &args.head, 0);
        if (rc.dq_rot != NULL) {  /* the kernels add into gradients of the turned rows */
          for (size_t x = 0; x < nq * dk; x++) rc.dq_rot[x] = 0.0f;
          args.dq = rc.dq_rot;
        }
        if (rc.dk_rot != NULL) args.dk = rc.dk_rot;
        /* With ALiBi the kernels' logits are relative to each row's
         * reference key (keys.h): the row's lse is recomputed in that frame
         * rather than read back from a given one that holds the row's
         * constant, which far from the keys keeps few of lse's bits. */
        const int given = args.head.lse != NULL && args.head.alibi == 0.0f;
        if (!given) args.head.lse = lse_head;
        attn__backward_rows_kernel(&args, given ? NULL : lse_head);
        attn__backward_kernel(&args);
        if (dsinks != NULL) dsinks[h] = dsinks[h] + attn__dsink(&args);
        if (rc.dq_rot != NULL) {
          ATTN__KERNEL(rope)(rc.dq_rot, dk, nq, dk, rc.q_table, rc.dims, rc.flags | ATTN__ROPE_INVERSE,
                             gr.dq + attn__at(c.qs, b, h), c.qs.row_stride);
        }
      }
      if (rc.dk_rot != NULL) {
        ATTN__KERNEL(rope)(rc.dk_rot, dk, c.n_k, dk, rc.k_table, rc.dims, rc.flags | ATTN__ROPE_INVERSE,
                           gr.dk + attn__at(c.ks, b, g), c.ks.row_stride);
      }
    }
  }
  return ATTN_OK;
}
