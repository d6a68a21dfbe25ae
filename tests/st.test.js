// Pretrained.embed as sentence-transformers' encode, and the embeddings
// utilities, against tests/st/expected.json (tests/reference/st_reference.py:
// ST's rules re-implemented in Python over make_pretrained.py's float64
// forwards, Rust tokenizers, numpy's quantization):
//  - prompts (prompt, promptName, default_prompt_name, '' for none), include_prompt
//    false (the prompt's tokens, as _get_prompt_length counts them, out of pooling),
//    every pooling mode, T5's $A </s>, Python's strip, truncation at max_seq_length;
//  - the batches: grouped longest first by code points (np.argsort), batchSize,
//    onProgress, bit-identical to one text at a time; embedAsync, embedStream;
//  - truncate: false, chunk() and chunking's pools, precision;
//  - similarity functions, model.similarity (similarity_fn_name), semanticSearch
//    (floats and Hamming over packed bits, ties, topK past the corpus),
//    quantizeEmbeddings bit for bit (int8 / uint8 ranges: own, calibration, given);
//  - every public call's options refusing an unknown key by name, with suggestions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, cpSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  loadPretrained,
  createEncoder,
  loadModel,
  runtimeInfo,
  listPlugins,
  configure,
  Tokenizer,
  cosSim,
  dotScore,
  semanticSearch,
  quantizeEmbeddings,
} from '../bindings/index.js';
import * as api from '../bindings/index.js';
import { OPTION_KEYS } from '../bindings/utils/options.js';
import { rejects, assertClose, assertBitIdentical, GOLDEN_TOLERANCE } from './helpers.js';

const TESTS = path.dirname(fileURLToPath(import.meta.url));
const E = JSON.parse(readFileSync(path.join(TESTS, 'st', 'expected.json'), 'utf8'));
const TMP = mkdtempSync(path.join(tmpdir(), 'swapformer-st-'));
process.once('exit', () => rmSync(TMP, { recursive: true, force: true }));

/** A model of expected.json: its folder copied, the reference's JSON files written over the copy. */
function folderOf(name) {
  const m = E.models.find((x) => x.name === name);
  const dir = path.join(TMP, name);
  cpSync(path.join(TESTS, m.folder), dir, { recursive: true });
  for (const [file, json] of Object.entries(m.files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), JSON.stringify(json));
  }
  return dir;
}
const loaded = new Map();
const model = (name) => {
  if (!loaded.has(name)) loaded.set(name, loadPretrained(folderOf(name)));
  return loaded.get(name);
};

/** embed with its forward passes recorded: [{ids: number[][]}] in order. */
function recording(m, fn) {
  const passes = [];
  const forward = m.encoder.forward;
  m.encoder.forward = (ids, options) => {
    passes.push(ids.map((x) => Array.from(x)));
    return forward.call(m.encoder, ids, options);
  };
  try {
    return { out: fn(), passes };
  } finally {
    delete m.encoder.forward;
  }
}

const key = (ids) => ids.join(',');

test('embed against the reference: prompts, include_prompt, pooling modes, T5, strip, truncation, grouping', async () => {
  assert.ok(E.cases.length >= 19);
  for (const c of E.cases) {
    const m = await model(c.model);
    const { out, passes } = recording(m, () => m.embed(c.texts, c.options));
    assert.deepEqual(out.shape, c.embeddings.shape, c.label);
    assertClose(out.data, c.embeddings.data, GOLDEN_TOLERANCE, c.label);
    // the tokens of every pass are the reference's (prompt prepended, stripped as Python does, truncated)
    const want = new Map(c.ids.map((ids, i) => [key(ids), i]));
    assert.deepEqual(passes.flat().map(key).sort(), c.ids.map(key).sort(), `${c.label}: the tokens`);
    assert.deepEqual(
      passes.map((p) => p.length),
      c.batches.map((b) => b.length),
      `${c.label}: batch sizes`,
    );
    if (want.size === c.ids.length) {
      // distinct tokens: each pass's texts, in np.argsort(-len) order
      assert.deepEqual(
        passes.map((p) => p.map((ids) => want.get(key(ids)))),
        c.batches,
        `${c.label}: batches`,
      );
    }
  }
});

test("prompts: model.prompts, the default one, promptName refused when unknown, '' for none, not a string refused", async () => {
  const m = await model('minilm-prompts');
  const spec = E.models.find((x) => x.name === 'minilm-prompts');
  assert.deepEqual(m.prompts, Object.assign(Object.create(null), spec.prompts));
  m.prompts.query = 'changed';
  assert.equal(m.prompts.query, 'query: ', 'model.prompts is a copy');
  const texts = ['hello world', 'what is a transformer?'];
  const dflt = m.embed(texts).data;
  assertBitIdentical(m.embed(texts, { promptName: 'query' }).data, dflt, 'the default prompt is prompts[default_prompt_name]');
  assertBitIdentical(m.embed(texts, { prompt: 'query: ' }).data, dflt, 'prompt: the same text');
  assertBitIdentical(m.embed(texts, { prompt: 'query: ', promptName: 'passage' }).data, dflt, 'prompt beats promptName');
  assertBitIdentical(m.embed(texts, { prompt: '' }).data, m.embed(texts, { promptName: 'empty' }).data, "'' and an empty named prompt: none");
  assert.ok(!m.embed(texts, { prompt: '' }).data.every((v, i) => v === dflt[i]), "'' is not the default prompt");
  await rejects(
    () => m.embed(texts, { promptName: 'Query' }),
    'BAD_ARGUMENT',
    /promptName 'Query' is not one of this model's prompts \(query, passage, empty, instruct\)/,
  );
  await rejects(() => m.embed(texts, { prompt: 3 }), 'BAD_ARGUMENT', /options\.prompt must be a string/);
  await rejects(() => m.embed(texts, { promptName: null }), 'BAD_ARGUMENT', /options\.promptName must be a string/);
  const plain = await model('roberta');
  assert.equal(plain.prompts, null);
  await rejects(() => plain.embed(texts, { promptName: 'query' }), 'BAD_ARGUMENT', /it has none/);
  assert.doesNotThrow(() => m.embed(texts), 'the model is still usable');
});

