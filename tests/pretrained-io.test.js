// The pretrained loader's I/O layer: bindings/pretrained/{files,safetensors,recipe}.js.
//
//  - files.js: every kind of source (directory, file map as object / Map /
//    dropped folder / Blobs, URL folder on a local server, Hub id on
//    tests/hub-server.js) gives the bytes on disk; progress events; revisions;
//    optional files; error codes (404, 401, 500, fetch throwing); paths that
//    escape the source refused; lazy reads; the `fetch` option; a folder on
//    disk read as it loads (bytes read about once, files closed, F64 once).
//  - safetensors.js: every fixture's weights parse; F16 / BF16 widening equals
//    an independent decode written here (all 65536 bit patterns too); shards;
//    each kind of malformed header refused; pytorch_model.bin refused with the
//    conversion hint.
//  - recipe.js: for every case of tests/pretrained/expected/ and every batch,
//    each pooling mode and the folder's whole recipe against the float64
//    reference of tests/reference/make_pretrained.py; nomic's Matryoshka; the
//    Dense modules; refusals.
//  - in Chromium (playwright-core): the modules import and work, downloads come
//    from the Hub stand-in and a second load is served by the Cache API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, mkdtempSync, mkdirSync, writeFileSync, rmSync, existsSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHub, hubCommit } from './hub-server.js';
import { startServer } from '../web/server.js';
import { rejects } from './helpers.js';
import { openSource, checkPath, isHubId, subSource } from '../bindings/pretrained/files.js';
import { parseSafetensors, toFloat32, readWeights } from '../bindings/pretrained/safetensors.js';
import { readRecipe, defaultRecipe, pool, applyRecipe, erf, POOLING_ORDER } from '../bindings/pretrained/recipe.js';

const ROOT = fileURLToPath(new URL('./pretrained/', import.meta.url));
const REPO = fileURLToPath(new URL('../', import.meta.url));
const CASES = readdirSync(ROOT)
  .filter((n) => n !== 'expected' && statSync(path.join(ROOT, n)).isDirectory())
  .sort();
const EXPECTED = readdirSync(path.join(ROOT, 'expected'))
  .filter((n) => n.endsWith('.json'))
  .sort()
  .map((n) => JSON.parse(readFileSync(path.join(ROOT, 'expected', n), 'utf8')));
const WITH_WEIGHTS = CASES.filter((c) => c !== 'bert-pytorch-bin');

/** Every file below a folder, as '/'-separated relative paths. */
function listFiles(dir, prefix = '') {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}
const onDisk = (c, file) => new Uint8Array(readFileSync(path.join(ROOT, c, file)));
/** A fixture folder as a Map of relative path -> bytes. */
const folderMap = (c) => new Map(listFiles(path.join(ROOT, c)).map((f) => [f, onDisk(c, f)]));

/** Reads every file of a case through a source and compares with the disk. */
async function assertAllFiles(src, c) {
  const files = listFiles(path.join(ROOT, c));
  const got = await Promise.all(files.map((f) => src.read(f)));
  files.forEach((f, i) => assert.deepEqual(got[i], onDisk(c, f), `${c}/${f} via ${src.kind}`));
}

const HUB_REPOS = Object.fromEntries(CASES.map((c) => [`test/${c}`, path.join(ROOT, c)]));

// ---------------------------------------------------------------------------
// files.js

test('directory: every fixture file, optional and missing files, labels', async () => {
  for (const c of CASES) {
    const src = await openSource(path.join(ROOT, c));
    assert.equal(src.kind, 'directory');
    await assertAllFiles(src, c);
  }
  const src = await openSource(path.join(ROOT, 'bert-minilm'));
  assert.equal(await src.read('nope.json', { optional: true }), null);
  assert.equal(await src.readJSON('nope.json', { optional: true }), null);
  await rejects(src.read('nope.json'), 'NOT_FOUND', /nope\.json.*bert-minilm/);
  await rejects(src.read('1_Pooling'), 'NOT_FOUND', /1_Pooling/); // a folder is not a file
  assert.deepEqual((await src.readJSON('1_Pooling/config.json')).word_embedding_dimension, 32);
  assert.equal(await src.has('config.json'), true);
  assert.equal(await src.has('nope.json'), false);
  // trailing slash and file: URLs
  assert.equal((await openSource(`${path.join(ROOT, 'bert-minilm')}/`)).kind, 'directory');
  const viaUrl = await openSource(new URL('./pretrained/bert-minilm/', import.meta.url));
  assert.equal(viaUrl.kind, 'directory');
  assert.deepEqual(await viaUrl.read('config.json'), onDisk('bert-minilm', 'config.json'));
  // a path that does not exist
  await rejects(openSource(path.join(ROOT, 'no-such-model')), 'NOT_FOUND', /no-such-model/);
  await rejects(openSource('./no-such-model'), 'NOT_FOUND', /no-such-model/);
  await rejects(openSource(path.join(ROOT, 'bert-minilm', 'config.json')), 'NOT_FOUND', /not a model directory/);
  // neither a path nor an id nor a URL
  await rejects(openSource('just-a-name'), 'BAD_ARGUMENT', /owner\/name/);
  await rejects(openSource(42), 'BAD_ARGUMENT', /source/);
  await rejects(openSource(''), 'BAD_ARGUMENT', /source/);
});

