// The Hugging Face hub cache on disk (bindings/pretrained/hub-cache.js), against
// huggingface_hub's layout and rules (constants.py, file_download.py:
// repo_folder_name, _create_symlink, _hf_hub_download_to_cache_dir,
// _cache_commit_hash_for_specific_revision, the .no_exist markers), with
// tests/hub-server.js as the Hub and separate Node processes as the users:
//  - a cache laid out as huggingface_hub writes it loads with no server (offline);
//  - a download fills it exactly so (blob names = ETag / X-Linked-Etag, relative
//    snapshot symlinks, refs/main = X-Repo-Commit, .no_exist for 404s) and a second
//    process loads from it with no request; a download killed mid-body leaves
//    nothing that loads, and a later load neither uses nor disturbs the leftovers;
//  - HF_HUB_OFFLINE / offline, the token (option, HF_TOKEN, $HF_HOME/token) never
//    sent to the CDN's origin, HF_ENDPOINT, model-page URLs, NETWORK naming the cause.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startHub, hubCommit } from './hub-server.js';
import { loadPretrained } from '../bindings/index.js';
import { openSource } from '../bindings/pretrained/files.js';
import { rejects, assertBitIdentical } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

const TESTS = path.dirname(fileURLToPath(import.meta.url));
const FOLDER = path.join(TESTS, 'st', 'minilm-prompts');
const ID = 'test/minilm';
const REPO = 'models--test--minilm';
const TEXTS = ['hello world', 'what is a transformer?'];
const TMP = mkdtempSync(path.join(tmpdir(), 'swapformer-hub-cache-test-'));
process.once('exit', () => rmSync(TMP, { recursive: true, force: true }));
let tmpCount = 0;
const fresh = (name = 'd') => {
  const d = path.join(TMP, `${name}-${tmpCount++}`);
  mkdirSync(d, { recursive: true });
  return d;
};

const plain = await loadPretrained(FOLDER);
const WANT = plain.embed(TEXTS).data;
// the folder without config_sentence_transformers.json: a file the loader asks for and the Hub answers 404
const BARE = path.join(TMP, 'bare');
cpSync(FOLDER, BARE, { recursive: true });
rmSync(path.join(BARE, 'config_sentence_transformers.json'));
const WANT_BARE = (await loadPretrained(BARE)).embed(TEXTS).data;
const bits = (data) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');

// A second commit of the repository: the same files, other weights (every float x 1.5) and another activation.
const COMMIT_A = 'a'.repeat(40),
  COMMIT_B = 'b'.repeat(40);
const LATER = path.join(TMP, 'later');
cpSync(FOLDER, LATER, { recursive: true });
{
  const file = path.join(LATER, 'model.safetensors');
  const bytes = readFileSync(file);
  const start = 8 + Number(bytes.readBigUInt64LE(0));
  for (let at = start; at + 4 <= bytes.length; at += 4) bytes.writeFloatLE(bytes.readFloatLE(at) * 1.5, at);
  writeFileSync(file, bytes);
  const config = JSON.parse(readFileSync(path.join(LATER, 'config.json'), 'utf8'));
  writeFileSync(path.join(LATER, 'config.json'), JSON.stringify({ ...config, hidden_act: 'relu' }, null, 2));
}
const WANT_LATER = (await loadPretrained(LATER)).embed(TEXTS).data;
// what the two commits' files mixed give: A's config (gelu) over B's weights
const MIXED = path.join(TMP, 'mixed');
cpSync(FOLDER, MIXED, { recursive: true });
cpSync(path.join(LATER, 'model.safetensors'), path.join(MIXED, 'model.safetensors'));
const WANT_MIXED = (await loadPretrained(MIXED)).embed(TEXTS).data;
// the files AutoTokenizer.from_pretrained leaves in the cache
const TOKENIZER_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];

// ------------------------------------------------------------------ helpers

// A user's process: loads `source` with `options`, prints {ok, bits, prompts} or {ok: false, code, message}.
const CHILD = path.join(TMP, 'child.mjs');
writeFileSync(
  CHILD,
  `import { loadPretrained } from ${JSON.stringify(pathToFileURL(path.join(TESTS, '..', 'bindings', 'index.js')).href)};
const [source, options] = process.argv.slice(2);
let out;
try {
  const m = await loadPretrained(source, JSON.parse(options));
  const e = m.embed(${JSON.stringify(TEXTS)});
  out = { ok: true, bits: Buffer.from(e.data.buffer).toString('base64'), prompts: m.prompts };
} catch (e) { out = { ok: false, code: e.code, message: e.message }; }
process.stdout.write(JSON.stringify(out), () => process.exit(0));
`,
);

/** The environment of a user's process: no HF_* variable of ours, HOME in the sandbox (no ~/.cache/huggingface), then `vars`. */
function childEnv(vars) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(HF_|HUGGING_FACE_|TRANSFORMERS_OFFLINE$|XDG_CACHE_HOME$)/.test(k)));
  return { ...env, HOME: fresh('home'), ...vars };
}
const childArgs = (source, options) => [...NODE_FLAGS, CHILD, source, JSON.stringify(options)];

