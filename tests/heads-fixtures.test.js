// The task-head fixtures of tests/heads/ stay coherent (they are written by
// tests/reference/make_heads.py; this file tests the fixtures, not swapformer):
//  - every case folder has its files and an expected/<case>.json, and back;
//  - every JSON file parses; config.json's label maps are HF's (string keys
//    "0".."n-1", label2id the inverse);
//  - model.safetensors' header parses (own reader below) and lists exactly the
//    HF tensor names, dtypes and shapes the expected file records, with the
//    data laid out back to back;
//  - the shapes agree: inputs' fields of one length, ids below vocab_size,
//    logits [B][labels] / [B][T_b][labels] / [B][nMasks][vocab_size], hidden
//    [B][T_b][hidden size], the head tensors' rows and the label count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('./heads/', import.meta.url));
const CASES = readdirSync(ROOT)
  .filter((n) => n !== 'expected' && statSync(path.join(ROOT, n)).isDirectory())
  .sort();
const EXPECTED = readdirSync(path.join(ROOT, 'expected'))
  .filter((n) => n.endsWith('.json'))
  .sort();
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];
const ST_FILES = ['modules.json', 'sentence_bert_config.json', 'config_sentence_transformers.json', '1_Pooling/config.json'];
const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2, I64: 8 };
const FOLDER_LIMIT = 200_000;

const readJson = (c, f) => JSON.parse(readFileSync(path.join(ROOT, c, f), 'utf8'));
const expected = (c) => JSON.parse(readFileSync(path.join(ROOT, 'expected', `${c}.json`), 'utf8'));

/** safetensors: u64 LE header length, JSON header, then the raw data. */
function safetensorsHeader(file) {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  assert.ok(n > 0 && 8 + n <= buf.length, `${file}: header length ${n}`);
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  return { header, dataBytes: buf.length - 8 - n };
}

function folderBytes(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (s, e) => s + (e.isDirectory() ? folderBytes(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).size),
    0,
  );
}

const isFile = (p) => existsSync(p) && statSync(p).isFile();
const hiddenSize = (cfg) => cfg.hidden_size ?? cfg.dim;
const labelsOf = (cfg) => Object.keys(cfg.id2label ?? {}).length;

test('every case folder has its files and an expected file, and every expected file a folder', () => {
  assert.ok(CASES.length >= 20, `${CASES.length} cases`);
  assert.deepEqual(EXPECTED.map((f) => f.slice(0, -'.json'.length)).sort(), CASES);
  for (const c of CASES) {
    const exp = expected(c);
    const want = exp.task === 'embedding' ? [...FILES, ...ST_FILES] : FILES;
    for (const f of want) assert.ok(isFile(path.join(ROOT, c, f)), `${c}/${f}`);
    for (const f of want.filter((f) => f.endsWith('.json'))) assert.doesNotThrow(() => readJson(c, f), `${c}/${f} parses`);
    assert.equal(exp.case, c);
    assert.ok(folderBytes(path.join(ROOT, c)) < FOLDER_LIMIT, `${c} under ${FOLDER_LIMIT} bytes`);
  }
});

test('config.json: model_type, architectures, HF label maps', () => {
  for (const c of CASES) {
    const cfg = readJson(c, 'config.json');
    const exp = expected(c);
    assert.equal(cfg.model_type, exp.modelType, c);
    assert.ok(Array.isArray(cfg.architectures) && cfg.architectures.length === 1, `${c}: architectures`);
    if (exp.task !== 'embedding') assert.equal(cfg.architectures[0], exp.architecture, c);
    assert.ok(!Object.hasOwn(cfg, 'num_labels'), `${c}: num_labels is implied by id2label, as HF saves it`);
    if (exp.task === 'sequence' || exp.task === 'token') {
      const n = labelsOf(cfg);
      assert.ok(n >= 1, `${c}: id2label`);
      assert.deepEqual(Object.keys(cfg.id2label), [...Array(n).keys()].map(String), `${c}: id2label keys "0".."n-1"`);
      assert.deepEqual(
        Object.fromEntries(Object.entries(cfg.label2id).map(([k, v]) => [String(v), k])),
        cfg.id2label,
        `${c}: label2id is the inverse of id2label`,
      );
      assert.equal(exp.head.labels, n, `${c}: head labels`);
    }
  }
});

test('model.safetensors: the HF tensor names, dtypes and shapes of the expected file, data back to back', () => {
  for (const c of CASES) {
    const { header, dataBytes } = safetensorsHeader(path.join(ROOT, c, 'model.safetensors'));
    const exp = expected(c);
    const names = Object.keys(header)
      .filter((k) => k !== '__metadata__')
      .sort();
    assert.deepEqual(names, Object.keys(exp.tensors).sort(), `${c}: tensor names`);
    const spans = [];
    for (const k of names) {
      const e = header[k];
      assert.equal(e.dtype, exp.tensors[k].dtype, `${c}: ${k} dtype`);
      assert.deepEqual(e.shape, exp.tensors[k].shape, `${c}: ${k} shape`);
      const [a, b] = e.data_offsets;
      assert.equal(b - a, e.shape.reduce((p, d) => p * d, 1) * DTYPE_BYTES[e.dtype], `${c}: ${k} byte size`);
      spans.push([a, b]);
    }
    spans.sort((x, y) => x[0] - y[0]);
    spans.forEach(([a], i) => assert.equal(a, i ? spans[i - 1][1] : 0, `${c}: tensors back to back`));
    assert.equal(spans.at(-1)[1], dataBytes, `${c}: data ends with the last tensor`);
    for (const [canon, name] of Object.entries(exp.headTensors ?? {})) {
      assert.ok(Object.hasOwn(exp.tensors, name), `${c}: ${canon} -> ${name} is in the file`);
    }
  }
});

