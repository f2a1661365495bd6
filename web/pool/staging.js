// staging.js - the buffers that carry a split call's parts to the workers
// and their outputs back, on the pool's copy path (no shared memory). A
// part's inputs and the place for its output are laid out in one
// ArrayBuffer, moved to the worker (a transfer, not a clone) and moved back
// with the answer, then kept for the next call: a call allocates nothing
// once the pool has seen its sizes, and no worker's answer is a fresh array
// the garbage collector must find.

// Bytes each region starts on: a float region stays 16-byte aligned, as the
// instance's own arena is.
const ALIGN = 16;
// Buffers grow to a multiple of this, so sizes that creep up a little per
// call do not allocate on every call.
const GRAIN = 65536;

/**
 * Lays `regions` ([constructor, length] pairs) out in one buffer from
 * `staging` and returns the views, in order, and the buffer's byte length.
 */
export function stageViews(staging, regions) {
  let bytes = 0;
  const offsets = regions.map(([Type, length]) => {
    const at = bytes;
    bytes += Math.ceil((length * Type.BYTES_PER_ELEMENT) / ALIGN) * ALIGN;
    return at;
  });
  const buffer = staging.take(bytes);
  return regions.map(([Type, length], i) => new Type(buffer, offsets[i], length));
}

/** The free staging buffers of one pool: at most `keep` (one per worker) wait between calls. */
export class Staging {
  #free = [];
  #keep;

  constructor(keep) {
    this.#keep = keep;
  }

  /** A buffer of at least `bytes` bytes: a kept one that fits, else a new one. */
  take(bytes) {
    let best = -1;
    for (let i = 0; i < this.#free.length; i++) {
      const n = this.#free[i].byteLength;
      if (n >= bytes && (best < 0 || n < this.#free[best].byteLength)) best = i;
    }
    if (best >= 0) return this.#free.splice(best, 1)[0];
    // None fits: the smallest kept one would only be outgrown again.
    if (this.#free.length >= this.#keep) this.#free.sort((a, b) => a.byteLength - b.byteLength).shift();
    return new ArrayBuffer(Math.max(GRAIN, Math.ceil(bytes / GRAIN) * GRAIN));
  }

  /** Keeps a buffer that came back from a worker; beyond `keep` the smallest is let go. */
  give(buffer) {
    if (buffer.byteLength === 0) return; // detached: it went elsewhere
    this.#free.push(buffer);
    if (this.#free.length > this.#keep) this.#free.sort((a, b) => a.byteLength - b.byteLength).shift();
  }

  /** Bytes held between calls (tests check that many calls do not add to it). */
  get bytes() {
    return this.#free.reduce((sum, b) => sum + b.byteLength, 0);
  }

  /** Buffers held between calls. */
  get count() {
    return this.#free.length;
  }
}
