// bindings/tokenizers/ against Hugging Face's Rust `tokenizers` (its official Node
// binding, npm `tokenizers`), run on the fly: for every fixture tokenizer and every
// string of tests/tokenizers/corpus.json, our ids, tokens, type ids, offsets and
// decoded text must equal Rust's, for single texts and pairs, with and without
// special tokens, and truncated at several lengths. The Unigram fixtures are also
// checked against SentencePiece's own ids (precomputed by
// tests/reference/make_tokenizer_fixtures.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { Tokenizer } from '../bindings/tokenizers/tokenizer.js';
import { SwapformerError } from '../bindings/utils/errors.js';
import * as real from './tokenizers/real.js';
import { randomInts } from './tokenizers/random.js';

const require = createRequire(import.meta.url);
const { Tokenizer: RustTokenizer } = require('tokenizers');

const here = (path) => new URL(`./tokenizers/${path}`, import.meta.url);
const readJson = (path) => JSON.parse(readFileSync(here(path), 'utf8'));
const corpus = readJson('corpus.json');
const sentencePieceIds = readJson('spm/sentencepiece_ids.json');

// ------------------------------------------------------------------ fixtures

/** A BPE without vocabulary but [UNK]: one token per normalized character, so its offsets show every alignment. */
const probe = (normalizer) => ({
  version: '1.0',
  added_tokens: [],
  normalizer,
  pre_tokenizer: null,
  post_processor: null,
  decoder: null,
  model: {
    type: 'BPE',
    dropout: null,
    unk_token: '[UNK]',
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    vocab: { '[UNK]': 0 },
    merges: [],
  },
});
const withParts = (json, parts) => ({ ...json, ...parts });
const spm = (name) => readJson(`spm/${name}.tokenizer.json`);
const deberta = (name) => JSON.parse(readFileSync(new URL(`./deberta/${name}/tokenizer.json`, import.meta.url), 'utf8'));

const FIXTURES = {
  'bert-base-uncased': real.bertBaseUncased,
  gpt2: real.gpt2,
  // Layout variants run on GPT-2's first 3000 merges (cheaper to load twice, same code paths).
  'gpt2 use_regex=false + Sequence[ByteLevel, Template]': () =>
    withParts(real.gpt2({ merges: 3000 }), {
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      post_processor: {
        type: 'Sequence',
        processors: [
          { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
          {
            type: 'TemplateProcessing',
            single: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
            pair: [
              { SpecialToken: { id: '<|endoftext|>', type_id: 0 } },
              { Sequence: { id: 'A', type_id: 0 } },
              { SpecialToken: { id: '<|endoftext|>', type_id: 1 } },
              { Sequence: { id: 'B', type_id: 1 } },
            ],
            special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [50256], tokens: ['<|endoftext|>'] } },
          },
        ],
      },
    }),
  roberta: real.roberta,
  'roberta add_prefix_space': () => real.roberta({ addPrefixSpace: true, merges: 3000 }),
  t5_nmt_nfkc: () => spm('t5_nmt_nfkc'),
  't5_nmt_nfkc prepend first': () => {
    const j = spm('t5_nmt_nfkc');
    return withParts(j, { pre_tokenizer: { ...j.pre_tokenizer, prepend_scheme: 'first' }, decoder: { ...j.decoder, prepend_scheme: 'first' } });
  },
  'xlmr_nmt_nfkc_cf (legacy)': () => spm('xlmr_nmt_nfkc_cf'),
  t5_identity_nosplit: () => spm('t5_identity_nosplit'),
  llama_unigram_byte_fallback: () => spm('llama_unigram_byte_fallback'),
  // DebertaV2Converter's layout (Strip, Precompiled, Replace; Sequence[Metaspace]; [CLS] A [SEP] B:1 [SEP]:1; [MASK] added
  // past the Unigram vocabulary), as tests/reference/make_deberta.py writes it; v2's lowercase + split_by_punct
  'deberta-v3 (DebertaV2Converter)': () => deberta('deberta-v3-nli'),
  'deberta-v2 lowercase + split_by_punct': () => deberta('deberta-v2-mlm'),
  'deberta-v3 legacy Metaspace (add_prefix_space)': () => {
    const j = deberta('deberta-v3-nli'),
      meta = { type: 'Metaspace', replacement: '\u2581', add_prefix_space: true };
    return withParts(j, { pre_tokenizer: { type: 'Sequence', pretokenizers: [meta] }, decoder: meta });
  },
  'probe Precompiled nmt_nfkc': () => probe(spm('t5_nmt_nfkc').normalizer.normalizers[0]),
  'probe Precompiled nmt_nfkc_cf': () => probe(spm('xlmr_nmt_nfkc_cf').normalizer.normalizers[0]),
  ...Object.fromEntries(
    readdirSync(here('hand'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => [`hand/${f.slice(0, -5)}`, () => readJson(`hand/${f}`)]),
  ),
};