test('prompt names such as __proto__, constructor, toString are names like any other: model.prompts has no prototype', async () => {
  const dir = folderOf('minilm-prompts');
  const named = path.join(TMP, 'prompt-names');
  cpSync(dir, named, { recursive: true });
  // own keys, written as JSON: a literal {__proto__: ...} would set the prototype instead
  const prompts = Object.fromEntries([
    ['__proto__', 'query: '],
    ['constructor', 'passage: '],
  ]);
  writeFileSync(path.join(named, 'config_sentence_transformers.json'), JSON.stringify({ prompts, default_prompt_name: '__proto__' }));
  const m = await loadPretrained(named);
  try {
    assert.equal(Object.getPrototypeOf(m.prompts), null, 'no prototype');
    assert.deepEqual(Object.keys(m.prompts), ['__proto__', 'constructor']);
    assert.equal(m.prompts.__proto__, 'query: ');
    assert.equal(m.prompts.toString, undefined, 'a name that is not a prompt is undefined');
    assert.equal(Object.getPrototypeOf(m.recipe.prompts), null, 'the recipe keeps them so too');
    const texts = ['hello world', 'what is a transformer?'];
    assertBitIdentical(m.embed(texts).data, m.embed(texts, { prompt: 'query: ' }).data, 'the default prompt, named __proto__');
    assertBitIdentical(m.embed(texts, { promptName: 'constructor' }).data, m.embed(texts, { prompt: 'passage: ' }).data, 'promptName constructor');
    await rejects(
      () => m.embed(texts, { promptName: 'toString' }),
      'BAD_ARGUMENT',
      /promptName 'toString' is not one of this model's prompts \(__proto__, constructor\)/,
    );
  } finally {
    m.dispose();
  }
});

test('batches: batchSize 1 / 3 / 32 and onProgress (monotone, done === total at the end), bit-identical to one text at a time', async () => {
  const m = await model('minilm-prompts');
  const texts = E.cases[0].texts;
  const alone = texts.map((t) => m.embed([t]).data);
  for (const batchSize of [1, 3, 32, undefined]) {
    const events = [];
    const out = m.embed(texts, { batchSize, onProgress: (e) => events.push(e) });
    texts.forEach((_, i) => assertBitIdentical(out.data.subarray(i * out.shape[1], (i + 1) * out.shape[1]), alone[i], `batchSize ${batchSize}: text ${i}`));
    const size = batchSize ?? 32;
    assert.deepEqual(
      events.map((e) => e.done),
      Array.from({ length: Math.ceil(texts.length / size) }, (_, k) => Math.min(texts.length, (k + 1) * size)),
      `batchSize ${batchSize}: done`,
    );
    assert.ok(events.every((e) => e.total === texts.length));
    assert.equal(events.at(-1).done, events.at(-1).total);
  }
  for (const bad of [0, -1, 1.5, '4', Infinity])
    await rejects(() => m.embed(texts, { batchSize: bad }), 'BAD_ARGUMENT', /options\.batchSize must be a positive integer/);
  await rejects(() => m.embed(texts, { onProgress: 'yes' }), 'BAD_ARGUMENT', /onProgress must be a function/);
  assert.deepEqual(m.embed([]).shape, [0, m.embed(['x']).shape[1]], 'no text: [0, D]');
});

test('embedAsync is bit-identical to embed (threads default and 1), with every option', async () => {
  const m = await model('minilm-pool-mix');
  const one = await loadPretrained(folderOf('minilm-pool-mix'), { threads: 1 });
  try {
    const texts = E.cases[0].texts;
    for (const options of [
      {},
      { promptName: 'instruct', batchSize: 3 },
      { precision: 'ubinary' },
      { chunking: { maxTokens: 12, overlap: 2 } },
      { pooling: 'none' },
    ]) {
      const sync = m.embed(texts, options);
      const events = [];
      const asyncOut = await m.embedAsync(texts, { ...options, onProgress: (e) => events.push(e.done) });
      assert.deepEqual(asyncOut.shape, sync.shape);
      assert.deepEqual(Array.from(asyncOut.data), Array.from(sync.data), JSON.stringify(options));
      assert.deepEqual(Array.from(one.embed(texts, options).data), Array.from(sync.data), `1 thread: ${JSON.stringify(options)}`);
      assert.ok(events.length > 0 && events.every((d, i) => i === 0 || d > events[i - 1]));
    }
  } finally {
    one.dispose();
  }
});

test('embedStream: a generator of 100 texts, batches with their index, bits equal to embed; async iterables; precision', async () => {
  const m = await model('minilm-prompts');
  const texts = Array.from({ length: 100 }, (_, i) => `${'the quick brown fox '.repeat(i % 7)}text number ${i}`);
  function* gen() {
    yield* texts;
  }
  const all = m.embed(texts);
  const D = all.shape[1];
  const seen = [];
  for await (const { index, embeddings } of m.embedStream(gen(), { batchSize: 16 })) {
    assert.equal(index, seen.length, "index: the position of the batch's first text");
    const n = Math.min(16, 100 - index);
    assert.deepEqual(embeddings.shape, [n, D]);
    assertBitIdentical(embeddings.data, all.data.subarray(index * D, (index + n) * D), `batch at ${index}`);
    for (let k = 0; k < n; k++) seen.push(index + k);
  }
  assert.equal(seen.length, 100);
  async function* slow() {
    for (const t of texts.slice(0, 10)) {
      await new Promise((go) => setTimeout(go, 1));
      yield t;
    }
  }
  const packed = [];
  for await (const { embeddings } of m.embedStream(slow(), { batchSize: 4, precision: 'ubinary' })) packed.push(...embeddings.data);
  assert.deepEqual(packed, Array.from((await quantizeEmbeddings({ data: all.data.slice(0, 10 * D), shape: [10, D] }, 'ubinary')).data));
  await rejects(
    async () => {
      for await (const _ of m.embedStream(gen(), { precision: 'int8' }));
    },
    'BAD_ARGUMENT',
    /need ranges over the whole corpus/,
  );
  await rejects(
    async () => {
      for await (const _ of m.embedStream(['a', 2]));
    },
    'BAD_ARGUMENT',
    /text 1 must be a string/,
  );
  const withLong = texts.slice(0, 50);
  withLong[37] = E.cases[0].texts.at(-1); // past maxLength: named by its place in the stream, not in its batch
  await rejects(
    async () => {
      for await (const _ of m.embedStream(withLong, { batchSize: 16, truncate: false }));
    },
    'SEQUENCE_TOO_LONG',
    /texts\[37\] has \d+ tokens/,
  );
  await rejects(
    async () => {
      for await (const _ of m.embedStream('not an iterable of texts', {}));
    },
    'BAD_ARGUMENT',
    /iterable/,
  );
});

