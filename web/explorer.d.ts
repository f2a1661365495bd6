// Types for attention-wasm/explorer (web/explorer.js), which defines the
// <attention-explorer> custom element when imported.
import type { Matrix, MatrixLike, WasmSource } from './attention.js';

export type ExplorerStep = 'all' | 'inputs' | 'projections' | 'scores' | 'scaled' | 'weights' | 'output';

/** A part of the view the `show` attribute can list. */
export type ExplorerPart = 'inputs' | 'projections' | 'scores' | 'scaled' | 'weights' | 'output' | 'lines' | 'model';

/**
 * Attention computed elsewhere (transformers.js with output_attentions, PyTorch/Hugging Face, BertViz's input):
 * attention[layer][head] an (n, n) array of weights, rows summing to 1; or a flat array with
 * shape [layers, heads, n, n] (or [layers, 1, heads, n, n]).
 */
export interface ExplorerAttentions {
  tokens: string[];
  attention: number[][][][] | MatrixLike[][] | Float32Array | number[];
  shape?: number[];
  /** Where the numbers come from ("bert-base-uncased"), said in the texts. */
  source?: string;
}

/** Which controls the element shows: all, the toolbar only (scale, causal, heads), or none. */
export type ExplorerControls = 'full' | 'minimal' | 'none';

/** How the element draws: as a figure in an article (the page's font and colours, no words of its own), as an app, or auto (a figure when controls is minimal or none). */
export type ExplorerAppearance = 'auto' | 'figure' | 'app';

/** What el.highlight() lights: a part's cells by row and column (index or token; absent: all), head an index from 0. */
export interface ExplorerHighlight {
  part: 'scores' | 'scaled' | 'weights' | 'output' | 'X' | 'Q' | 'K' | 'V' | 'lines';
  head?: number;
  row?: number | string | (number | string)[];
  col?: number | string | (number | string)[];
}

/** Where the rows of X come from: row i = draw i (the handbook), or one draw per distinct word. */
export type ExplorerEmbeddings = 'position' | 'word';

export interface ExplorerState {
  readonly tokens: string[];
  readonly X: Matrix;
  readonly WQ: Matrix;
  readonly WK: Matrix;
  readonly WV: Matrix;
  readonly Q: Matrix;
  readonly K: Matrix;
  readonly V: Matrix;
  /** With rope: Q and K turned by RoPE at their positions (heads side by side as in Q and K), what the scores are dot products of. */
  readonly QR?: Matrix;
  readonly KR?: Matrix;
  /** One Matrix with a single head; one per head otherwise. */
  readonly scores: Matrix | Matrix[];
  readonly scaled: Matrix | Matrix[];
  readonly weights: Matrix | Matrix[];
  readonly output: Matrix | Matrix[];
  /** softcap(scaled), -Infinity where a pair may not attend (causal, mask, window). */
  readonly logits: Matrix | Matrix[];
}

/**
 * The settings behind the numbers, with step, mask and edited. Those the
 * element's properties read back as they are (sizes, seed, causal, scale,
 * ...) are typed and documented there; tokens, window and rope read back
 * in the form the config holds them.
 */
export interface ExplorerChangeDetail extends Pick<AttentionExplorer, 'seed' | 'dModel' | 'dk' | 'dv' | 'heads' | 'kvHeads' | 'causal' | 'scale' | 'embeddings' | 'positions' | 'softcap' | 'queryOffset'> {
  tokens: string[];
  /** [left, right] keys around each query's position (-1: unbounded), or null. */
  window: [number, number] | null;
  /** RoPE in use: theta and the dimensions turned (d_k, or d_k - 1 when d_k is odd); null when off. */
  rope: { theta: number; dims: number; interleaved: false } | null;
  step: ExplorerStep;
  mask: boolean[][] | null;
  edited: boolean;
}