test('shapes agree: inputs, logits, hidden states, head tensors, vocabulary', () => {
  for (const c of CASES) {
    const cfg = readJson(c, 'config.json');
    const exp = expected(c);
    const C = hiddenSize(cfg);
    const V = cfg.vocab_size;
    const tok = readJson(c, 'tokenizer.json');
    const tokVocab = Array.isArray(tok.model.vocab) ? tok.model.vocab.length : Object.keys(tok.model.vocab).length;
    assert.ok(tokVocab <= V, `${c}: tokenizer vocabulary ${tokVocab} fits vocab_size ${V}`);
    const emb = Object.entries(exp.tensors).find(([k]) => /(word|tok)_embeddings\.weight$/.test(k));
    assert.deepEqual(emb[1].shape, [V, C], `${c}: token table [vocab_size, hidden]`);
    assert.equal(exp.hidden.length, exp.inputs.length, `${c}: one hidden block per input`);
    exp.inputs.forEach((inp, b) => {
      const T = inp.ids.length;
      for (const k of ['typeIds', 'tokens', 'offsets', 'specialTokensMask']) assert.equal(inp[k].length, T, `${c}[${b}].${k}`);
      assert.ok(
        inp.ids.every((i) => Number.isInteger(i) && i >= 0 && i < V),
        `${c}[${b}]: ids < vocab_size`,
      );
      assert.ok(
        inp.specialTokensMask.every((m) => m === 0 || m === 1),
        `${c}[${b}]: special mask 0/1`,
      );
      assert.ok(
        inp.offsets.every(([s, e]) => Number.isInteger(s) && s <= e),
        `${c}[${b}]: offsets`,
      );
      assert.equal(exp.hidden[b].length, T, `${c}[${b}]: hidden rows`);
      assert.ok(
        exp.hidden[b].every((r) => r.length === C && r.every(Number.isFinite)),
        `${c}[${b}]: hidden [T][${C}]`,
      );
    });
    if (exp.task === 'embedding') {
      for (const k of ['hiddenNoRelativeBias', 'hiddenNoAbsolute']) {
        assert.deepEqual(
          exp[k].map((h) => [h.length, h[0].length]),
          exp.hidden.map((h) => [h.length, C]),
          `${c}: ${k}`,
        );
      }
      for (const k of ['embeddings', 'embeddingsNoRelativeBias', 'embeddingsNoAbsolute']) {
        assert.equal(exp[k].length, exp.inputs.length, `${c}: ${k}`);
        for (const e of exp[k]) assert.ok(Math.abs(Math.hypot(...e) - 1) < 1e-6, `${c}: ${k} unit norm`);
      }
      continue;
    }
    assert.equal(exp.logits.length, exp.inputs.length, `${c}: one logits block per input`);
    const outRows = exp.task === 'mlm' ? V : labelsOf(cfg);
    const out = exp.headTensors['head.out.weight'] ?? exp.headTensors['embed.tokens (tied decoder)'];
    assert.deepEqual(exp.tensors[out].shape, [outRows, C], `${c}: output projection [${outRows}, ${C}]`);
    if (exp.headTensors['head.out.bias']) assert.deepEqual(exp.tensors[exp.headTensors['head.out.bias']].shape, [outRows]);
    exp.inputs.forEach((inp, b) => {
      const lg = exp.logits[b];
      const rows = exp.task === 'sequence' ? [lg] : lg;
      const want = exp.task === 'sequence' ? 1 : exp.task === 'token' ? inp.ids.length : inp.maskPositions.length;
      assert.equal(rows.length, want, `${c}[${b}]: logits rows`);
      assert.ok(
        rows.every((r) => r.length === outRows && r.every(Number.isFinite)),
        `${c}[${b}]: logits width ${outRows}`,
      );
      if (exp.task === 'mlm') {
        assert.ok(inp.maskPositions.length >= 1, `${c}[${b}]: a mask`);
        const mask = inp.ids[inp.maskPositions[0]];
        assert.ok(
          inp.maskPositions.every((p) => inp.ids[p] === mask && inp.specialTokensMask[p] === 0),
          `${c}[${b}]`,
        );
        assert.equal(inp.ids.filter((i) => i === mask).length, inp.maskPositions.length, `${c}[${b}]: every mask listed`);
        assert.ok(
          tok.added_tokens.some((t) => t.id === mask),
          `${c}: the mask is an added token`,
        );
      }
    });
  }
});
