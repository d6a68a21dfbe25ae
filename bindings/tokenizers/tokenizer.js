// Tokenizer: a pure-JS runner for Hugging Face tokenizer.json files that gives the
// same ids, tokens, type ids, offsets and decoded text as Hugging Face's Rust
// `tokenizers`. No dependencies, no `node:` imports: it runs the same in Node and
// in browsers.
//
// The pipeline, one module per stage in this folder:
//   added-vocabulary.js   added tokens split out of the raw / normalized text
//   normalizers.js        BertNormalizer, Precompiled (SentencePiece), NF*, Replace...
//   pre-tokenizers.js     BertPreTokenizer, ByteLevel, Metaspace, Split...
//   models.js             WordPiece, BPE, Unigram, WordLevel
//   post-processors.js    TemplateProcessing, BertProcessing, RobertaProcessing...
//   decoders.js           WordPiece, ByteLevel, Metaspace, ByteFallback...
//   normalized-string.js  the string + alignment bookkeeping behind the offsets
//   regex.js              the patterns of Split and Replace (regex-stock.js, regex-vm.js)
//   json.js               reading the file's fields (own properties, ids, nesting)
// A text goes through piece by piece (an added token, or a piece of normalized
// text through the pre-tokenizer and the model), its tokens into typed arrays.
// Offsets are in UTF-16 code units of the JS string they came from.

import { SwapformerError } from '../utils/errors.js';
import { buildNormalizer } from './normalizers.js';
import { buildPreTokenizer } from './pre-tokenizers.js';
import { buildModel } from './models.js';
import { buildPostProcessor, postProcess } from './post-processors.js';
import { buildDecoder } from './decoders.js';
import { AddedVocabulary } from './added-vocabulary.js';
import { own, unsupported, checkNesting } from './json.js';
import { readOptions } from '../utils/options.js';

const badArgument = (message) => new SwapformerError('BAD_ARGUMENT', message);

/** Keeps the first `n` tokens of an encoding. */
function truncated(enc, n) {
  return { ...enc, ids: enc.ids.subarray(0, n), tokens: enc.tokens.slice(0, n), offsets: enc.offsets.subarray(0, 2 * n), words: enc.words.subarray(0, n) };
}

/** Tokens [start, stop) of a sequence's encoding, offsets and words copied (a post-processor may trim offsets in place). */
const window = (enc, start, stop) => ({
  ...enc,
  ids: enc.ids.subarray(start, stop),
  tokens: enc.tokens.slice(start, stop),
  offsets: enc.offsets.slice(2 * start, 2 * stop),
  words: enc.words.slice(start, stop),
});

/**
 * Sets result.offsets, the [start, end] pair of each token, made from the flat
 * Int32Array when first read: a pair array costs 72 bytes in V8 (more than
 * everything else of a token together), and embedding never reads them. The
 * property is an own enumerable one, so copies, JSON and deep comparisons see it.
 */
function withOffsetPairs(result, flat) {
  let pairs = null;
  return Object.defineProperty(result, 'offsets', {
    enumerable: true,
    configurable: true,
    get() {
      if (pairs === null) {
        pairs = new Array(flat.length / 2);
        for (let i = 0; i < pairs.length; i++) pairs[i] = [flat[2 * i], flat[2 * i + 1]];
      }
      return pairs;
    },
    set(v) {
      pairs = v;
    },
  });
}