test('truncate: false refuses a text past maxLength, naming it; within the limit it changes nothing', async () => {
  const m = await model('minilm-prompts');
  const long = E.cases[0].texts.at(-1);
  await rejects(
    () => m.embed(['short', 'also short', long], { truncate: false }),
    'SEQUENCE_TOO_LONG',
    /texts\[2\] has \d+ tokens; the model takes at most 96/,
  );
  await rejects(
    () => m.embed(['a b c d e f g h'], { truncate: false, maxLength: 8 }),
    'SEQUENCE_TOO_LONG',
    /texts\[0\] has 12 tokens; the model takes at most 8/,
  );
  assertBitIdentical(m.embed(['short', 'also short'], { truncate: false }).data, m.embed(['short', 'also short']).data);
  await rejects(() => m.embed(['x'], { truncate: 'no' }), 'BAD_ARGUMENT', /truncate must be true or false/);
});

/** Checks chunk()'s windows of `text` for the options; returns them. */
function checkChunks(m, text, { maxTokens, overlap = 0 }) {
  const chunks = m.chunk(text, { maxTokens, overlap });
  const tokens = m.tokenizer.encode(text, { addSpecialTokens: false });
  const covered = new Array(tokens.ids.length).fill(0);
  for (const [i, c] of chunks.entries()) {
    assert.equal(c.text, text.slice(c.start, c.end), `chunk ${i}: text === text.slice(start, end)`);
    assert.ok(c.tokens <= maxTokens, `chunk ${i}: ${c.tokens} tokens <= ${maxTokens}`);
    assert.equal(m.tokenizer.encode(c.text).ids.length, c.tokens, `chunk ${i}: tokens counts its text with the special tokens`);
    tokens.offsets.forEach(([a, b], t) => {
      if (a >= c.start && b <= c.end) covered[t]++;
    });
    if (i > 0) {
      const prev = chunks[i - 1];
      assert.ok(c.start > prev.start, 'windows move forward');
      if (overlap === 0)
        assert.ok(c.start >= prev.end && /^\s*$/.test(text.slice(prev.end, c.start)), `chunk ${i}: starts where the previous one ends (spaces between)`);
      else {
        // `overlap` tokens shared, or fewer when words do not allow it: then it starts at prev's second word (the most it can share)
        const shared = m.tokenizer.encode(text.slice(c.start, prev.end), { addSpecialTokens: false }).ids.length;
        const second = prev.start + prev.text.search(/\s\S/) + 1;
        assert.ok(
          shared >= overlap || c.start === second,
          `chunk ${i}: shares ${shared} tokens (>= ${overlap}, or starts at the previous chunk's second word)`,
        );
      }
    }
  }
  assert.ok(
    covered.every((n) => n >= 1),
    'every token is in a chunk',
  );
  return chunks;
}

test('chunk(): windows at word boundaries (text === slice(start, end)), maxTokens, overlap, a word longer than a window, errors', async () => {
  const m = await model('minilm-prompts');
  // every word here is at most 3 tokens (sentence ##s ,): no word is longer than the smallest window
  const text =
    'The quick brown fox jumps over the lazy dog. What is a transformer? A model that encodes sentences, '.repeat(4) + 'and a short text with a dog!';
  for (const [maxTokens, overlap] of [
    [16, 0],
    [16, 3],
    [24, 5],
    [96, 0],
    [7, 0],
    [7, 4],
  ]) {
    const chunks = checkChunks(m, text, { maxTokens, overlap });
    const words = new Set(text.split(/\s+/));
    for (const c of chunks) {
      // words not split: both ends at a space (or the text's ends)
      assert.ok(c.start === 0 || /\s/.test(text[c.start - 1]), `[${maxTokens}, ${overlap}] starts a word: ${JSON.stringify(c.text.slice(0, 12))}`);
      assert.ok(c.end === text.length || /\s/.test(text[c.end]), `[${maxTokens}, ${overlap}] ends a word: ${JSON.stringify(c.text.slice(-12))}`);
      for (const w of c.text.split(/\s+/)) assert.ok(words.has(w), `whole words only: ${w}`);
    }
    if (maxTokens === 96) assert.equal(chunks.length, 2);
  }
  assert.equal(m.chunk('short text').length, 1, 'maxTokens defaults to maxLength');
  assert.deepEqual(m.chunk(''), [{ text: '', start: 0, end: 0, tokens: 2 }]);
  const word = 'abcdefghij'.repeat(4); // one word of 40 pieces: split, since it alone is longer than a window
  const pieces = checkChunks(m, `short ${word} end`, { maxTokens: 12 });
  assert.ok(pieces.length >= 4);
  await rejects(() => m.chunk(text, { maxTokens: 97 }), 'SEQUENCE_TOO_LONG', /maxTokens = 97: this model takes at most 96/);
  await rejects(() => m.chunk(text, { maxTokens: 2 }), 'BAD_ARGUMENT', /leaves no room besides the 2 special tokens/);
  await rejects(() => m.chunk(text, { maxTokens: 10, overlap: 8 }), 'BAD_ARGUMENT', /overlap must be an integer in \[0, 7\]/);
  await rejects(() => m.chunk(text, { maxTokens: 10, overlap: -1 }), 'BAD_ARGUMENT', /overlap/);
  await rejects(() => m.chunk(42), 'BAD_ARGUMENT', /text must be a string/);
});

