// Types for attention-wasm/story (web/story.js), which binds the page's
// [data-attention-for] elements when imported.
import type { ExplorerHighlight } from './explorer.js';

/**
 * Binds every [data-attention-for] under root: data-attention-set and
 * data-attention-highlight apply to the named <attention-explorer> on click,
 * or while the element is in view with data-attention-on="view". Returns
 * unbind(), which also undoes the active steps.
 */
export declare function bindStory(root?: Document | Element, options?: { threshold?: number }): () => void;

/** data-attention-set text -> attribute name -> text (null: remove the attribute). */
export declare function parseSet(text: string): Map<string, string | null>;

/** data-attention-highlight text ("weights cat sat", "* " for all, "head=1") -> a highlight, or null when empty. */
export declare function parseHighlight(text: string): ExplorerHighlight | null;