test('directory: bad JSON and bad UTF-8 are BAD_FILE naming the file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-io-'));
  try {
    writeFileSync(path.join(dir, 'config.json'), '{"a": 1,');
    writeFileSync(path.join(dir, 'latin1.json'), Buffer.from([0x22, 0xe9, 0x22]));
    const src = await openSource(dir);
    await rejects(src.readJSON('config.json'), 'BAD_FILE', /config\.json .*not valid JSON/);
    await rejects(src.readText('latin1.json'), 'BAD_FILE', /latin1\.json .*UTF-8/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('source kinds: an existing path wins over an id; ./, /, C:\\ are paths; owner/name is an id', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-io-'));
  const cwd = process.cwd();
  try {
    mkdirSync(path.join(dir, 'owner', 'name'), { recursive: true });
    writeFileSync(path.join(dir, 'owner', 'name', 'config.json'), '{"ok": true}');
    process.chdir(dir);
    const local = await openSource('owner/name');
    assert.equal(local.kind, 'directory');
    assert.deepEqual(await local.readJSON('config.json'), { ok: true });
    const hub = await openSource('owner/other', {
      fetch: () => {
        throw new Error('no network in this test');
      },
    });
    assert.equal(hub.kind, 'hub');
    assert.equal(hub.label, 'owner/other');
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
  await rejects(openSource('C:\\models\\x'), 'NOT_FOUND', /C:/);
  await rejects(openSource('/no/such/dir'), 'NOT_FOUND', /\/no\/such\/dir/);
  for (const id of ['BAAI/bge-small-en-v1.5', 'sentence-transformers/all-MiniLM-L6-v2', 'a_b/c.d']) assert.ok(isHubId(id), id);
  for (const id of ['a/../b', 'a/b/c', 'a..b/c', 'a--b/c', 'a b/c', '/a/b', 'a/', 'ab']) assert.ok(!isHubId(id), id);
  await rejects(openSource('owner/name', { revision: '' }), 'BAD_ARGUMENT', /revision/);
  await rejects(openSource('owner/name', { hubUrl: 'ftp://x' }), 'BAD_ARGUMENT', /hubUrl/);
  await rejects(openSource('owner/name', { fetch: 'yes' }), 'BAD_ARGUMENT', /fetch/);
  await rejects(openSource('owner/name', { cache: 'no' }), 'BAD_ARGUMENT', /cache/);
  await rejects(openSource('owner/name', { onProgress: 1 }), 'BAD_ARGUMENT', /onProgress/);
});

test('file map: object, Map, strings, Blobs, File lists, a dropped folder stripped; bad keys refused', async () => {
  for (const c of CASES) {
    const map = folderMap(c);
    await assertAllFiles(await openSource(map), c);
    await assertAllFiles(await openSource(Object.fromEntries(map)), c);
  }
  const map = folderMap('bert-dense-pairs');
  // a dropped folder, values as Blobs, ArrayBuffers and strings
  const dropped = new Map(
    [...map].map(([k, v], i) => [`all-MiniLM-L6-v2/${k}`, i % 3 === 0 ? new Blob([v]) : i % 3 === 1 ? v.slice().buffer : new TextDecoder().decode(v)]),
  );
  for (const [k, v] of map) if (k.endsWith('.safetensors')) dropped.set(`all-MiniLM-L6-v2/${k}`, new Blob([v])); // binary never as a string
  const src = await openSource(dropped);
  assert.equal(src.kind, 'files');
  await assertAllFiles(src, 'bert-dense-pairs');
  assert.equal(await src.read('all-MiniLM-L6-v2/config.json', { optional: true }), null);
  // a leading folder is kept when config.json is at the root
  const kept = await openSource({ 'config.json': '{}', 'x/a.json': '{"a":1}' });
  assert.deepEqual(await kept.readJSON('x/a.json'), { a: 1 });
  // ...and when names do not share one folder
  const mixed = await openSource({ 'a/config.json': '{}', 'b/x.json': '[]' });
  assert.deepEqual(await mixed.readJSON('a/config.json'), {});
  await rejects(mixed.read('config.json'), 'NOT_FOUND', /config\.json/);
  // progress: once per file, whole
  const events = [];
  const withProgress = await openSource(map, { onProgress: (e) => events.push(e) });
  await withProgress.read('config.json');
  assert.deepEqual(events, [{ file: 'config.json', loaded: map.get('config.json').length, total: map.get('config.json').length }]);
  // keys that escape the folder, and bad values
  for (const key of ['../config.json', 'a/../../b', '/etc/passwd', 'a\\b', 'a//b', 'C:/x', 'a/./b', 'nul\0'])
    await rejects(openSource({ [key]: 'x', 'config.json': '{}' }), 'BAD_ARGUMENT', /file map key/);
  // a list of File objects, as an <input webkitdirectory> gives (webkitRelativePath), or plain names
  const asFile = (name, bytes, rel) => Object.defineProperty(new File([bytes], name.split('/').at(-1)), 'webkitRelativePath', { value: rel ?? '' });
  await assertAllFiles(await openSource([...map].map(([k, v]) => asFile(k, v, `bert-dense-pairs/${k}`))), 'bert-dense-pairs');
  const flat = await openSource([asFile('config.json', map.get('config.json')), asFile('modules.json', map.get('modules.json'))]);
  assert.deepEqual(await flat.read('modules.json'), map.get('modules.json'));
  await rejects(openSource([asFile('config.json', 'a'), asFile('config.json', 'b')]), 'BAD_ARGUMENT', /config\.json is given twice/);
  await rejects(openSource(['config.json']), 'BAD_ARGUMENT', /File objects/);
  await rejects(openSource(new Map([['config.json', 42]])), 'BAD_ARGUMENT', /config\.json/);
  await rejects(openSource({}), 'BAD_ARGUMENT', /empty/);
});

test('paths that escape the source are refused before any read, naming the referring file', async () => {
  const src = await openSource(path.join(ROOT, 'bert-minilm'));
  for (const p of ['../bert-bge-mlm/config.json', '/etc/passwd', 'a\\..\\b', 'a//b', '', 'a/./b', 'x\0y', 'C:/Windows', '1_Pooling/..'])
    await rejects(src.read(p), 'BAD_FILE', /only relative paths/);
  await rejects(src.read('../x', { from: 'model.safetensors.index.json' }), 'BAD_FILE', /model\.safetensors\.index\.json names the file '\.\.\/x'/);
  assert.deepEqual(checkPath('1_Pooling/config.json'), ['1_Pooling', 'config.json']);

  // a crafted index, from a directory, a file map and the Hub
  const index = JSON.stringify({ metadata: {}, weight_map: { 'a.weight': '../../etc/passwd' } });
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-io-'));
  const hub = await startHub({ repos: { 'evil/model': dir } });
  try {
    writeFileSync(path.join(dir, 'config.json'), '{}');
    writeFileSync(path.join(dir, 'model.safetensors.index.json'), index);
    for (const source of [dir, { 'config.json': '{}', 'model.safetensors.index.json': index }, 'evil/model']) {
      const s = await openSource(source, { hubUrl: hub.url });
      await rejects(readWeights(s), 'BAD_FILE', /model\.safetensors\.index\.json names the file '\.\.\/\.\.\/etc\/passwd'/);
    }
    assert.ok(!hub.requests.some((r) => r.path.includes('passwd')), 'no request for the escaping path');
    // a module path in modules.json
    const modules = JSON.stringify([
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '../1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ]);
    await rejects(readRecipe(await openSource({ 'config.json': '{}', 'modules.json': modules })), 'BAD_FILE', /modules\.json names the file '\.\.\/1_Pooling'/);
  } finally {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('URL folder on a local server: every fixture file; URL objects; 404s', async () => {
  const server = await startServer({ port: 0, roots: { tests: 'tests' } });
  const base = `http://127.0.0.1:${server.port}/tests/pretrained`;
  try {
    for (const c of CASES) {
      const src = await openSource(`${base}/${c}`); // no trailing slash: one is added
      assert.equal(src.kind, 'url');
      assert.equal(src.label, `${base}/${c}/`);
      await assertAllFiles(src, c);
    }
    const src = await openSource(new URL(`${base}/bert-minilm/`));
    assert.deepEqual(await src.read('1_Pooling/config.json'), onDisk('bert-minilm', '1_Pooling/config.json'));
    assert.equal(await src.read('nope.json', { optional: true }), null);
    await rejects(src.read('nope.json'), 'NOT_FOUND', new RegExp(`nope\\.json.*${server.port}`));
    assert.equal(await src.has('model.safetensors'), true);
    assert.equal(await src.has('pytorch_model.bin'), false);
  } finally {
    await server.close();
  }
});

test('Hub: every fixture file through resolve URLs (LFS redirects followed), lazily, with the fetch option', async () => {
  const hub = await startHub({ repos: HUB_REPOS, slow: { chunks: 4, delayMs: 2 }, cache: false });
  try {
    let calls = 0;
    const counting = (url, init) => {
      calls++;
      return fetch(url, init);
    };
    for (const c of CASES) {
      const before = hub.requests.length;
      const src = await openSource(`test/${c}`, { hubUrl: hub.url, fetch: counting });
      assert.equal(src.kind, 'hub');
      assert.equal(src.label, `test/${c}`);
      assert.equal(hub.requests.length, before, 'opening downloads nothing');
      await assertAllFiles(src, c);
    }
    // a resolve URL and, for LFS files, the CDN it redirects to (the loader follows the hub's redirects itself in Node)
    const gets = hub.requests.filter((r) => r.method === 'GET' && (r.path.includes('/resolve/') || r.path.startsWith('/cdn-lfs/')));
    assert.equal(calls, gets.length, 'every download went through the fetch option');
    assert.ok(
      hub.requests.some((r) => r.status === 302 && r.path.endsWith('/model.safetensors')),
      'LFS redirect seen',
    );
    // read in parallel: the first request at main, the others at the commit it named
    const pooling = hub.requests.filter((r) => r.path.startsWith('/test/bert-minilm/resolve/') && r.path.endsWith('/1_Pooling/config.json'));
    assert.ok(pooling.length === 1 && ['main', hubCommit('test/bert-minilm')].includes(pooling[0].path.split('/')[4]), pooling[0]?.path);
    // a trailing slash on hubUrl is fine
    const src = await openSource('test/bert-minilm', { hubUrl: `${hub.url}/` });
    assert.deepEqual(await src.read('config.json'), onDisk('bert-minilm', 'config.json'));
  } finally {
    await hub.close();
  }
});

// These test the downloads themselves: no hub cache on disk (cache: false), so that every read goes to the stand-in.
test('Hub: progress events are monotone, several per file, one final loaded === total', async () => {
  const hub = await startHub({ repos: HUB_REPOS, slow: { chunks: 8, delayMs: 15 }, cache: false });
  try {
    const events = [];
    const src = await openSource('test/bert-minilm', { hubUrl: hub.url, cache: false, onProgress: (e) => events.push({ ...e }) });
    for (const f of ['model.safetensors', 'tokenizer.json', '1_Pooling/config.json']) {
      const bytes = await src.read(f);
      const mine = events.filter((e) => e.file === f);
      assert.ok(mine.length >= 4, `${f}: ${mine.length} progress events`);
      for (let i = 1; i < mine.length; i++) assert.ok(mine[i].loaded >= mine[i - 1].loaded, `${f}: monotone`);
      for (const e of mine) {
        assert.equal(e.total, bytes.length, `${f}: total from Content-Length`);
        assert.ok(e.loaded <= e.total);
      }
      assert.equal(mine.filter((e) => e.loaded === e.total).length, 1, `${f}: one final event`);
      assert.deepEqual(mine.at(-1), { file: f, loaded: bytes.length, total: bytes.length });
    }
    // no Content-Length: total null until the end
    const chunked = (url, init) => fetch(url, init).then((r) => new Response(r.body, { status: r.status, headers: { 'content-type': 'application/json' } }));
    const ev2 = [];
    const src2 = await openSource('test/bert-minilm', { hubUrl: hub.url, cache: false, fetch: chunked, onProgress: (e) => ev2.push(e) });
    const bytes = await src2.read('tokenizer.json');
    assert.ok(ev2.length >= 3 && ev2.slice(0, -1).every((e) => e.total === null), 'total null while unknown');
    assert.deepEqual(ev2.at(-1), { file: 'tokenizer.json', loaded: bytes.length, total: bytes.length });
  } finally {
    await hub.close();
  }
});

test('Hub: revisions (40-hex, refs/pr/1 encoded), optional files, and error codes', async () => {
  const hub = await startHub({ repos: HUB_REPOS, cache: false });
  try {
    const commit = 'a'.repeat(40);
    const pinned = await openSource('test/bert-minilm', { hubUrl: hub.url, cache: false, revision: commit });
    assert.equal(pinned.label, `test/bert-minilm@${commit}`);
    assert.deepEqual(await pinned.read('config.json'), onDisk('bert-minilm', 'config.json'));
    assert.equal(hub.requests.at(-1).path, `/test/bert-minilm/resolve/${commit}/config.json`);

    const pr = await openSource('test/bert-minilm', { hubUrl: hub.url, cache: false, revision: 'refs/pr/1' });
    await rejects(pr.read('config.json'), 'NOT_FOUND', /revision 'refs\/pr\/1' not found/);
    await rejects(pr.read('modules.json', { optional: true }), 'NOT_FOUND', /revision/); // not silently absent
    assert.equal(hub.requests.at(-1).path, '/test/bert-minilm/resolve/refs%2Fpr%2F1/modules.json');

    const src = await openSource('test/bert-minilm', { hubUrl: hub.url, cache: false });
    // 404 EntryNotFound
    assert.equal(await src.read('2_Dense/config.json', { optional: true }), null);
    assert.equal(await src.readJSON('nope.json', { optional: true }), null);
    await rejects(src.read('nope.json'), 'NOT_FOUND', /no file nope\.json in test\/bert-minilm.*404/);
    // 401 RepoNotFound: never an absent optional file
    const missing = await openSource('test/no-such-repo', { hubUrl: hub.url, cache: false });
    await rejects(missing.read('config.json'), 'NOT_FOUND', /not found or private/);
    await rejects(missing.read('modules.json', { optional: true }), 'NOT_FOUND', /not found or private.*401/);
    // 500 (the source asks at the commit its first answer named)
    const at = hubCommit('test/bert-minilm');
    hub.failNext(`/test/bert-minilm/resolve/${at}/config.json`, 500);
    const url = `${hub.url}/test/bert-minilm/resolve/${at}/config.json`;
    const e500 = await rejects(src.read('config.json'), 'NETWORK', /HTTP 500/);
    assert.ok(e500.message.includes(url), e500.message);
    hub.failNext(`/test/bert-minilm/resolve/${at}/modules.json`, 503);
    await rejects(src.read('modules.json', { optional: true }), 'NETWORK', /HTTP 503/);
    assert.deepEqual(await src.read('config.json'), onDisk('bert-minilm', 'config.json'), 'the next try works');
    // fetch itself failing
    const broken = await openSource('test/bert-minilm', {
      hubUrl: hub.url,
      cache: false,
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    await rejects(broken.read('config.json'), 'NETWORK', /fetch failed/);
    await rejects(broken.read('config.json', { optional: true }), 'NETWORK', /config\.json/);
    // a server that is not there
    const closed = await startHub({ repos: {} });
    const deadUrl = closed.url;
    await closed.close();
    await rejects((await openSource('test/bert-minilm', { hubUrl: deadUrl })).read('config.json'), 'NETWORK', new RegExp(deadUrl.replace(/[.:/]/g, '\\$&')));
    // has(): HEAD requests, no body downloaded
    const n = hub.requests.length;
    assert.equal(await src.has('model.safetensors'), true);
    assert.equal(await src.has('pytorch_model.bin'), false);
    assert.ok(hub.requests.slice(n).every((r) => r.method === 'HEAD'));
  } finally {
    await hub.close();
  }
});

// ---------------------------------------------------------------------------
// safetensors.js

/** A safetensors file from a header (object or raw text) and data bytes. */
function stFile(header, data = new Uint8Array(0), { padTo8 = false } = {}) {
  let text = typeof header === 'string' ? header : JSON.stringify(header);
  if (padTo8) while ((8 + Buffer.byteLength(text)) % 8) text += ' ';
  const h = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}
const f32bytes = (values) => new Uint8Array(new Float32Array(values).buffer);

/** float16 bits -> value, by the IEEE formula (independent of safetensors.js). */
function decodeF16(bits) {
  const sign = bits & 0x8000 ? -1 : 1,
    e = (bits >> 10) & 31,
    m = bits & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}
/** bfloat16 bits -> value, by the formula. */
function decodeBF16(bits) {
  const sign = bits & 0x8000 ? -1 : 1,
    e = (bits >> 7) & 255,
    m = bits & 127;
  if (e === 0) return sign * (m / 128) * 2 ** -126;
  if (e === 255) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 128) * 2 ** (e - 127);
}
function assertWidened(tensor, name) {
  const got = toFloat32(tensor, name);
  const dv = new DataView(tensor.bytes.buffer, tensor.bytes.byteOffset, tensor.bytes.byteLength);
  const decode = tensor.dtype === 'F16' ? decodeF16 : decodeBF16;
  assert.equal(got.length, tensor.bytes.length / 2);
  for (let i = 0; i < got.length; i++) {
    const want = decode(dv.getUint16(2 * i, true));
    if (!Object.is(got[i], want) && !(Number.isNaN(got[i]) && Number.isNaN(want)))
      assert.fail(`${name}[${i}] (${tensor.dtype} bits ${dv.getUint16(2 * i, true).toString(16)}): got ${got[i]}, expected ${want}`);
  }
}

test('safetensors: every fixture parses; values widen as an independent decode gives', async () => {
  const seen = new Set();
  for (const c of WITH_WEIGHTS) {
    const { tensors, files } = await readWeights(await openSource(path.join(ROOT, c)));
    assert.ok(tensors.size > 10, c);
    for (const f of files) assert.ok(existsSync(path.join(ROOT, c, f)));
    for (const [name, t] of tensors) {
      seen.add(t.dtype);
      assert.equal(t.bytes.length, t.shape.reduce((a, b) => a * b, 1) * { F32: 4, F16: 2, BF16: 2, I64: 8 }[t.dtype], `${c} ${name}`);
      if (t.dtype === 'F16' || t.dtype === 'BF16') assertWidened(t, `${c}: ${name}`);
      else if (t.dtype === 'F32') {
        const v = toFloat32(t, name);
        const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
        for (let i = 0; i < v.length; i++) assert.ok(Object.is(v[i], dv.getFloat32(4 * i, true)), `${c} ${name}[${i}]`);
      } else await rejects(() => toFloat32(t, `${c}: ${name}`), 'UNSUPPORTED_MODEL', new RegExp(`${name}.*I64`));
    }
  }
  assert.deepEqual([...seen].sort(), ['BF16', 'F16', 'F32', 'I64']);
  // every bit pattern
  const all = new Uint8Array(65536 * 2);
  for (let h = 0; h < 65536; h++) ((all[2 * h] = h & 255), (all[2 * h + 1] = h >> 8));
  const file = stFile(
    { h: { dtype: 'F16', shape: [65536], data_offsets: [0, all.length] }, b: { dtype: 'BF16', shape: [256, 256], data_offsets: [all.length, 2 * all.length] } },
    new Uint8Array([...all, ...all]),
  );
  const { tensors } = parseSafetensors(file, 'all.safetensors');
  assertWidened(tensors.get('h'), 'all F16');
  assertWidened(tensors.get('b'), 'all BF16');
});

test('safetensors: views, alignment, F64 narrowing, metadata, padding, zero-size tensors', () => {
  const data = new Uint8Array([...f32bytes([1.5, -2]), ...new Uint8Array(new Float64Array([0.1, 1e300]).buffer)]);
  const file = stFile(
    {
      __metadata__: { format: 'pt' },
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      d: { dtype: 'F64', shape: [1, 2], data_offsets: [8, 24] },
      z: { dtype: 'F32', shape: [0, 7], data_offsets: [24, 24] },
    },
    data,
    { padTo8: true },
  );
  const { metadata, tensors } = parseSafetensors(file, 'x.safetensors');
  assert.deepEqual(metadata, { format: 'pt' });
  assert.deepEqual([...tensors.keys()], ['a', 'd', 'z']);
  const a = tensors.get('a');
  assert.equal(a.bytes.buffer, file.buffer, 'a view, no copy');
  assert.deepEqual(a.shape, [2]);
  const av = toFloat32(a, 'a');
  assert.deepEqual([...av], [1.5, -2]);
  assert.equal(av.buffer, file.buffer, 'aligned F32: a view');
  assert.deepEqual([...toFloat32(tensors.get('d'), 'd')], [Math.fround(0.1), Infinity]);
  assert.equal(toFloat32(tensors.get('z'), 'z').length, 0);
  // unaligned: a copy with the right values
  const shifted = new Uint8Array(file.length + 1);
  shifted.set(file, 1);
  const u = parseSafetensors(shifted.subarray(1), 'shifted').tensors.get('a');
  assert.deepEqual([...toFloat32(u, 'a')], [1.5, -2]);
  assert.equal(parseSafetensors(stFile({}), 'empty').tensors.size, 0);
  assert.equal(parseSafetensors(stFile({ a: { dtype: 'F32', shape: [], data_offsets: [0, 4] } }, f32bytes([3])), 's').tensors.get('a').shape.length, 0);
  // integer and other dtypes parse but do not widen
  const ints = parseSafetensors(
    stFile({ i: { dtype: 'I32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'BOOL', shape: [2], data_offsets: [4, 6] } }, new Uint8Array(6)),
    'ints',
  ).tensors;
  assert.throws(
    () => toFloat32(ints.get('i'), 'embeddings.position_ids'),
    (e) => e.code === 'UNSUPPORTED_MODEL' && /embeddings\.position_ids.*I32/.test(e.message),
  );
  assert.throws(
    () => toFloat32(ints.get('b'), 'mask'),
    (e) => e.code === 'UNSUPPORTED_MODEL' && /mask/.test(e.message),
  );
});

test('safetensors: malformed files are BAD_FILE naming the file and the problem', () => {
  const ok = { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } };
  const good = stFile(ok, f32bytes([1, 2]));
  const cases = [
    ['too short', new Uint8Array(5), /too short/],
    ['truncated', good.subarray(0, 20), /header length \d+ exceeds the file/],
    [
      'huge header length',
      (() => {
        const f = good.slice();
        new DataView(f.buffer).setUint32(4, 0xffffffff, true);
        return f;
      })(),
      /exceeds the file/,
    ],
    ['bad JSON', stFile('{"a": {"dtype": "F32",', f32bytes([1, 2])), /not valid JSON/],
    ['not an object', stFile('[1, 2]'), /must be a JSON object/],
    [
      'bad UTF-8',
      (() => {
        const f = stFile('{"\u00e9": 1}');
        f[10] = 0xff;
        return f;
      })(),
      /UTF-8/,
    ],
    [
      'overlap',
      stFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, new Uint8Array(12)),
      /tensor 'b'.*overlap/,
    ],
    [
      'hole',
      stFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [12, 20] } }, new Uint8Array(20)),
      /tensor 'b'.*hole/,
    ],
    ['data after the last tensor', stFile(ok, new Uint8Array(12)), /4 bytes of data after the last tensor/],
    ['wrong length', stFile({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8)), /tensor 'a'.*span 8 bytes.*needs 12/],
    ['huge shape', stFile({ a: { dtype: 'F32', shape: [2 ** 40, 2 ** 40], data_offsets: [0, 8] } }, new Uint8Array(8)), /tensor 'a'.*needs more than/],
    [
      'duplicate tensor',
      stFile('{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}', new Uint8Array(8)),
      /key 'a' twice/,
    ],
    [
      'duplicate tensor, escaped',
      stFile(
        '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "\\u0061": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
        new Uint8Array(8),
      ),
      /key 'a' twice/,
    ],
    ['duplicate field', stFile('{"a": {"dtype": "F32", "dtype": "F16", "shape": [2], "data_offsets": [0, 8]}}', new Uint8Array(8)), /key 'dtype' twice/],
    ['duplicate __metadata__', stFile('{"__metadata__": {}, "__metadata__": {"x": "y"}}'), /key '__metadata__' twice/],
    ['duplicate metadata key', stFile('{"__metadata__": {"format": "pt", "format": "tf"}}'), /key 'format' twice/],
    ['unknown dtype', stFile({ a: { dtype: 'F17', shape: [2], data_offsets: [0, 8] } }, new Uint8Array(8)), /tensor 'a'.*unknown dtype "F17"/],
    ['sub-byte dtype', stFile({ a: { dtype: 'F4', shape: [2], data_offsets: [0, 1] } }, new Uint8Array(1)), /unknown dtype "F4"/],
    [
      'offsets past the end',
      stFile({ a: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }, new Uint8Array(8)),
      /tensor 'a'.*end 16 is past the data \(8 bytes\)/,
    ],
    ['reversed offsets', stFile({ a: { dtype: 'F32', shape: [0], data_offsets: [8, 0] } }, new Uint8Array(8)), /reversed/],
    ['offsets not a pair', stFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8, 8] } }, new Uint8Array(8)), /data_offsets must be \[begin, end\]/],
    [
      'negative shape',
      stFile({ a: { dtype: 'F32', shape: [-2], data_offsets: [0, 8] } }, new Uint8Array(8)),
      /shape must be an array of non-negative integers/,
    ],
    ['fractional shape', stFile({ a: { dtype: 'F32', shape: [1.5], data_offsets: [0, 8] } }, new Uint8Array(8)), /shape/],
    ['unknown field', stFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8], extra: 1 } }, new Uint8Array(8)), /unknown field 'extra'/],
    ['missing field', stFile({ a: { dtype: 'F32', shape: [2] } }, new Uint8Array(8)), /needs dtype, shape and data_offsets/],
    ['tensor not an object', stFile({ a: [1] }), /tensor 'a' must be an object/],
    ['metadata not strings', stFile({ __metadata__: { n: 1 } }), /__metadata__\.n must be a string/],
    ['metadata not an object', stFile({ __metadata__: 'pt' }), /__metadata__ must be an object/],
    ['nested too deep', stFile(`{"a": ${'['.repeat(100)}${']'.repeat(100)}}`), /the header nests more than 64 deep/],
  ];
  assert.equal(parseSafetensors(good, 'good').tensors.size, 1);
  for (const [what, bytes, re] of cases) {
    assert.throws(
      () => parseSafetensors(bytes, 'bad.safetensors'),
      (e) => {
        assert.equal(e.code, 'BAD_FILE', `${what}: ${e.code} ${e.message}`);
        assert.match(e.message, /^bad\.safetensors: /, what);
        assert.match(e.message, re, what);
        return true;
      },
      what,
    );
  }
});

