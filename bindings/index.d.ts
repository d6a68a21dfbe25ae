// Type definitions for swapformer (hand-written; README.md is the reference).
//
// They say exactly what the runtime accepts and returns, and check under
// `tsc --strict` both in a browser project (lib ES2022 + DOM, no @types/node,
// no skipLibCheck) and in a Node project (lib ES2022 + @types/node, no DOM):
// tests/types.test.js compiles tests/types/*.ts, with the mistakes they must
// refuse marked `// @ts-expect-error`, under both.

// ------------------------------------------------------------------ inputs

/** A typed array of numbers. BigInt64Array and BigUint64Array are refused (BigInts are not numbers). */
export type NumberTypedArray =
  | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array
  | Int32Array | Uint32Array | Float32Array | Float64Array;

/** What the bindings read as numbers: an array of numbers or a typed array of numbers
 * (copied once, element by element; any other array-like is refused). */
export type Numbers = readonly number[] | NumberTypedArray;

/** One sequence of token ids: integers in [0, vocabSize). */
export type Sequence = Numbers;
/** A batch: an array of sequences of any lengths (at least one, none empty). */
export type Batch = readonly Sequence[];
/** One sequence or a batch. */
export type Ids = Sequence | Batch;

/** A compiled WebAssembly.Module. Named structurally: a Node project without the DOM lib declares no
 * WebAssembly namespace, and the DOM's Module is an empty interface (hence `& object`: no primitives). */
export type CompiledWasm = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: any) => infer M } } ? M & object : object;

/** Where a wasm build comes from: a URL (a string is resolved against the page,
 * or the working directory in Node), its bytes, or a compiled module. */
export type WasmSource = URL | string | ArrayBuffer | ArrayBufferView | CompiledWasm;

// ------------------------------------------------------------------ config

export type PositionName = 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5' | 'none';
export type NormName = 'layernorm' | 'rmsnorm';
export type Activation = 'gelu' | 'gelu_tanh' | 'relu' | 'silu' | 'swiglu' | 'geglu' | 'geglu_tanh';

export interface SinusoidalOptions {
  /** Wavelength base: PE[t, 2i] = sin(t / base^(2i/dModel)). Default 10000. */
  base?: number;
}

export interface LearnedOptions {
  /** The first row of embed.positions used (RoBERTa and XLM-R start at 2). Default 0. */
  offset?: number;
}

export type RopeScaling =
  | { type: 'none' }
  | { type: 'linear'; factor: number }
  | { type: 'ntk'; factor: number }
  | { type: 'yarn'; factor: number; originalMaxLen: number; betaFast?: number; betaSlow?: number }
  | { type: 'dynamic'; factor: number; originalMaxLen: number };

export interface RopeOptions {
  /** theta_i = base^(-2i/headDim). Default 10000. */
  base?: number;
  /** The base on local (sliding-window) layers. Default: base. */
  localBase?: number;
  /** 'interleaved' rotates pairs (2i, 2i+1), as in the RoFormer paper (default);
   * 'half' rotates pairs (i, i + headDim/2), the rotate_half of HF / LLaMA. */
  style?: 'interleaved' | 'half';
  /** Context extension: position interpolation, NTK-aware base change, YaRN, dynamic NTK. */
  scaling?: RopeScaling;
}

export interface T5Options {
  /** Relative position buckets, a multiple of 4. Default 32. */
  buckets?: number;
  /** Offsets beyond this share the last bucket; must exceed buckets / 4. Default 128. */
  maxDistance?: number;
}

/** Position plugins that take no options. */
export type NoOptions = Record<string, never>;

/** The position plugin and its options, discriminated by `position`. */
export type PositionConfig =
  | { position: 'sinusoidal'; positionOptions?: SinusoidalOptions }
  | { position: 'learned'; positionOptions?: LearnedOptions }
  | { position: 'rope'; positionOptions?: RopeOptions }
  | { position: 't5'; positionOptions?: T5Options }
  | { position: 'alibi'; positionOptions?: NoOptions }
  | { position: 'none'; positionOptions?: NoOptions };

/** A second position slot for schemes that only bias the attention scores, added to what
 * `position` does (MPNet: learned positions and T5 buckets; T5: none and T5 buckets). */
export type RelativeBiasConfig =
  | { relativeBias?: 'none'; relativeBiasOptions?: NoOptions }
  | { relativeBias: 't5'; relativeBiasOptions?: T5Options }
  | { relativeBias: 'alibi'; relativeBiasOptions?: NoOptions };

/** A head's activation after head.dense. */
export type HeadActivation = 'identity' | 'tanh' | 'relu' | 'gelu' | 'gelu_tanh' | 'silu';

/** config.head: a task head after the encoder (README "Heads"). Its tensors: head.dense [dModel, dModel]
 * (+ bias), head.norm [dModel] (+ bias), head.out [labels, dModel] (+ bias; an mlm head: the token table
 * itself when tied, head.out.bias [vocabSize]). Biases absent from a file count as zero. */
