/* peak.c - the peak probes of the benchmark: a multiply-add on 12
 * independent accumulators (acc = acc * m + a), so neither latency nor memory
 * limits it. Returns a lane sum so nothing is optimised away.
 * FLOPs per call: iterations * 12 accumulators * 4 lanes * 2.
 * The multiply-add is the kernels' own (c/kernels/f32-madd-wasmsimd.h):
 * built with -msimd128 it is f32x4 mul then add (the SIMD128 probe), with
 * -mrelaxed-simd one f32x4.relaxed_madd (the relaxed probe).
 * tile_run is the kernels' 4 x 8 register tile alone (f32-tile-wasmsimd.h),
 * what the fused kernel spends most of its time in, over one panel that
 * stays in L1: how close the tile itself comes to the probe on this CPU. */
#include <stdint.h>
#include <wasm_simd128.h>

#include "../c/kernels/f32-madd-wasmsimd.h"
#include "../c/kernels/f32-tile-wasmsimd.h"

float peak_run(int32_t iterations, float m, float a) {
  const v128_t vm = wasm_f32x4_splat(m), va = wasm_f32x4_splat(a);
  v128_t v0 = wasm_f32x4_make(0.1f, 0.2f, 0.3f, 0.4f);
  v128_t v1 = wasm_f32x4_add(v0, va), v2 = wasm_f32x4_add(v1, va), v3 = wasm_f32x4_add(v2, va);
  v128_t v4 = wasm_f32x4_add(v3, va), v5 = wasm_f32x4_add(v4, va), v6 = wasm_f32x4_add(v5, va);
  v128_t v7 = wasm_f32x4_add(v6, va), v8 = wasm_f32x4_add(v7, va), v9 = wasm_f32x4_add(v8, va);
  v128_t v10 = wasm_f32x4_add(v9, va), v11 = wasm_f32x4_add(v10, va);
  for (int32_t i = 0; i < iterations; i++) {
    v0 = attn__f32x4_madd(v0, vm, va);
    v1 = attn__f32x4_madd(v1, vm, va);
    v2 = attn__f32x4_madd(v2, vm, va);
    v3 = attn__f32x4_madd(v3, vm, va);
    v4 = attn__f32x4_madd(v4, vm, va);
    v5 = attn__f32x4_madd(v5, vm, va);
    v6 = attn__f32x4_madd(v6, vm, va);
    v7 = attn__f32x4_madd(v7, vm, va);
    v8 = attn__f32x4_madd(v8, vm, va);
    v9 = attn__f32x4_madd(v9, vm, va);
    v10 = attn__f32x4_madd(v10, vm, va);
    v11 = attn__f32x4_madd(v11, vm, va);
  }
  v0 = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(v0, v1), wasm_f32x4_add(v2, v3)),
                      wasm_f32x4_add(wasm_f32x4_add(v4, v5), wasm_f32x4_add(v6, v7)));
  v0 = wasm_f32x4_add(v0, wasm_f32x4_add(wasm_f32x4_add(v8, v9), wasm_f32x4_add(v10, v11)));
  return wasm_f32x4_extract_lane(v0, 0) + wasm_f32x4_extract_lane(v0, 1) +
         wasm_f32x4_extract_lane(v0, 2) + wasm_f32x4_extract_lane(v0, 3);
}

/* Room for the tile's panels: a (4 rows of n) and b (n rows of 8), n <= 256. */
static float tile_panels[4 * 256 + 256 * 8];

float* tile_buffer(void) { return tile_panels; }

/* reps tiles of n steps over the panels, each from the last one's sum
 * scaled down (so none is optimised away and the numbers stay finite).
 * FLOPs per call: reps * n * 4 * 8 * 2. */
float tile_run(int32_t reps, int32_t n) {
  const float* a = tile_panels;
  const float* b = tile_panels + 4 * 256;
  const size_t rows[4] = {0, 256, 512, 768};
  v128_t s = wasm_f32x4_splat(0.0f);
  for (int32_t r = 0; r < reps; r++) {
    const attn__tile4x8 t = attn__tile4x8_wasmsimd((size_t)n, a, rows, 1, b, 8);
    v128_t sum = s;
    for (int i = 0; i < 4; i++) sum = wasm_f32x4_add(sum, wasm_f32x4_add(t.acc[i][0], t.acc[i][1]));
    s = wasm_f32x4_mul(sum, wasm_f32x4_splat(1e-3f));
  }
  return wasm_f32x4_extract_lane(s, 0);
}
