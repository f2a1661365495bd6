// esbuild bundles the code but leaves new URL('…', import.meta.url) as it
// is, so the files those URLs name must be where they point, relative to
// the bundle: the loader looks for ../../dist/*.wasm (it sits in web/core/
// in the package), so the bundle goes two folders down, in static/js/, and
// the wasm in dist/ at the top; the workers are bundled as entries of their
// own beside main.js, and the shipped model goes to static/js/model/.
import { cpSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = 'node_modules/attention-wasm';
await build({
  entryPoints: {
    main: './main.js',
    'pool-worker': `${pkg}/web/pool-worker.js`,     // createAttentionPool({ worker }) in main.js
    'model-worker': `${pkg}/web/explorer/model-worker.js`, // the explorer's "Train from scratch"
  },
  bundle: true,
  format: 'esm',
  outdir: 'static/js',
  logLevel: 'warning',
});
mkdirSync('static/js/model', { recursive: true });
cpSync(`${pkg}/web/model/induction.json`, 'static/js/model/induction.json');
mkdirSync('dist', { recursive: true });
for (const f of ['attention-relaxed.wasm', 'attention-simd.wasm', 'attention-scalar.wasm']) cpSync(`${pkg}/dist/${f}`, `dist/${f}`);
