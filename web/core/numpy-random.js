// numpy-random.js - numpy's legacy global generator, so the explorer and the
// command line draw exactly what `np.random.seed(s); np.random.randn(...)`
// draws: MT19937 seeded with init_genrand, doubles from two 32-bit outputs
// ((a >>> 5) * 2^26 + (b >>> 6)) / 2^53, and the polar Box-Muller "gauss"
// that returns one value and keeps the second for the next call. State,
// including the kept value, carries across calls, as numpy's does.
// Agreement with numpy: within 1e-12 relative (Math.log and Math.sqrt may
// differ from C's in the last bit; tests/numpy-random.test.js checks).

const N = 624;
const M = 397;

export class NumpyRandom {
  #mt = new Uint32Array(N);
  #index = N;
  #gauss = 0;
  #hasGauss = false;

  /** @param {number} seed an integer in [0, 2^32 - 1], as np.random.seed takes */
  constructor(seed) {
    if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`NumpyRandom: seed must be an integer in [0, 4294967295], got ${String(seed)}`);
    }
    const mt = this.#mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      // 1812433253 * prev mod 2^32, split so the product stays exact in doubles.
      mt[i] = (((((prev & 0xffff0000) >>> 16) * 1812433253) << 16) + (prev & 0x0000ffff) * 1812433253 + i) >>> 0;
    }
  }

  #next32() {
    const mt = this.#mt;
    if (this.#index >= N) {
      for (let i = 0; i < N; i++) {
        const y = (mt[i] & 0x80000000) | (mt[(i + 1) % N] & 0x7fffffff);
        mt[i] = mt[(i + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.#index = 0;
    }
    let y = mt[this.#index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** A double in [0, 1) with 53 random bits, as numpy's random_sample. */
  random() {
    const a = this.#next32() >>> 5;
    const b = this.#next32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** One standard normal draw, numpy's legacy_gauss. */
  gauss() {
    if (this.#hasGauss) {
      this.#hasGauss = false;
      return this.#gauss;
    }
    let x1, x2, r2;
    do {
      x1 = 2 * this.random() - 1;
      x2 = 2 * this.random() - 1;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1 || r2 === 0);
    const f = Math.sqrt((-2 * Math.log(r2)) / r2);
    this.#gauss = f * x1;
    this.#hasGauss = true;
    return f * x2;
  }

  /**
   * Like np.random.randn(...shape): shape.reduce(*) draws, row-major.
   * randn() with no sizes draws one value.
   * @param {...number} shape non-negative integers
   * @returns {Float64Array}
   */
  randn(...shape) {
    let count = 1;
    for (const [i, n] of shape.entries()) {
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
        throw new RangeError(`NumpyRandom.randn: size ${i} must be a non-negative integer, got ${String(n)}`);
      }
      count *= n;
    }
    if (count > 2 ** 27) throw new RangeError(`NumpyRandom.randn: ${count} values is too many (at most 2^27)`);
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = this.gauss();
    return out;
  }
}