const fixtureCache = new Map();
/** [json, our tokenizer, Rust's tokenizer] of a fixture, built once. */
function load(name) {
  if (!fixtureCache.has(name)) {
    const json = FIXTURES[name]();
    const text = JSON.stringify(json);
    fixtureCache.set(name, { json, ours: Tokenizer.fromJSON(json), rust: RustTokenizer.fromString(text), text });
  }
  return fixtureCache.get(name);
}

// ------------------------------------------------------------------ comparison helpers

/** Rust's Node binding reports offsets in code points: map them to UTF-16 units. */
function codePointToUnit(text) {
  const map = [0];
  let u = 0;
  for (const c of text) {
    u += c.length;
    map.push(u);
  }
  return (i) => map[i] ?? i;
}

/** An encoding of Rust's binding as plain arrays, offsets in UTF-16 units. */
function plain(e, text, pair) {
  const maps = [codePointToUnit(text), pair == null ? null : codePointToUnit(pair)];
  const seqs = e.getSequenceIds();
  return {
    ids: e.getIds(),
    tokens: e.getTokens(),
    typeIds: e.getTypeIds(),
    offsets: e.getOffsets().map(([s, t], i) => (seqs[i] == null ? [s, t] : [maps[seqs[i]](s), maps[seqs[i]](t)])),
  };
}

async function rustEncode(rust, text, pair, addSpecialTokens) {
  return plain(await rust.encode(text, pair ?? null, { addSpecialTokens }), text, pair);
}

/** Rust's encodings of the whole corpus (one batch call), or of corpus pairs (the binding batches single texts only). */
async function rustCorpus(rust, { pairs = false, addSpecialTokens = true } = {}) {
  if (!pairs) return (await rust.encodeBatch(corpus, { addSpecialTokens })).map((e, i) => plain(e, corpus[i], null));
  return Promise.all(corpus.map((text, i) => rustEncode(rust, text, partner(i), addSpecialTokens)));
}

function ourEncode(ours, text, options) {
  const e = ours.encode(text, options);
  return { ids: [...e.ids], tokens: e.tokens, typeIds: [...e.typeIds], offsets: e.offsets };
}

const label = (name, text, extra) => `${name}: ${JSON.stringify(text)} ${JSON.stringify(extra)}`;
/** A partner for the i-th corpus string in pair tests. */
const partner = (i) => corpus[(i * 7 + 3) % corpus.length];

// ------------------------------------------------------------------ Rust agreement

const counts = { single: 0, pair: 0, truncated: 0, decode: 0 };

/** Compares our encodings of the corpus with Rust's (`expected`), with `options` (and a partner when `pairs`). */
function assertCorpus(name, ours, expected, { pairs = false, ...options }) {
  corpus.forEach((text, i) => {
    const o = pairs ? { ...options, pair: partner(i) } : options;
    assert.deepStrictEqual(ourEncode(ours, text, o), expected[i], label(name, text, o));
  });
}

