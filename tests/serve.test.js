// `swapformer serve` (bin/serve.js, bin/serve/): TEI's routes and OpenAI's
// against the library's own outputs, real clients (the openai SDK, a
// TEI-shaped request set), dynamic batching (bit-identical to one input at a
// time, within the batch limits), the limits and faults (malformed JSON,
// bodies too large or too slow, client disconnects, 429, the API key,
// SIGTERM with requests in flight), two replicas with different thread counts
// (identical bytes) and a short load run with autocannon. Loopback only;
// servers in child processes are killed by pid when a test ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs, startServer, main } from '../bin/serve.js';
import { SwapformerError } from '../bindings/index.js';
import { NODE_FLAGS } from '../tools/node-flags.js';
import { startHub } from './hub-server.js';

const require = createRequire(import.meta.url);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const EMB = fileURLToPath(new URL('./pretrained/bert-minilm', import.meta.url));
const PROMPTED = fileURLToPath(new URL('./pretrained/bert-bge-mlm', import.meta.url));
const CLS = fileURLToPath(new URL('./heads/bert-seq-3', import.meta.url));
const RERANKER = fileURLToPath(new URL('./heads/cross-encoder-msmarco', import.meta.url));

const TEXTS = [
  'The quick brown fox jumps over the lazy dog.',
  'hello world',
  'a',
  'Embeddings from a server, batched or not, are the same bits.',
  'héllo wörld 🎉 ünïcödé',
  'short',
  'one two three four five six seven eight nine ten eleven twelve',
  'What is Deep Learning?',
];

/** An in-process server on a free loopback port (flags as the CLI's); stopped when the test ends. */
async function serve(t, model, ...flags) {
  const s = await startServer(parseArgs([model, '--port', '0', '--threads', '1', ...flags]));
  t.after(() => s.stop(1000));
  return s;
}

/** POST a JSON body (a string is sent as is); {status, headers, body (parsed when JSON), text}. */
async function post(url, body, headers = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, body: json, text };
}

/** The float32 bits of numbers (JSON numbers of float32 values are exact). */
const bits = (xs) => new Uint32Array(Float32Array.from(xs.flat()).buffer);
const rowsOf = (t) => Array.from({ length: t.shape[0] }, (_, i) => Array.from(t.data.subarray(i * t.shape[1], (i + 1) * t.shape[1])));

test("serve /embed: the library's embeddings, single and batch, every option", async (t) => {
  const s = await serve(t, EMB);
  const lib = s.model;
  const one = await post(`${s.url}/embed`, { inputs: TEXTS[0] });
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(bits(one.body), bits(rowsOf(lib.embed([TEXTS[0]], { normalize: true }))));
  const batch = await post(`${s.url}/embed`, { inputs: TEXTS });
  assert.equal(batch.body.length, TEXTS.length);
  assert.deepEqual(bits(batch.body), bits(rowsOf(lib.embed(TEXTS, { normalize: true }))));
  for (const h of ['x-compute-tokens', 'x-total-time', 'x-queue-time', 'x-inference-time', 'x-tokenization-time'])
    assert.match(batch.headers.get(h), /^\d+$/, h);
  assert.equal(
    Number(batch.headers.get('x-compute-tokens')),
    TEXTS.reduce((n, x) => n + lib.tokenizer.encode(x).ids.length, 0),
  );

  const raw = await post(`${s.url}/embed`, { inputs: TEXTS, normalize: false, dimensions: 8 });
  assert.deepEqual(bits(raw.body), bits(rowsOf(lib.embed(TEXTS, { normalize: false, dimensions: 8 }))));
  assert.equal(raw.body[0].length, 8);
  // token ids: decoded with the model's tokenizer and embedded as that text
  const ids = Array.from(lib.tokenizer.encode('hello world', { addSpecialTokens: false }).ids);
  const fromIds = await post(`${s.url}/embed`, { inputs: [ids, 'hello world'] });
  assert.deepEqual(bits([fromIds.body[0]]), bits([fromIds.body[1]]));
  const single = await post(`${s.url}/embed`, { inputs: ids });
  assert.equal(single.body.length, 1);
  // dimensions: 0 and past the width are TEI's 422s
  for (const [dimensions, msg] of [
    [0, /should be positive/],
    [33, /smaller than the maximum/],
  ]) {
    const r = await post(`${s.url}/embed`, { inputs: 'x', dimensions });
    assert.equal(r.status, 422);
    assert.match(r.body.error, msg);
    assert.equal(r.body.error_type, 'Validation');
  }
  // truncate: true (the default, --auto-truncate) cuts at the longest input; false is TEI's 422
  const long = 'word '.repeat(300);
  const cut = await post(`${s.url}/embed`, { inputs: long });
  assert.deepEqual(bits(cut.body), bits(rowsOf(lib.embed([long], { normalize: true }))));
  const refused = await post(`${s.url}/embed`, { inputs: long, truncate: false });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.error, `\`inputs\` must have less than ${lib.maxLength} tokens. Given: ${lib.tokenizer.encode(long.trim()).ids.length}`);
  assert.equal((await post(`${s.url}/embed`, { inputs: 'word '.repeat(20), truncate: false })).status, 200);
  // an unknown prompt name, a left truncation, a wrong type: 422 naming the field
  for (const [body, field] of [
    [{ inputs: 'x', prompt_name: 'query' }, /prompt_name/],
    [{ inputs: 'x', truncation_direction: 'left' }, /truncation_direction/],
    [{ inputs: 'x', normalize: 'yes' }, /normalize/],
    [{ inputs: 'x', normalize: null }, /normalize/],
    [{ inputs: 7 }, /inputs/],
    [{}, /inputs is missing/],
    [{ inputs: ['x', 3] }, /inputs\[1\]/],
    [{ inputs: [[1, -2]] }, /inputs\[0\]/],
    [{ inputs: [[1, 100000]] }, /not a token id/],
    [{ inputs: 'x', dimensions: 1.5 }, /dimensions/],
  ]) {
    const r = await post(`${s.url}/embed`, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    assert.match(r.body.error, field, JSON.stringify(body));
  }
  const none = await post(`${s.url}/embed`, { inputs: [] });
  assert.deepEqual([none.status, none.body], [400, { error: '`inputs` cannot be empty', error_type: 'Empty' }]);
});

const RETRIEVAL = (name) => fileURLToPath(new URL(`./retrieval/${name}`, import.meta.url));

test("serve /embed_sparse, /embed on SPLADE: TEI's shapes ([[{index, value}]], a list per input), the library's vectors bit for bit", async (t) => {
  const s = await serve(t, RETRIEVAL('splade-bert'));
  const lib = s.model;
  const texts = ['the quick brown fox', '  what is a transformer?  '];
  const one = await post(`${s.url}/embed_sparse`, { inputs: texts[0] });
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.length, 1, 'one list for a single string, as TEI');
  const [v] = lib.embed([texts[0]]);
  assert.deepEqual(
    one.body[0].map((x) => x.index),
    Array.from(v.indices),
  );
  assert.deepEqual(bits(one.body[0].map((x) => x.value)), bits(Array.from(v.values)));
  const batch = await post(`${s.url}/embed_sparse`, { inputs: texts });
  assert.equal(batch.body.length, 2);
  const dense = await post(`${s.url}/embed`, { inputs: texts, normalize: false });
  assert.equal(dense.status, 200, dense.text);
  assert.equal(dense.body[0].length, lib.encoder.config.vocabSize, 'the SPLADE vector in full');
  batch.body.forEach((list, i) => list.forEach(({ index, value }) => assert.equal(dense.body[i][index], value)));
  const norm = await post(`${s.url}/embed`, { inputs: texts[0] });
  assert.deepEqual([norm.status, norm.body], [422, { error: '`normalize` is not available for SPLADE models', error_type: 'Validation' }]);
  const all = await post(`${s.url}/embed_all`, { inputs: texts[0] });
  assert.equal(all.status, 424);
  const info = await fetch(`${s.url}/info`).then((r) => r.json());
  assert.deepEqual(info.model_type, { embedding: { pooling: 'splade' } });
});

test("serve /embed_all: TEI's last hidden states per token; a ColBERT model's token vectors (is_query); /embed_sparse and /embed refused where the model has none", async (t) => {
  const s = await serve(t, EMB);
  const all = await post(`${s.url}/embed_all`, { inputs: ['hello world', 'a longer text of several words'] });
  assert.equal(all.status, 200, all.text);
  const hidden = s.model.embed(['hello world', 'a longer text of several words'], { pooling: 'none' });
  const [, T, C] = hidden.shape;
  all.body.forEach((rows, i) => {
    assert.equal(rows.length, s.model.tokenizer.encode(i ? 'a longer text of several words' : 'hello world').ids.length);
    assert.deepEqual(bits(rows), bits([Array.from(hidden.data.subarray(i * T * C, (i * T + rows.length) * C))]));
  });
  const sparse = await post(`${s.url}/embed_sparse`, { inputs: 'x' });
  assert.deepEqual([sparse.status, sparse.body.error], [424, 'Model is not an embedding model with SPLADE pooling']);
  const c = await serve(t, RETRIEVAL('colbert-pylate-bert'));
  const q = await post(`${c.url}/embed_all`, { inputs: ['what is a transformer?'], is_query: true });
  const d = await post(`${c.url}/embed_all`, { inputs: ['what is a transformer?'] });
  assert.deepEqual(bits(q.body[0]), bits(rowsOf(c.model.embed(['what is a transformer?'], { isQuery: true })[0])));
  assert.deepEqual(bits(d.body[0]), bits(rowsOf(c.model.embed(['what is a transformer?'], { isQuery: false })[0])));
  const dense = await post(`${c.url}/embed`, { inputs: 'x' });
  assert.equal(dense.status, 424);
  assert.match(dense.body.error, /no dense embeddings.*colbert/);
  assert.deepEqual((await fetch(`${c.url}/info`).then((r) => r.json())).model_type, { embedding: { pooling: 'colbert' } });
});

