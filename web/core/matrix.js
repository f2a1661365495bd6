// matrix.js - a small row-major float32 matrix and the input checks that turn
// what people pass (Matrix, { rows, cols, data }, { data, dims }, number[][])
// into one, with
// errors that name the argument and the expected shape. Pure: no DOM, no wasm.

export class Matrix {
  /**
   * @param {number} rows positive integer
   * @param {number} cols positive integer
   * @param {Float32Array} [data] rows * cols values, row-major; kept, not copied (zeros when omitted)
   */
  constructor(rows, cols, data) {
    checkSize(rows, 'Matrix: rows');
    checkSize(cols, 'Matrix: cols');
    if (data === undefined) {
      data = new Float32Array(rows * cols);
    } else if (!(data instanceof Float32Array)) {
      throw new TypeError(`Matrix: data must be a Float32Array of ${rows} x ${cols} = ${rows * cols} values`);
    } else if (data.length !== rows * cols) {
      throw new RangeError(`Matrix: data has ${data.length} values, expected ${rows} x ${cols} = ${rows * cols}`);
    }
    /** @readonly */ this.rows = rows;
    /** @readonly */ this.cols = cols;
    /** @readonly */ this.data = data;
  }

  /** [rows, cols]: a Matrix is also a 2-D tensor { data, dims }. */
  get dims() {
    return [this.rows, this.cols];
  }

  get(i, j) {
    if (!Number.isInteger(i) || i < 0 || i >= this.rows || !Number.isInteger(j) || j < 0 || j >= this.cols) {
      throw new RangeError(`Matrix.get: (${i}, ${j}) is outside a ${this.rows} x ${this.cols} matrix`);
    }
    return this.data[i * this.cols + j];
  }

  /** @returns {number[][]} */
  toArray() {
    const out = [];
    for (let i = 0; i < this.rows; i++) out.push(Array.from(this.data.subarray(i * this.cols, (i + 1) * this.cols)));
    return out;
  }

  /**
   * A new Matrix from a Matrix, { rows, cols, data } or number[][], always
   * with its own data: later writes to x never show through it, nor the reverse.
   */
  static from(x) {
    const m = toMatrix(x, 'Matrix.from: x');
    // toMatrix keeps a Float32Array it is given (a Matrix's, or a plain
    // object's `data`); only the arrays it built itself are already private.
    const shared = m === x || (x !== null && typeof x === 'object' && m.data === x.data);
    return shared ? new Matrix(m.rows, m.cols, m.data.slice()) : m;
  }
}

export function checkSize(n, name) {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    const E = typeof n === 'number' ? RangeError : TypeError;
    throw new E(`${name} must be a positive integer, got ${describe(n)}`);
  }
}

