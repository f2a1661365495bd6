// onnx-graph.js - builds the ONNX model bytes of scaled dot-product attention
// in JS (a few protobuf fields by hand), so the benchmark needs no Python:
//   S = MatMul(Q, Transpose(K)); Z = Mul(S, scale) [+ causal mask]; P = Softmax(Z); O = MatMul(P, V)
// Shapes are fixed per model: Q (H, Nq, D), K and V (H, Nk, D).

const enc = new TextEncoder();

function varint(n) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n)); // negative int64: two's complement, 10 bytes
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

const key = (field, wire) => varint((field << 3) | wire);
const bytes = (field, data) => [...key(field, 2), ...varint(data.length), ...data];
const str = (field, s) => bytes(field, [...enc.encode(s)]);
const int = (field, n) => [...key(field, 0), ...varint(n)];
const msg = (field, parts) => bytes(field, parts.flat());

function dims(shape) {
  return msg(2, shape.map((d) => msg(1, [int(1, d)])));
}

function valueInfo(field, name, shape) {
  // ValueInfoProto { name, type: TypeProto { tensor_type { elem_type: FLOAT, shape } } }
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, 1), dims(shape)])])]);
}

function tensor(name, shape, values) {
  const raw = new Uint8Array(Float32Array.from(values).buffer);
  // TensorProto { dims, data_type: FLOAT, name, raw_data }
  return msg(5, [...shape.map((d) => int(1, d)), int(2, 1), str(8, name), bytes(9, [...raw])]);
}

function node(op, inputs, outputs, attributes = [], domain = '') {
  return msg(1, [...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(4, op), ...attributes,
    ...(domain ? [str(7, domain)] : [])]);
}

const intsAttr = (name, values) => msg(5, [str(1, name), ...values.map((v) => int(8, v)), int(20, 7)]);
const intAttr = (name, value) => msg(5, [str(1, name), int(3, value), int(20, 2)]);

/** ONNX model bytes for attention over (heads, nq, d) x (heads, nk, d). */
export function attentionModel({ heads, nq, nk, d, scale, causal }) {
  const nodes = [
    node('Transpose', ['K'], ['Kt'], [intsAttr('perm', [0, 2, 1])]),
    node('MatMul', ['Q', 'Kt'], ['S']),
    node('Mul', ['S', 'scale'], [causal ? 'Zs' : 'Z']),
  ];
  const inits = [tensor('scale', [], [scale])];
  if (causal) {
    const mask = new Float32Array(nq * nk);
    for (let i = 0; i < nq; i++) for (let j = i + 1; j < nk; j++) mask[i * nk + j] = -Infinity;
    inits.push(tensor('causal', [nq, nk], mask));
    nodes.push(node('Add', ['Zs', 'causal'], ['Z']));
  }
  nodes.push(node('Softmax', ['Z'], ['P'], [intAttr('axis', -1)]), node('MatMul', ['P', 'V'], ['O']));
  const graph = msg(7, [
    ...nodes, str(2, 'attention'), ...inits,
    valueInfo(11, 'Q', [heads, nq, d]), valueInfo(11, 'K', [heads, nk, d]), valueInfo(11, 'V', [heads, nk, d]),
    valueInfo(12, 'O', [heads, nq, d]),
  ]);
  // ModelProto { ir_version: 8, opset_import { version: 17 }, graph }
  return new Uint8Array([...int(1, 8), ...msg(8, [str(1, ''), int(2, 17)]), ...graph]);
}

/**
 * ONNX model bytes of one decode step through the standard Attention op
 * (opset 23) with a past key/value cache, grouped-query:
 *   Y, present_key, present_value = Attention(Q, K, V, , past_key, past_value)
 * Q (batch, heads, nq, d), K and V (batch, kvHeads, nq, d) (the new tokens),
 * past_key and past_value (batch, kvHeads, past, d); Y (batch, heads, nq, d),
 * present (batch, kvHeads, past + nq, d). scale defaults to 1/sqrt(d) in
 * the op; is_causal aligns the queries to the last keys (ONNX: top-left by
 * the total length, which for nq = 1 allows every key).
 */
export function attentionOpModel({ batch = 1, heads, kvHeads, nq, past, d, causal = false }) {
  const total = past + nq;
  const attrs = [intAttr('q_num_heads', heads), intAttr('kv_num_heads', kvHeads)];
  if (causal) attrs.push(intAttr('is_causal', 1));
  const graph = msg(7, [
    node('Attention', ['Q', 'K', 'V', '', 'past_key', 'past_value'], ['Y', 'present_key', 'present_value'], attrs),
    str(2, 'decode'),
    valueInfo(11, 'Q', [batch, heads, nq, d]), valueInfo(11, 'K', [batch, kvHeads, nq, d]), valueInfo(11, 'V', [batch, kvHeads, nq, d]),
    valueInfo(11, 'past_key', [batch, kvHeads, past, d]), valueInfo(11, 'past_value', [batch, kvHeads, past, d]),
    valueInfo(12, 'Y', [batch, heads, nq, d]),
    valueInfo(12, 'present_key', [batch, kvHeads, total, d]), valueInfo(12, 'present_value', [batch, kvHeads, total, d]),
  ]);
  // ModelProto { ir_version: 10, opset_import { version: 23 }, graph }
  return new Uint8Array([...int(1, 10), ...msg(8, [str(1, ''), int(2, 23)]), ...graph]);
}

