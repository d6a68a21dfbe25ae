// Bad input of every kind gets a SwapformerError with a stable code and a
// message naming the field; nothing traps, and a good model in the same
// process keeps giving bit-identical answers. Plus the lifetime checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEncoder, loadModel, runtimeInfo, configure } from '../bindings/index.js';
import { rejects, assertBitIdentical } from './helpers.js';

const cfg = {
  vocabSize: 20,
  dModel: 8,
  heads: 2,
  layers: 1,
  ffDim: 12,
  maxLen: 6,
  position: 'learned',
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'gelu',
};
const good = await createEncoder({ ...cfg, position: 'rope', maxLen: 512 }, { seed: 1 });
const goodIds = [
  [1, 2, 3, 4, 5, 6, 7],
  [8, 9],
];
const reference = good.forward(goodIds, { outputAttentions: true });

// After every error: the good model still answers with the same bits.
function stillGood() {
  const r = good.forward(goodIds, { outputAttentions: true });
  assertBitIdentical(r.data, reference.data, 'good model after an error');
  assertBitIdentical(r.attentions[0].data, reference.attentions[0].data, 'attentions after an error');
}

// ------------------------------------------------------------ file builder

const enc = new TextEncoder();
const validFile = (await createEncoder(cfg, { seed: 2 })).save();
const headerOf = (bytes) => {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))), data: bytes.subarray(8 + n) };
};
const { header: validHeader, data: validData } = headerOf(validFile);

/** A file from a header (object or raw string) and data bytes; lengthOverride sets the u64 header length. */
function file(header, data = validData, lengthOverride) {
  const text = typeof header === 'string' ? header : JSON.stringify(header);
  const h = enc.encode(text);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, lengthOverride ?? BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}
const clone = () => structuredClone(validHeader);
const withConfig = (change) => {
  const h = clone();
  h.__metadata__.config = JSON.stringify({ ...JSON.parse(h.__metadata__.config), ...change });
  return h;
};

test('a valid file made by the builder loads (the builder itself is right)', async () => {
  const e = await loadModel(file(clone()));
  assertBitIdentical(e.forward([1, 2]).data, (await loadModel(validFile)).forward([1, 2]).data);
});

test('BAD_FILE: empty, truncated, lengths out of range', async () => {
  await rejects(loadModel(new Uint8Array(0)), 'BAD_FILE', /0 bytes/);
  for (const cut of [1, 7, 8, 9, 50, validFile.length - 1]) await rejects(loadModel(validFile.subarray(0, cut)), 'BAD_FILE');
  await rejects(loadModel(file(clone(), validData, 2n ** 63n)), 'BAD_FILE', /header length .* exceeds the file/);
  await rejects(loadModel(file(clone(), validData, 2n ** 64n - 1n)), 'BAD_FILE', /exceeds the file/);
  await rejects(loadModel(file(clone(), validData, BigInt(validFile.length))), 'BAD_FILE', /exceeds the file/);
  stillGood();
});

test('BAD_FILE: a header that is not JSON, or not an object', async () => {
  await rejects(loadModel(file('{"a": ', new Uint8Array(0))), 'BAD_FILE', /invalid JSON/);
  await rejects(loadModel(file('\u0000\u0001garbage', new Uint8Array(0))), 'BAD_FILE', /invalid JSON/);
  await rejects(loadModel(file('[1, 2, 3]', new Uint8Array(0))), 'BAD_FILE', /must be a JSON object/);
  await rejects(loadModel(file('"text"', new Uint8Array(0))), 'BAD_FILE', /must be a JSON object/);
  await rejects(loadModel(file('{"a": 1} trailing', new Uint8Array(0))), 'BAD_FILE', /trailing/);
  await rejects(loadModel(file('['.repeat(100000), new Uint8Array(0))), 'BAD_FILE', /nested too deeply/);
  await rejects(loadModel(file('{"a": "\\ud800"}', new Uint8Array(0))), 'BAD_FILE', /surrogate/);
  const badUtf8 = file('{"a": "xx"}', new Uint8Array(0));
  badUtf8[8 + 7] = 0xff;
  await rejects(loadModel(badUtf8), 'BAD_FILE', /UTF-8/);
  stillGood();
});

