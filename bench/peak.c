/* peak.c - the SIMD128 peak probe of the benchmark: f32x4 mul + add on 12
 * independent accumulators (acc = acc * m + a), so neither latency nor memory
 * limits it. Returns a lane sum so nothing is optimised away.
 * FLOPs per call: iterations * 12 accumulators * 4 lanes * 2. */
#include <stdint.h>
#include <wasm_simd128.h>

float peak_run(int32_t iterations, float m, float a) {
  const v128_t vm = wasm_f32x4_splat(m), va = wasm_f32x4_splat(a);
  v128_t v0 = wasm_f32x4_make(0.1f, 0.2f, 0.3f, 0.4f);
  v128_t v1 = wasm_f32x4_add(v0, va), v2 = wasm_f32x4_add(v1, va), v3 = wasm_f32x4_add(v2, va);
  v128_t v4 = wasm_f32x4_add(v3, va), v5 = wasm_f32x4_add(v4, va), v6 = wasm_f32x4_add(v5, va);
  v128_t v7 = wasm_f32x4_add(v6, va), v8 = wasm_f32x4_add(v7, va), v9 = wasm_f32x4_add(v8, va);
  v128_t v10 = wasm_f32x4_add(v9, va), v11 = wasm_f32x4_add(v10, va);
  for (int32_t i = 0; i < iterations; i++) {
    v0 = wasm_f32x4_add(wasm_f32x4_mul(v0, vm), va);
    v1 = wasm_f32x4_add(wasm_f32x4_mul(v1, vm), va);
    v2 = wasm_f32x4_add(wasm_f32x4_mul(v2, vm), va);
    v3 = wasm_f32x4_add(wasm_f32x4_mul(v3, vm), va);
    v4 = wasm_f32x4_add(wasm_f32x4_mul(v4, vm), va);
    v5 = wasm_f32x4_add(wasm_f32x4_mul(v5, vm), va);
    v6 = wasm_f32x4_add(wasm_f32x4_mul(v6, vm), va);
    v7 = wasm_f32x4_add(wasm_f32x4_mul(v7, vm), va);
    v8 = wasm_f32x4_add(wasm_f32x4_mul(v8, vm), va);
    v9 = wasm_f32x4_add(wasm_f32x4_mul(v9, vm), va);
    v10 = wasm_f32x4_add(wasm_f32x4_mul(v10, vm), va);
    v11 = wasm_f32x4_add(wasm_f32x4_mul(v11, vm), va);
  }
  v0 = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(v0, v1), wasm_f32x4_add(v2, v3)),
                      wasm_f32x4_add(wasm_f32x4_add(v4, v5), wasm_f32x4_add(v6, v7)));
  v0 = wasm_f32x4_add(v0, wasm_f32x4_add(wasm_f32x4_add(v8, v9), wasm_f32x4_add(v10, v11)));
  return wasm_f32x4_extract_lane(v0, 0) + wasm_f32x4_extract_lane(v0, 1) +
         wasm_f32x4_extract_lane(v0, 2) + wasm_f32x4_extract_lane(v0, 3);
}