/** The start of the code point that s[i] is in (an offset inside a surrogate pair moves to its start, as Rust's do). */
const codePointStart = (s, i) => (i > 0 && (s.charCodeAt(i) & 0xfc00) === 0xdc00 && (s.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i);

/**
 * The tokens of one sequence as they come (added tokens and model pieces), with
 * their offsets in the sequence, in growable typed arrays: a long text's
 * encoding costs 12 bytes and a string reference a token, not an object and
 * two arrays each.
 * Once `limit` tokens are in (truncation), Rust stops after the model piece
 * that reached it; `done` says so.
 */
class SequenceEncoding {
  constructor(text, limit) {
    this.text = text;
    this.limit = limit;
    this.n = 0;
    this.ids = new Int32Array(64);
    this.offsets = new Int32Array(128);
    this.words = new Int32Array(64);
    this.word = -1; // Rust's word ids: the index of the piece (an added token, a pre-tokenized word) a token comes from
    this.tokens = [];
    this.done = false;
  }

  push(id, value, start, end) {
    if (this.n === this.ids.length) {
      const ids = new Int32Array(2 * this.n);
      ids.set(this.ids);
      this.ids = ids;
      const offsets = new Int32Array(4 * this.n);
      offsets.set(this.offsets);
      this.offsets = offsets;
      const words = new Int32Array(2 * this.n);
      words.set(this.words);
      this.words = words;
    }
    this.words[this.n] = this.word;
    this.ids[this.n] = id;
    this.offsets[2 * this.n] = codePointStart(this.text, start);
    this.offsets[2 * this.n + 1] = codePointStart(this.text, end);
    this.tokens.push(value);
    this.n++;
  }

  /** An added token: the whole piece. */
  added(piece, id) {
    this.word++;
    const [start, end] = piece.normalizedToOriginal(0, piece.length);
    this.push(id, piece.get(), start, end);
  }

  /** The model's tokens of a piece ({ id, value, start, end } in units of the piece). */
  model(piece, tokens) {
    this.word++;
    for (const t of tokens) {
      const [start, end] = piece.normalizedToOriginal(t.start, t.end) ?? [t.start, t.end];
      this.push(t.id, t.value, start, end);
    }
    if (this.n >= this.limit) this.done = true;
  }

  /** The encoding of sequence `seq` (its type id too, before post-processing). */
  finish(seq) {
    const n = this.n;
    return {
      ids: this.ids.subarray(0, n),
      tokens: this.tokens,
      offsets: this.offsets.subarray(0, 2 * n),
      words: this.words.subarray(0, n),
      typeIds: seq,
      seqs: seq,
    };
  }
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
  const swap = a.ids.length > b.ids.length; // n1 the shorter's length, n2 the longer's share
  let n1 = Math.min(a.ids.length, b.ids.length);
  let n2 = n1 > max ? n1 : Math.max(n1, max - n1);
  if (n1 + n2 > max) {
    n1 = Math.floor(max / 2);
    n2 = n1 + (max % 2);
  }
  if (swap) [n1, n2] = [n2, n1];
  return [truncated(a, n1), truncated(b, n2)];
}

const TRUNCATIONS = ['longest_first', 'only_first', 'only_second'];

/**
 * Rust's only_first / only_second: the one sequence cut so that both fit in
 * `max`; when the other alone is longer than that, the error Rust raises
 * (the zero-shot pipeline then encodes without truncation).
 */
function truncateOnly(a, b, max, strategy) {
  const [cut, whole] = strategy === 'only_first' ? [a, b] : [b, a];
  if (cut.ids.length + whole.ids.length <= max) return [a, b];
  const keep = max - whole.ids.length; // Rust keeps at least one token of the sequence it cuts (SequenceTooShort otherwise)
  if (keep < 1)
    throw new SwapformerError(
      'SEQUENCE_TOO_LONG',
      `truncation '${strategy}': the ${strategy === 'only_first' ? 'second' : 'first'} sequence alone has ${whole.ids.length} tokens, leaving none of the ${max} maxLength allows besides the special tokens`,
    );
  const short = truncated(cut, keep);
  return strategy === 'only_first' ? [short, b] : [a, short];
}

/** The content of a special-token entry of tokenizer_config.json / special_tokens_map.json. */
const tokenContent = (v) => (typeof v === 'string' ? v : typeof own(v, 'content') === 'string' ? v.content : null);

/**
 * A JSON object given as an object, read once into plain data (what its JSON text
 * would parse to): getters run once, Proxies and class instances become plain
 * objects, holes become null.
 */
function plainCopy(value, name) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw badArgument(`${name} cannot be read as JSON: ${e.message}`);
  }
  return JSON.parse(text);
}

