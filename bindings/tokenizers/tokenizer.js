// Tokenizer: a pure-JS runner for Hugging Face tokenizer.json files that gives the
// same ids, tokens, type ids, offsets and decoded text as Hugging Face's Rust
// `tokenizers`. No dependencies, no `node:` imports: it runs the same in Node and
// in browsers.
//
// The pipeline, one module per stage under ./tokenizer/:
//   added-vocabulary.js   added tokens split out of the raw / normalized text
//   normalizers.js        BertNormalizer, Precompiled (SentencePiece), NF*, Replace...
//   pre-tokenizers.js     BertPreTokenizer, ByteLevel, Metaspace, Split...
//   models.js             WordPiece, BPE, Unigram, WordLevel
//   post-processors.js    TemplateProcessing, BertProcessing, RobertaProcessing...
//   decoders.js           WordPiece, ByteLevel, Metaspace, ByteFallback...
//   normalized-string.js  the string + alignment bookkeeping behind the offsets
// Offsets are in UTF-16 code units of the JS string they came from.

import { SwapformerError } from '../utils/errors.js';
import { buildNormalizer } from './normalizers.js';
import { buildPreTokenizer } from './pre-tokenizers.js';
import { buildModel } from './models.js';
import { buildPostProcessor, postProcess } from './post-processors.js';
import { buildDecoder } from './decoders.js';
import { AddedVocabulary } from './added-vocabulary.js';

const badArgument = (message) => new SwapformerError('BAD_ARGUMENT', message);

/** Keeps the first `n` tokens of an encoding. */
function truncated(enc, n) {
  return Object.fromEntries(Object.entries(enc).map(([k, v]) => [k, v.slice(0, n)]));
}

/** Code point offsets in `text` → UTF-16 offsets. */
function utf16Offsets(text) {
  const map = [0];
  let u = 0;
  for (const c of text) { u += c.length; map.push(u); }
  return (i) => map[i] ?? i;
}

/**
 * Rust's truncate_encodings with the longest_first strategy, direction right,
 * no stride: a single sequence keeps its first `max` tokens; a pair keeps the
 * shorter one whole when it fits in half, else both are cut to about half (the
 * longer one gets the odd token).
 */
function truncateLongestFirst(a, b, max) {
  if (b === null) return [a.ids.length > max ? truncated(a, max) : a, null];
  if (max === 0) return [truncated(a, 0), truncated(b, 0)];
  if (a.ids.length + b.ids.length <= max) return [a, b];
  let n1 = a.ids.length, n2 = b.ids.length;
  const swap = n1 > n2;
  if (swap) [n1, n2] = [n2, n1];
  n2 = n1 > max ? n1 : Math.max(n1, max - n1);
  if (n1 + n2 > max) { n1 = Math.floor(max / 2); n2 = n1 + (max % 2); }
  if (swap) [n1, n2] = [n2, n1];
  return [truncated(a, n1), truncated(b, n2)];
}

/**
 * Rust's truncate_encodings with only_first: the first sequence gives up the
 * tokens the pair has too many (the second stays whole); an error, as Rust's
 * "sequence to truncate too short", when the first would have none left.
 */
function truncateOnlyFirst(a, b, max) {
  const over = a.ids.length + (b ? b.ids.length : 0) - max;
  if (over <= 0) return [a, b];
  if (a.ids.length <= over) throw new SwapformerError('SEQUENCE_TOO_LONG', `truncation 'only_first': the second sequence has ${b ? b.ids.length : 0} tokens, which leave the first none within maxLength (${max} tokens besides the special ones)`);
  return [truncated(a, a.ids.length - over), b];
}

/** The content of a special-token entry of tokenizer_config.json / special_tokens_map.json. */
const tokenContent = (v) => (typeof v === 'string' ? v : typeof v?.content === 'string' ? v.content : null);