test("serve /rerank on ColBERT (MaxSim) and bge-m3 (its combined score): the library's rank, TEI's shape", async (t) => {
  const docs = ['The quick brown fox jumps over the lazy dog.', 'A transformer encodes sentence embeddings, for search!', 'fox'];
  for (const name of ['colbert-pylate-bert', 'bge-m3']) {
    const s = await serve(t, RETRIEVAL(name));
    const r = await post(`${s.url}/rerank`, { query: 'what is a transformer?', texts: docs, return_text: true });
    assert.equal(r.status, 200, r.text);
    const lib = s.model.rank('what is a transformer?', docs);
    assert.deepEqual(
      r.body.map((x) => x.index),
      lib.map((x) => x.corpusId),
      `${name}: the order`,
    );
    r.body.forEach((x) => {
      assert.equal(x.text, docs[x.index]);
      assert.equal(Math.fround(x.score), Math.fround(lib.find((y) => y.corpusId === x.index).score), `${name}: the score`);
    });
    if (name === 'bge-m3') {
      const sp = await post(`${s.url}/embed_sparse`, { inputs: ['what is BGE M3?'] });
      const [v] = s.model.embed(['what is BGE M3?'], { output: 'sparse' });
      assert.deepEqual(
        sp.body[0].map((x) => x.index),
        Array.from(v.indices),
        'bge-m3: its lexical weights',
      );
    }
  }
});

test("serve /embed with prompts: prompt_name as the library's promptName; /tokenize applies it too", async (t) => {
  const s = await serve(t, PROMPTED);
  const r = await post(`${s.url}/embed`, { inputs: TEXTS, prompt_name: 'query' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(bits(r.body), bits(rowsOf(s.model.embed(TEXTS, { normalize: true, promptName: 'query' }))));
  const plain = await post(`${s.url}/embed`, { inputs: TEXTS });
  assert.notDeepEqual(bits(plain.body), bits(r.body));
  const tok = await post(`${s.url}/tokenize`, { inputs: 'hello', prompt_name: 'query' });
  const prompt = s.model.prompts.query;
  assert.deepEqual(
    tok.body[0].map((x) => x.id),
    Array.from(s.model.tokenizer.encode(`${prompt}hello`).ids),
  );
  const bad = await post(`${s.url}/embed`, { inputs: 'x', prompt_name: 'passage' });
  assert.equal(bad.status, 422);
  assert.match(bad.body.error, /'passage' is not one of this model's prompts \(query\)/);
});

/** The Rust tokenizers (npm `tokenizers`) on a text (cut to maxLength tokens, if given): ids, special-tokens mask, offsets in characters. */
async function rustEncode(folder, text, addSpecialTokens, maxLength) {
  const { Tokenizer } = require('tokenizers');
  const tok = Tokenizer.fromFile(`${folder}/tokenizer.json`);
  if (maxLength) tok.setTruncation(maxLength);
  const enc = await tok.encode(text, null, { addSpecialTokens });
  return { tok, ids: enc.getIds(), special: enc.getSpecialTokensMask(), offsets: enc.getOffsets() };
}

test('serve /tokenize and /decode: against the Rust tokenizers (UTF-8 byte offsets, null on special tokens)', async (t) => {
  for (const folder of [EMB, fileURLToPath(new URL('./pretrained/roberta-bpe', import.meta.url))]) {
    const s = await serve(t, folder);
    for (const addSpecialTokens of [true, false]) {
      const r = await post(`${s.url}/tokenize`, { inputs: TEXTS, add_special_tokens: addSpecialTokens });
      assert.equal(r.status, 200, r.text);
      for (const [i, text] of TEXTS.entries()) {
        const want = await rustEncode(folder, text, addSpecialTokens);
        const chars = [...text];
        const byteAt = (c) => Buffer.byteLength(chars.slice(0, c).join(''));
        const expected = want.ids.map((id, k) =>
          want.special[k]
            ? { id, special: true, start: null, stop: null }
            : { id, special: false, start: byteAt(want.offsets[k][0]), stop: byteAt(want.offsets[k][1]) },
        );
        assert.deepEqual(
          r.body[i].map(({ id, special, start, stop }) => ({ id, special, start, stop })),
          expected,
          `${folder}: ${text}`,
        );
        for (const tok of r.body[i]) {
          if (!tok.special) assert.equal(tok.text, Buffer.from(text).subarray(tok.start, tok.stop).toString(), "a token's text is the bytes it spans");
        }
      }
    }
    const one = await post(`${s.url}/tokenize`, { inputs: 'hello' });
    assert.equal(one.body.length, 1, 'a single input is a batch of one');
    // decode: the Rust decode, skip_special_tokens default true
    const { tok } = await rustEncode(folder, TEXTS[0], true);
    const ids = Array.from((await rustEncode(folder, TEXTS[0], true)).ids);
    for (const skip of [true, false]) {
      const r = await post(`${s.url}/decode`, skip ? { ids: [ids, ids.slice(1)] } : { ids, skip_special_tokens: false });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body[0], await tok.decode(ids, skip));
    }
    for (const body of [{ ids: 'x' }, { ids: [[1], 'x'] }, { ids: [1.5] }, { ids: [1], skip_special_tokens: 1 }])
      assert.equal((await post(`${s.url}/decode`, body)).status, 422, JSON.stringify(body));
    assert.equal((await post(`${s.url}/decode`, { ids: [[]] })).status, 200);
  }
});

test("serve /predict and /rerank: the library's classify and predict, TEI's activations and order", async (t) => {
  const c = await serve(t, CLS);
  const lib = c.model;
  const sorted = (rows) =>
    rows
      .map(({ label, score }) => ({ score, label }))
      .sort((a, b) => a.score - b.score)
      .reverse();
  const one = await post(`${c.url}/predict`, { inputs: TEXTS[0] });
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(one.body, sorted(lib.classify(TEXTS[0], { topK: null, functionToApply: 'softmax' })));
  assert.ok(one.body[0].score >= one.body[1].score && one.body[1].score >= one.body[2].score);
  const pair = await post(`${c.url}/predict`, { inputs: ['a premise', 'a hypothesis'], raw_scores: true });
  assert.deepEqual(pair.body, sorted(lib.classify({ text: 'a premise', textPair: 'a hypothesis' }, { topK: null, functionToApply: 'none' })));
  const batch = await post(`${c.url}/predict`, { inputs: [[TEXTS[0]], ['a', 'b'], [TEXTS[1]]] });
  assert.deepEqual(batch.body, lib.classify([TEXTS[0], { text: 'a', textPair: 'b' }, TEXTS[1]], { topK: null, functionToApply: 'softmax' }).map(sorted));
  assert.deepEqual(Object.keys(c.engine.modelType()), ['classifier']);
  for (const inputs of [[], ['a', 'b', 'c'], [['a', 'b', 'c']], [1], [['a'], 'b']])
    assert.equal((await post(`${c.url}/predict`, { inputs })).status, 422, JSON.stringify(inputs));
  const notReranker = await post(`${c.url}/rerank`, { query: 'q', texts: ['a'] });
  assert.deepEqual([notReranker.status, notReranker.body.error_type], [424, 'Backend']);
  const notEmbedding = await post(`${c.url}/embed`, { inputs: 'q' });
  assert.deepEqual([notEmbedding.status, notEmbedding.body.error], [424, 'Model is not an embedding model']);
  const openaiOnClassifier = await post(`${c.url}/v1/embeddings`, { input: 'q', model: 'x' });
  assert.equal(openaiOnClassifier.status, 424);
  assert.equal(openaiOnClassifier.body.error.code, 'model_type');

  const r = await serve(t, RERANKER);
  const query = 'What is Deep Learning?',
    docs = TEXTS;
  const ranked = await post(`${r.url}/rerank`, { query, texts: docs });
  assert.equal(ranked.status, 200, ranked.text);
  const want = r.model.rank(query, docs, { activation: 'sigmoid' });
  assert.deepEqual(
    ranked.body,
    want
      .map(({ corpusId, score }) => ({ index: corpusId, score }))
      .sort((a, b) => a.score - b.score)
      .reverse(),
  );
  const withText = await post(`${r.url}/rerank`, { query, texts: docs, raw_scores: true, return_text: true });
  const raw = r.model.predict(
    docs.map((d) => [query, d]),
    { activation: 'none' },
  );
  for (const x of withText.body) {
    assert.equal(x.score, raw[x.index]);
    assert.equal(x.text, docs[x.index]);
    assert.deepEqual(Object.keys(x), ['index', 'text', 'score']);
  }
  const empty = await post(`${r.url}/rerank`, { query, texts: [] });
  assert.deepEqual([empty.status, empty.body.error_type], [400, 'Empty']);
  // a reranker predicts too (TEI: Classifier | Reranker), one label: sigmoid
  const p = await post(`${r.url}/predict`, { inputs: [query, docs[0]] });
  assert.deepEqual(p.body, sorted(r.model.classify({ text: query, textPair: docs[0] }, { topK: null, functionToApply: 'sigmoid' })));
  assert.deepEqual(Object.keys((await (await fetch(`${r.url}/info`)).json()).model_type), ['reranker']);
  // POST / follows the model's kind, as TEI's
  assert.deepEqual((await post(`${r.url}/`, { query, texts: docs })).body, ranked.body);
});

test('serve /info: a label named __proto__ (or constructor) is a key of id2label and label2id like any other', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-serve-labels-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(CLS, dir, { recursive: true });
  const names = ['__proto__', 'constructor', 'positive'];
  const hf = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  // own keys (Object.fromEntries), as config.json writes them
  const id2label = Object.fromEntries(names.map((n, i) => [String(i), n])),
    label2id = Object.fromEntries(names.map((n, i) => [n, i]));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...hf, id2label, label2id }));
  const s = await serve(t, dir);
  const text = await (await fetch(`${s.url}/info`)).text();
  assert.match(text, /"label2id":\{"__proto__":0,"constructor":1,"positive":2\}/, text);
  const { classifier } = JSON.parse(text).model_type;
  assert.deepEqual(
    Object.entries(classifier.label2id),
    names.map((n, i) => [n, i]),
  );
  assert.deepEqual(
    Object.entries(classifier.id2label),
    names.map((n, i) => [String(i), n]),
  );
});