/** The largest sizes the explorer accepts (AttentionExplorer.LIMITS), for pages that build their own controls. */
export interface ExplorerLimits {
  /** Tokens in the sentence. */
  readonly tokens: number;
  /** d_model, the columns of X. */
  readonly dModel: number;
  /** d_k and d_v, per head. */
  readonly d: number;
  /** Heads, and kv heads. */
  readonly heads: number;
  /** Either side of the window, and the query offset's magnitude. */
  readonly window: number;
}

/** The detail of `attention-copy`: a table copied as text (to the clipboard, or into a text box where that is refused). */
export interface ExplorerCopyDetail {
  /** The table: "X", "WQ", "Q", "weights-0" (step and head), ... */
  matrix: string;
  format: 'numpy' | 'CSV' | 'Markdown';
  text: string;
}

/** The detail of `attention-save`: a picture saved as a download. */
export interface ExplorerSaveDetail {
  format: 'png' | 'svg';
  /** Bytes. */
  size: number;
  /** "image/png" or "image/svg+xml". */
  type: string;
}

export declare class AttentionExplorer extends HTMLElement {
  /** Where explorers load their wasm from when ../dist/ beside the module does not fit (set before the first one connects). */
  static wasm: WasmSource | null;
  /** The largest sizes the explorer accepts. */
  static readonly LIMITS: ExplorerLimits;
  /** Attribute `tokens`: the tokens separated by spaces. */
  tokens: string;
  /** Attribute `seed`: numpy seed of X, W_Q, W_K, W_V. */
  seed: number;
  /** Attribute `d-model`: columns of X. */
  dModel: number;
  /** Attribute `dk`: query/key size per head. */
  dk: number;
  /** Attribute `dv`: value size per head (default: dk). */
  dv: number;
  /** Attribute `heads`. */
  heads: number;
  /** Attribute `kv-heads`: key/value heads for grouped-query attention (default: heads). */
  kvHeads: number;
  /** Attribute `causal`. */
  causal: boolean;
  /** Attribute `scale` (default 1/sqrt(dk)). */
  scale: number;
  /** Attribute `step`: one step at a time, or "all". */
  step: ExplorerStep;
  /** Attribute `embeddings`: "position" (default) or "word". */
  embeddings: ExplorerEmbeddings;
  /** Attribute `positions`: add sinusoidal position encodings to X. */
  positions: boolean;
  /** Attribute `window`: "w" or "left right"; the property reads [left, right] or null. Set a string, an array or null. */
  window: [number, number] | null | string;
  /** Attribute `softcap`: logits become c·tanh(x/c); 0 is none. */
  softcap: number;
  /** Attribute `query-offset`: position of the first query among the keys. */
  queryOffset: number;
  /**
   * Attribute `rope`: q and k turned by RoPE (rotate_half pairs, Llama) at their positions before the
   * scores, computed by the library's `rope` option. `rope` or `rope=""` is theta 10000, `rope="500"`
   * theta 500, "false" or "0" off. RoPE turns pairs, so with an odd dk the first dk - 1 dimensions turn
   * and the last stays (partial rotary); dk = 1 is an error. The property reads theta or null (off);
   * set true, a theta, or false/null.
   */
  rope: number | null | boolean;
  /** Attribute `show`: the parts shown, separated by spaces (default all). */
  show: string;
  /** Attribute `controls`. */
  controls: ExplorerControls;
  /** Attribute `appearance`; null: auto. */
  appearance: ExplorerAppearance | null;
  /** Attribute `train`: shows the Train part, gradient descent on W_Q and W_K of head 1 toward a target pattern. */
  train: boolean;
  /** Attribute `train-target`: previous-token, first-token, same-word, attend-to:<word> or paint:<row>-<col>,...; null: the part's default. */
  trainTarget: string | null;
  /** Attribute `train-optimizer`; null: the part's default (adam). */
  trainOptimizer: 'adam' | 'sgd' | null;
  /** Attribute `train-lr`: the learning rate; null: the part's default. */
  trainLr: number | null;
  /**
   * Attribute `model`: "english" (the shipped encoder trained on English, fetched only then), "induction" (the shipped
   * tiny transformer) or the URL of a saved model; its heads fill the model view and its chosen head the rest.
   */
  model: string | null;
  /** Attribute `model-head`: "layer head" counted from 1, the model's head the lines and tables show; null: the strongest induction head (for "english", the best det → noun head). */
  modelHead: string | null;
  /** Attribute `model-mask`: with model="english", the index (from 0) of the word masked: the model view shows the model's top 5 guesses for it and where it looks; null: none. */
  modelMask: number | null;
  /** Attribute `attentions-src`: the URL of a JSON file of ExplorerAttentions. */
  attentionsSrc: string | null;
  /** Attention computed elsewhere, shown in the model view, the lines and the weights (no derivations); null: the element's own numbers. */
  attentions: ExplorerAttentions | null;
  /** Whether a click on a weight masks the pair (true) or explains it (false, the default). */
  masking: boolean;
  /** The settings behind the numbers on screen, defaults filled in; null before the first. */
  readonly config: Omit<ExplorerChangeDetail, 'step' | 'mask' | 'edited'> | null;
  /** Every matrix of the current computation; null before the first. */
  readonly state: ExplorerState | null;
  /** Replace the random draws. */
  inputs: { X?: MatrixLike; WQ?: MatrixLike; WK?: MatrixLike; WV?: MatrixLike };
  /** The keep-mask (n, n); null allows every pair. */
  mask: boolean[][] | null;
  /** Text shown for each step. */
  explanations: Partial<Record<Exclude<ExplorerStep, 'all'>, string>>;
  /** The current view as an SVG document. */
  toSVG(): string;
  /** Lights part of the figure (kept across recomputes); null clears. Throws RangeError for a part, head, row or column that is not there. */
  highlight(spec: ExplorerHighlight | null): void;
  /** Sets several properties at once (one recompute, as for any properties set in one task); resolves once it has run. */
  set(values: ExplorerSettings): Promise<void>;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-explorer': AttentionExplorer;
  }
  interface HTMLElementEventMap {
    'attention-change': CustomEvent<ExplorerChangeDetail>;
    'attention-copy': CustomEvent<ExplorerCopyDetail>;
    'attention-save': CustomEvent<ExplorerSaveDetail>;
  }
}

