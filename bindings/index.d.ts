// Type definitions for swapformer (hand-written; README.md is the reference).
//
// They say exactly what the runtime accepts and returns, and check under
// `tsc --strict` both in a browser project (lib ES2022 + DOM, no @types/node,
// no skipLibCheck) and in a Node project (lib ES2022 + @types/node, no DOM):
// tests/types.test.js compiles tests/types/*.ts, with the mistakes they must
// refuse marked `// @ts-expect-error`, under both.
//
// The doc comments are what an editor shows on hover and what `npm run docs`
// (TypeDoc, docs/tools/typedoc.json) renders into docs/api/: every export,
// member and option field has one, and `@group` files it under a topic.
// tests/docs-api.test.js fails on a missing comment, a broken {@link} or an
// unknown tag.

/**
 * swapformer: a transformer encoder in C compiled to SIMD WebAssembly, with swappable position plugins
 * (sinusoidal, learned, RoPE, ALiBi, T5 buckets, none) and norm plugins (LayerNorm, RMSNorm).
 *
 * - {@link createEncoder} and {@link loadModel} make an {@link Encoder} from a {@link Config} or a model file;
 * - {@link loadPretrained} reads a Hugging Face checkpoint as a {@link Pretrained}: embeddings as
 *   sentence-transformers computes them, the tasks of its head, and withConfig to swap its position scheme;
 * - {@link cosSim}, {@link semanticSearch} and {@link quantizeEmbeddings} take the embeddings further;
 * - {@link Tokenizer} reads tokenizer.json, in agreement with Hugging Face's Rust `tokenizers`;
 * - every error is a {@link SwapformerError} with a stable {@link ErrorCode}; {@link configure} says where the wasm is.
 *
 * The README is the guide: configs, weights, the model file, threads, int8, the command line, security.
 * @module swapformer
 */

// ------------------------------------------------------------------ inputs

/**
 * A typed array of numbers. BigInt64Array and BigUint64Array are refused (BigInts are not numbers).
 * @group Encoder
 */
export type NumberTypedArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/**
 * What the bindings read as numbers: an array of numbers or a typed array of numbers
 * (copied once, element by element; any other array-like is refused).
 * @group Encoder
 */
export type Numbers = readonly number[] | NumberTypedArray;

/**
 * One sequence of token ids: integers in [0, vocabSize) (else BAD_TOKEN), at least one.
 * @group Encoder
 */
export type Sequence = Numbers;
/**
 * A batch: an array of sequences of any lengths (at least one, none empty).
 * @group Encoder
 */
export type Batch = readonly Sequence[];
/**
 * One sequence or a batch.
 * @group Encoder
 */
export type Ids = Sequence | Batch;

/**
 * A compiled WebAssembly.Module. Named structurally: a Node project without the DOM lib declares no
 * WebAssembly namespace, and the DOM's Module is an empty interface (hence `& object`: no primitives).
 * @group Runtime
 */
export type CompiledWasm = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: any) => infer M } } ? M & object : object;

/**
 * Where a wasm build comes from: a URL (a string is resolved against the page,
 * or the working directory in Node), its bytes, or a compiled module.
 * @group Runtime
 */
export type WasmSource = URL | string | ArrayBuffer | ArrayBufferView | CompiledWasm;

// ------------------------------------------------------------------ config

/**
 * The position plugins of the C registry (README "Config"; {@link listPlugins} lists them at run time).
 * @group Config
 */
export type PositionName = 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5' | 'disentangled' | 'none';
/**
 * The norm plugins: LayerNorm (biased variance, weight and bias) or RMSNorm (`x / sqrt(mean(x^2) + eps) * w`).
 * @group Config
 */
export type NormName = 'layernorm' | 'rmsnorm';
/**
 * The feed-forward activation: `down(act(up(x)))`, or for the gated ones (swiglu, geglu, geglu_tanh)
 * `down(act(gate(x)) * up(x))`. 'gelu' is the erf GELU, 'gelu_tanh' its tanh approximation.
 * @group Config
 */
export type Activation = 'gelu' | 'gelu_tanh' | 'relu' | 'silu' | 'swiglu' | 'geglu' | 'geglu_tanh';

/**
 * positionOptions of the sinusoidal plugin (fixed vectors added to the token embeddings).
 * @group Config
 */
export interface SinusoidalOptions {
  /** Wavelength base, in (1, 1e12]: PE[t, 2i] = sin(t / base^(2i/dModel)). Default 10000. */
  base?: number;
}

/**
 * positionOptions of the learned plugin (a trained table embed.positions [maxLen, embedDim], dModel unless embedDim is set).
 * @group Config
 */
export interface LearnedOptions {
  /** The first row of embed.positions used (RoBERTa and XLM-R start at 2). Default 0.
   * The longest sequence is then maxLen - offset. */
  offset?: number;
}

/**
 * RoPE context extension (positionOptions.scaling, README "Config"), discriminated by `type`.
 * @group Config
 */
export type RopeScaling =
  | {
      /** No scaling: the plain base at every length. */
      type: 'none';
    }
  | {
      /** Position interpolation: angle = (t / factor) theta_i. */
      type: 'linear';
      /** How many times longer the context gets, in [1e-6, 1e6]. */
      factor: number;
    }
  | {
      /** NTK-aware: base' = base * factor^(D / (D - 2)), D the head size. */
      type: 'ntk';
      /** How many times longer the context gets, in [1, 1e6]. */
      factor: number;
    }
  | {
      /** Fixed NTK (GTE's rope_scaling {type: 'ntk'}): base' = base * factor, and every frequency
       * divided by factor^(2 / D) as well, D the head size; at every length. */
      type: 'fixed-ntk';
      /** The scaling factor, in [1, 1e6]. */
      factor: number;
    }
  | {
      /** YaRN: slow-turning pairs interpolated, fast ones kept, a linear ramp between; cos and sin scaled by 0.1 ln(factor) + 1. */
      type: 'yarn';
      /** How many times longer the context gets, in [1, 1e6]. */
      factor: number;
      /** The context length the model was trained at, in tokens (an integer >= 1). */
      originalMaxLen: number;
      /** Pairs turning more than this many times over originalMaxLen are kept. Default 32. */
      betaFast?: number;
      /** Pairs turning fewer than this many times over originalMaxLen are interpolated. Default 1. */
      betaSlow?: number;
    }
  | {
      /** Dynamic NTK (nomic-embed's rotary_scaling_factor): a sequence longer than originalMaxLen
       * uses a base grown with its own length; shorter ones the plain base. */
      type: 'dynamic';
      /** The scaling factor, in [1, 1e6]. */
      factor: number;
      /** The context length the model was trained at, in tokens (an integer >= 1). */
      originalMaxLen: number;
    };

/**
 * positionOptions of the rope plugin (q and k rotated per head; nothing added to the embeddings).
 * @group Config
 */
export interface RopeOptions {
  /** theta_i = base^(-2i/headDim), base in (1, 1e12]. Default 10000. */
  base?: number;
  /** The base on local (sliding-window) layers. Default: base. */
  localBase?: number;
  /** 'interleaved' rotates pairs (2i, 2i+1), as in the RoFormer paper (default);
   * 'half' rotates pairs (i, i + headDim/2), the rotate_half of HF / LLaMA. */
  style?: 'interleaved' | 'half';
  /** Context extension: position interpolation, NTK-aware base change, YaRN, dynamic NTK. */
  scaling?: RopeScaling;
}

/**
 * positionOptions (or relativeBiasOptions) of the t5 plugin: relative position buckets, one learned
 * bias per bucket and head (embed.relative_bias [buckets, heads]) added to the attention scores.
 * @group Config
 */
export interface T5Options {
  /** Relative position buckets, a multiple of 4 in [4, 65536]. Default 32. */
  buckets?: number;
  /** Offsets beyond this share the last bucket; must exceed buckets / 4. Default 128. */
  maxDistance?: number;
}

/**
 * relativeBiasOptions (or positionOptions) of the disentangled plugin, DeBERTa-v2/v3's attention: a
 * relative table embed.rel_table [rows, dModel] (rows = 2 x buckets, or 2 x maxDistance without buckets),
 * projected in every layer by that layer's key and query projections; the score of query i and key j
 * gains q_i . PK[row(i - j)] (c2p) and k_j . PQ[row(i - j)] (p2c), every score over
 * sqrt(headDim x (1 + terms)) (attnScale's default with this scheme).
 * @group Config
 */
export interface DisentangledOptions {
  /** DeBERTa's log buckets (position_buckets): distances past buckets / 2 share rows logarithmically
   * up to maxDistance; 0 for none (distances clamped at maxDistance). An integer in [0, 65536], not 1. Default 256. */
  buckets?: number;
  /** max_relative_positions: with buckets, must exceed buckets / 2 + 1. An integer in [1, 65536]. Default 512. */
  maxDistance?: number;
  /** The terms (pos_att_type): 'c2p' content to position, 'p2c' position to content. Default both. */
  terms?: readonly ('c2p' | 'p2c')[];
  /** share_att_key: the layer's own attn.k / attn.q project the table (else layers.{i}.attn.pos_k / pos_q). Default true. */
  shareKey?: boolean;
  /** norm_rel_ebd 'layer_norm': the table goes through embed.rel_norm (the config's norm and eps) first. Default true. */
  normTable?: boolean;
}

/**
 * Position plugins that take no options.
 * @group Config
 */
export type NoOptions = Record<string, never>;

/**
 * The position plugin and its options, discriminated by `position`.
 * @group Config
 */
export type PositionConfig =
  | {
      /** Fixed sinusoids added to the token embeddings (Vaswani et al.). */
      position: 'sinusoidal';
      /** Its wavelength base. */
      positionOptions?: SinusoidalOptions;
    }
  | {
      /** A trained table embed.positions [maxLen, dModel] added to the token embeddings (BERT). */
      position: 'learned';
      /** Its first row. */
      positionOptions?: LearnedOptions;
    }
  | {
      /** Rotary embeddings: q and k rotated by their position in every layer. */
      position: 'rope';
      /** Its base, pair style and context extension. */
      positionOptions?: RopeOptions;
    }
  | {
      /** T5's relative buckets: a learned bias on the attention scores. */
      position: 't5';
      /** Its buckets. */
      positionOptions?: T5Options;
    }
  | {
      /** DeBERTa's disentangled attention (usually in relativeBias). */
      position: 'disentangled';
      /** Its buckets, terms and projections. */
      positionOptions?: DisentangledOptions;
    }
  | {
      /** ALiBi: -slope_h * |i - j| added to the scores, the paper's slopes for any head count. */
      position: 'alibi';
      /** None: `{}` or absent. */
      positionOptions?: NoOptions;
    }
  | {
      /** No position information: the encoder is permutation-equivariant, bit for bit. */
      position: 'none';
      /** None: `{}` or absent. */
      positionOptions?: NoOptions;
    };

/**
 * A second position slot for schemes that only bias the attention scores, added to what
 * `position` does (MPNet: learned positions and T5 buckets; T5: none and T5 buckets).
 * @group Config
 */
export type RelativeBiasConfig =
  | {
      /** No second scheme (the default). */
      relativeBias?: 'none';
      /** None: `{}` or absent. */
      relativeBiasOptions?: NoOptions;
    }
  | {
      /** T5's relative buckets beside the position plugin. */
      relativeBias: 't5';
      /** Its buckets. */
      relativeBiasOptions?: T5Options;
    }
  | {
      /** ALiBi's bias beside the position plugin. */
      relativeBias: 'alibi';
      /** None: `{}` or absent. */
      relativeBiasOptions?: NoOptions;
    }
  | {
      /** DeBERTa-v2/v3's disentangled attention beside the position plugin (v3: none; v2: learned or none). */
      relativeBias: 'disentangled';
      /** Its buckets, terms and projections. */
      relativeBiasOptions?: DisentangledOptions;
    };

/**
 * A head's activation after head.dense.
 * @group Config
 */
export type HeadActivation = 'identity' | 'tanh' | 'relu' | 'gelu' | 'gelu_tanh' | 'silu';