test("serve /health, /info, /metrics: TEI's fields; Prometheus text with TEI's names", async (t) => {
  const s = await serve(t, EMB, '--max-batch-requests', '8', '--served-model-name', 'minilm');
  const health = await fetch(`${s.url}/health`);
  assert.deepEqual([health.status, await health.text()], [200, '']);
  const info = await (await fetch(`${s.url}/info`)).json();
  assert.deepEqual(Object.keys(info), [
    'model_id',
    'model_sha',
    'model_dtype',
    'served_model_name',
    'model_type',
    'max_concurrent_requests',
    'max_input_length',
    'max_batch_tokens',
    'max_batch_requests',
    'max_client_batch_size',
    'auto_truncate',
    'tokenization_workers',
    'version',
    'sha',
    'docker_label',
  ]);
  assert.deepEqual(
    [
      info.model_type,
      info.model_dtype,
      info.served_model_name,
      info.max_batch_requests,
      info.max_batch_tokens,
      info.max_client_batch_size,
      info.max_input_length,
    ],
    [{ embedding: { pooling: 'mean' } }, 'float32', 'minilm', 8, 16384, 32, s.model.maxLength],
  );
  await post(`${s.url}/embed`, { inputs: TEXTS });
  await post(`${s.url}/embed`, { inputs: 'x' });
  await post(`${s.url}/embed`, { inputs: 'x', dimensions: 0 });
  const m = await fetch(`${s.url}/metrics`);
  assert.match(m.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await m.text();
  const value = (series) => Number(text.match(new RegExp(`^${series.replace(/[{}"=]/g, '\\$&')} (\\S+)$`, 'm'))?.[1]);
  assert.equal(value('te_request_count{method="batch"}'), 1);
  assert.equal(value('te_request_success{method="batch"}'), 1);
  assert.equal(value('te_request_count{method="single"}'), 2);
  assert.equal(value('te_request_failure{err="validation"}'), 1);
  assert.equal(value('te_embed_count'), TEXTS.length + 1);
  assert.equal(value('te_embed_success'), TEXTS.length + 1);
  assert.equal(value('te_request_input_length_count'), TEXTS.length + 1);
  for (const h of [
    'te_request_duration',
    'te_request_queue_duration',
    'te_request_inference_duration',
    'te_request_tokenization_duration',
    'te_batch_next_size',
    'te_batch_next_tokens',
    'te_request_input_length',
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${h} histogram$`, 'm'));
    const buckets = [...text.matchAll(new RegExp(`^${h}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm'))].map((x) => Number(x[2]));
    assert.ok(buckets.length > 5 && buckets.every((v, i) => i === 0 || v >= buckets[i - 1]), `${h}: cumulative buckets`);
    assert.equal(buckets.at(-1), value(`${h}_count`), `${h}: +Inf = count`);
  }
  assert.match(text, /^te_queue_size 0$/m);
});

test('serve /v1/embeddings with the openai SDK: its default base64 and float, token ids, dimensions, usage, its error classes', async (t) => {
  const { default: OpenAI } = await import('openai');
  const s = await serve(t, EMB, '--api-key', 'sk-test');
  const lib = s.model;
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${s.url}/v1`, maxRetries: 0 });
  const want = bits(rowsOf(lib.embed(TEXTS, { normalize: true })));
  const tokens = TEXTS.reduce((n, x) => n + lib.tokenizer.encode(x).ids.length, 0);
  // no encoding_format: the SDK asks for base64 and decodes it (little-endian float32) itself
  const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: TEXTS });
  assert.deepEqual(bits(b64.data.map((d) => d.embedding)), want);
  assert.deepEqual(
    b64.data.map((d) => [d.object, d.index]),
    TEXTS.map((_, i) => ['embedding', i]),
  );
  assert.deepEqual([b64.object, b64.model, b64.usage], ['list', EMB, { prompt_tokens: tokens, total_tokens: tokens }]);
  const float = await client.embeddings.create({ model: 'm', input: TEXTS, encoding_format: 'float' });
  assert.deepEqual(bits(float.data.map((d) => d.embedding)), want);
  const one = await client.embeddings.create({ model: 'm', input: TEXTS[1], dimensions: 8 });
  assert.deepEqual(bits(one.data.map((d) => d.embedding)), bits(rowsOf(lib.embed([TEXTS[1]], { normalize: true, dimensions: 8 }))));
  const ids = Array.from(lib.tokenizer.encode('hello world', { addSpecialTokens: false }).ids);
  const byIds = await client.embeddings.create({ model: 'm', input: [ids, ids] });
  assert.deepEqual(bits([byIds.data[0].embedding]), bits(rowsOf(lib.embed(['hello world'], { normalize: true }))));
  const single = await client.embeddings.create({ model: 'm', input: ids });
  assert.equal(single.data.length, 1);
  // the raw base64: the float32 bytes, little-endian
  const raw = await post(`${s.url}/v1/embeddings`, { input: TEXTS[0], encoding_format: 'base64' }, { authorization: 'Bearer sk-test' });
  const buf = Buffer.from(raw.body.data[0].embedding, 'base64');
  const floats = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(4 * i));
  assert.deepEqual(bits(floats), bits(rowsOf(lib.embed([TEXTS[0]], { normalize: true }))));
  // errors: the SDK's classes, from {"error": {message, type, param, code}}
  const refused = await client.embeddings.create({ model: 'm', input: Array(33).fill('x') }).catch((e) => e);
  assert.equal(refused.constructor.name, 'UnprocessableEntityError');
  assert.deepEqual([refused.status, refused.code, refused.type, refused.param], [422, 'batch_size', 'invalid_request_error', 'input']);
  assert.match(refused.message, /^422 batch size 33 > maximum allowed batch size 32$/);
  const bad = await client.embeddings.create({ model: 'm', input: 'x', encoding_format: 'hex' }).catch((e) => e);
  assert.deepEqual([bad.status, bad.param], [422, 'encoding_format']);
  const wrongKey = await new OpenAI({ apiKey: 'sk-wrong', baseURL: `${s.url}/v1`, maxRetries: 0 }).embeddings
    .create({ model: 'm', input: 'x' })
    .catch((e) => e);
  assert.deepEqual([wrongKey.constructor.name, wrongKey.status, wrongKey.type], ['AuthenticationError', 401, 'authentication_error']);
  // /embeddings (no /v1) is the same route, as TEI's
  const bare = await post(`${s.url}/embeddings`, { input: TEXTS, model: 'm' }, { authorization: 'Bearer sk-test' });
  assert.deepEqual(bits(bare.body.data.map((d) => d.embedding)), want);
});

/** A raw HTTP/1.1 exchange over one socket: what the server writes until it closes (or `wait` ms). */
function rawExchange(port, chunks, { wait = 5000, gap = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    const started = performance.now();
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ out, closed: false, ms: performance.now() - started });
    }, wait);
    socket.on('data', (d) => {
      out += d;
    });
    // a reset after the answer (the server closed while this side still sent) is a close; the answer must have arrived
    socket.on('error', (e) => (e.code === 'ECONNRESET' && out ? undefined : reject(e)));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ out, closed: true, ms: performance.now() - started });
    });
    socket.on('connect', async () => {
      for (const c of chunks) {
        socket.write(c);
        if (gap) await new Promise((r) => setTimeout(r, gap));
      }
    });
  });
}

const requestHead = (path, length, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${length === undefined ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`}${extra}\r\n`;

test("serve: a TEI-shaped request set (the shapes of TEI's docs, raw HTTP)", async (t) => {
  const e = await serve(t, EMB),
    c = await serve(t, CLS),
    r = await serve(t, RERANKER);
  const vector = (v) => Array.isArray(v) && v.length === e.engine.dimensions && v.every((x) => typeof x === 'number');
  const cases = [
    [e, '/embed', '{"inputs":"What is Deep Learning?"}', (b) => b.length === 1 && vector(b[0])],
    [e, '/embed', '{"inputs":["Today is a nice day", "I like you"]}', (b) => b.length === 2 && b.every(vector)],
    [
      e,
      '/embed',
      '{"inputs":"What is Deep Learning?","normalize":false,"truncate":true,"truncation_direction":"Right","prompt_name":null,"dimensions":null}',
      (b) => vector(b[0]),
    ],
    [e, '/embed', '{"inputs":[2,134,3]}', (b) => b.length === 1],
    [e, '/tokenize', '{"inputs":"test","add_special_tokens":true}', (b) => b[0].every((x) => Object.keys(x).join() === 'id,text,special,start,stop')],
    [e, '/decode', '{"ids":[[2,134,3],[134]],"skip_special_tokens":true}', (b) => b.length === 2 && b.every((x) => typeof x === 'string')],
    [e, '/v1/embeddings', '{"input":"What is Deep Learning?","model":"tei","user":"u"}', (b) => b.object === 'list' && vector(b.data[0].embedding)],
    [e, '/embeddings', '{"input":["a","b"],"model":null,"encoding_format":"base64"}', (b) => b.data.length === 2 && typeof b.data[1].embedding === 'string'],
    [c, '/predict', '{"inputs":"I like you. I love you"}', (b) => b.length === 3 && b.every((x) => Object.keys(x).join() === 'score,label')],
    [
      c,
      '/predict',
      '{"inputs":[["I like you."],["I hate pineapples","sentence pair"]],"raw_scores":true}',
      (b) => b.length === 2 && b.every((x) => x.length === 3),
    ],
    [c, '/predict', '{"inputs":["I like you.","I love you."],"truncate":false}', (b) => b.length === 3],
    [
      r,
      '/rerank',
      '{"query":"What is Deep Learning?","texts":["Deep Learning is not...","Deep learning is..."]}',
      (b) => b.length === 2 && b.every((x) => Object.keys(x).join() === 'index,score'),
    ],
    [
      r,
      '/rerank',
      '{"query":"What is Deep Learning?","texts":["a","b","c"],"raw_scores":true,"return_text":true,"truncate":true}',
      (b) => b.length === 3 && b.every((x) => typeof x.text === 'string'),
    ],
  ];
  for (const [s, path, body, ok] of cases) {
    const { port } = s.server.address();
    const { out } = await rawExchange(port, [requestHead(path, Buffer.byteLength(body), 'Connection: close\r\n') + body]);
    const [head, payload] = out.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 OK/, `${path} ${body}\n${out}`);
    assert.match(head, /content-type: application\/json/i);
    assert.ok(ok(JSON.parse(payload)), `${path} ${body}: ${payload.slice(0, 300)}`);
  }
});

/**
 * Records each batch ({key, n, padded}) the server runs; its first batch waits until ready() (a
 * client in this process sends its requests one turn of the event loop at a time).
 */
function watchBatches(s, batches, ready = () => true) {
  const run = s.svc.batcher.runBatch,
    lib = s.model;
  s.svc.batcher.runBatch = async (key, items) => {
    const lengths = items.map((x) => Math.min(lib.tokenizer.encode(x.text.trim()).ids.length, lib.maxLength));
    batches.push({ key, n: items.length, padded: Math.max(...lengths) * items.length });
    for (let i = 0; batches.length === 1 && !ready() && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
    return run(key, items);
  };
}

test('serve: dynamic batching merges concurrent requests, within --max-batch-tokens and --max-batch-requests, bit-identical to one input at a time', async (t) => {
  const maxTokens = 600,
    maxRequests = 12;
  const s = await serve(t, EMB, '--max-batch-tokens', String(maxTokens), '--max-batch-requests', String(maxRequests));
  const lib = s.model,
    batches = [];
  const texts = Array.from({ length: 96 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${'more words '.repeat(i % 11)}`.trim());
  const options = [{}, { normalize: false }, { dimensions: 16 }, { normalize: false, dimensions: 4 }];
  // the first batch waits until every request is queued (clients in this process send one by one)
  watchBatches(s, batches, () => s.svc.batcher.size === texts.length - 1);
  const answers = await Promise.all(texts.map((inputs, i) => post(`${s.url}/embed`, { inputs, ...options[i % 4] })));
  for (const [i, a] of answers.entries()) {
    assert.equal(a.status, 200, a.text);
    const o = options[i % 4];
    const alone = await lib.embedAsync([texts[i]], { normalize: o.normalize ?? true, dimensions: o.dimensions });
    assert.deepEqual(bits(a.body), bits(rowsOf(alone)), `request ${i}: batched = alone`);
  }
  assert.equal(
    batches.reduce((n, b) => n + b.n, 0),
    texts.length,
    'every input in one batch',
  );
  assert.ok(
    batches.some((b) => b.n > 1),
    `requests merged: batch sizes ${batches.map((b) => b.n)}`,
  );
  assert.ok(
    batches.every((b) => b.n <= maxRequests && (b.n === 1 || b.padded <= maxTokens)),
    `limits kept: ${JSON.stringify(batches)}`,
  );
  assert.ok(batches.every((b) => JSON.parse(b.key)[0] === 'embed'));
  t.diagnostic(`96 requests, 4 option sets: ${batches.length} batches, sizes ${batches.map((b) => b.n).join(' ')}`);

  // one request's 32 inputs: batched together; with --max-batch-requests 1 one pass each, the same bits
  const u = await serve(t, EMB, '--max-batch-requests', '1');
  const [a, b] = await Promise.all([post(`${s.url}/embed`, { inputs: texts.slice(0, 32) }), post(`${u.url}/embed`, { inputs: texts.slice(0, 32) })]);
  assert.deepEqual(bits(a.body), bits(b.body));
  assert.deepEqual(bits(a.body), bits(rowsOf(lib.embed(texts.slice(0, 32), { normalize: true, batchSize: 1 }))));
  // rerank and predict batch too
  const r = await serve(t, RERANKER),
    reranks = [];
  watchBatches(r, reranks, () => r.svc.batcher.size === 2 * 24 - 2);
  const pairs = await Promise.all(texts.slice(0, 24).map((doc) => post(`${r.url}/rerank`, { query: 'q', texts: [doc, 'x'], raw_scores: true })));
  for (const [i, p] of pairs.entries()) {
    const want = r.model.predict(
      [
        ['q', texts[i]],
        ['q', 'x'],
      ],
      { activation: 'none' },
    );
    assert.deepEqual(p.body.map((x) => x.score).sort(), Array.from(want).sort());
  }
  assert.ok(
    reranks.some((b) => b.n > 2),
    `rerank requests merged: ${reranks.map((b) => b.n)}`,
  );
});

