/* attention.c - the public entry points: check arguments, pick a kernel,
 * return a status. No intrinsics here; the manual is attention.h. */
#include "attention.h"

#include <math.h>
#include <stddef.h>

#include "kernels/kernels.h"

const char* attn_status_string(int32_t status) {
  switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "a required buffer is missing (NULL pointer)";
    case ATTN_ERR_SHAPE: return "a size is not a positive integer in range";
    case ATTN_ERR_HEADS: return "heads must be a multiple of kv_heads";
    case ATTN_ERR_SCALE: return "scale must be a finite number";
    case ATTN_ERR_FLAGS: return "unknown flag bits";
    case ATTN_ERR_SCRATCH: return "scratch buffer missing or too small";
    case ATTN_ERR_OVERFLOW: return "the sizes are too large for this address space";
    case ATTN_ERR_STEPS: return "scores, scaled and weights must be given together (logits only with them)";
    case ATTN_ERR_SOFTCAP: return "softcap must be 0 (none) or a finite positive number";
    case ATTN_ERR_WINDOW: return "window sides must be -1 (unbounded) or at least 0";
    case ATTN_ERR_LENGTHS: return "kv_lengths entries must be in [0, n_k]";
    case ATTN_ERR_MASK: return "mask and bias cols must be in [0, n_k]";
    default: return "unknown status";
  }
}

int32_t attn_simd_enabled(void) {
#ifdef __wasm_simd128__
  return 1;
#else
  return 0;
#endif
}

float attn_default_scale(int32_t d_k) {
  if (d_k < 1) return 0.0f;
  return (float)(1.0 / sqrt((double)d_k));
}

/* *out = a * b, false on size_t overflow. The builtin (gcc and clang) checks
 * the carry of one multiply; a division-based check cost more than the whole
 * attention of a few tokens. */
