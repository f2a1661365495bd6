// explorer.js - importing this module defines <attention-explorer>.
// It finds its wasm relative to its own URL; nothing else is needed:
//   <script type="module" src="node_modules/attention-wasm/web/explorer.js"></script>
//   <attention-explorer tokens="the cat sat there"></attention-explorer>
import { AttentionExplorer } from './explorer/element.js';

export { AttentionExplorer };

if (typeof customElements !== 'undefined' && !customElements.get('attention-explorer')) {
  customElements.define('attention-explorer', AttentionExplorer);
}
