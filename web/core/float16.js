// float16.js - IEEE 754 half precision to and from float32, for the
// float16 tensors sdpa takes (dtype: 'float16'). Engines with Float16Array
// convert natively; elsewhere the bits travel in a Uint16Array and are
// converted here. float32 to float16 rounds to nearest, ties to even;
// values past 65504 become Infinity, below 2^-25 become (signed) zero.

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** The float16 bits nearest to x (as a float32 first). */
export function halfBits(x) {
  scratch[0] = x;
  const b = scratchBits[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0); // Inf, NaN (stays NaN)
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa, round to nearest even.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1), mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1) !== 0)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa moves to the next binade (or Infinity): still right.
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) !== 0)) half++;
  return sign | half;
}

/** The value of float16 bits h. */
export function halfValue(h) {
  const sign = (h & 0x8000) !== 0 ? -1 : 1;
  const e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m !== 0 ? NaN : sign * Infinity;
  return sign * (1024 + m) * 2 ** (e - 25);
}

const Native = globalThis.Float16Array;

/** True for the arrays that hold float16: a Float16Array, or a Uint16Array of float16 bits. */
export function isFloat16(x, dtype) {
  return (Native !== undefined && x instanceof Native) || (dtype === 'float16' && x instanceof Uint16Array);
}

/** A Float32Array of the values of a float16 array (Float16Array or Uint16Array bits). */
export function float16ToFloat32(x) {
  if (Native !== undefined && x instanceof Native) return new Float32Array(x);
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = halfValue(x[i]);
  return out;
}

/**
 * The values of f32 (any array of numbers) as float16: a Float16Array when
 * `like` is one, else a Uint16Array of the bits (what sdpa takes with
 * dtype: 'float16').
 */
export function float32ToFloat16(f32, like) {
  if (Native !== undefined && like instanceof Native) return new Native(f32);
  const out = new Uint16Array(f32.length);
  for (let i = 0; i < f32.length; i++) out[i] = halfBits(f32[i]);
  return out;
}