/** The settings set() takes: the element's settable properties. */
export type ExplorerSettings = Partial<Pick<AttentionExplorer, 'tokens' | 'seed' | 'dModel' | 'dk' | 'dv' | 'heads' | 'kvHeads' | 'causal' | 'scale' | 'step' | 'embeddings' | 'positions' | 'window' | 'softcap' | 'queryOffset' | 'rope' | 'show' | 'controls' | 'appearance' | 'train' | 'trainTarget' | 'trainOptimizer' | 'trainLr' | 'inputs' | 'mask' | 'masking' | 'explanations'>>;

/**
 * `<attention-explorer>` in React 19's JSX: its settings as properties (React 19 assigns a prop to
 * the element's property of that name), `class`/`style`/`id` and the other HTML attributes, and its
 * events as `onattention-change`, `onattention-copy`, `onattention-save` (React 19 listens for the
 * event named by what follows `on`).
 */
export type AttentionExplorerJSX = ExplorerSettings & {
  class?: string;
  className?: string;
  id?: string;
  slot?: string;
  hidden?: boolean;
  style?: { [property: string]: string | number | undefined };
  children?: unknown;
  key?: string | number | null;
  ref?: unknown;
  'onattention-change'?: (event: CustomEvent<ExplorerChangeDetail>) => void;
  'onattention-copy'?: (event: CustomEvent<ExplorerCopyDetail>) => void;
  'onattention-save'?: (event: CustomEvent<ExplorerSaveDetail>) => void;
  [attribute: `data-${string}` | `aria-${string}`]: string | number | boolean | undefined;
};

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'attention-explorer': AttentionExplorerJSX;
    }
  }
}