static int attn__mul(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* Element counts must also fit in bytes of float. */
static int attn__count(size_t a, size_t b, size_t c, size_t d, size_t* out) {
  size_t x;
  return attn__mul(a, b, &x) && attn__mul(x, c, &x) && attn__mul(x, d, &x) &&
         attn__mul(x, sizeof(float), out) && ((*out = x), 1);
}

/* The struct layout web/attention.js writes by offset (4 bytes a field). */
#if defined(__wasm32__)
_Static_assert(sizeof(attn_shape) == 76 && offsetof(attn_shape, q) == 28 && offsetof(attn_shape, out) == 64,
               "attn_shape layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_options) == 72 && offsetof(attn_options, bias) == 28 &&
                   offsetof(attn_options, softcap) == 48 && offsetof(attn_options, kv_lengths) == 68,
               "attn_options layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_steps) == 20, "attn_steps layout is fixed for web/attention.js");
_Static_assert(sizeof(attn_grads) == 16, "attn_grads layout is fixed for web/attention.js");
#endif

/* The scratch of attn_sdpa, as float offsets from its start:
 *   kp    (d_k, n_k rounded up to 8)     packed K panels (fused) or K^T (step path);
 *   vp    (d_v rounded up to 8, n_k)     V in panels of 8 columns (fused);
 *   tile  attn__flash_tile_floats        the fused kernel's tiles;
 *   rows  (heads / kv_heads) x (n_k rounded up to 4, + 2)
 *                                        grouped-query decoding: a row of logits,
 *                                        a sum and a max per head of a kv head.
 * The decode kernel of single heads (two rows of logits) uses kp and vp.
 * 0 when the sizes are invalid or the count overflows. */
typedef struct attn__scratch {
  size_t kp, vp, tile, rows, total;
} attn__scratch;

static int attn__scratch_layout(const attn_shape* shape, attn__scratch* at) {
  const int32_t n_k = shape->n_k, d_k = shape->d_k, d_v = shape->d_v;
  if (shape->n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) return 0;
  size_t kp, vp, rows = 0;
  if (!attn__count((size_t)d_k, attn__round_up((size_t)n_k, ATTN__PAD), 1, 1, &kp)) return 0;
  if (!attn__count((size_t)n_k, attn__round_up((size_t)d_v, ATTN__PAD), 1, 1, &vp)) return 0;
  const size_t tile = attn__flash_tile_floats((size_t)d_k, (size_t)d_v);
  if (shape->heads > 0 && shape->kv_heads > 0 && shape->heads % shape->kv_heads == 0 &&
      !attn__count((size_t)(shape->heads / shape->kv_heads), attn__round_up((size_t)n_k, 4) + 2, 1, 1, &rows)) {
    return 0;
  }
  at->kp = 0;
  at->vp = kp;
  if (__builtin_add_overflow(at->vp, vp, &at->tile) || __builtin_add_overflow(at->tile, tile, &at->rows) ||
      __builtin_add_overflow(at->rows, rows, &at->total) || at->total > SIZE_MAX / sizeof(float)) {
    return 0;
  }
  return 1;
}

size_t attn_sdpa_scratch_size(const attn_shape* shape) {
  attn__scratch at;
  return shape != NULL && attn__scratch_layout(shape, &at) ? at.total : 0;
}

/* Which kernel takes the output path. The decode kernel reads K and V
 * unpacked, one query row at a time; the fused kernel packs them and works
 * on 4 rows at once, faster from 64 x 64 x 64 up. Decode wins where packing
 * and a tile's setup do not pay for themselves (measured side by side, see
 * bench/RESULTS.md): fewer than 4 query rows, and tiny problems,
 * n_q n_k d_k <= 2048. */
static int attn__use_decode(size_t n_q, size_t n_k, size_t d_k) {
  /* n_q n_k d_k <= 2048, without a product that could wrap (size_t is 32 bits). */
  const int tiny = n_k <= 2048 && d_k <= 2048 / n_k && n_q <= 2048 / (n_k * d_k);
  return n_q < ATTN__MR || tiny;
}

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

/* The last element index a tensor touches, checked for overflow. */
static int attn__span(attn_strides s, size_t batch, size_t heads, size_t n, size_t d) {
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

/* The checks of a shape and options that attn_sdpa and attn_sdpa_backward
 * share, in one order so both calls fail with the same status: ATTN_OK or
 * the first failure. */
static attn_status attn__check_call(const attn_shape* shape, const attn_options* options) {
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
  return ATTN_OK;
}

/* The strides of q, k, v and out for a checked shape, and the count of
 * (batch, heads, n_q, n_k) elements: false when a tensor's span or the count
 * overflows size_t (ATTN_ERR_OVERFLOW for attn_sdpa and attn_sdpa_backward). */
static int attn__tensors(const attn_shape* sh, attn_strides* qs, attn_strides* ks, attn_strides* vs,
                         attn_strides* os, size_t* count) {
  const size_t batch = (size_t)sh->batch, heads = (size_t)sh->heads, kv_heads = (size_t)sh->kv_heads;
  const size_t nq = (size_t)sh->n_q, nk = (size_t)sh->n_k, dk = (size_t)sh->d_k, dv = (size_t)sh->d_v;
  *qs = attn__strides(sh->q, heads, nq, dk), *ks = attn__strides(sh->k, kv_heads, nk, dk);
  *vs = attn__strides(sh->v, kv_heads, nk, dv), *os = attn__strides(sh->out, heads, nq, dv);
  return attn__span(*qs, batch, heads, nq, dk) && attn__span(*ks, batch, kv_heads, nk, dk) &&
         attn__span(*vs, batch, kv_heads, nk, dv) && attn__span(*os, batch, heads, nq, dv) &&
         attn__count(batch, heads, nq, nk, count);
}

attn_status attn_sdpa(const attn_shape* shape, const float* q, const float* k, const float* v,
                      float* out, const attn_options* options, const attn_steps* steps,
                      float* scratch, size_t scratch_floats) {
  if (shape == NULL || options == NULL || q == NULL || k == NULL || v == NULL || out == NULL) {
    return ATTN_ERR_NULL;
  }
  const attn_shape sh = *shape;
  const attn_options op = *options;
  const attn_status bad = attn__check_call(&sh, &op);
  if (bad != ATTN_OK) return bad;
  const int window = (op.flags & ATTN_WINDOW) != 0;
  const attn_steps st = steps != NULL ? *steps : (attn_steps){0};
  const int with_steps = st.scores != NULL;
  if ((st.scaled != NULL) != with_steps || (st.weights != NULL) != with_steps ||
      (st.logits != NULL && !with_steps)) {
    return ATTN_ERR_STEPS;
  }
  const size_t batch = (size_t)sh.batch, heads = (size_t)sh.heads, kv_heads = (size_t)sh.kv_heads;
  const size_t nq = (size_t)sh.n_q, nk = (size_t)sh.n_k, dk = (size_t)sh.d_k, dv = (size_t)sh.d_v;
  attn_strides qs, ks, vs, os;
  size_t count;
  if (!attn__tensors(&sh, &qs, &ks, &vs, &os, &count)) return ATTN_ERR_OVERFLOW;
  attn__scratch at;
  if (!attn__scratch_layout(&sh, &at)) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < at.total) return ATTN_ERR_SCRATCH;

  const size_t group = heads / kv_heads;  /* query heads per kv head */
  const size_t v_stride = attn__round_up(dv, ATTN__PAD);
  float* kp = scratch + at.kp;            /* (d_k, n_k rounded up to 8) K panels or K^T */
  float* vp = scratch + at.vp;            /* (v_stride / 8, n_k, 8) V panels */
  float* tile = scratch + at.tile;        /* attn__flash_tile_floats(d_k, d_v) */
  float* group_rows = scratch + at.rows;  /* decode scratch of a group's heads */
  const int decode = !with_steps && attn__use_decode(nq, nk, dk);
  /* Keys past the mask's or bias's last column are not allowed. */
  size_t cols = nk;
  if (op.mask != NULL && attn__bcast_cols(&op.mask_layout, nk) < cols) cols = attn__bcast_cols(&op.mask_layout, nk);
  if (op.bias != NULL && attn__bcast_cols(&op.bias_layout, nk) < cols) cols = attn__bcast_cols(&op.bias_layout, nk);

  for (size_t b = 0; b < batch; b++) {
    size_t n_keys = cols;  /* keys that exist for this batch entry */
    if (op.kv_lengths != NULL && (size_t)op.kv_lengths[b] < n_keys) n_keys = (size_t)op.kv_lengths[b];
    attn__rows rows = {
        .n_q = nq, .n_k = n_keys, .d_k = dk, .d_v = dv,
        .scale = op.scale, .softcap = op.softcap,
        .offset = op.query_offsets != NULL ? op.query_offsets[b] : op.query_offset,
        .window_left = window ? op.window_left : -1, .window_right = window ? op.window_right : -1,
        .causal = (op.flags & ATTN_CAUSAL) != 0,
    };
    for (size_t g = 0; g < kv_heads; g++) {
      const float* k_head = k + b * ks.batch_stride + g * ks.head_stride;  /* (n_k, d_k) */
      const float* v_head = v + b * vs.batch_stride + g * vs.head_stride;  /* (n_k, d_v) */
      if (!with_steps && !decode && n_keys > 0) {
        ATTN__KERNEL(pack_k)(k_head, ks.row_stride, n_keys, dk, kp);
        ATTN__KERNEL(pack_v)(v_head, vs.row_stride, n_keys, dv, vp);
      }
      if (decode && nq == 1 && group > 1) {
        /* Grouped-query decoding: with one query row per head, the decode
         * kernel takes the group's heads as the rows of one call that reads
         * this K and V from memory once for all of them. */
        const size_t h0 = g * group;  /* the group's first query head */
        attn__decode_args args = {
            .rows = rows, .k = k_head, .v = v_head, .k_stride = ks.row_stride,
            .v_stride = vs.row_stride, .scratch = group > 2 ? group_rows : kp, .one_query = 1,
        };
        args.rows.n_q = group;
        args.rows.q = q + b * qs.batch_stride + h0 * qs.head_stride;
        args.rows.q_stride = qs.head_stride;
        args.rows.out = out + b * os.batch_stride + h0 * os.head_stride;
        args.rows.out_stride = os.head_stride;
        if (op.mask != NULL) {
          args.rows.mask = op.mask + b * op.mask_layout.batch_stride + h0 * op.mask_layout.head_stride;
          args.rows.mask_stride = op.mask_layout.head_stride;
        }
        if (op.bias != NULL) {
          args.rows.bias = op.bias + b * op.bias_layout.batch_stride + h0 * op.bias_layout.head_stride;
          args.rows.bias_stride = op.bias_layout.head_stride;
        }
        if (st.lse != NULL) args.rows.lse = st.lse + b * heads + h0;
        attn__decode_kernel(&args);
        continue;
      }
      /* The query heads that share this kv head reuse the packed K and V. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        attn__rows hr = rows;
        hr.q = q + b * qs.batch_stride + h * qs.head_stride;  /* (n_q, d_k) */
        hr.q_stride = qs.row_stride;
        hr.out = out + b * os.batch_stride + h * os.head_stride;  /* (n_q, d_v) */
        hr.out_stride = os.row_stride;
        if (op.mask != NULL) {
          hr.mask = op.mask + b * op.mask_layout.batch_stride + h * op.mask_layout.head_stride;
          hr.mask_stride = op.mask_layout.row_stride;
        }
        if (op.bias != NULL) {
          hr.bias = op.bias + b * op.bias_layout.batch_stride + h * op.bias_layout.head_stride;
          hr.bias_stride = op.bias_layout.row_stride;
        }
        const size_t qh = b * heads + h;  /* index of this query head */
        if (st.lse != NULL) hr.lse = st.lse + qh * nq;
        if (with_steps) {
          const size_t off = qh * nq * nk;  /* (n_q, n_k) step matrices */
          const attn__steps_args args = {
              .rows = hr, .k = k_head, .v = v_head, .k_stride = ks.row_stride, .v_stride = vs.row_stride,
              .n_cols = nk, .kt = kp, .scores = st.scores + off, .scaled = st.scaled + off,
              .logits = st.logits != NULL ? st.logits + off : NULL, .weights = st.weights + off,
          };
          ATTN__KERNEL(steps)(&args);
        } else if (decode) {
          const attn__decode_args args = {
              .rows = hr, .k = k_head, .v = v_head, .k_stride = ks.row_stride,
              .v_stride = vs.row_stride, .scratch = kp,
          };
          attn__decode_kernel(&args);
        } else {
          const attn__flash_args args = {.rows = hr, .kp = kp, .vp = vp, .v_stride = v_stride, .tile = tile};
          attn__flash_kernel(&args);
        }
      }
    }
  }
  return ATTN_OK;
}

attn_status attn_matmul(const float* a, const float* b, float* c, int32_t m, int32_t k,
                        int32_t n) {
  if (a == NULL || b == NULL || c == NULL) return ATTN_ERR_NULL;
  if (m < 1 || k < 1 || n < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)m, (size_t)k, 1, 1, &count) ||
      !attn__count((size_t)k, (size_t)n, 1, 1, &count) ||
      !attn__count((size_t)m, (size_t)n, 1, 1, &count)) {
    return ATTN_ERR_OVERFLOW;
  }
  ATTN__KERNEL(gemm)((size_t)m, (size_t)n, (size_t)k, a, (size_t)k, b, (size_t)n, c, (size_t)n);
  return ATTN_OK;
}

