// The server's view of one Pretrained, through its public API only: what kind
// of model it is for TEI (embedding, classifier, reranker), how many tokens an
// input takes (checked before it joins a batch, so that one input too long
// never fails the others), and the three batched calls the batcher makes:
//
//   embed    Pretrained.embedAsync(texts, {normalize, dimensions, promptName, truncate, batchSize: n})
//   sparse   Pretrained.embedAsync(texts, {output: 'sparse', ...})            (/embed_sparse; /embed on SPLADE)
//   all      embedAsync with pooling 'none', or output 'colbert'                (/embed_all)
//   classify Pretrained.classifyAsync(inputs, {topK: null, functionToApply})   (/predict)
//   rerank   Pretrained.predictAsync(pairs, {activation})                      (/rerank)
//   late     Pretrained.rankAsync(query, documents)                            (/rerank on ColBERT, bge-m3)
//
// Every input of a batch is embedded or scored exactly as alone: swapformer's
// passes do not depend on what else is in the batch (tests/serve.test.js
// compares the bytes), so merging requests changes the speed, not the numbers.
import { validation } from './errors.js';
import { prepareText } from '../../bindings/pretrained/embed-run.js';

/** at[i]: the UTF-8 byte offset of UTF-16 offset i (inside a surrogate pair: after the pair). */
function utf8Offsets(text) {
  const n = text.length,
    at = new Int32Array(n + 1);
  let b = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    at[i] = b;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      b += 4;
      at[++i] = b;
    } else b += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  at[n] = b;
  return at;
}

const DTYPES = { f32: 'float32', f16: 'float16', q8: 'int8' };

export class Engine {
  #model;
  #prompts;

  /** maxInputLength: the longest input in tokens (the model's maxLength, at most --max-batch-tokens). */
  constructor(model, { maxInputLength, autoTruncate }) {
    this.#model = model;
    this.#prompts = model.prompts ?? {};
    this.maxInputLength = maxInputLength;
    this.autoTruncate = autoTruncate;
    const labels = model.task === 'text-classification' ? model.labels : null;
    /** TEI's model type: a one-label classifier is a reranker (router/src/lib.rs). */
    this.kind = labels ? (labels.length === 1 ? 'reranker' : 'classifier') : 'embedding';
    this.labels = labels;
    /** The vectors the model gives: 'dense', 'sparse', 'colbert' (Pretrained.outputs). */
    this.outputs = model.outputs;
    /** A SparseEncoder (SPLADE): /embed gives its sparse vectors in full, as TEI's splade pooling. */
    this.splade = model.retrieval?.kind === 'splade';
    /** Scores documents itself (ColBERT's MaxSim, bge-m3's scores): /rerank ranks with it. */
    this.lateInteraction = model.retrieval?.kind === 'colbert' || model.retrieval?.kind === 'bge-m3';
    /** The width of the embeddings (set by warmUp). */
    this.dimensions = null;
  }