for (const name of Object.keys(FIXTURES)) {
  test(`agrees with Rust tokenizers: ${name}`, async () => {
    const { ours, rust } = load(name);
    for (const addSpecialTokens of [true, false]) {
      const singles = await rustCorpus(rust, { addSpecialTokens });
      assertCorpus(name, ours, singles, { addSpecialTokens });
      counts.single += corpus.length;
      assertCorpus(name, ours, await rustCorpus(rust, { pairs: true, addSpecialTokens }), { pairs: true, addSpecialTokens });
      counts.pair += corpus.length;
      for (const skipSpecialTokens of [true, false]) {
        const ids = singles.map((e) => e.ids);
        const texts = await rust.decodeBatch(ids, skipSpecialTokens);
        ids.forEach((x, i) => assert.equal(ours.decode(x, { skipSpecialTokens }), texts[i], label(name, corpus[i], { decode: x, skipSpecialTokens })));
        counts.decode += corpus.length;
      }
    }
    // Truncation: Rust's setTruncation truncates the content, then adds the special tokens.
    const truncating = rust;
    const nSingle = ours.encode('').ids.length;
    const nPair = ours.encode('', { pair: '' }).ids.length;
    for (const [extra, pairs] of [
      [0, false],
      [4, false],
      [1, true],
      [11, true],
    ]) {
      const maxLength = (pairs ? nPair : nSingle) + extra;
      truncating.setTruncation(maxLength);
      assertCorpus(name, ours, await rustCorpus(truncating, { pairs }), { pairs, maxLength });
      counts.truncated += corpus.length;
    }
    // only_first / only_second cut one sequence of a pair; when the other alone leaves no room Rust
    // refuses (the zero-shot pipeline then encodes whole): ours is SEQUENCE_TOO_LONG there
    for (const strategy of ['only_first', 'only_second']) {
      for (const extra of [1, 6, 11]) {
        const maxLength = nPair + extra;
        truncating.setTruncation(maxLength, { strategy: strategy === 'only_first' ? 'OnlyFirst' : 'OnlySecond' });
        for (const [i, text] of corpus.entries()) {
          const o = { pair: partner(i), maxLength, truncation: strategy };
          const want = await rustEncode(truncating, text, partner(i), true).then(
            (e) => e,
            () => null,
          );
          if (want === null)
            assert.throws(
              () => ours.encode(text, o),
              (e) => e.code === 'SEQUENCE_TOO_LONG',
              label(name, text, o),
            );
          else assert.deepStrictEqual(ourEncode(ours, text, o), want, label(name, text, o));
          counts.truncated++;
        }
      }
    }
    // Without special tokens, maxLength counts the content only.
    truncating.setTruncation(3);
    assertCorpus(name, ours, await rustCorpus(truncating, { addSpecialTokens: false }), { maxLength: 3, addSpecialTokens: false });
    counts.truncated += corpus.length;
    truncating.disableTruncation();
  });
}

test('decoding arbitrary id sequences agrees with Rust', async () => {
  // Random ids split multi-byte characters, mix special tokens in, and hit ids outside the vocabulary.
  const next = randomInts(7);
  for (const name of Object.keys(FIXTURES)) {
    const { ours, rust } = load(name);
    const size = ours.vocabSize;
    const lists = Array.from({ length: 40 }, () => Array.from({ length: 1 + next(12) }, () => (next(20) === 0 ? size + next(5) : next(size))));
    for (const skipSpecialTokens of [true, false]) {
      const texts = await rust.decodeBatch(lists, skipSpecialTokens);
      lists.forEach((ids, i) => assert.equal(ours.decode(ids, { skipSpecialTokens }), texts[i], label(name, ids, { skipSpecialTokens })));
    }
  }
});

test('vocabulary queries agree with Rust', () => {
  for (const name of Object.keys(FIXTURES)) {
    const { ours, rust } = load(name);
    assert.equal(ours.vocabSize, rust.getVocabSize(true), `${name}: vocabSize`);
    for (let id = 0; id < ours.vocabSize; id += Math.max(1, Math.floor(ours.vocabSize / 300))) {
      const token = rust.idToToken(id);
      assert.equal(ours.idToToken(id), token ?? null, `${name}: idToToken(${id})`);
      if (token != null) assert.equal(ours.tokenToId(token), rust.tokenToId(token), `${name}: tokenToId(${JSON.stringify(token)})`);
    }
    assert.equal(ours.tokenToId('certainly not a token \u0001'), null);
  }
});

test('the comparison covered every case', () => {
  const n = Object.keys(FIXTURES).length;
  assert.equal(counts.single, n * corpus.length * 2);
  assert.equal(counts.pair, n * corpus.length * 2);
  assert.equal(counts.decode, n * corpus.length * 4);
  assert.equal(counts.truncated, n * corpus.length * (5 + 6)); // longest_first x 5, only_first and only_second x 3 lengths
  console.log(
    `# ${n} tokenizers x ${corpus.length} strings: ${counts.single} single, ${counts.pair} pair, ` +
      `${counts.truncated} truncated encodings and ${counts.decode} decodes equal to Rust`,
  );
});

// ------------------------------------------------------------------ SentencePiece