test("chunking: mean / max of the chunks' embeddings (normalised again), none with the offsets; onProgress counts chunks", async () => {
  const m = await model('minilm-prompts');
  const texts = ['The quick brown fox jumps over the lazy dog. '.repeat(6), 'short one', 'what is a transformer? '.repeat(5)];
  const chunking = { maxTokens: 16, overlap: 3 };
  const per = texts.map((t) => m.chunk(t, chunking));
  const rows = per.map((cs) => m.embed(cs.map((c) => c.text)));
  const D = rows[0].shape[1];
  for (const pool of ['mean', 'max']) {
    const events = [];
    const out = m.embed(texts, { chunking: { ...chunking, pool }, onProgress: (e) => events.push(e) });
    assert.deepEqual(out.shape, [3, D]);
    const want = new Float64Array(3 * D);
    rows.forEach((r, i) => {
      const n = r.shape[0];
      const v = Array.from({ length: D }, (_, d) => {
        const col = Array.from({ length: n }, (_, k) => r.data[k * D + d]);
        return pool === 'max' ? Math.max(...col) : col.reduce((a, b) => a + b, 0) / n;
      });
      const norm = Math.hypot(...v);
      v.forEach((x, d) => {
        want[i * D + d] = x / norm;
      });
    });
    assertClose(out.data, want, 1e-6, `chunking pool ${pool}`);
    const total = per.reduce((s, cs) => s + cs.length, 0);
    assert.ok(events.every((e) => e.total === total && e.unit === 'chunks') && events.at(-1).done === total, `${pool}: progress in chunks`);
  }
  const none = m.embed(texts, { chunking: { ...chunking, pool: 'none' } });
  none.forEach((r, i) => {
    assert.deepEqual(
      r.chunks,
      per[i].map(({ text, start, end }) => ({ text, start, end })),
    );
    assertBitIdentical(r.embeddings.data, rows[i].data, `pool none: text ${i}'s chunk rows`);
  });
  // the windows fit the call's maxLength with the prompt prepended (query: = 2 tokens): longer ones would lose their tails
  for (const [options, window] of [
    [{ maxLength: 24 }, 22],
    [{ maxLength: 24, prompt: '' }, 24],
    [{}, 94],
  ]) {
    const { out, passes } = recording(m, () => m.embed([texts[0]], { ...options, chunking: {} }));
    const lengths = passes.flat().map((ids) => ids.length);
    assert.ok(
      lengths.every((n) => n <= (options.maxLength ?? 96)),
      `${JSON.stringify(options)}: ${lengths}`,
    );
    assert.equal(lengths.length, m.chunk(texts[0], { maxTokens: window }).length, `${JSON.stringify(options)}: windows of ${window}`);
    assertBitIdentical(
      out.data,
      m.embed([texts[0]], { ...options, maxLength: undefined, chunking: { maxTokens: window } }).data,
      `${JSON.stringify(options)} = maxTokens ${window}`,
    );
  }
  await rejects(
    () => m.embed([texts[0]], { maxLength: 24, chunking: { maxTokens: 24 } }),
    'SEQUENCE_TOO_LONG',
    /maxTokens = 24: this model takes at most 22 tokens \(maxLength 24 less the prompt's 2\)/,
  );
  await rejects(
    () => m.embed([texts[0]], { maxLength: 24, prompt: '', chunking: { maxTokens: 30 } }),
    'SEQUENCE_TOO_LONG',
    /maxTokens = 30: this model takes at most 24 tokens \(maxLength\)/,
  );
  const onePiece = m.embed(['short one'], { chunking });
  assertClose(onePiece.data, m.embed(['short one']).data, 1e-7, 'a text of one chunk: its embedding');
  await rejects(() => m.embed(texts, { chunking: { ...chunking, pool: 'sum' } }), 'BAD_ARGUMENT', /chunking\.pool must be one of mean, max, none/);
  await rejects(() => m.embed(texts, { chunking, pooling: 'none' }), 'BAD_ARGUMENT', /does not go with pooling: 'none'/);
  await rejects(() => m.embed(texts, { chunking: { pool: 'none' }, precision: 'int8' }), 'BAD_ARGUMENT', /no precision/);
});

test('precision: int8 / uint8 / binary / ubinary over the call equal quantizeEmbeddings of the float32 embeddings', async () => {
  const m = await model('minilm-prompts');
  const texts = E.cases[0].texts;
  const float = m.embed(texts);
  for (const precision of ['int8', 'uint8', 'binary', 'ubinary']) {
    const q = m.embed(texts, { precision, batchSize: 4 });
    const want = await quantizeEmbeddings(float, precision);
    assert.equal(q.data.constructor, want.data.constructor, precision);
    assert.deepEqual(q.shape, want.shape);
    assert.deepEqual(Array.from(q.data), Array.from(want.data), precision);
  }
  assertBitIdentical(m.embed(texts, { precision: 'float32' }).data, float.data);
  await rejects(() => m.embed(texts, { precision: 'fp16' }), 'BAD_ARGUMENT', /precision must be one of float32, int8, uint8, binary, ubinary/);
  await rejects(() => m.embed(texts, { precision: 'int8', pooling: 'none' }), 'BAD_ARGUMENT', /not to pooling: 'none'/);
});

const rows = ({ shape, data }) => ({ shape, data: Float32Array.from(data) });
function assertScores(got, want, what) {
  assert.equal(got.length, want.length, what);
  const scale = Math.max(1, ...want.map(Math.abs));
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= 2e-6 * scale, `${what}[${i}]: ${g} vs ${want[i]}`));
}

