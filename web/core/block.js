// block.js - the transformer block's ops on an Attention (core/attention.js):
// matmul with transposeB and a bias, layerNorm, rmsNorm, gelu, and their
// backward. Each checks its arguments by the rules of core/options.js
// (errors name the argument and the expected shape) and runs one C call of
// c/attention-block.c in the instance's arena, the one every call reuses,
// so a training loop's repeated calls take no new wasm memory. Results are
// new arrays (or the caller's `out`), never views of wasm memory.

import { checkMatrixOut } from './calls.js';
import { Matrix, describe, toMatrix } from './matrix.js';
import { checkBool, checkKeys } from './options.js';

const GELU = { none: 0, tanh: 1 };

/** A Float32Array or number[] of exactly n values (`what` names them), as a Float32Array; null when absent. */
function checkVector(value, name, n, what) {
  if (value == null) return null;
  if (!(value instanceof Float32Array) && !Array.isArray(value)) {
    throw new TypeError(`${name} must be a Float32Array or number[] of ${n} values (${what}), got ${describe(value)}`);
  }
  if (value.length !== n) throw new RangeError(`${name} has ${value.length} values, expected ${n} (${what})`);
  if (value instanceof Float32Array) return value;
  const at = value.findIndex((v) => typeof v !== 'number');
  if (at >= 0) throw new TypeError(`${name}[${at}] must be a number, got ${describe(value[at])}`);
  return Float32Array.from(value);
}

