// attention.js - the entry point of attention-wasm: loading the module and
// the attention API over it. The parts live in web/core/: loader.js (finding,
// compiling and instantiating a build), options.js (every option's rule),
// attention.js (the calls), kvcache.js (the KV cache), instance.js (the wasm
// memory and the structs of c/attention.h), float16.js, matrix.js and numpy-random.js.

export { chooseIsa, compileAttention, loadAttention, relaxedSimdSupported, simdSupported } from './core/loader.js';
export { Attention } from './core/attention.js';
export { KVCache } from './core/kvcache.js';
export { Matrix } from './core/matrix.js';
export { NumpyRandom } from './core/numpy-random.js';
export { float16ToFloat32, float32ToFloat16 } from './core/float16.js';
export { alibiSlopes } from './core/options.js';
