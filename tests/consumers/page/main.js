// The whole integration a bundler user writes.
import 'attention-wasm/explorer';
