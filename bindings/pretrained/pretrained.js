// loadPretrained: a Hugging Face encoder (its folder, URL, Hub id, dropped
// files, or a swapformer file written by the converter) as an Encoder, its
// tokenizer and its embedding recipe: a Pretrained.
//
//   source -> checkpoint.js (config, canonical tensors, tokenizer, recipe)
//          -> model-file.js checkpointSource (a model file's header, the data
//             streamed from the checkpoint's bytes) -> loadModel, the same
//             strict loader as every model, without the file built in memory.
import { SwapformerError, fail } from '../utils/errors.js';
import { readOptions } from '../utils/options.js';
import { loadModel, Encoder, EXCLUSIVE, RUNTIME } from '../runtime/encoder.js';
import { similarityOn, quantizeOn, sparseRowsOn, sparseScoresOn, maxSimOn } from '../runtime/embeddings.js';
import { Tokenizer } from '../tokenizers/tokenizer.js';
import { readFile, checkSignal } from './files.js';
import { readCheckpoint } from './checkpoint.js';
import { checkpointSource, swapformerMetadata, metadataStrings, pretrainedMetadata } from './model-file.js';
import { tokenizerView } from '../tasks/tokenizer-view.js';
import { labelNames } from '../tasks/scores.js';
import { embedSettings, embedRun, embedChunkedRun, chunkText, readTexts } from './embed-run.js';
import { outputsOf, defaultOutput, retrievalRun, lateRankRun, computeScoreRun, decodeSparse } from './retrieval-run.js';
import { readOptions as readTaskOptions, topKOption, booleanOption } from '../tasks/scores.js';
import { TASKS, classifyRun, predictRun, rankRun, zeroShotRun, classifyTokensRun, fillMaskRun, answerQuestionRun, runSync, runAsync } from './task-runs.js';

const own = (o, k) => (o !== null && typeof o === 'object' && Object.hasOwn(o, k) ? o[k] : undefined);

// ------------------------------------------------------------------ Pretrained

/** The config fields of the position scheme: a change to any of them is a swap. */
const POSITION_FIELDS = ['position', 'positionOptions', 'relativeBias', 'relativeBiasOptions', 'maxLen'];

export class Pretrained {
  #disposed = false;

  #maxLengthOption; // the maxLength option (checked against the position plugin), or undefined
  #checkpointLimits; // max_seq_length, model_max_length: what the checkpoint was trained to
  #swapped; // the position scheme differs from the checkpoint's: its limits no longer apply

  #tokenizerFiles; // tokenizer.json and tokenizer_config.json: what the tasks' tokenizer view reads
  #view = null;