export class Tokenizer {
  /**
   * Builds a tokenizer from tokenizer.json (an object or its text) and, when present,
   * tokenizer_config.json / special_tokens_map.json objects.
   */
  static fromJSON(tokenizerJson, options) {
    const { tokenizerConfig, specialTokensMap } = readOptions(options, 'fromJSON');
    let json = tokenizerJson;
    if (typeof json === 'string') {
      try {
        json = JSON.parse(json);
      } catch (e) {
        throw badArgument(`tokenizerJson is not valid JSON: ${e.message}`);
      }
      checkNesting(json, 'tokenizer.json');
    } else if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
      checkNesting(json, 'tokenizer.json'); // before the copy: JSON.stringify recurses
      json = plainCopy(json, 'tokenizerJson');
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw badArgument('tokenizerJson must be an object or a JSON string');
    const configs = [
      ['tokenizerConfig', tokenizerConfig],
      ['specialTokensMap', specialTokensMap],
    ].map(([name, v]) => {
      if (v != null && (typeof v !== 'object' || Array.isArray(v))) throw badArgument(`${name} must be an object`);
      if (v != null) checkNesting(v, name);
      return v == null ? {} : plainCopy(v, name);
    });
    return new Tokenizer(json, ...configs);
  }

  /** @private use Tokenizer.fromJSON */
  constructor(json, config, specialTokensMap) {
    const version = own(json, 'version');
    if (version !== undefined && version !== '1.0') throw unsupported('version', version);
    this._normalizer = buildNormalizer(own(json, 'normalizer'));
    this._preTokenizer = buildPreTokenizer(own(json, 'pre_tokenizer'));
    this._model = buildModel(own(json, 'model'));
    this._modelType = own(own(json, 'model'), 'type'); // checked by buildModel
    this._postProcessor = buildPostProcessor(own(json, 'post_processor'));
    this._decoder = buildDecoder(own(json, 'decoder'));
    const addedTokens = own(json, 'added_tokens');
    if (addedTokens != null && !Array.isArray(addedTokens)) throw unsupported('added_tokens', addedTokens);
    this._added = new AddedVocabulary(addedTokens ?? [], this._model, this._normalizer);
    // The processors' ids were read before the vocabulary was known: each must be one of its ids.
    this._postProcessor?.checkIds(Math.max(this._model.idLimit, this._added.idLimit));
    this._config = config;
    this._specialTokensMap = specialTokensMap;
  }

  /**
   * Encodes `text` (and `pair`). With `maxLength`, the content is truncated first
   * (longest_first for a pair) so that, with the special tokens added afterwards,
   * the result has at most `maxLength` tokens, as Hugging Face does with truncation=True;
   * `truncation: 'only_first'` / `'only_second'` cuts only that sequence of a pair (Hugging
   * Face's ONLY_FIRST, what the zero-shot pipeline asks for; ONLY_SECOND).
   * @returns {{ids: Int32Array, typeIds: Int32Array, tokens: string[], offsets: [number, number][]}}
   */
  encode(text, options) {
    const { pair, addSpecialTokens = true, maxLength, truncation = 'longest_first' } = readOptions(options, 'encode');
    if (typeof text !== 'string') throw badArgument('text must be a string');
    if (pair != null && typeof pair !== 'string') throw badArgument('pair must be a string');
    if (typeof addSpecialTokens !== 'boolean') throw badArgument('addSpecialTokens must be a boolean');
    if (!TRUNCATIONS.includes(truncation)) throw badArgument(`truncation must be one of ${TRUNCATIONS.join(', ')} (got ${JSON.stringify(truncation)})`);
    const isPair = pair != null;
    const added = addSpecialTokens && this._postProcessor ? this._postProcessor.addedTokens(isPair) : 0;
    if (maxLength != null) {
      if (!Number.isInteger(maxLength) || maxLength < 0) throw badArgument(`maxLength must be a non-negative integer (got ${maxLength})`);
      if (maxLength < added) throw badArgument(`maxLength must be at least ${added}, the number of special tokens (got ${maxLength})`);
    }
    // Rust stops tokenizing a sequence once it has maxLength tokens: the first unless the strategy
    // keeps it whole (only_second), the second always (measured against tokenizers 0.23: with
    // only_first and an empty first sequence, a long second one comes back cut, not refused)
    let a = this._encodeSequence(text, 0, truncation === 'only_second' ? undefined : maxLength);
    let b = isPair ? this._encodeSequence(pair, 1, maxLength) : null;
    if (maxLength != null)
      [a, b] = truncation === 'longest_first' || !isPair ? truncateLongestFirst(a, b, maxLength - added) : truncateOnly(a, b, maxLength - added, truncation);
    const enc = postProcess(this._postProcessor, b === null ? [a] : [a, b], addSpecialTokens, [text, isPair ? pair : null]);
    return withOffsetPairs({ ids: enc.ids, typeIds: enc.typeIds, tokens: enc.tokens }, enc.offsets);
  }

