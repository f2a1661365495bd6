// Types for attention-wasm/explorer (web/explorer.js), which defines the
// <attention-explorer> custom element when imported.
import type { Matrix, MatrixLike } from './attention.js';

export type ExplorerStep = 'all' | 'inputs' | 'projections' | 'scores' | 'scaled' | 'weights' | 'output';

export interface ExplorerState {
  readonly tokens: string[];
  readonly X: Matrix;
  readonly WQ: Matrix;
  readonly WK: Matrix;
  readonly WV: Matrix;
  readonly Q: Matrix;
  readonly K: Matrix;
  readonly V: Matrix;
  /** One Matrix with a single head; one per head otherwise. */
  readonly scores: Matrix | Matrix[];
  readonly scaled: Matrix | Matrix[];
  readonly weights: Matrix | Matrix[];
  readonly output: Matrix | Matrix[];
}

export interface ExplorerChangeDetail {
  tokens: string[];
  seed: number;
  dModel: number;
  dk: number;
  dv: number;
  heads: number;
  kvHeads: number;
  causal: boolean;
  scale: number;
  step: ExplorerStep;
  mask: boolean[][] | null;
  edited: boolean;
}

export declare class AttentionExplorer extends HTMLElement {
  /** Where explorers load their wasm from when ../dist/ beside the module does not fit (set before the first one connects). */
  static wasm: URL | string | BufferSource | Response | WebAssembly.Module | null;
  /** Tokens separated by spaces (attribute `tokens`). */
  tokens: string;
  seed: number;
  dModel: number;
  dk: number;
  dv: number;
  heads: number;
  kvHeads: number;
  causal: boolean;
  scale: number;
  step: ExplorerStep;
  /** Shows the Train part (attribute `train`): gradient descent on W_Q and W_K of head 1 toward a target pattern. */
  train: boolean;
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
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-explorer': AttentionExplorer;
  }
  interface HTMLElementEventMap {
    'attention-change': CustomEvent<ExplorerChangeDetail>;
  }
}