/**
 * config.head: a task head after the encoder (README "Heads"). Its tensors: head.dense [width, dModel]
 * (+ bias), head.norm [width] (+ bias), head.out [labels, width] (+ bias; an mlm head: the token table
 * itself when tied, head.out.bias [vocabSize]). Biases absent from a file count as zero.
 * @group Config
 */
export type HeadConfig = {
  /** sequence: one row per sequence (pooled); token: every token; mlm: chosen tokens, over the vocabulary. */
  task: 'sequence' | 'token' | 'mlm';
  /** Outputs of head.out: classes (sequence, token); for mlm the vocabulary (vocabSize). */
  labels?: number;
  /** sequence: the first row, the mean of the real rows, or 'late': every real row through the head and
   * the mean of their logits (EuroBERT). Default 'cls'. */
  pooling?: 'cls' | 'mean' | 'late';
  /** A [width, dModel] Linear first. Default false. */
  dense?: boolean;
  /** head.dense's outputs, what head.norm and head.out read; a tied decoder's must be embedDim. Default dModel. */
  width?: number;
  /** After head.dense. Default 'identity'. */
  activation?: HeadActivation;
  /** After the activation. Default 'none'. */
  norm?: NormName | 'none';
  /** The head norm's eps. Default 1e-12. */
  normEps?: number;
  /** mlm: the vocabulary projection is the token table (no head.out.weight). Default true for mlm. */
  tied?: boolean;
};

/**
 * Every config field but the position. Unknown fields are refused (BAD_CONFIG).
 * @group Config
 */
export interface ConfigBase {
  /** Rows of the token table embed.tokens: token ids are in [0, vocabSize). An integer in [1, 2^24]. */
  vocabSize: number;
  /** Width of the residual stream: an integer in [1, 2^20], divisible by heads unless headDim is given. */
  dModel: number;
  /** Attention heads per layer: an integer in [1, 2^20]. */
  heads: number;
  /** Layers, 0 to 1024. May be 0: embeddings, positions and the final norm only. */
  layers: number;
  /** Hidden width of the feed-forward block: an integer in [1, 2^20]. */
  ffDim: number;
  /** Rows of the learned position table (and the longest sequence it encodes). Default 512. */
  maxLen?: number;
  /** The norm plugin of every layer (and of embedNorm, finalNorm). */
  norm: NormName;
  /** pre: x = x + f(N(x)); post: x = N(x + f(x)). */
  normPlacement: 'pre' | 'post';
  /** Default: true for pre-norm, false for post-norm. */
  finalNorm?: boolean;
  /** The norms' eps, in (0, 1]. Default 1e-5. */
  eps?: number;
  /** The feed-forward activation. */
  activation: Activation;
  /** Multiply token embeddings by sqrt(dModel) before positions are added. Default false. */
  scaleEmbedding?: boolean;
  /** An output head head.weight [vocabSize, dModel] (+ head.bias): forward returns logits, predict() their argmax. Default false. */
  outputHead?: boolean;
  /** Size of one head. Default dModel / heads (which must then divide). */
  headDim?: number;
  /** Scores are q.k x attnScale. Default 1 / sqrt(headDim). */
  attnScale?: number;
  /** Key and value heads (grouped-query attention): they divide heads, query head h reads kv head
   * h / (heads / kvHeads); attn.k and attn.v are [kvHeads x headDim, dModel]. Default heads. */
  kvHeads?: number;
  /** Width of the embeddings (token, type and position tables, embedNorm); when given, embed.proj
   * [dModel, embedDim] (+ bias) maps them to the residual stream after embedNorm (ALBERT, ELECTRA). Default dModel. */
  embedDim?: number;
  /** true: embed.proj runs first and embedNorm (then dModel wide) after it, as DeBERTa-v2's embed_proj.
   * Needs embedDim and embedNorm. Default false. */
  embedNormAfterProj?: boolean;
  /** Distinct sets of layer weights, 1 to layers: layer l runs set floor(l x layerGroups / layers), named
   * layers.{set}.* and held once (ALBERT's num_hidden_groups). Default layers. */
  layerGroups?: number;
  /** Rows of a token-type (segment) embedding table, at most 256; 0 for none. Default 0. */
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
  /** DeBERTa-v2's convolution after layer 0: x = N(x + act(conv(embeddings))), conv.weight
   * [dModel, dModel x kernel] (Conv1d's [out, in, kernel]) + conv.bias, conv.norm; each sequence
   * zero-padded on its own. Absent or null for none. */
  conv?: ConvConfig | null;
}

/**
 * config.conv: DeBERTa-v2's convolution (conv_kernel_size, conv_act).
 * @group Config
 */
export interface ConvConfig {
  /** The kernel: an odd integer in [1, 255]. */
  kernel: number;
  /** After the convolution. Default 'tanh' (HF's conv_act default). */
  activation?: HeadActivation;
}

/**
 * A config: the common fields, one position plugin with its own options, and optionally a relative bias.
 * @group Config
 */
export type Config = ConfigBase & PositionConfig & RelativeBiasConfig;

/**
 * What each position plugin's options resolve to, every default filled in.
 * @group Config
 */
export type ResolvedPositionConfig =
  | {
      /** Sinusoidal positions. */
      position: 'sinusoidal';
      /** Its base. */
      positionOptions: Readonly<Required<SinusoidalOptions>>;
    }
  | {
      /** Learned positions. */
      position: 'learned';
      /** Its offset. */
      positionOptions: Readonly<Required<LearnedOptions>>;
    }
  | {
      /** Rotary embeddings. */
      position: 'rope';
      /** base and style; localBase and scaling when they were given. */
      positionOptions: Readonly<{
        /** theta_i = base^(-2i/headDim). */
        base: number;
        /** The pairs rotated. */
        style: 'interleaved' | 'half';
        /** The base on local layers, when given. */
        localBase?: number;
        /** The context extension, when given. */
        scaling?: Readonly<RopeScaling>;
      }>;
    }
  | {
      /** T5's relative buckets. */
      position: 't5';
      /** Its buckets and maximum distance. */
      positionOptions: Readonly<Required<T5Options>>;
    }
  | {
      /** DeBERTa's disentangled attention. */
      position: 'disentangled';
      /** Every option. */
      positionOptions: Readonly<Required<DisentangledOptions>>;
    }
  | {
      /** ALiBi. */
      position: 'alibi';
      /** `{}`. */
      positionOptions: NoOptions;
    }
  | {
      /** No positions. */
      position: 'none';
      /** `{}`. */
      positionOptions: NoOptions;
    };

/**
 * A resolved head: every default filled in (pooling for a sequence head, normEps with a norm, tied for mlm).
 * @group Config
 */
export type ResolvedHeadConfig = Readonly<{
  /** What the head computes: see {@link HeadConfig}. */
  task: 'sequence' | 'token' | 'mlm';
  /** Outputs of head.out (the vocabulary size for mlm). */
  labels: number;
  /** Whether head.dense runs first. */
  dense: boolean;
  /** After head.dense. */
  activation: HeadActivation;
  /** After the activation. */
  norm: NormName | 'none';
  /** A sequence head's pooling. */
  pooling?: 'cls' | 'mean' | 'late';
  /** head.dense's outputs, when not dModel. */
  width?: number;
  /** The head norm's eps, with a norm. */
  normEps?: number;
  /** An mlm head: whether the vocabulary projection is the token table. */
  tied?: boolean;
}>;

/**
 * The config an encoder runs (deeply frozen), every default filled in; headDim
 * and attnScale only when they were given; embedDim when given; embedNormAfterProj
 * when true; kvHeads and layerGroups when they differ from heads and layers.
 * @group Config
 */
export type ResolvedConfig = Readonly<
  Required<Omit<ConfigBase, 'headDim' | 'attnScale' | 'localLayers' | 'head' | 'conv' | 'kvHeads' | 'embedDim' | 'embedNormAfterProj' | 'layerGroups'>> &
    Pick<ConfigBase, 'headDim' | 'attnScale' | 'kvHeads' | 'embedDim' | 'embedNormAfterProj' | 'layerGroups'> & {
      /** The convolution after layer 0, when there is one. */
      conv?: Readonly<Required<ConvConfig>>;
      /** The local layers ([] for none). */
      localLayers: readonly number[];
      /** The task head, or null. */
      head: ResolvedHeadConfig | null;
    }
> &
  ResolvedPositionConfig &
  (
    | {
        /** No second scheme, or ALiBi's bias. */
        relativeBias: 'none' | 'alibi';
        /** `{}`. */
        relativeBiasOptions: NoOptions;
      }
    | {
        /** T5's relative buckets beside the position plugin. */
        relativeBias: 't5';
        /** Its buckets and maximum distance. */
        relativeBiasOptions: Readonly<Required<T5Options>>;
      }
    | {
        /** DeBERTa's disentangled attention beside the position plugin. */
        relativeBias: 'disentangled';
        /** Every option. */
        relativeBiasOptions: Readonly<Required<DisentangledOptions>>;
      }
  );

// ------------------------------------------------------------------ options and results

/**
 * Tensors by name (README "Weights"), an object or a Map; Linear weights are [out, in].
 * @group Encoder
 */
export type WeightsInput = { readonly [name: string]: Numbers } | Map<string, Numbers>;

/**
 * Copies of an encoder's tensors by name, row-major.
 * @group Encoder
 */
export type Weights = Record<string, Float32Array>;

/**
 * How an encoder holds its weights: float32, or int8 per row with a float32 scale
 * (the Linear weights, token table and output head; activations quantized per row).
 * @group Encoder
 */
export type Dtype = 'f32' | 'q8';

/**
 * Options of {@link createEncoder}. Unknown keys are refused (BAD_ARGUMENT naming them).
 * @group Encoder
 */
export interface CreateOptions {
  /** How the weights are held: 'f32', or 'q8' (int8, README "int8"). Default 'f32'. */
  dtype?: Dtype;
  /** Tensors by name; every tensor not given is initialised from seed. */
  weights?: WeightsInput;
  /** Initialises every weight not given; an integer in [0, 2^53). Default 0. */
  seed?: number;
  /** Seed initialisation: outputScale multiplies the output projections (attn.o, ffn.down);
   * 'depth' = 1 / sqrt(2 layers), the pre-norm mitigation of a growing stream. */
  init?: {
    /** 'depth' or a number in (0, 1e6]; tensors given in weights are never scaled. Default 1. */
    outputScale?: 'depth' | number;
  };
  /** This call's wasm, overriding configure() (runtimeInfo reports build 'custom'). */
  wasm?: WasmSource;
  /** Threads for this encoder's forward passes (1 to 64). Default: on the native backend the physical cores;
   * on the wasm the machine's cores, capped at 8,
   * where shared memory exists (Node; a cross-origin-isolated page); 1 elsewhere, silently. */
  threads?: number;
}

/**
 * Options of {@link runtimeInfo} and, with dtype, of {@link loadModel} ({@link ModelOptions}).
 * @group Runtime
 */
export interface LoadOptions {
  /** This call's wasm, overriding configure() (runtimeInfo reports build 'custom'). */
  wasm?: WasmSource;
  /** Threads for this encoder's forward passes; as in CreateOptions. */
  threads?: number;
}

/**
 * Options of {@link Encoder.forward} and {@link Encoder.forwardAsync}. Asking for more outputs never changes `data`.
 * @group Encoder
 */
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
  /** An mlm head over every token, pooled in the core into one SPLADE vector a sequence (result.sparse
   * [B, vocabSize]): true for max of log1p(relu(logit)), or sentence-transformers' SpladePooling
   * settings. Computed a chunk of tokens at a time, never a [T, vocabSize] buffer. Not with head or headPositions.
   * A model without an mlm head: UNSUPPORTED_MODEL. */
  sparse?: boolean | SparsePooling;
  /** Per sequence, how many of its first tokens are attended to (keys): every token is still computed
   * (a query), as Hugging Face's attention_mask with zeros at the end does (ColBERT's unattended query
   * expansion). A number for one sequence, one per sequence for a batch, each in [1, length]. Refused
   * (BAD_ARGUMENT) on a model with sliding-window layers or without positions. */
  attentionLengths?: number | Numbers;
}