attn_status attn_softmax(const float* x, float* y, int32_t rows, int32_t cols) {
  if (x == NULL || y == NULL) return ATTN_ERR_NULL;
  if (rows < 1 || cols < 1) return ATTN_ERR_SHAPE;
  size_t count;
  if (!attn__count((size_t)rows, (size_t)cols, 1, 1, &count)) return ATTN_ERR_OVERFLOW;
  for (size_t i = 0; i < (size_t)rows; i++) {
    ATTN__KERNEL(softmax)((size_t)cols, x + i * (size_t)cols, y + i * (size_t)cols);
  }
  return ATTN_OK;
}

size_t attn_sdpa_backward_scratch_size(const attn_shape* shape) {
  if (shape == NULL) return 0;
  const int32_t n_q = shape->n_q, n_k = shape->n_k, d_k = shape->d_k, d_v = shape->d_v;
  if (n_q < 1 || n_k < 1 || d_k < 1 || d_v < 1) return 0;
  /* (d_k + d_v, n_k rounded up to 8) packed K and V, 2 n_q of lse and
   * delta, and the kernels' per-head space (at most 2 (n_q + 8) (d_k + d_v)
   * plus fixed tiles, checked here against overflow first). */
  size_t kv, rows;
  if (!attn__count((size_t)d_k + (size_t)d_v, attn__round_up((size_t)n_k, ATTN__PAD), 1, 1, &kv)) return 0;
  if (!attn__count((size_t)n_q + ATTN__PAD, (size_t)d_k + (size_t)d_v, 4, 1, &rows)) return 0;
  const size_t parts[] = {kv, 2 * (size_t)n_q,
                          attn__bwd_tile_floats((size_t)n_q, (size_t)d_k, (size_t)d_v)};
  size_t total = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (total + parts[i] < total || total + parts[i] > SIZE_MAX / sizeof(float)) return 0;
    total += parts[i];
  }
  return total;
}