test('safetensors: shards give the union, each read once; bad indexes refused', async () => {
  const c = 'bert-dense-pairs';
  const index = JSON.parse(readFileSync(path.join(ROOT, c, 'model.safetensors.index.json'), 'utf8'));
  const shards = [...new Set(Object.values(index.weight_map))];
  assert.equal(shards.length, 2);
  const reads = [];
  const src = await openSource(path.join(ROOT, c), { onProgress: (e) => reads.push(e.file) });
  const { tensors, files } = await readWeights(src);
  assert.deepEqual(files, shards);
  assert.deepEqual(reads.filter((f) => f.endsWith('.safetensors')).sort(), shards.slice().sort(), 'each shard read once, no model.safetensors');
  assert.deepEqual([...tensors.keys()].sort(), Object.keys(index.weight_map).sort());
  for (const shard of shards) {
    const own = parseSafetensors(onDisk(c, shard), shard).tensors;
    for (const [name, t] of own) {
      assert.equal(index.weight_map[name], shard);
      assert.deepEqual(tensors.get(name).bytes, t.bytes, name);
      assert.deepEqual(tensors.get(name).shape, t.shape, name);
    }
  }
  // the same through the Hub: each shard downloaded once
  const hub = await startHub({ repos: HUB_REPOS, cache: false });
  try {
    const viaHub = await readWeights(await openSource(`test/${c}`, { hubUrl: hub.url }));
    assert.equal(viaHub.tensors.size, tensors.size);
    for (const shard of shards)
      assert.equal(hub.requests.filter((r) => r.method === 'GET' && r.path === `/test/${c}/resolve/${hubCommit(`test/${c}`)}/${shard}`).length, 1, shard);
  } finally {
    await hub.close();
  }

  const t = (names, at = 0) =>
    stFile(
      Object.fromEntries(names.map((n, i) => [n, { dtype: 'F32', shape: [1], data_offsets: [4 * i + at, 4 * i + 4 + at] }])),
      new Uint8Array(4 * names.length),
    );
  const idx = (map) => JSON.stringify({ weight_map: map });
  await rejects(
    readWeights(
      await openSource({
        'model.safetensors.index.json': idx({ x: 's1.safetensors', y: 's2.safetensors' }),
        's1.safetensors': t(['x']),
        's2.safetensors': t(['y', 'x']),
      }),
    ),
    'BAD_FILE',
    /model\.safetensors\.index\.json: tensor 'x' is in both s1\.safetensors and s2\.safetensors/,
  );
  await rejects(
    readWeights(await openSource({ 'model.safetensors.index.json': idx({ x: 's1.safetensors', y: 's1.safetensors' }), 's1.safetensors': t(['x']) })),
    'BAD_FILE',
    /tensor 'y' should be in s1\.safetensors, but it is not there/,
  );
  await rejects(
    readWeights(
      await openSource({
        'model.safetensors.index.json': idx({ x: 's1.safetensors', y: 's2.safetensors' }),
        's1.safetensors': t(['x', 'y']),
        's2.safetensors': t([]),
      }),
    ),
    'BAD_FILE',
    /tensor 'y' should be in s2\.safetensors, but is in s1\.safetensors/,
  );
  await rejects(readWeights(await openSource({ 'model.safetensors.index.json': idx({ x: 's1.safetensors' }) })), 'NOT_FOUND', /s1\.safetensors/);
  await rejects(readWeights(await openSource({ 'model.safetensors.index.json': '{"weight_map": []}' })), 'BAD_FILE', /weight_map/);
  await rejects(readWeights(await openSource({ 'model.safetensors.index.json': '{"weight_map": ' })), 'BAD_FILE', /model\.safetensors\.index\.json .*JSON/);
  await rejects(readWeights(await openSource({ 'model.safetensors': new Uint8Array(3) })), 'BAD_FILE', /^model\.safetensors: /);
});