/**
 * sentence-transformers' SpladePooling (1_SpladePooling/config.json): max or sum over the tokens of
 * log(1 + relu(logit)), log1p applied once more with 'log1p_relu' (opensearch's sum pooling).
 * @group Encoder
 */
export interface SparsePooling {
  /** Default 'max'. */
  pooling?: 'max' | 'sum';
  /** Default 'relu'; 'log1p_relu' goes with 'sum'. */
  activation?: 'relu' | 'log1p_relu';
}

/**
 * A float32 tensor: `data` row-major, of `shape`'s product of numbers.
 * @typeParam S - The shape, a tuple of named dimensions.
 * @group Encoder
 */
export interface Tensor<S extends number[] = number[]> {
  /** The values, row-major (a copy: the caller owns it). */
  data: Float32Array;
  /** The dimensions, outermost first. */
  shape: S;
}

/**
 * What {@link Encoder.forward} returns: the hidden states [batch, tokens, dModel] (tokens: the longest
 * sequence; rows past a sequence's end are 0) and the outputs the options asked for.
 * @group Encoder
 */
export interface ForwardResult extends Tensor<[batch: number, tokens: number, dModel: number]> {
  /** Per layer: [batch, heads, tokens, tokens]; rows and columns of padding are 0. */
  attentions?: Tensor<[batch: number, heads: number, tokens: number, tokens: number]>[];
  /** With config.outputHead: per-position logits over the vocabulary, [B, T, vocabSize]; padded rows 0. */
  logits?: Tensor<[batch: number, tokens: number, vocabSize: number]>;
  /** layers + 1 entries: the embeddings (with positions), then the stream after each layer, before the final norm. */
  hiddenStates?: Tensor<[batch: number, tokens: number, dModel: number]>[];
  /** With options.head / headPositions: the raw logits of config.head: [B, labels] (sequence),
   * [B, T, labels] (token, qa: start and end; padded rows 0), [B, T, labels] L2-normalised rows (colbert)
   * or [R, vocabSize] (mlm, the positions in order). */
  head?: Tensor;
  /** With options.sparse: one SPLADE vector a sequence, dense [B, vocabSize]. */
  sparse?: Tensor<[batch: number, vocabSize: number]>;
}

/**
 * What predict returns for ids of type I: an Int32Array for one sequence, one
 * per sequence for a batch, and either when the type does not say which (Ids, any[]).
 * @group Encoder
 */
export type Prediction<I> = I extends Sequence
  ? 0 extends 1 & I[number]
    ? Int32Array | Int32Array[]
    : Int32Array
  : I extends Batch
    ? Int32Array[]
    : Int32Array | Int32Array[];

// ------------------------------------------------------------------ errors

/**
 * Every code a SwapformerError can carry (README "Errors"; ERROR_CODES at run time).
 * @group Errors
 */
export type ErrorCode =
  /** The config: an unknown, repeated or mistyped field, an out-of-range or inconsistent value, an unknown plugin. */
  | 'BAD_CONFIG'
  /** A model file or checkpoint file: truncated, not valid JSON / safetensors, offsets out of range, past a size cap. */
  | 'BAD_FILE'
  /** A tensor missing, unexpected, given twice, of the wrong shape, holding NaN / Infinity or non-numbers. */
  | 'BAD_WEIGHTS'
  /** A token id that is not an integer in [0, vocabSize). */
  | 'BAD_TOKEN'
  /** A sequence longer than the position plugin encodes (or than a maxLength asked for). */
  | 'SEQUENCE_TOO_LONG'
  /** More memory than wasm32 can give, or natively than 3/4 of the machine's memory in one allocation
   * (sizes are checked for overflow, never wrapped). */
  | 'OUT_OF_MEMORY'
  /** A bad argument or option: an empty batch, an unknown option key, a value of the wrong type or range. */
  | 'BAD_ARGUMENT'
  /** Registering a C plugin under a name taken (not seen from JavaScript). */
  | 'PLUGIN_EXISTS'
  /** A file or tensor that is not there (a checkpoint's file, or one not cached when offline). */
  | 'NOT_FOUND'
  /** A C plugin of a wrong plugin API version (not seen from JavaScript). */
  | 'BAD_PLUGIN'
  /** The forward pass produced NaN or Infinity: the message names the stage and the first token. */
  | 'NON_FINITE'
  /** A checkpoint, head or tokenizer this runtime cannot run, naming the field. */
  | 'UNSUPPORTED_MODEL'
  /** A call on an encoder or model after dispose(). */
  | 'DISPOSED'
  /** The engine has no WebAssembly SIMD (or no relaxed SIMD where configure asked for it). */
  | 'UNSUPPORTED'
  /** The wasm cannot be loaded or compiled: the message names the URL and the fix, `cause` the engine's error. */
  | 'WASM_LOAD'
  /** A code of the C core these bindings do not know: a bug. */
  | 'INTERNAL'
  /** A download failed or stalled, or the signal option aborted it (`cause`: the signal's reason). */
  | 'NETWORK'
  /** A synchronous call while a forwardAsync / embedAsync pass runs on the same wasm instance. */
  | 'BUSY'
  /** configure({ backend: 'native' }) or SWAPFORMER_BACKEND=native where the native addon cannot load (each
   * attempt listed), or SWAPFORMER_ISA naming a variant this CPU cannot run. */
  | 'BACKEND_UNAVAILABLE';

/**
 * Every error swapformer throws. `code` is stable; `message` names the field at fault.
 * The instance that threw stays usable.
 * @group Errors
 */
export class SwapformerError extends Error {
  /** Always 'SwapformerError'. */
  readonly name: 'SwapformerError';
  /** Stable; see README "Errors". A WASM_LOAD error's `cause` is the engine's or the fetch's own error. */
  readonly code: ErrorCode;
  /**
   * An error with its code and message (swapformer throws them; user code may too, e.g. in a fetch option).
   * @param code - One of {@link ERROR_CODES}.
   * @param message - What is at fault, naming the field.
   */
  constructor(code: ErrorCode, message: string);
}

/**
 * Every ErrorCode, as the runtime knows them.
 * @group Errors
 */
export const ERROR_CODES: readonly ErrorCode[];

// ------------------------------------------------------------------ encoder

/**
 * `[Symbol.dispose]` where the lib declares Symbol.dispose (lib esnext.disposable,
 * or @types/node): `using enc = await createEncoder(...)`; nothing otherwise.
 * @internal
 */
type DisposeMember = SymbolConstructor extends { readonly dispose: infer S extends symbol } ? { [K in S]: () => void } : {};

/**
 * Where the lib declares Symbol.dispose: `[Symbol.dispose]()`, the same as dispose(), so that
 * `using enc = await createEncoder(...)` frees it at the end of the block.
 * @group Encoder
 */
export interface Encoder extends DisposeMember {}

/**
 * A transformer encoder in wasm memory, from {@link createEncoder} or {@link loadModel}. Its methods are
 * synchronous; forwardAsync runs the pass in a worker where there are threads. Free it with dispose()
 * (or `using`); one garbage-collected undisposed is freed where the runtime has a FinalizationRegistry.
 * @group Encoder
 */
export class Encoder {
  private constructor();
  /** The resolved config (deeply frozen). */
  readonly config: ResolvedConfig;
  /** How the weights are held. */
  readonly dtype: Dtype;
  /** Longest sequence the position plugin encodes, in tokens: maxLen - positionOptions.offset for 'learned',
   * else Infinity. */
  readonly maxSequenceLength: number;
  /** Whether dispose() has been called. */
  readonly disposed: boolean;
  /**
   * Hidden states [B, T, dModel]; a single sequence gives B = 1. Rows past a sequence's end are 0,
   * and padding is never attended to.
   * @throws {@link SwapformerError} BAD_TOKEN, SEQUENCE_TOO_LONG, BAD_ARGUMENT (options, an empty batch),
   * NON_FINITE, OUT_OF_MEMORY; DISPOSED after dispose(); BUSY while an async pass runs on this runtime.
   */
  forward(
    ids: Ids,
    options: ForwardOptions & { outputAttentions: true; outputHiddenStates: true },
  ): ForwardResult & Required<Pick<ForwardResult, 'attentions' | 'hiddenStates'>>;
  /** forward with outputAttentions: result.attentions is there. */
  forward(ids: Ids, options: ForwardOptions & { outputAttentions: true }): ForwardResult & Required<Pick<ForwardResult, 'attentions'>>;
  /** forward with outputHiddenStates: result.hiddenStates is there. */
  forward(ids: Ids, options: ForwardOptions & { outputHiddenStates: true }): ForwardResult & Required<Pick<ForwardResult, 'hiddenStates'>>;
  /** forward with options of any shape. */
  forward(ids: Ids, options?: ForwardOptions): ForwardResult;
  /** forward without blocking the calling thread where the runtime has threads (the pass runs in a
   * worker). The async calls of a runtime run one at a time in the order they were made; a sync call
   * while a pass runs throws BUSY; dispose() meanwhile settles the promise with DISPOSED. Without
   * threads it computes on this thread, in its turn. */
  forwardAsync(
    ids: Ids,
    options: ForwardOptions & { outputAttentions: true; outputHiddenStates: true },
  ): Promise<ForwardResult & Required<Pick<ForwardResult, 'attentions' | 'hiddenStates'>>>;
  /** forwardAsync with outputAttentions: result.attentions is there. */
  forwardAsync(ids: Ids, options: ForwardOptions & { outputAttentions: true }): Promise<ForwardResult & Required<Pick<ForwardResult, 'attentions'>>>;
  /** forwardAsync with outputHiddenStates: result.hiddenStates is there. */
  forwardAsync(ids: Ids, options: ForwardOptions & { outputHiddenStates: true }): Promise<ForwardResult & Required<Pick<ForwardResult, 'hiddenStates'>>>;
  /** forwardAsync with options of any shape. */
  forwardAsync(ids: Ids, options?: ForwardOptions): Promise<ForwardResult>;
  /** Argmax of the head's logits per position: an Int32Array for one sequence,
   * one per sequence (unpadded) for a batch. Needs config.outputHead (else BAD_ARGUMENT). */
  predict<I extends Ids>(ids: I): Prediction<I>;
  /** What the position plugin adds to the embeddings at positions 0..length-1 (zeros for rope, alibi, t5, disentangled, none).
   * A length past maxSequenceLength is SEQUENCE_TOO_LONG. */
  positionVectors(length: number): Tensor<[length: number, embedDim: number]>;
  /** Raw scores q.k x attnScale + the plugin's bias with the same q and k (heads x headDim each, dModel unless headDim is set; default zeros)
   * at every position: RoPE's depend on j - i alone; with q = k = 0, ALiBi's bias matrix; the disentangled
   * scheme's terms of layer 0 read the same q (scaled by attnScale) and k: `q·PK[row(i - j)] + k·PQ[row(i - j)]`. */
  positionScores(probe: {
    /** The query at every position, heads x headDim numbers (dModel unless headDim is set; before rotation). Default zeros. */
    q?: Numbers;
    /** The key at every position, heads x headDim numbers (dModel unless headDim is set; before rotation). Default zeros. */
    k?: Numbers;
    /** Positions, at least 1 and at most maxSequenceLength. */
    length: number;
  }): Tensor<[heads: number, length: number, length: number]>;
  /** Copies of every weight, row-major, Linear weights [out, in] (a q8 encoder's: the dequantized values). */
  getWeights(): Weights;
  /** Shape of every weight, in file order. */
  weightShapes(): Record<string, number[]>;
  /** The model file (safetensors, the config in the metadata) in the encoder's dtype: F32, or q8's int8
   * rows and scales. {@link loadModel} reads it back. */
  save(): Uint8Array;
  /** The same weights under changed config fields ({...config, ...changes}): a position plugin swapped, removed
   * or rescaled. A plugin swapped in without options gets its defaults; a swapped-out plugin's tables are dropped,
   * a new plugin's start at zero, every other tensor is kept bit for bit. A new Encoder (dispose both). */
  withConfig(
    changes: Partial<ConfigBase> & Partial<PositionConfig> & Partial<RelativeBiasConfig>,
    options?: { dtype?: Dtype; threads?: number; wasm?: WasmSource },
  ): Promise<Encoder>;
  /** Frees the encoder's wasm memory; idempotent. Later calls throw DISPOSED.
   * Where the runtime has no FinalizationRegistry (Cloudflare Workers), the only way to free it. */
  dispose(): void;
}