test('serve limits: client batch size 422, payload 413 (declared or streamed), malformed JSON 400, not JSON 415, the API key 401, 404, 405', async (t) => {
  const s = await serve(t, EMB, '--payload-limit', '2000', '--max-client-batch-size', '4', '--api-key', 'k3y');
  const auth = { authorization: 'Bearer k3y' };
  const { port } = s.server.address();
  const tooMany = await post(`${s.url}/embed`, { inputs: ['a', 'b', 'c', 'd', 'e'] }, auth);
  assert.deepEqual([tooMany.status, tooMany.body], [422, { error: 'batch size 5 > maximum allowed batch size 4', error_type: 'Validation' }]);
  for (const [path, body] of [
    ['/tokenize', { inputs: ['a', 'b', 'c', 'd', 'e'] }],
    ['/decode', { ids: [[1], [1], [1], [1], [1]] }],
  ]) {
    assert.equal((await post(`${s.url}${path}`, body, auth)).status, 422, path);
  }
  // 413: a declared length past the limit is refused before the body is read; a chunked body when it passes
  const big = JSON.stringify({ inputs: 'x'.repeat(3000) });
  const declared = await post(`${s.url}/embed`, big, auth);
  assert.equal(declared.status, 413);
  assert.deepEqual(Object.keys(declared.body), ['error', 'error_type']);
  const chunked = await rawExchange(port, [
    requestHead('/embed', undefined, 'Authorization: Bearer k3y\r\n'),
    ...Array.from({ length: 6 }, () => `200\r\n${'x'.repeat(512)}\r\n`),
    '0\r\n\r\n',
  ]);
  assert.match(chunked.out, /^HTTP\/1\.1 413 /);
  assert.match(chunked.out, /connection: close/i);
  assert.ok(chunked.closed, 'the connection of a refused body is closed once the body has arrived');
  // malformed bodies: 400 (JSON syntax, UTF-8), 422 (valid JSON, wrong shape), 415 (not JSON)
  for (const [body, status] of [
    ['{"inputs":', 400],
    ['{"inputs": "a",}', 400],
    ['', 400],
    [Buffer.from([0x7b, 0xff, 0x7d]), 400],
    ['[1,2]', 422],
    ['"x"', 422],
    ['null', 422],
  ]) {
    const r = await fetch(`${s.url}/embed`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body });
    assert.equal(r.status, status, String(body));
    assert.equal((await r.json()).error_type, 'Validation');
  }
  const proto = await post(`${s.url}/embed`, '{"__proto__": {"inputs": "x"}, "constructor": 1}', auth);
  assert.deepEqual([proto.status, proto.body.error], [422, 'Failed to deserialize the JSON body into the target type: inputs is missing']);
  const deep = await post(`${s.url}/embed`, `{"inputs":${'['.repeat(900)}${']'.repeat(900)}}`, auth);
  assert.equal(deep.status, 422);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', '']) {
    const r = await fetch(`${s.url}/embed`, { method: 'POST', headers: { ...(type ? { 'content-type': type } : {}), ...auth }, body: '{"inputs":"x"}' });
    assert.equal(r.status, 415, type);
  }
  // the API key: routes need it, /health and /metrics do not (as TEI's)
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'k3y' }, { authorization: 'bearer k3y' }]) {
    const r = await post(`${s.url}/embed`, { inputs: 'x' }, headers);
    assert.deepEqual([r.status, r.headers.get('www-authenticate')], [401, 'Bearer'], JSON.stringify(headers));
  }
  assert.equal((await fetch(`${s.url}/info`)).status, 401);
  assert.equal((await fetch(`${s.url}/health`)).status, 200);
  assert.equal((await fetch(`${s.url}/metrics`)).status, 200);
  assert.equal((await post(`${s.url}/embed`, { inputs: 'x' }, auth)).status, 200);
  const missing = await fetch(`${s.url}/nope`);
  assert.deepEqual([missing.status, (await missing.json()).error_type], [404, 'NotFound']);
  const wrongMethod = await fetch(`${s.url}/embed`, auth);
  assert.deepEqual([wrongMethod.status, wrongMethod.headers.get('allow')], [405, 'POST']);
  assert.equal((await post(`${s.url}/embed`, { inputs: TEXTS.slice(0, 4) }, auth)).status, 200, 'the server keeps serving');
});