// Where Rust itself differs from SentencePiece (our output equals Rust's there):
// - Rust's Precompiled replaces a whole grapheme by the normalization of its
//   shortest prefix found in the charsmap, dropping the rest (9: "ộ" as o + two
//   marks, 16: decomposed Hangul, 33: "ｶﾞ", 55: zalgo); SentencePiece normalizes
//   the longest match.
// - 43: two segmentations of ",000" tie; SentencePiece adds scores in float32,
//   Rust in float64, and they keep different ones.
// - 50: <s>, </s>, <pad> are special added tokens for Hugging Face.
// - xlmr (the older converter, Replace(" {2,}" → " ") without Strip) keeps the
//   whitespace at the ends that SentencePiece drops (3, 4, 5, 29).
// - identity: the converter's Strip removes "\n" (5), SentencePiece keeps it.
const SENTENCEPIECE_DIFFERS = {
  t5_nmt_nfkc: [9, 33, 43, 50, 55],
  xlmr_nmt_nfkc_cf: [3, 4, 5, 9, 29, 33, 43, 50, 55],
  t5_identity_nosplit: [5, 50],
  llama_unigram_byte_fallback: [9, 16, 33, 50, 55],
};

test("Unigram ids equal SentencePiece's own encode (except where Rust differs)", () => {
  for (const [name, known] of Object.entries(SENTENCEPIECE_DIFFERS)) {
    const ours = Tokenizer.fromJSON(spm(name));
    const differs = [];
    corpus.forEach((text, i) => {
      const ids = [...ours.encode(text, { addSpecialTokens: false }).ids];
      if (JSON.stringify(ids) !== JSON.stringify(sentencePieceIds[name][i])) differs.push(i);
    });
    assert.deepStrictEqual(differs, known, `${name}: strings whose ids differ from SentencePiece`);
  }
});

// ------------------------------------------------------------------ known deviations of @huggingface/tokenizers

/** Asserts that we equal Rust on this fixture and string, and returns our encoding. */
async function sameAsRust(name, text, options = {}) {
  const { ours, rust, text: json } = load(name);
  let reference = rust;
  if (options.maxLength !== undefined) {
    reference = RustTokenizer.fromString(json);
    reference.setTruncation(options.maxLength);
  }
  const got = ourEncode(ours, text, options);
  assert.deepStrictEqual(got, await rustEncode(reference, text, options.pair, options.addSpecialTokens ?? true), label(name, text, options));
  return got;
}

test('each deviation of the pure-JS @huggingface/tokenizers is a case we get right', async () => {
  // Precompiled runs the charsmap: nmt_nfkc_cf case-folds, identity keeps "ﬁ".
  const folded = await sameAsRust('xlmr_nmt_nfkc_cf (legacy)', 'HELLO World, MiXeD CaSe');
  assert.ok(!/[A-Z]/.test(folded.tokens.join('')));
  const identity = await sameAsRust('t5_identity_nosplit', 'ﬁne ﬂow ﬃ № ™ ℃ ½ ² ₂ Ⅻ ㎞ ㈱', { addSpecialTokens: false });
  assert.ok(identity.tokens.join('').includes('ﬁ'));
  // Metaspace honours split: false (a piece may span ▁) and the legacy add_prefix_space.
  const unsplit = await sameAsRust('hand/unigram_metaspace_nosplit', 'a b c');
  assert.deepStrictEqual(unsplit.tokens, ['▁a▁b', '▁', 'c']);
  const legacy = await sameAsRust('xlmr_nmt_nfkc_cf (legacy)', 'Hello', { addSpecialTokens: false });
  assert.ok(legacy.tokens[0].startsWith('▁'));
  // RoBERTa pairs: every type id is 0.
  const pair = await sameAsRust('roberta', 'Hello world', { pair: 'Second text' });
  assert.ok(pair.typeIds.every((t) => t === 0) && pair.ids.length > 6);
  // BertNormalizer: strip accents (NFD, drop Mn), then lowercase, with offsets.
  await sameAsRust('bert-base-uncased', 'ÀÉÎÕÜ ΑΒΓ ΣΊΣΥΦΟΣ İstanbul Ångström');
  await sameAsRust('hand/probe_bert_uncased', 'İstanbul ÀÉ ǅ');
  // BertNormalizer's control test: Cc/Cf/Co removed, unassigned (Cn) kept.
  const cn = await sameAsRust('hand/probe_bert_uncased', 'unassigned\u0378cn\u{E01F0} a\u0000b\u0001c\u007fd\u200be\uE000f');
  assert.equal(cn.ids.length, [...'unassigned\u0378cn\u{E01F0} abcdef'].length);
  // BertNormalizer: CJK above the BMP is split out too.
  const cjk = await sameAsRust('bert-base-uncased', 'abc𠀀def𪜀', { addSpecialTokens: false });
  assert.deepStrictEqual(cjk.offsets, [
    [0, 3],
    [3, 5],
    [5, 8],
    [8, 10],
  ]);
  // Truncation keeps the final special token.
  const cut = await sameAsRust('bert-base-uncased', corpus[1], { maxLength: 6 });
  assert.deepStrictEqual([cut.tokens.length, cut.tokens[0], cut.tokens[5]], [6, '[CLS]', '[SEP]']);
});