test("similarity: cosSim, dotScore, and model.similarity with the config's similarity_fn_name (cosine, dot, euclidean, manhattan)", async () => {
  const { a, b, scores } = E.similarity;
  const A = rows(a),
    B = rows(b);
  const cos = await cosSim(A, B),
    dot = await dotScore(A, B);
  assert.deepEqual(cos.shape, [3, 5]);
  assertScores(Array.from(cos.data), scores.cosine, 'cosSim');
  assertScores(Array.from(dot.data), scores.dot, 'dotScore');
  assert.deepEqual(
    [0, 1, 2].map((m) => cos.data[m * 5 + 4]),
    [0, 0, 0],
    'a zero row: cosine 0',
  );
  for (const [name, fn] of [
    ['minilm-prompts', 'dot'],
    ['minilm-include', 'cosine'],
    ['minilm-pool-mix', 'euclidean'],
    ['minilm-cls-mean', 'manhattan'],
    ['t5-prompts', 'cosine'],
    ['roberta', 'cosine'],
  ]) {
    const m = await model(name);
    assert.equal(m.similarityFnName, fn, name);
    assertScores(Array.from(m.similarity(A, B).data), scores[fn], `${name}.similarity (${fn})`);
  }
  const m = await model('minilm-prompts');
  const e = m.embed(['hello world', 'the quick brown fox']);
  assertScores(
    Array.from(m.similarity(e, e).data),
    [0, 1, 2, 3].map((k) => {
      // dot of the rows with themselves
      const [i, j] = [k >> 1, k & 1];
      let s = 0;
      for (let d = 0; d < e.shape[1]; d++) s += e.data[i * e.shape[1] + d] * e.data[j * e.shape[1] + d];
      return s;
    }),
    'similarity of embed results',
  );
  assertScores(Array.from((await cosSim([[1, 0, 0]], [[2, 2, 0]])).data), [Math.SQRT1_2], 'one vector each');
  await rejects(() => cosSim(A, { data: new Float32Array(10), shape: [2, 5] }), 'BAD_ARGUMENT', /a has 24 dimensions and b 5/);
  await rejects(() => cosSim([[1, NaN]], [[1, 2]]), 'BAD_ARGUMENT', /non-finite value at row 0, dimension 1/);
  // the scan runs in the core over every value: one far in, past its blocks of 256, in either argument and every call
  const big = new Float32Array(1000 * 384).fill(0.5);
  big[777 * 384 + 300] = -Infinity;
  await rejects(
    () => cosSim([new Float32Array(384).fill(1)], { data: big, shape: [1000, 384] }),
    'BAD_ARGUMENT',
    /^b holds a non-finite value at row 777, dimension 300$/,
  );
  await rejects(
    () => semanticSearch({ data: big, shape: [1000, 384] }, [new Float32Array(384)]),
    'BAD_ARGUMENT',
    /^queryEmbeddings holds a non-finite value at row 777, dimension 300$/,
  );
  await rejects(() => quantizeEmbeddings({ data: big, shape: [1000, 384] }, 'ubinary'), 'BAD_ARGUMENT', /^embeddings holds a non-finite value at row 777/);
  await rejects(
    () =>
      quantizeEmbeddings(
        [
          [1, 2],
          [3, 4],
        ],
        'int8',
        {
          calibrationEmbeddings: [
            [0, 1],
            [NaN, 2],
          ],
        },
      ),
    'BAD_ARGUMENT',
    /^options\.calibrationEmbeddings holds a non-finite value at row 1, dimension 0$/,
  );
  await rejects(
    () =>
      quantizeEmbeddings(
        [
          [1, 2],
          [3, 4],
        ],
        'uint8',
        {
          ranges: [
            [0, 0],
            [5, Infinity],
          ],
        },
      ),
    'BAD_ARGUMENT',
    /^options\.ranges holds a non-finite value at row 1, dimension 1$/,
  );
  big[777 * 384 + 300] = 0; // and a NaN in the last, partial block
  big[big.length - 1] = NaN;
  await rejects(
    () => dotScore({ data: big, shape: [1000, 384] }, [new Float32Array(384)]),
    'BAD_ARGUMENT',
    /^a holds a non-finite value at row 999, dimension 383$/,
  );
  await rejects(() => m.similarity(A, { data: new Uint8Array(3), shape: [1, 3] }), 'BAD_ARGUMENT', /float embeddings/);
});