/** Holds the server's batches until release() (the first waits; later ones too while held). */
function holdBatches(s) {
  const run = s.svc.batcher.runBatch;
  let open;
  const gate = new Promise((r) => {
    open = r;
  });
  s.svc.batcher.runBatch = async (key, items) => {
    await gate;
    return run(key, items);
  };
  return () => open();
}

/** Polls until cond() or ~5 s pass. */
async function until(cond, what) {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A request on its own connection that can be cut: {done (a promise of {status, body}), abort()}. */
function cuttable(url, body) {
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
  const done = new Promise((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  req.end(JSON.stringify(body));
  return {
    done,
    abort: () => {
      done.catch(() => {});
      req.destroy();
    },
  };
}

test('serve faults: a client gone mid-request is dropped, the batch serves the others, nothing leaks; 429 past --max-concurrent-requests', async (t) => {
  const s = await serve(t, EMB, '--max-concurrent-requests', '6');
  const { svc } = s;
  const release = holdBatches(s);
  const first = cuttable(`${s.url}/embed`, { inputs: 'held in the running batch' });
  await until(() => svc.permits.inUse === 1, 'the first request to be running');
  const gone = [cuttable(`${s.url}/embed`, { inputs: 'gone before its batch' }), cuttable(`${s.url}/embed`, { inputs: ['gone', 'too'] })];
  const stays = cuttable(`${s.url}/embed`, { inputs: TEXTS[0] });
  await until(() => svc.batcher.size === 4 && svc.permits.inUse === 5, 'the queued requests');
  // past the permits: 429 at once, TEI's body
  const over = await post(`${s.url}/embed`, { inputs: ['a', 'b'] });
  assert.deepEqual([over.status, over.body], [429, { error: 'Model is overloaded', error_type: 'Overloaded' }]);
  const overOpenAI = await post(`${s.url}/v1/embeddings`, { input: ['a', 'b'], model: 'm' });
  assert.deepEqual([overOpenAI.status, overOpenAI.body.error.type, overOpenAI.body.error.code], [429, 'rate_limit_error', 'overloaded']);
  for (const g of gone) g.abort();
  first.abort(); // its batch runs on; the answer has no one to go to
  await until(() => svc.inFlight === 1, 'the server to see the clients leave (`stays` alone in flight)');
  release();
  const answer = await stays.done;
  assert.equal(answer.status, 200);
  assert.deepEqual(bits(answer.body), bits(rowsOf(s.model.embed([TEXTS[0]], { normalize: true }))));
  await until(() => svc.inFlight === 0 && svc.permits.inUse === 0 && svc.batcher.size === 0, 'every permit and entry released');
  assert.equal(svc.metrics.counter('te_request_failure', { err: 'dropped' }), 3, 'the 3 inputs of the clients gone were dropped');
  assert.equal(svc.metrics.counter('te_request_failure', { err: 'overloaded' }), 2);
  const again = await Promise.all(Array.from({ length: 6 }, (_, i) => post(`${s.url}/embed`, { inputs: TEXTS[i] })));
  assert.deepEqual(
    again.map((r) => r.status),
    [200, 200, 200, 200, 200, 200],
    'the server keeps serving at full capacity',
  );
  // a client gone in the middle of its body
  const half = await rawExchange(s.server.address().port, [requestHead('/embed', 100), '{"inputs":"'], { wait: 200 });
  assert.equal(half.out, '');
  await until(() => svc.inFlight === 0, 'the half request to be dropped');
});

test('serve faults: slow clients time out (408 for a body that never ends, headers that never end), the server keeps serving', async (t) => {
  const s = await serve(t, EMB, '--body-timeout', '400');
  const { port } = s.server.address();
  const stalled = await rawExchange(port, [requestHead('/embed', 1000), '{"inputs":"never ends'], { wait: 5000 });
  assert.match(stalled.out, /^HTTP\/1\.1 408 /);
  assert.match(stalled.out, /"error_type":"Timeout"/);
  assert.ok(stalled.closed && stalled.ms < 3000, `closed after ${Math.round(stalled.ms)} ms`);
  // a trickle: one byte every 100 ms, the whole body would take 100 s
  const trickle = await rawExchange(port, [requestHead('/embed', 1000), ...'{"inputs":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'], { wait: 5000, gap: 100 });
  assert.match(trickle.out, /^HTTP\/1\.1 408 /);
  assert.ok(trickle.closed && trickle.ms < 3000);
  const headers = await rawExchange(port, ['POST /embed HTTP/1.1\r\nHost: x\r\n'], { wait: 5000 });
  assert.ok(headers.closed && headers.ms < 3000, `headers that never end: closed after ${Math.round(headers.ms)} ms`);
  assert.equal(s.svc.inFlight, 0);
  assert.equal((await post(`${s.url}/embed`, { inputs: 'x' })).status, 200);
});

/** `node bin/serve.js <args>` in a child process, on a free port: {url, child, exited (a promise of the exit code), log()}. */
async function spawnServer(t, ...args) {
  const child = spawn(process.execPath, [...NODE_FLAGS, 'bin/serve.js', ...args, '--port', '0'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until(() => /listening on http:\/\/\S+/.test(log) || child.exitCode !== null, 'the server to listen');
  const url = log.match(/listening on (http:\/\/\S+)/)?.[1];
  assert.ok(url, log);
  return { url, child, exited, log: () => log };
}

test('serve: SIGTERM drains: every request in flight answered, new connections refused, exit 0', { timeout: 60_000 }, async (t) => {
  const s = await spawnServer(t, EMB, '--threads', '1', '--max-batch-requests', '1');
  const body = { inputs: Array.from({ length: 32 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`) };
  const answers = [];
  let answered = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const sent = Array.from(
    { length: 15 },
    () =>
      new Promise((resolve, reject) => {
        const req = http.request(`${s.url}/embed`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => {
            answered++;
            answers.push({ status: res.statusCode, body: text, connection: res.headers.connection });
            resolve();
          });
        });
        req.on('error', reject);
        req.end(JSON.stringify(body), resolve);
      }),
  );
  await Promise.all(sent); // every body written
  await new Promise((r) => setTimeout(r, 50));
  const before = answered;
  s.child.kill('SIGTERM');
  await until(() => answered === 15 || s.child.exitCode !== null, 'the answers');
  const code = await s.exited;
  agent.destroy();
  assert.equal(answers.length, 15, `${answered} answered before the exit (${before} before SIGTERM); exit ${code}\n${s.log()}`);
  assert.ok(before < 15, `requests were in flight at SIGTERM (${before} of 15 answered before it)`);
  assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]), answers.map((a) => `${a.status} ${a.body.slice(0, 100)}`).join('\n'));
  const want = JSON.stringify(answers[0].body);
  assert.ok(
    answers.every((a) => JSON.stringify(a.body) === want),
    'the same answer for the same request',
  );
  assert.equal(code, 0, s.log());
  assert.match(s.log(), /SIGTERM: draining[\s\S]*every request answered; stopped/);
  await assert.rejects(fetch(`${s.url}/health`), 'no one listens after the drain');
  t.diagnostic(`${15 - before} of 15 requests (32 inputs each, 480 of the 512 permits) in flight at SIGTERM: all answered 200, then exit ${code}`);
});

test('serve: replicas are interchangeable: --threads 1 and --threads 2 give byte-identical answers', { timeout: 60_000 }, async (t) => {
  const [one, two] = await Promise.all([spawnServer(t, EMB, '--threads', '1'), spawnServer(t, EMB, '--threads', '2')]);
  const requests = [
    ['/embed', { inputs: TEXTS }],
    ['/embed', { inputs: TEXTS, normalize: false, dimensions: 12 }],
    ['/v1/embeddings', { input: TEXTS, model: 'm', encoding_format: 'base64' }],
    ['/v1/embeddings', { input: TEXTS[4], model: 'm' }],
    ['/tokenize', { inputs: TEXTS }],
  ];
  for (const [path, body] of requests) {
    const [a, b] = await Promise.all([post(`${one.url}${path}`, body), post(`${two.url}${path}`, body)]);
    assert.equal(a.status, 200, a.text);
    assert.equal(a.text, b.text, `${path}: the same bytes from both replicas`);
  }
  const info = await (await fetch(`${two.url}/info`)).json();
  assert.equal(info.model_id, EMB);
});

test('serve CLI: --help, bad flags 2, a model that does not load 1', async () => {
  const run = (...args) => spawnSync(process.execPath, ['bin/serve.js', ...args], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
  const help = run('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: swapformer serve <model>/);
  for (const flag of [
    '--max-batch-tokens',
    '--port',
    '--api-key',
    '--auto-truncate',
    '--payload-limit',
    '--max-client-batch-size',
    '--max-concurrent-requests',
  ])
    assert.ok(help.stdout.includes(flag), flag);
  for (const args of [
    [],
    [EMB, '--port', 'x'],
    [EMB, '--port', '70000'],
    [EMB, '--bogus'],
    [EMB, '--dtype', 'int4'],
    [EMB, EMB],
    [EMB, '--max-batch-tokens'],
  ]) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    // as the other commands: one line, the usage line, where the options are listed (not the whole help)
    assert.match(r.stderr, /^swapformer: .+\nusage: swapformer serve <model> \[options\]\n\(swapformer help serve lists the options\)\n$/);
  }
  const missing = run('/nonexistent/model', '--port', '0');
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^swapformer serve: loading \/nonexistent\/model\nswapformer serve: \/nonexistent\/model: NOT_FOUND: /);
  // a model longer than a batch without --auto-truncate does not start (TEI's rule)
  const tooLong = run(EMB, '--port', '0', '--max-batch-tokens', '50', '--auto-truncate', 'false');
  assert.equal(tooLong.status, 1);
  assert.match(tooLong.stderr, /exceeds --max-batch-tokens 50/);
  // the flags as parsed (main is what the CLI dispatcher calls)
  const o = parseArgs(['serve', EMB, '--auto-truncate', '--max-batch-requests=4', '--host', '::1'], {});
  assert.deepEqual(
    [o.model, o.autoTruncate, o.maxBatchRequests, o.host, o.port, o.maxBatchTokens, o.maxClientBatchSize, o.payloadLimit],
    [EMB, true, 4, '::1', 8080, 16384, 32, 2_000_000],
  );
  assert.equal(parseArgs([EMB], { SWAPFORMER_API_KEY: 'from-env' }).apiKey, 'from-env');
  const log = console.log;
  console.log = () => {};
  try {
    assert.equal(await main(['serve', '--help']), 0);
  } finally {
    console.log = log;
  }
});

test('serve under load (autocannon, 64 connections): no errors, batched and unbatched, the figures', { timeout: 120_000 }, async (t) => {
  const { default: autocannon } = await import('autocannon');
  const rows = [];
  for (const [name, flags] of [
    ['batched', []],
    ['unbatched (--max-batch-requests 1)', ['--max-batch-requests', '1']],
  ]) {
    const s = await spawnServer(t, EMB, ...flags);
    const result = await autocannon({
      url: `${s.url}/embed`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      connections: 64,
      amount: 600,
      requests: TEXTS.map((text) => ({ method: 'POST', body: JSON.stringify({ inputs: text }) })),
    });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    const batches = Number(metrics.match(/^te_batch_next_size_count (\S+)$/m)[1]);
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0);
    assert.deepEqual([result.errors, result.timeouts, result.non2xx, result['2xx']], [0, 0, 0, 600], name);
    rows.push(
      `${name}: ${(600 / result.duration).toFixed(0)} requests/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${batches} batches (${(600 / batches).toFixed(1)} inputs each)`,
    );
  }
  for (const r of rows) t.diagnostic(r);
});

test('serve API key: empty or blank (the flag, or SWAPFORMER_API_KEY set but empty) is a usage error, exit 2; the server never starts open', async () => {
  for (const [argv, env, named] of [
    [[EMB, '--api-key', ''], {}, /^--api-key is empty/],
    [[EMB, '--api-key', ' \t '], {}, /^--api-key is empty/],
    [[EMB, '--api-key='], {}, /^--api-key is empty/],
    [[EMB], { SWAPFORMER_API_KEY: '' }, /^SWAPFORMER_API_KEY is empty/],
    [[EMB], { SWAPFORMER_API_KEY: '   ' }, /^SWAPFORMER_API_KEY is empty/],
    [[EMB, '--api-key', 'k3y '], {}, /^--api-key must be printable ASCII without a space at either end/],
    [[EMB], { SWAPFORMER_API_KEY: 'clé' }, /^SWAPFORMER_API_KEY must be printable ASCII/],
  ])
    assert.throws(() => parseArgs(argv, env), { name: 'UsageError', message: named }, `${argv.join(' ')} ${JSON.stringify(env)}`);
  // the flag, when given, is the key (a blank variable beside it is not read)
  assert.equal(parseArgs([EMB, '--api-key', 'k3y'], { SWAPFORMER_API_KEY: '' }).apiKey, 'k3y');
  assert.equal(parseArgs([EMB], { SWAPFORMER_API_KEY: 'a key' }).apiKey, 'a key');
  assert.equal(parseArgs([EMB], {}).apiKey, undefined);
  // the command: exit 2 at once, naming the flag or the variable (not a server left running open)
  const run = (args, env) =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [...NODE_FLAGS, 'bin/serve.js', EMB, '--port', '0', ...args],
        { cwd: REPO, env: { ...process.env, ...env }, timeout: 20_000 },
        (error, stdout, stderr) => resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }),
      );
    });
  const flag = await run(['--api-key', ''], {});
  assert.deepEqual([flag.code, flag.stdout], [2, ''], flag.stderr);
  assert.match(flag.stderr, /^swapformer: --api-key is empty: give a key \(or leave --api-key out to serve without one\)\nusage: swapformer serve/);
  const variable = await run([], { SWAPFORMER_API_KEY: '' });
  assert.deepEqual([variable.code, variable.stdout], [2, ''], variable.stderr);
  assert.match(variable.stderr, /^swapformer: SWAPFORMER_API_KEY is empty/);
  // and the server itself refuses an empty key from a program that skips parseArgs
  await assert.rejects(startServer({ ...parseArgs([EMB, '--port', '0', '--threads', '1'], {}), apiKey: '' }), /apiKey must be a non-empty string/);
});

/** `cmd args` without blocking this process (the server under test runs in it): {code, stdout, stderr}. */
const runAsync = (cmd, args, options = {}) =>
  new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', maxBuffer: 2 ** 24, timeout: 30_000, ...options }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }),
    );
  });

const hasCurl = spawnSync('curl', ['--version']).status === 0;

test(
  'serve 413: a body past --payload-limit is answered, not reset: fetch, curl and a raw socket, with and without Content-Length; TEI and OpenAI shapes',
  { timeout: 120_000 },
  async (t) => {
    const s = await spawnServer(t, EMB, '--threads', '1'); // the default limit: 2,000,000 bytes; in its own process, as a client meets it
    const port = Number(new URL(s.url).port);
    const body = Buffer.from(JSON.stringify({ inputs: 'x'.repeat(5_000_000) }));
    const tei = { error: 'the request body is larger than the payload limit (2000000 bytes)', error_type: 'PayloadTooLarge' };
    const send = async (route, streamed) => {
      const r = await fetch(`${s.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ...(streamed ? { body: new Blob([body]).stream(), duplex: 'half' } : { body }),
      });
      return { status: r.status, connection: r.headers.get('connection'), body: await r.json() };
    };
    // Node's fetch (undici): with Content-Length (a Buffer) and chunked (a stream), a few times each
    for (const streamed of [false, true])
      for (let i = 0; i < 3; i++) {
        const r = await send('/embed', streamed).catch((e) =>
          assert.fail(`fetch ${streamed ? 'chunked' : 'with Content-Length'}: ${e.message} (${e.cause?.code})`),
        );
        assert.deepEqual(r, { status: 413, connection: 'close', body: tei }, `fetch ${streamed ? 'chunked' : 'with Content-Length'}, try ${i + 1}`);
      }
    const openai = await send('/v1/embeddings', false);
    assert.deepEqual(openai, {
      status: 413,
      connection: 'close',
      body: { error: { message: tei.error, type: 'invalid_request_error', param: null, code: 'payload_too_large' } },
    });
    // curl, with Content-Length and chunked
    if (hasCurl) {
      const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-serve-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'big.json');
      writeFileSync(file, body);
      for (const extra of [[], ['-H', 'Transfer-Encoding: chunked']]) {
        const r = await runAsync('curl', [
          '-sS',
          '-w',
          '\n%{http_code}',
          '-H',
          'Content-Type: application/json',
          ...extra,
          '--data-binary',
          `@${file}`,
          `${s.url}/embed`,
        ]);
        assert.equal(r.code, 0, `curl ${extra.join(' ')}: ${r.stderr}`);
        const [answer, status] = r.stdout.split('\n');
        assert.deepEqual([status, JSON.parse(answer)], ['413', tei], `curl ${extra.join(' ')}`);
      }
    } else t.diagnostic('curl is not installed: its part skipped');
    // a raw socket that writes its whole body: no EPIPE / ECONNRESET, the answer read, the connection closed after the body
    const chunked = [];
    for (let i = 0; i < body.length; i += 65536) {
      const piece = body.subarray(i, i + 65536);
      chunked.push(`${piece.length.toString(16)}\r\n`, piece, '\r\n');
    }
    for (const [what, chunks] of [
      ['Content-Length', [requestHead('/embed', body.length), body]],
      ['chunked', [requestHead('/embed', undefined), ...chunked, '0\r\n\r\n']],
    ]) {
      const r = await rawExchange(port, chunks, { wait: 10_000 }).catch((e) => assert.fail(`raw socket, ${what}: ${e.code ?? e.message}`));
      assert.match(r.out, /^HTTP\/1\.1 413 Payload Too Large\r\n/, what);
      assert.match(r.out, /\r\nconnection: close\r\n/i, what);
      assert.deepEqual(JSON.parse(r.out.split('\r\n\r\n')[1]), tei, what);
      assert.ok(r.closed, `raw socket, ${what}: the server closes the connection once the body has arrived`);
    }
    assert.equal((await post(`${s.url}/embed`, { inputs: 'x' })).status, 200, 'the server keeps serving');

    // a refused body that never ends: its connection is cut after --body-timeout, not held
    const slow = await serve(t, EMB, '--payload-limit', '2000', '--body-timeout', '500');
    const stalled = await rawExchange(slow.server.address().port, [requestHead('/embed', undefined), `1000\r\n${'x'.repeat(4096)}\r\n`], { wait: 5000 });
    assert.match(stalled.out, /^HTTP\/1\.1 413 /);
    assert.ok(stalled.closed && stalled.ms < 3000, `a refused body that never ends: cut after ${Math.round(stalled.ms)} ms`);
  },
);

test('serve HEAD: every GET route answers HEAD with the same status and headers, no body; a 405 names the methods in Allow', async (t) => {
  const s = await serve(t, EMB, '--api-key', 'k3y');
  const auth = { authorization: 'Bearer k3y' };
  const { port } = s.server.address();
  for (const route of ['/health', '/', '/ping', '/info', '/metrics']) {
    const get = await fetch(`${s.url}${route}`, { headers: auth });
    const getText = await get.text();
    const head = await fetch(`${s.url}${route}`, { method: 'HEAD', headers: auth });
    assert.equal(head.status, 200, `HEAD ${route}`);
    assert.equal(head.status, get.status, route);
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), route);
    if (route !== '/metrics') assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(getText)), route);
    assert.equal(await head.text(), '', route);
  }
  // on the wire: the headers of GET /info, then nothing
  const raw = await rawExchange(port, ['HEAD /info HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k3y\r\nConnection: close\r\n\r\n']);
  const [head, rest] = raw.out.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(head, /\r\ncontent-type: application\/json\r\n/i);
  assert.ok(Number(head.match(/\r\ncontent-length: (\d+)/i)[1]) > 100, head);
  assert.equal(rest, '', 'no body');
  // HEAD needs the key where GET does
  assert.equal((await fetch(`${s.url}/info`, { method: 'HEAD' })).status, 401);
  assert.equal((await fetch(`${s.url}/health`, { method: 'HEAD' })).status, 200);
  // 405 with Allow, on every route of the other method; 404 elsewhere
  for (const [method, route, allow] of [
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/info', 'GET, HEAD'],
    ['PUT', '/metrics', 'GET, HEAD'],
    ['GET', '/embed', 'POST'],
    ['HEAD', '/embed', 'POST'],
    ['GET', '/v1/embeddings', 'POST'],
    ['PATCH', '/', 'GET, HEAD, POST'],
  ]) {
    const r = await fetch(`${s.url}${route}`, { method, headers: auth });
    assert.deepEqual([r.status, r.headers.get('allow')], [405, allow], `${method} ${route}`);
  }
  assert.equal((await fetch(`${s.url}/nope`, { method: 'HEAD' })).status, 404);
});

/** A text of exactly n tokens by the Rust tokenizers (npm `tokenizers`): 'a a a ...' grown until it counts n. */
async function textOfTokens(folder, n, { pair } = {}) {
  const { Tokenizer } = require('tokenizers');
  const tok = Tokenizer.fromFile(`${folder}/tokenizer.json`);
  for (let k = 1; k < 4 * n; k++) {
    const text = Array(k).fill('a').join(' ');
    const got = (await tok.encode(text, pair ?? null)).getIds().length;
    if (got === n) return text;
    if (got > n) break;
  }
  throw new Error(`no text of ${n} tokens`);
}

test('serve: an input of exactly the longest length is taken with truncate: false, one token more is 422 (/embed, /predict, /tokenize)', async (t) => {
  const e = await serve(t, EMB);
  const max = e.engine.maxInputLength;
  assert.equal(max, 96);
  const exact = await textOfTokens(EMB, max),
    over = await textOfTokens(EMB, max + 1);
  const ok = await post(`${e.url}/embed`, { inputs: exact, truncate: false });
  assert.equal(ok.status, 200, `${max} tokens: ${ok.text}`);
  assert.deepEqual(bits(ok.body), bits(rowsOf(e.model.embed([exact], { normalize: true }))));
  assert.equal(ok.headers.get('x-compute-tokens'), String(max));
  const refused = await post(`${e.url}/embed`, { inputs: over, truncate: false });
  assert.deepEqual([refused.status, refused.body.error], [422, `\`inputs\` must have less than ${max} tokens. Given: ${max + 1}`]);
  const tokens = await post(`${e.url}/tokenize`, { inputs: [exact], truncate: false });
  assert.deepEqual([tokens.status, tokens.body[0]?.length], [200, max], tokens.text.slice(0, 200));
  assert.equal((await post(`${e.url}/tokenize`, { inputs: over, truncate: false })).status, 422);

  const c = await serve(t, CLS);
  const cmax = c.engine.maxInputLength;
  const pair = 'a premise';
  const [cExact, cOver] = [await textOfTokens(CLS, cmax, { pair }), await textOfTokens(CLS, cmax + 1, { pair })];
  assert.equal((await post(`${c.url}/predict`, { inputs: [cExact, pair], truncate: false })).status, 200, `a pair of ${cmax} tokens`);
  const cRefused = await post(`${c.url}/predict`, { inputs: [cOver, pair], truncate: false });
  assert.deepEqual([cRefused.status, cRefused.body.error], [422, `\`inputs\` must have less than ${cmax} tokens. Given: ${cmax + 1}`]);
});

test('serve --auto-truncate false: a request that does not say `truncate` is not truncated (/embed, /v1/embeddings, /tokenize, /predict, /rerank)', async (t) => {
  const long = 'word '.repeat(300);
  const e = await serve(t, EMB, '--auto-truncate', 'false');
  assert.equal((await (await fetch(`${e.url}/info`)).json()).auto_truncate, false);
  for (const [route, body] of [
    ['/embed', { inputs: long }],
    ['/embed', { inputs: ['short', long] }],
    ['/embed', { inputs: long, truncate: null }],
    ['/v1/embeddings', { input: long, model: 'm' }],
    ['/tokenize', { inputs: long }],
  ]) {
    const r = await post(`${e.url}${route}`, body);
    assert.equal(r.status, 422, `${route} ${JSON.stringify(body).slice(0, 60)}: ${r.text.slice(0, 200)}`);
    assert.match(JSON.stringify(r.body), /must have less than 96 tokens/);
  }
  // asked for, truncation still applies
  assert.equal((await post(`${e.url}/embed`, { inputs: long, truncate: true })).status, 200);
  assert.equal((await post(`${e.url}/tokenize`, { inputs: long, truncate: true })).body[0].length, 96);
  const c = await serve(t, CLS, '--auto-truncate', 'false');
  assert.equal((await post(`${c.url}/predict`, { inputs: long })).status, 422);
  assert.equal((await post(`${c.url}/predict`, { inputs: [[long, 'b']] })).status, 422);
  const r = await serve(t, RERANKER, '--auto-truncate', 'false');
  assert.equal((await post(`${r.url}/rerank`, { query: 'q', texts: ['short', long] })).status, 422);
  assert.equal((await post(`${r.url}/rerank`, { query: 'q', texts: ['short', long], truncate: true })).status, 200);
  // and the default (--auto-truncate true) cuts where the request says nothing
  const d = await serve(t, EMB);
  assert.equal((await post(`${d.url}/v1/embeddings`, { input: long, model: 'm' })).status, 200);
  assert.equal((await post(`${d.url}/tokenize`, { inputs: long })).body[0].length, 96);
});

test('serve: a merged batch that fails is run again input by input: the bad request fails alone, the others are answered', async (t) => {
  const s = await serve(t, EMB);
  const { svc } = s;
  const run = svc.batcher.runBatch,
    batches = [];
  let open;
  const gate = new Promise((r) => {
    open = r;
  });
  // an input the library refuses inside a batch (a fault that its measure did not catch), and the first batch held
  svc.batcher.runBatch = async (key, items) => {
    batches.push(items.map((x) => x.text));
    if (batches.length === 1) await gate;
    if (items.some((x) => x.text === 'poison')) throw new SwapformerError('BAD_ARGUMENT', 'this input is refused');
    return run(key, items);
  };
  const first = post(`${s.url}/embed`, { inputs: TEXTS[0] });
  await until(() => batches.length === 1, 'the first batch to run');
  const texts = [TEXTS[1], TEXTS[2], 'poison', TEXTS[3], TEXTS[4]];
  const answers = texts.map((inputs) => post(`${s.url}/embed`, { inputs }));
  await until(() => svc.batcher.size === texts.length, 'the other requests queued');
  open();
  const done = await Promise.all([first, ...answers]);
  assert.deepEqual(batches.slice(1), [texts, ...texts.map((x) => [x])], 'one merged batch of the 5 (it fails), then each alone');
  for (const [i, text] of [TEXTS[0], ...texts].entries()) {
    const r = done[i];
    if (text === 'poison') {
      assert.deepEqual([r.status, r.body], [422, { error: 'this input is refused', error_type: 'Validation' }]);
      continue;
    }
    assert.equal(r.status, 200, `${text}: ${r.text}`);
    assert.deepEqual(bits(r.body), bits(rowsOf(s.model.embed([text], { normalize: true }))), text);
  }
  assert.equal(svc.metrics.counter('te_request_failure', { err: 'inference' }), 1, 'one request failed');
});

test('serve /tokenize: the longest input applies (cut or 422), the answer is bounded, and a big request does not hold the event loop: /health answers meanwhile', async (t) => {
  const s = await serve(t, EMB);
  const max = s.engine.maxInputLength;
  const { Tokenizer } = require('tokenizers');
  const rust = Tokenizer.fromFile(`${EMB}/tokenizer.json`);
  // the default (--auto-truncate): cut to the longest input as the Rust tokenizers truncate
  const long = TEXTS.join(' ').repeat(20);
  const cut = await post(`${s.url}/tokenize`, { inputs: long });
  rust.setTruncation(max);
  const want = await rust.encode(long);
  rust.disableTruncation();
  assert.deepEqual(
    cut.body[0].map((x) => x.id),
    want.getIds(),
  );
  const full = (await rust.encode(long)).getIds().length;
  const refused = await post(`${s.url}/tokenize`, { inputs: ['short', long], truncate: false });
  assert.deepEqual([refused.status, refused.body], [422, { error: `\`inputs\` must have less than ${max} tokens. Given: ${full}`, error_type: 'Validation' }]);
  // a cut text's offsets, byte-level BPE cutting inside emoji: the Rust offsets, in UTF-8 bytes
  const bpe = fileURLToPath(new URL('./pretrained/roberta-bpe', import.meta.url));
  const b = await serve(t, bpe);
  for (const text of ['🎉'.repeat(300), 'a🎉é'.repeat(100)]) {
    const got = await post(`${b.url}/tokenize`, { inputs: text });
    const want = await rustEncode(bpe, text, true, b.engine.maxInputLength);
    const chars = [...text];
    const byteAt = (c) => Buffer.byteLength(chars.slice(0, c).join(''));
    assert.deepEqual(
      got.body[0].map(({ id, start, stop }) => [id, start, stop]),
      want.ids.map((id, k) => (want.special[k] ? [id, null, null] : [id, byteAt(want.offsets[k][0]), byteAt(want.offsets[k][1])])),
      text.slice(0, 10),
    );
  }

  // 32 texts of 55,000 characters (about 1.9 MB): the event loop is served between them
  const words = ['hello', 'world', 'the', 'quick', 'brown', 'fox', 'jumps'];
  const big = Array.from({ length: 9200 }, (_, i) => words[i % 7]).join(' ');
  const inputs = Array.from({ length: 32 }, (_, i) => `${i} ${big}`);
  const tokens = s.engine.tokens.bind(s.engine);
  let health = null,
    calls = 0;
  s.engine.tokens = (...args) => {
    if (calls++ === 0) health = fetch(`${s.url}/health`).then((r) => ({ status: r.status, at: performance.now() })); // sent while the request is under way
    return tokens(...args);
  };
  const started = performance.now();
  const r = await post(`${s.url}/tokenize`, { inputs });
  const answered = performance.now();
  assert.equal(r.status, 200, r.text.slice(0, 200));
  assert.equal(calls, 32);
  assert.ok(
    r.body.every((x) => x.length === max),
    'every text cut to the longest input',
  );
  assert.ok(r.text.length < 32 * max * 100, `the answer is bounded: ${r.text.length} bytes`);
  const h = await health;
  assert.equal(h.status, 200);
  assert.ok(h.at < answered, `/health answered while /tokenize was working (${Math.round(h.at - started)} ms vs ${Math.round(answered - started)} ms)`);
  t.diagnostic(
    `/tokenize of 32 x 55,000 characters: ${Math.round(answered - started)} ms; /health sent meanwhile answered at ${Math.round(h.at - started)} ms`,
  );
});

test(
  'serve CLI: usage errors as the other commands (one line, did you mean), a busy port named before the model loads, download progress unless -q',
  { timeout: 60_000 },
  async (t) => {
    const run = (args, env = {}) => runAsync(process.execPath, [...NODE_FLAGS, 'bin/serve.js', ...args], { cwd: REPO, env: { ...process.env, ...env } });
    for (const [args, message] of [
      [[EMB, '--prot', '80'], "unknown option '--prot' for serve (did you mean --port?)"],
      [[EMB, '--max-batch-token', '80'], "unknown option '--max-batch-token' for serve (did you mean --max-batch-tokens?)"],
      [[EMB, '--dtype', 'q9'], "--dtype must be one of f32, q8, got 'q9' (did you mean q8?)"],
      [[EMB, '--port', '1', '--port', '2'], '--port is given twice'],
      [[EMB, '-q', '--quiet'], '--quiet is given twice'],
      [[EMB, 'extra'], "serve takes 1 argument, got 2: 'extra' is extra"],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `swapformer: ${message}\nusage: swapformer serve <model> [options]\n(swapformer help serve lists the options)\n`);
    }
    // a busy port: said with what to try, before the model is read (this model does not exist)
    const busy = net.createServer();
    await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve));
    t.after(() => busy.close());
    const port = busy.address().port;
    const taken = await run(['/nonexistent/model', '--port', String(port), '-q']);
    assert.equal(taken.code, 1);
    assert.equal(
      taken.stderr,
      `swapformer serve: /nonexistent/model: cannot listen on 127.0.0.1:${port}: port ${port} is in use: try another --port, or --port 0 for any free port\n`,
    );

    // a Hub download shows its progress on stderr (as the other commands); -q shows none, and no loading line
    const hub = await startHub({ repos: { 'test/wordnet-bert': fileURLToPath(new URL('../models/wordnet-bert', import.meta.url)) } });
    t.after(() => hub.close());
    for (const quiet of [false, true]) {
      const cache = mkdtempSync(path.join(tmpdir(), 'swapformer-serve-hub-'));
      t.after(() => rmSync(cache, { recursive: true, force: true }));
      const child = spawn(
        process.execPath,
        [...NODE_FLAGS, 'bin/serve.js', 'test/wordnet-bert', '--hub-url', hub.url, '--port', '0', '--threads', '1', ...(quiet ? ['-q'] : [])],
        {
          cwd: REPO,
          env: { ...process.env, HF_HUB_CACHE: cache },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '',
        err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      const exited = new Promise((resolve) => child.once('close', (code) => resolve(code))); // after its output has all been read: 'exit' may come first
      t.after(() => child.exitCode === null && child.kill('SIGKILL'));
      await until(() => /listening on http:\/\/\S+\n/.test(out) || child.exitCode !== null, 'the server to listen');
      child.kill('SIGTERM');
      assert.equal(await exited, 0, err);
      if (quiet) {
        assert.equal(err, '', 'nothing on stderr with -q');
        assert.match(out, /^swapformer serve: listening on http:\/\/127\.0\.0\.1:\d+\n$/, 'with -q, the line saying where it listens alone');
      } else {
        assert.match(err, /^swapformer serve: loading test\/wordnet-bert\n/);
        assert.match(err, /\n {2}model\.safetensors 3\.1 \/ 3\.1 MB\n/, 'the download progress');
        assert.match(
          out,
          /^swapformer serve: test\/wordnet-bert \(embedding, float32, max input 128 tokens\) listening on http:\/\/\S+\nswapformer serve: SIGTERM: draining\n/,
        );
      }
    }
  },
);