export type HeadConfig = {
  /** sequence: one row per sequence (pooled); token: every token; mlm: chosen tokens, over the vocabulary. */
  task: 'sequence' | 'token' | 'mlm';
  /** Outputs of head.out: classes (sequence, token); for mlm the vocabulary (vocabSize). */
  labels?: number;
  /** sequence: the first row, or the mean of the real rows. Default 'cls'. */
  pooling?: 'cls' | 'mean';
  /** A [dModel, dModel] Linear first. Default false. */
  dense?: boolean;
  /** After head.dense. Default 'identity'. */
  activation?: HeadActivation;
  /** After the activation. Default 'none'. */
  norm?: NormName | 'none';
  /** The head norm's eps. Default 1e-12. */
  normEps?: number;
  /** mlm: the vocabulary projection is the token table (no head.out.weight). Default true for mlm. */
  tied?: boolean;
};

/** Every config field but the position. Unknown fields are refused (BAD_CONFIG). */
export interface ConfigBase {
  vocabSize: number;
  dModel: number;
  heads: number;
  /** May be 0: embeddings, positions and the final norm only. */
  layers: number;
  ffDim: number;
  /** Rows of the learned position table (and the longest sequence it encodes). Default 512. */
  maxLen?: number;
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
  /** Size of one head. Default dModel / heads (which must then divide). */
  headDim?: number;
  /** Scores are q.k x attnScale. Default 1 / sqrt(headDim). */
  attnScale?: number;
  /** Rows of a token-type (segment) embedding table; 0 for none. Default 0. */
  typeVocabSize?: number;
  /** A norm over the embeddings (BERT's embeddings.LayerNorm). Default false. */
  embedNorm?: boolean;
  /** false: layer 0 has no attention norm (ModernBERT; pre-norm only). Default true. */
  firstAttnNorm?: boolean;
  /** Keys each side that local layers attend to. Default 0 (no local layers). */
  localWindow?: number;
  /** The local (sliding-window) layers, increasing indices; needs localWindow. Default []. */
  localLayers?: readonly number[];
  /** QK-norm: a norm plugin applied per head to q and k after projection, before RoPE
   * (layers.{i}.attn.q_norm / k_norm, [headDim]), or 'none'. Default 'none'. */
  qkNorm?: NormName | 'none';
  /** The residual stream's weight a: post-norm x = N(a x + f(x)), pre-norm x = a x + f(N(x)).
   * 'deepnorm': a = (2 layers)^(1/4), and DeepNet's initialisation (beta = (8 layers)^(-1/4))
   * of attn.v, attn.o and the FFN when weights come from seed. Default 1. */
  residualScale?: number | 'deepnorm';
  /** A task head after the encoder, or null. Default null. */
  head?: HeadConfig | null;
}

/** A config: the common fields, one position plugin with its own options, and optionally a relative bias. */
export type Config = ConfigBase & PositionConfig & RelativeBiasConfig;

/** What each position plugin's options resolve to, every default filled in. */
export type ResolvedPositionConfig =
  | { position: 'sinusoidal'; positionOptions: Readonly<Required<SinusoidalOptions>> }
  | { position: 'learned'; positionOptions: Readonly<Required<LearnedOptions>> }
  | { position: 'rope'; positionOptions: Readonly<{ base: number; style: 'interleaved' | 'half'; localBase?: number; scaling?: Readonly<RopeScaling> }> }
  | { position: 't5'; positionOptions: Readonly<Required<T5Options>> }
  | { position: 'alibi'; positionOptions: NoOptions }
  | { position: 'none'; positionOptions: NoOptions };

/** A resolved head: every default filled in (pooling for a sequence head, normEps with a norm, tied for mlm). */
export type ResolvedHeadConfig = Readonly<{
  task: 'sequence' | 'token' | 'mlm'; labels: number; dense: boolean; activation: HeadActivation; norm: NormName | 'none';
  pooling?: 'cls' | 'mean'; normEps?: number; tied?: boolean;
}>;

/** The config an encoder runs (deeply frozen), every default filled in; headDim
 * and attnScale only when they were given. */
export type ResolvedConfig = Readonly<
  Required<Omit<ConfigBase, 'headDim' | 'attnScale' | 'localLayers' | 'head'>> &
  Pick<ConfigBase, 'headDim' | 'attnScale'> & { localLayers: readonly number[]; head: ResolvedHeadConfig | null }
> & ResolvedPositionConfig & (
  | { relativeBias: 'none' | 'alibi'; relativeBiasOptions: NoOptions }
  | { relativeBias: 't5'; relativeBiasOptions: Readonly<Required<T5Options>> }
);

// ------------------------------------------------------------------ options and results

/** Tensors by name (README "Weights"), an object or a Map; Linear weights are [out, in]. */
export type WeightsInput = { readonly [name: string]: Numbers } | Map<string, Numbers>;

/** Copies of an encoder's tensors by name, row-major. */
export type Weights = Record<string, Float32Array>;

/** How an encoder holds its weights: float32, or int8 per row with a float32 scale
 * (the Linear weights, token table and output head; activations quantized per row). */
export type Dtype = 'f32' | 'q8';

