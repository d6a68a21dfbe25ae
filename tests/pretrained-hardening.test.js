// Hostile input to the pretrained loader's files and downloads, through the
// public API (loadPretrained, openSource, readWeights, the converter):
//  - converted model files whose __metadata__ (recipe, tokenizer_config,
//    hf_config, family) is not what the converter writes;
//  - folders: non-finite Dense weights, pooling that cannot feed a Dense, JSON
//    nested too deep, FIFOs, sockets, oversized files, symlinks out of the
//    folder (and the Hugging Face hub cache layout, which must work);
//  - downloads on tests/hub-server.js: many shards, a failing shard (the rest
//    cancelled, nothing after the rejection), a body that stops, an answer
//    that never comes, the signal option, lying Content-Length, a gzip bomb,
//    a fetch option that answers no Response;
//  - the converter: what it embeds is parsed, symlinks are refused, a failed
//    write keeps the previous file;
//  - a bounded-time mutation run over model-file metadata and shard indexes.
// Every outcome is a loaded model or a SwapformerError with the code the
// README lists; a repro that could hang runs in a child process with a timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, mkdirSync, rmSync, cpSync, symlinkSync, existsSync, readdirSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadPretrained, SwapformerError } from '../bindings/index.js';
import { openSource, MAX_JSON_DEPTH } from '../bindings/pretrained/files.js';
import { readWeights, MAX_SHARDS, SHARD_CONCURRENCY } from '../bindings/pretrained/safetensors.js';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { writeModelFile } from '../bindings/pretrained/model-file.js';
import { startHub } from './hub-server.js';
import { rejects, assertBitIdentical } from './helpers.js';

const ROOT = fileURLToPath(new URL('./pretrained/', import.meta.url));
const REPO = fileURLToPath(new URL('../', import.meta.url));
const BIN = path.join(REPO, 'bin', 'swapformer.js');
const url = (rel) => pathToFileURL(path.join(REPO, rel)).href;