// ------------------------------------------------------------------ functions

/**
 * What this engine supports: SIMD128 is required; with relaxed SIMD the
 * default build is dist/swapformer-relaxed.wasm (fused multiply-add).
 * @group Runtime
 */
export const features: Readonly<{
  /** WebAssembly SIMD128 validates (required: without it every call is UNSUPPORTED). */
  simd: boolean;
  /** Relaxed SIMD validates (the faster build runs). */
  relaxedSimd: boolean;
}>;

/**
 * A build's wasm, one source per build.
 * @group Runtime
 */
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

/**
 * Options of {@link configure}: only those given change.
 * @group Runtime
 */
export interface ConfigureOptions {
  /** Which backend runs the core: 'auto' (default: in Node, the native addon where a prebuild loads on this
   * platform and CPU, else the wasm; everywhere else the wasm), 'native' (BACKEND_UNAVAILABLE where it cannot
   * load, listing each attempt) or 'wasm'. undefined (or null) restores the default, which the
   * SWAPFORMER_BACKEND environment variable sets in Node. */
  backend?: 'auto' | 'native' | 'wasm' | null;
  /** The folder that holds swapformer.wasm and swapformer-relaxed.wasm (a URL,
   * or a string resolved against the page), or each build's source; undefined
   * (or null) restores the default, the files next to the bindings. */
  wasmPaths?: string | URL | WasmPaths | null;
  /** 'auto' (default): relaxed SIMD where the engine has it (and wasmPaths gives it), else SIMD128. */
  build?: 'auto' | 'simd128' | 'relaxed-simd' | null;
}

/**
 * Which backend runs the core, and where swapformer finds its wasm, once for the page or
 * process (onnxruntime-web's env.wasm.wasmPaths, in one call). Only the options given
 * change; encoders made before keep their runtime. A call's `wasm` option overrides both
 * (it runs that wasm).
 * @throws {@link SwapformerError} BAD_ARGUMENT for an unknown key, a backend or build not listed, a wasmPaths of the
 * wrong type or naming no build.
 * @group Runtime
 */
export function configure(options: ConfigureOptions): void;

/**
 * A new encoder from a config; weights not given are initialised from seed.
 * @throws {@link SwapformerError} BAD_CONFIG (the config), BAD_WEIGHTS (a tensor), BAD_ARGUMENT (an option),
 * OUT_OF_MEMORY, WASM_LOAD / UNSUPPORTED (the wasm).
 * @group Encoder
 */
export function createEncoder(config: Config, options?: CreateOptions): Promise<Encoder>;
/**
 * Options of {@link loadModel}.
 * @group Encoder
 */
export interface ModelOptions extends LoadOptions {
  /** Default: the file's (__metadata__.dtype, else 'f32'); 'q8' quantizes an f32 file on load,
   * 'f32' dequantizes a q8 one. */
  dtype?: Dtype;
}
/**
 * An encoder from a model file (safetensors with the config in its metadata; F32, F16 or BF16, or q8):
 * what {@link Encoder.save} and `swapformer convert` write.
 * @throws {@link SwapformerError} BAD_FILE (the file), BAD_CONFIG / BAD_WEIGHTS (its config and tensors).
 * @group Encoder
 */
export function loadModel(bytes: Uint8Array | ArrayBuffer, options?: ModelOptions): Promise<Encoder>;
/**
 * What runs the core for calls made with these options: the backend (the native addon or
 * the wasm) and, if the wasm runs in Node under 'auto', why; its kernels and threads; the
 * memory it holds.
 * @throws {@link SwapformerError} BACKEND_UNAVAILABLE when configure or SWAPFORMER_BACKEND asks for 'native' and it
 * cannot load (or SWAPFORMER_ISA names a variant this CPU lacks).
 * @group Runtime
 */
export function runtimeInfo(options?: LoadOptions): Promise<{
  /** 'native': the C core built for this machine as a Node-API addon; 'wasm': the WebAssembly build. */
  backend: 'native' | 'wasm';
  /** Why the wasm runs although the native addon was not refused ('auto' in Node): the addon that did not
   * load and its error, 'not Node', configure({ backend: 'wasm' }) or SWAPFORMER_BACKEND=wasm, a call's
   * wasm option; null on the native backend. */
  backendFallback: string | null;
  /** The native kernels' instruction set ('avx512-vnni', 'avx512', 'avx2-vnni', 'avx2', 'sse2', 'i8mm', 'dotprod',
   * 'neon'), chosen at load from the CPU's own report (SWAPFORMER_ISA forces a lower one, for tests);
   * 'wasm-simd128' on the wasm. */
  isa: string;
  /** 'relaxed-simd' or 'simd128' (feature detection or configure); 'custom' for a call's wasm option;
   * 'native' on the native backend. */
  build: 'relaxed-simd' | 'simd128' | 'custom' | 'native';
  /** The wasm memory the instance holds now (it grows and never shrinks); natively the process's
   * resident memory. */
  memoryBytes: number;
  /** The addon file the native backend loaded. */
  nativePath?: string;
  /** The largest int8 activation the q8 kernel quantizes to: 255 (u8: SIMD128, SSE2, NEON, VNNI, i8mm) or 127
   * (u7: relaxed SIMD, AVX2, AVX-512 BW without VNNI, NEON dotprod), so that its products are exact. */
  q8Amax: 127 | 255;
  /** Threads an encoder made with these options gets. */
  threads: number;
  /** Why that is 1 although more were asked (no shared memory, no Worker, a wasm option...), else null. */
  threadsFallback: string | null;
  /** Whether this is a threaded build (shared memory), or the native backend (its threads). */
  threaded: boolean;
  /** The build and int8 dot product of the q8 kernel: 'simd128 i32x4.dot_i16x8' or 'relaxed i16x8.dot_i8x16_i7x16 + extadd'... */
  q8Kernel: string;
  /** Tasks of parallel regions each thread of the instance's pool has run since it started:
   * [0] the calling threads (the caller of forward, or the driver of forwardAsync), [i] worker i. */
  poolTasks: number[];
}>;
/**
 * The names of the position and norm plugins, from the C registry.
 * @group Runtime
 */
export function listPlugins(options?: LoadOptions): Promise<{
  /** Position plugins ({@link PositionName}). */
  position: string[];
  /** Norm plugins ({@link NormName}). */
  norm: string[];
}>;

// ------------------------------------------------------------------ tokenizers

/**
 * What {@link Tokenizer.encode} returns: one entry per token, special tokens included.
 * @group Tokenizer
 */
export interface Encoding {
  /** The token ids, as Hugging Face's Rust `tokenizers` gives them. */
  ids: Int32Array;
  /** Segment ids: 0, and 1 for the second text of a pair where the template says so. */
  typeIds: Int32Array;
  /** The tokens' strings. */
  tokens: string[];
  /** [start, end) in UTF-16 units of the text (or pair) each token came from; [0, 0] for special tokens. */
  offsets: [start: number, end: number][];
}

/**
 * Options of {@link Tokenizer.encode}.
 * @group Tokenizer
 */
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

/**
 * One window of {@link Tokenizer.encodeWindows}: an Encoding with each token's sequence and word.
 * @group Tokenizer
 */
export interface WindowEncoding extends Encoding {
  /** 0 or 1: the sequence of each token; -1 for a special token. */
  sequenceIds: Int8Array;
  /** The word (pre-tokenizer piece) of each token within its sequence; -1 for a special token. */
  wordIds: Int32Array;
}

/**
 * A Hugging Face tokenizer.json (WordPiece, byte-level BPE, Unigram), in agreement with the Rust `tokenizers`.
 * @group Tokenizer
 */
export class Tokenizer {
  private constructor();
  /**
   * A tokenizer from tokenizer.json (its text or the parsed object, copied) and, when present, the
   * tokenizer_config.json and special_tokens_map.json objects (model_max_length, the special tokens).
   * @throws {@link SwapformerError} BAD_ARGUMENT (not JSON, not an object), UNSUPPORTED_MODEL (a
   * normalizer, model or regular expression it cannot reproduce exactly, naming the field).
   */
  static fromJSON(
    tokenizerJson: string | object,
    options?: {
      /** tokenizer_config.json, parsed. */
      tokenizerConfig?: object;
      /** special_tokens_map.json, parsed. */
      specialTokensMap?: object;
    },
  ): Tokenizer;
  /** The tokens of `text` (and `options.pair`), with ids, type ids and offsets. maxLength below the
   * special tokens' count is BAD_ARGUMENT. */
  encode(text: string, options?: EncodeOptions): Encoding;
  /**
   * A pair as the question-answering pipeline tokenizes it with return_overflowing_tokens: the sequence
   * truncation names ('only_second': pair) split into windows of maxLength tokens with the other sequence
   * and the special tokens, consecutive windows sharing `stride` tokens, until one reaches its end (the
   * rule of tokenizers up to 0.22).
   * @throws {@link SwapformerError} BAD_ARGUMENT (a stride Rust refuses), SEQUENCE_TOO_LONG (no room for the split sequence).
   */
  encodeWindows(
    text: string,
    pair: string,
    options: {
      /** Tokens a window holds, the special tokens included. */
      maxLength: number;
      /** Tokens consecutive windows share. Default 0. */
      stride?: number;
      /** Which sequence is split. Default 'only_second'. */
      truncation?: 'only_first' | 'only_second';
    },
  ): WindowEncoding[];
  /** tokenizer_config.json's padding_side: 'left', else 'right'. */
  readonly paddingSide: 'left' | 'right';
  /** The text of `ids` (ids not in the vocabulary are skipped). */
  decode(
    ids: Numbers,
    options?: {
      /** Leave the special tokens out. Default true (as the Rust tokenizers' decode; transformers' Python decode defaults to false). */
      skipSpecialTokens?: boolean;
    },
  ): string;
  /** The tokenizer.json model. */
  readonly modelType: 'WordPiece' | 'BPE' | 'Unigram' | 'WordLevel';
  /** Including added tokens. */
  readonly vocabSize: number;
  /** The id of a token (added tokens first), or null. */
  tokenToId(token: string): number | null;
  /** The token of an id, or null. */
  idToToken(id: number): string | null;
  /** tokenizer_config.json's model_max_length when it is a real limit, else null. */
  readonly modelMaxLength: number | null;
  /** The padding token's id (from the configs), or null. */
  readonly padTokenId: number | null;
  /** The classifier token's id ([CLS], <s>: the configs, else the post-processor), or null. */
  readonly clsTokenId: number | null;
  /** The separator token's id ([SEP], </s>: the configs, else the post-processor), or null. */
  readonly sepTokenId: number | null;
  /** The unknown token's id, or null. */
  readonly unkTokenId: number | null;
  /** The mask token's id ([MASK], <mask>), or null. */
  readonly maskTokenId: number | null;
  /** The beginning-of-sequence token's id, or null. */
  readonly bosTokenId: number | null;
  /** The end-of-sequence token's id, or null. */
  readonly eosTokenId: number | null;
}

// ------------------------------------------------------------------ pretrained encoders

/**
 * A file's bytes as loadPretrained takes them in a file map.
 * @group Pretrained
 */
export type FileContent = Uint8Array | ArrayBuffer | string | Blob;

/**
 * Where a Hugging Face model comes from: a folder path (Node), a folder URL, a Hub id
 * ('owner/name'), a map of file names (sub-folders with '/') to contents, dropped files,
 * or a swapformer model file written by `swapformer convert` (its bytes, path or URL).
 * @group Pretrained
 */
export type PretrainedSource = string | URL | { readonly [file: string]: FileContent } | Map<string, FileContent> | ArrayLike<File> | Uint8Array | ArrayBuffer;

/**
 * A download's progress, as {@link PretrainedOptions.onProgress} receives it.
 * @group Pretrained
 */
