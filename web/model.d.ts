// Types for attention-wasm/model (web/model.js): a tiny decoder-only,
// attention-only transformer that learns induction.

import type { Attention, Matrix } from './attention.js';

/** The architecture. */
export interface ModelConfig {
  /** Attention layers (default 2). */
  layers: number;
  /** Heads per layer (default 4). */
  heads: number;
  /** Width of the residual stream (default 64). */
  dModel: number;
  /** Width of each head's queries, keys and values (default 16). */
  dHead: number;
  /** Most tokens forward() takes (default 32). */
  context: number;
}

/** What trainStep() uses. */
export interface TrainingSettings {
  /** Sequences per step (default 16). */
  batch: number;
  /** Adam's step size after warm-up (default 0.01). */
  learningRate: number;
  /** Steps over which the step size rises linearly from 0 (default 100). */
  warmup: number;
  /** The step at which the step size has fallen linearly to 0; 0 keeps it constant (default 0). */
  decaySteps: number;
  /** Loss weight of the predictions outside the repeat (random words), against 1 on the repeat; in [0, 1] (default 0). */
  otherWeight: number;
  /** Default 0.9. */
  beta1: number;
  /** Default 0.99. */
  beta2: number;
  /** Default 1e-8. */
  epsilon: number;
}

export interface CreateModelOptions extends Partial<ModelConfig>, Partial<TrainingSettings> {
  /** Decides the parameters and the batches trainStep draws; an integer in [0, 2^32 - 1]. Default 0. */
  seed?: number;
  /** Words by id; id 0 stands for any word not in it. Default WORDS. */
  vocab?: readonly string[];
  /** An instance to run on; default one shared instance of loadAttention({ deterministic: true }). */
  attention?: Attention;
}

export interface LoadModelOptions extends Partial<TrainingSettings> {
  /** Seed of trainStep's batches, if the loaded model goes on training. Default 0. */
  seed?: number;
  attention?: Attention;
}

/** One head of one layer in a forward pass, every matrix a copy. */
export interface HeadSteps {
  /** (n, dHead) x W_Q of this head */
  q: Matrix;
  /** (n, dHead) */
  k: Matrix;
  /** (n, dHead) */
  v: Matrix;
  /** (n, n) q k^T */
  scores: Matrix;
  /** (n, n) scores / sqrt(dHead) */
  scaled: Matrix;
  /** (n, n) what enters the softmax: scaled, -Infinity above the diagonal (causal) */
  logits: Matrix;
  /** (n, n) softmax of the logits: the head's attention pattern */
  weights: Matrix;
  /** (n, dHead) weights v */
  output: Matrix;
}

export interface LayerSteps {
  /** (n, dModel) the residual stream entering the layer */
  x: Matrix;
  heads: HeadSteps[];
  /** (n, dModel) what the layer adds to the residual stream: its heads side by side times W_O */
  output: Matrix;
}

export interface ForwardResult {
  /** The ids the model ran on. */
  tokens: Int32Array;
  /** The vocabulary's word for each id ('<unk>' for 0). */
  words: string[];
  layers: LayerSteps[];
  /** attentions[layer][head]: (n, n) weights, the same objects as layers[layer].heads[head].weights */
  attentions: Matrix[][];
  /** (n, dModel) the residual stream after the last layer */
  residual: Matrix;
  /** (n, vocab) row i scores the word after position i */
  logits: Matrix;
}

/** A head's weights, copies: x W_Q gives its queries, its output times wo its share of the layer's output. */
export interface HeadWeights {
  /** (dModel, dHead) */
  wq: Matrix;
  /** (dModel, dHead) */
  wk: Matrix;
  /** (dModel, dHead) */
  wv: Matrix;
  /** (dHead, dModel) this head's rows of W_O */
  wo: Matrix;
}

/** Olsson et al. (2022) head scores, each a mean attention weight on repeated random sequences. */
export interface HeadScore {
  /** From position i to i - 1. */
  previousToken: number;
  /** From a word in the repeat to the position after its earlier occurrence. */
  induction: number;
  /** From position i to position 0. */
  firstToken: number;
}

export interface ScoreOptions {
  /** Repeated sequences (2 x 16 words) to average over. Default 64. */
  sequences?: number;
  /** Seed of their draw. Default 0. */
  seed?: number;
}

export interface Prediction {
  word: string;
  id: number;
  probability: number;
}

/** The saved form; params are base64 strings. */
export interface ModelJSON {
  format: 'attention-wasm-model';
  version: 1;
  config: ModelConfig;
  vocab: string[];
  dtype: 'float32' | 'float16' | 'int8';
  params: Record<string, string>;
  steps: number;
}

export declare class Model {
  private constructor();
  /** Words by id; id 0 ('<unk>') stands for any word not in it. */
  readonly vocab: readonly string[];
  readonly layers: number;
  readonly heads: number;
  readonly dModel: number;
  readonly dHead: number;
  readonly context: number;
  readonly config: ModelConfig;
  readonly training: Readonly<TrainingSettings>;
  /** Training steps taken, including those before the model was saved. */
  readonly steps: number;
  /** Ids of words, lower-cased and trimmed; unknown words are 0. */
  encode(words: readonly string[]): Int32Array;
  decode(ids: ArrayLike<number>): string[];
  /** One sequence of 1 .. context words or ids, every step kept. RangeError past the context or for a bad id. */
  forward(tokens: readonly string[] | Int32Array | readonly number[]): ForwardResult;
  /** The k (default 3) most likely next words at every position. */
  predict(tokens: readonly string[] | Int32Array | readonly number[], k?: number): Prediction[][];
  /** Copies of one head's weights (layer and head from 0). */
  head(layer: number, head: number): HeadWeights;
  /** One Adam step on a batch of the repeat task drawn from the model's seeded generator; returns its loss. */
  trainStep(): number;
  /** [layer][head] scores on repeated random sequences. */
  headScores(options?: ScoreOptions): HeadScore[][];
  /** Next-word accuracy and mean loss on the repeat of 2 x 16 sequences, after its first word. */
  evaluate(options?: ScoreOptions): { accuracy: number; loss: number };
  /** dtype 'float32' (exact, default), 'float16' or 'int8' (a float32 scale per row). */
  toJSON(options?: { dtype?: 'float32' | 'float16' | 'int8' } | string): ModelJSON;
}

/** The default vocabulary: '<unk>' then 255 common English words. */
export declare const WORDS: readonly string[];
/** WORDS[0]. */
export declare const UNKNOWN: '<unk>';
export declare const MODEL_DEFAULTS: Readonly<ModelConfig>;
export declare const TRAIN_DEFAULTS: Readonly<TrainingSettings>;

/** An untrained model, deterministic from options.seed. */
export declare function createModel(options?: CreateModelOptions): Promise<Model>;
/** 'induction' (default: the shipped trained model), a URL, JSON text or a ModelJSON object. */
export declare function loadModel(source?: 'induction' | string | URL | ModelJSON, options?: LoadModelOptions): Promise<Model>;
/** model.headScores(options). */
export declare function headScores(model: Model, options?: ScoreOptions): HeadScore[][];
