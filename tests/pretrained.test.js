// Real pretrained families through loadPretrained, against the independent
// float64 reference (tests/reference/make_pretrained.py, from each family's
// Hugging Face modelling code): hidden states, the embedding recipe, the
// Rust tokenizer's ids; every kind of source; the converter; refusals; and
// swapping or rescaling the positions of a pretrained architecture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, writeFileSync, cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { loadPretrained, loadModel, createEncoder } from '../bindings/index.js';
import { pool, applyRecipe } from '../bindings/pretrained/recipe.js';
import { f16FromBits, f16bits } from '../bindings/pretrained/model-file.js';
import { parseSafetensors } from '../bindings/pretrained/safetensors.js';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { startHub } from './hub-server.js';
import { assertBitIdentical, rejects } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

const ROOT = fileURLToPath(new URL('./pretrained/', import.meta.url));
const CASES = readdirSync(path.join(ROOT, 'expected'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(path.join(ROOT, 'expected', f), 'utf8')));
const folder = (c) => path.join(ROOT, c.folder);
const TOLERANCE = 1e-4; // the bar: 1e-4 relative (measured: a few 1e-6)

/** Every element: |a - e| <= tol * (rms(e) + |e|). Returns the worst ratio to tol. */
function assertClose(actual, expected, what, tol = TOLERANCE) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let rms = 0;
  for (const x of expected) rms += x * x;
  rms = Math.sqrt(rms / expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const r = Math.abs(actual[i] - expected[i]) / (rms + Math.abs(expected[i]));
    if (!(r <= tol)) assert.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (error ${r.toExponential(2)} > ${tol})`);
    worst = Math.max(worst, r);
  }
  return worst;
}

test('the fixtures cover every family, twice, with padded batches', () => {
  const families = new Map();
  for (const c of CASES) families.set(c.family, (families.get(c.family) ?? 0) + 1);
  for (const f of ['bert', 'roberta', 'xlm-roberta', 'distilbert', 'nomic_bert', 'jina-bert', 'modernbert', 't5'])
    assert.ok((families.get(f) ?? 0) >= (f === 'roberta' || f === 'xlm-roberta' ? 1 : 2), `family ${f}: ${families.get(f) ?? 0} cases`);
  for (const c of CASES)
    assert.ok(
      c.batches.some((b) => new Set(b.lengths).size > 1),
      `${c.case}: a padded batch`,
    );
});

/** The batches' hidden states and recipe embeddings of a loaded case against its reference. */
function checkBatches(p, c) {
  for (const [k, b] of c.batches.entries()) {
    const out = p.encoder.forward(b.ids, b.typeIds ? { typeIds: b.typeIds } : {});
    assert.deepEqual(out.shape, b.hidden.shape);
    assertClose(out.data, b.hidden.data, `batch ${k} hidden`);
    // the recipe on our hidden states: pooling, Dense, Normalize
    const emb = applyRecipe(pool(out, b.lengths, p.recipe.pooling), p.recipe);
    assert.deepEqual(emb.shape, b.embeddings.shape);
    assertClose(emb.data, b.embeddings.data, `batch ${k} embeddings`);
  }
}

for (const c of CASES) {
  test(`${c.case} (${c.family}): hidden states, embeddings and tokens match the reference`, async () => {
    const p = await loadPretrained(folder(c));
    try {
      checkBatches(p, c);
      for (const [k, t] of (c.texts ?? []).entries()) {
        if (t.pairs) {
          // pairs: segment ids through forward's typeIds
          const enc = t.pairs.map(([a, b2]) => p.tokenizer.encode(a, { pair: b2 }));
          enc.forEach((e, i) => {
            assert.deepEqual([...e.ids], t.ids[i]);
            assert.deepEqual([...e.typeIds], t.typeIds[i]);
          });
          const out = p.encoder.forward(
            enc.map((e) => e.ids),
            { typeIds: enc.map((e) => e.typeIds) },
          );
          const emb = applyRecipe(
            pool(
              out,
              enc.map((e) => e.ids.length),
              p.recipe.pooling,
            ),
            p.recipe,
          );
          assertClose(emb.data, t.embeddings.data, `texts ${k} (pairs) embeddings`);
          continue;
        }
        t.texts.forEach((text, i) => assert.deepEqual([...p.tokenizer.encode(text).ids], t.ids[i], `tokens of ${JSON.stringify(text)}`));
        const emb = p.embed(t.texts);
        assert.deepEqual(emb.shape, t.embeddings.shape);
        assertClose(emb.data, t.embeddings.data, `texts ${k} embed()`);
      }
      if (c.matryoshka) {
        const b = c.batches[c.matryoshka.batchIndex];
        const out = p.encoder.forward(b.ids);
        const emb = applyRecipe(pool(out, b.lengths, p.recipe.pooling), p.recipe, { dimensions: c.matryoshka.dimensions, matryoshkaNorm: true });
        assertClose(emb.data, c.matryoshka.data, 'matryoshka');
      }
    } finally {
      p.dispose();
    }
  });
}

test('embed(): pooling overrides, normalize, dimensions, none, maxLength truncation keeping the special tokens', async () => {
  const p = await loadPretrained(path.join(ROOT, 'bert-minilm'));
  const texts = ['a short one', 'a somewhat longer sentence about nothing in particular'];
  const e = p.embed(texts);
  assert.deepEqual(e.shape, [2, 32]);
  for (let b = 0; b < 2; b++) assert.ok(Math.abs(Math.hypot(...e.data.subarray(b * 32, b * 32 + 32)) - 1) < 1e-5, 'unit length');
  const raw = p.embed(texts, { normalize: false });
  assert.ok(Math.abs(Math.hypot(...raw.data.subarray(0, 32)) - 1) > 1e-3, 'not normalised');
  const hidden = p.embed(texts, { pooling: 'none' });
  assert.equal(hidden.shape[0], 2);
  assert.equal(hidden.shape[2], 32);
  const lengths = texts.map((t) => p.tokenizer.encode(t).ids.length);
  for (const mode of ['mean', 'cls', 'max']) {
    const want = applyRecipe(pool(hidden, lengths, [mode]), { dense: [] }, { normalize: true });
    assertClose(p.embed(texts, { pooling: mode }).data, want.data, mode, 1e-6);
  }
  const cut = p.embed(texts, { dimensions: 8 });
  assert.deepEqual(cut.shape, [2, 8]);
  const ids = p.tokenizer.encode(texts[1], { maxLength: 5 }).ids;
  assert.equal(ids.length, 5);
  assert.equal(ids[0], p.tokenizer.clsTokenId);
  assert.equal(ids[4], p.tokenizer.sepTokenId);
  const short = p.embed(texts[1], { maxLength: 5, pooling: 'none' });
  assert.deepEqual(short.shape, [1, 5, 32]);
  // the folder's max_seq_length (96) bounds everything
  assert.equal(p.maxLength, 96);
  assert.equal(p.embed('word '.repeat(500), { pooling: 'none' }).shape[1], 96);
  assert.deepEqual(p.embed([]).shape, [0, 32], 'no texts: no embeddings');
  await rejects(() => p.embed([1]), 'BAD_ARGUMENT', /texts\[0\]/);
  await rejects(() => p.embed('x', { pooling: 'avg' }), 'BAD_ARGUMENT', /pooling/);
  p.dispose();
  await rejects(() => p.embed('x'), 'DISPOSED');
});

test('sources: a Hub id over HTTP (with progress), a file map, a URL, a folder; all give the same bits', async () => {
  const c = CASES.find((x) => x.case === 'bert-dense-pairs'); // sharded weights, 2_Dense
  const dir = folder(c);
  const ref = await loadPretrained(dir);
  const texts = ['one sentence', 'and another'];
  const want = ref.embed(texts).data;
  const hub = await startHub({ repos: { 'test/dense-pairs': dir }, slow: true, cache: false });
  try {
    const events = [];
    const viaHub = await loadPretrained('test/dense-pairs', { hubUrl: hub.url, onProgress: (e) => events.push(e) });
    assertBitIdentical(viaHub.embed(texts).data, want, 'hub');
    const files = new Set(events.map((e) => e.file));
    for (const f of ['config.json', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'tokenizer.json', '2_Dense/model.safetensors'])
      assert.ok(files.has(f), `progress for ${f}`);
    const shard = events.filter((e) => e.file === 'model-00001-of-00002.safetensors');
    assert.ok(shard.length > 1, 'several progress events for a slow download');
    assert.equal(shard.at(-1).loaded, shard.at(-1).total);
    assert.ok(
      hub.requests.some((r) => r.status === 302),
      'the LFS redirect was followed',
    );
    const viaUrl = await loadPretrained(`${hub.url}/test/dense-pairs/resolve/main/`);
    assertBitIdentical(viaUrl.embed(texts).data, want, 'url');
    await rejects(loadPretrained('test/absent', { hubUrl: hub.url }), 'NOT_FOUND');
  } finally {
    await hub.close();
  }
  const map = {};
  const walk = (rel) => {
    for (const ent of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${ent.name}` : ent.name;
      if (ent.isDirectory()) walk(r);
      else map[r] = new Uint8Array(readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  map['config.json'] = new TextDecoder().decode(map['config.json']); // strings are accepted too
  assertBitIdentical((await loadPretrained(map)).embed(texts).data, want, 'file map');
});

