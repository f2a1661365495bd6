// Types for attention-wasm/model (web/model.js): a tiny decoder-only,
// attention-only transformer that learns induction, and a small English
// encoder trained to fill in masked words.

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
  /** 'decoder': a causal model predicting the next word. */
  readonly kind: 'decoder';
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
export declare function loadModel(source?: 'induction' | ModelJSON, options?: LoadModelOptions): Promise<Model>;
/** 'english': the shipped trained English encoder (fetched only when asked for), or a saved encoder's JSON. */
export declare function loadModel(source: 'english' | EncoderJSON, options?: EncoderLoadOptions): Promise<EncoderModel>;
/** A URL or JSON text of a saved model: a Model or an EncoderModel by the file's kind. */
export declare function loadModel(source: string | URL, options?: LoadModelOptions | EncoderLoadOptions): Promise<Model | EncoderModel>;
/** model.headScores(options). */
export declare function headScores(model: Model, options?: ScoreOptions): HeadScore[][];
/** An encoder's heads scored on held-out grammar sentences. */
export declare function headScores(model: EncoderModel, options?: EncoderScoreOptions): EncoderHeadScore[][];

/** The English encoder's architecture. */
export interface EncoderConfig {
  /** Default 3. */
  layers: number;
  /** Default 4. */
  heads: number;
  /** Default 64. */
  dModel: number;
  /** Default 16. */
  dHead: number;
  /** Width of each block's MLP (default 256). */
  mlp: number;
  /** Most words forward() takes (default 32). */
  context: number;
}

/** What an encoder's trainStep() uses. */
export interface EncoderTrainingSettings {
  /** Sentences per step (default 64). */
  batch: number;
  /** Adam's step size after warm-up (default 0.002). */
  learningRate: number;
  /** Default 200. */
  warmup: number;
  /** The step at which the step size has fallen linearly to 0; 0 keeps it constant (default 0). */
  decaySteps: number;
  beta1: number;
  beta2: number;
  epsilon: number;
}

export interface CreateEncoderOptions extends Partial<EncoderConfig>, Partial<EncoderTrainingSettings> {
  /** Decides the parameters and the batches trainStep draws. Default 0. */
  seed?: number;
  /** Words by id: '<unk>' first and a '<mask>' somewhere. Default the English lexicon's (englishVocab). */
  vocab?: readonly string[];
  attention?: Attention;
}

export interface EncoderLoadOptions extends Partial<EncoderTrainingSettings> {
  seed?: number;
  attention?: Attention;
}

/** One layer of an encoder's forward pass, every matrix a copy. */
export interface EncoderLayerSteps {
  /** (n, dModel) the residual stream entering the layer */
  x: Matrix;
  /** (n, dModel) LayerNorm(x): the X that each head's wq, wk, wv multiply (q = xNorm wq) */
  xNorm: Matrix;
  /** per head: q, k, v, scores, scaled, logits (= scaled: no mask within a sentence), weights, output */
  heads: HeadSteps[];
  /** (n, dModel) the attention's contribution to the residual stream: heads side by side times W_O */
  output: Matrix;
  /** (n, dModel) the MLP's contribution */
  mlp: Matrix;
}

export interface EncoderForwardResult {
  tokens: Int32Array;
  /** The vocabulary's word for each id ('<unk>' for an unknown word). */
  words: string[];
  /** Positions of the words the vocabulary lacks. */
  unknown: number[];
  layers: EncoderLayerSteps[];
  /** attentions[layer][head]: (n, n) weights over exactly these words */
  attentions: Matrix[][];
  /** (n, dModel) after the last layer */
  residual: Matrix;
  /** (n, vocab) row i scores the word at i (meaningful where a word is masked) */
  logits: Matrix;
}

export interface FillGuess {
  word: string;
  id: number;
  /** Softmax probability. */
  p: number;
}

export interface EncoderScoreOptions {
  /** Held-out grammar sentences (default 400). */
  sentences?: number;
  /** Their seed (default the held-out seed, never used in training). */
  seed?: number;
}