export interface CreateOptions {
  /** Default 'f32'. */
  dtype?: Dtype;
  /** Tensors by name; every tensor not given is initialised from seed. */
  weights?: WeightsInput;
  /** Initialises every weight not given; an integer in [0, 2^53). Default 0. */
  seed?: number;
  /** Seed initialisation: outputScale multiplies the output projections (attn.o, ffn.down);
   * 'depth' = 1 / sqrt(2 layers), the pre-norm mitigation of a growing stream. */
  init?: { outputScale?: 'depth' | number };
  /** This call's wasm, overriding configure() (runtimeInfo reports build 'custom'). */
  wasm?: WasmSource;
  /** Threads for this encoder's forward passes (1 to 64). Default: the machine's cores, capped at 8,
   * where shared memory exists (Node; a cross-origin-isolated page); 1 elsewhere, silently. */
  threads?: number;
}

export interface LoadOptions {
  /** This call's wasm, overriding configure() (runtimeInfo reports build 'custom'). */
  wasm?: WasmSource;
  /** Threads for this encoder's forward passes; as in CreateOptions. */
  threads?: number;
}

export interface ForwardOptions {
  /** Token type (segment) ids, the shape of ids (one sequence, or one per sequence), each
   * below config.typeVocabSize; default 0. A model without token types takes only zeros. */
  typeIds?: Ids;
  /** Also return the attention probabilities of every layer. */
  outputAttentions?: boolean;
  /** Also return the residual stream after the embeddings and after each layer (before the final norm). */
  outputHiddenStates?: boolean;
  /** Layers run as the identity (the residual stream passes through): ablations. */
  skipLayers?: Numbers;
  /** Run config.head (a sequence or token head) after the encoder: result.head. */
  head?: boolean;
  /** An mlm head's positions: a number[] for one sequence, one per sequence for a batch: result.head [R, vocabSize]. */
  headPositions?: Numbers | readonly Numbers[];
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
  /** With options.head / headPositions: the raw logits of config.head: [B, labels] (sequence),
   * [B, T, labels] (token; padded rows 0) or [R, vocabSize] (mlm, the positions in order). */
  head?: Tensor;
}

/** What predict returns for ids of type I: an Int32Array for one sequence, one
 * per sequence for a batch, and either when the type does not say which (Ids, any[]). */
export type Prediction<I> =
  I extends Sequence ? (0 extends (1 & I[number]) ? Int32Array | Int32Array[] : Int32Array)
  : I extends Batch ? Int32Array[]
  : Int32Array | Int32Array[];

// ------------------------------------------------------------------ errors

/** Every code a SwapformerError can carry (README "Errors"; ERROR_CODES at run time). */
export type ErrorCode =
  | 'BAD_CONFIG'
  | 'BAD_FILE'
  | 'BAD_WEIGHTS'
  | 'BAD_TOKEN'
  | 'SEQUENCE_TOO_LONG'
  | 'OUT_OF_MEMORY'
  | 'BAD_ARGUMENT'
  | 'PLUGIN_EXISTS'
  | 'NOT_FOUND'
  | 'BAD_PLUGIN'
  | 'NON_FINITE'
  | 'UNSUPPORTED_MODEL'
  | 'DISPOSED'
  | 'UNSUPPORTED'
  | 'WASM_LOAD'
  | 'INTERNAL'
  | 'NETWORK'
  | 'BUSY';