// ------------------------------------------------------------------ configuration

test('special token ids and model_max_length come from the configs', () => {
  const bertJson = load('bert-base-uncased').json;
  const bert = Tokenizer.fromJSON(bertJson, { tokenizerConfig: { model_max_length: 512, pad_token: '[PAD]' } });
  assert.equal(bert.modelMaxLength, 512);
  assert.deepStrictEqual([bert.padTokenId, bert.clsTokenId, bert.sepTokenId], [0, 101, 102]);
  const unset = Tokenizer.fromJSON(bertJson, { tokenizerConfig: { model_max_length: 1e30 } });
  assert.equal(unset.modelMaxLength, null);
  assert.equal(unset.padTokenId, null);
  const roberta = Tokenizer.fromJSON(load('roberta').json, { specialTokensMap: { pad_token: { content: '<pad>' }, mask_token: '<mask>' } });
  // RoBERTa's layout on GPT-2's 50256 tokens + 4: <mask> is 50260 here (50264 in roberta-base).
  assert.deepStrictEqual([roberta.padTokenId, roberta.clsTokenId, roberta.sepTokenId, roberta.maskTokenId], [1, 0, 2, 50260]);
  assert.equal(Tokenizer.fromJSON(JSON.stringify(spm('t5_nmt_nfkc'))).modelMaxLength, null);
});

// ------------------------------------------------------------------ bad input

function throwsCode(fn, code, pattern) {
  assert.throws(fn, (e) => e instanceof SwapformerError && e.code === code && pattern.test(e.message), `expected ${code} matching ${pattern}`);
}

test('bad arguments are BAD_ARGUMENT naming the argument', () => {
  const { ours } = load('bert-base-uncased');
  throwsCode(() => ours.encode(42), 'BAD_ARGUMENT', /text must be a string/);
  throwsCode(() => ours.encode(null), 'BAD_ARGUMENT', /text must be a string/);
  throwsCode(() => ours.encode('a', { pair: 7 }), 'BAD_ARGUMENT', /pair must be a string/);
  throwsCode(() => ours.encode('a', { addSpecialTokens: 'yes' }), 'BAD_ARGUMENT', /addSpecialTokens/);
  for (const maxLength of [-1, 2.5, '8', NaN]) throwsCode(() => ours.encode('a', { maxLength }), 'BAD_ARGUMENT', /maxLength/);
  throwsCode(() => ours.encode('a', { maxLength: 1 }), 'BAD_ARGUMENT', /maxLength must be at least 2/);
  throwsCode(() => ours.encode('a', { pair: 'b', maxLength: 2 }), 'BAD_ARGUMENT', /maxLength must be at least 3/);
  throwsCode(() => ours.decode('1 2'), 'BAD_ARGUMENT', /ids/);
  throwsCode(() => ours.decode([1, 2.5]), 'BAD_ARGUMENT', /ids/);
  throwsCode(() => ours.decode([1], { skipSpecialTokens: 1 }), 'BAD_ARGUMENT', /skipSpecialTokens/);
  throwsCode(() => ours.tokenToId(5), 'BAD_ARGUMENT', /token must be a string/);
  throwsCode(() => ours.idToToken('5'), 'BAD_ARGUMENT', /id must be an integer/);
  throwsCode(() => Tokenizer.fromJSON('{not json'), 'BAD_ARGUMENT', /tokenizerJson/);
  throwsCode(() => Tokenizer.fromJSON(null), 'BAD_ARGUMENT', /tokenizerJson/);
  throwsCode(() => Tokenizer.fromJSON({}, { tokenizerConfig: 3 }), 'BAD_ARGUMENT', /tokenizerConfig/);
});

