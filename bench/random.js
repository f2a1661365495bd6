// random.js - the benchmarks' inputs: xorshift32 draws in [-1, 1), the same
// for every run of a seed, cheap enough for tens of millions of values.
export function random(n, seed) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = ((s >>> 0) / 4294967296 - 0.5) * 2;
  }
  return out;
}
