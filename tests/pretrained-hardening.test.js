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
import { loadPretrained } from '../bindings/index.js';
import { openSource, MAX_JSON_DEPTH } from '../bindings/pretrained/files.js';
import { readWeights, MAX_SHARDS, SHARD_CONCURRENCY } from '../bindings/pretrained/safetensors.js';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { writeModelFile } from '../bindings/pretrained/model-file.js';
import { startHub, hubCommit } from './hub-server.js';
import { rejects, assertBitIdentical } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

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
    execFile(process.execPath, [...NODE_FLAGS, file, ...args], { timeout, killSignal: 'SIGKILL', maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
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
  const weight = new Float32Array(Uint8Array.from(Buffer.from(DENSE.weight, 'base64')).buffer); // a copy: a Buffer's .buffer may be larger than it
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
    ...['toString', 'constructor', 'valueOf', '__proto__', 'hasOwnProperty', 'softplus', 7].map((a) => [
      { activation: a },
      'BAD_FILE',
      /dense\[0\]: activation .* is not one of identity, tanh/,
    ]),
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
  for (const [tensor, index, value] of [
    ['linear.weight', 7, NaN],
    ['linear.bias', 23, Infinity],
  ]) {
    const bytes = raw.slice();
    const t = parseSafetensors(bytes, 'x').tensors.get(tensor);
    new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength).setFloat32(4 * index, value, true);
    const dir = copyCase('bert-dense-pairs', { '2_Dense/model.safetensors': bytes });
    try {
      await rejects(loadPretrained(dir), 'BAD_WEIGHTS', new RegExp(`2_Dense/model\\.safetensors: ${tensor.replace('.', '\\.')}\\[${index}\\] is ${value}`));
      // the converter refuses it too (exit 1, no file)
      const out = path.join(dir, 'out.safetensors');
      const r = await runChild(
        `process.argv.splice(2, 0, 'convert', ${JSON.stringify(dir)}, ${JSON.stringify(out)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`,
      );
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
    await rejects(
      loadPretrained(dir),
      'BAD_FILE',
      /2_Dense\/config\.json: in_features is 96, but the pooling \(cls \+ mean of 32 hidden features\) gives 64 features/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // a word_embedding_dimension that is not the hidden size, chained into a Dense sized from it
  const wrong = copyCase('bert-dense-pairs', {
    '1_Pooling/config.json': { ...pooling, word_embedding_dimension: 16 },
    '2_Dense/config.json': { ...readJSON('bert-dense-pairs', '2_Dense/config.json'), in_features: 48 },
  });
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
    ['t5-relu', { ...readJSON('t5-relu', 'config.json'), dense_act_fn: 'constructor' }, /config\.json: act = "constructor" is not supported/],
    ['bert-minilm', { ...readJSON('bert-minilm', 'config.json'), hidden_act: 'valueOf' }, /config\.json: hidden_act = "valueOf" is not supported/],
    [
      'nomic-embed',
      { ...readJSON('nomic-embed', 'config.json'), activation_function: 'toString' },
      /config\.json: activation_function = "toString" is not supported/,
    ],
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
  // a normalizer Sequence nested 100,000 deep (it overflowed the stack once)
  let sequence = '{"type":"Lowercase"}';
  for (let i = 0; i < 10 ** 5; i++) sequence = `{"type":"Sequence","normalizers":[${sequence}]}`;
  const cases = [
    ['config.json', JSON.stringify({ ...config, unused: 0 }).replace('"unused":0', `"unused":${deep(10 ** 5)}`), 'unused.a.a.a'],
    ['tokenizer_config.json', `{"unused": ${deep(10 ** 4)}}`, 'unused.a.a.a'],
    ['tokenizer.json', `{"unused": ${deep(10 ** 4, '[]')}, ${tokenizer.trim().slice(1)}`, 'unused.a.a.a'],
    [
      'tokenizer.json',
      `{"normalizer": ${sequence}, ${tokenizer
        .trim()
        .slice(1)
        .replace(/"normalizer":/, '"was_normalizer":')}`,
      'normalizer.normalizers[0].normalizers[0]',
    ],
    ['modules.json', `[${deep(100)}]`, '[0].a.a.a'],
    ['1_Pooling/config.json', deep(MAX_JSON_DEPTH + 1), 'a.a.a'],
  ];
  for (const [file, text, at] of cases) {
    const dir = copyCase('bert-minilm', { [file]: text });
    try {
      // the file and where in it (its first 120 characters)
      await rejects(
        loadPretrained(dir),
        'BAD_FILE',
        new RegExp(
          `^${file.replace(/[./]/g, '\\$&')} \\(in [^)]*\\) nests objects or arrays more than ${MAX_JSON_DEPTH} deep \\(at ${at.replace(/[.[\]]/g, '\\$&')}[^)]*\\)$`,
        ),
      );
      const src = await openSource(
        new Map([
          ['config.json', '{}'],
          [file, text],
        ]),
      );
      if (file !== 'tokenizer.json') await rejects(src.readJSON(file), 'BAD_FILE', /nests/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // exactly the limit is fine; strings with brackets and escaped quotes do not count
  const src = await openSource(
    new Map([
      ['config.json', '{}'],
      ['a.json', deep(MAX_JSON_DEPTH)],
      ['b.json', JSON.stringify({ s: '[[[[{{{{\\"'.repeat(100) })],
    ]),
  );
  assert.ok(await src.readJSON('a.json'));
  assert.ok(await src.readJSON('b.json'));
  // the converter: exit 1 naming the file, no output
  const dir = copyCase('bert-minilm', { 'tokenizer_config.json': `{"unused": ${deep(10 ** 4)}}` });
  try {
    const out = path.join(dir, 'out.safetensors');
    const r = await runChild(
      `process.argv.splice(2, 0, 'convert', ${JSON.stringify(dir)}, ${JSON.stringify(out)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`,
    );
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
    const r = await runChild(
      `
      import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
      try { await loadPretrained(${JSON.stringify(dir)}); console.log(JSON.stringify({ loaded: true })); }
      catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`,
      { timeout: 15000 },
    );
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
    // a device node inside the folder (mknod needs root: skipped without it); read, /dev/zero never ends
    rmSync(path.join(dir, 'special_tokens_map.json'), { force: true });
    let device = true;
    try {
      execFileSync('mknod', [path.join(dir, 'special_tokens_map.json'), 'c', '1', '5'], { stdio: 'pipe' });
    } catch {
      device = false;
    }
    if (device) {
      const d = await runChild(
        `
        import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
        try { await loadPretrained(${JSON.stringify(dir)}); console.log(JSON.stringify({ loaded: true })); }
        catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`,
        { timeout: 15000 },
      );
      const dev = childResult(d, 'device');
      assert.equal(dev.code, 'BAD_FILE', dev.message);
      assert.match(dev.message, /special_tokens_map\.json in the directory .* is a device/);
      rmSync(path.join(dir, 'special_tokens_map.json'));
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
const convert = (...args) =>
  runChild(`process.argv.splice(2, 0, 'convert', ...${JSON.stringify(args)}); await import(${JSON.stringify(pathToFileURL(BIN).href)});`, { timeout: 60000 });

test('symlinks: out of the folder refused by the loader and the converter (nothing leaks); inside it and the hub cache layout work', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-links-'));
  try {
    const secret = path.join(tmp, 'secret.json');
    writeFileSync(secret, JSON.stringify({ token: 'hf_SECRET_1234567890' }));
    const texts = ['a linked file', 'another'];
    const ref = await loadPretrained(path.join(ROOT, 'bert-minilm'));
    const want = ref.embed(texts).data;
    ref.dispose();
    for (const [file, target] of [
      ['tokenizer_config.json', secret],
      ['tokenizer.json', '/dev/zero'],
      ['special_tokens_map.json', '/etc/passwd'],
    ]) {
      const dir = path.join(tmp, `out-${file}`);
      cpSync(path.join(ROOT, 'bert-minilm'), dir, { recursive: true });
      rmSync(path.join(dir, file));
      symlinkSync(target, path.join(dir, file));
      const r = await runChild(
        `
        import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
        try { await loadPretrained(${JSON.stringify(dir)}); console.log(JSON.stringify({ loaded: true })); }
        catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`,
        { timeout: 15000 },
      );
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
    const walk = (rel) =>
      readdirSync(path.join(ROOT, 'bert-minilm', rel), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(path.join(rel, e.name)) : [path.join(rel, e.name)],
      );
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
  for (const [text, code, re] of [
    ['not json {', 'BAD_FILE', /tokenizer\.json \(in .*\) is not valid JSON/],
    ['[1, 2]', 'BAD_FILE', /tokenizer\.json \(in .*\): must be a JSON object/],
    ['{"model": {"type": "NoSuchModel"}}', 'UNSUPPORTED_MODEL', /NoSuchModel/],
  ]) {
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
    const r = await new Promise((resolve) =>
      execFile(
        'bash',
        ['-c', `ulimit -f 64; exec "$0" "$@"`, process.execPath, ...NODE_FLAGS, BIN, 'convert', path.join(ROOT, 'nomic-embed'), out],
        { timeout: 60000 },
        (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stderr }),
      ),
    );
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
    Object.defineProperty(tricky, 0, {
      get() {
        reads++;
        return reads === 1 ? 'stable' : 42;
      },
      enumerable: true,
    });
    assertBitIdentical(p.embed(tricky).data, want, 'the getter read once');
    assert.equal(reads, 1);
    const counted = new Proxy(['stable', 'second'], {
      get(t, k, r) {
        if (k === '0') reads++;
        return Reflect.get(t, k, r);
      },
    });
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

// ---------------------------------------------------------------------------
// Downloads

/** safetensors bytes of [name, {dtype, shape, bytes}] entries. */
function safetensorsBytes(entries) {
  let at = 0;
  const header = {};
  for (const [name, t] of entries) header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, (at += t.bytes.length)] };
  const h = Buffer.from(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let p = 8 + h.length;
  for (const [, t] of entries) (out.set(t.bytes, p), (p += t.bytes.length));
  return out;
}

/** bert-minilm with its weights in one shard per tensor (39) and an index; returns {dir, shards}. */
async function shardedMinilm() {
  const { parseSafetensors } = await import('../bindings/pretrained/safetensors.js');
  const dir = copyCase('bert-minilm', { 'model.safetensors': null });
  const tensors = [...parseSafetensors(new Uint8Array(readFileSync(path.join(ROOT, 'bert-minilm', 'model.safetensors')))).tensors];
  const shards = tensors.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(tensors.length).padStart(5, '0')}.safetensors`);
  tensors.forEach(([name, t], i) => writeFileSync(path.join(dir, shards[i]), safetensorsBytes([[name, t]])));
  writeFileSync(
    path.join(dir, 'model.safetensors.index.json'),
    JSON.stringify({ metadata: {}, weight_map: Object.fromEntries(tensors.map(([n], i) => [n, shards[i]])) }),
  );
  return { dir, shards };
}

/** Resolves once hub.active() is 0 (polling up to `ms`); returns the last count seen. */
async function drained(hub, ms = 2000) {
  for (const t0 = Date.now(); hub.active() > 0 && Date.now() - t0 < ms;) await new Promise((go) => setTimeout(go, 10));
  return hub.active();
}

test(`shards: ${SHARD_CONCURRENCY} at a time; the first failure cancels the rest and nothing is requested after the rejection`, async () => {
  const { dir, shards } = await shardedMinilm();
  const want = (await loadPretrained(path.join(ROOT, 'bert-minilm'))).embed(['sharded']).data;
  const hub = await startHub({ repos: { 'test/sharded': dir }, slow: { chunks: 4, delayMs: 20 }, cache: false });
  try {
    const p = await loadPretrained('test/sharded', { hubUrl: hub.url, cache: false });
    assertBitIdentical(p.embed(['sharded']).data, want, 'sharded over the hub');
    p.dispose();
    const gets = hub.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/cdn-lfs/') && r.status === 200);
    assert.equal(gets.length, shards.length, 'each shard once');
    assert.ok(hub.maxActive <= SHARD_CONCURRENCY + 1, `at most ${SHARD_CONCURRENCY} downloads at once (+ a redirect closing): ${hub.maxActive}`);

    // shard 3 fails: the others in flight are dropped, none starts after
    const failing = `/test/sharded/resolve/${hubCommit('test/sharded')}/${shards[2]}`; // at the commit the load resolved
    hub.failNext(failing, 500);
    const before = hub.requests.length;
    // the requests the loader starts (its fetch calls): on a loaded machine one sent before the rejection
    // can reach the stand-in after it, so the server's count is not the loader's
    let started = 0;
    const counting = (...args) => {
      started++;
      return fetch(...args);
    };
    await rejects(loadPretrained('test/sharded', { hubUrl: hub.url, cache: false, fetch: counting }), 'NETWORK', new RegExp(`${shards[2]}: HTTP 500`));
    const atRejection = started;
    assert.equal(await drained(hub), 0, 'no download still open after the rejection');
    await new Promise((go) => setTimeout(go, 300));
    assert.equal(started, atRejection, 'no request started after the rejection');
    const shardRequests = hub.requests.slice(before).filter((r) => r.path.endsWith('.safetensors') && !r.path.startsWith('/cdn-lfs/'));
    assert.ok(shardRequests.length <= SHARD_CONCURRENCY + 2, `${shardRequests.length} shards asked for before the failure stopped the rest`);

    // shard 1 stops dripping, shard 3 fails: the failure cancels shard 1 at once (not after its stall timeout)
    const stalled = await startHub({
      repos: { 'test/sharded': dir },
      cache: false,
      stall: { [`/cdn-lfs/test/sharded/${shards[0]}`]: 100 },
      failOnce: [failing],
    });
    try {
      const t0 = performance.now();
      await rejects(loadPretrained('test/sharded', { hubUrl: stalled.url, stallTimeout: 10000 }), 'NETWORK', new RegExp(`${shards[2]}: HTTP 500`));
      const ms = performance.now() - t0;
      assert.ok(ms < 3000, `rejected after ${ms.toFixed(0)} ms: the stalled shard was cancelled`);
      assert.equal(await drained(stalled), 0, 'the stalled download was dropped');
    } finally {
      await stalled.close();
    }
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`shards: an index naming more than ${MAX_SHARDS} shards is BAD_FILE before any shard is requested; an index of 400,000 tensors is read in seconds, not minutes`, async () => {
  const dir = copyCase('bert-minilm', { 'model.safetensors': null });
  const hub = await startHub({ repos: { 'test/many': dir }, cache: false });
  try {
    for (const n of [MAX_SHARDS + 1, 2000, 50000]) {
      const map = Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, `s${i}.safetensors`]));
      writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: map }));
      const before = hub.requests.length;
      await rejects(
        loadPretrained('test/many', { hubUrl: hub.url, cache: false }),
        'BAD_FILE',
        new RegExp(`model\\.safetensors\\.index\\.json: weight_map names more than ${MAX_SHARDS} shard files`),
      );
      assert.ok(!hub.requests.slice(before).some((r) => /\/s\d+\.safetensors$/.test(r.path)), `${n} shards: none requested`);
    }
    // 400,000 tensors over 1,000 shards: a list scan per tensor took seconds; a Set takes milliseconds
    const map = Object.fromEntries(Array.from({ length: 400000 }, (_, i) => [`t${i}`, `s${i % MAX_SHARDS}.safetensors`]));
    const src = await openSource(
      new Map([
        ['config.json', '{}'],
        ['model.safetensors.index.json', JSON.stringify({ weight_map: map })],
      ]),
    );
    const cpu0 = process.cpuUsage();
    await rejects(readWeights(src), 'NOT_FOUND', /s0\.safetensors/);
    const { user, system } = process.cpuUsage(cpu0),
      ms = (user + system) / 1000;
    // CPU time, not the wall clock (a loaded machine stretched the latter past 6 s): measured 0.36 s
    // (a list scan per tensor: 0.89 s) on a quiet machine; the bound guards against anything quadratic
    // in the tensors (minutes)
    assert.ok(ms < 5000, `index of 400,000 tensors read in ${ms.toFixed(0)} ms of CPU`);
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the fetch option answering something that is not a Response is NETWORK naming the option', async () => {
  for (const [answer, re] of [
    [42, /number/],
    [null, /null/],
    [{}, /an object/],
    ['text', /string/],
    [[], /an array/],
    [{ ok: true, status: 200, headers: new Headers(), body: {} }, /an object/],
  ]) {
    const src = await openSource('test/model', { hubUrl: 'http://127.0.0.1:9', fetch: async () => answer });
    const e = await rejects(src.read('config.json'), 'NETWORK', /config\.json: the fetch option resolved to .* not a Response/);
    assert.match(e.message, re);
    await rejects(src.has('pytorch_model.bin'), 'NETWORK', /the fetch option resolved to/);
  }
  await rejects(loadPretrained('test/model', { hubUrl: 'http://127.0.0.1:9', fetch: async () => 42 }), 'NETWORK', /the fetch option resolved to number/);
});

test('a lying Content-Length (1e12, 2^32 + 10) is BAD_FILE naming the file, from the hub and from a fetch option', async () => {
  const dir = copyCase('bert-minilm');
  for (const length of [1e12, 2 ** 32 + 10, 17 * 2 ** 20]) {
    const hub = await startHub({
      repos: { 'test/lying': dir },
      cache: false,
      headers: { '/test/lying/resolve/main/config.json': { 'Content-Length': String(length) } },
    });
    try {
      await rejects(
        loadPretrained('test/lying', { hubUrl: hub.url }),
        'BAD_FILE',
        new RegExp(`config\\.json \\(in test/lying\\) is ${length} bytes or more, past the 16777216 bytes`),
      );
      assert.equal(await drained(hub), 0, 'the answer is dropped');
    } finally {
      await hub.close();
    }
    const src = await openSource('test/x', {
      hubUrl: 'http://127.0.0.1:9',
      fetch: async () => new Response('{}', { headers: { 'content-length': String(length) } }),
    });
    await rejects(src.read('config.json'), 'BAD_FILE', new RegExp(`config\\.json \\(in test/x\\) is ${length} bytes or more, past the 16777216 bytes`));
    if (length > 2 ** 31) await rejects(src.read('model.safetensors'), 'BAD_FILE', /model\.safetensors .* past the 2147483648 bytes/);
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The imports a child script needs, by absolute URL. */
const CHILD_IMPORTS = `
  import { loadPretrained } from ${JSON.stringify(url('bindings/index.js'))};
  import { openSource } from ${JSON.stringify(url('bindings/pretrained/files.js'))};
  import { readCheckpoint } from ${JSON.stringify(url('bindings/pretrained/checkpoint.js'))};
  import { startHub } from ${JSON.stringify(url('tests/hub-server.js'))};
  const outcome = (p) => p.then(() => ({ ok: true }), (e) => ({ name: e?.name, code: e?.code, message: String(e?.message), cause: e?.cause?.message }));
  const timed = async (p) => { const t0 = Date.now(); const r = await outcome(p); return { ...r, ms: Date.now() - t0 }; };
`;

test('a body that never ends stops at the cap and is cancelled; a gzip body inflating to 256 MB stops at 16 MB (peak RSS)', async (t) => {
  const r = await runChild(`${CHILD_IMPORTS}
    let cancelled = false, pulled = 0;
    const endless = () => new Response(new ReadableStream({
      pull(c) { pulled += 2 ** 20; c.enqueue(new Uint8Array(2 ** 20)); }, cancel() { cancelled = true; } }));
    const src = await openSource('test/x', { hubUrl: 'http://127.0.0.1:9', fetch: async () => endless() });
    const endlessJson = await outcome(src.read('config.json'));
    console.log(JSON.stringify({ endlessJson, cancelled, pulledMB: pulled / 2 ** 20 }));`);
  const got = childResult(r, 'endless body');
  assert.equal(got.endlessJson.code, 'BAD_FILE', got.endlessJson.message);
  assert.match(got.endlessJson.message, /config\.json \(in test\/x\) is \d+ bytes or more, past the 16777216 bytes/);
  assert.ok(got.cancelled, 'the body was cancelled');
  assert.ok(got.pulledMB <= 20, `${got.pulledMB} MB pulled`);

  // gzip: 256 MB of JSON whitespace compressed to a few hundred KB, served with Content-Encoding: gzip
  const dir = copyCase('bert-minilm');
  try {
    const { createGzip } = await import('node:zlib');
    const { pipeline } = await import('node:stream/promises');
    const { Readable } = await import('node:stream');
    const { createWriteStream } = await import('node:fs');
    const block = Buffer.alloc(2 ** 20, 0x20);
    await pipeline(
      Readable.from(
        (function* () {
          yield Buffer.from('{"a": 1');
          for (let i = 0; i < 256; i++) yield block;
          yield Buffer.from('}');
        })(),
      ),
      createGzip({ level: 1 }),
      createWriteStream(path.join(dir, 'config.json')),
    );
    const g = await runChild(
      `${CHILD_IMPORTS}
      const hub = await startHub({ repos: { 'test/gz': ${JSON.stringify(dir)} }, cache: false,
        headers: { '/test/gz/resolve/main/config.json': { 'Content-Encoding': 'gzip' } } });
      const before = process.resourceUsage().maxRSS;
      const result = await outcome(loadPretrained('test/gz', { hubUrl: hub.url }));
      const peakMB = process.resourceUsage().maxRSS / 1024, beforeMB = before / 1024;
      await hub.close();
      console.log(JSON.stringify({ result, peakMB, beforeMB }));`,
      { timeout: 60000 },
    );
    const gz = childResult(g, 'gzip');
    assert.equal(gz.result.code, 'BAD_FILE', gz.result.message);
    assert.match(gz.result.message, /config\.json \(in test\/gz\) is \d+ bytes or more, past the 16777216 bytes/);
    t.diagnostic(`gzip: peak RSS ${gz.peakMB.toFixed(0)} MB, ${(gz.peakMB - gz.beforeMB).toFixed(0)} MB over the start`);
    assert.ok(gz.peakMB - gz.beforeMB < 120, `peak RSS grew ${(gz.peakMB - gz.beforeMB).toFixed(0)} MB (to ${gz.peakMB.toFixed(0)} MB)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stallTimeout: a body that stops dripping, an answer that never comes, a fetch that never resolves are NETWORK naming the file', async () => {
  const dir = copyCase('bert-minilm');
  try {
    const r = await runChild(
      `${CHILD_IMPORTS}
      // modules.json never answered (it is read before the weights), then the weights' body stopping after 100 bytes
      const hub = await startHub({ repos: { 'test/stall': ${JSON.stringify(dir)} }, cache: false, hang: ['/test/stall/resolve/${hubCommit('test/stall')}/modules.json'] });
      const body = await timed(loadPretrained('test/stall', { hubUrl: hub.url, stallTimeout: 200 }));
      const hub2 = await startHub({ repos: { 'test/stall': ${JSON.stringify(dir)} }, cache: false, stall: { '/cdn-lfs/test/stall/model.safetensors': 100 } });
      const stalled = await timed(loadPretrained('test/stall', { hubUrl: hub2.url, stallTimeout: 200 }));
      await new Promise((go) => setTimeout(go, 200));
      const activeAfterStall = hub2.active();
      const never = await timed((await openSource('test/x', { hubUrl: 'http://127.0.0.1:9', fetch: () => new Promise(() => {}), stallTimeout: 200 })).read('config.json'));
      const dripForever = await timed((await openSource('test/x', { hubUrl: 'http://127.0.0.1:9', stallTimeout: 200,
        fetch: async () => new Response(new ReadableStream({ start(c) { c.enqueue(new Uint8Array(10)); } })) })).read('config.json'));
      await hub.close();
      await hub2.close();
      console.log(JSON.stringify({ body, stalled, activeAfterStall, never, dripForever }));`,
      { timeout: 30000 },
    );
    const got = childResult(r, 'stall');
    assert.equal(got.body.code, 'NETWORK', got.body.message);
    assert.match(
      got.body.message,
      /modules\.json: nothing arrived from http:\/\/127\.0\.0\.1:\d+\/test\/stall\/resolve\/[0-9a-f]{40}\/modules\.json for 200 ms \(the stallTimeout option\)/,
    );
    assert.equal(got.stalled.code, 'NETWORK', got.stalled.message);
    assert.match(got.stalled.message, /model\.safetensors: nothing arrived .* for 200 ms/);
    assert.ok(got.stalled.ms < 5000, `${got.stalled.ms} ms`);
    assert.equal(got.activeAfterStall, 0, 'the stalled download was dropped');
    assert.match(got.never.message, /config\.json: nothing arrived from .* for 200 ms/);
    assert.equal(got.dripForever.code, 'NETWORK');
    assert.match(got.dripForever.message, /config\.json: nothing arrived/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('signal: aborting stops pending answers and body reads (NETWORK, the reason as cause); an aborted signal reads nothing', async () => {
  const dir = copyCase('bert-minilm');
  try {
    const r = await runChild(
      `${CHILD_IMPORTS}
      const hub = await startHub({ repos: { 'test/abort': ${JSON.stringify(dir)} }, cache: false,
        stall: { '/cdn-lfs/test/abort/model.safetensors': 100 }, hang: ['/test/abort/resolve/${hubCommit('test/abort')}/tokenizer.json'] });
      // abort once the weights' body is dripping (a fixed delay could land on an earlier file under load)
      const c1 = new AbortController();
      const waiting = setInterval(() => {
        if (hub.active() > 0 && hub.requests.some((q) => q.path.endsWith('/model.safetensors'))) {
          clearInterval(waiting);
          setTimeout(() => c1.abort(new Error('the user left')), 100);
        }
      }, 20);
      const body = await timed(loadPretrained('test/abort', { hubUrl: hub.url, signal: c1.signal }));
      await new Promise((go) => setTimeout(go, 200));
      const activeAfterBody = hub.active();
      const before = hub.requests.length;
      const already = await outcome(loadPretrained('test/abort', { hubUrl: hub.url, signal: AbortSignal.abort() }));
      const requestsWhenAborted = hub.requests.length - before;
      const c2 = new AbortController();
      setTimeout(() => c2.abort(), 200);
      const ignoring = await timed((await openSource('test/x', { hubUrl: 'http://127.0.0.1:9', signal: c2.signal, fetch: () => new Promise(() => {}) })).read('config.json'));
      const ck = await timed(readCheckpoint(${JSON.stringify(dir)}, { signal: AbortSignal.abort() }));
      const badSignal = await outcome(openSource(${JSON.stringify(dir)}, { signal: 'stop' }));
      const badTimeout = await outcome(openSource(${JSON.stringify(dir)}, { stallTimeout: 0 }));
      await hub.close();
      console.log(JSON.stringify({ body, activeAfterBody, already, requestsWhenAborted, ignoring, ck, badSignal, badTimeout }));`,
      { timeout: 30000 },
    );
    const got = childResult(r, 'signal');
    assert.equal(got.body.code, 'NETWORK', got.body.message);
    assert.match(got.body.message, /model\.safetensors: aborted \(the signal option: the user left\)/);
    assert.equal(got.body.cause, 'the user left');
    assert.ok(got.body.ms < 3000, `${got.body.ms} ms`);
    assert.equal(got.activeAfterBody, 0, 'the aborted download was dropped');
    assert.equal(got.already.code, 'NETWORK');
    assert.match(got.already.message, /aborted/);
    assert.equal(got.requestsWhenAborted, 0, 'an aborted signal sends no request');
    assert.equal(got.ignoring.code, 'NETWORK', 'a fetch option that ignores the signal is left behind');
    assert.ok(got.ignoring.ms < 3000);
    assert.equal(got.ck.code, 'NETWORK', 'readCheckpoint takes the signal, a directory too');
    assert.equal(got.badSignal.code, 'BAD_ARGUMENT');
    assert.match(got.badSignal.message, /option signal: must be an AbortSignal/);
    assert.match(got.badTimeout.message, /option stallTimeout/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------
// Mutations

test('mutations (a few seconds): model-file metadata and shard indexes give a model or a SwapformerError, never another exception or a hang', async (t) => {
  const seed = Number(process.env.SWAPFORMER_FUZZ_SEED ?? 20251201);
  const r = await runChild(
    `${CHILD_IMPORTS}
    import { SwapformerError } from ${JSON.stringify(url('bindings/index.js'))};
    import { readWeights } from ${JSON.stringify(url('bindings/pretrained/safetensors.js'))};
    import { writeModelFile } from ${JSON.stringify(url('bindings/pretrained/model-file.js'))};
    import { readFileSync, readdirSync, statSync } from 'node:fs';
    const BUDGET_MS = 3000, FOLDER = ${JSON.stringify(path.join(ROOT, 'bert-dense-pairs'))};
    let state = ${seed} >>> 0;
    const rand = () => { state = (state + 0x6d2b79f5) >>> 0; let z = state; z = Math.imul(z ^ (z >>> 15), z | 1); z ^= z + Math.imul(z ^ (z >>> 7), z | 61); return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32; };
    const int = (n) => Math.floor(rand() * n);
    const pick = (a) => a[int(a.length)];
    const deep = (n) => { let v = 1; for (let i = 0; i < n; i++) v = { a: v }; return v; };
    const NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'length', '', 'dense', 'pooling', 'weight', 'activation', 'inFeatures', 'model_type'];
    const atom = () => pick([null, true, false, 0, -1, 1, 1.5, 1e308, -0, 2 ** 53, 2 ** 32 + 1, '', 'x', 'AAAA', '@@', ...NAMES, [], [1, 2], {}, { a: 1 }, 'A'.repeat(5000), deep(int(80))]);
    function mutate(v, depth = 0) {
      const r = rand();
      if (r < 0.15 || depth > 6) return atom();
      if (Array.isArray(v)) {
        const a = v.slice();
        if (!a.length || r < 0.3) a.push(atom());
        else if (r < 0.45) a.splice(int(a.length), 1);
        else if (r < 0.55) a.push(a[int(a.length)]);
        else { const i = int(a.length); a[i] = mutate(a[i], depth + 1); }
        return a;
      }
      if (v !== null && typeof v === 'object') {
        const o = { ...v }, keys = Object.keys(o);
        if (!keys.length || r < 0.3) Object.defineProperty(o, pick(NAMES), { value: atom(), enumerable: true, writable: true, configurable: true });
        else if (r < 0.45) delete o[pick(keys)];
        else { const k = pick(keys); o[k] = mutate(o[k], depth + 1); }
        return o;
      }
      if (typeof v === 'string') {
        if (r < 0.4 && v.length) return v.slice(0, int(v.length));
        if (r < 0.6) return v + pick(['=', 'A', '@', '\\u0000', 'é']);
        if (r < 0.8 && v.length) { const i = int(v.length); return v.slice(0, i) + pick('AB+/=x-_') + v.slice(i + 1); }
        return atom();
      }
      if (typeof v === 'number') return pick([v + 1, -v, 0, v * 1e6, v + 0.5, 2 ** 31, atom()]);
      return atom();
    }
    const rawMutate = (text) => pick([
      () => text.slice(0, int(text.length)), () => text + pick(['}', ']', ',', '"']), () => text.replace(/[{[]/, ''),
      () => '['.repeat(int(20000)) + text, () => JSON.stringify(deep(int(200))), () => text.replace(/"/, ''),
    ])();

    const walk = (dir, rel = '') => readdirSync(dir + '/' + rel).flatMap((n) => statSync(dir + '/' + rel + n).isDirectory() ? walk(dir, rel + n + '/') : [rel + n]);
    const files = new Map(walk(FOLDER).map((f) => [f, new Uint8Array(readFileSync(FOLDER + '/' + f))]));
    const ck = await readCheckpoint(FOLDER);
    const outcomes = {}, failures = [];
    const record = async (what, run) => {
      try {
        const p = await run();
        if (p && typeof p.embed === 'function') {
          try { const e = p.embed(['a mutated model']).data; if (!e.every(Number.isFinite)) throw new Error('non-finite embedding'); } finally { p.dispose(); }
        }
        outcomes.ok = (outcomes.ok ?? 0) + 1;
      } catch (e) {
        if (e instanceof SwapformerError) outcomes[e.code] = (outcomes[e.code] ?? 0) + 1;
        else failures.push({ what, error: String(e?.stack ?? e).slice(0, 600) });
      }
    };
    const FIELDS = ['recipe', 'recipe', 'recipe', 'tokenizer_config', 'hf_config', 'family', 'special_tokens_map'];
    const t0 = Date.now();
    let iterations = 0;
    while (Date.now() - t0 < BUDGET_MS && failures.length < 5) {
      iterations++;
      if (iterations % 2) { // (a) a converted file's metadata
        const field = pick(FIELDS);
        const meta = { ...ck.metadata };
        const value = typeof meta[field] === 'string' ? meta[field] : JSON.stringify(meta[field] ?? {});
        meta[field] = rand() < 0.2 ? rawMutate(value) : JSON.stringify(mutate(field === 'family' ? value : JSON.parse(value)));
        if (field === 'family' && rand() < 0.5) meta.family = pick(['bert', 'roberta', 't5', 'nomic-bert', ...NAMES]);
        await record(field + ' ' + String(meta[field]).slice(0, 120), () => loadPretrained(writeModelFile(ck.config, ck.tensors, meta)));
      } else { // (b) the shard index
        const map = new Map(files);
        const index = JSON.parse(new TextDecoder().decode(files.get('model.safetensors.index.json')));
        let text;
        if (rand() < 0.2) text = rawMutate(JSON.stringify(index));
        else {
          const wm = { ...index.weight_map }, keys = Object.keys(wm);
          for (let n = 1 + int(3); n > 0; n--) {
            const r = rand();
            if (r < 0.3) wm[pick(keys)] = pick(['model-00002-of-00002.safetensors', 'model-00001-of-00002.safetensors', '../x', '/etc/passwd', 'a//b', 'nope.safetensors', '', 'x'.repeat(300), 7, null, [], {}, '2_Dense/model.safetensors', 'config.json']);
            else if (r < 0.5) delete wm[pick(keys)];
            else if (r < 0.7) wm[pick([...NAMES, 'extra.weight', 'embeddings.word_embeddings.weight'])] = pick(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 's' + int(2000) + '.safetensors']);
            else if (r < 0.8) for (let i = 0; i < 1200; i++) wm['t' + i] = 's' + i + '.safetensors';
            else index.weight_map = mutate(wm);
          }
          if (index.weight_map && typeof index.weight_map === 'object' && !Array.isArray(index.weight_map) && rand() < 0.8) index.weight_map = wm;
          text = JSON.stringify(rand() < 0.1 ? mutate(index) : index);
        }
        map.set('model.safetensors.index.json', text);
        await record('index ' + text.slice(0, 160), () => (rand() < 0.5 ? loadPretrained(map) : openSource(map).then(readWeights)));
      }
    }
    console.log(JSON.stringify({ iterations, outcomes, failures }));`,
    { timeout: 60000 },
  );
  const got = childResult(r, `mutations (seed ${seed})`);
  t.diagnostic(`seed ${seed}: ${got.iterations} mutations: ${JSON.stringify(got.outcomes)}`);
  assert.deepEqual(got.failures, [], `seed ${seed} (SWAPFORMER_FUZZ_SEED): not a SwapformerError`);
  assert.ok(got.iterations >= 40, `${got.iterations} mutations in the time budget`);
  assert.ok(Object.keys(got.outcomes).length >= 3, 'several kinds of outcome');
});