test("widths that leave tails after the core's blocks: 13 and 37 float dimensions, 40 and 312 bits (5 and 39 bytes), against numpy", async () => {
  const W = E.widths;
  for (const { dimensions, queries, corpus, scores, results } of W.float) {
    const Q = rows(queries),
      C = rows(corpus);
    assertScores(Array.from((await cosSim(Q, C)).data), scores.cosine, `${dimensions} dims: cosSim`);
    assertScores(Array.from((await dotScore(Q, C)).data), scores.dot, `${dimensions} dims: dotScore`);
    for (const [name, fn] of [
      ['minilm-pool-mix', 'euclidean'],
      ['minilm-cls-mean', 'manhattan'],
    ])
      assertScores(Array.from((await model(name)).similarity(Q, C).data), scores[fn], `${dimensions} dims: similarity (${fn})`);
    for (const [label, want] of Object.entries(results)) {
      const [fn, k] = label.split(':');
      const got = await semanticSearch(Q, C, { topK: Number(k), scoreFunction: fn });
      got.forEach((hits, q) => {
        assert.deepEqual(
          hits.map((h) => h.corpusId),
          want[q].map((h) => h.corpusId),
          `${dimensions} dims, ${label}, query ${q}: ids`,
        );
        assertScores(
          hits.map((h) => h.score),
          want[q].map((h) => h.score),
          `${dimensions} dims, ${label}, query ${q}: scores`,
        );
      });
    }
  }
  const plain = (hits) => hits.map(({ corpusId, score }) => ({ corpusId, score: score + 0 })); // -0 as 0
  for (const { dimensions, bytes, queries, corpus, ubinaryQueries, ubinaryCorpus, results } of W.bits) {
    assert.equal(bytes % 4 === 0, false, `${dimensions} dims: a tail of ${bytes % 4} bytes`);
    const uq = await quantizeEmbeddings(rows(queries), 'ubinary'),
      uc = await quantizeEmbeddings(rows(corpus), 'ubinary');
    assert.deepEqual(uq.shape, [3, bytes]);
    assert.deepEqual(Array.from(uq.data), ubinaryQueries, `${dimensions} dims: packbits`);
    assert.deepEqual(Array.from(uc.data), ubinaryCorpus, `${dimensions} dims: packbits`);
    const bq = await quantizeEmbeddings(rows(queries), 'binary'),
      bc = await quantizeEmbeddings(rows(corpus), 'binary');
    for (const [k, want] of Object.entries(results))
      for (const [q, c, what] of [
        [uq, uc, 'ubinary'],
        [bq, bc, 'binary'],
        [uq, bc, 'ubinary x binary'],
        [bq, uc, 'binary x ubinary'],
      ])
        assert.deepEqual((await semanticSearch(q, c, { topK: Number(k) })).map(plain), want.map(plain), `${dimensions} dims, ${what}, top ${k}`);
    // row 20 differs from query 0 (= rows 9 and 33) in its last 3 bits only: in the tail bytes
    assert.deepEqual(
      (await semanticSearch(uq, uc, { topK: 3 }))[0].map((h) => [h.corpusId, h.score + 0]),
      [
        [9, 0],
        [33, 0],
        [20, -3],
      ],
      `${dimensions} dims: a distance all in the tail`,
    );
  }
});

test('semanticSearch: top-k by each score function (ties: the lower corpus id first), topK past the corpus; Hamming over packed bits', async () => {
  const { queries, corpus, results, hamming } = E.search;
  const Q = rows(queries),
    C = rows(corpus);
  for (const [label, want] of Object.entries(results)) {
    const [fn, k] = label.split(':');
    const got = await semanticSearch(Q, C, { topK: Number(k), scoreFunction: fn });
    assert.equal(got.length, 4);
    got.forEach((hits, q) => {
      assert.deepEqual(
        hits.map((h) => h.corpusId),
        want[q].map((h) => h.corpusId),
        `${label}, query ${q}: ids`,
      );
      assertScores(
        hits.map((h) => h.score),
        want[q].map((h) => h.score),
        `${label}, query ${q}: scores`,
      );
    });
  }
  assert.equal(results['cosine:50'][0].length, 40, 'topK 50 over 40 rows: all of them');
  assert.deepEqual(
    (await semanticSearch(Q, C))[1].slice(0, 2).map((h) => h.corpusId),
    [7, 23],
    'default: cosine, top 10; the tie 7 = 23 in order',
  );
  // packed bits: quantizeEmbeddings' ubinary equals numpy's packbits, and Hamming search ranks by -distance
  const HQ = rows(hamming.queries),
    HC = rows(hamming.corpus);
  const uq = await quantizeEmbeddings(HQ, 'ubinary'),
    uc = await quantizeEmbeddings(HC, 'ubinary');
  assert.deepEqual(Array.from(uq.data), hamming.ubinaryQueries);
  assert.deepEqual(Array.from(uc.data), hamming.ubinaryCorpus);
  const bq = await quantizeEmbeddings(HQ, 'binary'),
    bc = await quantizeEmbeddings(HC, 'binary');
  for (const [k, want] of Object.entries(hamming.results)) {
    for (const [q, c, what] of [
      [uq, uc, 'ubinary'],
      [bq, bc, 'binary'],
      [uq, bc, 'ubinary x binary'],
    ]) {
      const got = await semanticSearch(q, c, { topK: Number(k) });
      const plain = (hits) => hits.map(({ corpusId, score }) => ({ corpusId, score: score + 0 })); // -0 (numpy's -float(0)) as 0
      assert.deepEqual(got.map(plain), want.map(plain), `${what} top ${k}`);
    }
  }
  assert.equal(hamming.results['100'][0].length, 60);
  assert.deepEqual(
    (await semanticSearch(uq, uc, { topK: 2 }))[0].map((h) => [h.corpusId, h.score + 0]),
    [
      [9, 0],
      [41, 0],
    ],
    'a query equal to rows 9 and 41: distance 0, the lower id first',
  );
  await rejects(() => semanticSearch(Q, uc), 'BAD_ARGUMENT', /both be floats or both packed bits/);
  await rejects(() => semanticSearch(uq, uc, { scoreFunction: 'cosine' }), 'BAD_ARGUMENT', /'hamming' for packed bits/);
  await rejects(() => semanticSearch(Q, C, { scoreFunction: 'hamming' }), 'BAD_ARGUMENT', /one of cosine, dot, euclidean, manhattan/);
  for (const topK of [0, -1, 2.5, '3']) await rejects(() => semanticSearch(Q, C, { topK }), 'BAD_ARGUMENT', /topK must be a positive integer/);
  // ST's chunk sizes bound its memory: accepted (the same results), checked
  assert.deepEqual(await semanticSearch(Q, C, { queryChunkSize: 1, corpusChunkSize: 7 }), await semanticSearch(Q, C));
  for (const key of ['queryChunkSize', 'corpusChunkSize'])
    await rejects(() => semanticSearch(Q, C, { [key]: 'big' }), 'BAD_ARGUMENT', new RegExp(`${key} must be a positive integer`));
});

