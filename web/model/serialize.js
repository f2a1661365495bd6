// serialize.js - a model as JSON: its shape, vocabulary and parameters, each
// parameter a base64 string (row-major, shape from the config) of
//   float32: little-endian float32 values (exact);
//   float16: little-endian IEEE half values (relative rounding 2^-11);
//   int8:    one float32 scale per row, then every value as a signed byte,
//            value = byte * scale, scale = max |row| / 127 (rounding at most
//            half a step, 1/254 of the row's largest value).
// float16 halves the file and int8 quarters it; their rounding is far below
// what changes a trained model's predictions (tests/model-shipped.test.js
// checks the shipped int8 file against its targets).
//
//   { "format": "attention-wasm-model", "version": 1,
//     "config": { layers, heads, dModel, dHead, context },
//     "vocab": [...], "dtype": "float32" | "float16" | "int8",
//     "params": { "embed": "<base64>", ... }, "steps": n }

import { halfBits, halfValue } from '../core/float16.js';
import { describe } from '../core/matrix.js';
import { checkFinite } from '../core/options.js';
import { paramNames, paramShapes } from './transformer.js';

export const FORMAT = 'attention-wasm-model';
export const VERSION = 1;
const DTYPES = ['float32', 'float16', 'int8'];

const BASE64 = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const PAD = 61; // '='

// Base64 by table into ASCII bytes, decoded once: a trained model is
// encoded every few hundred milliseconds while it trains, and a string of
// char codes for btoa costs tens of times more.
function toBase64(bytes) {
  const n = bytes.length, out = new Uint8Array(4 * Math.ceil(n / 3));
  let o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    const t = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out[o++] = BASE64[t >> 18]; out[o++] = BASE64[(t >> 12) & 63]; out[o++] = BASE64[(t >> 6) & 63]; out[o++] = BASE64[t & 63];
  }
  if (i < n) {
    const t = (bytes[i] << 16) | (i + 1 < n ? bytes[i + 1] << 8 : 0);
    out[o++] = BASE64[t >> 18]; out[o++] = BASE64[(t >> 12) & 63];
    out[o++] = i + 1 < n ? BASE64[(t >> 6) & 63] : PAD;
    out[o++] = PAD;
  }
  return new TextDecoder().decode(out);
}

function fromBase64(text, name) {
  let s;
  try {
    s = atob(text);
  } catch {
    throw new TypeError(`${name} is not valid base64`);
  }
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

function encodeInt8(data, rows, cols) {
  const bytes = new Uint8Array(rows * 4 + rows * cols);
  const view = new DataView(bytes.buffer);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let j = 0; j < cols; j++) max = Math.max(max, Math.abs(data[r * cols + j]));
    const scale = Math.fround(max / 127);
    view.setFloat32(4 * r, scale, true);
    for (let j = 0; j < cols; j++) view.setInt8(rows * 4 + r * cols + j, scale > 0 ? Math.round(data[r * cols + j] / scale) : 0);
  }
  return toBase64(bytes);
}

function decodeInt8(bytes, rows, cols, name) {
  if (bytes.length !== rows * 4 + rows * cols) {
    throw new RangeError(`${name} holds ${bytes.length} bytes, expected ${rows} int8 row scales and ${rows} x ${cols} values (${rows * 4 + rows * cols})`);
  }
  const view = new DataView(bytes.buffer);
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const scale = view.getFloat32(4 * r, true);
    for (let j = 0; j < cols; j++) out[r * cols + j] = view.getInt8(rows * 4 + r * cols + j) * scale;
  }
  return out;
}

// Whether a Float32Array's bytes are already little-endian float32 (every
// engine wasm runs on), so float32 encodes without a pass over the values.
const LITTLE_ENDIAN = new Uint8Array(Float32Array.of(1).buffer)[3] === 0x3f;

/** One parameter (rows, cols) as base64 of the dtype. */
export function encode(data, dtype, rows, cols) {
  if (dtype === 'int8') return encodeInt8(data, rows, cols);
  if (dtype === 'float32' && LITTLE_ENDIAN) return toBase64(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const bytes = new Uint8Array(data.length * (dtype === 'float16' ? 2 : 4));
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < data.length; i++) {
    if (dtype === 'float16') view.setUint16(2 * i, halfBits(data[i]), true);
    else view.setFloat32(4 * i, data[i], true);
  }
  return toBase64(bytes);
}

/** One parameter back from base64 of the dtype; `name` names it in errors. */
export function decode(text, dtype, rows, cols, name) {
  if (typeof text !== 'string') throw new TypeError(`${name} must be a base64 string, got ${describe(text)}`);
  const bytes = fromBase64(text, name);
  if (dtype === 'int8') return decodeInt8(bytes, rows, cols, name);
  const length = rows * cols;
  const size = dtype === 'float16' ? 2 : 4;
  if (bytes.length !== length * size) {
    throw new RangeError(`${name} holds ${bytes.length / size} ${dtype} values, expected ${length}`);
  }
  const view = new DataView(bytes.buffer);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = size === 2 ? halfValue(view.getUint16(2 * i, true)) : view.getFloat32(4 * i, true);
  return out;
}

export function checkDtype(dtype, name) {
  if (!DTYPES.includes(dtype)) throw new RangeError(`${name} must be 'float32', 'float16' or 'int8', got ${describe(dtype)}`);
}

/** The JSON object of a model's parts. */
export function toJSONObject({ config, vocab, params, steps }, dtype) {
  const shapes = paramShapes({ ...config, vocabSize: vocab.length });
  const encoded = {};
  for (const name of paramNames(config.layers)) encoded[name] = encode(params[name], dtype, ...shapes[name]);
  return { format: FORMAT, version: VERSION, config: { ...config }, vocab: [...vocab], dtype, params: encoded, steps };
}

/**
 * Parameters from a JSON object's params, checked against the config, every
 * value finite (a NaN or Infinity weight is a RangeError naming it).
 * @returns {Record<string, Float32Array>}
 */
export function paramsFromJSON(json, shape, name) {
  checkDtype(json.dtype, `${name}: dtype`);
  if (json.params === null || typeof json.params !== 'object') {
    throw new TypeError(`${name}: params must be an object of base64 strings, got ${describe(json.params)}`);
  }
  const shapes = paramShapes(shape);
  const params = {};
  for (const key of paramNames(shape.layers)) {
    const [rows, cols] = shapes[key];
    params[key] = checkFinite(decode(json.params[key], json.dtype, rows, cols, `${name}: params.${key}`), `${name}: params.${key}`);
  }
  return params;
}