test('a tokenizer.json we cannot run exactly is UNSUPPORTED_MODEL naming the field', () => {
  const base = readJson('hand/whitespace_wordlevel.json');
  const cases = [
    [{ normalizer: { type: 'Frobnicate' } }, /normalizer\.type = "Frobnicate"/],
    [{ normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Bogus' }] } }, /normalizer\.normalizers\[1\]\.type/],
    [{ pre_tokenizer: { type: 'UnicodeScripts' } }, /pre_tokenizer\.type = "UnicodeScripts"/],
    [{ pre_tokenizer: { type: 'Split', pattern: { Regex: '(?>ab)c' }, behavior: 'Isolated', invert: false } }, /pre_tokenizer\.pattern\.Regex = "\(\?>ab\)c"/],
    [{ pre_tokenizer: { type: 'Split', pattern: { Regex: 'a++' }, behavior: 'Isolated', invert: false } }, /possessive/],
    [{ pre_tokenizer: { type: 'Split', pattern: { Regex: '[a[b]]' }, behavior: 'Isolated', invert: false } }, /nested/],
    [{ pre_tokenizer: { type: 'Split', pattern: { Regex: '\\Gx' }, behavior: 'Isolated', invert: false } }, /\\G/],
    [{ pre_tokenizer: { type: 'Split', pattern: { String: 'x' }, behavior: 'Sideways', invert: false } }, /pre_tokenizer\.behavior = "Sideways"/],
    [{ pre_tokenizer: { type: 'Metaspace', replacement: '▁', add_prefix_space: false, prepend_scheme: 'always' } }, /pre_tokenizer\.add_prefix_space/],
    [{ model: { type: 'BPE', dropout: 0.1, vocab: {}, merges: [] } }, /model\.dropout = 0\.1/],
    [{ model: { type: 'BPE', vocab: { a: 0 }, merges: ['a b'] } }, /model\.merges\[0\]/],
    [{ model: { type: 'Unigram', vocab: [['a', -1]], unk_id: 4 } }, /model\.unk_id = 4/],
    [{ model: { type: 'CharLevel' } }, /model\.type = "CharLevel"/],
    [{ post_processor: { type: 'Magic' } }, /post_processor\.type = "Magic"/],
    [
      { post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[X]', type_id: 0 } }], pair: [], special_tokens: {} } },
      /post_processor\.single\[0\]\.SpecialToken\.id = "\[X\]"/,
    ],
    [{ decoder: { type: 'CTC' } }, /decoder\.type = "CTC"/],
    [{ normalizer: { type: 'Precompiled', precompiled_charsmap: 'AAAA' } }, /precompiled_charsmap/],
    [{ version: '2.0' }, /version = "2\.0"/],
  ];
  for (const [parts, pattern] of cases) {
    throwsCode(() => Tokenizer.fromJSON({ ...base, ...parts }), 'UNSUPPORTED_MODEL', pattern);
  }
  // A model that needs an unknown token it does not have fails when it needs it.
  const noUnk = Tokenizer.fromJSON({ ...base, model: { type: 'WordLevel', vocab: { a: 0 }, unk_token: '[UNK]' } });
  assert.deepStrictEqual([...noUnk.encode('a').ids], [0]);
  throwsCode(() => noUnk.encode('b'), 'UNSUPPORTED_MODEL', /model\.unk_token/);
});

// ------------------------------------------------------------------ speed

test('a 10 KB text encodes in milliseconds', () => {
  let text = '';
  while (text.length < 10240) text += `${corpus.join(' ')} `;
  text = text.slice(0, 10240);
  for (const name of ['bert-base-uncased', 'gpt2', 't5_nmt_nfkc', 'xlmr_nmt_nfkc_cf (legacy)']) {
    const { ours } = load(name);
    ours.encode(text); // warm-up
    const times = [];
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now();
      ours.encode(text);
      times.push(performance.now() - t0);
    }
    const median = times.sort((a, b) => a - b)[2];
    assert.ok(median < 250, `${name}: ${median.toFixed(1)} ms for 10 KB`);
  }
});