test('safetensors: pytorch_model.bin only is UNSUPPORTED_MODEL with the conversion hint; nothing is NOT_FOUND', async () => {
  const hint = (e) => {
    assert.match(e.message, /pytorch_model\.bin/);
    assert.match(e.message, /never unpickles/);
    assert.match(e.message, /AutoModel\.from_pretrained\(path\)\.save_pretrained\(out, safe_serialization=True\)/);
  };
  hint(await rejects(readWeights(await openSource(path.join(ROOT, 'bert-pytorch-bin'))), 'UNSUPPORTED_MODEL', /bert-pytorch-bin/));
  hint(await rejects(readWeights(await openSource({ 'config.json': '{}', 'pytorch_model.bin.index.json': '{}' })), 'UNSUPPORTED_MODEL'));
  const hub = await startHub({ repos: HUB_REPOS, cache: false });
  try {
    hint(await rejects(readWeights(await openSource('test/bert-pytorch-bin', { hubUrl: hub.url })), 'UNSUPPORTED_MODEL', /test\/bert-pytorch-bin/));
    assert.ok(!hub.requests.some((r) => r.method === 'GET' && r.path.endsWith('.bin')), 'the pickle is never downloaded');
  } finally {
    await hub.close();
  }
  await rejects(
    readWeights(await openSource({ 'config.json': '{}' })),
    'NOT_FOUND',
    /model\.safetensors, model\.safetensors\.index\.json, pytorch_model\.bin and pytorch_model\.bin\.index\.json/,
  );
});

// ---------------------------------------------------------------------------
// recipe.js

