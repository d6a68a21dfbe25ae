// What the pipelines ask of a tokenizer beyond encode, the way Hugging Face's
// fast tokenizer (PreTrainedTokenizerFast / TokenizersBackend in transformers
// tokenization_utils_fast.py / tokenization_utils_tokenizers.py) answers:
//  - convert_ids_to_tokens: the token of an id;
//  - convert_tokens_to_string: the tokenizer.json decoder over token strings,
//    nothing else (no clean-up); " ".join without a decoder;
//  - decode: the Rust decode, then clean_up_tokenization when
//    tokenizer_config.json's clean_up_tokenization_spaces is true (absent:
//    false, PreTrainedTokenizerBase's default), except for a BPE model, which
//    TokenizersBackend._decode leaves alone (the clean-up strips real spaces
//    before punctuation there) unless
//    clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output;
//  - the model's continuing_subword_prefix (token_classification.py tells
//    sub-words by it: WordPiece's, default "##"; a BPE's when set; none for
//    Unigram / WordLevel);
//  - the special-tokens mask of an encoding (see specialTokensMask).
//
//   const view = tokenizerView(tokenizer, { tokenizerJson, tokenizerConfig });
import { fail } from '../utils/errors.js';
import { readOptions } from '../utils/options.js';
import { buildDecoder } from '../tokenizers/decoders.js';
import { own } from './scores.js';

/** transformers' clean_up_tokenization (tokenization_utils_base.py): spaces before punctuation and English contractions. */
export const cleanUpTokenization = (s) =>
  s
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");

/** The sub-word prefix a model of tokenizer.json marks continuations with, or null (getattr(model, "continuing_subword_prefix", None), falsy as null). */
function subwordPrefixOf(model) {
  const type = own(model, 'type');
  const prefix = own(model, 'continuing_subword_prefix');
  if (type === 'WordPiece') return prefix === undefined || prefix === null ? '##' : prefix || null;
  if (type === 'BPE') return typeof prefix === 'string' && prefix !== '' ? prefix : null;
  return null;
}

function flag(config, key) {
  const v = own(config, key);
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') fail('BAD_CONFIG', `tokenizer_config.json: ${key} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The view of `tokenizer` (our Tokenizer) the tasks use. `tokenizerJson` is the
 * tokenizer.json it was built from (object or text: its model and decoder are
 * read), `tokenizerConfig` the parsed tokenizer_config.json (or undefined).
 */
export function tokenizerView(tokenizer, { tokenizerJson, tokenizerConfig } = {}) {
  if (tokenizer === null || typeof tokenizer !== 'object' || typeof tokenizer.encode !== 'function' || typeof tokenizer.decode !== 'function') {
    fail('BAD_ARGUMENT', 'tokenizer must be a Tokenizer');
  }
  let json = tokenizerJson;
  if (typeof json === 'string') {
    try {
      json = JSON.parse(json);
    } catch (e) {
      fail('BAD_ARGUMENT', `tokenizerJson is not valid JSON: ${e.message}`);
    }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) fail('BAD_ARGUMENT', 'tokenizerJson must be the tokenizer.json object or text');
  const model = own(json, 'model');
  const decoder = buildDecoder(own(json, 'decoder'));
  const cleanUp =
    flag(tokenizerConfig, 'clean_up_tokenization_spaces') &&
    (own(model, 'type') !== 'BPE' || flag(tokenizerConfig, 'clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output'));
  let emptyEncoding = null;
  return {
    tokenizer,
    subwordPrefix: subwordPrefixOf(model),
    cleanUp,
    unkTokenId: tokenizer.unkTokenId,
    maskTokenId: tokenizer.maskTokenId,
    padTokenId: tokenizer.padTokenId,
    idToToken: (id) => tokenizer.idToToken(id),
    tokenToId: (token) => tokenizer.tokenToId(token),
    encode: (text, options) => tokenizer.encode(text, options),
    tokensToString: (tokens) => (decoder ? decoder.decodeChain(tokens).join('') : tokens.join(' ')),
    decode(ids, options) {
      const skipSpecialTokens = own(readOptions(options, 'decode', 'decode: options'), 'skipSpecialTokens') ?? false;
      const text = tokenizer.decode(ids, { skipSpecialTokens });
      return cleanUp ? cleanUpTokenization(text) : text;
    },
    /**
     * The special-tokens mask of a single-sequence encoding of ours: 1 for the
     * tokens the post-processor added, as the Rust Encoding's
     * special_tokens_mask (a special token typed in the text is 0 there too).
     * The post-processor adds to any text what it adds to "", so the encoding
     * is E[0:k] + content + E[k:] with E = encode(""); k is the split where
     * ids and offsets agree. An encoding that carries specialTokensMask keeps it.
     */
    specialTokensMask(encoding) {
      if (encoding.specialTokensMask) return Array.from(encoding.specialTokensMask);
      emptyEncoding ??= tokenizer.encode('');
      const e = emptyEncoding,
        m = encoding.ids.length,
        n = e.ids.length;
      const same = (i, j) => encoding.ids[i] === e.ids[j] && encoding.offsets[i][0] === e.offsets[j][0] && encoding.offsets[i][1] === e.offsets[j][1];
      for (let k = 0; k <= n && m >= n; k++) {
        let ok = true;
        for (let j = 0; j < n && ok; j++) ok = same(j < k ? j : m - n + j, j);
        if (ok) return Array.from({ length: m }, (_, i) => (i < k || i >= m - n + k ? 1 : 0));
      }
      return fail('BAD_ARGUMENT', 'encoding: its special tokens are not those the tokenizer adds to a single sequence');
    },
  };
}