/** Runs ES module text in a child node with a timeout: {code, signal, stdout, stderr, timedOut}. */
function runChild(source, { timeout = 20000, args = [] } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-child-'));
  const file = path.join(dir, 'child.mjs');
  writeFileSync(file, source);
  return new Promise((resolve) => {
    execFile(process.execPath, ['--experimental-wasm-relaxed-simd', file, ...args], { timeout, killSignal: 'SIGKILL', maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: error?.code ?? 0, signal: error?.signal ?? null, timedOut: error?.killed === true, stdout, stderr });
    });
  });
}
/** The child's last stdout line as JSON; fails with its output when it did not finish cleanly. */
function childResult(r, what) {
  assert.ok(!r.timedOut, `${what}: the child hung (killed after its timeout)\n${r.stdout}\n${r.stderr}`);
  assert.equal(r.code, 0, `${what}: the child exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

/** A temp copy of a fixture folder; changes: {file: text | object (JSON) | null (delete)}. */
function copyCase(c, changes = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-hard-'));
  cpSync(path.join(ROOT, c), dir, { recursive: true });
  for (const [file, v] of Object.entries(changes)) {
    const p = path.join(dir, file);
    if (v === null) rmSync(p, { force: true });
    else writeFileSync(p, typeof v === 'string' || v instanceof Uint8Array ? v : JSON.stringify(v, null, 1));
  }
  return dir;
}
const readJSON = (c, file) => JSON.parse(readFileSync(path.join(ROOT, c, file), 'utf8'));
const deep = (n, leaf = '1') => `${'{"a":'.repeat(n)}${leaf}${'}'.repeat(n)}`;
const b64 = (floats) => Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');

// ---------------------------------------------------------------------------
// Converted model files

const CK = await readCheckpoint(path.join(ROOT, 'bert-dense-pairs')); // a Dense (tanh, bias) and three pooling modes
const RECIPE = CK.metadata.recipe;
const DENSE = RECIPE.dense[0];
/** A converted file of bert-dense-pairs with metadata fields replaced (a string is kept as the raw text). */
const modelFile = (changes) => writeModelFile(CK.config, CK.tensors, { ...CK.metadata, ...changes });
const withDense = (changes) => modelFile({ recipe: { ...RECIPE, dense: [{ ...DENSE, ...changes }] } });

test('model files: metadata fields that are not JSON, or not of their type, are BAD_FILE naming the field', async () => {
  const cases = [
    [{ recipe: 'not json' }, /__metadata__\.recipe is not valid JSON/],
    [{ tokenizer_config: '{"model_max_length": ' }, /__metadata__\.tokenizer_config is not valid JSON/],
    [{ hf_config: 'hf' }, /__metadata__\.hf_config is not valid JSON/],
    [{ special_tokens_map: '[1]' }, /__metadata__\.special_tokens_map: must be a JSON object/],
    [{ tokenizer: '"a string"' }, /__metadata__\.tokenizer: must be a JSON object/],
    [{ recipe: 'null' }, /__metadata__\.recipe: must be a JSON object/],
    [{ recipe: '[]' }, /__metadata__\.recipe: must be a JSON object/],
    [{ recipe: { ...RECIPE, dense: 5 } }, /recipe: dense must be an array/],
    [{ recipe: { ...RECIPE, dense: [5] } }, /recipe: dense\[0\]: must be an object/],
    [{ recipe: { ...RECIPE, maxSeqLength: 'abc' } }, /recipe: maxSeqLength must be a positive integer/],
    [{ recipe: { ...RECIPE, maxSeqLength: 0 } }, /maxSeqLength/],
    [{ recipe: { ...RECIPE, pooling: ['median'] } }, /recipe: pooling must list distinct modes/],
    [{ recipe: { ...RECIPE, pooling: [] } }, /pooling/],
    [{ recipe: { ...RECIPE, pooling: 'cls' } }, /pooling/],
    [{ recipe: { ...RECIPE, normalize: 'yes' } }, /recipe: normalize must be true or false/],
    [{ recipe: { ...RECIPE, doLowerCase: 1 } }, /doLowerCase/],
    [{ recipe: { ...RECIPE, prompts: { q: 1 } } }, /prompts/],
    [{ recipe: { ...RECIPE, defaultPromptName: 'query' } }, /defaultPromptName/],
    [{ recipe: { ...RECIPE, source: 'elsewhere' } }, /source/],
    [{ recipe: { ...RECIPE, extra: 1 } }, /recipe: unknown field 'extra'/],
    [{ recipe: `{"__proto__": {"pooling": ["cls"]}, ${JSON.stringify(RECIPE).slice(1)}` }, /unknown field '__proto__'/],
    [{ family: 'gpt2' }, /__metadata__\.family: "gpt2" is not one of bert, roberta/],
    [{ family: 'constructor' }, /family/],
    [{ recipe: deep(10 ** 4) }, /__metadata__\.recipe nests objects or arrays more than 64 deep/],
    [{ tokenizer_config: deep(10 ** 4) }, /__metadata__\.tokenizer_config nests/],
    [{ hf_config: `{"model_type": "bert", "x": ${deep(10 ** 5)}}` }, /__metadata__\.hf_config nests/],
  ];
  for (const [changes, re] of cases) await rejects(loadPretrained(modelFile(changes)), 'BAD_FILE', re);
  // a file without a family at all
  const { family: _f, ...noFamily } = CK.metadata;
  await rejects(loadPretrained(writeModelFile(CK.config, CK.tensors, noFamily)), 'BAD_FILE', /__metadata__\.family: undefined/);
  // the same file read from a path is refused the same way
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-hard-'));
  try {
    writeFileSync(path.join(dir, 'm.safetensors'), modelFile({ recipe: 'null' }));
    await rejects(loadPretrained(path.join(dir, 'm.safetensors')), 'BAD_FILE', /__metadata__\.recipe: must be a JSON object/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // and the untouched file loads, with the folder's embeddings
  const good = await loadPretrained(modelFile({}));
  const folder = await loadPretrained(path.join(ROOT, 'bert-dense-pairs'));
  assertBitIdentical(good.embed(['a text']).data, folder.embed(['a text']).data, 'converted');
  good.dispose();
  folder.dispose();
});

test('model files: Dense weights truncated, not base64, NaN, of a lying size, or with an inherited activation name are refused', async () => {
  const weight = new Float32Array(Buffer.from(DENSE.weight, 'base64').buffer.slice(0));
  const nan = weight.slice();
  nan[3] = NaN;
  const inf = weight.slice();
  inf[95] = -Infinity;
  const where = /__metadata__\.recipe: dense\[0\]/;
  for (const [changes, code, re] of [
    [{ weight: b64(weight.subarray(0, 100)) }, 'BAD_FILE', /dense\[0\]: the weight must be 24 x 96 float32 values/],
    [{ weight: DENSE.weight.slice(0, -2) }, 'BAD_FILE', /dense\[0\]\.weight: (has \d+ bytes, not a whole number of float32 values|must be base64)/],
    [{ weight: '@@not base64@@' }, 'BAD_FILE', /dense\[0\]\.weight: must be base64 text of float32 values/],
    [{ weight: 12 }, 'BAD_FILE', /dense\[0\]\.weight: must be base64/],
    [{ bias: b64(new Float32Array(5)) }, 'BAD_FILE', /dense\[0\]: the bias must be 24 float32 values/],
    [{ weight: b64(nan) }, 'BAD_WEIGHTS', /__metadata__\.recipe: dense\[0\]\.weight\[3\] is NaN/],
    [{ weight: b64(inf) }, 'BAD_WEIGHTS', /dense\[0\]\.weight\[95\] is -Infinity/],
    [{ outFeatures: 48 }, 'BAD_FILE', /dense\[0\]: the weight must be 48 x 96/],
    [{ inFeatures: 48, outFeatures: 48 }, 'BAD_FILE', /dense\[0\]: in_features is 48, but the pooling \(cls \+ max \+ mean of 32 hidden features\) gives 96/],
    [{ inFeatures: '96' }, 'BAD_FILE', /inFeatures and outFeatures must be positive integers/],
    ...['toString', 'constructor', 'valueOf', '__proto__', 'hasOwnProperty', 'softplus', 7].map((a) => [{ activation: a }, 'BAD_FILE', /dense\[0\]: activation .* is not one of identity, tanh/]),
    [{ path: 3 }, 'BAD_FILE', /path must be a string/],
    [{ scale: 2 }, 'BAD_FILE', /dense\[0\]: unknown field 'scale'/],
  ]) {
    const e = await rejects(loadPretrained(withDense(changes)), code, re);
    assert.match(e.message, where, e.message);
  }
  // a second Dense whose input does not chain from the first
  const two = { ...RECIPE, dense: [DENSE, { ...DENSE, inFeatures: 96 }] };
  await rejects(loadPretrained(modelFile({ recipe: two })), 'BAD_FILE', /dense\[1\]: in_features is 96, but the Dense module before it gives 24/);
});

// ---------------------------------------------------------------------------
// Folders

test('2_Dense/model.safetensors holding NaN or Infinity is BAD_WEIGHTS naming the file, the tensor and the index', async () => {
  const raw = new Uint8Array(readFileSync(path.join(ROOT, 'bert-dense-pairs', '2_Dense', 'model.safetensors')));
  const { parseSafetensors } = await import('../bindings/pretrained/safetensors.js');
  for (const [tensor, index, value] of [['linear.weight', 7, NaN], ['linear.bias', 23, Infinity]]) {
    const bytes = raw.slice();
    const t = parseSafetensors(bytes, 'x').tensors.get(tensor);
    new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength).setFloat32(4 * index, value, true);
    const dir = copyCase('bert-dense-pairs', { '2_Dense/model.safetensors': bytes });
    try {
      await rejects(loadPretrained(dir), 'BAD_WEIGHTS', new RegExp(`2_Dense/model\\.safetensors: ${tensor.replace('.', '\\.')}\\[${index}\\] is ${value}`));
      // the converter refuses it too (exit 1, no file)
      const out = path.join(dir, 'out.safetensors');
      const r = await runChild(`process.argv.splice(2, 0, 'convert', ${JSON.stringify(dir)}, ${JSON.stringify(out)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /BAD_WEIGHTS: 2_Dense\/model\.safetensors/);
      assert.ok(!existsSync(out));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('pooling that cannot feed 2_Dense is refused at load, naming 2_Dense/config.json', async () => {
  const pooling = readJSON('bert-dense-pairs', '1_Pooling/config.json');
  // cls + mean of 32 features is 64, the Dense takes 96: without word_embedding_dimension nothing caught it before the first embed
  const { word_embedding_dimension: _d, ...noDim } = pooling;
  const dir = copyCase('bert-dense-pairs', { '1_Pooling/config.json': { ...noDim, pooling_mode_max_tokens: false } });
  try {
    await rejects(loadPretrained(dir), 'BAD_FILE', /2_Dense\/config\.json: in_features is 96, but the pooling \(cls \+ mean of 32 hidden features\) gives 64 features/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // a word_embedding_dimension that is not the hidden size, chained into a Dense sized from it
  const wrong = copyCase('bert-dense-pairs', { '1_Pooling/config.json': { ...pooling, word_embedding_dimension: 16 },
    '2_Dense/config.json': { ...readJSON('bert-dense-pairs', '2_Dense/config.json'), in_features: 48 } });
  try {
    await rejects(loadPretrained(wrong), 'BAD_FILE', /2_Dense\/(config\.json|model\.safetensors)/);
  } finally {
    rmSync(wrong, { recursive: true, force: true });
  }
});

test('config fields: ModernBERT global_attn_every_n_layers 0 and T5 feed_forward_proj of another type are refused naming the field', async () => {
  const modern = readJSON('modernbert-embed', 'config.json');
  const t5 = readJSON('sentence-t5', 'config.json');
  for (const [c, config, re] of [
    ['modernbert-embed', { ...modern, global_attn_every_n_layers: 0 }, /config\.json: global_attn_every_n_layers = 0/],
    ['modernbert-embed', { ...modern, global_attn_every_n_layers: -1 }, /global_attn_every_n_layers/],
    ['sentence-t5', { ...t5, feed_forward_proj: 5 }, /config\.json: feed_forward_proj = 5 is not supported/],
    ['sentence-t5', { ...t5, feed_forward_proj: ['gated-gelu'] }, /feed_forward_proj = \["gated-gelu"\]/],
    ['sentence-t5', { ...t5, feed_forward_proj: 'gated-gelu-new' }, /feed_forward_proj = "gated-gelu-new"/],
    ['sentence-t5', { ...t5, dense_act_fn: 'constructor' }, /dense_act_fn|act = "constructor"/],
    ['sentence-t5', { ...t5, dense_act_fn: 'toString' }, /"toString" is not supported/],
  ]) {
    const dir = copyCase(c, { 'config.json': config });
    try {
      await rejects(loadPretrained(dir), 'UNSUPPORTED_MODEL', re);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test(`JSON nested deeper than ${MAX_JSON_DEPTH} is BAD_FILE naming the file (folders, file maps, the converter)`, async () => {
  const config = readJSON('bert-minilm', 'config.json');
  const tokenizer = readFileSync(path.join(ROOT, 'bert-minilm', 'tokenizer.json'), 'utf8');
  const cases = [
    ['config.json', JSON.stringify({ ...config, unused: 0 }).replace('"unused":0', `"unused":${deep(10 ** 5)}`)],
    ['tokenizer_config.json', `{"unused": ${deep(10 ** 4)}}`],
    ['tokenizer.json', `{"unused": ${deep(10 ** 4, '[]')}, ${tokenizer.trim().slice(1)}`],
    ['modules.json', `[${deep(100)}]`],
    ['1_Pooling/config.json', deep(MAX_JSON_DEPTH + 1)],
  ];
  for (const [file, text] of cases) {
    const dir = copyCase('bert-minilm', { [file]: text });
    try {
      await rejects(loadPretrained(dir), 'BAD_FILE', new RegExp(`${file.replace(/[./]/g, '\\$&')} \\(in [^)]*\\) nests objects or arrays more than ${MAX_JSON_DEPTH} deep`));
      const src = await openSource(new Map([['config.json', '{}'], [file, text]]));
      if (file !== 'tokenizer.json') await rejects(src.readJSON(file), 'BAD_FILE', /nests/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // exactly the limit is fine; strings with brackets and escaped quotes do not count
  const src = await openSource(new Map([['config.json', '{}'], ['a.json', deep(MAX_JSON_DEPTH)], ['b.json', JSON.stringify({ s: '[[[[{{{{\\"'.repeat(100) })]]));
  assert.ok(await src.readJSON('a.json'));
  assert.ok(await src.readJSON('b.json'));
  // the converter: exit 1 naming the file, no output
  const dir = copyCase('bert-minilm', { 'tokenizer_config.json': `{"unused": ${deep(10 ** 4)}}` });
  try {
    const out = path.join(dir, 'out.safetensors');
    const r = await runChild(`process.argv.splice(2, 0, 'convert', ${JSON.stringify(dir)}, ${JSON.stringify(out)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /BAD_FILE: tokenizer_config\.json .*nests/);
    assert.ok(!existsSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('folders: a FIFO, a socket, a file past its size cap are refused without reading them; a FIFO never hangs the load', async () => {
  const dir = copyCase('bert-minilm', { 'tokenizer_config.json': null });
  try {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(dir, 'tokenizer_config.json')]);
    // in a child: a loader that opens the FIFO for reading waits for a writer for ever
    const r = await runChild(`
      import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
      try { await loadPretrained(${JSON.stringify(dir)}); console.log(JSON.stringify({ loaded: true })); }
      catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`, { timeout: 15000 });
    const got = childResult(r, 'FIFO');
    assert.equal(got.code, 'BAD_FILE', got.message);
    assert.match(got.message, /tokenizer_config\.json in the directory .* is a FIFO; swapformer reads only regular files/);
    rmSync(path.join(dir, 'tokenizer_config.json'));
    // a socket
    rmSync(path.join(dir, 'special_tokens_map.json'), { force: true });
    const server = net.createServer();
    await new Promise((go) => server.listen(path.join(dir, 'special_tokens_map.json'), go));
    try {
      await rejects(loadPretrained(dir), 'BAD_FILE', /special_tokens_map\.json in the directory .* is a socket/);
    } finally {
      await new Promise((go) => server.close(go));
    }
    // sizes: a sparse 17 MB config.json and a sparse 3 GB model.safetensors are refused from their size, unread
    writeFileSync(path.join(dir, 'config.json'), '{}');
    truncateSync(path.join(dir, 'config.json'), 17 * 2 ** 20);
    await rejects(loadPretrained(dir), 'BAD_FILE', /config\.json \(in .*\) is 17825792 bytes or more, past the 16777216 bytes/);
    cpSync(path.join(ROOT, 'bert-minilm', 'config.json'), path.join(dir, 'config.json'));
    truncateSync(path.join(dir, 'model.safetensors'), 3 * 2 ** 30);
    const t0 = performance.now();
    await rejects(loadPretrained(dir), 'BAD_FILE', /model\.safetensors \(in .*\) is 3221225472 bytes or more, past the 2147483648 bytes/);
    assert.ok(performance.now() - t0 < 2000, 'refused from the size, not read');
    // a folder where a file should be is an absent file
    rmSync(path.join(dir, 'model.safetensors'));
    mkdirSync(path.join(dir, 'model.safetensors'));
    const src = await openSource(dir);
    assert.equal(await src.read('model.safetensors', { optional: true }), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs the converter in a child (with a timeout): {code, stdout, stderr}. */
const convert = (...args) => runChild(`process.argv.splice(2, 0, 'convert', ...${JSON.stringify(args)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`, { timeout: 60000 });

test('symlinks: out of the folder refused by the loader and the converter (nothing leaks); inside it and the hub cache layout work', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-links-'));
  try {
    const secret = path.join(tmp, 'secret.json');
    writeFileSync(secret, JSON.stringify({ token: 'hf_SECRET_1234567890' }));
    const texts = ['a linked file', 'another'];
    const ref = await loadPretrained(path.join(ROOT, 'bert-minilm'));
    const want = ref.embed(texts).data;
    ref.dispose();
    for (const [file, target] of [['tokenizer_config.json', secret], ['tokenizer.json', '/dev/zero'], ['special_tokens_map.json', '/etc/passwd']]) {
      const dir = path.join(tmp, `out-${file}`);
      cpSync(path.join(ROOT, 'bert-minilm'), dir, { recursive: true });
      rmSync(path.join(dir, file));
      symlinkSync(target, path.join(dir, file));
      const r = await runChild(`
        import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
        try { await loadPretrained(${JSON.stringify(dir)}); console.log(JSON.stringify({ loaded: true })); }
        catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`, { timeout: 15000 });
      const got = childResult(r, `${file} -> ${target}`);
      assert.equal(got.code, 'BAD_FILE', got.message);
      assert.match(got.message, new RegExp(`${file.replace('.', '\\.')} in the directory .* is a symlink to ${target.replace(/[./]/g, '\\$&')}, outside`));
      const out = path.join(tmp, `${file}.safetensors`);
      const c = await convert(dir, out);
      assert.equal(c.code, 1, c.stderr);
      assert.match(c.stderr, /BAD_FILE: .*symlink.*outside/);
      assert.ok(!existsSync(out), 'no output written');
    }
    // a symlink inside the folder is followed
    const inside = path.join(tmp, 'inside');
    cpSync(path.join(ROOT, 'bert-minilm'), inside, { recursive: true });
    mkdirSync(path.join(inside, 'sub'));
    cpSync(path.join(inside, 'tokenizer.json'), path.join(inside, 'sub', 'real-tokenizer.json'));
    rmSync(path.join(inside, 'tokenizer.json'));
    symlinkSync('sub/real-tokenizer.json', path.join(inside, 'tokenizer.json'));
    const p = await loadPretrained(inside);
    assertBitIdentical(p.embed(texts).data, want, 'a symlink inside the folder');
    p.dispose();
    // the Hugging Face hub cache: snapshots/<commit>/<file> -> ../../blobs/<hash>, sub-folders too
    const repo = path.join(tmp, 'hub', 'models--test--minilm');
    const commit = 'c'.repeat(40);
    const snap = path.join(repo, 'snapshots', commit);
    mkdirSync(path.join(repo, 'blobs'), { recursive: true });
    mkdirSync(path.join(repo, 'refs'));
    writeFileSync(path.join(repo, 'refs', 'main'), commit);
    const walk = (rel) => readdirSync(path.join(ROOT, 'bert-minilm', rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(rel, e.name)) : [path.join(rel, e.name)]));
    walk('').forEach((rel, i) => {
      const blob = path.join(repo, 'blobs', `blob${i}`);
      cpSync(path.join(ROOT, 'bert-minilm', rel), blob);
      mkdirSync(path.dirname(path.join(snap, rel)), { recursive: true });
      symlinkSync(path.relative(path.dirname(path.join(snap, rel)), blob), path.join(snap, rel));
    });
    const cached = await loadPretrained(snap);
    assertBitIdentical(cached.embed(texts).data, want, 'hub cache snapshot');
    cached.dispose();
    const out = path.join(tmp, 'cached.safetensors');
    const c = await convert(snap, out);
    assert.equal(c.code, 0, c.stderr);
    const converted = await loadPretrained(out);
    assertBitIdentical(converted.embed(texts).data, want, 'converted from the hub cache');
    converted.dispose();
    // ...but a snapshot's link out of the repository folder is refused
    rmSync(path.join(snap, 'tokenizer_config.json'));
    symlinkSync(secret, path.join(snap, 'tokenizer_config.json'));
    await rejects(loadPretrained(snap), 'BAD_FILE', /tokenizer_config\.json .* is a symlink to .*secret\.json, outside .*models--test--minilm/);
    // a model file named through a symlink is followed: the caller named it
    symlinkSync(out, path.join(tmp, 'link.safetensors'));
    (await loadPretrained(path.join(tmp, 'link.safetensors'))).dispose();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('converter: a tokenizer.json that is not JSON, or not a tokenizer, exits 1 and writes nothing', async () => {
  for (const [text, code, re] of [['not json {', 'BAD_FILE', /tokenizer\.json \(in .*\) is not valid JSON/], ['[1, 2]', 'BAD_FILE', /tokenizer\.json \(in .*\): must be a JSON object/],
    ['{"model": {"type": "NoSuchModel"}}', 'UNSUPPORTED_MODEL', /NoSuchModel/]]) {
    const dir = copyCase('bert-minilm', { 'tokenizer.json': text });
    try {
      const out = path.join(dir, 'out.safetensors');
      const r = await convert(dir, out);
      assert.equal(r.code, 1, `${text}: ${r.stdout}`);
      assert.match(r.stderr, new RegExp(`${code}: .*${re.source}`));
      assert.ok(!existsSync(out));
      await rejects(loadPretrained(dir), code, re); // as the loader says
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('converter: a write that fails (EFBIG past ulimit -f) leaves the previous output intact and no temporary file', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-efbig-'));
  try {
    const out = path.join(tmp, 'model.safetensors');
    assert.equal((await convert(path.join(ROOT, 'bert-minilm'), out)).code, 0);
    const before = readFileSync(out);
    // the same conversion under a 64 KB file size limit: the write fails part-way
    const r = await new Promise((resolve) => execFile('bash', ['-c', `ulimit -f 64; exec "$0" --experimental-wasm-relaxed-simd "$1" convert "$2" "$3"`,
      process.execPath, BIN, path.join(ROOT, 'nomic-embed'), out], { timeout: 60000 }, (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stderr })));
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /EFBIG|file too large/i);
    assert.deepEqual(readFileSync(out), before, 'the previous output is untouched');
    assert.deepEqual(readdirSync(tmp), ['model.safetensors'], 'no temporary file left');
    (await loadPretrained(out)).dispose();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('embed reads each text once; a hole or a non-string is named texts[i]', async () => {
  const p = await loadPretrained(path.join(ROOT, 'bert-minilm'));
  try {
    const want = p.embed(['stable', 'second']).data;
    let reads = 0;
    const tricky = ['x', 'second'];
    Object.defineProperty(tricky, 0, { get() { reads++; return reads === 1 ? 'stable' : 42; }, enumerable: true });
    assertBitIdentical(p.embed(tricky).data, want, 'the getter read once');
    assert.equal(reads, 1);
    const counted = new Proxy(['stable', 'second'], { get(t, k, r) { if (k === '0') reads++; return Reflect.get(t, k, r); } });
    reads = 0;
    assertBitIdentical((await p.embedAsync(counted)).data, want, 'a Proxy, embedAsync');
    assert.equal(reads, 1);
    // eslint-disable-next-line no-sparse-arrays
    await rejects(() => p.embed([, 'a']), 'BAD_ARGUMENT', /texts\[0\] is a hole/);
    await rejects(() => p.embed(['a', , 'b']), 'BAD_ARGUMENT', /texts\[1\] is a hole/); // eslint-disable-line no-sparse-arrays
    await rejects(() => p.embed(new Array(3)), 'BAD_ARGUMENT', /texts\[0\]/);
    await rejects(() => p.embed(['a', null]), 'BAD_ARGUMENT', /texts\[1\] must be a string, got null/);
    await rejects(p.embedAsync([, 'a']), 'BAD_ARGUMENT', /texts\[0\]/); // eslint-disable-line no-sparse-arrays
    assertBitIdentical(p.embed(['stable', 'second']).data, want, 'usable afterwards');
  } finally {
    p.dispose();
  }
});
