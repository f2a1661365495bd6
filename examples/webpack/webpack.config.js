// webpack 5 needs no loader or plugin for attention-wasm: it turns
// new URL('…wasm', import.meta.url) into an asset and
// new Worker(new URL('…-worker.js', import.meta.url)) into a worker chunk.
const path = require('node:path');

module.exports = {
  mode: 'production',
  entry: './src/index.js',
  output: { path: path.resolve(__dirname, 'dist'), filename: 'main.js', publicPath: 'auto', clean: true },
};