  constructor({ encoder, tokenizer, tokenizerFiles, recipe, family, hfConfig, label, maxLength, checkpointLimits, swapped = false, retrieval = null }) {
    /** The Encoder: every method works, and its position plugin can be swapped on the same weights. */
    this.encoder = encoder;
    /** The checkpoint's tokenizer (tokenizer.json). */
    this.tokenizer = tokenizer;
    /** The embedding recipe: pooling modes, Dense layers, normalisation, max sequence length. */
    this.recipe = recipe;
    /** The family it was read as ('bert', 'electra', 'roformer', 'albert', 'roberta', 'jina-v3', 'mpnet', 'distilbert', 'jina-bert', 'nomic-bert', 'modernbert', 'gte', 'eurobert', 'neobert', 't5', 'deberta-v2'). */
    this.family = family;
    /** The checkpoint's config.json as parsed, every object in it without a prototype (its id2label and label2id maps names). */
    this.hfConfig = hfConfig ? withoutPrototypes(hfConfig) : hfConfig;
    /** The retrieval model it is: {kind: 'splade' | 'colbert' | 'bge-m3', ...its settings}, or null. */
    this.retrieval = retrieval;
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
  get swapped() {
    return this.#swapped;
  }

  /** What the checkpoint's head does: 'text-classification', 'token-classification', 'fill-mask',
   * 'question-answering', or 'feature-extraction' for an encoder alone or a ColBERT model (every model embeds). */
  get task() {
    return TASKS[this.encoder.config.head?.task] ?? 'feature-extraction';
  }

  /** The head's labels (config.json id2label, LABEL_i where absent), or null without a classifier. */
  get labels() {
    const head = this.encoder.config.head;
    return head && (head.task === 'sequence' || head.task === 'token') ? labelNames(this.hfConfig ?? {}, head.labels) : null;
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
  classify(inputs, options) {
    return this.#sync(classifyRun(this, inputs, options));
  }
  classifyAsync(inputs, options) {
    return this.#async(classifyRun(this, inputs, options));
  }

  /** sentence-transformers' CrossEncoder.predict: scores of [query, passage] pairs (a Float32Array). */
  predict(pairs, options) {
    return this.#sync(predictRun(this, pairs, options));
  }
  predictAsync(pairs, options) {
    return this.#async(predictRun(this, pairs, options));
  }

  /**
   * CrossEncoder.rank: [{corpusId, score, text?}] sorted by score. On a ColBERT
   * model, PyLate's MaxSim of the query's token vectors against each
   * document's; on bge-m3, the weighted mean of its dense, sparse and colbert
   * scores (options.weights, default [1, 1, 1]).
   */
  rank(query, documents, options) {
    return this.#sync(this.#late() ? this.#lateRank(query, documents, options) : rankRun(this, query, documents, options));
  }
  rankAsync(query, documents, options) {
    return this.#async(this.#late() ? this.#lateRank(query, documents, options) : rankRun(this, query, documents, options));
  }

  #late() {
    return this.retrieval?.kind === 'colbert' || this.retrieval?.kind === 'bge-m3';
  }

  // the core's scoring functions on this model's runtime
  #scoring() {
    const rt = Encoder[RUNTIME](this.encoder);
    return {
      sparseRows: (dense, k) => sparseRowsOn(rt, dense, k),
      maxSim: (q, docs) => maxSimOn(rt, [q], docs, 0)[0],
      sparseScores: (a, b) => sparseScoresOn(rt, [a], b, 0),
    };
  }