export interface Progress {
  /** The file's path in the repository ('model.safetensors', '1_Pooling/config.json'). */
  file: string;
  /** Bytes received so far. */
  loaded: number;
  /** null while the size is unknown. */
  total: number | null;
}

/**
 * Options of {@link loadPretrained}. Unknown keys are refused (BAD_ARGUMENT naming them).
 * @group Pretrained
 */
export interface PretrainedOptions extends ModelOptions {
  /** Called as a downloaded file's bytes arrive, and once with loaded === total at its end
   * (a file read from disk, a file map or a cache: once, whole). */
  onProgress?: (progress: Progress) => void;
  /** Default 'https://huggingface.co' (in Node: HF_ENDPOINT when set). */
  hubUrl?: string;
  /** A branch, tag or commit (a name git allows). Default 'main'. A load reads one commit: a branch or tag is
   * resolved once (the hub cache's ref, else the Hub's first answer) and every file is read at that commit. */
  revision?: string;
  /** The function every download goes through. Default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  /** Keep downloads: in browsers in the Cache API; in Node in the Hugging Face hub cache on disk
   * (cacheDir, huggingface_hub's layout, shared with Python). Default true. */
  cache?: boolean;
  /** Node: the hub cache folder. Default HF_HUB_CACHE, else $HF_HOME/hub (~/.cache/huggingface/hub). */
  cacheDir?: string;
  /** A Hugging Face access token for private or gated repositories, sent to the Hub only (never to its CDN or
   * another origin). Default in Node: HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the file HF_TOKEN_PATH or
   * $HF_HOME/token, unless HF_HUB_DISABLE_IMPLICIT_TOKEN. */
  token?: string;
  /** No downloads: the caches only (a file not there is NOT_FOUND naming it as not cached). Default false; in Node
   * HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set to 1 / true / on. Given, it wins over the environment:
   * `offline: false` downloads under HF_HUB_OFFLINE=1. */
  offline?: boolean;
  /** Aborting it stops every read and download: NETWORK, the signal's reason as `cause`. */
  signal?: AbortSignal;
  /** A download that receives nothing for this many ms fails (NETWORK naming the file). Default 60000; Infinity: none. */
  stallTimeout?: number;
  /** The longest input in tokens (special tokens included): replaces the checkpoint's own limits, up to what
   * the position plugin encodes (beyond: SEQUENCE_TOO_LONG). */
  maxLength?: number;
  /** jina-embeddings-v3: the task adapter (one of config.json's lora_adaptations: 'retrieval.query',
   * 'retrieval.passage', 'separation', 'classification', 'text-matching') merged into the weights at load.
   * Default none: the base weights. Another checkpoint, or a model file whose weights hold another
   * adapter, is BAD_ARGUMENT. */
  task?: string;
}

/**
 * A sentence-transformers Pooling mode (several are concatenated in this order: cls, max, mean, ...).
 * @group Pretrained
 */
export type Pooling = 'mean' | 'cls' | 'max' | 'mean_sqrt_len' | 'weightedmean' | 'lasttoken';

/**
 * The sentence-transformers recipe a checkpoint ships (or its model card's default).
 * @group Pretrained
 */
export interface Recipe {
  /** The Pooling modes (1_Pooling/config.json), concatenated. */
  pooling: Pooling[];
  /** false: the prompt's tokens are left out of the pooling (include_prompt). */
  includePrompt: boolean;
  /** The Dense modules after pooling, in order. */
  dense: {
    /** Input width. */
    inFeatures: number;
    /** Output width. */
    outFeatures: number;
    /** [outFeatures, inFeatures], row-major. */
    weight: Float32Array;
    /** [outFeatures], or null without a bias. */
    bias: Float32Array | null;
    /** The activation after it ('identity', 'tanh', ...). */
    activation: string;
  }[];
  /** Whether a Normalize module (L2) ends the recipe. */
  normalize: boolean;
  /** sentence_bert_config.json's max_seq_length, or null. */
  maxSeqLength: number | null;
  /** Whether texts are lowercased before tokenizing (sentence_bert_config.json's do_lower_case). */
  doLowerCase: boolean;
  /** The prompts of config_sentence_transformers.json (name to text, without a prototype), or null. */
  prompts: Record<string, string> | null;
  /** The prompt used when a call names none (default_prompt_name), or null. */
  defaultPromptName: string | null;
  /** config_sentence_transformers.json's similarity_fn_name, or null (then cosine). */
  similarityFnName: ScoreFunction | null;
  /** Where it was read from: modules.json, or the model card's default. */
  source: 'modules.json' | 'default';
}

/**
 * Options of {@link Pretrained.embed} and {@link Pretrained.embedAsync}. Unknown keys are refused (BAD_ARGUMENT naming them).
 * @group Embeddings and search
 */
export interface EmbedOptions {
  /** Replaces the recipe's pooling; 'none' returns the last hidden states. */
  pooling?: 'mean' | 'cls' | 'max' | 'none';
  /** L2 normalisation; default: the recipe's. */
  normalize?: boolean;
  /** Matryoshka: keep the first n dimensions (after pooling and Dense, before normalising). */
  dimensions?: number;
  /** At most this many tokens per text, up to what the position plugin encodes (beyond: SEQUENCE_TOO_LONG). */
  maxLength?: number;
  /** A prompt prepended to every text ('query: '); wins over promptName. Default: the model's default prompt, else none. */
  prompt?: string;
  /** One of {@link Pretrained.prompts} by name (else BAD_ARGUMENT naming the known ones). */
  promptName?: string;
  /** Texts per forward pass (grouped by length, longest first; the results do not depend on it). Default 32. */
  batchSize?: number;
  /** Called after each batch with the texts (or, with chunking, the chunks) embedded so far. */
  onProgress?: (progress: EmbedProgress) => void;
  /** The embeddings quantized as sentence-transformers' quantize_embeddings over this call (int8 / uint8: the
   * ranges of this call's rows; binary / ubinary: a width that is a multiple of 8). Not with pooling 'none'. Default 'float32'. */
  precision?: Precision;
  /** false: a text longer than maxLength is SEQUENCE_TOO_LONG naming it, not cut. Default true. */
  truncate?: boolean;
  /** Split every text into windows at word boundaries ({@link Pretrained.chunk}; by default maxLength less the
   * prompt's tokens), embed each and pool them per text, so that no text is cut. Not with pooling 'none'. */
  chunking?: ChunkingOptions;
  /** What to give: 'dense' (a vector a text), 'sparse' ({@link SparseEmbedding} a text: SPLADE, bge-m3),
   * 'colbert' ({@link TokenEmbeddings} a text: ColBERT, bge-m3), or a list of them from one pass
   * ({@link RetrievalOutputs}). Default {@link Pretrained.defaultOutput}. One the model does not give is
   * UNSUPPORTED_MODEL; pooling, chunking and precision apply to dense alone. */
  output?: Output | readonly Output[];
  /** Sparse vectors: keep the k largest weights (sentence-transformers' max_active_dims; equal ones: the lower index). */
  maxActiveDims?: number;
  /** A ColBERT model's texts as queries (the query prefix, expanded with mask tokens to query_length) or
   * documents (the document prefix, the skiplist's tokens dropped). Default true, as PyLate's encode. */
  isQuery?: boolean;
}

/**
 * What {@link Pretrained.embed} can give: a vector a text, a sparse vector a text, a vector a token.
 * @group Embeddings and search
 */
export type Output = 'dense' | 'sparse' | 'colbert';

/**
 * A sparse vector: the non-zero weights, by index (a vocabulary id), index ascending.
 * @group Embeddings and search
 */
export interface SparseEmbedding {
  /** The indices, ascending. */
  indices: Int32Array;
  /** The weight of each index. */
  values: Float32Array;
}

/**
 * A sparse vector as the search functions take it: indices and values of one length, in any order
 * (a repeated index adds up), indices below 2^24.
 * @group Embeddings and search
 */
export interface SparseInput {
  /** Non-negative integers. */
  indices: Numbers;
  /** Finite numbers. */
  values: Numbers;
}

/**
 * A text's token vectors (ColBERT): [tokens, dimensions], each row L2-normalised.
 * @group Embeddings and search
 */
export type TokenEmbeddings = Tensor<[tokens: number, dimensions: number]>;

/**
 * The outputs of {@link Pretrained.embed} with a list of outputs, from one pass (bge-m3's three).
 * @group Embeddings and search
 */
export interface RetrievalOutputs {
  /** The sentence embeddings, with output 'dense'. */
  dense?: Tensor<[batch: number, dimensions: number]>;
  /** A sparse vector a text, with output 'sparse'. */
  sparse?: SparseEmbedding[];
  /** A text's token vectors, with output 'colbert'. */
  colbert?: TokenEmbeddings[];
}

/**
 * The outputs of {@link Pretrained.embed} with `output: [...]`: each one asked for is there.
 * @group Embeddings and search
 */
export type RetrievalOutputsOf<O extends Output> = RetrievalOutputs & { [K in O]-?: NonNullable<RetrievalOutputs[K]> };

/**
 * Options of {@link Pretrained.embedStream}: embed's, without onProgress and chunking.
 * @group Embeddings and search
 */
export interface EmbedStreamOptions extends Omit<EmbedOptions, 'onProgress' | 'chunking' | 'precision'> {
  /** Packed bits per batch; int8 and uint8 need ranges over the whole corpus ({@link quantizeEmbeddings}). Default 'float32'. */
  precision?: 'float32' | 'binary' | 'ubinary';
}

/**
 * What {@link EmbedOptions.onProgress} receives.
 * @group Embeddings and search
 */
export interface EmbedProgress {
  /** Texts (or chunks) embedded so far. */
  done: number;
  /** Texts (or chunks) in the call. */
  total: number;
  /** 'chunks' when the call chunks its texts: done and total count chunks. */
  unit?: 'chunks';
}

/**
 * Options of {@link Pretrained.chunk}.
 * @group Embeddings and search
 */
export interface ChunkOptions {
  /** A window's tokens, the special tokens included: at most the model's maxLength (beyond: SEQUENCE_TOO_LONG).
   * Default: maxLength (with embed's chunking, less the prompt's tokens). */
  maxTokens?: number;
  /** Tokens consecutive windows share, in [0, maxTokens - special tokens). Default 0. */
  overlap?: number;
}

/**
 * embed's chunking option: the windows of {@link Pretrained.chunk}, and how their embeddings make the text's.
 * @group Embeddings and search
 */
export interface ChunkingOptions extends ChunkOptions {
  /** 'mean' (default) or 'max' of the chunks' embeddings (normalised again when the recipe normalises);
   * 'none': per text its chunks' embeddings with their offsets ({@link ChunkedEmbeddings}). */
  pool?: 'mean' | 'max' | 'none';
}

/**
 * One window of {@link Pretrained.chunk}.
 * @group Embeddings and search
 */
export interface Chunk {
  /** text.slice(start, end). */
  text: string;
  /** Offset of its first character in the text, in UTF-16 units. */
  start: number;
  /** Offset past its last character, in UTF-16 units. */
  end: number;
  /** Its tokens, the special tokens included (at most maxTokens). */
  tokens: number;
}

/**
 * One text's result with chunking `{pool: 'none'}`.
 * @group Embeddings and search
 */
export interface ChunkedEmbeddings {
  /** One row per chunk. */
  embeddings: Tensor<[chunks: number, dimensions: number]>;
  /** The chunks, in order, with their offsets into the text. */
  chunks: Pick<Chunk, 'text' | 'start' | 'end'>[];
}

/**
 * What embeddings are stored as (sentence-transformers' precisions): float32; int8 / uint8 with
 * per-dimension ranges (255 steps); binary / ubinary, one bit a dimension (positive: 1), 8 to a byte.
 * @group Embeddings and search
 */
export type Precision = 'float32' | 'int8' | 'uint8' | 'binary' | 'ubinary';

/**
 * The array a precision's embeddings come in: Float32Array; Int8Array for int8 and binary
 * (binary = ubinary - 128); Uint8Array for uint8 and ubinary.
 * @group Embeddings and search
 */