export class Tokenizer {
  /**
   * Builds a tokenizer from tokenizer.json (an object or its text) and, when present,
   * tokenizer_config.json / special_tokens_map.json objects.
   */
  static fromJSON(tokenizerJson, { tokenizerConfig, specialTokensMap } = {}) {
    let json = tokenizerJson;
    if (typeof json === 'string') {
      try { json = JSON.parse(json); } catch (e) { throw badArgument(`tokenizerJson is not valid JSON: ${e.message}`); }
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw badArgument('tokenizerJson must be an object or a JSON string');
    for (const [name, v] of [['tokenizerConfig', tokenizerConfig], ['specialTokensMap', specialTokensMap]]) {
      if (v != null && (typeof v !== 'object' || Array.isArray(v))) throw badArgument(`${name} must be an object`);
    }
    return new Tokenizer(json, tokenizerConfig ?? {}, specialTokensMap ?? {});
  }

  /** @private use Tokenizer.fromJSON */
  constructor(json, config, specialTokensMap) {
    if (json.version !== undefined && json.version !== '1.0') {
      throw new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: version = ${JSON.stringify(json.version)} is not supported`);
    }
    this._normalizer = buildNormalizer(json.normalizer);
    this._preTokenizer = buildPreTokenizer(json.pre_tokenizer);
    this._model = buildModel(json.model);
    this._postProcessor = buildPostProcessor(json.post_processor);
    this._decoder = buildDecoder(json.decoder);
    if (json.added_tokens != null && !Array.isArray(json.added_tokens)) {
      throw new SwapformerError('UNSUPPORTED_MODEL', `tokenizer.json: added_tokens = ${JSON.stringify(json.added_tokens)} is not supported`);
    }
    this._added = new AddedVocabulary(json.added_tokens ?? [], this._model, this._normalizer);
    this._config = config;
    this._specialTokensMap = specialTokensMap;
  }

  /**
   * Encodes `text` (and `pair`). With `maxLength`, the content is truncated first
   * (longest_first for a pair) so that, with the special tokens added afterwards,
   * the result has at most `maxLength` tokens, as Hugging Face does with truncation=True;
   * `truncation: 'only_first'` cuts only the first sequence of a pair (Hugging Face's
   * ONLY_FIRST, what the zero-shot pipeline asks for).
   * @returns {{ids: Int32Array, typeIds: Int32Array, tokens: string[], offsets: [number, number][]}}
   */
  encode(text, { pair, addSpecialTokens = true, maxLength, truncation = 'longest_first' } = {}) {
    if (typeof text !== 'string') throw badArgument('text must be a string');
    if (truncation !== 'longest_first' && truncation !== 'only_first') throw badArgument(`truncation must be 'longest_first' or 'only_first', got ${JSON.stringify(truncation)}`);
    if (pair != null && typeof pair !== 'string') throw badArgument('pair must be a string');
    if (typeof addSpecialTokens !== 'boolean') throw badArgument('addSpecialTokens must be a boolean');
    const isPair = pair != null;
    const added = addSpecialTokens && this._postProcessor ? this._postProcessor.addedTokens(isPair) : 0;
    if (maxLength != null) {
      if (!Number.isInteger(maxLength) || maxLength < 0) throw badArgument(`maxLength must be a non-negative integer (got ${maxLength})`);
      if (maxLength < added) throw badArgument(`maxLength must be at least ${added}, the number of special tokens (got ${maxLength})`);
    }
    let a = this._encodeSequence(text, 0, maxLength);
    let b = isPair ? this._encodeSequence(pair, 1, maxLength) : null;
    if (maxLength != null) [a, b] = (truncation === 'only_first' ? truncateOnlyFirst : truncateLongestFirst)(a, b, maxLength - added);
    const enc = postProcess(this._postProcessor, b === null ? [a] : [a, b], addSpecialTokens);
    const units = [utf16Offsets(text), isPair ? utf16Offsets(pair) : null];
    return {
      ids: Int32Array.from(enc.ids),
      typeIds: Int32Array.from(enc.typeIds),
      tokens: enc.tokens,
      offsets: enc.offsets.map(([s, e], i) => (enc.seqs[i] < 0 ? [s, e] : [units[enc.seqs[i]](s), units[enc.seqs[i]](e)])),
    };
  }

  /**
   * One sequence (0 = text, 1 = pair): added tokens, normalizer, pre-tokenizer, model.
   * When truncating, Rust (>= 0.23) stops tokenizing a sequence once it has
   * `maxLength` tokens; for a pair this decides which one longest_first sees as
   * the longer, so we stop at the same place.
   */
  _encodeSequence(text, seq, maxLength) {
    const pts = this._added.extractAndNormalize(this._normalizer, text);
    if (this._preTokenizer) this._preTokenizer.preTokenize(pts);
    pts.tokenize((s) => this._model.tokenize(s), maxLength ?? Infinity);
    return pts.intoEncoding(seq, seq);
  }

  /** The text of `ids` (unknown ids are skipped; special tokens too unless skipSpecialTokens is false). */
  decode(ids, { skipSpecialTokens = true } = {}) {
    if (!(Array.isArray(ids) || ArrayBuffer.isView(ids))) throw badArgument('ids must be an array of integers');
    if (typeof skipSpecialTokens !== 'boolean') throw badArgument('skipSpecialTokens must be a boolean');
    const tokens = [];
    for (const id of ids) {
      if (!Number.isInteger(id)) throw badArgument(`ids must be an array of integers (got ${id})`);
      const token = this._added.idToToken(id) ?? this._model.byId.get(id);
      if (token === undefined) continue;
      if (skipSpecialTokens && this._added.special.has(token)) continue;
      tokens.push(token);
    }
    return this._decoder ? this._decoder.decodeChain(tokens).join('') : tokens.join(' ');
  }

  /** Number of ids, added tokens included (an added token already in the model vocabulary counts once). */
  get vocabSize() {
    let extra = 0;
    for (const content of this._added.byContent.keys()) if (!this._model.vocab.has(content)) extra++;
    return this._model.vocab.size + extra;
  }

  /** The id of a token (added tokens first), or null. */
  tokenToId(token) {
    if (typeof token !== 'string') throw badArgument('token must be a string');
    return this._added.byContent.get(token) ?? this._model.vocab.get(token) ?? null;
  }

  /** The token of an id, or null. */
  idToToken(id) {
    if (!Number.isInteger(id)) throw badArgument('id must be an integer');
    return this._added.idToToken(id) ?? this._model.byId.get(id) ?? null;
  }

  /** tokenizer_config.json's model_max_length, or null when unset (HF writes 1e30 for "no limit"). */
  get modelMaxLength() {
    const n = this._config.model_max_length;
    return Number.isInteger(n) && n > 0 && n <= 2 ** 31 ? n : null;
  }

  /** The id of the named special token ("pad", "cls", "sep", "unk", "mask", "bos", "eos"), from the configs, else the post-processor. */
  _specialId(name) {
    const key = `${name}_token`;
    const content = tokenContent(this._config[key]) ?? tokenContent(this._specialTokensMap[key]);
    if (content !== null) return this.tokenToId(content);
    const pp = this._postProcessor;
    if (name === 'cls' || name === 'sep') {
      if (pp?.[name] !== undefined) return pp[name];
      const template = pp?.specialTokens?.get(name === 'cls' ? '[CLS]' : '[SEP]');
      if (template?.ids.length === 1) return template.ids[0];
    }
    return null;
  }

  get padTokenId() { return this._specialId('pad'); }
  get clsTokenId() { return this._specialId('cls'); }
  get sepTokenId() { return this._specialId('sep'); }
  get unkTokenId() { return this._specialId('unk'); }
  get maskTokenId() { return this._specialId('mask'); }
  get bosTokenId() { return this._specialId('bos'); }
  get eosTokenId() { return this._specialId('eos'); }
}