  /**
   * A question and a context as the question-answering pipeline tokenizes
   * them with return_overflowing_tokens: `text` and `pair` (the question
   * first when the tokenizer pads on the right, else the context first), the
   * context (pair with only_second, text with only_first) split into windows
   * that fit maxLength with the other sequence and the special tokens, each
   * starting `stride` tokens before the last one ended (Rust's
   * Encoding::truncate), until one reaches the context's end: the rule of
   * tokenizers up to 0.22 (0.23 stops tokenizing a long context at about
   * maxLength tokens and drops the rest). Refuses what Rust refuses: a stride
   * above maxLength less a single sequence's special tokens
   * (TruncationParamError), no room left for the context (SequenceTooShort),
   * and a stride not below the context's room when it must be split.
   * @returns {{ids, typeIds, tokens, offsets: [number, number][], sequenceIds: Int8Array, wordIds: Int32Array}[]}
   *   sequenceIds 0 / 1, -1 for a special token; wordIds the word of each token within its sequence, -1 for a special token.
   */
  encodeWindows(text, pair, options) {
    const { maxLength, stride = 0, truncation = 'only_second' } = readOptions(options, ['maxLength', 'stride', 'truncation'], 'encodeWindows: options');
    if (typeof text !== 'string' || typeof pair !== 'string') throw badArgument('encodeWindows takes two strings');
    if (!Number.isSafeInteger(maxLength) || maxLength < 1) throw badArgument(`maxLength must be a positive integer (got ${maxLength})`);
    if (!Number.isSafeInteger(stride) || stride < 0) throw badArgument(`stride must be a non-negative integer (got ${stride})`);
    if (truncation !== 'only_first' && truncation !== 'only_second') throw badArgument("truncation must be 'only_first' or 'only_second'");
    const pp = this._postProcessor,
      single = pp ? pp.addedTokens(false) : 0,
      added = pp ? pp.addedTokens(true) : 0;
    if (maxLength - single < stride)
      throw badArgument(`stride ${stride} is more than maxLength ${maxLength} less the ${single} special tokens of one sequence (Rust's TruncationParamError)`);
    const a = this._encodeSequence(text, 0),
      b = this._encodeSequence(pair, 1);
    const [cut, other] = truncation === 'only_second' ? [b, a] : [a, b];
    const n = cut.ids.length,
      room = maxLength - added - other.ids.length;
    const spans = [];
    if (n + other.ids.length + added <= maxLength) spans.push([0, n]);
    else {
      if (room < 1)
        throw new SwapformerError(
          'SEQUENCE_TOO_LONG',
          `the ${truncation === 'only_second' ? 'first' : 'second'} sequence has ${other.ids.length} tokens: with the ${added} special tokens it leaves no room in ${maxLength} for the other (Rust's SequenceTooShort)`,
        );
      if (stride >= room)
        throw badArgument(
          `stride ${stride} must be less than the ${room} tokens a window has for the sequence it splits (maxLength ${maxLength} less the ${added} special tokens and the other sequence's ${other.ids.length})`,
        );
      for (let start = 0; ; start += room - stride) {
        const stop = Math.min(start + room, n);
        spans.push([start, stop]);
        if (stop === n) break;
      }
    }
    return spans.map(([start, stop]) => {
      const w = window(cut, start, stop),
        o = window(other, 0, other.ids.length);
      const enc = postProcess(pp, truncation === 'only_second' ? [o, w] : [w, o], true, [text, pair]);
      return withOffsetPairs({ ids: enc.ids, typeIds: enc.typeIds, tokens: enc.tokens, sequenceIds: enc.seqs, wordIds: enc.words }, enc.offsets);
    });
  }