test('quantizeEmbeddings bit for bit as quantize_embeddings: int8 / uint8 (own ranges, calibration, given ranges; wraps), binary, ubinary', async () => {
  const { embeddings, calibration, ranges, results } = E.quantize;
  const X = rows(embeddings);
  const opts = { own: undefined, calibration: { calibrationEmbeddings: rows(calibration) }, ranges: { ranges: rows(ranges) } };
  for (const [label, want] of Object.entries(results)) {
    const [precision, how] = label.split(':');
    const got = await quantizeEmbeddings(X, precision, how ? opts[how] : undefined);
    assert.equal(got.data.constructor, precision === 'int8' || precision === 'binary' ? Int8Array : Uint8Array, label);
    assert.deepEqual(got.shape, [30, precision.endsWith('binary') ? 2 : 16], label);
    assert.deepEqual(Array.from(got.data), want, label);
  }
  const r = rows(ranges);
  const asArrays = await quantizeEmbeddings(X, 'uint8', { ranges: [Array.from(r.data.subarray(0, 16)), Array.from(r.data.subarray(16))] });
  assert.deepEqual(Array.from(asArrays.data), results['uint8:ranges'], 'ranges as two arrays');
  assertBitIdentical((await quantizeEmbeddings(X, 'float32')).data, X.data);
  await rejects(() => quantizeEmbeddings({ data: new Float32Array(12), shape: [2, 6] }, 'binary'), 'BAD_ARGUMENT', /6 dimensions is not a multiple of 8/);
  await rejects(
    () =>
      quantizeEmbeddings(
        [
          [1, 2],
          [1, 3],
        ],
        'int8',
      ),
    'BAD_ARGUMENT',
    /dimension 0 has an empty range/,
  );
  await rejects(() => quantizeEmbeddings(X, 'int8', { ranges: [[0, 1]] }), 'BAD_ARGUMENT', /ranges must be \[2, 16\]/);
  await rejects(() => quantizeEmbeddings(X, 'int4'), 'BAD_ARGUMENT', /precision must be one of/);
  await rejects(() => quantizeEmbeddings({ data: new Uint8Array(16), shape: [1, 16] }, 'int8'), 'BAD_ARGUMENT', /must be floats/);
});

// ------------------------------------------------------------------ options: an unknown key is refused by name

const BASE = {
  vocabSize: 40,
  dModel: 32,
  heads: 4,
  layers: 1,
  ffDim: 48,
  position: 'learned',
  maxLen: 32,
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'gelu',
};
const bogus = { bogus: 1 };
const heads = (name) => path.join(TESTS, 'heads', name);