export type PrecisionArray<P extends Precision> = P extends 'float32' ? Float32Array : P extends 'int8' | 'binary' ? Int8Array : Uint8Array;

/**
 * Sentence embeddings in a precision: [rows, dimensions], or [rows, dimensions / 8] for the packed
 * binary and ubinary bits.
 * @typeParam P - The precision.
 * @group Embeddings and search
 */
export interface Embeddings<P extends Precision = Precision> {
  /** The values (or packed bits), row-major. */
  data: PrecisionArray<P>;
  /** [rows, dimensions] (binary, ubinary: [rows, dimensions / 8] bytes). */
  shape: [rows: number, width: number];
}

/**
 * What {@link Pretrained.embedStream} yields per batch.
 * @typeParam E - The batch's embeddings.
 * @group Embeddings and search
 */
export interface EmbeddedBatch<E> {
  /** The position of the batch's first text in the stream. */
  index: number;
  /** The batch's embeddings, one row per text. */
  embeddings: E;
}

/**
 * Embeddings as the similarity and search functions read them: rows {data, shape: [rows, dimensions]}
 * (what embed returns), an array of vectors, or one vector; finite numbers only (else BAD_ARGUMENT).
 * data (or one vector) as an Int8Array or Uint8Array is packed bits (precision 'binary' / 'ubinary').
 * @group Embeddings and search
 */
export type EmbeddingsInput =
  | {
      /** The rows' values, row-major (Int8Array / Uint8Array: packed bits). */
      readonly data: NumberTypedArray;
      /** [rows, dimensions], both at least 1. */
      readonly shape: readonly [rows: number, dimensions: number];
    }
  | readonly Numbers[]
  | Numbers;

/**
 * How a query and a row are scored (sentence-transformers' similarity functions): cosine, dot product,
 * or the negative euclidean or manhattan distance; the higher the closer.
 * @group Embeddings and search
 */
export type ScoreFunction = 'cosine' | 'dot' | 'euclidean' | 'manhattan';

/**
 * Options of {@link semanticSearch}.
 * @group Embeddings and search
 */
export interface SearchOptions {
  /** The best k corpus rows per query (all of them when the corpus is smaller); a positive integer. Default 10. */
  topK?: number;
  /** Default 'cosine'; packed bits take 'hamming' only (score = -Hamming distance), their default. */
  scoreFunction?: ScoreFunction | 'hamming';
  /** sentence-transformers' memory bound, accepted for its signature (a positive integer): the results are the same. */
  queryChunkSize?: number;
  /** sentence-transformers' memory bound, accepted for its signature (a positive integer): the results are the same. */
  corpusChunkSize?: number;
}

/**
 * One result of {@link semanticSearch}.
 * @group Embeddings and search
 */
export interface SearchHit {
  /** The corpus row. */
  corpusId: number;
  /** Its score (ties: the lower corpusId first). */
  score: number;
}

/**
 * Options of {@link quantizeEmbeddings}: where int8 / uint8 take each dimension's range.
 * @group Embeddings and search
 */
export interface QuantizeOptions {
  /** [2, dimensions]: the minima, then the maxima. */
  ranges?: EmbeddingsInput;
  /** Rows whose per-dimension minima and maxima are the ranges. Default: the embeddings themselves. */
  calibrationEmbeddings?: EmbeddingsInput;
}

/**
 * sentence-transformers' util.cos_sim: the cosine similarity of every row of a with every row of b,
 * [M, N], in the core's SIMD kernels.
 * @throws {@link SwapformerError} BAD_ARGUMENT (different widths, packed bits, a non-finite value),
 * OUT_OF_MEMORY (more than 2^28 scores: use semanticSearch).
 * @group Embeddings and search
 */
export function cosSim(a: EmbeddingsInput, b: EmbeddingsInput): Promise<Tensor<[rows: number, columns: number]>>;
/**
 * sentence-transformers' util.dot_score: the dot product of every row of a with every row of b, [M, N].
 * @throws {@link SwapformerError} as {@link cosSim}.
 * @group Embeddings and search
 */
export function dotScore(a: EmbeddingsInput, b: EmbeddingsInput): Promise<Tensor<[rows: number, columns: number]>>;
/**
 * sentence-transformers' util.semantic_search: per query its topK corpus rows, best first. Packed
 * bits (binary / ubinary rows) are searched by Hamming distance.
 * @throws {@link SwapformerError} BAD_ARGUMENT (floats against bits, different widths, a bad option).
 * @group Embeddings and search
 */
export function semanticSearch(queryEmbeddings: EmbeddingsInput, corpusEmbeddings: EmbeddingsInput, options?: SearchOptions): Promise<SearchHit[][]>;
/**
 * sentence-transformers' quantize_embeddings: int8 / uint8 with per-dimension ranges (the options', else
 * the calibration rows', else these rows'), binary / ubinary packed bits; float32 gives a copy.
 * @throws {@link SwapformerError} BAD_ARGUMENT (packed input, a width not a multiple of 8 for bits,
 * a dimension whose range is empty).
 * @group Embeddings and search
 */
export function quantizeEmbeddings<P extends Precision>(embeddings: EmbeddingsInput, precision: P, options?: QuantizeOptions): Promise<Embeddings<P>>;

/**
 * Options of {@link maxSimSearch} and {@link sparseSearch}.
 * @group Embeddings and search
 */
export interface TopKOptions {
  /** The best k documents per query (all of them when there are fewer); a positive integer. Default 10. */
  topK?: number;
}

/**
 * ColBERT's late interaction (PyLate's colbert_scores): for each document, the sum over the query's
 * vectors of the largest dot product with the document's vectors, over real tokens only, in the core
 * (the products through the GEMM kernels). A document's score never depends on the others: PyLate's
 * colbert_scores pads documents with zero vectors to the longest of the batch, so that a query vector whose
 * every dot product is negative scores 0 there, and its scores depend on the batch.
 * @throws {@link SwapformerError} BAD_ARGUMENT (different widths, a document without vectors, a non-finite value).
 * @group Embeddings and search
 */
export function maxSim(query: EmbeddingsInput, documents: EmbeddingsInput | readonly EmbeddingsInput[]): Promise<Float32Array>;
/**
 * Per query its topK documents by MaxSim ({@link maxSim}), best first (ties: the lower corpusId).
 * @group Embeddings and search
 */
export function maxSimSearch(
  queries: readonly EmbeddingsInput[],
  documents: EmbeddingsInput | readonly EmbeddingsInput[],
  options?: TopKOptions,
): Promise<SearchHit[][]>;
/**
 * Dot products of sparse vectors, every row of a with every row of b, [M, N] (SparseEncoder.similarity's
 * default, bge-m3's lexical matching score), in the core.
 * @throws {@link SwapformerError} BAD_ARGUMENT (an index past 2^24, a non-finite value), OUT_OF_MEMORY (more than 2^28 scores).
 * @group Embeddings and search
 */
export function sparseSimilarity(
  a: SparseInput | readonly SparseInput[],
  b: SparseInput | readonly SparseInput[],
): Promise<Tensor<[rows: number, columns: number]>>;
/**
 * Per query its topK corpus vectors by sparse dot product, best first (ties: the lower corpusId), in the core.
 * @group Embeddings and search
 */
export function sparseSearch(
  queries: SparseInput | readonly SparseInput[],
  corpus: SparseInput | readonly SparseInput[],
  options?: TopKOptions,
): Promise<SearchHit[][]>;

/**
 * The checkpoint families swapformer maps onto its config (README "Pretrained encoders").
 * @group Pretrained
 */
export type PretrainedFamily =
  | 'bert'
  | 'electra'
  | 'roformer'
  | 'albert'
  | 'roberta'
  | 'jina-v3'
  | 'distilbert'
  | 'jina-bert'
  | 'nomic-bert'
  | 'modernbert'
  | 'gte'
  | 'eurobert'
  | 'neobert'
  | 't5'
  | 'mpnet'
  | 'deberta-v2';

/**
 * What a checkpoint's head does (transformers.js's pipeline names); every model embeds.
 * @group Pretrained
 */
export type PretrainedTask = 'feature-extraction' | 'text-classification' | 'token-classification' | 'fill-mask' | 'question-answering';

/**
 * The retrieval model a checkpoint is ({@link Pretrained.retrieval}): a SparseEncoder (SPLADE), a ColBERT
 * model (PyLate or colbert-ai's layout, with PyLate's settings) or bge-m3.
 * @group Pretrained
 */
export type RetrievalSettings =
  | {
      /** A SparseEncoder. */
      kind: 'splade';
      /** 1_SpladePooling's pooling_strategy. */
      pooling: 'max' | 'sum';
      /** 1_SpladePooling's activation_function. */
      activation: 'relu' | 'log1p_relu';
    }
  | {
      /** A ColBERT model. */
      kind: 'colbert';
      /** Where its settings come from: PyLate's config_sentence_transformers.json, or colbert-ai's artifact.metadata. */
      layout: 'pylate' | 'stanford';
      /** The token inserted after the first one of a query ('' for none). */
      queryPrefix: string;
      /** The token inserted after the first one of a document ('' for none). */
      documentPrefix: string;
      /** A query's tokens, the prefix included. */
      queryLength: number;
      /** A document's most tokens, the prefix included. */
      documentLength: number;
      /** Queries padded with the mask token to queryLength. */
      doQueryExpansion: boolean;
      /** The padding attended to. */
      attendToExpansionTokens: boolean;
      /** The words whose tokens a document's vectors leave out. */
      skiplistWords: string[];
    }
  | {
      /** bge-m3. */
      kind: 'bge-m3';
      /** colbert_linear's outputs. */
      colbertDim: number;
    };

/**
 * Options of {@link Pretrained.answerQuestion}, as the question-answering pipeline's parameters.
 * @group Tasks
 */
export interface QuestionAnsweringOptions {
  /** The answers returned; 1 gives the best answer itself. Default 1. */
  topK?: number;
  /** The longest answer in tokens. Default 15. */
  maxAnswerLen?: number;
  /** Tokens a window holds, question and special tokens included. Default min(the model's maxLength, 384). */
  maxSeqLen?: number;
  /** Tokens consecutive windows of the context share. Default min(maxSeqLen / 2, 128); at most maxSeqLen. */
  docStride?: number;
  /** Also the empty answer {score: the lowest of p_start[0] p_end[0] over the windows, start 0, end 0, answer ''}. Default false. */
  handleImpossibleAnswer?: boolean;
  /** Answers snapped to whole words of their window. Default true. */
  alignToWords?: boolean;
}

/**
 * An answer of {@link Pretrained.answerQuestion}: `context.slice(start, end) === answer`.
 * @group Tasks
 */
export interface QuestionAnswer {
  /** The span's probability (p_start p_end within its window), summed over the windows that give the same text (ignoring case). */
  score: number;
  /** Where it starts in the context, in UTF-16 units (String.prototype.slice's; Python's pipeline counts code points). */
  start: number;
  /** Where it ends (exclusive), in UTF-16 units. */
  end: number;
  /** The text. */
  answer: string;
}

/**
 * Options of {@link Pretrained.computeScore}.
 * @group Tasks
 */
export interface ComputeScoreOptions {
  /** The weights of the dense, sparse and colbert scores in the combined ones. Default [1, 1, 1]. */
  weights?: readonly [dense: number, sparse: number, colbert: number];
}

/**
 * bge-m3's compute_score: one score a pair for each mode and combination.
 * @group Tasks
 */
export interface M3Scores {
  /** Dot products of the normalised CLS vectors. */
  dense: Float32Array;
  /** Lexical matching: the products of the shared tokens' weights, summed. */
  sparse: Float32Array;
  /** MaxSim over the real tokens divided by the query's vectors. */
  colbert: Float32Array;
  /** (w_sparse sparse + w_dense dense) / (w_dense + w_sparse). */
  sparseDense: Float32Array;
  /** (w_dense dense + w_sparse sparse + w_colbert colbert) / the weights' sum. */
  colbertSparseDense: Float32Array;
}

/**
 * A classifier's input: a text, or a text pair.
 * @group Tasks
 */
export type ClassifyInput =
  | string
  | {
      /** The first text. */
      text: string;
      /** The second text of a pair. */
      textPair?: string;
    };