test('BAD_FILE: metadata missing, not swapformer, no config', async () => {
  const noMeta = clone();
  delete noMeta.__metadata__;
  await rejects(loadModel(file(noMeta)), 'BAD_FILE', /__metadata__/);
  const other = clone();
  other.__metadata__.format = 'pt';
  await rejects(loadModel(file(other)), 'BAD_FILE', /format/);
  const noConfig = clone();
  delete noConfig.__metadata__.config;
  await rejects(loadModel(file(noConfig)), 'BAD_FILE', /no __metadata__\.config/);
  const nonString = clone();
  nonString.__metadata__.extra = 5;
  await rejects(loadModel(file(nonString)), 'BAD_FILE', /must be strings/);
  stillGood();
});

test('BAD_FILE: data_offsets past the end, reversed, overlapping, leaving holes, trailing bytes', async () => {
  const name = 'layers.0.attn.q.bias';
  const h1 = clone();
  h1[name].data_offsets = [validData.length - 16, validData.length + 16];
  await rejects(loadModel(file(h1)), 'BAD_FILE', new RegExp(`'${name}'.*past the data`));
  const h2 = clone();
  h2[name].data_offsets = [h2[name].data_offsets[1], h2[name].data_offsets[0]];
  await rejects(loadModel(file(h2)), 'BAD_FILE', /reversed/);
  const h3 = clone(); // point this tensor at the previous tensor's bytes: an overlap
  const [b] = h3[name].data_offsets;
  h3[name].data_offsets = [b - 32, b];
  await rejects(loadModel(file(h3)), 'BAD_FILE', /overlap or leave a hole/);
  const h4 = clone(); // shift every tensor by 4 bytes: a hole at the start
  for (const [k, t] of Object.entries(h4)) if (k !== '__metadata__') t.data_offsets = t.data_offsets.map((x) => x + 4);
  await rejects(loadModel(file(h4, new Uint8Array(validData.length + 4))), 'BAD_FILE', /hole/);
  await rejects(loadModel(file(clone(), new Uint8Array([...validData, 0, 0, 0, 0]))), 'BAD_FILE', /after the last tensor/);
  const h5 = clone();
  h5[name].data_offsets = [-4, 28];
  await rejects(loadModel(file(h5)), 'BAD_FILE', /data_offsets must be integers in \[0, (4294967295|9\.007199e15)\]/); // size_t: wasm32's, or 2^53 natively
  const h6 = clone();
  h6[name].data_offsets = [2 ** 60, 2 ** 60 + 32];
  await rejects(loadModel(file(h6)), 'BAD_FILE', /data_offsets must be integers/);
  const h7 = clone();
  h7[name].data_offsets = [2 ** 40, 2 ** 40 + 32]; // beyond a wasm32 size_t: refused, not wrapped or saturated; natively past the data
  const native = (await runtimeInfo()).backend === 'native'; // a 64-bit size_t: these sizes are numbers, wrong ones
  await rejects(loadModel(file(h7)), 'BAD_FILE', native ? /past the data/ : /data_offsets must be integers/);
  const h8 = clone();
  h8[name].data_offsets = [2 ** 31, 2 ** 31 + 32];
  await rejects(loadModel(file(h8)), 'BAD_FILE', /past the data/);
  const h9 = clone();
  h9['embed.tokens'].shape = [2 ** 33, 8];
  await rejects(loadModel(file(h9)), 'BAD_FILE', native ? /span 640 bytes, dtype x shape needs 274877906944/ : /shape must hold integers/);
  const h10 = clone();
  h10['embed.tokens'].shape = [2 ** 20, 2 ** 20, 2 ** 20];
  await rejects(loadModel(file(h10)), 'BAD_FILE', native ? /needs 4611686018427387904/ : /shape overflows/);
  stillGood();
});