/** A relation's score: the fraction of its cases where the head's most attended other word is the partner, beside the best fixed offset's. */
export interface RelationScore {
  score: number;
  /** The fraction of the same cases whose partner stands at `offset`. */
  baseline: number;
  offset: number;
  cases: number;
}

export interface EncoderHeadScore {
  layer: number;
  head: number;
  relations: {
    detNoun: RelationScore;
    detNounPastAdjectives: RelationScore;
    adjNoun: RelationScore;
    verbSubject: RelationScore;
    verbSubjectPastPhrase: RelationScore;
    verbObject: RelationScore;
    prepObject: RelationScore;
  };
  /** Mean attention weight on the previous word, the next word, the word itself, the first word. */
  positional: { previous: number; next: number; self: number; first: number };
  /** 'det → noun 0.97' when a relation beats its baseline by the margin, else 'next word 0.93'. */
  label: string;
  /** The relation the label names ('detNoun', ...), or null when the head is labelled by position. */
  relation: keyof EncoderHeadScore['relations'] | null;
  /** The positional weight the label names ('previous', 'next', 'self', 'first'), or null when labelled by a relation. */
  position: keyof EncoderHeadScore['positional'] | null;
}

export interface AgreementTally {
  right: number;
  cases: number;
  accuracy: number;
}

export interface EncoderJSON {
  format: 'attention-wasm-model';
  version: 1;
  kind: 'encoder';
  config: EncoderConfig;
  vocab: string[];
  dtype: 'float32' | 'float16' | 'int8';
  params: Record<string, string>;
  steps: number;
  /** The model card: data, size, steps, loss, agreement, every head's scores. */
  card?: Record<string, unknown>;
}

/** What createEncoder and loadModel('english') give (the class itself is not exported: its code loads with the first encoder). */
export interface EncoderModel {
  readonly kind: 'encoder';
  readonly vocab: readonly string[];
  readonly layers: number;
  readonly heads: number;
  readonly dModel: number;
  readonly dHead: number;
  readonly mlp: number;
  readonly context: number;
  readonly config: EncoderConfig;
  readonly training: Readonly<EncoderTrainingSettings>;
  readonly steps: number;
  /** The model card the JSON carried, or null. */
  readonly card: Record<string, unknown> | null;
  /** Ids of words, lower-cased and trimmed; unknown words are 0 ('<unk>'). */
  encode(words: readonly string[]): Int32Array;
  /** The words the vocabulary lacks and their positions; [] when it knows them all. */
  unknownWords(words: readonly string[]): { index: number; word: string }[];
  decode(ids: ArrayLike<number>): string[];
  /** One sentence of 1 .. context words or ids, every step kept. */
  forward(tokens: readonly string[] | Int32Array | readonly number[]): EncoderForwardResult;
  /** The k (default 5) likeliest words for position i were it masked. */
  fill(tokens: readonly string[] | Int32Array | readonly number[], i: number, k?: number): FillGuess[];
  /** Copies of one head's weights: q = forward().layers[layer].xNorm times wq. */
  head(layer: number, head: number): HeadWeights;
  /** One Adam step on a masked-LM batch of grammar sentences; returns its loss. */
  trainStep(): number;
  headScores(options?: EncoderScoreOptions): EncoderHeadScore[][];
  /** Held-out masked-LM loss and accuracy, and agreement (right form over wrong form). */
  evaluate(options?: EncoderScoreOptions): { loss: number; accuracy: number; agreement: { all: AgreementTally; attractor: AgreementTally; verbs: AgreementTally; determiners: AgreementTally } };
  toJSON(options?: { dtype?: 'float32' | 'float16' | 'int8'; card?: Record<string, unknown> | null } | string): EncoderJSON;
}

export declare const ENCODER_DEFAULTS: Readonly<EncoderConfig>;
export declare const ENCODER_TRAIN_DEFAULTS: Readonly<EncoderTrainingSettings>;
/** An untrained English encoder, deterministic from options.seed. */
export declare function createEncoder(options?: CreateEncoderOptions): Promise<EncoderModel>;
/** Words and punctuation of a text, lower-cased: 'The cat sat.' -> ['the', 'cat', 'sat', '.']. */
export declare function tokenize(text: string): string[];