test('the converter: one file with tokenizer and recipe; f32 identical, f16 within half precision; loadModel reads it too', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-convert-'));
  try {
    const bin = fileURLToPath(new URL('../bin/swapformer.js', import.meta.url));
    for (const c of CASES.filter((x) =>
      ['bert-dense-pairs', 'nomic-embed', 'modernbert-embed', 'sentence-t5', 'jina-v2-mlm', 'xlm-roberta-unigram'].includes(x.case),
    )) {
      const texts = ['converted once', 'then loaded from one file'];
      const ref = await loadPretrained(folder(c));
      const want = ref.embed(texts).data;
      for (const dtype of ['f32', 'f16']) {
        const out = path.join(tmp, `${c.case}-${dtype}.safetensors`);
        execFileSync(process.execPath, [...NODE_FLAGS, bin, 'convert', folder(c), out, '--dtype', dtype], { stdio: 'pipe' });
        const p = await loadPretrained(out);
        const got = p.embed(texts).data;
        if (dtype === 'f32') assertBitIdentical(got, want, `${c.case} f32`);
        else assertClose(got, want, `${c.case} f16`, 2e-2);
        const bare = await loadModel(readFileSync(out));
        assert.equal(bare.config.dModel, ref.encoder.config.dModel);
        p.dispose();
        bare.dispose();
      }
      ref.dispose();
    }
    assert.throws(
      () => execFileSync(process.execPath, [bin, 'convert', path.join(ROOT, 'bert-pytorch-bin'), path.join(tmp, 'x.safetensors')], { stdio: 'pipe' }),
      (e) => e.status === 1 && /UNSUPPORTED_MODEL.*pytorch_model\.bin.*safe_serialization=True/s.test(String(e.stderr)),
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('T5 v1.1 configs without dense_act_fn: feed_forward_proj gated-gelu falls back to the tanh GELU (gelu_new) and matches the reference', async () => {
  const c = CASES.find((x) => x.case === 'sentence-t5');
  const config = JSON.parse(readFileSync(path.join(folder(c), 'config.json'), 'utf8'));
  // the reference ran with dense_act_fn gelu_new, what transformers' T5Config sets for gated-gelu
  assert.equal(config.feed_forward_proj, 'gated-gelu');
  assert.equal(config.dense_act_fn, 'gelu_new');
  const { dense_act_fn: _act, ...older } = config;
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-t5v11-'));
  try {
    cpSync(folder(c), tmp, { recursive: true });
    writeFileSync(path.join(tmp, 'config.json'), JSON.stringify(older, null, 2));
    const p = await loadPretrained(tmp);
    assert.equal(p.encoder.config.activation, 'geglu_tanh');
    checkBatches(p, c);
    p.dispose();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('f16: float32 -> half bits as numpy astype(float16), bit for bit: ties to even, subnormals, overflow, -0, NaN payloads', () => {
  // tests/fixtures/f16-rounding.bin: N float32 bit patterns, then numpy's N half bit patterns (tests/reference/make_f16_reference.py)
  const buf = readFileSync(new URL('./fixtures/f16-rounding.bin', import.meta.url));
  const n = buf.length / 6;
  const bits = new Uint32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 4 * n));
  const halves = new Uint16Array(buf.buffer.slice(buf.byteOffset + 4 * n, buf.byteOffset + 6 * n));
  const values = new Float32Array(bits.buffer);
  const hex = (v, w) => `0x${v.toString(16).padStart(w, '0')}`;
  let ties = 0,
    subnormal = 0;
  for (let i = 0; i < n; i++) {
    const got = f16FromBits(bits[i]);
    if (got !== halves[i]) assert.fail(`float32 ${hex(bits[i], 8)} (${values[i]}): half ${hex(got, 4)}, numpy ${hex(halves[i], 4)}`);
    // a number (NaN payloads are not kept by JS numbers: bits only)
    if (!Number.isNaN(values[i]) && f16bits(values[i]) !== halves[i])
      assert.fail(`f16bits(${values[i]}): ${hex(f16bits(values[i]), 4)}, numpy ${hex(halves[i], 4)}`);
    const e = (bits[i] >>> 23) & 0xff;
    if (e >= 113 && e < 143 && (bits[i] & 0x1fff) === 0x1000) ties++;
    if ((halves[i] & 0x7c00) === 0 && halves[i] & 0x3ff) subnormal++;
  }
  assert.ok(n > 10000 && ties > 500 && subnormal > 200, `${n} values, ${ties} exact ties, ${subnormal} subnormal results`);
});

test("the converter's --dtype f16 tensors are numpy's astype(float16) of the F32 checkpoint, byte for byte", async () => {
  const ref = JSON.parse(readFileSync(new URL('./fixtures/f16-bert-minilm.json', import.meta.url), 'utf8'));
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-f16-'));
  try {
    const out = path.join(tmp, 'f16.safetensors');
    execFileSync(
      process.execPath,
      [...NODE_FLAGS, fileURLToPath(new URL('../bin/swapformer.js', import.meta.url)), 'convert', path.join(ROOT, 'bert-minilm'), out, '--dtype', 'f16'],
      { stdio: 'pipe' },
    );
    const written = parseSafetensors(new Uint8Array(readFileSync(out)), 'f16.safetensors').tensors;
    const { tensors } = await readCheckpoint(path.join(ROOT, 'bert-minilm'));
    assert.equal(written.size, tensors.length);
    for (const t of tensors) {
      const w = written.get(t.name);
      assert.equal(w.dtype, 'F16', t.name);
      assert.ok(Object.hasOwn(ref.tensors, t.source), t.source);
      assert.deepEqual(w.shape, ref.tensors[t.source].shape, t.name);
      assert.equal(createHash('sha256').update(w.bytes).digest('hex'), ref.tensors[t.source].sha256, `${t.name} (${t.source}): the bytes differ from numpy's`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('UNSUPPORTED_MODEL: checkpoints swapformer would run wrongly are refused, naming the field', async () => {
  await rejects(loadPretrained(path.join(ROOT, 'bert-pytorch-bin')), 'UNSUPPORTED_MODEL', /pytorch_model\.bin.*safe_serialization=True/s);
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-bad-'));
  try {
    const variant = (name, edit) => {
      const d = path.join(tmp, name);
      cpSync(path.join(ROOT, 'bert-minilm'), d, { recursive: true });
      const cfg = JSON.parse(readFileSync(path.join(d, 'config.json'), 'utf8'));
      edit(cfg, d);
      writeFileSync(path.join(d, 'config.json'), JSON.stringify(cfg));
      return d;
    };
    await rejects(
      loadPretrained(
        variant('relkey', (c) => {
          c.position_embedding_type = 'relative_key';
        }),
      ),
      'UNSUPPORTED_MODEL',
      /config\.json: position_embedding_type = "relative_key"/,
    );
    await rejects(
      loadPretrained(
        variant('deberta', (c) => {
          c.model_type = 'deberta';
          c.pos_att_type = ['p2c', 'c2p'];
        }),
      ),
      'UNSUPPORTED_MODEL',
      /model_type = "deberta" \(DeBERTa v1\) is not supported/,
    );
    await rejects(
      loadPretrained(
        variant('bert-as-deberta-v2', (c) => {
          c.model_type = 'deberta-v2';
          c.pos_att_type = ['p2c', 'c2p'];
        }),
      ),
      'UNSUPPORTED_MODEL',
      /weight 'encoder\.layer\.0\.attention\.self\.(query|key|value)\.(weight|bias)' is not part of a DeBERTa-v2/,
    );
    await rejects(
      loadPretrained(
        variant('mpnet-as-bert', (c) => {
          c.model_type = 'mpnet';
        }),
      ),
      'UNSUPPORTED_MODEL',
      /token_type_embeddings.*not part of a MPNet/,
    );
    await rejects(
      loadPretrained(
        variant('act', (c) => {
          c.hidden_act = 'mish';
        }),
      ),
      'UNSUPPORTED_MODEL',
      /hidden_act = "mish"/,
    );
    await rejects(
      loadPretrained(
        variant('layers', (c) => {
          c.num_hidden_layers = 3;
        }),
      ),
      'UNSUPPORTED_MODEL',
      /layers\.2/,
    );
    // jina is model_type bert: detected by position_embedding_type, never run as plain BERT
    await rejects(
      loadPretrained(
        variant('jina-ish', (c) => {
          c.position_embedding_type = 'alibi';
          c.feed_forward_type = 'geglu';
        }),
      ),
      'UNSUPPORTED_MODEL',
      /not part of a JinaBERT/,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('swapping positions on pretrained architectures: jina past 4x its training length, YaRN on nomic and ModernBERT, RoPE ablated', async () => {
  const jina = await loadPretrained(path.join(ROOT, 'jina-v2'));
  const long = Array.from({ length: 2048 }, (_, i) => 5 + ((i * 7) % 150)); // 4 x jina-v2's 512 training tokens
  const out = jina.encoder.forward(long);
  assert.ok(out.data.every(Number.isFinite), 'finite at 2048 tokens');
  jina.dispose();
  for (const name of ['nomic-embed', 'modernbert-embed']) {
    const p = await loadPretrained(path.join(ROOT, name));
    const po = p.encoder.config.positionOptions;
    const yarn = await p.withConfig({ positionOptions: { ...po, scaling: { type: 'yarn', factor: 4, originalMaxLen: 64 } } });
    const ntk = await p.withConfig({ positionOptions: { ...po, scaling: { type: 'ntk', factor: 4 } } });
    const ablated = await p.withConfig({ position: 'none', positionOptions: {} });
    const texts = ['the same words, positions changed', 'another one'];
    const base = p.embed(texts).data;
    for (const [what, q] of [
      ['yarn', yarn],
      ['ntk', ntk],
      ['none', ablated],
    ]) {
      const e = q.embed(texts).data;
      assert.ok(e.every(Number.isFinite), `${name} ${what}: finite`);
      assert.ok(
        e.some((x, i) => Math.abs(x - base[i]) > 1e-4),
        `${name} ${what}: the positions matter`,
      );
    }
    const long2 = (q) => q.encoder.forward(Array.from({ length: 600 }, (_, i) => 5 + (i % 100))).data.every(Number.isFinite);
    assert.ok(long2(yarn), `${name} yarn at 600 tokens`);
    // the original is untouched: the golden embeddings again
    const c = CASES.find((x) => x.case === name);
    const b = c.batches[0];
    assertClose(p.encoder.forward(b.ids).data, b.hidden.data, `${name} after the swaps`);
    for (const q of [p, yarn, ntk, ablated]) q.dispose();
  }
  // a swap on raw weights works the same through createEncoder
  const m = await loadPretrained(path.join(ROOT, 't5-relu'));
  const alibi = await createEncoder(
    { ...m.encoder.config, position: 'alibi', positionOptions: {} },
    { weights: Object.fromEntries(Object.entries(m.encoder.getWeights()).filter(([k]) => k !== 'embed.relative_bias')) },
  );
  assert.ok(alibi.forward([1, 2, 3]).data.every(Number.isFinite));
  m.dispose();
  alibi.dispose();
});