test('BAD_FILE: unsupported dtypes and malformed tensor entries', async () => {
  for (const dtype of ['F64', 'I32', 'U8', 'f32', 7]) {
    const h = clone();
    h['embed.tokens'].dtype = dtype;
    await rejects(loadModel(file(h)), 'BAD_FILE', /embed\.tokens.*dtype/);
  }
  const h = clone();
  h['embed.tokens'].shape = [20, 'eight'];
  await rejects(loadModel(file(h)), 'BAD_FILE', /shape/);
  const h2 = clone();
  h2['embed.tokens'].shape = [20, 4]; // bytes no longer match dtype x shape
  await rejects(loadModel(file(h2)), 'BAD_FILE', /span .* bytes, dtype x shape needs/);
  const h3 = clone();
  delete h3['embed.tokens'].dtype;
  await rejects(loadModel(file(h3)), 'BAD_FILE', /needs dtype, shape and data_offsets/);
  stillGood();
});

test('BAD_WEIGHTS: shapes that disagree with the config, missing, unexpected or repeated tensors', async () => {
  const h = clone(); // same byte length, transposed shape
  h['layers.0.ffn.up.weight'].shape = [8, 12];
  await rejects(loadModel(file(h)), 'BAD_WEIGHTS', /'layers\.0\.ffn\.up\.weight' has the wrong shape; config needs \[12, 8\]/);
  // a tensor missing: drop it and its bytes
  const h2 = clone(),
    drop = 'layers.0.norm2.weight',
    [b, e] = h2[drop].data_offsets;
  delete h2[drop];
  for (const [k, t] of Object.entries(h2)) if (k !== '__metadata__' && t.data_offsets[0] >= e) t.data_offsets = t.data_offsets.map((x) => x - (e - b));
  const data2 = new Uint8Array([...validData.subarray(0, b), ...validData.subarray(e)]);
  await rejects(loadModel(file(h2, data2)), 'BAD_WEIGHTS', /no tensor 'layers\.0\.norm2\.weight'/);
  // absent biases are zeros, not an error
  const h3 = clone(),
    bias = 'layers.0.ffn.down.bias',
    [b3, e3] = h3[bias].data_offsets;
  delete h3[bias];
  for (const [k, t] of Object.entries(h3)) if (k !== '__metadata__' && t.data_offsets[0] >= e3) t.data_offsets = t.data_offsets.map((x) => x - (e3 - b3));
  const m = await loadModel(file(h3, new Uint8Array([...validData.subarray(0, b3), ...validData.subarray(e3)])));
  assert.ok(m.getWeights()[bias].every((x) => x === 0));
  // unexpected: a tensor this config does not use
  const h4 = clone();
  h4['layers.1.attn.q.bias'] = { dtype: 'F32', shape: [8], data_offsets: [validData.length, validData.length + 32] };
  await rejects(
    loadModel(file(h4, new Uint8Array([...validData, ...new Uint8Array(32)]))),
    'BAD_WEIGHTS',
    /'layers\.1\.attn\.q\.bias' that this config does not use/,
  );
  // the same name twice (JSON allows repeated keys; we do not)
  const text = JSON.stringify(clone()).replace(/}$/, `,"embed.tokens":${JSON.stringify(validHeader['embed.tokens'])}}`);
  await rejects(loadModel(file(text)), 'BAD_WEIGHTS', /'embed\.tokens' twice/);
  stillGood();
});

test('BAD_WEIGHTS: NaN or Infinity in weights is refused, in files and in createEncoder', async () => {
  for (const bad of [NaN, Infinity, -Infinity]) {
    const data = new Uint8Array(validData);
    const at = validHeader['layers.0.attn.v.weight'].data_offsets[0];
    new DataView(data.buffer).setFloat32(at + 4 * 5, bad, true);
    await rejects(loadModel(file(clone(), data)), 'BAD_WEIGHTS', /'layers\.0\.attn\.v\.weight' holds a non-finite value .* at index 5/);
    await rejects(createEncoder(cfg, { weights: { 'embed.tokens': new Float32Array(160).fill(bad) } }), 'BAD_WEIGHTS', /embed\.tokens.*non-finite/);
  }
  stillGood();
});