// Large initializers (a 32768-key cache is 64 MB) do not fit the array form
// above, so the GroupQueryAttention model is assembled from byte chunks.
function chunk(parts) {
  const arrays = parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}
const chunkMsg = (field, parts) => {
  const body = chunk(parts);
  return chunk([key(field, 2), varint(body.length), body]);
};

const ELEM = { float32: 1, int8: 3, int32: 6 };

// shape null: no shape declared (the op infers its present's length from
// the past's, which for a past of past tokens is not past + 1).
function typedValueInfo(field, name, type, shape) {
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, ELEM[type]), ...(shape ? dims(shape) : [])])])]);
}

function rawTensor(name, type, shape, array) {
  const raw = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  return chunkMsg(5, [chunk(shape.map((d) => int(1, d))), int(2, ELEM[type]), str(8, name), chunk([key(9, 2), varint(raw.length)]), raw]);
}

const strAttr = (name, value) => msg(5, [str(1, name), str(4, value), int(20, 3)]);

/**
 * ONNX model bytes of one decode step through onnxruntime's contrib op
 * com.microsoft.GroupQueryAttention, the op transformers.js LLM exports use:
 *   output, present_key, present_value = GroupQueryAttention(query, key, value,
 *     past_key, past_value, seqlens_k, total_sequence_length)
 * query (1, nq, heads*d), key and value (1, nq, kvHeads*d): the new tokens
 * side by side by head; past_key and past_value (1, kvHeads, past, d) (BNSH);
 * seqlens_k (1) int32 = past + nq - 1 (the op's 0-based last position);
 * total_sequence_length () int32 = past + nq. With `constants` the past and
 * both lengths are initializers (`pastKey`, `pastValue` Float32Arrays), so a
 * call feeds only the new token: the op's floor, since its wasm build cannot
 * keep a cache between calls. With `dtype: 'int8'` the past is int8 with a
 * per-tensor float32 scale each (k_scale, v_scale; kv_cache_bit_width 8), the
 * op's quantized-cache path, where a build has it.
 */
export function groupQueryAttentionModel({ heads, kvHeads, nq = 1, past, d, constants = null, dtype = 'float32' }) {
  const total = past + nq;
  const attrs = [intAttr('num_heads', heads), intAttr('kv_num_heads', kvHeads)];
  const inputs = ['query', 'key', 'value', 'past_key', 'past_value', 'seqlens_k', 'total_sequence_length'];
  if (dtype === 'int8') {
    attrs.push(strAttr('k_quant_type', 'PER_TENSOR'), strAttr('v_quant_type', 'PER_TENSOR'), intAttr('kv_cache_bit_width', 8));
    inputs.push('', '', '', '', '', 'k_scale', 'v_scale');
  }
  const fed = [
    typedValueInfo(11, 'query', 'float32', [1, nq, heads * d]),
    typedValueInfo(11, 'key', 'float32', [1, nq, kvHeads * d]),
    typedValueInfo(11, 'value', 'float32', [1, nq, kvHeads * d]),
  ];
  const inits = [];
  const lengths = [['seqlens_k', [1], Int32Array.of(total - 1)], ['total_sequence_length', [], Int32Array.of(total)]];
  const scales = dtype === 'int8' ? [['k_scale', [1], Float32Array.of(1 / 127)], ['v_scale', [1], Float32Array.of(1 / 127)]] : [];
  if (constants) {
    const pastType = dtype === 'int8' ? 'int8' : 'float32';
    inits.push(rawTensor('past_key', pastType, [1, kvHeads, past, d], constants.pastKey),
      rawTensor('past_value', pastType, [1, kvHeads, past, d], constants.pastValue));
    for (const [name, shape, values] of lengths) inits.push(rawTensor(name, 'int32', shape, values));
  } else {
    const pastType = dtype === 'int8' ? 'int8' : 'float32';
    fed.push(typedValueInfo(11, 'past_key', pastType, [1, kvHeads, past, d]), typedValueInfo(11, 'past_value', pastType, [1, kvHeads, past, d]),
      typedValueInfo(11, 'seqlens_k', 'int32', [1]), typedValueInfo(11, 'total_sequence_length', 'int32', []));
  }
  for (const [name, shape, values] of scales) inits.push(rawTensor(name, 'float32', shape, values));
  const presentType = dtype === 'int8' ? 'int8' : 'float32';
  const graph = chunkMsg(7, [
    Uint8Array.from(node('GroupQueryAttention', inputs, ['output', 'present_key', 'present_value'], attrs, 'com.microsoft')),
    Uint8Array.from(str(2, 'gqa-decode')), ...inits, ...fed.map((f) => Uint8Array.from(f)),
    Uint8Array.from(typedValueInfo(12, 'output', 'float32', [1, nq, heads * d])),
    Uint8Array.from(typedValueInfo(12, 'present_key', presentType, null)),
    Uint8Array.from(typedValueInfo(12, 'present_value', presentType, null)),
  ]);
  // ModelProto { ir_version: 10, opset_import { '' 21 }, opset_import { 'com.microsoft' 1 }, graph }
  return chunk([int(1, 10), msg(8, [str(1, ''), int(2, 21)]), msg(8, [str(1, 'com.microsoft'), int(2, 1)]), graph]);
}