/* Zeroes d elements of each (b, h, i) row of a strided tensor. */
/* The backward kernels, called through pointers read as volatile for the
 * reason the output kernels are (kernels.h): not inlined into the entry. */
static void (*volatile attn__backward_rows_kernel)(const attn__bwd_args*, const float*, size_t, float*,
                                                    float*) = ATTN__KERNEL(backward_rows);
static void (*volatile attn__backward_kernel)(const attn__bwd_args*) = ATTN__KERNEL(backward);

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
  const attn_shape sh = *shape;
  const attn_options op = *options;
  const attn_grads gr = *grads;
  /* The checks of attn_sdpa, so both calls fail alike. */
  const attn_status bad = attn__check_call(&sh, &op);
  if (bad != ATTN_OK) return bad;
  const int window = (op.flags & ATTN_WINDOW) != 0;
  const size_t batch = (size_t)sh.batch, heads = (size_t)sh.heads, kv_heads = (size_t)sh.kv_heads;
  const size_t nq = (size_t)sh.n_q, nk = (size_t)sh.n_k, dk = (size_t)sh.d_k, dv = (size_t)sh.d_v;
  attn_strides qs, ks, vs, os;
  size_t count;
  if (!attn__tensors(&sh, &qs, &ks, &vs, &os, &count)) return ATTN_ERR_OVERFLOW;
  const size_t need = attn_sdpa_backward_scratch_size(&sh);
  if (need == 0) return ATTN_ERR_OVERFLOW;
  if (scratch == NULL || scratch_floats < need) return ATTN_ERR_SCRATCH;

  const size_t group = heads / kv_heads;  /* query heads per kv head */
  const size_t k_pad = attn__round_up(nk, ATTN__PAD);
  float* kp = scratch;                 /* (k_pad / 8, d_k, 8) K panels */
  float* vp = kp + dk * k_pad;         /* (k_pad / 8, d_v, 8) V panels */
  float* lse_head = vp + dv * k_pad;   /* (n_q) this head's lse, when not given */
  float* delta = lse_head + nq;        /* (n_q) dout_i . out_i */
  float* tile = delta + nq;            /* attn__bwd_tile_floats(n_q, d_k, d_v) */
  float* dbias = op.bias != NULL ? gr.dbias : NULL;
  const size_t bias_cols = op.bias != NULL ? attn__bcast_cols(&op.bias_layout, nk) : 0;
  /* The kernels add into the gradients: they start at 0. */
  attn__zero_rows(gr.dq, qs, batch, heads, nq, dk);
  attn__zero_rows(gr.dk, ks, batch, kv_heads, nk, dk);
  attn__zero_rows(gr.dv, vs, batch, kv_heads, nk, dv);
  if (dbias != NULL) {
    const attn_strides bs = {op.bias_layout.batch_stride, op.bias_layout.head_stride, op.bias_layout.row_stride};
    attn__zero_rows(dbias, bs, batch, heads, nq, bias_cols);
  }
  /* Keys past the mask's or bias's last column are not allowed. */
  size_t cols = nk;
  if (op.mask != NULL && attn__bcast_cols(&op.mask_layout, nk) < cols) cols = attn__bcast_cols(&op.mask_layout, nk);
  if (op.bias != NULL && bias_cols < cols) cols = bias_cols;

  for (size_t b = 0; b < batch; b++) {
    size_t n_keys = cols;  /* keys that exist for this batch entry */
    if (op.kv_lengths != NULL && (size_t)op.kv_lengths[b] < n_keys) n_keys = (size_t)op.kv_lengths[b];
    if (n_keys == 0) continue;  /* no key allowed anywhere: every gradient is 0 */
    for (size_t g = 0; g < kv_heads; g++) {
      const float* k_head = k + b * ks.batch_stride + g * ks.head_stride;  /* (n_k, d_k) */
      const float* v_head = v + b * vs.batch_stride + g * vs.head_stride;  /* (n_k, d_v) */
      ATTN__KERNEL(pack_k)(k_head, ks.row_stride, n_keys, dk, kp);
      ATTN__KERNEL(pack_k)(v_head, vs.row_stride, n_keys, dv, vp);
      /* The query heads that share this kv head add into its dk and dv. */
      for (size_t h = g * group; h < (g + 1) * group; h++) {
        const size_t qh = b * heads + h;  /* index of this query head */
        attn__bwd_args args = {
            .q = q + b * qs.batch_stride + h * qs.head_stride, .k = k_head, .kp = kp, .vp = vp,
            .dout = dout + b * os.batch_stride + h * os.head_stride,
            .lse = lse != NULL ? lse + qh * nq : lse_head, .delta = delta,
            .dq = gr.dq + b * qs.batch_stride + h * qs.head_stride,
            .dk = gr.dk + b * ks.batch_stride + g * ks.head_stride,
            .dv = gr.dv + b * vs.batch_stride + g * vs.head_stride,
            .scratch = tile,
            .q_stride = qs.row_stride, .k_stride = ks.row_stride, .dout_stride = os.row_stride,
            .dq_stride = qs.row_stride, .dk_stride = ks.row_stride, .dv_stride = vs.row_stride,
            .n_q = nq, .n_k = n_keys, .d_k = dk, .d_v = dv,
            .scale = op.scale, .softcap = op.softcap, .causal = (op.flags & ATTN_CAUSAL) != 0,
            .offset = op.query_offsets != NULL ? op.query_offsets[b] : op.query_offset,
            .window_left = window ? op.window_left : -1, .window_right = window ? op.window_right : -1,
        };
        if (op.mask != NULL) {
          args.mask = op.mask + b * op.mask_layout.batch_stride + h * op.mask_layout.head_stride;
          args.mask_stride = op.mask_layout.row_stride;
        }
        if (op.bias != NULL) {
          const size_t at = b * op.bias_layout.batch_stride + h * op.bias_layout.head_stride;
          args.bias = op.bias + at;
          args.bias_stride = op.bias_layout.row_stride;
          if (dbias != NULL) args.dbias = dbias + at;
        }
        const float* out_head = out != NULL ? out + b * os.batch_stride + h * os.head_stride : NULL;
        attn__backward_rows_kernel(&args, out_head, os.row_stride, lse != NULL ? NULL : lse_head, delta);
        attn__backward_kernel(&args);
      }
    }
  }
  return ATTN_OK;
}