test('BAD_CONFIG in a file, and every config mistake through createEncoder', async () => {
  await rejects(loadModel(file(withConfig({ dModel: 9 }))), 'BAD_CONFIG', /dModel \(9\) must be divisible by config\.heads \(2\)/);
  const h = clone();
  h.__metadata__.config = '{not json';
  await rejects(loadModel(file(h)), 'BAD_CONFIG', /config: invalid JSON/);
  const cases = [
    [{ dModel: 10, heads: 4 }, /divisible/],
    [{ position: 'rope', dModel: 6, heads: 2 }, /RoPE needs an even head size, headDim = 3/],
    [{ position: 'sinusoidal', dModel: 7, heads: 1 }, /dModel \(7\) must be even for sinusoidal/],
    [{ vocabSize: 0 }, /vocabSize must be an integer in \[1,/],
    [{ dModel: -8 }, /dModel must be an integer/],
    [{ heads: 0 }, /heads must be an integer/],
    [{ ffDim: 1e9 }, /ffDim must be an integer in \[1, 1048576\], got 1000000000/],
    [{ layers: 5000 }, /layers must be an integer in \[0, 1024\]/],
    [{ maxLen: 0 }, /maxLen/],
    [{ position: 'xpos' }, /position 'xpos' is not a registered/],
    [{ position: 5 }, /position must be a string/],
    [{ norm: 'batchnorm' }, /norm 'batchnorm'/],
    [{ normPlacement: 'middle' }, /normPlacement must be 'pre' or 'post'/],
    [{ activation: 'tanh' }, /activation 'tanh'/],
    [{ activation: null }, /activation must be a string/],
    [{ eps: -1 }, /eps must be a number in \(0, 1\]/],
    [{ eps: '1e-5' }, /eps must be a number/],
    [{ eps: 1e-50 }, /eps .* is zero in float32/],
    [{ finalNorm: 'yes' }, /finalNorm must be true or false/],
    [{ scaleEmbedding: 1 }, /scaleEmbedding must be true or false/],
    [{ heads: 2.5 }, /heads must be an integer .* got 2\.5/],
    [{ vocabSize: NaN }, /vocabSize must be an integer .* got null/],
    [{ dModel: [8] }, /dModel must be an integer .* got an array/],
    [{ position: 'rope', positionOptions: { base: 0.5 } }, /positionOptions\.base must be in/],
    [{ position: 'rope', positionOptions: { style: 'neox' } }, /positionOptions\.style must be one of interleaved, half/],
    [{ position: 'sinusoidal', positionOptions: { style: 'half' } }, /positionOptions has an unknown field 'style'/],
    [{ position: 'alibi', positionOptions: { base: 10 } }, /takes no options/],
    [{ position: 'learned', positionOptions: { base: 10 } }, /positionOptions has an unknown field 'base'/],
    [{ position: 'learned', maxLen: 8, positionOptions: { offset: 8 } }, /offset \(8\) leaves no row/],
    [{ headDim: 0 }, /headDim must be an integer/],
    [{ attnScale: 0 }, /attnScale must be in \(0/],
    [{ localLayers: [0] }, /localLayers needs config\.localWindow/],
    [{ localWindow: 4 }, /localWindow applies to config\.localLayers/],
    [{ localWindow: 4, localLayers: [0, 0] }, /increasing/],
    [{ localWindow: 4, localLayers: [7] }, /localLayers\[0\] must be a layer index/],
    [{ typeVocabSize: 300 }, /typeVocabSize must be an integer in \[0, 256\]/],
    [{ firstAttnNorm: false, normPlacement: 'post' }, /firstAttnNorm: false applies to normPlacement 'pre'/],
    [{ position: 't5', positionOptions: { buckets: 30 } }, /multiple of 4/],
    [{ position: 'rope', positionOptions: { scaling: { type: 'dynamic', factor: 2 } } }, /originalMaxLen is required for dynamic/],
    [{ positionOptions: [] }, /positionOptions must be an object/],
    [{ extra: true }, /unknown field 'extra'/],
  ];
  for (const [change, re] of cases) await rejects(createEncoder({ ...cfg, ...change }), 'BAD_CONFIG', re);
  for (const missing of ['vocabSize', 'dModel', 'heads', 'layers', 'ffDim', 'position', 'norm', 'normPlacement', 'activation']) {
    const c = { ...cfg };
    delete c[missing];
    await rejects(createEncoder(c), 'BAD_CONFIG', new RegExp(`config\\.${missing} is required`));
  }
  await rejects(createEncoder('{"vocabSize": 3}'), 'BAD_CONFIG', /must be an object/);
  await rejects(createEncoder([cfg]), 'BAD_CONFIG', /must be an object/);
  const cyclic = { ...cfg };
  cyclic.self = cyclic;
  await rejects(createEncoder(cyclic), 'BAD_CONFIG', /serialisable/);
  stillGood();
});

test('OUT_OF_MEMORY: configs and batches larger than wasm32 can hold, never a trap', async (t) => {
  configure({ backend: 'wasm' }); // wasm32's 4 GB (natively: past the allocation limit, tests/native.test.js)
  t.after(() => configure({ backend: undefined }));
  await rejects(
    createEncoder({ ...cfg, vocabSize: 1 << 24, dModel: 1 << 20, heads: 1 }),
    'OUT_OF_MEMORY',
    /embed\.tokens|parameter memory|the parameters need/,
  );
  await rejects(createEncoder({ ...cfg, vocabSize: 600000, dModel: 1024, heads: 1, layers: 0 }), 'OUT_OF_MEMORY', /out of memory/);
  await rejects(createEncoder({ ...cfg, dModel: 65536, ffDim: 1 << 20, heads: 1, layers: 1024 }), 'OUT_OF_MEMORY');
  const wide = await createEncoder({ ...cfg, position: 'alibi', vocabSize: 4, dModel: 256, heads: 256, ffDim: 4 });
  // attentions of 8 x 256 heads x 16384^2 floats: far past 4 GB
  await rejects(() => wide.forward(new Array(8).fill(new Array(16384).fill(1)), { outputAttentions: true }), 'OUT_OF_MEMORY');
  assert.deepEqual(wide.forward([1, 2, 3]).shape, [1, 3, 256]);
  wide.dispose();
  stillGood();
});

test('BAD_TOKEN / BAD_ARGUMENT / SEQUENCE_TOO_LONG: every bad id, named by its place', async () => {
  const e = await createEncoder(cfg, { seed: 3 });
  const bad = [
    [[20], /ids\[0\] = 20 is not a token id in \[0, 20\)/],
    [[-1], /ids\[0\] = -1/],
    [[0.5], /= 0\.5/],
    [[NaN], /= NaN/],
    [[Infinity], /= Infinity/],
    [['3'], /= string "3"/],
    [[null], /= object null/],
    [[undefined], /= undefined/],
    [[3n], /= 3n/],
    [[{}], /= object \{\}/],
    [
      [
        [1, 2],
        [3, 2 ** 31],
      ],
      /ids\[1\]\[1\] = 2147483648/,
    ],
    [[true], /boolean true/],
  ];
  for (const [ids, re] of bad) await rejects(() => e.forward(ids), 'BAD_TOKEN', re);
  await rejects(() => e.forward(new Int32Array([1, 25])), 'BAD_TOKEN', /ids\[1\] = 25/);
  await rejects(() => e.forward([]), 'BAD_ARGUMENT', /empty/);
  await rejects(() => e.forward([[1], []]), 'BAD_ARGUMENT', /ids\[1\] is empty/);
  await rejects(() => e.forward(new Int32Array(0)), 'BAD_ARGUMENT', /empty/);
  await rejects(() => e.forward(null), 'BAD_ARGUMENT', /ids must be/);
  await rejects(() => e.forward(42), 'BAD_ARGUMENT', /ids must be/);
  await rejects(() => e.forward([[1], 2]), 'BAD_ARGUMENT', /ids must be/);
  await rejects(() => e.forward(new Array(7).fill(1)), 'SEQUENCE_TOO_LONG', /ids has 7 tokens; position 'learned' encodes at most 6/);
  await rejects(() => e.positionVectors(7), 'SEQUENCE_TOO_LONG');
  await rejects(() => e.positionScores({ length: -1 }), 'BAD_ARGUMENT', /length/);
  assert.deepEqual(e.forward(new Array(6).fill(1)).shape, [1, 6, 8]);
  stillGood();
});

test('DISPOSED: every method after dispose()', async () => {
  const e = await createEncoder(cfg);
  e.dispose();
  for (const call of [
    () => e.forward([1]),
    () => e.getWeights(),
    () => e.weightShapes(),
    () => e.save(),
    () => e.positionVectors(2),
    () => e.positionScores({ length: 2 }),
    () => e.maxSequenceLength,
  ])
    await rejects(call, 'DISPOSED', /disposed/);
  stillGood();
});

test('a wasm option that cannot be loaded is WASM_LOAD (naming it); one of the wrong type BAD_ARGUMENT', async () => {
  await rejects(createEncoder(cfg, { wasm: new URL('file:///nonexistent/swapformer.wasm') }), 'WASM_LOAD', /options\.wasm.*nonexistent.*ENOENT/);
  await rejects(createEncoder(cfg, { wasm: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1]) }), 'WASM_LOAD', /options\.wasm/);
  await rejects(createEncoder(cfg, { wasm: 42 }), 'BAD_ARGUMENT', /options\.wasm must be/);
  stillGood();
});

