// Loading memory: a model streams into wasm memory (core/modelfile.h,
// bindings/index.js streamModel), so the peak is the packed weights plus one
// small buffer, never the file as well; a disposed encoder's memory is reused
// by the next load. Each test runs on its own wasm instance (fresh bytes as
// the `wasm` option), where runtimeInfo().memoryBytes is that instance's
// memory: it grows and never shrinks, so it is the peak.
//
// The model has MiniLM-L6's shapes (about 86 MB of f32 weights).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEncoder, loadModel, loadPretrained, runtimeInfo } from '../bindings/index.js';
import { writeModelFile } from '../bindings/pretrained/model-file.js';
import { toFloat32 } from '../bindings/pretrained/safetensors.js';
import { rejects, assertBitIdentical } from './helpers.js';

const BOUND = 1.15; // peak wasm memory / the f32 weights' bytes (issue 11)
const Q8_BOUND = 0.35; // the same for an int8 encoder (dtype 'q8')
const wasmBytes = readFileSync(new URL('../dist/swapformer.wasm', import.meta.url));
const fresh = () => ({ wasm: new Uint8Array(wasmBytes) }); // a new instance per test
const memory = async (opts) => (await runtimeInfo(opts)).memoryBytes;
const MB = (n) => `${(n / 2 ** 20).toFixed(1)} MB`;

// BERT's translation of the config.json below (bindings/pretrained/families.js)
const cfg = {
  vocabSize: 30522, dModel: 384, heads: 12, layers: 6, ffDim: 1536, typeVocabSize: 2, position: 'learned', maxLen: 512,
  norm: 'layernorm', normPlacement: 'post', finalNorm: false, embedNorm: true, eps: 1e-12, activation: 'gelu',
};
const original = await createEncoder(cfg, { seed: 11, ...fresh() }); // the build the tests load with (the relaxed one rounds differently)
const file32 = original.save();
const shapes = original.weightShapes();
const weightBytes = Object.values(shapes).reduce((s, sh) => s + 4 * sh.reduce((a, b) => a * b, 1), 0);
const ids = [Array.from({ length: 128 }, (_, t) => (t * 7919 + 3) % cfg.vocabSize), [101, 2023, 102]];
const typeIds = [Array.from({ length: 128 }, (_, t) => (t < 64 ? 0 : 1)), [0, 0, 0]];
const reference = original.forward(ids, { typeIds }).data;
const weights = original.getWeights();
original.dispose();

const headerOf = (bytes) => {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))), dataStart: 8 + n };
};
const tensorsOf = (named) => Object.entries(named).map(([name, w]) => ({
  name, dtype: 'F32', shape: shapes[name] ?? [w.length], bytes: new Uint8Array(w.buffer, w.byteOffset, w.byteLength),
}));

/** Loads twice on one instance (dispose between, with a forward each time): the bound, no growth, the bits. */
async function loadTwice(load, what, check = (out) => assertBitIdentical(out, reference, what), inspect = () => {}, bound = BOUND) {
  const opts = fresh();
  const before = await memory(opts);
  const a = await load(opts);
  const first = await memory(opts);
  check(a.forward(ids, { typeIds }).data);
  const afterForward = await memory(opts);
  a.dispose();
  const b = await load(opts);
  check(b.forward(ids, { typeIds }).data);
  const second = await memory(opts);
  inspect(b);
  b.dispose();
  const figures = `${what}: weights ${MB(weightBytes)}, wasm memory ${MB(before)} -> ${MB(first)} after the load, ${MB(afterForward)} after a forward (T=128), ${MB(second)} after dispose + load + forward`;
  assert.ok(first <= bound * weightBytes, `${figures}: the load is above ${bound} x the weights`);
  assert.ok(afterForward <= bound * weightBytes, `${figures}: the forward is above ${bound} x the weights`);
  assert.equal(second, afterForward, `${figures}: the second load grew wasm memory`);
  return figures;
}

test('MiniLM-sized f32 file: peak wasm memory <= 1.15 x the weights; a second load after dispose reuses the memory; same bits', async (t) => {
  t.diagnostic(await loadTwice((opts) => loadModel(file32, opts), 'f32 file'));
});

test('MiniLM-sized model in int8 (the f32 file quantized on load, and its q8 file): peak wasm memory <= 0.35 x the f32 weights; same bits', async (t) => {
  const q = await loadModel(file32, { dtype: 'q8', ...fresh() });
  const q8File = q.save(), want = q.forward(ids, { typeIds }).data;
  q.dispose();
  assert.ok(q8File.length < 0.3 * file32.length, `q8 file ${MB(q8File.length)}`);
  for (const [what, load] of [['f32 file as q8', (opts) => loadModel(file32, { ...opts, dtype: 'q8' })], ['q8 file', (opts) => loadModel(q8File, opts)]])
    t.diagnostic(await loadTwice(load, what, (out) => assertBitIdentical(out, want, what), (e) => assert.equal(e.dtype, 'q8'), Q8_BOUND));
});

test('MiniLM-sized F16 file: the weights widened in place, memory bounded by the f32 weights', async (t) => {
  const file16 = writeModelFile(cfg, tensorsOf(weights), {}, 'f16');
  assert.ok(file16.length < file32.length * 0.51);
  // what the loader must hold: each F16 value widened exactly (widened here by the JS reader)
  const { header, dataStart } = headerOf(file16);
  const widened = {};
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    widened[name] = toFloat32({ dtype: 'F16', bytes: file16.subarray(dataStart + e.data_offsets[0], dataStart + e.data_offsets[1]) });
  }
  const ref = await createEncoder(cfg, { weights: widened, ...fresh() });
  const expected = ref.forward(ids, { typeIds }).data;
  ref.dispose();
  t.diagnostic(await loadTwice((opts) => loadModel(file16, opts), 'F16 file', (out) => assertBitIdentical(out, expected, 'F16 file'), (e) => {
    const got = e.getWeights();
    for (const name of ['embed.tokens', 'layers.5.ffn.up.weight', 'layers.0.attn.q.weight']) assertBitIdentical(got[name], widened[name], name);
  }));
});