  /**
   * One sequence (0 = text, 1 = pair): added tokens, normalizer, pre-tokenizer, model.
   * When truncating, Rust (>= 0.23) stops tokenizing a sequence once it has
   * `maxLength` tokens; for a pair this decides which one longest_first sees as
   * the longer, so we stop at the same place.
   */
  _encodeSequence(text, seq, maxLength) {
    const out = new SequenceEncoding(text, maxLength ?? Infinity);
    const model = (piece) => {
      if (!out.done) out.model(piece, this._model.tokenize(piece.get()));
    };
    const pre = this._preTokenizer;
    this._added.extractAndNormalize(
      this._normalizer,
      text,
      (piece, id) => {
        if (out.done) return;
        if (id !== null) out.added(piece, id);
        else if (pre) pre.preTokenize(piece, model);
        else model(piece);
      },
      () => out.done,
    );
    return out.finish(seq);
  }

  /** The text of `ids` (unknown ids are skipped; special tokens too unless skipSpecialTokens is false). */
  decode(ids, options) {
    const { skipSpecialTokens = true } = readOptions(options, 'decode');
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

  /** The tokenizer.json model: 'WordPiece', 'BPE', 'Unigram' or 'WordLevel'. */
  get modelType() {
    return this._modelType;
  }

  /** Number of ids, added tokens included (an added token already in the model vocabulary counts once). */
  get vocabSize() {
    return this._model.vocab.size + this._added.extra;
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
    const n = own(this._config, 'model_max_length');
    return Number.isInteger(n) && n > 0 && n <= 2 ** 31 ? n : null;
  }

  /** tokenizer_config.json's padding_side: 'left', else 'right' (the default of PreTrainedTokenizerBase). */
  get paddingSide() {
    return own(this._config, 'padding_side') === 'left' ? 'left' : 'right';
  }

  /** The id of the named special token ("pad", "cls", "sep", "unk", "mask", "bos", "eos"), from the configs, else the post-processor. */
  _specialId(name) {
    const key = `${name}_token`;
    const content = tokenContent(own(this._config, key)) ?? tokenContent(own(this._specialTokensMap, key));
    if (content !== null) return this.tokenToId(content);
    const pp = this._postProcessor;
    if (name === 'cls' || name === 'sep') {
      if (pp !== null && Object.hasOwn(pp, name)) return pp[name];
      const template = pp?.specialTokens?.get(name === 'cls' ? '[CLS]' : '[SEP]');
      if (template?.ids.length === 1) return template.ids[0];
    }
    return null;
  }

  get padTokenId() {
    return this._specialId('pad');
  }
  get clsTokenId() {
    return this._specialId('cls');
  }
  get sepTokenId() {
    return this._specialId('sep');
  }
  get unkTokenId() {
    return this._specialId('unk');
  }
  get maskTokenId() {
    return this._specialId('mask');
  }
  get bosTokenId() {
    return this._specialId('bos');
  }
  get eosTokenId() {
    return this._specialId('eos');
  }
}