test('10,000 create/forward/dispose cycles keep the wasm memory flat', async (t) => {
  configure({ backend: 'wasm' }); // the wasm's memory (natively, LeakSanitizer checks the core: ./build.sh sanitize)
  t.after(() => configure({ backend: undefined }));
  const config = { ...cfg, position: 'alibi', layers: 2 };
  const run = async () => {
    const e = await createEncoder(config, { seed: 5 });
    const r = e.forward(
      [
        [1, 2, 3, 4, 5],
        [6, 7],
      ],
      { outputAttentions: true },
    );
    e.dispose();
    return r.data;
  };
  const first = await run();
  for (let i = 0; i < 200; i++) await run(); // let the allocator settle
  const before = (await runtimeInfo()).memoryBytes;
  for (let i = 0; i < 10000; i++) {
    const out = await run();
    if (i % 1000 === 0) assertBitIdentical(out, first, `cycle ${i}`);
  }
  const after = (await runtimeInfo()).memoryBytes;
  assert.equal(after, before, `wasm memory grew from ${before} to ${after} bytes`);
  stillGood();
});

test('sizes beyond wasm32 are OUT_OF_MEMORY, not wrapped', async (t) => {
  configure({ backend: 'wasm' });
  t.after(() => configure({ backend: undefined }));
  const big = new Float32Array(2 ** 29 + 16); // 2 GB + 64 bytes
  await rejects(createEncoder(cfg, { weights: { 'embed.tokens': big } }), 'OUT_OF_MEMORY', /do not fit in wasm32/);
  stillGood();
});

test('a deep model file (1024 layers, 18,435 tensors) loads in linear time', async () => {
  const deep = await createEncoder(
    { vocabSize: 2, dModel: 4, heads: 1, layers: 1024, ffDim: 4, position: 'rope', norm: 'layernorm', normPlacement: 'pre', activation: 'geglu' },
    { seed: 1 },
  );
  const bytes = deep.save();
  deep.dispose();
  const t = performance.now();
  const back = await loadModel(bytes);
  const ms = performance.now() - t;
  assert.equal(back.weightShapes()['layers.1023.ffn.gate.weight'][0], 4);
  back.dispose();
  assert.ok(ms < 2000, `loading took ${ms.toFixed(0)} ms (a quadratic lookup takes ~3 s here)`);
  await rejects(
    loadModel(file(clone())).then(() => createEncoder(cfg, { weights: { 'layers.01.attn.q.bias': new Float32Array(8) } })),
    'BAD_WEIGHTS',
    /layers\.01/,
  );
});