test('a non-finite value deep in a big tensor is named with its index; the memory of the failed load is reused', async () => {
  const opts = fresh();
  const { header, dataStart } = headerOf(file32);
  const poison = (name, index, value) => {
    const bad = file32.slice();
    new DataView(bad.buffer).setFloat32(dataStart + header[name].data_offsets[0] + 4 * index, value, true);
    return bad;
  };
  // past the first chunks: the index counts from the tensor's start, not the chunk's
  await rejects(loadModel(poison('embed.tokens', 3_000_001, NaN), opts), 'BAD_WEIGHTS', /'embed\.tokens' holds a non-finite value \(nan\) at index 3000001/i);
  const grown = await memory(opts);
  assert.ok(grown <= BOUND * weightBytes, `a failed load holds ${MB(grown)}`);
  await rejects(loadModel(poison('layers.3.ffn.down.weight', 589_823, -Infinity), opts), 'BAD_WEIGHTS', /'layers\.3\.ffn\.down\.weight' holds a non-finite value .* at index 589823/);
  const e = await loadModel(file32, opts);
  assertBitIdentical(e.forward(ids, { typeIds }).data, reference, 'after failed loads');
  assert.equal(await memory(opts), grown, 'the failed loads left their memory free for the next');
  e.dispose();
});

test('loadPretrained streams a MiniLM-sized checkpoint folder from its tensors: same bound, same bits', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'swapformer-memory-'));
  try {
    const fixture = new URL('./pretrained/bert-minilm/', import.meta.url);
    const hf = JSON.parse(readFileSync(new URL('config.json', fixture), 'utf8'));
    Object.assign(hf, { vocab_size: 30522, hidden_size: 384, num_attention_heads: 12, num_hidden_layers: 6, intermediate_size: 1536, max_position_embeddings: 512 });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(hf));
    for (const f of ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) copyFileSync(new URL(f, fixture), join(dir, f));
    // BertModel's names, in its order
    const names = { 'embed.tokens': 'embeddings.word_embeddings.weight', 'embed.positions': 'embeddings.position_embeddings.weight',
      'embed.types': 'embeddings.token_type_embeddings.weight', 'embed.norm.weight': 'embeddings.LayerNorm.weight', 'embed.norm.bias': 'embeddings.LayerNorm.bias' };
    const layer = { 'attn.q': 'attention.self.query', 'attn.k': 'attention.self.key', 'attn.v': 'attention.self.value', 'attn.o': 'attention.output.dense',
      norm1: 'attention.output.LayerNorm', 'ffn.up': 'intermediate.dense', 'ffn.down': 'output.dense', norm2: 'output.LayerNorm' };
    const hfName = (n) => names[n] ?? n.replace(/^layers\.(\d+)\.(.*)\.(weight|bias)$/, (_, i, m, p) => `encoder.layer.${i}.${layer[m]}.${p}`);
    const st = writeModelFile({}, tensorsOf(weights).map((x) => ({ ...x, name: hfName(x.name) })));
    const { header, dataStart } = headerOf(st);
    delete header.__metadata__; // a plain safetensors file, as transformers writes it
    let text = JSON.stringify(header);
    text += ' '.repeat((8 - ((8 + text.length) % 8)) % 8);
    const h = new TextEncoder().encode(text), out = new Uint8Array(8 + h.length + st.length - dataStart);
    new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
    out.set(h, 8);
    out.set(st.subarray(dataStart), 8 + h.length);
    writeFileSync(join(dir, 'model.safetensors'), out);

    t.diagnostic(await loadTwice(async (opts) => {
      const p = await loadPretrained(dir, opts);
      assert.deepEqual(p.encoder.config.position, 'learned');
      assert.ok(p.tokenizer.encode('hello world').ids.length > 2, 'the tokenizer came along');
      return { forward: (...a) => p.encoder.forward(...a), dispose: () => p.dispose() };
    }, 'loadPretrained (folder, F32)'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a converted file keeps its metadata (tokenizer, recipe) through loadPretrained', async () => {
  const folder = new URL('./pretrained/bert-minilm/', import.meta.url);
  const direct = await loadPretrained(folder, fresh());
  const { readCheckpoint } = await import('../bindings/pretrained/checkpoint.js');
  const ck = await readCheckpoint(folder);
  const converted = await loadPretrained(writeModelFile(ck.config, ck.tensors, ck.metadata), fresh());
  assert.deepEqual(converted.recipe.pooling, direct.recipe.pooling);
  assert.equal(converted.family, 'bert');
  const texts = ['a sentence', 'another one, longer than the first'];
  assertBitIdentical(converted.embed(texts).data, direct.embed(texts).data, 'embeddings');
  direct.dispose();
  converted.dispose();
});

test('bytes that are not a whole file fail as before, without a copy of them', async () => {
  const opts = fresh();
  await rejects(loadModel(file32.subarray(0, 7), opts), 'BAD_FILE', /7 bytes: too short/);
  await rejects(loadModel(file32.subarray(0, file32.length - 4), opts), 'BAD_FILE', /past the data|after the last tensor/);
  assert.ok(await memory(opts) < 8 * 2 ** 20, 'a refused header allocates no arena');
});