/** eps: absent -> fallback; else a number >= 0, finite as a float32. */
function checkEps(value, name, fallback) {
  if (value == null) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number >= 0, got ${describe(value)}`);
  if (!(value >= 0) || !Number.isFinite(Math.fround(value))) throw new RangeError(`${name} must be a finite number >= 0, got ${value}`);
  return value;
}

function checkApproximate(value, name) {
  if (value == null) return 0;
  if (typeof value !== 'string' || !Object.hasOwn(GELU, value)) {
    const E = typeof value === 'string' ? RangeError : TypeError;
    throw new E(`${name} must be 'none' or 'tanh', got ${typeof value === 'string' ? JSON.stringify(value) : describe(value)}`);
  }
  return GELU[value];
}

/** Options that may be omitted: {} for null/undefined, else checked keys. */
function readOptions(options, fn) {
  if (options == null) return {};
  checkKeys(options, fn);
  return options;
}

/** The caller's out (checked) for a result of (rows, cols), or null; never a view of wasm memory. */
function readOut(wasm, options, fn, rows, cols) {
  if (options.out == null) return null;
  const out = checkMatrixOut(options, fn, rows, cols);
  wasm.refuseOwnMemory(out.data, `${fn}: out`);
  return out;
}

/** a and b checked for matmul (b (k, n), or (n, k) when transposeB): { A, B, n }. */
function matmulOperands(a, b, transposeB, fn) {
  const A = toMatrix(a, `${fn}: a`);
  const B = transposeB ? toMatrix(b, `${fn}: b`, undefined, A.cols) : toMatrix(b, `${fn}: b`, A.cols);
  return { A, B, n: transposeB ? B.rows : B.cols };
}

export function matmul(wasm, a, b, options) {
  const o = readOptions(options, 'matmul');
  const transposeB = checkBool(o.transposeB, 'matmul: transposeB');
  const { A, B, n } = matmulOperands(a, b, transposeB, 'matmul');
  const bias = checkVector(o.bias, 'matmul: bias', n, transposeB ? 'the rows of b' : 'the cols of b');
  const out = readOut(wasm, o, 'matmul', A.rows, n);
  if (!transposeB && bias === null) {
    if (out === null) return new Matrix(A.rows, n, wasm.matmul(A, B));
    wasm.matmul(A, B, out.data);
    return out;
  }
  const m = A.rows, k = A.cols, result = out ?? new Matrix(m, n);
  const scratch = transposeB ? k * n : 0;
  return wasm.block([m * k * 4, k * n * 4, n * 4, m * n * 4, scratch * 4], 'matmul', ([aP, bP, biasP, cP, sP], f32, ex, check) => {
    f32.set(A.data, aP >>> 2);
    f32.set(B.data, bP >>> 2);
    if (bias !== null) f32.set(bias, biasP >>> 2);
    check(ex.attn_matmul_ex(aP, bP, bias === null ? 0 : biasP, cP, m, k, n, transposeB ? 1 : 0, sP, scratch));
    result.data.set(f32.subarray(cP >>> 2, (cP >>> 2) + m * n));
    return result;
  });
}

export function matmulBackward(wasm, a, b, dOut, options) {
  const o = readOptions(options, 'matmulBackward');
  const transposeB = checkBool(o.transposeB, 'matmulBackward: transposeB');
  const wantBias = checkBool(o.bias, 'matmulBackward: bias');
  const { A, B, n } = matmulOperands(a, b, transposeB, 'matmulBackward');
  const m = A.rows, k = A.cols;
  const D = toMatrix(dOut, 'matmulBackward: dOut', m, n);
  const scratch = Math.max(m * k, k * n, m * n);
  const sizes = [m * k * 4, k * n * 4, m * n * 4, m * k * 4, k * n * 4, n * 4, scratch * 4];
  return wasm.block(sizes, 'matmulBackward', ([aP, bP, dP, daP, dbP, dbiasP, sP], f32, ex, check) => {
    f32.set(A.data, aP >>> 2);
    f32.set(B.data, bP >>> 2);
    f32.set(D.data, dP >>> 2);
    check(ex.attn_matmul_backward(aP, bP, dP, daP, dbP, wantBias ? dbiasP : 0, m, k, n, transposeB ? 1 : 0, sP, scratch));
    return {
      da: new Matrix(m, k, f32.slice(daP >>> 2, (daP >>> 2) + m * k)),
      db: new Matrix(B.rows, B.cols, f32.slice(dbP >>> 2, (dbP >>> 2) + k * n)),
      dbias: wantBias ? f32.slice(dbiasP >>> 2, (dbiasP >>> 2) + n) : null,
    };
  });
}

/** x and the norm's options checked: { X, gamma, beta, eps }. */
function normArgs(x, o, fn, epsDefault, withBeta) {
  const X = toMatrix(x, `${fn}: x`);
  const gamma = checkVector(o.gamma, `${fn}: gamma`, X.cols, 'the cols of x');
  const beta = withBeta ? checkVector(o.beta, `${fn}: beta`, X.cols, 'the cols of x') : null;
  return { X, gamma, beta, eps: checkEps(o.eps, `${fn}: eps`, epsDefault) };
}

function norm(wasm, x, options, fn, layer) {
  const o = readOptions(options, fn);
  const { X, gamma, beta, eps } = normArgs(x, o, fn, layer ? 1e-5 : 1e-6, layer);
  const out = readOut(wasm, o, fn, X.rows, X.cols);
  const count = X.rows * X.cols, result = out ?? new Matrix(X.rows, X.cols);
  return wasm.block([count * 4, X.cols * 4, X.cols * 4], fn, ([xP, gP, bP], f32, ex, check) => {
    f32.set(X.data, xP >>> 2);
    if (gamma !== null) f32.set(gamma, gP >>> 2);
    if (beta !== null) f32.set(beta, bP >>> 2);
    const g = gamma === null ? 0 : gP;
    check(layer ? ex.attn_layer_norm(xP, g, beta === null ? 0 : bP, eps, xP, X.rows, X.cols) : ex.attn_rms_norm(xP, g, eps, xP, X.rows, X.cols));
    result.data.set(f32.subarray(xP >>> 2, (xP >>> 2) + count));
    return result;
  });
}

function normBackward(wasm, x, dOut, options, fn, layer) {
  const o = readOptions(options, fn);
  const { X, gamma, eps } = normArgs(x, o, fn, layer ? 1e-5 : 1e-6, layer);
  const D = toMatrix(dOut, `${fn}: dOut`, X.rows, X.cols);
  const rows = X.rows, cols = X.cols, count = rows * cols;
  return wasm.block([count * 4, count * 4, cols * 4, cols * 4, cols * 4], fn, ([xP, dP, gP, dgP, dbP], f32, ex, check) => {
    f32.set(X.data, xP >>> 2);
    f32.set(D.data, dP >>> 2);
    if (gamma !== null) f32.set(gamma, gP >>> 2);
    const g = gamma === null ? 0 : gP;
    check(layer ? ex.attn_layer_norm_backward(xP, dP, g, eps, dP, dgP, dbP, rows, cols) : ex.attn_rms_norm_backward(xP, dP, g, eps, dP, dgP, rows, cols));
    const result = { dx: new Matrix(rows, cols, f32.slice(dP >>> 2, (dP >>> 2) + count)), dgamma: f32.slice(dgP >>> 2, (dgP >>> 2) + cols) };
    if (layer) result.dbeta = f32.slice(dbP >>> 2, (dbP >>> 2) + cols);
    return result;
  });
}

export const layerNorm = (wasm, x, options) => norm(wasm, x, options, 'layerNorm', true);
export const rmsNorm = (wasm, x, options) => norm(wasm, x, options, 'rmsNorm', false);
export const layerNormBackward = (wasm, x, dOut, options) => normBackward(wasm, x, dOut, options, 'layerNormBackward', true);
export const rmsNormBackward = (wasm, x, dOut, options) => normBackward(wasm, x, dOut, options, 'rmsNormBackward', false);

export function gelu(wasm, x, options) {
  const o = readOptions(options, 'gelu');
  const approximate = checkApproximate(o.approximate, 'gelu: approximate');
  const X = toMatrix(x, 'gelu: x');
  const out = readOut(wasm, o, 'gelu', X.rows, X.cols);
  const count = X.rows * X.cols, result = out ?? new Matrix(X.rows, X.cols);
  return wasm.block([count * 4], 'gelu', ([xP], f32, ex, check) => {
    f32.set(X.data, xP >>> 2);
    check(ex.attn_gelu(xP, xP, count, approximate));
    result.data.set(f32.subarray(xP >>> 2, (xP >>> 2) + count));
    return result;
  });
}

export function geluBackward(wasm, x, dOut, options) {
  const o = readOptions(options, 'geluBackward');
  const approximate = checkApproximate(o.approximate, 'geluBackward: approximate');
  const X = toMatrix(x, 'geluBackward: x');
  const D = toMatrix(dOut, 'geluBackward: dOut', X.rows, X.cols);
  const count = X.rows * X.cols;
  return wasm.block([count * 4, count * 4], 'geluBackward', ([xP, dP], f32, ex, check) => {
    f32.set(X.data, xP >>> 2);
    f32.set(D.data, dP >>> 2);
    check(ex.attn_gelu_backward(xP, dP, dP, count, approximate));
    return new Matrix(X.rows, X.cols, f32.slice(dP >>> 2, (dP >>> 2) + count));
  });
}