/**
 * Options of {@link Pretrained.classify}.
 * @group Tasks
 */
export interface ClassifyOptions {
  /** The best k labels; null: every label. Default 1. */
  topK?: number | null;
  /** Default: as Hugging Face's pipeline (regression: none; multi-label or one label: sigmoid; else softmax). */
  functionToApply?: 'softmax' | 'sigmoid' | 'none';
}

/**
 * A label and its score, best first.
 * @group Tasks
 */
export interface LabelScore {
  /** The label (config.json id2label). */
  label: string;
  /** Its score after the function applied. */
  score: number;
}

/**
 * Options of {@link Pretrained.predict}.
 * @group Tasks
 */
export interface PredictOptions {
  /** Default: config.json's sentence_transformers.activation_fn, else sigmoid for one label, none otherwise. */
  activation?: 'sigmoid' | 'softmax' | 'tanh' | 'none';
}

/**
 * Options of {@link Pretrained.rank}.
 * @group Tasks
 */
export interface RankOptions extends PredictOptions {
  /** The best k documents; default: all. */
  topK?: number | null;
  /** Include each document's text. Default false. */
  returnDocuments?: boolean;
  /** bge-m3: the weights of its dense, sparse and colbert scores. Default [1, 1, 1]. */
  weights?: readonly [dense: number, sparse: number, colbert: number];
}

/**
 * One document of {@link Pretrained.rank}, best first.
 * @group Tasks
 */
export interface Ranked {
  /** The document's index in `documents`. */
  corpusId: number;
  /** Its score. */
  score: number;
  /** The document, with returnDocuments. */
  text?: string;
}

/**
 * Options of {@link Pretrained.classifyTokens}.
 * @group Tasks
 */
export interface TokenClassificationOptions {
  /** Hugging Face's strategies: 'none' (one entity per token), 'simple' (B-/I- merging), or by word. Default 'simple'. */
  aggregationStrategy?: 'none' | 'simple' | 'first' | 'average' | 'max';
  /** Labels left out, after grouping. Default ['O']. */
  ignoreLabels?: readonly string[];
}

/**
 * aggregationStrategy 'none': one entity per token.
 * @group Tasks
 */
export interface TokenEntity {
  /** The token's label. */
  entity: string;
  /** Its softmax score. */
  score: number;
  /** The token's index in the encoding. */
  index: number;
  /** The token (the text itself for an unknown token). */
  word: string;
  /** Offset of its first character in the text, in UTF-16 units. */
  start: number;
  /** Offset past its last character, in UTF-16 units. */
  end: number;
}
/**
 * The other strategies: groups of tokens.
 * @group Tasks
 */
export interface EntityGroup {
  /** The group's label, without its B- / I- prefix. */
  entityGroup: string;
  /** The group's score (the mean of its tokens'). */
  score: number;
  /** The group's words, decoded. */
  word: string;
  /** Offset of its first character in the text, in UTF-16 units. */
  start: number;
  /** Offset past its last character, in UTF-16 units. */
  end: number;
}

/**
 * Options of {@link Pretrained.fillMask}.
 * @group Tasks
 */
export interface FillMaskOptions {
  /** Default 5 (at most the number of targets). */
  topK?: number;
  /** Score only these tokens (words outside the vocabulary: their first token). */
  targets?: string | readonly string[];
}

/**
 * A mask token as a text literal writes it: BERT's and ModernBERT's `[MASK]`, RoBERTa's and XLM-R's `<mask>`.
 * @group Tasks
 */
export type MaskToken = '[MASK]' | '<mask>';

/**
 * A text whose type shows two or more mask tokens: {@link Pretrained.fillMask} gives one array per mask.
 * @group Tasks
 */
export type TwoMasks = `${string}${MaskToken}${string}${MaskToken}${string}`;

/**
 * One candidate of {@link Pretrained.fillMask}, best first.
 * @group Tasks
 */
export interface FillMaskResult {
  /** Its softmax probability over the vocabulary (targets' not renormalised). */
  score: number;
  /** Its token id. */
  token: number;
  /** Its token, decoded. */
  tokenStr: string;
  /** The text with the mask filled, decoded as the pipeline does. */
  sequence: string;
}

/**
 * Options of {@link Pretrained.zeroShot}.
 * @group Tasks
 */
export interface ZeroShotOptions {
  /** The hypothesis each label is put in ('{}' is the label). Default 'This example is {}.'. */
  hypothesisTemplate?: string;
  /** Each label scored on its own (entailment vs contradiction). Default false. */
  multiLabel?: boolean;
}

/**
 * What {@link Pretrained.zeroShot} returns.
 * @group Tasks
 */
export interface ZeroShotResult {
  /** The text classified. */
  sequence: string;
  /** The candidate labels, best first. */
  labels: string[];
  /** Their scores, in the same order (summing to 1 unless multiLabel). */
  scores: number[];
}

/**
 * Where the lib declares Symbol.dispose: `[Symbol.dispose]()`, the same as dispose(), so that
 * `using model = await loadPretrained(...)` frees it at the end of the block.
 * @group Pretrained
 */
export interface Pretrained extends DisposeMember {}

/**
 * A Hugging Face encoder from {@link loadPretrained}: the encoder, its tokenizer and its
 * sentence-transformers recipe; it embeds, and with a head classifies, ranks, tags and fills masks.
 * Every method refuses a disposed model with DISPOSED; a task its head cannot serve is UNSUPPORTED_MODEL.
 * @group Pretrained
 */
