// Type definitions for swapformer (hand-written; see README.md for the full reference).

/** Where to find dist/swapformer.wasm: a URL (or string resolved against the
 * page / cwd), the bytes, or a compiled module. Defaults to the file shipped
 * next to the bindings. */
export type WasmSource = URL | string | ArrayBuffer | ArrayBufferView | WebAssembly.Module;

export type PositionName = 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 'none' | (string & {});
export type NormName = 'layernorm' | 'rmsnorm' | (string & {});
export type Activation = 'gelu' | 'gelu_tanh' | 'relu' | 'swiglu' | 'geglu';

export interface SinusoidalOptions {
  /** Wavelength base: PE[t, 2i] = sin(t / base^(2i/dModel)). Default 10000. */
  base?: number;
}

export interface RopeOptions {
  /** theta_i = base^(-2i/headDim). Default 10000. */
  base?: number;
  /** 'interleaved' rotates pairs (2i, 2i+1), as in the RoFormer paper (default);
   * 'half' rotates pairs (i, i + headDim/2), the rotate_half of HF / LLaMA. */
  style?: 'interleaved' | 'half';
  /** Context extension: position interpolation, NTK-aware base change, or YaRN. */
  scaling?:
    | { type: 'linear'; factor: number }
    | { type: 'ntk'; factor: number }
    | { type: 'yarn'; factor: number; originalMaxLen: number; betaFast?: number; betaSlow?: number };
}

export interface Config {
  vocabSize: number;
  dModel: number;
  heads: number;
  /** May be 0: embeddings, positions and the final norm only. */
  layers: number;
  ffDim: number;
  /** Rows of the learned position table. Default 512. */
  maxLen?: number;
  position: PositionName;
  positionOptions?: SinusoidalOptions | RopeOptions | Record<string, never>;
  norm: NormName;
  normPlacement: 'pre' | 'post';
  /** Default: true for pre-norm, false for post-norm. */
  finalNorm?: boolean;
  /** Default 1e-5. */
  eps?: number;
  activation: Activation;
  /** Multiply token embeddings by sqrt(dModel) before positions are added. Default false. */
  scaleEmbedding?: boolean;
  /** An output head head.weight [vocabSize, dModel] (+ head.bias): forward returns logits, predict() their argmax. Default false. */
  outputHead?: boolean;
}

/** A config with every default filled in. */
export interface ResolvedConfig extends Required<Omit<Config, 'positionOptions'>> {
  positionOptions: SinusoidalOptions | RopeOptions | Record<string, never>;
}

export type Weights = Record<string, Float32Array>;

export interface CreateOptions {
  /** Tensors by name (README "Weights"); Linear weights are [out, in]. */
  weights?: Record<string, Float32Array | ArrayLike<number>>;
  /** Initialises every weight not given; an integer in [0, 2^53). Default 0. */
  seed?: number;
  wasm?: WasmSource;
}

export interface LoadOptions {
  wasm?: WasmSource;
}

export interface ForwardOptions {
  /** Also return the attention probabilities of every layer. */
  outputAttentions?: boolean;
  /** Also return the residual stream after the embeddings and after each layer (before the final norm). */
  outputHiddenStates?: boolean;
}

export interface Tensor<S extends number[] = number[]> {
  data: Float32Array;
  shape: S;
}

export interface ForwardResult extends Tensor<[batch: number, tokens: number, dModel: number]> {
  /** Per layer: [batch, heads, tokens, tokens]; rows and columns of padding are 0. */
  attentions?: Tensor<[batch: number, heads: number, tokens: number, tokens: number]>[];
  /** With config.outputHead: per-position logits over the vocabulary, [B, T, vocabSize]; padded rows 0. */
  logits?: Tensor<[batch: number, tokens: number, vocabSize: number]>;
  /** layers + 1 entries: the embeddings (with positions), then the stream after each layer, before the final norm. */
  hiddenStates?: Tensor<[batch: number, tokens: number, dModel: number]>[];
}

/** One sequence of token ids, or a batch of sequences of any lengths. */
export type Ids = ArrayLike<number> | ArrayLike<number>[];

export type ErrorCode =
  | 'BAD_CONFIG'
  | 'BAD_FILE'
  | 'BAD_WEIGHTS'
  | 'BAD_TOKEN'
  | 'SEQUENCE_TOO_LONG'
  | 'OUT_OF_MEMORY'
  | 'BAD_ARGUMENT'
  | 'DISPOSED'
  | 'UNSUPPORTED'
  | 'PLUGIN_EXISTS'
  | 'NOT_FOUND'
  | 'BAD_PLUGIN';

export class SwapformerError extends Error {
  readonly name: 'SwapformerError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

export class Encoder {
  private constructor();
  /** The resolved config (frozen). */
  readonly config: Readonly<ResolvedConfig>;
  /** Longest sequence the position plugin encodes: maxLen for 'learned', else Infinity. */
  readonly maxSequenceLength: number;
  readonly disposed: boolean;
  /** Hidden states [B, T, dModel]; a single sequence gives B = 1. Rows past a sequence's end are 0. */
  forward(ids: Ids, options?: ForwardOptions): ForwardResult;
  /** Argmax of the head's logits per position: Int32Array for one sequence, one per sequence for a batch. Needs outputHead. */
  predict(ids: ArrayLike<number>): Int32Array;
  predict(ids: ArrayLike<number>[]): Int32Array[];
  /** What the position plugin adds to the embeddings at positions 0..length-1 (zeros for rope, alibi, none). */
  positionVectors(length: number): Tensor<[length: number, dModel: number]>;
  /** Raw scores q.k/sqrt(headDim) + the plugin's bias with the same q and k (dModel each, default zeros)
   * at every position: RoPE's depend on j - i alone; with q = k = 0, ALiBi's bias matrix. */
  positionScores(probe: { q?: ArrayLike<number>; k?: ArrayLike<number>; length: number }): Tensor<[heads: number, length: number, length: number]>;
  /** Copies of every weight, row-major, Linear weights [out, in]. */
  getWeights(): Weights;
  /** Shape of every weight, in file order. */
  weightShapes(): Record<string, number[]>;
  /** The model file (safetensors, F32, config in the metadata). */
  save(): Uint8Array;
  /** Frees the encoder's memory; idempotent. Later calls throw DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** What this engine supports: SIMD128 is required; with relaxed SIMD the
 * default wasm is dist/swapformer-relaxed.wasm (fused multiply-add). */
export const features: Readonly<{ simd: boolean; relaxedSimd: boolean }>;

export function createEncoder(config: Config, options?: CreateOptions): Promise<Encoder>;
export function loadModel(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<Encoder>;
/** The build a wasm source runs ('relaxed-simd', 'simd128', or 'custom' for a
 * wasm option) and the bytes of wasm memory its instance holds now. */
export function runtimeInfo(options?: LoadOptions): Promise<{ build: 'relaxed-simd' | 'simd128' | 'custom'; memoryBytes: number }>;
export function listPlugins(options?: LoadOptions): Promise<{ position: string[]; norm: string[] }>;
