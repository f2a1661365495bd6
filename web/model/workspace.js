// workspace.js - the arrays a forward and backward pass of `batch` sequences
// of n tokens write into, made once and reused by every training step.
// A new Float32Array of a few hundred KiB costs Chromium more than the
// matrix product that fills it, so a step that allocated its activations,
// transposes and gradients afresh would spend most of its time allocating.
//
// Sizes, for rows = batch * n (d = dModel, hk = heads * dHead, V = vocabulary):
//   xs[0 .. L]            (rows, d) the residual stream before each layer and after the last
//   layers[l]: q, k, v, z (rows, hk) bshd; out (rows, d) the layer's z wo
//   picked                (rows, d) at most: the final stream at the rows the loss counts
//   logits                (rows, V) at most: their logits
//   the backward's transposes and products, and one gradient per parameter.
// The rows the loss counts vary from batch to batch; those arrays are sized
// for all rows and used through views of the rows in use (view()).

export class Workspace {
  /**
   * @param {{ layers: number, heads: number, dModel: number, dHead: number, context: number, vocabSize: number }} shape
   * @param {number} batch sequences per pass
   * @param {number} n tokens per sequence
   * @param {Record<string, Float32Array> | null} [params] the parameters, for a
   *   workspace that also holds the backward pass's arrays and a gradient for each
   */
  constructor(shape, batch, n, params = null) {
    const { layers, heads, dModel: d, dHead: dk, vocabSize: V } = shape;
    const rows = batch * n, hk = heads * dk;
    const f32 = (length) => new Float32Array(length);
    this.batch = batch;
    this.n = n;
    this.xs = Array.from({ length: layers + 1 }, () => f32(rows * d));
    this.layers = Array.from({ length: layers }, () => ({ q: f32(rows * hk), k: f32(rows * hk), v: f32(rows * hk), z: f32(rows * hk), out: f32(rows * d) }));
    this.picked = f32(rows * d);
    this.logits = f32(rows * V);
    this.backward = params !== null;
    if (params === null) return;
    this.pickedT = f32(d * rows); // (d, R) x_L[rows]^T
    this.unembedT = f32(V * d); // (V, d)
    this.dPicked = f32(rows * d); // (R, d)
    this.dx = f32(rows * d); // (rows, d) dL/dx_l
    this.next = f32(rows * d); // (rows, d) dL/dx_{l-1}, being summed
    this.product = f32(rows * d); // (rows, d) one term of it
    this.zT = f32(hk * rows); // (hk, rows)
    this.xT = f32(d * rows); // (d, rows)
    this.dz = f32(rows * hk); // (rows, hk)
    this.dqkv = { dq: f32(rows * hk), dk: f32(rows * hk), dv: f32(rows * hk) }; // (rows, hk) each: the attention's gradients
    this.wT = f32(d * hk); // (hk, d) or (d, hk): a weight transposed
    this.grads = {};
    for (const name in params) this.grads[name] = f32(params[name].length);
  }

  /** Whether this workspace fits a pass of `batch` sequences of n tokens. */
  fits(batch, n, backward) {
    return this.batch === batch && this.n === n && (this.backward || !backward);
  }
}

/** The first `length` values of a workspace array, as a view. */
export function view(array, length) {
  return length === array.length ? array : array.subarray(0, length);
}
