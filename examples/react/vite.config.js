// Pre-bundling for the dev server would move attention-wasm's modules away
// from the wasm and workers they find beside themselves: leave it as it is.
// `vite build` needs nothing: it sees new URL(..., import.meta.url) and
// new Worker(new URL(...)) and emits the files.
export default {
  optimizeDeps: { exclude: ['attention-wasm'] },
};