/** Runs a user's process to its end (a timeout fails instead of hanging); resolves to its JSON. */
function runChild(vars, source = ID, options = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, childArgs(source, options), { env: childEnv(vars), timeout: 30000 }, (err, stdout, stderr) => {
      if (err && !stdout) return reject(new Error(`child failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout));
    });
  });
}

const gitBlob = (bytes) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** Every file of a folder, '/'-separated and relative. */
function filesOf(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesOf(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name)).split(path.sep).join('/')]))
    .sort();
}

/**
 * A cache folder as huggingface_hub writes it, by hand: blobs/<git sha1 or sha256 (LFS)>,
 * snapshots/<commit>/<path> -> ../../blobs/<etag> (one more ../ a sub-folder), refs/main.
 */
function handLayout(cacheDir, { commit = 'c'.repeat(40), ref = 'main', noExist = [], skip = [], only = null, from = FOLDER } = {}) {
  const repo = path.join(cacheDir, REPO);
  for (const file of filesOf(from)) {
    if (skip.includes(file) || (only && !only.includes(file))) continue;
    const bytes = readFileSync(path.join(from, file));
    const etag = /\.(safetensors|bin)$/.test(file) ? sha256(bytes) : gitBlob(bytes);
    mkdirSync(path.join(repo, 'blobs'), { recursive: true });
    writeFileSync(path.join(repo, 'blobs', etag), bytes);
    const link = path.join(repo, 'snapshots', commit, ...file.split('/'));
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(`${'../'.repeat(file.split('/').length + 1)}blobs/${etag}`, link);
  }
  for (const file of noExist) {
    mkdirSync(path.dirname(path.join(repo, '.no_exist', commit, file)), { recursive: true });
    writeFileSync(path.join(repo, '.no_exist', commit, file), '');
  }
  if (ref) {
    mkdirSync(path.join(repo, 'refs'), { recursive: true });
    writeFileSync(path.join(repo, 'refs', ref), commit);
  }
  return repo;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort() {
  const s = net.createServer();
  await new Promise((go) => s.listen(0, '127.0.0.1', go));
  const { port } = s.address();
  await new Promise((go) => s.close(go));
  return port;
}

const resolveRequests = (hub, id = ID) => hub.requests.filter((r) => r.path.startsWith(`/${id}/resolve/`));

// ------------------------------------------------------------------ tests

test('a cache laid out as huggingface_hub writes it loads with no server at all (offline): the same bits as the folder', async () => {
  const cacheDir = fresh('hand');
  handLayout(cacheDir);
  const nowhere = `http://127.0.0.1:${await closedPort()}`; // a request would fail with ECONNREFUSED
  const m = await loadPretrained(ID, { cacheDir, offline: true, hubUrl: nowhere });
  assertBitIdentical(m.embed(TEXTS).data, WANT, 'offline option');
  assert.deepEqual(m.prompts, plain.prompts);
  m.dispose();
  for (const source of [ID, 'https://huggingface.co/test/minilm', `https://huggingface.co/test/minilm/tree/${'c'.repeat(40)}`]) {
    const r = await runChild({ HF_HUB_CACHE: cacheDir, HF_HUB_OFFLINE: '1' }, source);
    assert.ok(r.ok, `${source}: ${r.message}`);
    assert.equal(r.bits, bits(WANT), `HF_HUB_OFFLINE=1, ${source}`);
  }
  // a commit revision needs no refs at all
  const noRefs = fresh('hand');
  handLayout(noRefs, { commit: 'd'.repeat(40), ref: null });
  const byCommit = await loadPretrained(ID, { cacheDir: noRefs, offline: true, revision: 'd'.repeat(40), hubUrl: nowhere });
  assertBitIdentical(byCommit.embed(TEXTS).data, WANT, 'revision = the commit');
  byCommit.dispose();
  await rejects(
    loadPretrained(ID, { cacheDir: noRefs, offline: true, hubUrl: nowhere }),
    'NOT_FOUND',
    /config\.json of test\/minilm is not in the hub cache .*models--test--minilm.*downloads are off/,
  );
});

test('a download fills HF_HUB_CACHE exactly as huggingface_hub does; a second process loads the same id with no request', async () => {
  const hub = await startHub({ repos: { [ID]: BARE } });
  try {
    const cacheDir = fresh('cache');
    const first = await loadPretrained(ID, { hubUrl: hub.url, cacheDir });
    assertBitIdentical(first.embed(TEXTS).data, WANT_BARE, 'downloaded');
    first.dispose();
    // the first request at main, every later one at the commit main resolved to (X-Repo-Commit)
    const asked = resolveRequests(hub).map((r) => r.path.split('/resolve/')[1].split('/')[0]);
    assert.deepEqual([...new Set(asked)], ['main', hub.commitOf(ID)], `revisions asked: ${asked}`);
    assert.equal(asked.filter((r) => r === 'main').length, 1, 'one request at main');
    const fileOf = (r) => r.path.split('/resolve/')[1].split('/').slice(1).join('/');
    const served = resolveRequests(hub)
      .filter((r) => r.status === 200 || r.status === 302)
      .map(fileOf);
    const absent = [
      ...new Set(
        resolveRequests(hub)
          .filter((r) => r.status === 404)
          .map(fileOf),
      ),
    ];
    assert.ok(
      served.includes('model.safetensors') && served.includes('1_Pooling/config.json') && absent.includes('config_sentence_transformers.json'),
      `served ${served}, absent ${absent}`,
    );

    // the second process: HF_HUB_CACHE and HF_ENDPOINT from the environment; the stand-in counts no request
    const before = hub.received;
    const second = await runChild({ HF_HUB_CACHE: cacheDir, HF_ENDPOINT: hub.url });
    assert.ok(second.ok, second.message);
    assert.equal(second.bits, bits(WANT_BARE));
    assert.equal(hub.received, before, `no request from the second process: ${hub.requests.slice(before).map((r) => r.path)}`);

    // the layout, against what the stand-in sent: ETag / X-Linked-Etag, X-Repo-Commit
    const meta = {};
    for (const file of new Set(served)) {
      const res = await fetch(`${hub.url}/${ID}/resolve/main/${file}`, { method: 'HEAD', redirect: 'manual' });
      meta[file] = {
        etag: (res.headers.get('x-linked-etag') ?? res.headers.get('etag')).replace(/^W\//, '').replaceAll('"', ''),
        commit: res.headers.get('x-repo-commit'),
      };
    }
    const commit = meta['config.json'].commit;
    assert.match(commit, /^[0-9a-f]{40}$/);
    const repo = path.join(cacheDir, REPO);
    const want = [
      ...[...new Set(Object.values(meta).map((m) => `blobs/${m.etag}`))],
      ...Object.keys(meta).map((f) => `snapshots/${commit}/${f}`),
      ...absent.map((f) => `.no_exist/${commit}/${f}`),
      'refs/main',
    ].sort();
    assert.deepEqual(filesOf(repo), want, 'blobs, snapshots, .no_exist, refs: nothing else (no .incomplete left)');
    assert.equal(readFileSync(path.join(repo, 'refs', 'main'), 'utf8'), commit, 'refs/main = X-Repo-Commit, no newline');
    for (const [file, { etag }] of Object.entries(meta)) {
      const link = path.join(repo, 'snapshots', commit, ...file.split('/'));
      assert.ok(lstatSync(link).isSymbolicLink(), `${file}: a symlink`);
      assert.equal(readlinkSync(link), `${'../'.repeat(file.split('/').length + 1)}blobs/${etag}`, `${file}: relative, as _create_symlink's relpath`);
      assert.deepEqual(readFileSync(path.join(repo, 'blobs', etag)), readFileSync(path.join(BARE, file)), `${file}: the blob's bytes`);
      const lfs = file.endsWith('.safetensors');
      assert.equal(
        etag,
        lfs ? sha256(readFileSync(path.join(BARE, file))) : gitBlob(readFileSync(path.join(BARE, file))),
        `${file}: ${lfs ? 'sha256 (X-Linked-Etag)' : 'git blob sha1 (ETag)'}`,
      );
    }
    for (const f of absent) assert.equal(readFileSync(path.join(repo, '.no_exist', commit, f)).length, 0, `.no_exist/${f}: empty`);

    // a cache that moved keeps working (relative links), and a third load in this process asks nothing either
    const moved = fresh('moved');
    cpSync(cacheDir, moved, { recursive: true, verbatimSymlinks: true });
    const n = hub.received;
    const third = await loadPretrained(ID, { hubUrl: hub.url, cacheDir: moved });
    assertBitIdentical(third.embed(TEXTS).data, WANT_BARE, 'moved cache');
    third.dispose();
    assert.equal(hub.received, n);
  } finally {
    await hub.close();
  }
});

test('a download killed mid-body leaves nothing that loads; a later load neither uses nor disturbs the leftovers', async () => {
  const size = readFileSync(path.join(FOLDER, 'model.safetensors')).length;
  const cdnPath = `/cdn-lfs/${ID}/model.safetensors`;
  const hub = await startHub({ repos: { [ID]: FOLDER }, stall: { [cdnPath]: Math.floor(size / 2) } });
  const cacheDir = fresh('killed');
  const repo = path.join(cacheDir, REPO);
  try {
    const child = spawn(process.execPath, childArgs(ID, {}), { env: childEnv({ HF_HUB_CACHE: cacheDir, HF_ENDPOINT: hub.url }), stdio: 'ignore' });
    const exited = new Promise((go) => child.once('exit', (code, signal) => go(signal ?? code)));
    const t0 = Date.now();
    while (!hub.requests.some((r) => r.path === cdnPath && r.status === 200)) {
      // the body has begun, half of it is on its way
      assert.ok(Date.now() - t0 < 20000, 'the child reached the weights');
      await new Promise((go) => setTimeout(go, 20));
    }
    await new Promise((go) => setTimeout(go, 300));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
  } finally {
    await hub.close();
  }
  const weightsEtag = sha256(readFileSync(path.join(FOLDER, 'model.safetensors')));
  const left = filesOf(repo);
  assert.ok(
    !left.includes(`blobs/${weightsEtag}`) && !left.some((f) => f.startsWith('snapshots/') && f.endsWith('model.safetensors')),
    `no weights blob or link: ${left}`,
  );
  for (const f of left.filter((x) => x.startsWith('blobs/'))) {
    // every other blob is complete (its name is its hash), or an .incomplete
    if (f.endsWith('.incomplete')) continue;
    const bytes = readFileSync(path.join(repo, f));
    assert.ok([gitBlob(bytes), sha256(bytes)].includes(f.slice(6)), `${f}: a complete blob`);
  }
  // what a kill during the write leaves (huggingface_hub's name: <etag>.<uuid8>.incomplete): half the bytes
  const partial = path.join(repo, 'blobs', `${weightsEtag}.0badc0de.incomplete`);
  writeFileSync(partial, readFileSync(path.join(FOLDER, 'model.safetensors')).subarray(0, Math.floor(size / 2)));
  await rejects(
    loadPretrained(ID, { cacheDir, offline: true }),
    'NOT_FOUND',
    /^test\/minilm: no weights cached: model\.safetensors is not in the hub cache \(.*models--test--minilm at commit [0-9a-f]{40}\), and downloads are off \(the offline option; pass offline: false to download it\)$/,
  );

  const again = await startHub({ repos: { [ID]: FOLDER } });
  try {
    const m = await loadPretrained(ID, { hubUrl: again.url, cacheDir });
    assertBitIdentical(m.embed(TEXTS).data, WANT, 'downloaded again');
    m.dispose();
    assert.ok(
      again.requests.some((r) => r.path === cdnPath && r.status === 200),
      'the weights were downloaded again',
    );
    assert.deepEqual(
      readFileSync(partial),
      readFileSync(path.join(FOLDER, 'model.safetensors')).subarray(0, Math.floor(size / 2)),
      'the leftover is untouched',
    );
    assert.equal(sha256(readFileSync(path.join(repo, 'blobs', weightsEtag))), weightsEtag);
    const offline = await loadPretrained(ID, { cacheDir, offline: true });
    assertBitIdentical(offline.embed(TEXTS).data, WANT, 'then offline');
    offline.dispose();
  } finally {
    await again.close();
  }
});

test('offline (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, {offline: true}): the cache only, NOT_FOUND naming the missing file; .no_exist honoured', async () => {
  const empty = fresh('empty');
  await rejects(
    loadPretrained(ID, { cacheDir: empty, offline: true }),
    'NOT_FOUND',
    /config\.json of test\/minilm is not in the hub cache \(.*models--test--minilm: no snapshot of 'main'\), and downloads are off/,
  );
  for (const vars of [{ HF_HUB_OFFLINE: '1' }, { HF_HUB_OFFLINE: 'true' }, { HF_HUB_OFFLINE: 'ON' }, { TRANSFORMERS_OFFLINE: 'YES' }]) {
    const r = await runChild({ HF_HUB_CACHE: empty, HF_ENDPOINT: 'http://127.0.0.1:1', ...vars });
    assert.equal(r.code, 'NOT_FOUND', `${JSON.stringify(vars)}: ${r.message}`);
    assert.match(r.message, /config\.json of test\/minilm is not in the hub cache .*downloads are off/);
  }
  const r0 = await runChild({ HF_HUB_CACHE: empty, HF_ENDPOINT: `http://127.0.0.1:${await closedPort()}`, HF_HUB_OFFLINE: '0' });
  assert.equal(r0.code, 'NETWORK', `HF_HUB_OFFLINE=0 is online: ${r0.message}`);

  // .no_exist: a file the server has is taken as absent, without a request; a required one so marked is NOT_FOUND
  const hub = await startHub({ repos: { [ID]: FOLDER } });
  try {
    const marked = fresh('marked');
    handLayout(marked, { skip: ['config_sentence_transformers.json'], noExist: ['config_sentence_transformers.json'] });
    const m = await loadPretrained(ID, { cacheDir: marked, hubUrl: hub.url });
    assert.equal(m.prompts, null, 'config_sentence_transformers.json taken as absent');
    m.dispose();
    assert.ok(!hub.requests.some((r) => r.path.endsWith('/config_sentence_transformers.json')), 'not asked');
    const noTok = fresh('marked');
    handLayout(noTok, { skip: ['tokenizer.json'], noExist: ['tokenizer.json'] });
    await rejects(loadPretrained(ID, { cacheDir: noTok, hubUrl: hub.url }), 'NOT_FOUND', /test\/minilm: no tokenizer\.json/);
    assert.ok(!hub.requests.some((r) => r.path.endsWith('/tokenizer.json')), 'not asked');
  } finally {
    await hub.close();
  }
});

test('the token (option, HF_TOKEN, $HF_HOME/token, HF_TOKEN_PATH) reaches the Hub as Bearer, never the CDN on another origin; without it 401', async () => {
  const TOKEN = 'hf_test_Token_0123456789';
  const PRIVATE = 'test/private';
  const cdn = await startHub({ repos: { [PRIVATE]: FOLDER } });
  const hub = await startHub({ repos: { [PRIVATE]: FOLDER }, tokens: { [PRIVATE]: TOKEN }, lfsOrigin: cdn.url });
  const resolveHeaders = () => hub.requestHeaders.filter((r) => r.path.startsWith(`/${PRIVATE}/resolve/`));
  try {
    await rejects(
      loadPretrained(PRIVATE, { hubUrl: hub.url, cacheDir: fresh('tok') }),
      'NOT_FOUND',
      /repository test\/private not found or private \(HTTP 401/,
    );
    assert.ok(resolveHeaders().length > 0 && resolveHeaders().every((r) => r.headers.authorization === undefined), 'no token: no Authorization');
    await rejects(loadPretrained(PRIVATE, { hubUrl: hub.url, cacheDir: fresh('tok'), token: 'hf_wrong' }), 'NOT_FOUND', /not found or private/);

    for (const cache of [true, false]) {
      // redirects followed by hand (the disk cache), and by fetch itself
      hub.requestHeaders.length = 0;
      cdn.requestHeaders.length = 0;
      const m = await loadPretrained(PRIVATE, { hubUrl: hub.url, cacheDir: fresh('tok'), token: TOKEN, cache });
      assertBitIdentical(m.embed(TEXTS).data, WANT, `token option, cache ${cache}`);
      m.dispose();
      assert.ok(
        resolveHeaders().length > 3 && resolveHeaders().every((r) => r.headers.authorization === `Bearer ${TOKEN}`),
        `cache ${cache}: every Hub request has the token`,
      );
      const lfs = cdn.requestHeaders.filter((r) => r.path.startsWith('/cdn-lfs/'));
      assert.ok(lfs.length > 0, 'the weights came from the CDN');
      assert.ok(
        cdn.requestHeaders.every((r) => r.headers.authorization === undefined),
        `cache ${cache}: no token to the CDN's origin`,
      );
    }
    const byEnv = await runChild({ HF_HUB_CACHE: fresh('tok'), HF_ENDPOINT: hub.url, HF_TOKEN: TOKEN }, PRIVATE);
    assert.ok(byEnv.ok, `HF_TOKEN: ${byEnv.message}`);
    assert.equal(byEnv.bits, bits(WANT));
    const legacy = await runChild({ HF_HUB_CACHE: fresh('tok'), HF_ENDPOINT: hub.url, HUGGING_FACE_HUB_TOKEN: TOKEN }, PRIVATE);
    assert.ok(legacy.ok, `HUGGING_FACE_HUB_TOKEN: ${legacy.message}`);
    const home = fresh('hfhome');
    writeFileSync(path.join(home, 'token'), `${TOKEN}\n`);
    const byFile = await runChild({ HF_HOME: home, HF_ENDPOINT: hub.url }, PRIVATE);
    assert.ok(byFile.ok, `$HF_HOME/token: ${byFile.message}`);
    assert.ok(existsSync(path.join(home, 'hub', 'models--test--private', 'refs', 'main')), 'the cache is $HF_HOME/hub');
    const tokenFile = path.join(fresh('tokpath'), 'my-token');
    writeFileSync(tokenFile, `  ${TOKEN}\r\n`);
    const byPath = await runChild({ HF_HUB_CACHE: fresh('tok'), HF_TOKEN_PATH: tokenFile, HF_ENDPOINT: hub.url }, PRIVATE);
    assert.ok(byPath.ok, `HF_TOKEN_PATH: ${byPath.message}`);
    const newline = await runChild({ HF_HUB_CACHE: fresh('tok'), HF_TOKEN: `${TOKEN}\n`, HF_ENDPOINT: hub.url }, PRIVATE);
    assert.ok(newline.ok, `HF_TOKEN with a newline, cleaned as _clean_token: ${newline.message}`);
    // HF_HUB_DISABLE_IMPLICIT_TOKEN: the environment's and the saved token are not sent; the option still is
    const implicit = await runChild(
      { HF_HUB_CACHE: fresh('tok'), HF_TOKEN: TOKEN, HF_HOME: home, HF_HUB_DISABLE_IMPLICIT_TOKEN: '1', HF_ENDPOINT: hub.url },
      PRIVATE,
    );
    assert.equal(implicit.code, 'NOT_FOUND', `HF_HUB_DISABLE_IMPLICIT_TOKEN: ${implicit.message}`);
    const explicit = await runChild({ HF_HUB_CACHE: fresh('tok'), HF_HUB_DISABLE_IMPLICIT_TOKEN: '1', HF_ENDPOINT: hub.url }, PRIVATE, { token: TOKEN });
    assert.ok(explicit.ok, `HF_HUB_DISABLE_IMPLICIT_TOKEN with the option: ${explicit.message}`);
    assert.ok(
      cdn.requestHeaders.every((r) => r.headers.authorization === undefined),
      'never to the CDN',
    );
    for (const token of ['', 'a\nb', 42]) await rejects(loadPretrained(PRIVATE, { hubUrl: hub.url, token }), 'BAD_ARGUMENT', /option token/);
  } finally {
    await hub.close();
    await cdn.close();
  }
});

test('a revision names a file under refs/: one with .. (option or model-page URL) is refused before anything is written', async () => {
  const hub = await startHub({ repos: { [ID]: FOLDER } });
  const cacheDir = path.join(fresh('trav'), 'a', 'b', 'cache');
  // a Hub that answers any revision (as the real one answers its own names): the stand-in's main, whatever was asked
  const anyRevision = (url, init) => fetch(url.replace(/\/resolve\/[^/]+\//, '/resolve/main/'), init);
  try {
    const ok = await loadPretrained(ID, { revision: 'refs/pr/1', hubUrl: hub.url, cacheDir, fetch: anyRevision });
    ok.dispose();
    assert.match(readFileSync(path.join(cacheDir, REPO, 'refs', 'refs', 'pr', '1'), 'utf8'), /^[0-9a-f]{40}$/, 'refs/refs/pr/1, as huggingface_hub nests it');
    for (const revision of ['../../../../escaped', 'a/../../x', '..', '.hidden', 'a//b', 'a\\b', 'x\u0001']) {
      await rejects(
        loadPretrained(ID, { revision, hubUrl: hub.url, cacheDir, fetch: anyRevision }),
        'BAD_ARGUMENT',
        /option revision: .* is not a branch, tag or commit name/,
      );
    }
    await rejects(
      loadPretrained(`${hub.url}/${ID}/tree/..%2F..%2F..%2F..%2Fescaped`, { hubUrl: hub.url, cacheDir, fetch: anyRevision }),
      'BAD_ARGUMENT',
      /the revision: "\.\.\/\.\.\/\.\.\/\.\.\/escaped" is not/,
    );
    await rejects(loadPretrained(`${hub.url}/${ID}/tree/%E0%A4%A`, { hubUrl: hub.url, cacheDir }), 'BAD_ARGUMENT', /not valid percent-encoding/);
    assert.ok(!existsSync(path.join(cacheDir, '..', '..', 'escaped')), 'nothing written outside the cache');
  } finally {
    await hub.close();
  }
});

test('HF_ENDPOINT, model-page URLs (/owner/name, /tree/<revision>), and NETWORK naming ECONNREFUSED, ENOTFOUND, TLS', async () => {
  const hub = await startHub({ repos: { [ID]: FOLDER } });
  try {
    const page = await loadPretrained(`${hub.url}/${ID}`, { hubUrl: hub.url, cacheDir: fresh('page') });
    assertBitIdentical(page.embed(TEXTS).data, WANT, 'model page URL');
    page.dispose();
    const commit = resolveRequests(hub).find((r) => r.path.endsWith('/config.json'));
    assert.ok(commit, 'read through /resolve/');
    const sha = 'e'.repeat(40);
    const n = hub.requests.length;
    const tree = await loadPretrained(`${hub.url}/${ID}/tree/${sha}`, { hubUrl: hub.url, cache: false });
    assertBitIdentical(tree.embed(TEXTS).data, WANT, '/tree/<commit>');
    tree.dispose();
    const paths = hub.requests
      .slice(n)
      .filter((r) => !r.path.startsWith('/cdn-lfs/'))
      .map((r) => r.path);
    assert.ok(paths.length > 0 && paths.every((p) => p.startsWith(`/${ID}/resolve/${sha}/`)), `the revision of the page: ${paths[0]}`);
    const env = await runChild({ HF_HUB_CACHE: fresh('endpoint'), HF_ENDPOINT: hub.url }, `${hub.url}/${ID}`);
    assert.ok(env.ok, `HF_ENDPOINT + its page URL: ${env.message}`);
  } finally {
    await hub.close();
  }
  const port = await closedPort();
  const refused = await rejects(loadPretrained(ID, { hubUrl: `http://127.0.0.1:${port}`, cacheDir: fresh('net') }), 'NETWORK', /ECONNREFUSED/);
  assert.match(refused.message, new RegExp(`fetching http://127\\.0\\.0\\.1:${port}/test/minilm/resolve/main/\\S+ failed`));
  const t0 = Date.now();
  await rejects(loadPretrained(ID, { hubUrl: 'http://swapformer-test.invalid', cacheDir: fresh('net') }), 'NETWORK', /ENOTFOUND/);
  assert.ok(Date.now() - t0 < 10000, `a .invalid host fails fast (${Date.now() - t0} ms)`);
  const http = await startHub({ repos: { [ID]: FOLDER } });
  try {
    await rejects(loadPretrained(ID, { hubUrl: http.url.replace('http:', 'https:'), cacheDir: fresh('net') }), 'NETWORK', /SSL|TLS|EPROTO/);
  } finally {
    await http.close();
  }
});

test("a signal aborted between a read's start and its request: NETWORK, and no unhandled rejection (it crashed the process)", async () => {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e?.message ?? String(e));
  process.on('unhandledRejection', onUnhandled);
  try {
    for (const cacheDir of [null, fresh('abort')]) {
      const c = new AbortController();
      // as fetch does: a request made with an aborted signal rejects with its reason
      const fetchLike = (url, init) => (init.signal.aborted ? Promise.reject(init.signal.reason) : new Promise(() => {}));
      const src = await openSource(ID, { hubUrl: 'http://127.0.0.1:1', signal: c.signal, fetch: fetchLike, ...(cacheDir ? { cacheDir } : { cache: false }) });
      const read = src.read('config.json');
      c.abort(new Error('the user left')); // after read's own check, before its request (the read awaits the caches first)
      await rejects(read, 'NETWORK', /config\.json: aborted \(the signal option: the user left\)/);
      await new Promise((go) => setTimeout(go, 50));
    }
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

// ------------------------------------------------------------------ one load, one commit

test('one load reads one commit: a partly cached model reads its missing files at the cached commit while main has moved', async () => {
  assert.notEqual(bits(WANT_LATER), bits(WANT), 'the later commit embeds otherwise');
  assert.notEqual(bits(WANT_MIXED), bits(WANT), 'the mix embeds otherwise');
  const hub = await startHub({ repos: { [ID]: { commits: { [COMMIT_A]: FOLDER, [COMMIT_B]: LATER }, main: COMMIT_B } } });
  try {
    // AutoTokenizer ran when main was at A: refs/main = A, the tokenizer's files in snapshots/A; the Hub's main is now B
    const cacheDir = fresh('partial');
    handLayout(cacheDir, { commit: COMMIT_A, only: TOKENIZER_FILES });
    const m = await loadPretrained(ID, { hubUrl: hub.url, cacheDir });
    assertBitIdentical(m.embed(TEXTS).data, WANT, 'commit A throughout (before: A config over B weights)');
    m.dispose();
    const asked = resolveRequests(hub).map((r) => r.path.split('/resolve/')[1].split('/')[0]);
    assert.ok(asked.length > 0 && asked.every((r) => r === COMMIT_A), `every file at commit A, never at main: ${asked}`);
    assert.ok(
      hub.requests.some((r) => r.path === `/cdn-lfs/${ID}/${COMMIT_A}/model.safetensors` && r.status === 200),
      'the weights of commit A',
    );
    // the cache now holds commit A whole: offline gives the same
    const offline = await loadPretrained(ID, { cacheDir, offline: true });
    assertBitIdentical(offline.embed(TEXTS).data, WANT, 'offline, commit A');
    offline.dispose();
    assert.equal(readFileSync(path.join(cacheDir, REPO, 'refs', 'main'), 'utf8'), COMMIT_A, 'refs/main unchanged');

    // nothing cached, main moves (a push) after the first answer: every later file is read at the commit the first named
    for (const cache of [true, false]) {
      hub.moveMain(ID, COMMIT_A);
      let calls = 0;
      const pushing = async (url, init) => {
        const res = await fetch(url, init);
        if (calls++ === 0) hub.moveMain(ID, COMMIT_B);
        return res;
      };
      const n = hub.requests.length;
      const moved = await loadPretrained(ID, { hubUrl: hub.url, cacheDir: fresh('push'), cache, fetch: pushing });
      assertBitIdentical(moved.embed(TEXTS).data, WANT, `cache ${cache}: commit A throughout (before: the files after the push from B)`);
      moved.dispose();
      const revisions = hub.requests
        .slice(n)
        .filter((r) => r.path.startsWith(`/${ID}/resolve/`))
        .map((r) => r.path.split('/resolve/')[1].split('/')[0]);
      assert.deepEqual([...new Set(revisions)], ['main', COMMIT_A], `cache ${cache}: the first at main, the rest at A: ${revisions}`);
    }
  } finally {
    await hub.close();
  }
});

test('one load reads one commit: an answer naming another commit (X-Repo-Commit) than the one asked for is refused', async () => {
  const commit = hubCommit(ID);
  const lie = { 'X-Repo-Commit': COMMIT_B };
  const hub = await startHub({
    repos: { [ID]: FOLDER },
    headers: { [`/${ID}/resolve/${commit}/tokenizer.json`]: lie, [`/${ID}/resolve/${commit}/model.safetensors`]: lie },
  });
  try {
    for (const cache of [true, false]) {
      const e = await rejects(
        loadPretrained(ID, { hubUrl: hub.url, cacheDir: fresh('lie'), cache }),
        'NETWORK',
        new RegExp(
          `^(tokenizer\\.json|model\\.safetensors): .*/resolve/${commit}/\\S+ answered for commit ${COMMIT_B} \\(X-Repo-Commit\\), but this load reads test/minilm at commit ${commit}: one load reads one commit$`,
        ),
      );
      if (cache) assert.match(e.message, /^model\.safetensors/, 'the weights are read before the tokenizer');
    }
  } finally {
    await hub.close();
  }
});

// ------------------------------------------------------------------ offline, the environment, atomic blobs

test('offline with a partial cache: the missing weights, tokenizer.json or config.json are named as not cached, with how to turn downloads on', async () => {
  const cases = [
    [
      'model.safetensors',
      /^test\/minilm: no weights cached: model\.safetensors is not in the hub cache \(.*models--test--minilm at commit c{40}\), and downloads are off /,
    ],
    ['tokenizer.json', /^test\/minilm: tokenizer\.json is not in the hub cache \(.*models--test--minilm at commit c{40}\), and downloads are off /],
    ['config.json', /^test\/minilm: config\.json is not in the hub cache \(.*models--test--minilm at commit c{40}\), and downloads are off /],
  ];
  for (const [file, message] of cases) {
    const cacheDir = fresh('partial');
    handLayout(cacheDir, { skip: [file] });
    const e = await rejects(loadPretrained(ID, { cacheDir, offline: true }), 'NOT_FOUND', message);
    assert.match(e.message, /\(the offline option; pass offline: false to download it\)$/, file);
    for (const name of ['HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE']) {
      const r = await runChild({ HF_HUB_CACHE: cacheDir, HF_ENDPOINT: 'http://127.0.0.1:1', [name]: '1' });
      assert.equal(r.code, 'NOT_FOUND', `${name}, ${file}: ${r.message}`);
      assert.match(r.message, message, `${name}, ${file}`);
      assert.match(r.message, new RegExp(`\\(${name} is set in the environment; unset it, or pass offline: false, to download it\\)$`), `${name}, ${file}`);
    }
  }
  // a file recorded absent (.no_exist) is still the folder's message: the repository has none
  const marked = fresh('marked');
  handLayout(marked, { skip: ['tokenizer.json'], noExist: ['tokenizer.json'] });
  await rejects(
    loadPretrained(ID, { cacheDir: marked, offline: true }),
    'NOT_FOUND',
    /^test\/minilm: no tokenizer\.json \(swapformer reads the fast-tokenizer file/,
  );
});

test('the offline option wins over HF_HUB_OFFLINE both ways: offline: false downloads under HF_HUB_OFFLINE=1', async () => {
  const hub = await startHub({ repos: { [ID]: FOLDER } });
  try {
    for (const name of ['HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE']) {
      const n = hub.received;
      const r = await runChild({ HF_HUB_CACHE: fresh('env'), HF_ENDPOINT: hub.url, [name]: '1' }, ID, { offline: false });
      assert.ok(r.ok, `${name}=1 with offline: false: ${r.message}`);
      assert.equal(r.bits, bits(WANT));
      assert.ok(hub.received > n, 'downloaded');
    }
    const n = hub.received;
    const r = await runChild({ HF_HUB_CACHE: fresh('env'), HF_ENDPOINT: hub.url, HF_HUB_OFFLINE: '0' }, ID, { offline: true });
    assert.equal(r.code, 'NOT_FOUND', `HF_HUB_OFFLINE=0 with offline: true: ${r.message}`);
    assert.equal(hub.received, n, 'no request');
  } finally {
    await hub.close();
  }
});

// A user's process frozen half-way through writing a large file (as killed there): the preload writes the first
// half of any write of more than 64 KB through fs/promises' writeFile, says where, and never returns.
const FREEZE = path.join(TMP, 'freeze.mjs');
writeFileSync(
  FREEZE,
  `import fsp from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const writeFile = fsp.writeFile;
fsp.writeFile = (file, data, ...rest) => {
  if (typeof file !== 'string' || !(data?.length > 65536)) return writeFile(file, data, ...rest);
  writeFileSync(file, data.subarray(0, data.length >> 1));
  process.stdout.write('FROZEN ' + file + '\\n');
  return new Promise(() => {});
};
syncBuiltinESMExports();
`,
);

test("a blob write cut half-way (a kill, a full disk) leaves nothing under the blob's name: later loads download it again, then load offline", async () => {
  const hub = await startHub({ repos: { [ID]: FOLDER } });
  const weightsEtag = sha256(readFileSync(path.join(FOLDER, 'model.safetensors')));
  const whole = (repo) => {
    for (const f of filesOf(repo).filter((x) => x.startsWith('blobs/') && !x.endsWith('.incomplete'))) {
      const bytes = readFileSync(path.join(repo, f));
      assert.ok([gitBlob(bytes), sha256(bytes)].includes(f.slice(6)), `${f}: whole (its name is its hash)`);
    }
  };
  /** A later online load, then an offline one: both the model's bits; every blob whole. */
  const recovers = async (cacheDir, what) => {
    const again = await loadPretrained(ID, { hubUrl: hub.url, cacheDir });
    assertBitIdentical(again.embed(TEXTS).data, WANT, `${what}: downloaded again`);
    again.dispose();
    const offline = await loadPretrained(ID, { cacheDir, offline: true });
    assertBitIdentical(offline.embed(TEXTS).data, WANT, `${what}: offline afterwards (before: the cut blob, linked)`);
    offline.dispose();
    whole(path.join(cacheDir, REPO));
  };
  try {
    // killed while the weights' blob is half written
    const cacheDir = fresh('frozen');
    const repo = path.join(cacheDir, REPO);
    const child = spawn(process.execPath, [...NODE_FLAGS, '--import', pathToFileURL(FREEZE).href, CHILD, ID, '{}'], {
      env: childEnv({ HF_HUB_CACHE: cacheDir, HF_ENDPOINT: hub.url }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise((go) => child.once('exit', (code, signal) => go(signal ?? code)));
    let out = '';
    const frozen = await new Promise((go) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /FROZEN (\S+)\n/.exec(out);
        if (m) go(m[1]);
      });
      setTimeout(() => go(null), 20000);
    });
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    assert.ok(frozen, `the child reached the weights' write: ${out}`);
    assert.ok(path.basename(frozen).startsWith(`${weightsEtag}.`) && frozen.endsWith('.incomplete'), `written aside: ${frozen}`);
    const left = filesOf(repo);
    assert.ok(!left.includes(`blobs/${weightsEtag}`), `nothing under the weights' blob name: ${left}`);
    await recovers(cacheDir, 'killed');

    // a full disk: the user's process may write files of 20 KB at most (RLIMIT_FSIZE; Node ignores SIGXFSZ, the write
    // fails with EFBIG): the small files are stored, the 113 KB weights' blob cannot be; the load itself succeeds
    const full = fresh('efbig');
    const r = await new Promise((resolve, reject) => {
      execFile(
        '/bin/sh',
        ['-c', 'ulimit -f 40 && exec "$0" "$@"', process.execPath, ...childArgs(ID, {})],
        { env: childEnv({ HF_HUB_CACHE: full, HF_ENDPOINT: hub.url }), timeout: 30000 },
        (err, stdout, stderr) => (err && !stdout ? reject(new Error(`child failed: ${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
      );
    });
    assert.ok(r.ok, r.message);
    assert.equal(r.bits, bits(WANT), 'the load used the bytes it downloaded');
    const stored = filesOf(path.join(full, REPO));
    assert.ok(stored.includes('refs/main') && stored.some((f) => f.endsWith('/tokenizer.json')), `the small files are cached: ${stored}`);
    assert.ok(!stored.includes(`blobs/${weightsEtag}`) && !stored.some((f) => f.endsWith('.incomplete')), `no weights' blob, no temporary file: ${stored}`);
    await recovers(full, 'full disk');
  } finally {
    await hub.close();
  }
});
