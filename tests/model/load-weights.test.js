// loadModel's weights: every value of every parameter must be finite, in
// each stored dtype; a NaN or Infinity weight (which would spread through
// every forward pass) is a RangeError naming the parameter and the index.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { createModel, loadModel } from '../../web/model.js';
import { toJSONObject } from '../../web/model/serialize.js';

const test = suite('loadModel refuses non-finite weights');
test.before(async (ctx) => {
  ctx.attn = await loadAttention({ simd: false, deterministic: true });
  ctx.model = await createModel({ seed: 3, layers: 1, heads: 2, dModel: 8, dHead: 4, context: 16, attention: ctx.attn });
});

// The model's JSON with params[name][index] set to `value`, stored as dtype.
function poisoned(model, dtype, name, index, value) {
  const json = model.toJSON({ dtype: 'float32' });
  const bytes = Buffer.from(json.params[name], 'base64');
  const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice();
  values[index] = value;
  const decoded = {};
  for (const key of Object.keys(json.params)) {
    const b = Buffer.from(json.params[key], 'base64');
    decoded[key] = key === name ? values : new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  }
  return toJSONObject({ config: model.config, vocab: model.vocab, params: decoded, steps: 0 }, dtype);
}

for (const dtype of ['float32', 'float16']) {
  for (const value of [NaN, Infinity, -Infinity]) {
    test(`${dtype}: a ${value} weight`, async ({ attn, model }) => {
      const json = poisoned(model, dtype, 'layers.0.wk', 5, value);
      try {
        await loadModel(json, { attention: attn });
        assert.unreachable('loaded');
      } catch (e) {
        assert.instance(e, RangeError);
        assert.match(e.message, /loadModel: params\.layers\.0\.wk\[5\] is/);
      }
    });
  }
}

test('int8: a row scale of NaN', async ({ attn, model }) => {
  const json = model.toJSON({ dtype: 'int8' });
  const bytes = Buffer.from(json.params.unembed, 'base64');
  new DataView(bytes.buffer, bytes.byteOffset).setFloat32(0, NaN, true); // row 0's scale
  json.params.unembed = bytes.toString('base64');
  try {
    await loadModel(json, { attention: attn });
    assert.unreachable('loaded');
  } catch (e) {
    assert.instance(e, RangeError);
    assert.match(e.message, /loadModel: params\.unembed\[0\] is NaN/);
  }
});

test('finite weights still load, to the same forward pass', async ({ attn, model }) => {
  const back = await loadModel(model.toJSON(), { attention: attn });
  const a = model.forward(['the', 'cat']).logits, b = back.forward(['the', 'cat']).logits;
  assert.ok(a.data.length > 0);
  assert.equal(Array.from(b.data), Array.from(a.data));
});

test.run();
