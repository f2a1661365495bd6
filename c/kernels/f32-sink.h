/* f32-sink.h - a head's sink logit joined to a finished row's softmax,
 * the same in every kernel that finishes rows (private). */
#ifndef ATTN_KERNELS_F32_SINK_H
#define ATTN_KERNELS_F32_SINK_H

#include <math.h>

#include "f32-exp.h"

/* Joins the head's sink logit to a finished row's softmax (GPT-OSS's
 * sinks, ONNX GroupQueryAttention's head_sink): m and l, the max and the
 * sum of exp(z - m) over the row's allowed keys, become the max and sum
 * over those logits and the sink. Returns the factor (at most 1) by which
 * the row's sum of exp(z_j - m) v_j must be multiplied before it is
 * divided by the new l: 1 when the max stays, exp(m - sink) when the sink
 * raises it, 0 for a row with no allowed key (l = 0), which then gives
 * output 0 and lse = sink. Without a sink (-Infinity) nothing changes. */
static inline float attn__sink_join(float sink, float* m, float* l) {
  if (sink == -INFINITY) return 1.0f;
  if (*l != 0.0f && *m >= sink) {
    *l = *l + attn__expf_nonpos(sink - *m);
    return 1.0f;
  }
  const float alpha = *l == 0.0f ? 0.0f : attn__expf_nonpos(*m - sink);
  *l = *l * alpha + 1.0f;
  *m = sink;
  return alpha;
}

#endif /* ATTN_KERNELS_F32_SINK_H */
