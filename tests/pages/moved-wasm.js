// The scalar module from an explicit URL, as a host that moved the files would.
import { AttentionExplorer } from '../../web/explorer.js';

AttentionExplorer.wasm = new URL('../../dist/attention-scalar.wasm', import.meta.url);