/** Every error swapformer throws. `code` is stable; `message` names the field at fault. */
export class SwapformerError extends Error {
  readonly name: 'SwapformerError';
  /** Stable; see README "Errors". A WASM_LOAD error's `cause` is the engine's or the fetch's own error. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

/** Every ErrorCode, as the runtime knows them. */
export const ERROR_CODES: readonly ErrorCode[];

// ------------------------------------------------------------------ encoder

/** `[Symbol.dispose]` where the lib declares Symbol.dispose (lib esnext.disposable,
 * or @types/node): `using enc = await createEncoder(...)`; nothing otherwise. */
type DisposeMember = SymbolConstructor extends { readonly dispose: infer S extends symbol } ? { [K in S]: () => void } : {};

export interface Encoder extends DisposeMember {}

export class Encoder {
  private constructor();
  /** The resolved config (deeply frozen). */
  readonly config: ResolvedConfig;
  /** How the weights are held. */
  readonly dtype: Dtype;
  /** Longest sequence the position plugin encodes: maxLen for 'learned', else Infinity. */
  readonly maxSequenceLength: number;
  readonly disposed: boolean;
  /** Hidden states [B, T, dModel]; a single sequence gives B = 1. Rows past a sequence's end are 0. */
  forward(ids: Ids, options?: ForwardOptions): ForwardResult;
  /** forward without blocking the calling thread where the runtime has threads (the pass runs in a
   * worker). The async calls of a runtime run one at a time in the order they were made; a sync call
   * while a pass runs throws BUSY; dispose() meanwhile settles the promise with DISPOSED. Without
   * threads it computes on this thread, in its turn. */
  forwardAsync(ids: Ids, options?: ForwardOptions): Promise<ForwardResult>;
  /** Argmax of the head's logits per position: an Int32Array for one sequence,
   * one per sequence (unpadded) for a batch. Needs config.outputHead. */
  predict<I extends Ids>(ids: I): Prediction<I>;
  /** What the position plugin adds to the embeddings at positions 0..length-1 (zeros for rope, alibi, t5, none). */
  positionVectors(length: number): Tensor<[length: number, dModel: number]>;
  /** Raw scores q.k x attnScale + the plugin's bias with the same q and k (heads x headDim each, dModel unless headDim is set; default zeros)
   * at every position: RoPE's depend on j - i alone; with q = k = 0, ALiBi's bias matrix. */
  positionScores(probe: { q?: Numbers; k?: Numbers; length: number }): Tensor<[heads: number, length: number, length: number]>;
  /** Copies of every weight, row-major, Linear weights [out, in]. */
  getWeights(): Weights;
  /** Shape of every weight, in file order. */
  weightShapes(): Record<string, number[]>;
  /** The model file (safetensors, F32, config in the metadata). */
  save(): Uint8Array;
  /** The same weights under changed config fields ({...config, ...changes}): a position plugin swapped, removed
   * or rescaled. A plugin swapped in without options gets its defaults; a swapped-out plugin's tables are dropped,
   * a new plugin's start at zero, every other tensor is kept bit for bit. A new Encoder (dispose both). */
  withConfig(changes: Partial<ConfigBase> & Partial<PositionConfig> & Partial<RelativeBiasConfig>, options?: { dtype?: Dtype; threads?: number; wasm?: WasmSource }): Promise<Encoder>;
  /** Frees the encoder's wasm memory; idempotent. Later calls throw DISPOSED.
   * Where the runtime has no FinalizationRegistry (Cloudflare Workers), the only way to free it. */
  dispose(): void;
}

// ------------------------------------------------------------------ functions

/** What this engine supports: SIMD128 is required; with relaxed SIMD the
 * default build is dist/swapformer-relaxed.wasm (fused multiply-add). */
export const features: Readonly<{ simd: boolean; relaxedSimd: boolean }>;

/** A build's wasm, one source per build. */
export interface WasmPaths {
  /** dist/swapformer.wasm (SIMD128): a URL, bytes or a compiled module (a Worker's imported .wasm). */
  simd?: WasmSource;
  /** dist/swapformer-relaxed.wasm (relaxed SIMD), used where the engine has relaxed SIMD. */
  relaxed?: WasmSource;
  /** dist/swapformer-mt.wasm, the threaded SIMD128 build (without it: one thread). */
  simdThreads?: WasmSource;
  /** dist/swapformer-relaxed-mt.wasm, the threaded relaxed build. */
  relaxedThreads?: WasmSource;
}

export interface ConfigureOptions {
  /** The folder that holds swapformer.wasm and swapformer-relaxed.wasm (a URL,
   * or a string resolved against the page), or each build's source; undefined
   * (or null) restores the default, the files next to the bindings. */
  wasmPaths?: string | URL | WasmPaths | null;
  /** 'auto' (default): relaxed SIMD where the engine has it (and wasmPaths gives it), else SIMD128. */
  build?: 'auto' | 'simd128' | 'relaxed-simd' | null;
}

/** Where swapformer finds its wasm, once for the page or process (onnxruntime-web's
 * env.wasm.wasmPaths, in one call). Only the options given change; encoders made
 * before keep their runtime. A call's `wasm` option overrides it. */
export function configure(options: ConfigureOptions): void;

/** A new encoder from a config; weights not given are initialised from seed. */
export function createEncoder(config: Config, options?: CreateOptions): Promise<Encoder>;
/** An encoder from a model file (safetensors with the config in its metadata; F32, F16 or BF16). */
export interface ModelOptions extends LoadOptions {
  /** Default: the file's (__metadata__.dtype, else 'f32'); 'q8' quantizes an f32 file on load,
   * 'f32' dequantizes a q8 one. */
  dtype?: Dtype;
}
export function loadModel(bytes: Uint8Array | ArrayBuffer, options?: ModelOptions): Promise<Encoder>;
/** The build a runtime runs ('relaxed-simd' or 'simd128', chosen by feature
 * detection or configure; 'custom' for a call's wasm option) and the bytes of
 * wasm memory its instance holds now. */
export function runtimeInfo(options?: LoadOptions): Promise<{
  build: 'relaxed-simd' | 'simd128' | 'custom';
  /** The wasm memory the instance holds now (it grows and never shrinks). */
  memoryBytes: number;
  /** Threads an encoder made with these options gets. */
  threads: number;
  /** Why that is 1 although more were asked (no shared memory, no Worker, a wasm option...), else null. */
  threadsFallback: string | null;
  /** Whether this is a threaded build (shared memory). */
  threaded: boolean;
  /** The build and int8 dot product of the q8 kernel: 'simd128 i32x4.dot_i16x8' or 'relaxed i16x8.dot_i8x16_i7x16 + extadd'... */
  q8Kernel: string;
  /** Tasks of parallel regions each thread of the instance's pool has run since it started:
   * [0] the calling threads (the caller of forward, or the driver of forwardAsync), [i] worker i. */
  poolTasks: number[];
}>;
/** The names of the position and norm plugins, from the C registry. */
export function listPlugins(options?: LoadOptions): Promise<{ position: string[]; norm: string[] }>;

// ------------------------------------------------------------------ tokenizers

export interface Encoding {
  ids: Int32Array;
  /** Segment ids: 0, and 1 for the second text of a pair where the template says so. */
  typeIds: Int32Array;
  tokens: string[];
  /** [start, end) in UTF-16 units of the text (or pair) each token came from; [0, 0] for special tokens. */
  offsets: [start: number, end: number][];
}

export interface EncodeOptions {
  /** A second text (sentence pairs). */
  pair?: string;
  /** Add the template's special tokens ([CLS] ... [SEP], <s> ... </s>). Default true. */
  addSpecialTokens?: boolean;
  /** At most this many tokens, the special tokens included: the content is truncated (longest first
   * for pairs), then the special tokens are added, as Hugging Face's Python tokenizers do. */
  maxLength?: number;
  /** How a pair is cut to maxLength: 'longest_first' (default), 'only_first' or 'only_second' (that text only;
   * SEQUENCE_TOO_LONG when the other leaves it no token, where Rust refuses too). */
  truncation?: 'longest_first' | 'only_first' | 'only_second';
}

/** A Hugging Face tokenizer.json (WordPiece, byte-level BPE, Unigram), in agreement with the Rust `tokenizers`. */
export class Tokenizer {
  private constructor();
  static fromJSON(tokenizerJson: string | object, options?: { tokenizerConfig?: object; specialTokensMap?: object }): Tokenizer;
  encode(text: string, options?: EncodeOptions): Encoding;
  /** The text of ids; special tokens are left out unless skipSpecialTokens is false (default true, as the Rust tokenizers' decode; transformers' Python decode defaults to false). */
  decode(ids: Numbers, options?: { skipSpecialTokens?: boolean }): string;
  /** The tokenizer.json model. */
  readonly modelType: 'WordPiece' | 'BPE' | 'Unigram' | 'WordLevel';
  /** Including added tokens. */
  readonly vocabSize: number;
  tokenToId(token: string): number | null;
  idToToken(id: number): string | null;
  /** tokenizer_config.json's model_max_length when it is a real limit, else null. */
  readonly modelMaxLength: number | null;
  readonly padTokenId: number | null;
  readonly clsTokenId: number | null;
  readonly sepTokenId: number | null;
  readonly unkTokenId: number | null;
  readonly maskTokenId: number | null;
  readonly bosTokenId: number | null;
  readonly eosTokenId: number | null;
}

// ------------------------------------------------------------------ pretrained encoders

/** A file's bytes as loadPretrained takes them in a file map. */
export type FileContent = Uint8Array | ArrayBuffer | string | Blob;

/** Where a Hugging Face model comes from: a folder path (Node), a folder URL, a Hub id
 * ('owner/name'), a map of file names (sub-folders with '/') to contents, dropped files,
 * or a swapformer model file written by `swapformer convert` (its bytes, path or URL). */
export type PretrainedSource =
  | string
  | URL
  | { readonly [file: string]: FileContent }
  | Map<string, FileContent>
  | ArrayLike<File>
  | Uint8Array
  | ArrayBuffer;

export interface Progress {
  file: string;
  loaded: number;
  /** null while the size is unknown. */
  total: number | null;
}

export interface PretrainedOptions extends ModelOptions {
  /** Called as a downloaded file's bytes arrive, and once with loaded === total at its end. */
  onProgress?: (progress: Progress) => void;
  /** Default 'https://huggingface.co'. */
  hubUrl?: string;
  /** A branch, tag or commit. Default 'main'. */
  revision?: string;
  /** The function every download goes through. Default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  /** Keep downloads in the browser's Cache API. Default true. */
  cache?: boolean;
  /** Aborting it stops every read and download: NETWORK, the signal's reason as `cause`. */
  signal?: AbortSignal;
  /** A download that receives nothing for this many ms fails (NETWORK naming the file). Default 60000; Infinity: none. */
  stallTimeout?: number;
  /** The longest input in tokens (special tokens included): replaces the checkpoint's own limits, up to what
   * the position plugin encodes (beyond: SEQUENCE_TOO_LONG). */
  maxLength?: number;
  /** A Hugging Face access token for private or gated repositories (sent to the Hub only, never to its CDN).
   * Default in Node: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the file HF_TOKEN_PATH or $HF_HOME/token. */
  token?: string;
  /** Node: only the hub cache, no request (NOT_FOUND naming a file that is not there).
   * Default: HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set to 1 / true / on. */
  offline?: boolean;
  /** Node: the hub cache folder (huggingface_hub's layout, shared with Python).
   * Default HF_HUB_CACHE, else $HF_HOME/hub (~/.cache/huggingface/hub); cache: false skips it. */
  cacheDir?: string;
}

export type Pooling = 'mean' | 'cls' | 'max' | 'mean_sqrt_len' | 'weightedmean' | 'lasttoken';

/** The sentence-transformers recipe a checkpoint ships (or its model card's default). */
export interface Recipe {
  pooling: Pooling[];
  includePrompt: boolean;
  dense: { inFeatures: number; outFeatures: number; weight: Float32Array; bias: Float32Array | null; activation: string }[];
  normalize: boolean;
  maxSeqLength: number | null;
  doLowerCase: boolean;
  prompts: Record<string, string> | null;
  defaultPromptName: string | null;
  /** config_sentence_transformers.json's similarity_fn_name, or null (cosine). */
  similarityFnName: ScoreFunction | null;
  source: 'modules.json' | 'default';
}

export interface EmbedOptions {
  /** Replaces the recipe's pooling; 'none' returns the last hidden states. */
  pooling?: 'mean' | 'cls' | 'max' | 'none';
  /** L2 normalisation; default: the recipe's. */
  normalize?: boolean;
  /** Matryoshka: keep the first n dimensions (after pooling and Dense, before normalising). */
  dimensions?: number;
  /** At most this many tokens per text, up to what the position plugin encodes (beyond: SEQUENCE_TOO_LONG). */
  maxLength?: number;
  /** Text put before every text (sentence-transformers' prompt), e.g. 'query: '. */
  prompt?: string;
  /** A prompt of the checkpoint by name (config_sentence_transformers.json prompts); default its default_prompt_name. */
  promptName?: string;
  /** Texts per forward pass, grouped by length (the results are in input order, the same bits). Default 32. */
  batchSize?: number;
  /** Called after each batch. */
  onProgress?: (progress: { done: number; total: number; unit?: 'chunks' }) => void;
  /** The embeddings quantized as sentence-transformers' quantize_embeddings (int8 / uint8 over this call's ranges). Default 'float32'. */
  precision?: Precision;
  /** false: a text longer than maxLength is SEQUENCE_TOO_LONG naming it, instead of truncated. Default true. */
  truncate?: boolean;
  /** Long texts embedded as windows at word boundaries (chunk), pooled per text; pool 'none' returns each text's chunks. */
  chunking?: ChunkOptions & { pool?: 'mean' | 'max' | 'none' };
}

/** sentence-transformers' embedding precisions; binary and ubinary pack 8 dimensions a byte. */
export type Precision = 'float32' | 'int8' | 'uint8' | 'binary' | 'ubinary';

/** Embeddings in a precision: float32 -> Float32Array, int8 / binary -> Int8Array, uint8 / ubinary -> Uint8Array. */
export interface Embeddings {
  data: Float32Array | Int8Array | Uint8Array;
  /** [rows, dimensions] (binary, ubinary: [rows, dimensions / 8]). */
  shape: [rows: number, width: number];
}

export interface ChunkOptions {
  /** Tokens per window, special tokens included. Default the model's maxLength. */
  maxTokens?: number;
  /** Tokens shared by consecutive windows. Default 0. */
  overlap?: number;
}

/** A text's chunks and their embeddings [chunks, dimensions] (embed with chunking.pool 'none'). */
export interface ChunkedEmbeddings { embeddings: Tensor<[chunks: number, dimensions: number]>; chunks: { text: string; start: number; end: number }[] }

/** One window of a text: its text, its [start, end) in the text (UTF-16 units), its token count. */
export interface Chunk { text: string; start: number; end: number; tokens: number }

/** Rows of embeddings: {data, shape: [rows, dimensions]}, an array of vectors, or one vector. */
export type EmbeddingRows = { data: ArrayLike<number> & ArrayBufferView; shape: readonly [number, number] } | readonly ArrayLike<number>[] | ArrayLike<number>;

export type ScoreFunction = 'cosine' | 'dot' | 'euclidean' | 'manhattan';

export interface SearchOptions {
  /** Results per query. Default 10. */
  topK?: number;
  /** Default 'cosine' for floats, 'hamming' for packed bits (Uint8Array / Int8Array rows). */
  scoreFunction?: ScoreFunction | 'hamming';
  /** Accepted for sentence-transformers' signature; the search streams the corpus either way. */
  queryChunkSize?: number;
  corpusChunkSize?: number;
}

export interface SearchHit { corpusId: number; score: number }

export interface QuantizeOptions {
  /** int8 / uint8: [2, dimensions], the minima then the maxima. */
  ranges?: EmbeddingRows;
  /** int8 / uint8: the rows whose ranges to use. Default the embeddings themselves. */
  calibrationEmbeddings?: EmbeddingRows;
}

/** util.cos_sim: cosine similarity of every row of a with every row of b. */
export function cosSim(a: EmbeddingRows, b: EmbeddingRows): Promise<Tensor<[rows: number, columns: number]>>;
/** util.dot_score: dot products of every row of a with every row of b. */
export function dotScore(a: EmbeddingRows, b: EmbeddingRows): Promise<Tensor<[rows: number, columns: number]>>;
/** util.semantic_search: for each query its topK corpus rows, best first (ties: the lower corpusId first). */
export function semanticSearch(queryEmbeddings: EmbeddingRows, corpusEmbeddings: EmbeddingRows, options?: SearchOptions): Promise<SearchHit[][]>;
/** quantize_embeddings: int8 / uint8 with per-dimension ranges, binary / ubinary packed bits. */
export function quantizeEmbeddings(embeddings: EmbeddingRows, precision: Precision, options?: QuantizeOptions): Promise<Embeddings>;

export type PretrainedFamily = 'bert' | 'roberta' | 'distilbert' | 'jina-bert' | 'nomic-bert' | 'modernbert' | 't5' | 'mpnet';

/** What a checkpoint's head does (transformers.js's pipeline names); every model embeds. */
export type PretrainedTask = 'feature-extraction' | 'text-classification' | 'token-classification' | 'fill-mask';

/** A classifier's input: a text, or a text pair. */
export type ClassifyInput = string | { text: string; textPair?: string };

export interface ClassifyOptions {
  /** The best k labels; null: every label. Default 1. */
  topK?: number | null;
  /** Default: as Hugging Face's pipeline (regression: none; multi-label or one label: sigmoid; else softmax). */
  functionToApply?: 'softmax' | 'sigmoid' | 'none';
}

export interface LabelScore { label: string; score: number }

export interface PredictOptions {
  /** Default: config.json's sentence_transformers.activation_fn, else sigmoid for one label, none otherwise. */
  activation?: 'sigmoid' | 'softmax' | 'tanh' | 'none';
}

export interface RankOptions extends PredictOptions {
  /** The best k documents; default: all. */
  topK?: number | null;
  /** Include each document's text. Default false. */
  returnDocuments?: boolean;
}

export interface Ranked { corpusId: number; score: number; text?: string }

export interface TokenClassificationOptions {
  /** Default 'simple'. */
  aggregationStrategy?: 'none' | 'simple' | 'first' | 'average' | 'max';
  /** Labels left out, after grouping. Default ['O']. */
  ignoreLabels?: readonly string[];
}

/** aggregationStrategy 'none': one entity per token. */
export interface TokenEntity { entity: string; score: number; index: number; word: string; start: number; end: number }
/** The other strategies: groups of tokens. */
export interface EntityGroup { entityGroup: string; score: number; word: string; start: number; end: number }

export interface FillMaskOptions {
  /** Default 5 (at most the number of targets). */
  topK?: number;
  /** Score only these tokens (words outside the vocabulary: their first token). */
  targets?: string | readonly string[];
}

export interface FillMaskResult { score: number; token: number; tokenStr: string; sequence: string }

export interface ZeroShotOptions {
  /** Default 'This example is {}.'. */
  hypothesisTemplate?: string;
  /** Each label scored on its own (entailment vs contradiction). Default false. */
  multiLabel?: boolean;
}

export interface ZeroShotResult { sequence: string; labels: string[]; scores: number[] }

export interface Pretrained extends DisposeMember {}

export class Pretrained {
  private constructor();
  /** The encoder: every Encoder method works on it. */
  readonly encoder: Encoder;
  readonly tokenizer: Tokenizer;
  readonly recipe: Recipe;
  readonly family: PretrainedFamily;
  /** The checkpoint's config.json. */
  readonly hfConfig: Record<string, unknown>;
  /** The longest input in tokens: the maxLength option; else the smallest of max_seq_length,
   * model_max_length and the position plugin's limit; after a swap of the position scheme, the plugin's. */
  readonly maxLength: number;
  /** Whether withConfig swapped or rescaled the checkpoint's position scheme. */
  readonly swapped: boolean;
  /** What the checkpoint's head does. */
  readonly task: PretrainedTask;
  /** The head's labels (config.json id2label), or null without a classifier head. */
  readonly labels: string[] | null;
  /** The tokenizer as the task pipelines read it: its special ids, sub-word prefix, decoding with
   * tokenizer_config.json's clean-up, and the special-tokens mask of an encoding. */
  readonly tokenizerView: TokenizerView;
  readonly disposed: boolean;
  /** embed, the forward passes run in a worker where the runtime has threads. */
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { chunking: { pool: 'none' } }): Promise<ChunkedEmbeddings[]>;
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { precision: Exclude<Precision, 'float32'> }): Promise<Embeddings>;
  embedAsync(texts: string | readonly string[], options?: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max' }): Promise<Tensor<[batch: number, dimensions: number]>>;
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { pooling: 'none' }): Promise<Tensor<[batch: number, tokens: number, dModel: number]>>;
  /** With chunking.pool 'none': per text, its chunks' embeddings and the chunks. */
  embed(texts: string | readonly string[], options: EmbedOptions & { chunking: { pool: 'none' } }): ChunkedEmbeddings[];
  /** Quantized sentence embeddings (Int8Array or Uint8Array rows). */
  embed(texts: string | readonly string[], options: EmbedOptions & { precision: Exclude<Precision, 'float32'> }): Embeddings;
  /** Sentence embeddings [B, D] with the checkpoint's recipe. */
  embed(texts: string | readonly string[], options?: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max' }): Tensor<[batch: number, dimensions: number]>;
  /** The last hidden states [B, T, dModel], rows past a text's end 0. */
  embed(texts: string | readonly string[], options: EmbedOptions & { pooling: 'none' }): Tensor<[batch: number, tokens: number, dModel: number]>;
  /** embed over an iterable or async iterable of any length, batchSize texts at a time: {index of the batch's
   * first text, its embeddings}. precision: float32, binary or ubinary. */
  embedStream(texts: Iterable<string> | AsyncIterable<string>, options?: Omit<EmbedOptions, 'onProgress' | 'chunking' | 'pooling'> & { pooling?: 'mean' | 'cls' | 'max' }): AsyncGenerator<{ index: number; embeddings: Embeddings }, void, undefined>;
  /** A text's token windows at word boundaries. */
  chunk(text: string, options?: ChunkOptions): Chunk[];
  /** config_sentence_transformers.json's prompts (name -> text), or null. */
  readonly prompts: Record<string, string> | null;
  /** The checkpoint's similarity function (similarity_fn_name; default 'cosine'). */
  readonly similarityFnName: ScoreFunction;
  /** SentenceTransformer.similarity: every row of a against every row of b with similarityFnName. */
  similarity(a: EmbeddingRows, b: EmbeddingRows): Tensor<[rows: number, columns: number]>;
  /** The same weights under changed config fields: a position plugin swapped, removed or rescaled
   * (the swapped-out plugin's tables dropped, every other weight kept bit for bit). */
  withConfig(changes: Partial<ConfigBase> & Partial<PositionConfig> & Partial<RelativeBiasConfig>, options?: LoadOptions & { dtype?: Dtype; maxLength?: number }): Promise<Pretrained>;
  /** Text classification (a sequence-classification head): per input [{label, score}]; one input: that array. */
  classify(inputs: ClassifyInput, options?: ClassifyOptions): LabelScore[];
  classify(inputs: readonly ClassifyInput[], options?: ClassifyOptions): LabelScore[][];
  classifyAsync(inputs: ClassifyInput, options?: ClassifyOptions): Promise<LabelScore[]>;
  classifyAsync(inputs: readonly ClassifyInput[], options?: ClassifyOptions): Promise<LabelScore[][]>;
  /** A cross-encoder's scores of [query, passage] pairs: [B] for one label, [B * labels] otherwise. */
  predict(pairs: readonly (readonly [string, string])[] | readonly [string, string], options?: PredictOptions): Float32Array;
  predictAsync(pairs: readonly (readonly [string, string])[] | readonly [string, string], options?: PredictOptions): Promise<Float32Array>;
  /** Documents ranked for a query by a one-label cross-encoder. */
  rank(query: string, documents: readonly string[], options?: RankOptions): Ranked[];
  rankAsync(query: string, documents: readonly string[], options?: RankOptions): Promise<Ranked[]>;
  /** Entities from a token-classification head, with offsets into the text. */
  classifyTokens(text: string, options?: TokenClassificationOptions & { aggregationStrategy: 'none' }): TokenEntity[];
  classifyTokens(text: string, options?: TokenClassificationOptions): EntityGroup[];
  classifyTokensAsync(text: string, options?: TokenClassificationOptions & { aggregationStrategy: 'none' }): Promise<TokenEntity[]>;
  classifyTokensAsync(text: string, options?: TokenClassificationOptions): Promise<EntityGroup[]>;
  /** The best tokens at the mask token(s): one array for one mask, one array per mask otherwise. */
  fillMask(text: string, options?: FillMaskOptions): FillMaskResult[] | FillMaskResult[][];
  fillMaskAsync(text: string, options?: FillMaskOptions): Promise<FillMaskResult[] | FillMaskResult[][]>;
  /** Zero-shot classification with an NLI classifier. */
  zeroShot(text: string, candidateLabels: string | readonly string[], options?: ZeroShotOptions): ZeroShotResult;
  zeroShotAsync(text: string, candidateLabels: string | readonly string[], options?: ZeroShotOptions): Promise<ZeroShotResult>;
  dispose(): void;
}

export interface TokenizerView {
  readonly tokenizer: Tokenizer;
  /** '##' for WordPiece, the BPE model's continuing_subword_prefix, or null. */
  readonly subwordPrefix: string | null;
  /** Whether decode applies clean_up_tokenization_spaces. */
  readonly cleanUp: boolean;
  readonly unkTokenId: number | null;
  readonly maskTokenId: number | null;
  readonly padTokenId: number | null;
  idToToken(id: number): string | null;
  tokenToId(token: string): number | null;
  encode(text: string, options?: EncodeOptions): Encoding;
  /** Tokens joined by the tokenizer's decoder (what a word of sub-word tokens reads as). */
  tokensToString(tokens: readonly string[]): string;
  decode(ids: ArrayLike<number>, options?: { skipSpecialTokens?: boolean }): string;
  /** 1 for the tokens the post-processor added to a single sequence, 0 for the text's (as Rust's special_tokens_mask). */
  specialTokensMask(encoding: Encoding): number[];
}

/** A Hugging Face encoder from its folder, URL, Hub id, files or converted file. */
export function loadPretrained(source: PretrainedSource, options?: PretrainedOptions): Promise<Pretrained>;