export class Pretrained {
  private constructor();
  /** The encoder: every Encoder method works on it. */
  readonly encoder: Encoder;
  /** The checkpoint's tokenizer (tokenizer.json). */
  readonly tokenizer: Tokenizer;
  /** The embedding recipe: pooling, Dense layers, normalisation, prompts. */
  readonly recipe: Recipe;
  /** The family the checkpoint was read as. */
  readonly family: PretrainedFamily;
  /** The checkpoint's config.json, every object in it without a prototype (a key such as `__proto__` is data). */
  readonly hfConfig: Record<string, unknown>;
  /** The longest input in tokens: the maxLength option; else the smallest of max_seq_length,
   * model_max_length and the position plugin's limit; after a swap of the position scheme, the plugin's. */
  readonly maxLength: number;
  /** Whether withConfig swapped or rescaled the checkpoint's position scheme. */
  readonly swapped: boolean;
  /** What the checkpoint's head does. */
  readonly task: PretrainedTask;
  /** The head's labels (config.json id2label: one per row of the classifier), or null without a classifier head. */
  readonly labels: string[] | null;
  /** The tokenizer as the task pipelines read it: its special ids, sub-word prefix, decoding with
   * tokenizer_config.json's clean-up, and the special-tokens mask of an encoding. */
  readonly tokenizerView: TokenizerView;
  /** The prompts of config_sentence_transformers.json (name to text; a copy without a prototype), or null. */
  readonly prompts: Record<string, string> | null;
  /** The checkpoint's similarity function (similarity_fn_name), 'cosine' when it names none ('dot' for a SparseEncoder). */
  readonly similarityFnName: ScoreFunction;
  /** The retrieval model it is (SPLADE, ColBERT, bge-m3), or null. */
  readonly retrieval: RetrievalSettings | null;
  /** The outputs embed gives: 'dense' (a sentence embedding), 'sparse' (a masked-LM head, SPLADE, bge-m3), 'colbert' (ColBERT, bge-m3). */
  readonly outputs: Output[];
  /** The output embed gives by default: 'sparse' for a SparseEncoder, 'colbert' for a ColBERT model, else 'dense'. */
  readonly defaultOutput: Output;
  /** Whether dispose() has been called (or the encoder disposed). */
  readonly disposed: boolean;
  /** embed, the forward passes run in a worker where the runtime has threads: sparse vectors. */
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { output: 'sparse' }): Promise<SparseEmbedding[]>;
  /** embed, the forward passes run in a worker where the runtime has threads: token vectors. */
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { output: 'colbert' }): Promise<TokenEmbeddings[]>;
  /** embed, the forward passes run in a worker where the runtime has threads: several outputs. */
  embedAsync<O extends Output>(texts: string | readonly string[], options: EmbedOptions & { output: readonly O[] }): Promise<RetrievalOutputsOf<O>>;
  /** embed, the forward passes run in a worker where the runtime has threads: the last hidden states. */
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { pooling: 'none' }): Promise<Tensor<[batch: number, tokens: number, dModel: number]>>;
  /** embed, the forward passes run in a worker where the runtime has threads: per text its chunks' embeddings. */
  embedAsync(texts: string | readonly string[], options: EmbedOptions & { chunking: ChunkingOptions & { pool: 'none' } }): Promise<ChunkedEmbeddings[]>;
  /** embed, the forward passes run in a worker where the runtime has threads: embeddings in a precision. */
  embedAsync<P extends Precision>(
    texts: string | readonly string[],
    options: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max'; precision: P },
  ): Promise<Embeddings<P>>;
  /** embed, the forward passes run in a worker where the runtime has threads. */
  embedAsync(
    texts: string | readonly string[],
    options?: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max' },
  ): Promise<Tensor<[batch: number, dimensions: number]>>;
  /** embed, the forward passes run in a worker where the runtime has threads (options of any shape). */
  embedAsync(
    texts: string | readonly string[],
    options?: EmbedOptions,
  ): Promise<
    | Tensor<[batch: number, dimensions: number]>
    | Tensor<[batch: number, tokens: number, dModel: number]>
    | Embeddings
    | ChunkedEmbeddings[]
    | SparseEmbedding[]
    | TokenEmbeddings[]
    | RetrievalOutputs
  >;
  /** A sparse vector a text: SPLADE (SparseEncoder.encode), bge-m3's lexical weights. */
  embed(texts: string | readonly string[], options: EmbedOptions & { output: 'sparse' }): SparseEmbedding[];
  /** A text's token vectors: a ColBERT model's (PyLate's encode) or bge-m3's. */
  embed(texts: string | readonly string[], options: EmbedOptions & { output: 'colbert' }): TokenEmbeddings[];
  /** Several outputs from one pass. */
  embed<O extends Output>(texts: string | readonly string[], options: EmbedOptions & { output: readonly O[] }): RetrievalOutputsOf<O>;
  /** The last hidden states [B, T, dModel], rows past a text's end 0. */
  embed(texts: string | readonly string[], options: EmbedOptions & { pooling: 'none' }): Tensor<[batch: number, tokens: number, dModel: number]>;
  /** Per text, its chunks' embeddings [chunks, D] and offsets. */
  embed(texts: string | readonly string[], options: EmbedOptions & { chunking: ChunkingOptions & { pool: 'none' } }): ChunkedEmbeddings[];
  /** Sentence embeddings quantized over the call: int8 / uint8 [B, D], binary / ubinary [B, D / 8]. */
  embed<P extends Precision>(texts: string | readonly string[], options: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max'; precision: P }): Embeddings<P>;
  /**
   * Sentence embeddings [B, D] with the checkpoint's recipe, as sentence-transformers' encode (prompts,
   * strip, truncation at maxLength, Pooling, Dense, Normalize).
   * @throws {@link SwapformerError} BAD_ARGUMENT (texts, an option), SEQUENCE_TOO_LONG (maxLength, or a
   * text past it with truncate: false).
   */
  embed(texts: string | readonly string[], options?: EmbedOptions & { pooling?: 'mean' | 'cls' | 'max' }): Tensor<[batch: number, dimensions: number]>;
  /** Sentence embeddings, hidden states, chunks, sparse or token vectors, as the options say (options of any
   * shape; a SparseEncoder's and a ColBERT model's default output is theirs: give output to type it). */
  embed(
    texts: string | readonly string[],
    options?: EmbedOptions,
  ):
    | Tensor<[batch: number, dimensions: number]>
    | Tensor<[batch: number, tokens: number, dModel: number]>
    | Embeddings
    | ChunkedEmbeddings[]
    | SparseEmbedding[]
    | TokenEmbeddings[]
    | RetrievalOutputs;
  /** A corpus of any size with bounded memory, as sparse vectors. */
  embedStream(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options: EmbedStreamOptions & { output: 'sparse' },
  ): AsyncGenerator<EmbeddedBatch<SparseEmbedding[]>, void, undefined>;
  /** A corpus of any size with bounded memory, as token vectors. */
  embedStream(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options: EmbedStreamOptions & { output: 'colbert' },
  ): AsyncGenerator<EmbeddedBatch<TokenEmbeddings[]>, void, undefined>;
  /** A corpus of any size with bounded memory: texts (an iterable or async iterable of strings) read
   * batchSize at a time, each batch embedded in its turn on the runtime: the last hidden states. */
  embedStream(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options: EmbedStreamOptions & { pooling: 'none' },
  ): AsyncGenerator<EmbeddedBatch<Tensor<[batch: number, tokens: number, dModel: number]>>, void, undefined>;
  /** A corpus of any size with bounded memory: texts (an iterable or async iterable of strings) read
   * batchSize at a time, each batch embedded in its turn on the runtime: packed bits. */
  embedStream<P extends 'binary' | 'ubinary'>(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options: EmbedStreamOptions & { pooling?: 'mean' | 'cls' | 'max'; precision: P },
  ): AsyncGenerator<EmbeddedBatch<Embeddings<P>>, void, undefined>;
  /** A corpus of any size with bounded memory: texts (an iterable or async iterable of strings) read
   * batchSize at a time, each batch embedded in its turn on the runtime and yielded with its index. */
  embedStream(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options?: EmbedStreamOptions & { pooling?: 'mean' | 'cls' | 'max'; precision?: 'float32' },
  ): AsyncGenerator<EmbeddedBatch<Tensor<[batch: number, dimensions: number]>>, void, undefined>;
  /** embedStream with options of any shape. */
  embedStream(
    texts: (Iterable<string> & object) | AsyncIterable<string>,
    options?: EmbedStreamOptions,
  ): AsyncGenerator<
    EmbeddedBatch<
      | Tensor<[batch: number, dimensions: number]>
      | Tensor<[batch: number, tokens: number, dModel: number]>
      | Embeddings
      | SparseEmbedding[]
      | TokenEmbeddings[]
      | RetrievalOutputs
    >,
    void,
    undefined
  >;
  /** A text's token windows at word boundaries (a word is split only when it alone is longer than a window). */
  chunk(text: string, options?: ChunkOptions): Chunk[];
  /** SentenceTransformer.similarity: score(a_m, b_n) with the checkpoint's similarityFnName, [M, N]. */
  similarity(a: EmbeddingsInput, b: EmbeddingsInput): Tensor<[rows: number, columns: number]>;
  /** The same weights under changed config fields: a position plugin swapped, removed or rescaled
   * (the swapped-out plugin's tables dropped, every other weight kept bit for bit). A new Pretrained: dispose both. */
  withConfig(
    changes: Partial<ConfigBase> & Partial<PositionConfig> & Partial<RelativeBiasConfig>,
    options?: LoadOptions & {
      /** The new encoder's dtype. Default: this one's. */
      dtype?: Dtype;
      /** As loadPretrained's maxLength. Default: this model's when the position scheme is unchanged. */
      maxLength?: number;
    },
  ): Promise<Pretrained>;
  /** Text classification (a sequence-classification head): for one input its labels, best first. */
  classify(inputs: ClassifyInput, options?: ClassifyOptions): LabelScore[];
  /** Text classification (a sequence-classification head): per input its labels, best first. */
  classify(inputs: readonly ClassifyInput[], options?: ClassifyOptions): LabelScore[][];
  /** classify, the forward passes in a worker where the runtime has threads. */
  classifyAsync(inputs: ClassifyInput, options?: ClassifyOptions): Promise<LabelScore[]>;
  /** classify of several inputs, the forward passes in a worker where the runtime has threads. */
  classifyAsync(inputs: readonly ClassifyInput[], options?: ClassifyOptions): Promise<LabelScore[][]>;
  /** A cross-encoder's scores of [query, passage] pairs: [B] for one label, [B * labels] otherwise. */
  predict(pairs: readonly (readonly [string, string])[] | readonly [string, string], options?: PredictOptions): Float32Array;
  /** predict, the forward passes in a worker where the runtime has threads. */
  predictAsync(pairs: readonly (readonly [string, string])[] | readonly [string, string], options?: PredictOptions): Promise<Float32Array>;
  /** Documents ranked for a query, best first: by a one-label cross-encoder (CrossEncoder.rank), by a
   * ColBERT model's MaxSim ({@link maxSim}: the query's vectors against each document's), or by bge-m3's
   * combined score (its dense, sparse and colbert scores weighted by options.weights). */
  rank(query: string, documents: readonly string[], options?: RankOptions): Ranked[];
  /** rank, the forward passes in a worker where the runtime has threads. */
  rankAsync(query: string, documents: readonly string[], options?: RankOptions): Promise<Ranked[]>;
  /** aggregationStrategy 'none': a token-classification head's label of every token. */
  classifyTokens(text: string, options: TokenClassificationOptions & { aggregationStrategy: 'none' }): TokenEntity[];
  /** Entities from a token-classification head (grouped: aggregationStrategy 'simple' by default), with offsets into the text. */
  classifyTokens(text: string, options?: TokenClassificationOptions & { aggregationStrategy?: 'simple' | 'first' | 'average' | 'max' }): EntityGroup[];
  /** classifyTokens with a strategy known only at run time: per token for 'none', grouped otherwise. */
  classifyTokens(text: string, options?: TokenClassificationOptions): TokenEntity[] | EntityGroup[];
  /** classifyTokens per token, the forward passes in a worker where the runtime has threads. */
  classifyTokensAsync(text: string, options: TokenClassificationOptions & { aggregationStrategy: 'none' }): Promise<TokenEntity[]>;
  /** classifyTokens, the forward passes in a worker where the runtime has threads: grouped entities. */
  classifyTokensAsync(
    text: string,
    options?: TokenClassificationOptions & { aggregationStrategy?: 'simple' | 'first' | 'average' | 'max' },
  ): Promise<EntityGroup[]>;
  /** classifyTokens, the forward passes in a worker where the runtime has threads (a strategy known only at run time). */
  classifyTokensAsync(text: string, options?: TokenClassificationOptions): Promise<TokenEntity[] | EntityGroup[]>;
  /** A text literal with two or more masks ([MASK] or <mask> written in it): per mask its best tokens. */
  fillMask(text: TwoMasks, options?: FillMaskOptions): FillMaskResult[][];
  /**
   * The best tokens at the mask token, best first. Typed as one mask: a string built at run time
   * with several masks gives one array per mask, which its type cannot tell (write such a text as
   * a literal, or check `Array.isArray(result[0])`).
   */
  fillMask(text: string, options?: FillMaskOptions): FillMaskResult[];
  /** fillMask of a text literal with two or more masks, the forward passes in a worker where the runtime has threads. */
  fillMaskAsync(text: TwoMasks, options?: FillMaskOptions): Promise<FillMaskResult[][]>;
  /** fillMask (typed as one mask), the forward passes in a worker where the runtime has threads. */
  fillMaskAsync(text: string, options?: FillMaskOptions): Promise<FillMaskResult[]>;
  /**
   * Extractive question answering, as Hugging Face's question-answering pipeline (a …ForQuestionAnswering
   * head): the context in windows of maxSeqLen tokens sharing docStride, the spans scored and filtered per
   * window, answers aligned to words and merged across windows. topK 1 (the default): the best answer,
   * or null when no span is allowed.
   * @throws {@link SwapformerError} BAD_ARGUMENT (an empty question or context, an option, a stride the
   * tokenizer refuses), SEQUENCE_TOO_LONG (a question that leaves no room for the context in a window,
   * a window past the model's limit), UNSUPPORTED_MODEL (no question-answering head).
   */
  answerQuestion(question: string, context: string, options?: QuestionAnsweringOptions & { topK?: 1 }): QuestionAnswer | null;
  /** The topK best answers, best first. */
  answerQuestion(question: string, context: string, options: QuestionAnsweringOptions): QuestionAnswer[] | QuestionAnswer | null;
  /** answerQuestion, the forward passes in a worker where the runtime has threads. */
  answerQuestionAsync(question: string, context: string, options?: QuestionAnsweringOptions & { topK?: 1 }): Promise<QuestionAnswer | null>;
  /** answerQuestion of the topK best, the forward passes in a worker where the runtime has threads. */
  answerQuestionAsync(question: string, context: string, options: QuestionAnsweringOptions): Promise<QuestionAnswer[] | QuestionAnswer | null>;
  /**
   * bge-m3's compute_score over [query, passage] pairs: its dense, sparse and colbert scores and their
   * weighted combinations, from one pass over the texts.
   * @throws {@link SwapformerError} UNSUPPORTED_MODEL (not bge-m3), BAD_ARGUMENT (pairs, weights).
   */
  computeScore(pairs: readonly (readonly [string, string])[], options?: ComputeScoreOptions): M3Scores;
  /** computeScore, the forward passes in a worker where the runtime has threads. */
  computeScoreAsync(pairs: readonly (readonly [string, string])[], options?: ComputeScoreOptions): Promise<M3Scores>;
  /** SparseEncoder.decode: a sparse vector's [token, weight] pairs by weight, largest first (options.topK: the first k). */
  decodeSparse(vector: SparseInput, options?: TopKOptions): [token: string, weight: number][];
  /** SparseEncoder.decode of several vectors. */
  decodeSparse(vectors: readonly SparseInput[], options?: TopKOptions): [token: string, weight: number][][];
  /** Zero-shot classification with an NLI classifier. */
  zeroShot(text: string, candidateLabels: string | readonly string[], options?: ZeroShotOptions): ZeroShotResult;
  /** zeroShot, the forward passes in a worker where the runtime has threads. */
  zeroShotAsync(text: string, candidateLabels: string | readonly string[], options?: ZeroShotOptions): Promise<ZeroShotResult>;
  /** Frees the encoder's wasm memory; idempotent. Later calls throw DISPOSED. */
  dispose(): void;
}

/**
 * The tokenizer as the task pipelines read it ({@link Pretrained.tokenizerView}).
 * @group Tokenizer
 */
export interface TokenizerView {
  /** The tokenizer itself. */
  readonly tokenizer: Tokenizer;
  /** '##' for WordPiece, the BPE model's continuing_subword_prefix, or null. */
  readonly subwordPrefix: string | null;
  /** Whether decode applies clean_up_tokenization_spaces. */
  readonly cleanUp: boolean;
  /** The unknown token's id, or null. */
  readonly unkTokenId: number | null;
  /** The mask token's id, or null. */
  readonly maskTokenId: number | null;
  /** The padding token's id, or null. */
  readonly padTokenId: number | null;
  /** The token of an id, or null when the vocabulary has none. */
  idToToken(id: number): string | null;
  /** The id of a token, or null when the vocabulary has none. */
  tokenToId(token: string): number | null;
  /** As {@link Tokenizer.encode}. */
  encode(text: string, options?: EncodeOptions): Encoding;
  /** Tokens joined by the tokenizer's decoder (what a word of sub-word tokens reads as). */
  tokensToString(tokens: readonly string[]): string;
  /** The text of ids, with tokenizer_config.json's clean-up when cleanUp. */
  decode(
    ids: Numbers,
    options?: {
      /** Leave the special tokens out. Default false (as transformers' pipelines decode). */
      skipSpecialTokens?: boolean;
    },
  ): string;
  /** 1 for the tokens the post-processor added to a single sequence, 0 for the text's (as Rust's special_tokens_mask). */
  specialTokensMask(encoding: Encoding): number[];
}

/**
 * A Hugging Face encoder from its folder, URL, Hub id, files or converted file.
 * @throws {@link SwapformerError} UNSUPPORTED_MODEL (a checkpoint it cannot run, naming the field), BAD_FILE,
 * NOT_FOUND, NETWORK (downloads, the signal), BAD_ARGUMENT (an option).
 * @group Pretrained
 */
export function loadPretrained(source: PretrainedSource, options?: PretrainedOptions): Promise<Pretrained>;