/** Per row: max |a - e| / rms(e row) <= tol. */
function assertRowsClose(actual, expected, [B, D], tol, what) {
  assert.equal(actual.length, B * D, `${what}: length`);
  assert.equal(expected.length, B * D, `${what}: expected length`);
  for (let b = 0; b < B; b++) {
    let ss = 0;
    for (let i = 0; i < D; i++) ss += expected[b * D + i] ** 2;
    const rms = Math.sqrt(ss / D) || 1;
    for (let i = 0; i < D; i++) {
      const err = Math.abs(actual[b * D + i] - expected[b * D + i]) / rms;
      if (!(err <= tol))
        assert.fail(`${what}: row ${b} element ${i}: got ${actual[b * D + i]}, expected ${expected[b * D + i]} (error ${err.toExponential(2)} of the row rms)`);
    }
  }
}
const TOL = 1e-6;

test('pool: every mode of every batch of every case equals the reference', () => {
  let checked = 0;
  for (const exp of EXPECTED) {
    exp.batches.forEach((batch, bi) => {
      const [B, , H] = batch.hidden.shape;
      for (const mode of POOLING_ORDER) {
        const want = batch.pooled[mode];
        assert.ok(want, `${exp.case}: pooled.${mode} present`);
        const got = pool(batch.hidden, batch.lengths, [mode]);
        assert.deepEqual(got.shape, [B, H]);
        assert.ok(got.data instanceof Float32Array);
        assertRowsClose(got.data, want.flat(), [B, H], TOL, `${exp.case} batch ${bi} ${mode}`);
        checked++;
      }
      // concatenation in the order given
      const all = pool(batch.hidden, batch.lengths, POOLING_ORDER);
      assert.deepEqual(all.shape, [B, POOLING_ORDER.length * H]);
      const want = batch.pooled;
      const cat = Array.from({ length: B }, (_, b) => POOLING_ORDER.flatMap((m) => want[m][b])).flat();
      assertRowsClose(all.data, cat, all.shape, TOL, `${exp.case} batch ${bi} all modes`);
    });
  }
  assert.ok(checked >= EXPECTED.length * 2 * 6, `${checked} checks`);
});

test('recipes: every case read from its folder, applied to the pooled states, equals the reference embeddings', async () => {
  for (const exp of EXPECTED) {
    const src = await openSource(path.join(ROOT, exp.folder ?? exp.case));
    const recipe = await readRecipe(src, { modelType: exp.modelType, nameOrPath: exp.case });
    const want = exp.embeddingRecipe;
    assert.deepEqual(recipe.pooling, want.pooling, `${exp.case}: pooling`);
    assert.equal(recipe.normalize, want.normalize, `${exp.case}: normalize`);
    assert.equal(recipe.source, want.source === 'modules.json' ? 'modules.json' : 'default', `${exp.case}: source`);
    if (want.dense) {
      assert.equal(recipe.dense.length, 1, `${exp.case}: one Dense`);
      const d = recipe.dense[0];
      assert.equal(d.inFeatures, want.dense.in_features);
      assert.equal(d.outFeatures, want.dense.out_features);
      assert.equal(d.bias !== null, want.dense.bias);
      assert.equal(
        d.activation,
        { 'torch.nn.modules.activation.Tanh': 'tanh', 'torch.nn.modules.linear.Identity': 'identity' }[want.dense.activation_function],
      );
      assert.equal(d.weight.length, d.inFeatures * d.outFeatures);
    } else assert.deepEqual(recipe.dense, [], `${exp.case}: no Dense`);
    exp.batches.forEach((batch, bi) => {
      const emb = applyRecipe(pool(batch.hidden, batch.lengths, recipe.pooling), recipe);
      assert.deepEqual(emb.shape, batch.embeddings.shape, `${exp.case} batch ${bi}: shape`);
      assertRowsClose(emb.data, batch.embeddings.data, emb.shape, TOL, `${exp.case} batch ${bi} embeddings`);
    });
    if (exp.matryoshka) {
      const m = exp.matryoshka;
      const batch = exp.batches[m.batchIndex];
      const emb = applyRecipe(pool(batch.hidden, batch.lengths, recipe.pooling), recipe, { dimensions: m.dimensions, matryoshkaNorm: true });
      assert.deepEqual(emb.shape, m.shape);
      assertRowsClose(emb.data, m.data, emb.shape, TOL, `${exp.case} matryoshka`);
      // without the layer norm it differs (the trap the option exists for)
      const plain = applyRecipe(pool(batch.hidden, batch.lengths, recipe.pooling), recipe, { dimensions: m.dimensions });
      assert.ok(
        plain.data.some((v, i) => Math.abs(v - m.data[i]) > 1e-3),
        `${exp.case}: matryoshkaNorm matters`,
      );
    }
  }
});

test('recipes: the files each setting comes from', async () => {
  const minilm = await readRecipe(await openSource(path.join(ROOT, 'bert-minilm')));
  assert.deepEqual(
    { ...minilm },
    {
      pooling: ['mean'],
      includePrompt: true,
      dense: [],
      normalize: true,
      maxSeqLength: 96,
      doLowerCase: false,
      prompts: null,
      defaultPromptName: null,
      similarityFnName: null,
      transformerPath: '',
      wordEmbeddingDimension: 32,
      source: 'modules.json',
    },
  );
  const bge = await readRecipe(await openSource(path.join(ROOT, 'bert-bge-mlm')));
  assert.deepEqual(bge.pooling, ['cls']);
  assert.equal(bge.maxSeqLength, 128);
  assert.equal(bge.doLowerCase, true);
  assert.deepEqual(bge.prompts, { __proto__: null, query: 'Represent this sentence for searching relevant passages: ' }); // no prototype
  assert.equal(bge.defaultPromptName, null);
  // Dense: Tanh with bias; Identity without
  const pairs = await readRecipe(await openSource(path.join(ROOT, 'bert-dense-pairs')));
  assert.deepEqual(pairs.pooling, ['cls', 'max', 'mean'], 'ST order, not the config keys order');
  const [tanh] = pairs.dense;
  assert.equal(tanh.activation, 'tanh');
  assert.equal(tanh.bias.length, 24);
  const dense = parseSafetensors(onDisk('bert-dense-pairs', '2_Dense/model.safetensors'), 'x').tensors;
  assert.deepEqual([...tanh.weight], [...toFloat32(dense.get('linear.weight'))]);
  const t5 = await readRecipe(await openSource(path.join(ROOT, 'sentence-t5')));
  assert.equal(t5.dense[0].activation, 'identity');
  assert.equal(t5.dense[0].bias, null);
  assert.equal(t5.maxSeqLength, 256);
  // defaults
  assert.deepEqual(defaultRecipe({ nameOrPath: 'BAAI/bge-small-en-v1.5' }).pooling, ['cls']);
  for (const name of ['intfloat/e5-small-v2', 'thenlper/gte-small', 'nomic-ai/nomic-embed-text-v1.5', 'jinaai/jina-embeddings-v2-small-en', undefined])
    assert.deepEqual(defaultRecipe({ nameOrPath: name, modelType: 'bert' }).pooling, ['mean'], name);
  const d = defaultRecipe({});
  assert.equal(d.normalize, true);
  assert.equal(d.source, 'default');
  // the recipe of a Hub folder, through the Hub
  const hub = await startHub({ repos: HUB_REPOS, cache: false });
  try {
    const viaHub = await readRecipe(await openSource('test/bert-dense-pairs', { hubUrl: hub.url }));
    assert.deepEqual({ ...viaHub, dense: null }, { ...pairs, dense: null });
    assert.deepEqual([...viaHub.dense[0].weight], [...tanh.weight]);
  } finally {
    await hub.close();
  }
});

