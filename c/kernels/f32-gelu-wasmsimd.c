/* f32-gelu-wasmsimd.c - GELU and its gradient on four lanes: the
 * operations of f32-gelu.h in the same order, exp from f32-exp-wasmsimd.h
 * (the same bits as the scalar exp in the SIMD128 build; fused in the
 * relaxed one). The last n mod 4 values go through a padded vector, so
 * every value takes the same path. */
#include <assert.h>
#include <wasm_simd128.h>

#include "f32-exp-wasmsimd.h"
#include "f32-gelu.h"
#include "kernels.h"

static inline v128_t attn__gelu_phi_wasmsimd(v128_t vx, v128_t* vpdf) {
  const v128_t va = wasm_f32x4_pmin(wasm_f32x4_splat(ATTN__GELU_CLAMP), wasm_f32x4_abs(vx));
  const v128_t vh = wasm_v128_and(va, wasm_i32x4_splat((int32_t)0xfffff000u));
  const v128_t vl = wasm_f32x4_sub(va, vh);
  const v128_t vhalf = wasm_f32x4_splat(0.5f);
  const v128_t vq = wasm_f32x4_mul(wasm_f32x4_mul(vh, vh), vhalf);
  const v128_t vrest = wasm_f32x4_add(wasm_f32x4_mul(vh, vl), wasm_f32x4_mul(wasm_f32x4_mul(vl, vl), vhalf));
  const v128_t vz = wasm_f32x4_mul(va, wasm_f32x4_splat(ATTN__SQRT1_2));
  const v128_t vone = wasm_f32x4_splat(1.0f);
  const v128_t vt = wasm_f32x4_div(vone, wasm_f32x4_add(vone, wasm_f32x4_mul(vz, vhalf)));
  v128_t vp = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(ATTN__ERFC_P9), vt), wasm_f32x4_splat(ATTN__ERFC_P8));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P7));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P6));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P5));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P4));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P3));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P2));
  vp = wasm_f32x4_add(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_P1));
  const v128_t ve1 = attn__expf_nonpos_wasmsimd(wasm_f32x4_neg(vq));
  const v128_t varg = wasm_f32x4_sub(wasm_f32x4_sub(wasm_f32x4_mul(vp, vt), wasm_f32x4_splat(ATTN__ERFC_K)), vrest);
  const v128_t ve2 = attn__expf_nonpos_wasmsimd(varg);
  const v128_t vtail = wasm_f32x4_mul(wasm_f32x4_mul(vt, vhalf), wasm_f32x4_mul(ve1, ve2));
  if (vpdf != NULL) {
    *vpdf = wasm_f32x4_mul(wasm_f32x4_mul(ve1, attn__expf_nonpos_wasmsimd(wasm_f32x4_neg(vrest))),
                           wasm_f32x4_splat(ATTN__INV_SQRT_2PI));
  }
  return wasm_v128_bitselect(vtail, wasm_f32x4_sub(vone, vtail), wasm_f32x4_lt(vx, wasm_f32x4_splat(0.0f)));
}

static inline v128_t attn__gelu_sigma_wasmsimd(v128_t vx, v128_t* vslope) {
  const v128_t vx3 = wasm_f32x4_mul(wasm_f32x4_mul(vx, vx), vx);
  const v128_t vu = wasm_f32x4_mul(wasm_f32x4_splat(ATTN__GELU_C),
                                   wasm_f32x4_add(vx, wasm_f32x4_mul(wasm_f32x4_splat(ATTN__GELU_A), vx3)));
  const v128_t ve = attn__expf_nonpos_wasmsimd(wasm_f32x4_mul(wasm_f32x4_abs(vu), wasm_f32x4_splat(-2.0f)));
  const v128_t vone = wasm_f32x4_splat(1.0f);
  const v128_t vinv = wasm_f32x4_div(vone, wasm_f32x4_add(vone, ve));
  const v128_t vei = wasm_f32x4_mul(ve, vinv);
  *vslope = wasm_f32x4_mul(vei, vinv);
  return wasm_v128_bitselect(vinv, vei, wasm_f32x4_ge(vu, wasm_f32x4_splat(0.0f)));
}

static inline v128_t attn__gelu_wasmsimd(v128_t vx, int approximate) {
  v128_t unused;
  return wasm_f32x4_mul(vx, approximate ? attn__gelu_sigma_wasmsimd(vx, &unused) : attn__gelu_phi_wasmsimd(vx, NULL));
}

static inline v128_t attn__gelu_grad_wasmsimd(v128_t vx, int approximate) {
  if (approximate) {
    v128_t vslope;
    const v128_t vsg = attn__gelu_sigma_wasmsimd(vx, &vslope);
    const v128_t vx2 = wasm_f32x4_pmin(wasm_f32x4_splat(ATTN__GELU_CLAMP * ATTN__GELU_CLAMP), wasm_f32x4_mul(vx, vx));
    const v128_t vk = wasm_f32x4_mul(wasm_f32x4_splat(ATTN__GELU_2C),
                                     wasm_f32x4_add(wasm_f32x4_splat(1.0f), wasm_f32x4_mul(wasm_f32x4_splat(ATTN__GELU_3A), vx2)));
    return wasm_f32x4_add(vsg, wasm_f32x4_mul(vx, wasm_f32x4_mul(vslope, vk)));
  }
  v128_t vpdf;
  const v128_t vphi = attn__gelu_phi_wasmsimd(vx, &vpdf);
  return wasm_f32x4_add(vphi, wasm_f32x4_mul(vx, vpdf));
}

void attn__f32_gelu_wasmsimd(size_t n, const float* x, int approximate, float* y) {
  assert(x != NULL && y != NULL);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) wasm_v128_store(y + j, attn__gelu_wasmsimd(wasm_v128_load(x + j), approximate));
  if (j < n) {
    float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t i = j; i < n; i++) buf[i - j] = x[i];
    wasm_v128_store(buf, attn__gelu_wasmsimd(wasm_v128_load(buf), approximate));
    for (size_t i = j; i < n; i++) y[i] = buf[i - j];
  }
}

void attn__f32_gelu_backward_wasmsimd(size_t n, const float* x, const float* dy, int approximate, float* dx) {
  assert(x != NULL && dy != NULL && dx != NULL);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    wasm_v128_store(dx + j, wasm_f32x4_mul(wasm_v128_load(dy + j), attn__gelu_grad_wasmsimd(wasm_v128_load(x + j), approximate)));
  }
  if (j < n) {
    float bx[4] = {0.0f, 0.0f, 0.0f, 0.0f}, bd[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t i = j; i < n; i++) bx[i - j] = x[i], bd[i - j] = dy[i];
    wasm_v128_store(bx, wasm_f32x4_mul(wasm_v128_load(bd), attn__gelu_grad_wasmsimd(wasm_v128_load(bx), approximate)));
    for (size_t i = j; i < n; i++) dx[i] = bx[i - j];
  }
}