  /** One pass before the first request: the embedding width, and the wasm compiled and warm. */
  async warmUp() {
    if (this.kind !== 'embedding') await this.#model.classifyAsync('warm up');
    else if (this.outputs.includes('dense')) this.dimensions = (await this.#model.embedAsync(['warm up'], { output: 'dense' })).shape[1];
    else if (this.splade) this.dimensions = this.#model.encoder.config.vocabSize;
    else await this.#model.embedAsync(['warm up']);
  }

  get model() {
    return this.#model;
  }

  get disposed() {
    return this.#model.disposed;
  }

  /** /info's model_type: {embedding: {pooling}} or {classifier | reranker: {id2label, label2id}}. */
  modelType() {
    if (this.kind === 'embedding') {
      const kind = this.#model.retrieval?.kind;
      const pooling =
        kind === 'splade' ? 'splade' : kind === 'colbert' ? 'colbert' : this.#model.recipe.pooling.map((p) => (p === 'lasttoken' ? 'last_token' : p)).join('+');
      return { embedding: { pooling } };
    }
    // no prototype: a label named __proto__ is a key like any other (JSON.stringify keeps it)
    const id2label = Object.create(null),
      label2id = Object.create(null);
    this.labels.forEach((label, i) => {
      id2label[String(i)] = label;
      label2id[label] = i;
    });
    return { [this.kind]: { id2label, label2id } };
  }

  get dtype() {
    return DTYPES[this.#model.encoder.dtype] ?? String(this.#model.encoder.dtype);
  }

  /** The prompt a prompt_name selects ('' for none; the checkpoint's default_prompt_name when none is named, as embed). */
  prompt(promptName) {
    if (promptName === undefined) {
      const name = this.#model.recipe.defaultPromptName;
      return name && Object.hasOwn(this.#prompts, name) ? this.#prompts[name] : '';
    }
    if (!Object.hasOwn(this.#prompts, promptName)) {
      const known = Object.keys(this.#prompts);
      throw validation(
        `prompt_name '${promptName}' is not one of this model's prompts${known.length ? ` (${known.join(', ')})` : ' (it has none)'}`,
        'prompt_name',
      );
    }
    return this.#prompts[promptName];
  }

  /** Token ids as text, to embed as any text (TEI embeds them as given; the same for the tokenizer's own ids). */
  decodeIds(ids, field) {
    const { tokenizer } = this.#model;
    const bad = ids.findIndex((id) => id >= tokenizer.vocabSize);
    if (bad >= 0)
      throw validation(
        `${field}[${bad}] = ${ids[bad]} is not a token id of this model (vocabulary size ${tokenizer.vocabSize}): token ids must come from the model's own tokenizer`,
        field,
      );
    return tokenizer.decode(ids, { skipSpecialTokens: true });
  }

  /**
   * TEI's /tokenize tokens of a text: {id, text, special, start, stop} with
   * UTF-8 byte offsets into the text, text the bytes they span; a special
   * token (the template's: the special-tokens mask) has its token as text
   * and null offsets (core/src/tokenization.rs into_tokens). At most
   * maxInputLength tokens, as /embed takes a text: cut (truncate) or 422.
   */
  tokens(text, addSpecialTokens, truncate) {
    const enc = this.#model.tokenizer.encode(text, truncate ? { addSpecialTokens, maxLength: this.maxInputLength } : { addSpecialTokens });
    this.fit(enc.ids.length, truncate);
    const special = addSpecialTokens ? this.#model.tokenizerView.specialTokensMask(enc) : null;
    // the text up to the last token's end: a text cut to maxInputLength tokens needs no more
    const end = enc.offsets.reduce((most, [, stop]) => Math.max(most, stop), 0);
    const head = text.slice(0, end),
      bytes = Buffer.from(head, 'utf8'),
      at = utf8Offsets(head);
    return enc.tokens.map((token, i) => {
      const id = enc.ids[i];
      if (special && special[i]) return { id, text: token, special: true, start: null, stop: null };
      const start = at[enc.offsets[i][0]],
        stop = at[enc.offsets[i][1]];
      return { id, text: bytes.subarray(start, stop).toString('utf8'), special: false, start, stop };
    });
  }

  /** The tokens embed gives a text: the prompt prepended, stripped, lowercased where the folder says (sentence-transformers' Transformer.tokenize). */
  embedTokens(text, prompt) {
    const t = (prompt + text).trim();
    return this.#model.tokenizer.encode(this.#model.recipe.doLowerCase ? t.toLowerCase() : t).ids.length;
  }

  /** The tokens of a text or a text pair, as the classifier takes it. */
  pairTokens(text, pair) {
    return this.#model.tokenizer.encode(text, pair === undefined ? undefined : { pair }).ids.length;
  }

  /**
   * An input of `tokens` tokens as the batch will take it: its length after
   * truncation, or 422 as TEI's encode_input when it is too long and not truncated.
   */
  fit(tokens, truncate) {
    if (tokens <= this.maxInputLength) return tokens;
    if (truncate) return this.maxInputLength;
    throw validation(`\`inputs\` must have less than ${this.maxInputLength} tokens. Given: ${tokens}`, 'inputs', 'too_long');
  }

  /** The tokens a document takes in a late-interaction ranking: as many as the model keeps (it truncates them itself). */
  lateTokens(text) {
    return Math.min(this.#model.tokenizer.encode(text).ids.length, this.maxInputLength);
  }

  /** Runs one batch: items of one key (batcher.js); returns one result per item. */
  async run(key, items) {
    const [task, ...args] = JSON.parse(key);
    if (task === 'sparse' || task === 'all') {
      const [promptName, truncate, isQuery] = args;
      const texts = items.map((x) => x.text);
      const colbert = task === 'all' && this.outputs.includes('colbert');
      const options = { promptName: promptName ?? undefined, truncate, batchSize: texts.length };
      if (task === 'sparse') return this.#model.embedAsync(texts, { ...options, output: 'sparse' });
      if (!colbert) {
        // TEI's /embed_all: the last hidden states, every token, no pooling
        const out = await this.#model.embedAsync(texts, { ...options, pooling: 'none' });
        const [, T, C] = out.shape;
        const p = this.prompt(promptName ?? undefined),
          cut = Number.isFinite(this.#model.maxLength) ? { maxLength: this.#model.maxLength } : undefined;
        return texts.map((t, i) => {
          const n = this.#model.tokenizer.encode(prepareText(this.#model, t, p), cut).ids.length; // the tokens embed gave it
          return { data: out.data.subarray(i * T * C, (i * T + n) * C), shape: [n, C] };
        });
      }
      const kind = this.#model.retrieval.kind;
      return this.#model.embedAsync(texts, {
        promptName: options.promptName,
        batchSize: texts.length,
        output: 'colbert',
        ...(kind === 'colbert' ? { isQuery } : {}),
      });
    }
    if (task === 'late') {
      const [query] = args;
      const ranked = await this.#model.rankAsync(
        query,
        items.map((x) => x.text),
      );
      const scores = new Array(items.length);
      for (const r of ranked) scores[r.corpusId] = r.score;
      return scores;
    }
    if (task === 'embed') {
      const [normalize, dimensions, promptName, truncate] = args;
      const texts = items.map((x) => x.text);
      const out = await this.#model.embedAsync(texts, {
        normalize,
        dimensions: dimensions ?? undefined,
        promptName: promptName ?? undefined,
        truncate,
        batchSize: texts.length,
      });
      const D = out.shape[1];
      return items.map((_, i) => out.data.subarray(i * D, (i + 1) * D));
    }
    if (task === 'classify') {
      const [functionToApply] = args;
      const inputs = items.map((x) => (x.pair === undefined ? x.text : { text: x.text, textPair: x.pair }));
      return this.#model.classifyAsync(inputs, { topK: null, functionToApply });
    }
    const [activation] = args; // rerank
    const scores = await this.#model.predictAsync(
      items.map((x) => [x.text, x.pair]),
      { activation },
    );
    return Array.from(scores);
  }
}
