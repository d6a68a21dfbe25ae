// loadPretrained: a Hugging Face encoder (its folder, URL, Hub id, dropped
// files, or a swapformer file written by the converter) as an Encoder, its
// tokenizer and its embedding recipe: a Pretrained.
//
//   source -> checkpoint.js (config, canonical tensors, tokenizer, recipe)
//          -> model-file.js checkpointSource (a model file's header, the data
//             streamed from the checkpoint's bytes) -> loadModel, the same
//             strict loader as every model, without the file built in memory.
import { SwapformerError, fail } from '../utils/errors.js';
import { deriveEncoder, loadModel, Encoder, EXCLUSIVE } from '../runtime/encoder.js';
import { Tokenizer } from '../tokenizers/tokenizer.js';
import { readFile, checkSignal } from './files.js';
import { pool, applyRecipe } from './recipe.js';
import { readCheckpoint } from './checkpoint.js';
import { checkpointSource, swapformerMetadata, metadataStrings, pretrainedMetadata } from './model-file.js';
import { tokenizerView } from '../tasks/tokenizer-view.js';
import { labelNames } from '../tasks/scores.js';
import { TASKS, classifyRun, predictRun, rankRun, zeroShotRun, classifyTokensRun, fillMaskRun, runSync, runAsync } from './task-runs.js';

const own = (o, k) => (o !== null && typeof o === 'object' && Object.hasOwn(o, k) ? o[k] : undefined);

// ------------------------------------------------------------------ Pretrained

const EMBED_BATCH = 32; // texts per forward pass: bounds the activations
/** The config fields of the position scheme: a change to any of them is a swap. */
const POSITION_FIELDS = ['position', 'positionOptions', 'relativeBias', 'relativeBiasOptions', 'maxLen'];

export class Pretrained {
  #disposed = false;

  #maxLengthOption; // the maxLength option (checked against the position plugin), or undefined
  #checkpointLimits; // max_seq_length, model_max_length: what the checkpoint was trained to
  #swapped; // the position scheme differs from the checkpoint's: its limits no longer apply

  #tokenizerFiles; // tokenizer.json and tokenizer_config.json: what the tasks' tokenizer view reads
  #view = null;

  constructor({ encoder, tokenizer, tokenizerFiles, recipe, family, hfConfig, label, maxLength, checkpointLimits, swapped = false }) {
    /** The Encoder: every method works, and its position plugin can be swapped on the same weights. */
    this.encoder = encoder;
    /** The checkpoint's tokenizer (tokenizer.json). */
    this.tokenizer = tokenizer;
    /** The embedding recipe: pooling modes, Dense layers, normalisation, max sequence length. */
    this.recipe = recipe;
    /** The family it was read as ('bert', 'roberta', 'distilbert', 'nomic-bert', 'jina-bert', 'modernbert', 't5'). */
    this.family = family;
    /** The checkpoint's config.json. */
    this.hfConfig = hfConfig;
    this.source = label;
    this.#tokenizerFiles = tokenizerFiles;
    this.#checkpointLimits = checkpointLimits;
    this.#swapped = swapped;
    this.#maxLengthOption = maxLength === undefined ? undefined : this.#checkLength(maxLength, 'options.maxLength');
  }

  /**
   * Longest input in tokens, special tokens included: the maxLength option
   * when given (up to what the position plugin encodes); else the smallest of
   * the recipe's max_seq_length, the tokenizer's model_max_length and the
   * plugin's limit; after a swap of the position scheme (withConfig), the new
   * plugin's limit alone (quality past the trained length is the experiment).
   */
  get maxLength() {
    const plugin = this.encoder.maxSequenceLength;
    if (this.#maxLengthOption !== undefined) return this.#maxLengthOption;
    return this.#swapped ? plugin : smallest(...this.#checkpointLimits, plugin);
  }

  /** Whether the position scheme was swapped or rescaled from the checkpoint's (withConfig). */
  get swapped() { return this.#swapped; }

  /** What the checkpoint's head does: 'text-classification', 'token-classification', 'fill-mask',
   * or 'feature-extraction' for an encoder alone (every model embeds). */
  get task() { return TASKS[this.encoder.config.head?.task] ?? 'feature-extraction'; }

  /** The head's labels (config.json id2label, LABEL_i where absent), or null without a classifier. */
  get labels() {
    const head = this.encoder.config.head;
    return head && head.task !== 'mlm' ? labelNames(this.hfConfig ?? {}, head.labels) : null;
  }

  /** The tokenizer as the tasks read it (ids to tokens, decoding, sub-word prefix, special-tokens masks). */
  get tokenizerView() {
    this.#view ??= tokenizerView(this.tokenizer, this.#tokenizerFiles);
    return this.#view;
  }

  // A task (task-runs.js) with sync passes, or async ones in one exclusive job of the runtime.
  #sync(run) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    return runSync(run, (ids, opts) => this.encoder.forward(ids, opts));
  }

  async #async(run) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    return Encoder[EXCLUSIVE](this.encoder, async (forward) => runAsync(run, async (ids, opts) => (await forward(ids, opts)).result));
  }

