// story.js - attention-wasm/story: lets an article's prose drive its
// <attention-explorer> figures without script of its own. Importing it
// binds the page once the document is parsed; bindStory binds a part of a
// page added later.
//
//   <attention-explorer id="fig1" show="lines weights" controls="none"></attention-explorer>
//   <p data-attention-for="fig1" data-attention-on="view" data-attention-set="scale=2"
//      data-attention-highlight="weights cat">A larger scale sharpens what “cat” attends to.</p>
//   <button data-attention-for="fig1" data-attention-set="causal">Make it causal</button>
//
// The element's own API is what it uses: attributes, el.set() and
// el.highlight() (web/explorer.d.ts).

import { bindStory } from './story/bind.js';

export { bindStory };
export { parseHighlight, parseSet } from './story/parse.js';

if (typeof document !== 'undefined') {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => bindStory(document), { once: true });
  else bindStory(document);
}