  #lateRank(query, documents, options) {
    return lateRankRun(this, query, documents, options, this.#scoring(), (o) => {
      const r = readTaskOptions(o, ['topK', 'returnDocuments', 'weights'], 'rank');
      return {
        topK: r.topK === undefined ? null : topKOption(r.topK, 'options.topK', { nullable: true }),
        returnDocuments: r.returnDocuments === undefined ? false : booleanOption(r.returnDocuments, 'options.returnDocuments'),
        weights: r.weights,
      };
    });
  }

  /**
   * bge-m3's compute_score over [query, passage] pairs: {dense, sparse,
   * colbert, sparseDense, colbertSparseDense}, one Float32Array each; options.weights
   * [dense, sparse, colbert] (default [1, 1, 1]) weigh the combined scores.
   */
  computeScore(pairs, options) {
    return this.#sync(computeScoreRun(this, pairs, options, this.#scoring(), (o) => readTaskOptions(o, ['weights'], 'computeScore')));
  }
  computeScoreAsync(pairs, options) {
    return this.#async(computeScoreRun(this, pairs, options, this.#scoring(), (o) => readTaskOptions(o, ['weights'], 'computeScore')));
  }

  /** SparseEncoder.decode: per sparse vector [[token, weight]] by weight, largest first (options.topK: the first k). */
  decodeSparse(vectors, options) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    return decodeSparse(this, vectors, own(readOptions(options, ['topK'], 'decodeSparse: options'), 'topK'));
  }

  /** Named entities as Hugging Face's token-classification pipeline (aggregationStrategy 'simple' by default). */
  classifyTokens(text, options) {
    return this.#sync(classifyTokensRun(this, text, options));
  }
  classifyTokensAsync(text, options) {
    return this.#async(classifyTokensRun(this, text, options));
  }

  /** Hugging Face's fill-mask pipeline: the best tokens at each mask token. */
  fillMask(text, options) {
    return this.#sync(fillMaskRun(this, text, options));
  }
  fillMaskAsync(text, options) {
    return this.#async(fillMaskRun(this, text, options));
  }

  /**
   * Extractive question answering as Hugging Face's question-answering
   * pipeline: the best span of context, {score, start, end, answer} (topK 1,
   * or null when no span is allowed), or the topK best as a list.
   */
  answerQuestion(question, context, options) {
    return this.#sync(answerQuestionRun(this, question, context, options));
  }
  answerQuestionAsync(question, context, options) {
    return this.#async(answerQuestionRun(this, question, context, options));
  }

  /** Hugging Face's zero-shot classification with an NLI classifier: {sequence, labels, scores}. */
  zeroShot(text, candidateLabels, options) {
    return this.#sync(zeroShotRun(this, text, candidateLabels, options));
  }
  zeroShotAsync(text, candidateLabels, options) {
    return this.#async(zeroShotRun(this, text, candidateLabels, options));
  }

  /** A requested length: a positive integer the position plugin encodes, else SEQUENCE_TOO_LONG (never lowered). */
  #checkLength(n, what) {
    if (!Number.isSafeInteger(n) || n < 2) fail('BAD_ARGUMENT', `${what} must be an integer >= 2, got ${String(n)}`);
    const plugin = this.encoder.maxSequenceLength;
    if (n > plugin)
      fail(
        'SEQUENCE_TOO_LONG',
        `${what} = ${n}: position '${this.encoder.config.position}' of this model encodes at most ${plugin} tokens (swap the scheme with withConfig to go further)`,
      );
    return n;
  }

  /**
   * Sentence embeddings, as sentence-transformers' encode: {data, shape: [B, D]}
   * with the checkpoint's recipe (float32, or the `precision` asked for), or
   * the last hidden states {data, shape: [B, T, dModel]} with pooling 'none';
   * with chunking.pool 'none', per text {embeddings, chunks}. Options:
   * pooling, normalize, dimensions, maxLength, prompt, promptName, batchSize
   * (32), onProgress({done, total}), precision, truncate (true), chunking.
   */
  embed(texts, options) {
    const { list, s } = this.#embedCall(texts, options, 'embed');
    if (this.#retrievalOutput(s)) return this.#shapeOutputs(this.#sync(this.#retrievalRun(list, s)), s);
    return this.#precision(this.#sync(s.chunks ? embedChunkedRun(this, list, s) : embedRun(this, list, s)), s);
  }

  /** embed with its passes in the runtime's driver worker where there are threads (one exclusive job). */
  async embedAsync(texts, options) {
    const { list, s } = this.#embedCall(texts, options, 'embed');
    if (this.#retrievalOutput(s)) return this.#shapeOutputs(await this.#async(this.#retrievalRun(list, s)), s);
    return this.#precision(await this.#async(s.chunks ? embedChunkedRun(this, list, s) : embedRun(this, list, s)), s);
  }

  /** The outputs embed can give: 'dense', 'sparse' (an mlm head, SPLADE, bge-m3), 'colbert' (ColBERT, bge-m3). */
  get outputs() {
    return outputsOf(this);
  }

  /** The output embed gives by default: 'sparse' for a SparseEncoder, 'colbert' for a ColBERT model, else 'dense'. */
  get defaultOutput() {
    return defaultOutput(this);
  }

  // anything but dense vectors alone goes through retrieval-run.js
  #retrievalOutput(s) {
    return !(s.outputs.size === 1 && s.outputs.has('dense'));
  }

  #retrievalRun(list, s) {
    const rt = Encoder[RUNTIME](this.encoder);
    return retrievalRun(this, list, s, (dense, k) => sparseRowsOn(rt, dense, k));
  }

  // one output as it is; several as {dense, sparse, colbert}
  #shapeOutputs(out, s) {
    return s.singleOutput ? out[[...s.outputs][0]] : out;
  }

  /**
   * Embeds a corpus of any size with bounded memory: texts (an iterable or
   * async iterable of strings) read batchSize at a time, each batch embedded
   * (in its turn on the runtime) and yielded as {index, embeddings}, index
   * the position of the batch's first text. precision: float32, binary, ubinary.
   */
  async *embedStream(texts, options) {
    const s = this.#settings(options, 'embedStream');
    if (texts === null || typeof texts !== 'object' || (typeof texts[Symbol.asyncIterator] !== 'function' && typeof texts[Symbol.iterator] !== 'function')) {
      fail('BAD_ARGUMENT', 'embedStream takes an iterable or async iterable of strings');
    }
    let batch = [],
      index = 0;
    const flush = async () => {
      const embeddings = this.#retrievalOutput(s)
        ? this.#shapeOutputs(await this.#async(this.#retrievalRun(batch, s)), s)
        : this.#precision(await this.#async(embedRun(this, batch, s, index)), s);
      const out = { index, embeddings };
      index += batch.length;
      batch = [];
      return out;
    };
    for await (const t of texts) {
      if (typeof t !== 'string') fail('BAD_ARGUMENT', `embedStream: text ${index + batch.length} must be a string, got ${t === null ? 'null' : typeof t}`);
      batch.push(t);
      if (batch.length === s.batchSize) yield await flush();
    }
    if (batch.length) yield await flush();
  }

  /** A text's token windows at word boundaries: [{text, start, end, tokens}] (options: maxTokens = maxLength, overlap = 0). */
  chunk(text, options) {
    return chunkText(this, text, options);
  }

  /** The prompts of config_sentence_transformers.json (name -> text), or null. */
  get prompts() {
    return this.recipe.prompts ? withoutPrototypes(this.recipe.prompts) : null;
  }

  /** The checkpoint's similarity function (config_sentence_transformers.json similarity_fn_name; default 'cosine'). */
  get similarityFnName() {
    return this.recipe.similarityFnName ?? 'cosine';
  }

  /** SentenceTransformer.similarity: score(a_m, b_n) with the checkpoint's function: {data, shape: [M, N]}. */
  similarity(a, b) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    return similarityOn(Encoder[RUNTIME](this.encoder), a, b, this.similarityFnName);
  }

  #embedCall(texts, options, call) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    const { list } = readTexts(texts);
    return { list, s: this.#settings(options, call) };
  }

  #settings(options, call) {
    const s = embedSettings(this, options, call, { outputs: this.outputs, fallback: this.defaultOutput });
    s.maxLength = this.#maxLength(s.maxLength);
    return s;
  }

  // quantize_embeddings over the call's embeddings (int8 / uint8 ranges: theirs)
  #precision(out, s) {
    if (s.precision === 'float32' || !out.shape) return out;
    return quantizeOn(Encoder[RUNTIME](this.encoder), out, s.precision);
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
   * plugin's table starts at zero (Encoder.withConfig); the head and the
   * recipe still apply. options: {maxLength?, dtype?, threads?, wasm?}.
   * A new Pretrained (dispose both).
   */
  async withConfig(changes, options) {
    if (this.disposed) fail('DISPOSED', 'this model has been disposed');
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) fail('BAD_ARGUMENT', 'withConfig takes an object of config fields');
    const { maxLength, ...encoderOptions } = readOptions(options, 'withConfig', 'withConfig: options');
    const before = this.encoder.config;
    const encoder = await this.encoder.withConfig(changes, encoderOptions);
    const after = encoder.config;
    const moved = POSITION_FIELDS.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    try {
      return new Pretrained({
        encoder,
        tokenizer: this.tokenizer,
        tokenizerFiles: this.#tokenizerFiles,
        recipe: this.recipe,
        family: this.family,
        hfConfig: this.hfConfig,
        retrieval: this.retrieval,
        label: this.source,
        maxLength: maxLength ?? (moved ? undefined : this.#maxLengthOption),
        checkpointLimits: this.#checkpointLimits,
        swapped: this.#swapped || moved,
      });
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

  get disposed() {
    return this.#disposed || this.encoder.disposed;
  }
}
if (typeof Symbol.dispose === 'symbol') Pretrained.prototype[Symbol.dispose] = Pretrained.prototype.dispose;

/** The smallest of the limits that apply (Infinity: none). */
function smallest(...limits) {
  const ok = limits.filter((n) => Number.isFinite(n) && n > 0);
  return ok.length ? Math.min(...ok) : Infinity;
}

/**
 * config.json's id2label against the classifier's outputs, at load: never a
 * model whose .labels and tasks fail later, nor one that keeps some of its
 * labels (transformers refuses both: its num_labels is len(id2label)).
 */
function checkLabels(hfConfig, head, label) {
  if (!head || (head.task !== 'sequence' && head.task !== 'token')) return;
  try {
    labelNames(hfConfig ?? {}, head.labels);
  } catch (e) {
    throw new SwapformerError('UNSUPPORTED_MODEL', `${label}: ${e.message} (the classifier's rows; transformers would not load these weights either)`);
  }
}

/**
 * JSON data with every object rebuilt without a prototype: a key read from a
 * file (a label or prompt named __proto__, constructor, toString) is data like
 * any other, and a name that is not there is undefined, never Object's member.
 */
function withoutPrototypes(v) {
  if (Array.isArray(v)) return v.map(withoutPrototypes);
  if (v === null || typeof v !== 'object') return v;
  const out = Object.create(null);
  for (const k of Object.keys(v)) out[k] = withoutPrototypes(v[k]);
  return out;
}

/**
 * A Hugging Face encoder ready to embed: loadPretrained(source, {onProgress,
 * hubUrl, revision, fetch, cache, signal, stallTimeout, maxLength, wasm,
 * threads, dtype}) -> Pretrained.
 */
export async function loadPretrained(source, options) {
  const opts = readOptions(options, 'loadPretrained');
  const fileOptions = {};
  for (const k of ['onProgress', 'hubUrl', 'revision', 'fetch', 'cache', 'signal', 'stallTimeout', 'token', 'offline', 'cacheDir'])
    if (own(opts, k) !== undefined) fileOptions[k] = own(opts, k);
  const wasm = own(opts, 'wasm'),
    maxLength = own(opts, 'maxLength'),
    threads = own(opts, 'threads'),
    dtype = own(opts, 'dtype'),
    task = own(opts, 'task');
  if (task !== undefined && typeof task !== 'string')
    fail('BAD_ARGUMENT', `options.task must be a string (an adapter of config.json's lora_adaptations), got ${typeof task}`);
  if (maxLength !== undefined && (!Number.isSafeInteger(maxLength) || maxLength < 2))
    fail('BAD_ARGUMENT', `options.maxLength must be an integer >= 2, got ${String(maxLength)}`);

  // a swapformer model file (the converter's output): bytes, or a path / URL ending in .safetensors
  let bytes = source instanceof Uint8Array ? source : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
  if (!bytes && (typeof source === 'string' || source instanceof URL) && /\.safetensors$/i.test(String(source instanceof URL ? source.pathname : source))) {
    bytes = await readFile(source, fileOptions);
  }
  let meta,
    label,
    model = bytes,
    close = () => {};
  if (bytes) {
    meta = swapformerMetadata(bytes);
    if (!meta) fail('BAD_FILE', 'loadPretrained: these bytes are not a swapformer model file (pass a Hugging Face folder, URL or id for a checkpoint)');
    if (!meta.tokenizer || !meta.recipe)
      fail(
        'BAD_FILE',
        'loadPretrained: this swapformer model file has no tokenizer and recipe (write it with `swapformer convert`); use loadModel for a bare encoder',
      );
    label = 'model file';
    if (task !== undefined && task !== meta.task)
      fail(
        'BAD_ARGUMENT',
        `options.task = ${JSON.stringify(task)}: this model file's weights ${meta.task ? `hold the '${meta.task}' adapter, merged when it was converted` : 'hold no task adapter'}`,
      );
  } else {
    const ck = await readCheckpoint(source, { ...fileOptions, task });
    close = ck.close; // a folder's weight files, read while they load
    label = ck.label;
    try {
      model = checkpointSource(ck.config, ck.tensors); // streamed into the engine: no file built in memory
      meta = metadataStrings(ck.metadata);
    } catch (e) {
      close();
      throw e;
    }
  }
  let encoder;
  try {
    checkSignal(fileOptions.signal, label);
    encoder = await loadModel(model, { wasm, threads, dtype });
  } catch (e) {
    if (e instanceof SwapformerError && (e.code === 'BAD_WEIGHTS' || e.code === 'BAD_CONFIG')) {
      throw new SwapformerError('UNSUPPORTED_MODEL', `${label}: the checkpoint does not fit the ${meta.family} layout swapformer knows: ${e.message}`);
    }
    throw e;
  } finally {
    close();
  }
  try {
    const m = pretrainedMetadata(meta, { dModel: encoder.config.dModel, folder: bytes ? undefined : label, head: encoder.config.head });
    const tokenizer = Tokenizer.fromJSON(m.tokenizer, { tokenizerConfig: m.tokenizerConfig, specialTokensMap: m.specialTokensMap });
    checkLabels(m.hfConfig, encoder.config.head, label);
    return new Pretrained({
      encoder,
      tokenizer,
      tokenizerFiles: { tokenizerJson: m.tokenizer, tokenizerConfig: m.tokenizerConfig },
      recipe: m.recipe,
      family: m.family,
      hfConfig: m.hfConfig,
      retrieval: m.retrieval,
      label,
      maxLength,
      checkpointLimits: [m.recipe.maxSeqLength, tokenizer.modelMaxLength],
    });
  } catch (e) {
    encoder.dispose();
    throw e;
  }
}