test('every public call refuses an unknown option key, naming it (and the instance stays usable)', async () => {
  const enc = await createEncoder(BASE, { threads: 1 });
  const bytes = enc.save();
  const m = await model('minilm-prompts');
  const [cls, cross, ner, mlm, nli] = await Promise.all(
    ['distilbert-sst2', 'cross-encoder-msmarco', 'bert-ner', 'bert-mlm', 'nli-bert-entail0'].map((h) => loadPretrained(heads(h))),
  );
  const retrieval = (name) => fileURLToPath(new URL(`./retrieval/${name}`, import.meta.url));
  const [qa, m3, splade] = await Promise.all(['qa-bert', 'bge-m3', 'splade-bert'].map((r) => loadPretrained(retrieval(r))));
  const tokens = { data: Float32Array.of(1, 0), shape: [1, 2] },
    sparse = { indices: [1], values: [1] };
  const stream = (o) =>
    (async () => {
      for await (const _ of m.embedStream(['a'], o));
    })();
  const calls = {
    createEncoder: () => createEncoder(BASE, bogus),
    'createEncoder init': () => createEncoder(BASE, { init: bogus }),
    loadModel: () => loadModel(bytes, bogus),
    runtimeInfo: () => runtimeInfo(bogus),
    listPlugins: () => listPlugins(bogus),
    configure: () => configure(bogus),
    'configure wasmPaths': () => configure({ wasmPaths: { bogus: '/x.wasm', simd: '/y.wasm' } }),
    'Encoder.forward': () => enc.forward([[1, 2, 3]], bogus),
    'Encoder.forwardAsync': () => enc.forwardAsync([[1, 2, 3]], bogus),
    'Encoder.positionScores': () => enc.positionScores({ length: 4, bogus: 1 }),
    'Encoder.withConfig': () => enc.withConfig({}, bogus),
    loadPretrained: () => loadPretrained(folderOf('roberta'), bogus),
    'Pretrained.withConfig': () => m.withConfig({}, bogus),
    'Pretrained.embed': () => m.embed(['a'], bogus),
    'Pretrained.embed chunking': () => m.embed(['a'], { chunking: bogus }),
    'Pretrained.embedAsync': () => m.embedAsync(['a'], bogus),
    'Pretrained.embedStream': () => stream(bogus),
    'Pretrained.chunk': () => m.chunk('a', bogus),
    'Pretrained.classify': () => cls.classify('a', bogus),
    'Pretrained.classifyAsync': () => cls.classifyAsync('a', bogus),
    'Pretrained.predict': () => cross.predict([['a', 'b']], bogus),
    'Pretrained.predictAsync': () => cross.predictAsync([['a', 'b']], bogus),
    'Pretrained.rank': () => cross.rank('a', ['b'], bogus),
    'Pretrained.rankAsync': () => cross.rankAsync('a', ['b'], bogus),
    'Pretrained.classifyTokens': () => ner.classifyTokens('a', bogus),
    'Pretrained.classifyTokensAsync': () => ner.classifyTokensAsync('a', bogus),
    'Pretrained.fillMask': () => mlm.fillMask('a [MASK]', bogus),
    'Pretrained.fillMaskAsync': () => mlm.fillMaskAsync('a [MASK]', bogus),
    'Pretrained.zeroShot': () => nli.zeroShot('a', ['b'], bogus),
    'Pretrained.zeroShotAsync': () => nli.zeroShotAsync('a', ['b'], bogus),
    'Encoder.forward sparse': () => enc.forward([[1, 2, 3]], { sparse: bogus }),
    'Pretrained.answerQuestion': () => qa.answerQuestion('a', 'b', bogus),
    'Pretrained.answerQuestionAsync': () => qa.answerQuestionAsync('a', 'b', bogus),
    'Pretrained.computeScore': () => m3.computeScore([['a', 'b']], bogus),
    'Pretrained.computeScoreAsync': () => m3.computeScoreAsync([['a', 'b']], bogus),
    'Pretrained.decodeSparse': () => splade.decodeSparse(sparse, bogus),
    maxSimSearch: () => api.maxSimSearch([tokens], [tokens], bogus),
    sparseSearch: () => api.sparseSearch([sparse], [sparse], bogus),
    semanticSearch: () => semanticSearch([[1, 0]], [[0, 1]], bogus),
    quantizeEmbeddings: () =>
      quantizeEmbeddings(
        [
          [1, 0],
          [0, 1],
        ],
        'uint8',
        bogus,
      ),
  };
  try {
    // the table is every public call: each export, Pretrained and Encoder method is in it or takes no options
    const methods = (C) =>
      Object.getOwnPropertyNames(C.prototype).filter((n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(C.prototype, n).value === 'function');
    const NO_OPTIONS = [
      'cosSim',
      'dotScore',
      'Pretrained.similarity',
      'Pretrained.dispose',
      'maxSim',
      'sparseSimilarity',
      'Encoder.predict',
      'Encoder.positionVectors',
      'Encoder.getWeights',
      'Encoder.weightShapes',
      'Encoder.save',
      'Encoder.dispose',
    ];
    const publicCalls = [
      ...Object.entries(api)
        .filter(([k, v]) => typeof v === 'function' && !['Encoder', 'Pretrained', 'SwapformerError', 'Tokenizer'].includes(k))
        .map(([k]) => k),
      ...methods(api.Pretrained).map((n) => `Pretrained.${n}`),
      ...methods(api.Encoder).map((n) => `Encoder.${n}`),
    ];
    assert.deepEqual(
      publicCalls.filter((c) => !Object.hasOwn(calls, c) && !NO_OPTIONS.includes(c)),
      [],
      'public calls missing from the table',
    );
    // and every list of known keys is exercised: here, or in the Tokenizer's tests below ('similarity' lists none)
    const lists = {
      init: 'createEncoder init',
      positionScores: 'Encoder.positionScores',
      forward: 'Encoder.forward',
      sparse: 'Encoder.forward sparse',
      chunking: 'Pretrained.embed chunking',
      embed: 'Pretrained.embed',
      embedStream: 'Pretrained.embedStream',
      chunk: 'Pretrained.chunk',
      withConfig: 'Pretrained.withConfig',
      encoderWithConfig: 'Encoder.withConfig',
      configure: 'configure',
    };
    assert.deepEqual(
      Object.keys(OPTION_KEYS).filter((k) => !Object.hasOwn(calls, lists[k] ?? k) && !['encode', 'decode', 'fromJSON', 'similarity'].includes(k)),
      [],
    );
    for (const [name, call] of Object.entries(calls)) await rejects(call, 'BAD_ARGUMENT', /\bbogus\b/).catch((e) => assert.fail(`${name}: ${e.message}`));
    assert.equal(enc.forward([[1, 2, 3]]).shape[1], 3, 'the encoder still works');
    assert.equal(m.embed(['a']).shape[0], 1, 'the model still works');
    // suggestions: the key it resembles, or what to use instead
    await rejects(() => m.embed(['a'], { normalise: true }), 'BAD_ARGUMENT', /unknown option 'normalise' \(did you mean 'normalize'\?\)/);
    await rejects(() => m.embed(['a'], { dimension: 8 }), 'BAD_ARGUMENT', /'dimension' \(did you mean 'dimensions'\?\)/);
    await rejects(() => m.embed(['a'], { batch_size: 8 }), 'BAD_ARGUMENT', /'batch_size' \(did you mean 'batchSize'\?\)/);
    await rejects(() => m.embed(['a'], { prompt_name: 'query' }), 'BAD_ARGUMENT', /did you mean 'promptName'/);
    await rejects(() => enc.forward([[1, 2]], { outputAttention: true }), 'BAD_ARGUMENT', /'outputAttention' \(did you mean 'outputAttentions'\?\)/);
    await rejects(() => loadPretrained(folderOf('roberta'), { revison: 'main' }), 'BAD_ARGUMENT', /'revison' \(did you mean 'revision'\?\)/);
    await rejects(() => loadPretrained(folderOf('roberta'), { quantized: true }), 'BAD_ARGUMENT', /'quantized' \(use dtype: 'q8'/);
    await rejects(() => createEncoder(BASE, { quantized: true }), 'BAD_ARGUMENT', /use dtype: 'q8'/);
    await rejects(() => semanticSearch([[1, 0]], [[0, 1]], { top_k: 3 }), 'BAD_ARGUMENT', /did you mean 'topK'/);
    await rejects(() => m.embed(['a'], { zzzzzz: 1 }), 'BAD_ARGUMENT', /unknown option 'zzzzzz'; known: pooling, normalize/);
    await rejects(() => m.embed(['a'], []), 'BAD_ARGUMENT', /options must be an object, got an array/);
    // inherited keys are not options: an object with a prototype carrying one is read by its own keys only
    assert.equal(m.embed(['a'], Object.create({ bogus: 1 })).shape[0], 1);
  } finally {
    enc.dispose();
    for (const p of [cls, cross, ner, mlm, nli, qa, m3, splade]) p.dispose();
  }
});

// The Tokenizer's options too.
const tokenizerJson = JSON.parse(readFileSync(path.join(TESTS, 'st', 'minilm-prompts', 'tokenizer.json'), 'utf8'));
for (const [name, call] of [
  ['Tokenizer.encode', () => Tokenizer.fromJSON(tokenizerJson).encode('a', bogus)],
  ['Tokenizer.decode', () => Tokenizer.fromJSON(tokenizerJson).decode([5, 6], bogus)],
  ['Tokenizer.fromJSON', () => Tokenizer.fromJSON(tokenizerJson, bogus)],
]) {
  test(`${name} refuses an unknown option key`, async () => {
    await rejects(call, 'BAD_ARGUMENT', /\bbogus\b/);
  });
}