/** A short description of a value for error messages. */
export function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name} of length ${x.length}`;
  if (typeof x === 'object') return 'an object';
  if (typeof x === 'string') return `the string ${JSON.stringify(x.length > 20 ? x.slice(0, 20) + '...' : x)}`;
  if (typeof x === 'bigint') return `the bigint ${x}n`;
  return String(x);
}

function shapeText(rows, cols) {
  return `(${rows ?? 'rows'}, ${cols ?? 'cols'})`;
}

/**
 * Checks x and returns it as a Matrix (the same object when it already is one).
 * @param {unknown} x
 * @param {string} name the argument's name for messages
 * @param {number} [rows] required rows, if known
 * @param {number} [cols] required cols, if known
 */
export function toMatrix(x, name, rows, cols) {
  let m;
  if (x instanceof Matrix) {
    m = x;
  } else if (Array.isArray(x)) {
    m = fromNested(x, name, rows, cols);
  } else if (x !== null && typeof x === 'object' && 'data' in x && !('rows' in x) && Array.isArray(x.dims)) {
    // A 2-D tensor { data, dims: [rows, cols] }.
    if (x.dims.length !== 2) throw new RangeError(`${name}.dims must be [rows, cols], got [${x.dims.join(', ')}]`);
    m = toMatrix({ rows: x.dims[0], cols: x.dims[1], data: x.data }, name);
  } else if (x !== null && typeof x === 'object' && 'data' in x) {
    checkSize(x.rows, `${name}.rows`);
    checkSize(x.cols, `${name}.cols`);
    const data = x.data;
    if (!(ArrayBuffer.isView(data) || Array.isArray(data)) || data instanceof DataView) {
      throw new TypeError(`${name}.data must be a Float32Array (or array of numbers) of ${x.rows} x ${x.cols} values, got ${describe(data)}`);
    }
    if (data.length !== x.rows * x.cols) {
      throw new RangeError(`${name}.data has ${data.length} values, expected ${x.rows} x ${x.cols} = ${x.rows * x.cols}`);
    }
    let f32;
    if (data instanceof Float32Array) {
      f32 = data;
    } else {
      const at = Array.prototype.findIndex.call(data, (v) => typeof v !== 'number');
      if (at >= 0) throw new TypeError(`${name}.data[${at}] must be a number, got ${describe(data[at])}`);
      f32 = Float32Array.from(data);
    }
    m = new Matrix(x.rows, x.cols, f32);
  } else {
    throw new TypeError(`${name} must be a Matrix, { rows, cols, data } or number[][] of shape ${shapeText(rows, cols)}, got ${describe(x)}`);
  }
  if ((rows !== undefined && m.rows !== rows) || (cols !== undefined && m.cols !== cols)) {
    throw new RangeError(`${name} must have shape ${shapeText(rows, cols)}, got (${m.rows}, ${m.cols})`);
  }
  return m;
}

function fromNested(x, name, rows, cols) {
  if (x.length === 0) throw new RangeError(`${name} must have at least one row, got an empty array`);
  const first = x[0];
  if (!Array.isArray(first)) {
    throw new TypeError(`${name} must be number[][] (an array of rows, shape ${shapeText(rows, cols)}); its first element is ${describe(first)}, not a row`);
  }
  const c = first.length;
  if (c === 0) throw new RangeError(`${name}[0] is empty; rows need at least one value`);
  const data = new Float32Array(x.length * c);
  for (let i = 0; i < x.length; i++) {
    const row = x[i];
    if (!Array.isArray(row)) throw new TypeError(`${name}[${i}] must be an array of ${c} numbers, got ${describe(row)}`);
    if (row.length !== c) {
      throw new RangeError(`${name} is ragged: row 0 has ${c} values but row ${i} has ${row.length}; expected shape ${shapeText(rows ?? x.length, cols ?? c)}`);
    }
    for (let j = 0; j < c; j++) {
      const v = row[j];
      if (typeof v !== 'number') throw new TypeError(`${name}[${i}][${j}] must be a number, got ${describe(v)}`);
      data[i * c + j] = v;
    }
  }
  return new Matrix(x.length, c, data);
}

/**
 * Checks a keep-mask: boolean[][] (or 0/1 numbers), or { rows, cols, data: Uint8Array }.
 * @returns {Uint8Array} rows * cols, 1 = may attend
 */
export function toMask(x, name, rows, cols) {
  const expected = `boolean[][] or { rows, cols, data: Uint8Array } of shape (${rows}, ${cols})`;
  if (Array.isArray(x)) {
    if (x.length !== rows) throw new RangeError(`${name} must have ${rows} row${rows === 1 ? '' : 's'} (shape (${rows}, ${cols})), got ${x.length}`);
    const out = new Uint8Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const row = x[i];
      if (!Array.isArray(row)) throw new TypeError(`${name}[${i}] must be an array of ${cols} booleans, got ${describe(row)}`);
      if (row.length !== cols) throw new RangeError(`${name}[${i}] has ${row.length} values, expected ${cols} (shape (${rows}, ${cols}))`);
      for (let j = 0; j < cols; j++) {
        const v = row[j];
        if (typeof v !== 'boolean' && typeof v !== 'number') {
          throw new TypeError(`${name}[${i}][${j}] must be a boolean, got ${describe(v)}`);
        }
        out[i * cols + j] = v ? 1 : 0;
      }
    }
    return out;
  }
  if (x !== null && typeof x === 'object' && 'data' in x) {
    if ('shape' in x && !('rows' in x)) {
      throw new TypeError(`${name} must be ${expected}, got { data, shape }: a broadcast mask is for sdpa() and kvCache.attend()`);
    }
    if (x.rows !== rows || x.cols !== cols) {
      throw new RangeError(`${name} must have shape (${rows}, ${cols}), got (${describe(x.rows)}, ${describe(x.cols)})`);
    }
    if (!(x.data instanceof Uint8Array)) throw new TypeError(`${name}.data must be a Uint8Array of ${rows * cols} values, got ${describe(x.data)}`);
    if (x.data.length !== rows * cols) throw new RangeError(`${name}.data has ${x.data.length} values, expected ${rows} x ${cols} = ${rows * cols}`);
    return x.data;
  }
  throw new TypeError(`${name} must be ${expected}, got ${describe(x)}`);
}