  /** Text classification with the checkpoint's head, as transformers.js's text-classification pipeline:
   * inputs a string, {text, textPair} or an array of either; per input [{label, score}] sorted
   * (topK = 1; null: every label), one input: that array. */
  classify(inputs, options) { return this.#sync(classifyRun(this, inputs, options)); }
  classifyAsync(inputs, options) { return this.#async(classifyRun(this, inputs, options)); }

  /** sentence-transformers' CrossEncoder.predict: scores of [query, passage] pairs (a Float32Array). */
  predict(pairs, options) { return this.#sync(predictRun(this, pairs, options)); }
  predictAsync(pairs, options) { return this.#async(predictRun(this, pairs, options)); }

  /** CrossEncoder.rank: [{corpusId, score, text?}] sorted by score. */
  rank(query, documents, options) { return this.#sync(rankRun(this, query, documents, options)); }
  rankAsync(query, documents, options) { return this.#async(rankRun(this, query, documents, options)); }

  /** Named entities as Hugging Face's token-classification pipeline (aggregationStrategy 'simple' by default). */
  classifyTokens(text, options) { return this.#sync(classifyTokensRun(this, text, options)); }
  classifyTokensAsync(text, options) { return this.#async(classifyTokensRun(this, text, options)); }

  /** Hugging Face's fill-mask pipeline: the best tokens at each mask token. */
  fillMask(text, options) { return this.#sync(fillMaskRun(this, text, options)); }
  fillMaskAsync(text, options) { return this.#async(fillMaskRun(this, text, options)); }

  /** Hugging Face's zero-shot classification with an NLI classifier: {sequence, labels, scores}. */
  zeroShot(text, candidateLabels, options) { return this.#sync(zeroShotRun(this, text, candidateLabels, options)); }
  zeroShotAsync(text, candidateLabels, options) { return this.#async(zeroShotRun(this, text, candidateLabels, options)); }

  /** A requested length: a positive integer the position plugin encodes, else SEQUENCE_TOO_LONG (never lowered). */
  #checkLength(n, what) {
    if (!Number.isSafeInteger(n) || n < 2) fail('BAD_ARGUMENT', `${what} must be an integer >= 2, got ${String(n)}`);
    const plugin = this.encoder.maxSequenceLength;
    if (n > plugin) fail('SEQUENCE_TOO_LONG', `${what} = ${n}: position '${this.encoder.config.position}' of this model encodes at most ${plugin} tokens (swap the scheme with withConfig to go further)`);
    return n;
  }

  /**
   * Sentence embeddings: {data, shape: [B, D]} with the checkpoint's recipe,
   * or the last hidden states {data, shape: [B, T, dModel]} with pooling 'none'.
   */
  embed(texts, options) {
    return this.#embed(texts, options, (ids, opts) => this.encoder.forward(ids, opts), (f) => f());
  }

  /**
   * embed without blocking the calling thread where the runtime has threads
   * (the forward passes run in a worker: Encoder.forwardAsync); elsewhere it
   * computes here, as embed does.
   */
  async embedAsync(texts, options) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    // one job of the encoder's runtime: its passes run together, after the calls made before
    return Encoder[EXCLUSIVE](this.encoder, (forward) => this.#embed(texts, options, async (ids, opts) => (await forward(ids, opts)).result, async (f) => {
      const parts = [];
      for await (const part of f()) parts.push(part);
      return parts;
    }));
  }

  // The texts -> batches -> pooled recipe, with forward sync or async.
  #embed(texts, options, forward, drive) {
    if (this.#disposed || this.encoder.disposed) fail('DISPOSED', 'this model has been disposed');
    const list = readTexts(texts);
    const opts = options ?? {};
    if (typeof opts !== 'object' || Array.isArray(opts)) fail('BAD_ARGUMENT', 'options must be an object');
    const pooling = own(opts, 'pooling'), normalize = own(opts, 'normalize'), dimensions = own(opts, 'dimensions');
    const maxLength = this.#maxLength(own(opts, 'maxLength'));
    if (pooling !== undefined && !['mean', 'cls', 'max', 'none'].includes(pooling)) fail('BAD_ARGUMENT', `options.pooling must be 'mean', 'cls', 'max' or 'none', got ${JSON.stringify(pooling)}`);
    if (normalize !== undefined && typeof normalize !== 'boolean') fail('BAD_ARGUMENT', 'options.normalize must be a boolean');
    // as sentence-transformers' Transformer.tokenize: stripped, lowercased when the folder says so
    const prepared = list.map((t) => (this.recipe.doLowerCase ? t.trim().toLowerCase() : t.trim()));
    const encoded = prepared.map((t) => this.tokenizer.encode(t, { maxLength: Number.isFinite(maxLength) ? maxLength : undefined }));
    const inputs = (batch) => [batch.map((e) => e.ids), { typeIds: batch.map((e) => e.typeIds) }];
    if (pooling === 'none') { // the last hidden states, one pass
      const out = forward(...inputs(encoded));
      const shape = (o) => ({ data: o.data, shape: o.shape });
      return out instanceof Promise ? out.then(shape) : shape(out);
    }
    const modes = pooling ? [pooling] : this.recipe.pooling;
    const finish = (hidden, batch) => applyRecipe(pool(hidden, batch.map((e) => e.ids.length), modes), this.recipe,
      { normalize, dimensions, matryoshkaNorm: this.family === 'nomic-bert' && dimensions != null });
    const join = (parts) => {
      const D = parts[0].shape[1], data = new Float32Array(list.length * D);
      let at = 0;
      for (const p of parts) { data.set(p.data, at); at += p.data.length; }
      return { data, shape: [list.length, D] };
    };
    const batches = [];
    for (let s = 0; s < encoded.length; s += EMBED_BATCH) batches.push(encoded.slice(s, s + EMBED_BATCH));
    const result = drive(function* () { // one forward pass per batch of EMBED_BATCH texts
      for (const batch of batches) {
        const out = forward(...inputs(batch));
        yield out instanceof Promise ? out.then((h) => finish(h, batch)) : finish(out, batch);
      }
    });
    return result instanceof Promise ? result.then(join) : join([...result]);
  }

  #maxLength(requested) {
    return requested === undefined ? this.maxLength : this.#checkLength(requested, 'options.maxLength');
  }

  /**
   * The same checkpoint with config fields changed on the same weights: a
   * position plugin swapped, removed or rescaled (position, positionOptions,
   * relativeBias, relativeBiasOptions, maxLen), e.g. {position: 'alibi'} or
   * {relativeBias: 'none'} (a plugin swapped in without its options gets its
   * defaults). The tensors of a plugin
   * swapped out are dropped, every other weight is kept bit for bit, a new
   * plugin's table starts at zero (Encoder deriveEncoder); the head and the
   * recipe still apply. options: {maxLength?, dtype?, threads?, wasm?}.
   * A new Pretrained (dispose both).
   */
  async withConfig(changes, options) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) fail('BAD_ARGUMENT', 'withConfig takes an object of config fields');
    const opts = options ?? {};
    if (typeof opts !== 'object' || Array.isArray(opts)) fail('BAD_ARGUMENT', 'withConfig: options must be an object');
    const { maxLength, ...encoderOptions } = opts;
    const before = this.encoder.config;
    const config = { ...before, ...changes };
    // a plugin swapped in without options gets its defaults, not the old plugin's options
    for (const [slot, opts] of [['position', 'positionOptions'], ['relativeBias', 'relativeBiasOptions']]) {
      if (Object.hasOwn(changes, slot) && changes[slot] !== before[slot] && !Object.hasOwn(changes, opts)) delete config[opts];
    }
    const encoder = await deriveEncoder(this.encoder, config, encoderOptions);
    const after = encoder.config;
    const moved = POSITION_FIELDS.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    try {
      return new Pretrained({ encoder, tokenizer: this.tokenizer, tokenizerFiles: this.#tokenizerFiles, recipe: this.recipe, family: this.family, hfConfig: this.hfConfig,
        label: this.source, maxLength: maxLength ?? (moved ? undefined : this.#maxLengthOption), checkpointLimits: this.#checkpointLimits,
        swapped: this.#swapped || moved });
    } catch (e) {
      encoder.dispose();
      throw e;
    }
  }

  /** Frees the encoder; idempotent. */
  dispose() {
    this.#disposed = true;
    this.encoder.dispose();
  }

  get disposed() { return this.#disposed || this.encoder.disposed; }
}
if (typeof Symbol.dispose === 'symbol') Pretrained.prototype[Symbol.dispose] = Pretrained.prototype.dispose;

/** The texts as a plain array of strings, each element read once (a hole or a non-string refused, naming texts[i]). */
function readTexts(texts) {
  if (typeof texts === 'string') return [texts];
  if (!Array.isArray(texts) || texts.length === 0) fail('BAD_ARGUMENT', 'texts must be a string or a non-empty array of strings');
  const n = texts.length, list = new Array(n);
  for (let i = 0; i < n; i++) {
    if (!Object.hasOwn(texts, i)) fail('BAD_ARGUMENT', `texts[${i}] is a hole in the array: every text must be a string`);
    const t = texts[i];
    if (typeof t !== 'string') fail('BAD_ARGUMENT', `texts[${i}] must be a string, got ${t === null ? 'null' : typeof t}`);
    list[i] = t;
  }
  return list;
}

/** The smallest of the limits that apply (Infinity: none). */
function smallest(...limits) {
  const ok = limits.filter((n) => Number.isFinite(n) && n > 0);
  return ok.length ? Math.min(...ok) : Infinity;
}

/** config.json's id2label against the classifier's outputs, at load: never a model whose .labels and tasks fail later. */
function checkLabels(hfConfig, head, label) {
  if (!head || head.task === 'mlm') return;
  try {
    labelNames(hfConfig ?? {}, head.labels);
  } catch (e) {
    throw new SwapformerError('UNSUPPORTED_MODEL', `${label}: ${e.message} (the classifier's rows)`);
  }
}

/**
 * A Hugging Face encoder ready to embed: loadPretrained(source, {onProgress,
 * hubUrl, revision, fetch, cache, signal, stallTimeout, maxLength, wasm,
 * threads, dtype}) -> Pretrained.
 */
export async function loadPretrained(source, options) {
  const opts = options ?? {};
  if (typeof opts !== 'object' || Array.isArray(opts)) fail('BAD_ARGUMENT', 'options must be an object');
  const fileOptions = {};
  for (const k of ['onProgress', 'hubUrl', 'revision', 'fetch', 'cache', 'signal', 'stallTimeout']) if (own(opts, k) !== undefined) fileOptions[k] = own(opts, k);
  const wasm = own(opts, 'wasm'), maxLength = own(opts, 'maxLength'), threads = own(opts, 'threads'), dtype = own(opts, 'dtype');
  if (maxLength !== undefined && (!Number.isSafeInteger(maxLength) || maxLength < 2)) fail('BAD_ARGUMENT', `options.maxLength must be an integer >= 2, got ${String(maxLength)}`);

  // a swapformer model file (the converter's output): bytes, or a path / URL ending in .safetensors
  let bytes = source instanceof Uint8Array ? source : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
  if (!bytes && (typeof source === 'string' || source instanceof URL) && /\.safetensors$/i.test(String(source instanceof URL ? source.pathname : source))) {
    bytes = await readFile(source, fileOptions);
  }
  let meta, label, model = bytes;
  if (bytes) {
    meta = swapformerMetadata(bytes);
    if (!meta) fail('BAD_FILE', 'loadPretrained: these bytes are not a swapformer model file (pass a Hugging Face folder, URL or id for a checkpoint)');
    if (!meta.tokenizer || !meta.recipe) fail('BAD_FILE', 'loadPretrained: this swapformer model file has no tokenizer and recipe (write it with `swapformer convert`); use loadModel for a bare encoder');
    label = 'model file';
  } else {
    const ck = await readCheckpoint(source, fileOptions);
    model = checkpointSource(ck.config, ck.tensors); // streamed into wasm: no file built in memory
    meta = metadataStrings(ck.metadata);
    label = ck.label;
  }
  checkSignal(fileOptions.signal, label);
  let encoder;
  try {
    encoder = await loadModel(model, { wasm, threads, dtype });
  } catch (e) {
    if (e instanceof SwapformerError && (e.code === 'BAD_WEIGHTS' || e.code === 'BAD_CONFIG')) {
      throw new SwapformerError('UNSUPPORTED_MODEL', `${label}: the checkpoint does not fit the ${meta.family} layout swapformer knows: ${e.message}`);
    }
    throw e;
  }
  try {
    const m = pretrainedMetadata(meta, { dModel: encoder.config.dModel, folder: bytes ? undefined : label });
    const tokenizer = Tokenizer.fromJSON(m.tokenizer, { tokenizerConfig: m.tokenizerConfig, specialTokensMap: m.specialTokensMap });
    checkLabels(m.hfConfig, encoder.config.head, label);
    return new Pretrained({ encoder, tokenizer, tokenizerFiles: { tokenizerJson: m.tokenizer, tokenizerConfig: m.tokenizerConfig }, recipe: m.recipe, family: m.family, hfConfig: m.hfConfig, label, maxLength,
      checkpointLimits: [m.recipe.maxSeqLength, tokenizer.modelMaxLength] });
  } catch (e) {
    encoder.dispose();
    throw e;
  }
}
