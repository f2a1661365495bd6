// adam.js - Adam (Kingma & Ba) over a model's parameters, with a linear
// learning-rate warm-up and an optional linear decay:
//   lr_t = lr * min(1, t / warmup) * (decaySteps > 0 ? max(0, 1 - t / decaySteps) : 1)
// Warm-up keeps the first steps, whose second-moment estimates rest on few
// gradients, small; the decay lets a long run settle instead of jittering
// at a constant step size.
// Moments are float64 so the update does not depend on summation luck.

export class Adam {
  #m;
  #v;
  #t = 0;

  /**
   * @param {Record<string, Float32Array>} params updated in place by step()
   * @param {{ learningRate: number, warmup: number, decaySteps: number, beta1: number, beta2: number, epsilon: number }} settings
   */
  constructor(params, settings) {
    this.params = params;
    this.settings = settings;
    this.#m = {};
    this.#v = {};
    for (const name in params) {
      this.#m[name] = new Float64Array(params[name].length);
      this.#v[name] = new Float64Array(params[name].length);
    }
  }

  /** Steps taken. */
  get steps() {
    return this.#t;
  }

  /** One update from gradients keyed like the parameters. */
  step(grads) {
    const { learningRate, warmup, decaySteps, beta1, beta2, epsilon } = this.settings;
    const t = ++this.#t;
    const lr = learningRate * (warmup > 0 ? Math.min(1, t / warmup) : 1) * (decaySteps > 0 ? Math.max(0, 1 - t / decaySteps) : 1);
    const c1 = 1 - beta1 ** t, c2 = 1 - beta2 ** t;
    for (const name in this.params) {
      const p = this.params[name], g = grads[name], m = this.#m[name], v = this.#v[name];
      for (let i = 0; i < p.length; i++) {
        m[i] = beta1 * m[i] + (1 - beta1) * g[i];
        v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
        p[i] -= lr * (m[i] / c1) / (Math.sqrt(v[i] / c2) + epsilon);
      }
    }
  }
}