/** A file map from a fixture folder with some files replaced (null deletes). */
function variant(c, changes) {
  const map = folderMap(c);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) map.delete(k);
    else map.set(k, typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  }
  return map;
}
const MODULES = (extra) => [
  { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
  { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
  ...extra,
];

test('recipes: unknown modules, activations and options are refused, never skipped', async () => {
  const read = async (changes, c = 'bert-dense-pairs') => readRecipe(await openSource(variant(c, changes)));
  for (const type of [
    'sentence_transformers.models.LayerNorm',
    'sentence_transformers.models.WeightedLayerPooling',
    'sentence_transformers.models.CNN',
    'sentence_transformers.models.LSTM',
    'custom_st.CustomModule',
    'sentence_transformers.models.Pooling.Dense',
  ])
    await rejects(
      read({ 'modules.json': MODULES([{ idx: 2, name: '2', path: '2_X', type }]) }),
      'UNSUPPORTED_MODEL',
      new RegExp(`'${type.replace(/\./g, '\\.')}'`),
    );
  // unknown activation
  for (const act of ['torch.nn.modules.activation.Softplus', 'torch.nn.modules.activation.LeakyReLU', 'my.Tanh'])
    await rejects(
      read({ '2_Dense/config.json': { in_features: 96, out_features: 24, bias: true, activation_function: act } }),
      'UNSUPPORTED_MODEL',
      new RegExp(`2_Dense/config\\.json: activation_function '${act.replace(/\./g, '\\.')}'`),
    );
  // the known ones (class paths in either form)
  for (const [act, name] of [
    ['torch.nn.modules.activation.ReLU', 'relu'],
    ['torch.nn.GELU', 'gelu'],
    ['torch.nn.modules.activation.Sigmoid', 'sigmoid'],
    ['torch.nn.modules.activation.SiLU', 'silu'],
  ])
    assert.equal(
      (await read({ '2_Dense/config.json': { in_features: 96, out_features: 24, bias: true, activation_function: act } })).dense[0].activation,
      name,
    );
  // Dense with only a pickle
  const e = await rejects(read({ '2_Dense/model.safetensors': null, '2_Dense/pytorch_model.bin': 'PK' }), 'UNSUPPORTED_MODEL', /2_Dense/);
  assert.match(e.message, /save_pretrained\(out, safe_serialization=True\)/);
  await rejects(read({ '2_Dense/model.safetensors': null }), 'NOT_FOUND', /2_Dense\/model\.safetensors/);
  // Dense weights that do not match
  await rejects(
    read({ '2_Dense/config.json': { in_features: 96, out_features: 24, bias: false, activation_function: 'torch.nn.modules.activation.Tanh' } }),
    'BAD_FILE',
    /unexpected tensor 'linear\.bias'/,
  );
  await rejects(
    read({ '2_Dense/config.json': { in_features: 96, out_features: 12, bias: true, activation_function: 'torch.nn.modules.activation.Tanh' } }),
    'BAD_FILE',
    /linear\.weight has the shape \[24,96\]/,
  );
  await rejects(
    read({ '2_Dense/config.json': { in_features: 32, out_features: 24, activation_function: 'torch.nn.modules.activation.Tanh' } }),
    'BAD_FILE',
    /in_features is 32, but the module before it gives 96/,
  );
  // modules in an order the recipe cannot express
  await rejects(read({ 'modules.json': [MODULES([])[1], MODULES([])[0]] }), 'UNSUPPORTED_MODEL', /sequence Pooling Transformer/);
  await rejects(
    read({
      'modules.json': MODULES([
        { idx: 2, name: '2', path: '3_Normalize', type: 'sentence_transformers.models.Normalize' },
        { idx: 3, name: '3', path: '2_Dense', type: 'sentence_transformers.models.Dense' },
      ]),
    }),
    'UNSUPPORTED_MODEL',
    /Normalize Dense/,
  );
  await rejects(read({ 'modules.json': [MODULES([])[0]] }), 'UNSUPPORTED_MODEL', /sequence Transformer /);
  await rejects(read({ 'modules.json': {} }), 'BAD_FILE', /modules\.json/);
  // Dropout is the identity at inference
  const drop = await read({ 'modules.json': MODULES([{ idx: 2, name: '2', path: '2_Dropout', type: 'sentence_transformers.models.Dropout' }]) }, 'bert-minilm');
  assert.deepEqual(drop.pooling, ['mean']);
  assert.equal(drop.normalize, false);
  // pooling config
  await rejects(
    read({ '1_Pooling/config.json': { word_embedding_dimension: 32, pooling_mode_attention: true } }),
    'UNSUPPORTED_MODEL',
    /pooling_mode_attention/,
  );
  await rejects(read({ '1_Pooling/config.json': { pooling_mode_cls_token: 'yes' } }), 'BAD_FILE', /pooling_mode_cls_token/);
  await rejects(read({ '1_Pooling/config.json': { pooling_mode: 'median' } }), 'BAD_FILE', /pooling_mode "median"/);
  await rejects(read({ '1_Pooling/config.json': { pooling_mode_mean_tokens: false } }, 'bert-minilm'), 'BAD_FILE', /no pooling mode/);
  await rejects(read({ '1_Pooling/config.json': null }, 'bert-minilm'), 'NOT_FOUND', /1_Pooling\/config\.json/);
  // prompts
  await rejects(
    read({ 'config_sentence_transformers.json': { prompts: { query: 'q: ' }, default_prompt_name: 'document' } }),
    'BAD_FILE',
    /default_prompt_name 'document'/,
  );
  await rejects(read({ 'config_sentence_transformers.json': { prompts: { query: 1 } } }), 'BAD_FILE', /prompts\.query/);
  await rejects(read({ 'sentence_bert_config.json': { max_seq_length: -1 } }), 'BAD_FILE', /sentence_bert_config\.json: max_seq_length/);
});

test('recipes: ST defaults, the pooling_mode string, include_prompt, an older config name, a Transformer subfolder', async () => {
  const read = async (changes, opts, c = 'bert-minilm') => readRecipe(await openSource(variant(c, changes)), opts);
  // ST's constructor defaults: mean on unless said otherwise, so cls alone means cls + mean
  assert.deepEqual((await read({ '1_Pooling/config.json': { pooling_mode_cls_token: true } })).pooling, ['cls', 'mean']);
  assert.deepEqual((await read({ '1_Pooling/config.json': { pooling_mode_lasttoken: true, pooling_mode_mean_tokens: false } })).pooling, ['lasttoken']);
  // the string form wins over every boolean
  for (const [s, mode] of [
    ['cls', 'cls'],
    ['MAX', 'max'],
    ['mean_sqrt_len_tokens', 'mean_sqrt_len'],
    ['weightedmean', 'weightedmean'],
    ['lasttoken', 'lasttoken'],
  ])
    assert.deepEqual((await read({ '1_Pooling/config.json': { pooling_mode: s, pooling_mode_mean_tokens: true } })).pooling, [mode], s);
  // include_prompt, and ST's hard-coded INSTRUCTOR ids
  assert.equal((await read({ '1_Pooling/config.json': { pooling_mode_mean_tokens: true, include_prompt: false } })).includePrompt, false);
  assert.equal((await read({}, { nameOrPath: 'hkunlp/instructor-large' })).includePrompt, false);
  // default prompt
  const prompted = await read({ 'config_sentence_transformers.json': { prompts: { query: 'search_query: ', document: '' }, default_prompt_name: 'query' } });
  assert.deepEqual(prompted.prompts, { __proto__: null, query: 'search_query: ', document: '' });
  assert.equal(prompted.defaultPromptName, 'query');
  // an older Transformer config name
  const older = await read({ 'sentence_bert_config.json': null, 'sentence_roberta_config.json': { max_seq_length: 77, do_lower_case: true } });
  assert.equal(older.maxSeqLength, 77);
  assert.equal(older.doLowerCase, true);
  const none = await read({ 'sentence_bert_config.json': null });
  assert.equal(none.maxSeqLength, null);
  // the Transformer in a subfolder (old ST saves): its config is read there
  const sub = await read({
    'modules.json': [{ idx: 0, name: '0', path: '0_Transformer', type: 'sentence_transformers.models.Transformer' }, MODULES([])[1]],
    '0_Transformer/sentence_bert_config.json': { max_seq_length: 33 },
  });
  assert.equal(sub.transformerPath, '0_Transformer');
  assert.equal(sub.maxSeqLength, 33);
  assert.equal(sub.normalize, false);
  // subSource: the model's own files read from that folder
  const nested = new Map([...folderMap('bert-dense-pairs')].map(([k, v]) => [`0_Transformer/${k}`, v]));
  nested.set('modules.json', '[]');
  const inner = subSource(await openSource(nested), '0_Transformer');
  assert.deepEqual(await inner.read('config.json'), onDisk('bert-dense-pairs', 'config.json'));
  assert.equal((await readWeights(inner)).tensors.size, 53, 'shards named by the index are read inside the folder');
  assert.equal(await inner.read('nope.json', { optional: true }), null);
  assert.equal(await inner.readText('modules.json'), new TextDecoder().decode(onDisk('bert-dense-pairs', 'modules.json')), "the folder's own, not the root's");
  await rejects(inner.read('../modules.json'), 'BAD_FILE', /'\.\.\/modules\.json'/);
  assert.throws(
    () => subSource(inner, '../x'),
    (e) => e.code === 'BAD_FILE',
  );
});

test('pool: include_prompt false leaves the prompt out of every mode but cls; edge cases as ST', () => {
  // B=2, T=5, H=2; lengths 5 and 3; prompt of 2 tokens
  const rows = [
    [1, -1],
    [2, 5],
    [3, 0],
    [4, 2],
    [5, -3],
    [6, 1],
    [7, 9],
    [8, -2],
    [0, 0],
    [0, 0],
  ];
  const hidden = { data: Float32Array.from(rows.flat()), shape: [2, 5, 2] };
  const seq = (b) => rows.slice(b * 5, b * 5 + 5);
  const expect = (mode, b, from, to) => {
    const r = seq(b).slice(from, to);
    const col = (h) => r.map((x) => x[h]);
    const idx = Array.from({ length: to - from }, (_, i) => from + i + 1);
    return [0, 1].map(
      (h) =>
        ({
          cls: seq(b)[0][h],
          max: to > from ? Math.max(...col(h)) : -1e9,
          mean: col(h).reduce((a, v) => a + v, 0) / Math.max(to - from, 1e-9),
          mean_sqrt_len: col(h).reduce((a, v) => a + v, 0) / Math.sqrt(Math.max(to - from, 1e-9)),
          weightedmean:
            col(h).reduce((a, v, i) => a + idx[i] * v, 0) /
            Math.max(
              idx.reduce((a, v) => a + v, 0),
              1e-9,
            ),
          lasttoken: to > from ? r.at(-1)[h] : 0,
        })[mode],
    );
  };
  for (const mode of POOLING_ORDER) {
    const all = pool(hidden, [5, 3], [mode]);
    assert.deepEqual([...all.data], [...expect(mode, 0, 0, 5), ...expect(mode, 1, 0, 3)].map(Math.fround), mode);
    const noPrompt = pool(hidden, [5, 3], [mode], { promptLengths: 2 });
    assert.deepEqual([...noPrompt.data], [...expect(mode, 0, 2, 5), ...expect(mode, 1, 2, 3)].map(Math.fround), `${mode} without the prompt`);
    const perRow = pool(hidden, [5, 3], [mode], { promptLengths: [1, 3] });
    assert.deepEqual([...perRow.data], [...expect(mode, 0, 1, 5), ...expect(mode, 1, 3, 3)].map(Math.fround), `${mode} per-row prompts`);
    const empty = pool(hidden, [0, 3], [mode]);
    assert.deepEqual([...empty.data.subarray(0, 2)], expect(mode, 0, 0, 0).map(Math.fround), `${mode} of an empty sequence`);
  }
  assert.throws(
    () => pool(hidden, [6, 3], ['mean']),
    (e) => e.code === 'BAD_ARGUMENT' && /lengths/.test(e.message),
  );
  assert.throws(
    () => pool(hidden, [5], ['mean']),
    (e) => e.code === 'BAD_ARGUMENT',
  );
  assert.throws(
    () => pool(hidden, [5, 3], ['median']),
    (e) => e.code === 'BAD_ARGUMENT' && /median/.test(e.message),
  );
  assert.throws(
    () => pool(hidden, [5, 3], ['mean'], { promptLengths: [1] }),
    (e) => e.code === 'BAD_ARGUMENT' && /promptLengths/.test(e.message),
  );
  assert.throws(
    () => pool({ data: new Float32Array(3), shape: [2, 5, 2] }, [5, 3], ['mean']),
    (e) => e.code === 'BAD_ARGUMENT' && /20/.test(e.message),
  );
});

test('applyRecipe: Dense activations, Matryoshka options, normalisation, bad options', () => {
  const x = { data: Float32Array.from([0.5, -1, 2, 0]), shape: [2, 2] };
  const layer = (activation, bias = Float32Array.from([0.1, -0.2, 0.3])) => ({
    inFeatures: 2,
    outFeatures: 3,
    weight: Float32Array.from([1, 2, -1, 0.5, 3, -2]),
    bias,
    activation,
  });
  const sigmoid = (v) => 1 / (1 + Math.exp(-v));
  const fns = {
    identity: (v) => v,
    tanh: Math.tanh,
    relu: (v) => Math.max(v, 0),
    sigmoid,
    silu: (v) => v * sigmoid(v),
    gelu: (v) => 0.5 * v * (1 + erf(v / Math.SQRT2)),
  };
  for (const [act, fn] of Object.entries(fns)) {
    const out = applyRecipe(x, { dense: [layer(act)], normalize: false });
    const want = [];
    for (const [a, b] of [
      [0.5, -1],
      [2, 0],
    ])
      want.push(fn(a * 1 + b * 2 + 0.1), fn(a * -1 + b * 0.5 - 0.2), fn(a * 3 + b * -2 + 0.3));
    assert.deepEqual(out.shape, [2, 3]);
    assert.deepEqual([...out.data], want.map(Math.fround), act);
  }
  // erf against known values
  for (const [v, e] of [
    [0, 0],
    [0.5, 0.5204998778130465],
    [1, 0.8427007929497149],
    [2, 0.9953222650189527],
    [-3, -0.9999779095030014],
    [6, 1],
  ])
    assert.ok(Math.abs(erf(v) - e) < 1e-15, `erf(${v}) = ${erf(v)}`);
  // normalize default from the recipe, overridable; zero vectors stay zero
  const z = { data: Float32Array.from([3, 4, 0, 0]), shape: [2, 2] };
  assert.deepEqual([...applyRecipe(z, { dense: [], normalize: true }).data], [0.6, 0.8, 0, 0].map(Math.fround));
  assert.deepEqual([...applyRecipe(z, { dense: [], normalize: true }, { normalize: false }).data], [3, 4, 0, 0]);
  assert.deepEqual([...applyRecipe(z, { dense: [], normalize: false }, { normalize: true }).data], [0.6, 0.8, 0, 0].map(Math.fround));
  // truncation before normalisation
  const w = { data: Float32Array.from([3, 4, 12]), shape: [1, 3] };
  assert.deepEqual([...applyRecipe(w, { dense: [], normalize: true }, { dimensions: 2 }).data], [0.6, 0.8].map(Math.fround));
  assert.deepEqual(applyRecipe(w, { dense: [] }, { dimensions: 3 }).shape, [1, 3]);
  // bad options
  assert.throws(
    () => applyRecipe(w, { dense: [] }, { dimensions: 4 }),
    (e) => e.code === 'BAD_ARGUMENT' && /dimensions/.test(e.message),
  );
  assert.throws(
    () => applyRecipe(w, { dense: [] }, { dimensions: 0 }),
    (e) => e.code === 'BAD_ARGUMENT',
  );
  assert.throws(
    () => applyRecipe(w, { dense: [layer('tanh')] }),
    (e) => e.code === 'BAD_ARGUMENT' && /takes 2 features, the input has 3/.test(e.message),
  );
  assert.throws(
    () => applyRecipe(x, { dense: [layer('softplus')] }),
    (e) => e.code === 'UNSUPPORTED_MODEL',
  );
});

// ---------------------------------------------------------------------------
// Chromium

test('browser: files.js and recipe.js in Chromium; downloads with progress, a second load from the Cache API', async (t) => {
  const CHROMIUM = process.env.SWAPFORMER_CHROMIUM || '/usr/bin/chromium';
  const { chromium } = await import('playwright-core');
  const server = await startServer({ port: 0, roots: { tests: 'tests' } });
  const hub = await startHub({ repos: HUB_REPOS, slow: { chunks: 6, delayMs: 10 }, cache: false });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    // a small served file gives the origin (a secure context: 127.0.0.1); the modules are imported from /bindings/
    await page.goto(`http://127.0.0.1:${server.port}/bindings/utils/errors.js`);
    const run = (hubUrl, cache, noList = false) =>
      page.evaluate(
        async ({ hubUrl, cache, noList }) => {
          const { openSource } = await import('/bindings/pretrained/files.js');
          const { readWeights } = await import('/bindings/pretrained/safetensors.js');
          const { readRecipe, pool, applyRecipe } = await import('/bindings/pretrained/recipe.js');
          const events = [];
          // noList: a mirror without the Hub's API (its file list answers 404)
          const fetchFn = (url, init) => (noList && String(url).includes('/api/') ? Promise.resolve(new Response('{}', { status: 404 })) : fetch(url, init));
          const src = await openSource('test/bert-dense-pairs', { hubUrl, cache, fetch: fetchFn, onProgress: (e) => events.push(e) });
          const recipe = await readRecipe(src);
          const { tensors, files } = await readWeights(src);
          const config = await src.readJSON('config.json');
          const expected = await (await fetch('/tests/pretrained/expected/bert-dense-pairs.json')).json();
          const batch = expected.batches[0];
          const emb = applyRecipe(pool(batch.hidden, batch.lengths, recipe.pooling), recipe);
          let worst = 0;
          emb.data.forEach((v, i) => {
            worst = Math.max(worst, Math.abs(v - batch.embeddings.data[i]));
          });
          let missing = null;
          try {
            await src.read('nope.json');
          } catch (e) {
            missing = `${e.name} ${e.code}`;
          }
          return {
            kind: src.kind,
            pooling: recipe.pooling,
            activation: recipe.dense[0].activation,
            tensorCount: tensors.size,
            files,
            hidden: config.hidden_size,
            worst,
            missing,
            absent: await src.read('nope.json', { optional: true }),
            events: events.map((e) => [e.file, e.loaded, e.total]),
            cached: await caches.has('swapformer-models-v1'),
          };
        },
        { hubUrl, cache, noList },
      );
    const at = hubCommit('test/bert-dense-pairs');
    const asked = (file) => hub.requests.filter((r) => ['main', at].some((rev) => r.path === `/test/bert-dense-pairs/resolve/${rev}/${file}`)).length;

    const first = await run(hub.url, true);
    assert.deepEqual(
      problems.filter((p) => !/404/.test(p)),
      [],
    );
    assert.equal(first.kind, 'hub');
    assert.deepEqual(first.pooling, ['cls', 'max', 'mean']);
    assert.equal(first.activation, 'tanh');
    assert.equal(first.tensorCount, 53);
    assert.equal(first.hidden, 32);
    assert.ok(first.worst < 1e-6, `embeddings in the page: ${first.worst}`);
    assert.equal(first.missing, 'SwapformerError NOT_FOUND');
    assert.equal(first.absent, null);
    // the Hub's file list says nope.json is absent: only the required read asked for it (a 404 is a console error)
    assert.ok(
      hub.requests.some((r) => r.path === '/api/models/test/bert-dense-pairs/revision/main' && r.status === 200),
      'the file list was read',
    );
    // read first (recipe.js's first read is the optional modules.json), the list names the commit: every file is asked for there
    const resolved = hub.requests.filter((r) => r.path.includes('/resolve/'));
    assert.deepEqual(
      resolved.filter((r) => !r.path.startsWith(`/test/bert-dense-pairs/resolve/${at}/`)),
      [],
      'one load reads one commit',
    );
    assert.equal(hub.requests.filter((r) => r.path.startsWith('/api/')).length, 1, 'the file list is read once');
    assert.equal(asked('nope.json'), 1, 'the optional read of an absent file asks nothing');
    assert.equal(first.cached, true);
    const shard = 'model-00001-of-00002.safetensors';
    const shardEvents = first.events.filter((e) => e[0] === shard);
    assert.ok(shardEvents.length >= 3, `${shard}: ${shardEvents.length} progress events in the page`);
    assert.equal(shardEvents.filter((e) => e[1] === e[2]).length, 1);

    const gets = () => hub.requests.filter((r) => r.method === 'GET' && r.status === 200).length;
    const before = gets();
    const second = await run(hub.url, true);
    assert.deepEqual(second.pooling, first.pooling);
    assert.equal(second.tensorCount, 53);
    assert.ok(second.worst < 1e-6);
    assert.equal(gets(), before, 'the second load is served by the Cache API: no new download');
    const secondShard = second.events.filter((e) => e[0] === shard);
    assert.equal(secondShard.length, 1, 'from the cache: one event, whole');
    // errors are never cached: the absent file is asked for again
    assert.ok(hub.requests.slice(-20).some((r) => r.path.endsWith('/nope.json') && r.status === 404));
    // cache: false downloads again
    await run(hub.url, false);
    assert.ok(gets() > before, 'cache: false downloads');
    // without a file list (a mirror without the API) optional files are asked for, as before
    const n = asked('nope.json');
    const listless = await run(hub.url, false, true);
    assert.deepEqual(listless.pooling, first.pooling);
    assert.equal(listless.absent, null);
    assert.equal(asked('nope.json'), n + 2, 'the required and the optional read both ask');
    t.diagnostic(`page: ${first.events.length} progress events on the first load, ${second.events.length} from the cache`);

    // a push right after the file list (read at main) answered: the load reads the commit the list named, never main's new one
    const [A, B] = ['a'.repeat(40), 'b'.repeat(40)];
    const pushHub = await startHub({
      repos: { 'test/pushed': { commits: { [A]: path.join(ROOT, 'bert-dense-pairs'), [B]: path.join(ROOT, 'bert-minilm') }, main: A } },
    });
    try {
      await page.exposeFunction('pushMain', () => pushHub.moveMain('test/pushed', B));
      const pushed = await page.evaluate(async (hubUrl) => {
        const { openSource } = await import('/bindings/pretrained/files.js');
        const { readRecipe } = await import('/bindings/pretrained/recipe.js');
        const fetchFn = async (url, init) => {
          const res = await fetch(url, init);
          if (String(url).includes('/api/')) await window.pushMain();
          return res;
        };
        const src = await openSource('test/pushed', { hubUrl, cache: false, fetch: fetchFn });
        const recipe = await readRecipe(src);
        return {
          pooling: recipe.pooling,
          dense: recipe.dense.length,
          hidden: (await src.readJSON('config.json')).hidden_size,
          single: await src.read('model.safetensors', { optional: true }), // commit A's weights are sharded
        };
      }, pushHub.url);
      assert.deepEqual(pushed, { pooling: ['cls', 'max', 'mean'], dense: 1, hidden: 32, single: null }, 'commit A throughout');
      assert.equal(pushHub.commitOf('test/pushed'), B, 'main was pushed during the load');
      assert.equal(pushHub.requests[0].path, '/api/models/test/pushed/revision/main');
      const revisions = pushHub.requests.filter((r) => r.path.startsWith('/test/pushed/resolve/')).map((r) => r.path.split('/')[4]);
      assert.ok(revisions.length > 0 && revisions.every((r) => r === A), `every file at commit A: ${revisions}`);
    } finally {
      await pushHub.close();
    }
  } finally {
    await browser.close();
    await hub.close();
    await server.close();
  }
});

test('no `node:` import (static, or a literal dynamic one) in bindings/pretrained/', () => {
  const dir = path.join(REPO, 'bindings', 'pretrained');
  const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
  assert.ok(files.includes('files.js') && files.includes('safetensors.js') && files.includes('recipe.js'));
  for (const file of files) {
    const text = readFileSync(path.join(dir, file), 'utf8')
      .replace(/\/\/.*$/gm, '')
      .replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(text, /\bimport\s*\(?\s*['"]node:|from\s+['"]node:|require\(/, file);
  }
});

test('fixtures are where the README says', () => {
  assert.ok(existsSync(path.join(REPO, 'tests', 'pretrained', 'README.md')));
  assert.equal(CASES.length, 16);
  assert.equal(EXPECTED.length, 15);
});

test('a folder on disk: the weights are read as they load (open files, headers only), every file closed after, a file that shrinks is BAD_FILE', async () => {
  const { loadPretrained, loadModel } = await import('../bindings/index.js');
  const { readCheckpoint } = await import('../bindings/pretrained/checkpoint.js');
  const { checkpointSource } = await import('../bindings/pretrained/model-file.js');
  const fds = () => readdirSync('/proc/self/fd').length;
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-lazy-'));
  try {
    for (const c of ['bert-minilm', 'bert-dense-pairs']) {
      // the folder's tensors: their bytes read from the files when asked, the same as parsed from the whole file
      const src = await openSource(path.join(ROOT, c));
      const { tensors, files, close } = await readWeights(src);
      for (const f of files)
        for (const [name, t] of parseSafetensors(onDisk(c, f), f).tensors) {
          assert.equal(tensors.get(name).byteLength, t.bytes.length, `${c}: ${name} byteLength`);
          assert.deepEqual(tensors.get(name).bytes, t.bytes, `${c}: ${name} bytes`);
          assert.deepEqual(tensors.get(name).readRange(4, 12), t.bytes.subarray(4, 12), `${c}: ${name} readRange`);
        }
      close();
      await rejects(async () => tensors.values().next().value.bytes, 'BAD_ARGUMENT', /the file is closed/);
    }
    // each weight byte is read from disk about once (fused tensors split per head included), never the file whole at once
    const fs = (await import('node:module')).createRequire(import.meta.url)('node:fs');
    const readSync = fs.readSync;
    let bytesRead = 0;
    fs.readSync = (...args) => {
      const n = readSync(...args);
      bytesRead += n;
      return n;
    };
    try {
      for (const dir of [path.join(ROOT, 'bert-minilm'), path.join(REPO, 'tests', 'families', 'neobert-seq')]) {
        bytesRead = 0;
        (await loadPretrained(dir, { threads: 1 })).dispose();
        const size = statSync(path.join(dir, 'model.safetensors')).size;
        assert.ok(bytesRead > 0.5 * size && bytesRead < 1.05 * size + 4096, `${dir}: ${bytesRead} bytes read of a ${size}-byte file`);
      }
    } finally {
      fs.readSync = readSync;
    }
    // a callback that throws as the file opens leaves it closed
    const onProgress = (e) => {
      if (e.file.endsWith('.safetensors')) throw new Error('progress refused');
    };
    const before = fds();
    await assert.rejects(() => loadPretrained(path.join(ROOT, 'bert-minilm'), { threads: 1, onProgress }), /progress refused/);
    assert.equal(fds(), before, 'closed after a throwing onProgress');
    // loadPretrained leaves no file open, loaded or refused
    (await loadPretrained(path.join(ROOT, 'bert-minilm'), { threads: 1 })).dispose();
    const copy = (name) => {
      const to = path.join(dir, name);
      cpSync(path.join(ROOT, 'bert-minilm'), to, { recursive: true });
      return to;
    };
    const refused = copy('refused');
    const config = JSON.parse(readFileSync(path.join(refused, 'config.json'), 'utf8'));
    writeFileSync(path.join(refused, 'config.json'), JSON.stringify({ ...config, intermediate_size: config.intermediate_size + 1 }));
    await rejects(() => loadPretrained(refused, { threads: 1 }), 'UNSUPPORTED_MODEL', /wrong shape/);
    assert.equal(fds(), before, 'every file closed');
    // a weights file cut short after its header was read: BAD_FILE, and the runtime still loads models
    const cut = copy('cut');
    const ck = await readCheckpoint(cut);
    const weights = onDisk('bert-minilm', 'model.safetensors');
    writeFileSync(path.join(cut, 'model.safetensors'), weights.subarray(0, weights.length >> 1));
    await rejects(() => loadModel(checkpointSource(ck.config, ck.tensors), { threads: 1 }), 'BAD_FILE', /changed while it was read/);
    ck.close();
    (await loadPretrained(path.join(ROOT, 'bert-minilm'), { threads: 1 })).dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder on disk: an F64 tensor is read once as it loads (written as F32), not once a chunk', async () => {
  const { loadModel } = await import('../bindings/index.js');
  const { readCheckpoint } = await import('../bindings/pretrained/checkpoint.js');
  const { checkpointSource } = await import('../bindings/pretrained/model-file.js');
  const ck = await readCheckpoint(path.join(ROOT, 'bert-minilm'));
  try {
    const reference = await loadModel(checkpointSource(ck.config, ck.tensors), { threads: 1 });
    const k = ck.tensors.findIndex((t) => t.name === 'embed.tokens');
    const t = ck.tensors[k];
    const f64 = Float64Array.from(new Float32Array(t.bytes.slice().buffer));
    let reads = 0;
    ck.tensors[k] = {
      name: t.name,
      dtype: 'F64',
      shape: t.shape,
      source: t.source,
      byteLength: f64.byteLength,
      get bytes() {
        reads++;
        return new Uint8Array(f64.buffer);
      },
      readRange: () => assert.fail('an F64 tensor is converted, not read by ranges'),
    };
    const enc = await loadModel(checkpointSource(ck.config, ck.tensors), { threads: 1 });
    assert.equal(reads, 1, 'the F64 table read once');
    assert.deepEqual(enc.forward([1, 5, 9]).data, reference.forward([1, 5, 9]).data);
    enc.dispose();
    reference.dispose();
  } finally {
    ck.close();
  }
});
