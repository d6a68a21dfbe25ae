// The demo's static server (web/server.js) and the stand-in Hugging Face Hub
// (tests/hub-server.js), over real sockets, no browser. Fast (a few seconds).
//
// Demo server: the four faults an attack found (file handles leaked by aborted
// downloads, symlinks followed out of a served folder, protocol-relative
// redirect Locations, 500 + exception text for a bad absolute-form target),
// then what already held (traversal refused, isolation headers on every
// answer, MIME types, GET/HEAD only, 2,000 requests at 200 concurrent, only
// the served folders, the roots option used by bench/browser.js).
// Hub: every behaviour listed in tests/hub-server.js's header.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web/server.js';
import { startHub } from './hub-server.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

// ---------------------------------------------------------------- helpers

/**
 * Open file descriptors of this process (the servers run in it), or null off
 * Linux. (process.getActiveResourcesInfo() does not list an idle FileHandle in
 * Node 20, so it cannot see this leak; the DEP0137 warning at GC can.)
 */
const fdCount = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : null);

/**
 * One raw HTTP/1.1 exchange over a socket: the request target goes out exactly
 * as given (no URL normalisation). Resolves to {status, headers, body (Buffer), text}.
 */
function raw(port, target, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1').split('\r\n');
      const status = Number(head[0].split(' ')[1]);
      const hdrs = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        hdrs[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const body = all.subarray(split + 4);
      resolve({ status, headers: hdrs, body, text: all.toString('latin1') });
    });
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    // write, not end: a half-closed socket may lose the answer; the server closes it (Connection: close)
    socket.write(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n${extra}\r\n`);
    socket.setTimeout(5000, () => socket.destroy(new Error(`${method} ${target}: no answer in 5 s`)));
  });
}

/** A GET that reads its first body chunk, then aborts; resolves when the socket is closed. */
function abortedGet(port, target) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${target}: HTTP ${res.statusCode}`));
      res.once('data', () => req.destroy());
    });
    req.on('error', () => {});
    req.on('close', resolve);
  });
}

/** Polls until the fd count is back to at most `limit` (or the time is up); returns the last count. */
async function settleFds(limit, ms = 3000) {
  const t0 = Date.now();
  let n = fdCount();
  while (n !== null && n > limit && Date.now() - t0 < ms) {
    await sleep(25);
    n = fdCount();
  }
  return n;
}

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

/** A Location header, if any, is a same-origin path: "/" then neither "/" nor "\". */
function assertSafeLocation(r, target) {
  const loc = r.headers.location;
  if (loc === undefined) return;
  assert.match(loc, /^\/(?![/\\])/, `${JSON.stringify(target)}: Location ${JSON.stringify(loc)} (HTTP ${r.status})`);
  assert.doesNotMatch(loc, /[\\\s]/, `${JSON.stringify(target)}: Location ${JSON.stringify(loc)}`);
}

const LEAKY_TEXT = /TypeError|Invalid URL|ERR_|internal error:|\bat [\w.<>]+ \(|node:internal/;

// ---------------------------------------------------------------- a throwaway repository with symlinks

const TMP = mkdtempSync(path.join(tmpdir(), 'swapformer-server-test-'));
const FAKE = path.join(TMP, 'repo');
const OUTSIDE = path.join(TMP, 'outside');
const BIG = 16 << 20;
const SECRET = 'TOP-SECRET-OUTSIDE-THE-SERVED-FOLDERS';
{
  for (const d of ['web/sub/deeper', 'models', 'dist', 'bindings', 'extra', 'deep/er']) mkdirSync(path.join(FAKE, d), { recursive: true });
  mkdirSync(path.join(OUTSIDE, 'dir'), { recursive: true });
  writeFileSync(path.join(OUTSIDE, 'secret.txt'), SECRET);
  writeFileSync(path.join(OUTSIDE, 'dir', 'secret.txt'), SECRET);
  writeFileSync(path.join(FAKE, 'package.json'), `{"name": "${SECRET}"}`);
  writeFileSync(path.join(FAKE, 'web', 'index.html'), '<!doctype html><title>demo</title>');
  writeFileSync(path.join(FAKE, 'web', 'inside.txt'), 'inside the served folder\n');
  writeFileSync(path.join(FAKE, 'web', 'sub', 'deeper', 'index.html'), '<p>deeper</p>');
  writeFileSync(path.join(FAKE, 'web', 'app.js'), 'export const x = 1;\n');
  writeFileSync(path.join(FAKE, 'dist', 'x.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  writeFileSync(path.join(FAKE, 'models', 'big.safetensors'), randomBytes(BIG));
  writeFileSync(path.join(FAKE, 'extra', 'x.txt'), 'extra root\n');
  writeFileSync(path.join(FAKE, 'deep', 'er', 'y.txt'), 'multi-segment root\n');
  // pointing inside the served folder: allowed
  symlinkSync('inside.txt', path.join(FAKE, 'web', 'link-in.txt'));
  symlinkSync('../inside.txt', path.join(FAKE, 'web', 'sub', 'link-up.txt'));
  symlinkSync(path.join(FAKE, 'web', 'inside.txt'), path.join(FAKE, 'web', 'abs-in.txt'));
  symlinkSync('sub', path.join(FAKE, 'web', 'sub-alias'));
  // pointing out of it: refused (outside the repository, or elsewhere in it)
  symlinkSync(path.join(OUTSIDE, 'secret.txt'), path.join(FAKE, 'web', 'link-out.txt'));
  symlinkSync('../../outside/secret.txt', path.join(FAKE, 'web', 'rel-out.txt'));
  symlinkSync(path.join(OUTSIDE, 'dir'), path.join(FAKE, 'web', 'dir-out'));
  symlinkSync('../package.json', path.join(FAKE, 'web', 'pkg.json'));
  symlinkSync('../models/big.safetensors', path.join(FAKE, 'web', 'other-root.safetensors'));
  symlinkSync(path.join(OUTSIDE, 'secret.txt'), path.join(FAKE, 'extra', 'out.txt'));
  symlinkSync('/etc/passwd', path.join(FAKE, 'web', 'passwd'));
}

after(() => rmSync(TMP, { recursive: true, force: true }));

// ---------------------------------------------------------------- the demo server

describe('web/server.js', () => {
  let fake, real;
  before(async () => {
    fake = await startServer({ port: 0, repo: FAKE, roots: { extra: 'extra', 'deep/er': path.join(FAKE, 'deep', 'er') } });
    real = await startServer({ port: 0 });
  });
  after(async () => {
    await fake?.close();
    await real?.close();
  });

  test('startServer({port: 0}) resolves to {server, port, url, close}', () => {
    assert.ok(real.server instanceof http.Server);
    assert.ok(Number.isInteger(real.port) && real.port > 0);
    assert.equal(real.url, `http://localhost:${real.port}/`);
    assert.equal(typeof real.close, 'function');
  });

  test('300 aborted downloads of a 16 MB file leave no file descriptor open and no DEP0137 warning', async () => {
    const warnings = [];
    const onWarning = (w) => warnings.push(`${w.code ?? w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      gc();
      const fds0 = fdCount();
      for (let i = 0; i < 300; i += 30) {
        await Promise.all(Array.from({ length: 30 }, () => abortedGet(fake.port, '/models/big.safetensors')));
      }
      const fds1 = await settleFds(fds0 + 2);
      if (fds0 !== null) assert.ok(fds1 <= fds0 + 2, `open fds: ${fds0} before, ${fds1} after 300 aborted downloads`);
      // a leaked handle would now be closed by the garbage collector, with a warning
      gc();
      await sleep(50);
      gc();
      await sleep(50);
      assert.deepEqual(
        warnings.filter((w) => /DEP0137|Closing file descriptor/.test(w)),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('finished downloads and HEADs close their handles too', async () => {
    const fds0 = fdCount();
    for (let i = 0; i < 20; i++) {
      const r = await raw(fake.port, '/models/big.safetensors', { method: i % 2 ? 'HEAD' : 'GET' });
      assert.equal(r.status, 200);
      assert.equal(Number(r.headers['content-length']), BIG);
      assert.equal(r.body.length, i % 2 ? 0 : BIG);
    }
    const fds1 = await settleFds(fds0 + 2);
    if (fds0 !== null) assert.ok(fds1 <= fds0 + 2, `open fds: ${fds0} before, ${fds1} after`);
  });

  test('symlinks: inside the served folder 200, out of it (elsewhere on disk, or elsewhere in the repository) 403', async () => {
    const inside = readFileSync(path.join(FAKE, 'web', 'inside.txt'), 'utf8');
    for (const target of ['/web/link-in.txt', '/web/sub/link-up.txt', '/web/abs-in.txt', '/web/sub-alias/deeper/index.html']) {
      const r = await raw(fake.port, target);
      assert.equal(r.status, 200, target);
      if (target.endsWith('.txt')) assert.equal(r.body.toString(), inside, target);
    }
    assert.equal((await raw(fake.port, '/web/sub-alias/deeper/')).status, 200);
    for (const target of [
      '/web/link-out.txt',
      '/web/rel-out.txt',
      '/web/dir-out/secret.txt',
      '/web/pkg.json',
      '/web/other-root.safetensors',
      '/web/passwd',
      '/extra/out.txt',
    ]) {
      for (const method of ['GET', 'HEAD']) {
        const r = await raw(fake.port, target, { method });
        assert.equal(r.status, 403, `${method} ${target}: HTTP ${r.status}`);
        assert.ok(!r.text.includes(SECRET), target);
        assert.ok(!r.text.includes('root:'), target);
      }
    }
    // a folder reached through a symlink out of the served folder: no redirect into it either
    const dir = await raw(fake.port, '/web/dir-out');
    assert.equal(dir.status, 403);
    assert.equal(dir.headers.location, undefined);
  });

  test('redirect Locations are same-origin paths: never "//" or "/\\" at the start, whatever the request path', async () => {
    assert.equal((await raw(fake.port, '/models')).headers.location, '/models/');
    assert.equal((await raw(fake.port, '/web/sub')).headers.location, '/web/sub/');
    assert.equal((await raw(fake.port, '/')).headers.location, '/web/');
    const odd = [
      '/.//models',
      '//models',
      '///models',
      '/\\models',
      '/\\\\models',
      '/\\/models',
      '/%5cmodels',
      '/%5C%5Cmodels',
      '/%2f/models',
      '/%2F%2Fmodels',
      '/.%2f/models',
      '/%2e//models',
      '/%2e%2f%2fmodels',
      '//.//models',
      '/./models',
      '/./\\models',
      '//web',
      '//web//sub',
      '/web//sub',
      '/.//web/sub',
      '//evil.example/models',
      '//evil.example/',
      '/.//evil.example/web',
      '/%2f%2fevil.example/web',
      '/web/..//models',
      '/models/..//web/sub',
      'http://127.0.0.1//models',
      'http://127.0.0.1/.//models',
      'http://127.0.0.1/\\\\models',
      'http://127.0.0.1//evil.example/web',
      'http://evil.example//web/sub',
      '/web/sub/..',
      '/web/sub/.',
      '/web/sub/%2e%2e',
      '//',
      '/\\',
      '/%09/models',
      '/models%2f',
      '/models%2f%2f',
      '/web/sub%2f',
    ];
    for (const target of odd) {
      const r = await raw(fake.port, target);
      assert.ok(r.status > 0, `${target}: no answer`);
      assertSafeLocation(r, target);
    }
    // the normalised forms still redirect where they should
    assert.equal((await raw(fake.port, '//models')).headers.location, '/models/');
    assert.equal((await raw(fake.port, '//web//sub')).headers.location, '/web/sub/');
    assert.equal((await raw(fake.port, 'http://127.0.0.1//models')).headers.location, '/models/');
  });

  test('a request target that is not a valid URL: 400, and no exception text in any answer', async () => {
    for (const target of ['http://[', 'http://[::1', 'https://[/web/', 'http://a b/', 'http://%zz/', '*', 'example.com:80', 'web/index.html', 'ftp://x/web/']) {
      const r = await raw(fake.port, target);
      assert.equal(r.status, 400, `${target}: HTTP ${r.status}`);
      assert.doesNotMatch(r.text, LEAKY_TEXT, target);
      for (const [k, v] of Object.entries(ISOLATION)) assert.equal(r.headers[k], v, `${target}: ${k}`);
    }
    // absolute-form that parses is served
    const ok = await raw(fake.port, `http://127.0.0.1:${fake.port}/web/inside.txt`);
    assert.equal(ok.status, 200);
    // bad percent-encoding, NUL, backslash
    for (const target of ['/web/%zz', '/web/%', '/web/inside.txt%00', '/web/..%5cpackage.json', '/web\\inside.txt']) {
      const r = await raw(fake.port, target);
      assert.equal(r.status, 400, `${target}: HTTP ${r.status}`);
      assert.doesNotMatch(r.text, LEAKY_TEXT, target);
    }
  });

  test('traversal out of a served folder is refused; only web/, bindings/, dist/, models/ (and the roots option) are served', async () => {
    for (const target of [
      '/web/../package.json',
      '/web/%2e%2e/package.json',
      '/web/%2E%2E/package.json',
      '/dist/..%2fpackage.json',
      '/bindings/..%2f..%2fetc%2fpasswd',
      '/web/..%5cpackage.json',
      '/models/../package.json',
      '/models/%2e%2e/package.json',
      '/web/sub/../../package.json',
      '/web/./../package.json',
      '/extra/..%2fpackage.json',
      '/deep/er/..%2f..%2fpackage.json',
      'http://127.0.0.1/web/../package.json',
      '/web/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc/passwd',
    ]) {
      const r = await raw(fake.port, target);
      assert.ok([400, 403, 404].includes(r.status), `${target}: HTTP ${r.status}`);
      assert.ok(!r.text.includes(SECRET), target);
    }
    assert.equal((await raw(fake.port, '/dist/..%2fpackage.json')).status, 403);
    assert.equal((await raw(fake.port, '/web/../package.json')).status, 403);
    for (const target of [
      '/package.json',
      '/tests/x.js',
      '/node_modules/',
      '/extra',
      '/deep/x.txt',
      '/deep/',
      '/outside/secret.txt',
      '/web/missing.js',
      '/models/missing.safetensors',
    ]) {
      const r = await raw(fake.port, target);
      assert.ok(target === '/extra' ? r.status === 301 : r.status === 404, `${target}: HTTP ${r.status}`);
    }
    // the roots option adds folders (one or several URL segments) and keeps the default four
    assert.equal((await raw(fake.port, '/extra/x.txt')).body.toString(), 'extra root\n');
    assert.equal((await raw(fake.port, '/deep/er/y.txt')).body.toString(), 'multi-segment root\n');
    assert.equal((await raw(fake.port, '/web/inside.txt')).status, 200);
  });

  test('every answer carries COOP/COEP/CORP and nosniff: 200, 301, 302, 400 (ours and the HTTP parser), 403, 404, 405', async () => {
    const cases = [
      ['GET', '/web/'],
      ['GET', 'http://a b/'],
      ['HEAD', '/web/app.js'],
      ['GET', '/web'],
      ['GET', '/'],
      ['GET', 'http://['],
      ['GET', '/web/link-out.txt'],
      ['GET', '/dist/..%2fx'],
      ['GET', '/nothing'],
      ['POST', '/web/'],
      ['GET', '/models/big.safetensors'],
    ];
    const seen = new Set();
    for (const [method, target] of cases) {
      const r =
        method === 'GET' && target === '/models/big.safetensors'
          ? await new Promise((resolve) => {
              const q = http.get({ port: fake.port, host: '127.0.0.1', path: target, agent: false }, (res) => {
                q.destroy();
                resolve({ status: res.statusCode, headers: res.headers });
              });
              q.on('error', () => {});
            })
          : await raw(fake.port, target, { method });
      seen.add(r.status);
      for (const [k, v] of Object.entries(ISOLATION)) assert.equal(r.headers[k], v, `${method} ${target} (HTTP ${r.status}): ${k}`);
    }
    assert.deepEqual([...seen].sort(), [200, 301, 302, 400, 403, 404, 405]);
  });

  test('MIME types and lengths of the real repository: .wasm application/wasm, .safetensors octet-stream, .js, .json, .html', async () => {
    const expect = {
      '/dist/swapformer.wasm': /^application\/wasm$/,
      '/bindings/index.js': /^text\/javascript/,
      '/models/index.json': /^application\/json/,
      '/models/tasks.js': /^text\/javascript/,
      '/web/': /^text\/html/,
      '/web/style.css': /^text\/css/,
    };
    const model = readdirSync(path.join(REPO, 'models')).find((f) => f.endsWith('.safetensors'));
    if (model) expect[`/models/${model}`] = /^application\/octet-stream$/;
    for (const [target, type] of Object.entries(expect)) {
      const file = path.join(REPO, target.endsWith('/') ? `${target}index.html` : target);
      if (!existsSync(file)) continue;
      const r = await raw(real.port, target);
      assert.equal(r.status, 200, target);
      assert.match(r.headers['content-type'], type, target);
      assert.equal(Number(r.headers['content-length']), readFileSync(file).length, target);
      assert.equal(r.body.length, readFileSync(file).length, target);
    }
    const wasm = await raw(fake.port, '/dist/x.wasm');
    assert.equal(wasm.headers['content-type'], 'application/wasm');
  });

  test('GET and HEAD only: other methods 405 with Allow; HEAD has the length and no body', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await raw(fake.port, '/web/inside.txt', { method, headers: method === 'OPTIONS' ? {} : { 'Content-Length': 0 } });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'GET, HEAD');
    }
    const h = await raw(fake.port, '/web/inside.txt', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(Number(h.headers['content-length']), 'inside the served folder\n'.length);
    assert.equal(h.body.length, 0);
  });

  test('2,000 requests at 200 concurrent are all served', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
    const expected = readFileSync(path.join(FAKE, 'web', 'app.js'), 'utf8');
    const targets = ['/web/app.js', '/web/', '/web/inside.txt', '/dist/x.wasm'];
    let done = 0;
    const worker = async (w) => {
      for (let i = 0; i < 10; i++) {
        const target = targets[(w + i) % targets.length];
        const { status, body } = await new Promise((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port: fake.port, path: target, agent }, (res) => {
              const chunks = [];
              res.on('data', (c) => chunks.push(c));
              res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
            })
            .on('error', reject);
        });
        assert.equal(status, 200, target);
        if (target === '/web/app.js') assert.equal(body.toString(), expected);
        done++;
      }
    };
    try {
      await Promise.all(Array.from({ length: 200 }, (_, w) => worker(w)));
    } finally {
      agent.destroy();
    }
    assert.equal(done, 2000);
  });
});

// ---------------------------------------------------------------- the stand-in Hub

const HUB = path.join(TMP, 'hub');
const OWNER = 'acme';
const NAME = 'tiny-model';
const ID = `${OWNER}/${NAME}`;
const COMMIT = 'a'.repeat(40);
const files = {
  'config.json': Buffer.from('{"hidden_size": 8}\n'),
  'tokenizer.json': Buffer.from(JSON.stringify({ model: { vocab: { a: 0, b: 1 } } })),
  '1_Pooling/config.json': Buffer.from('{"pooling_mode_mean_tokens": true}\n'),
  'model.safetensors': randomBytes(300_000),
  'pytorch_model.bin': randomBytes(5_000),
};
{
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(HUB, name)), { recursive: true });
    writeFileSync(path.join(HUB, name), bytes);
  }
  mkdirSync(path.join(HUB, 'empty-folder'));
  symlinkSync(path.join(OUTSIDE, 'secret.txt'), path.join(HUB, 'leak.json'));
  symlinkSync(path.join(OUTSIDE, 'secret.txt'), path.join(HUB, 'leak.safetensors'));
  symlinkSync('config.json', path.join(HUB, 'alias.json'));
}
const gitBlob = (b) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const resolveUrl = (hub, file, rev = 'main', id = ID) => `${hub.url}/${id}/resolve/${rev}/${file}`;
const exposed = (r) => (r.headers.get('access-control-expose-headers') ?? '').split(',').map((s) => s.trim().toLowerCase());

describe('tests/hub-server.js', () => {
  let hub;
  before(async () => {
    hub = await startHub({ repos: { [ID]: HUB, 'other/repo': HUB } });
  });
  after(() => hub?.close());

  test('startHub resolves to {url (no trailing slash), port, requests, failNext, close}; repo ids must be owner/name', async () => {
    assert.equal(hub.url, `http://127.0.0.1:${hub.port}`);
    assert.ok(Array.isArray(hub.requests));
    assert.equal(typeof hub.close, 'function');
    assert.equal(typeof hub.failNext, 'function');
    await assert.rejects(startHub({ repos: { 'no-owner': HUB } }), /owner\/name/);
  });

  test('a small file: 200, Content-Length, ETag (git blob id), X-Repo-Commit, CORS + CORP headers; sub-folders too', async () => {
    for (const name of ['config.json', 'tokenizer.json', '1_Pooling/config.json']) {
      const r = await fetch(resolveUrl(hub, name), { redirect: 'manual' });
      assert.equal(r.status, 200, name);
      const body = Buffer.from(await r.arrayBuffer());
      assert.deepEqual(body, files[name], name);
      assert.equal(Number(r.headers.get('content-length')), files[name].length, name);
      assert.equal(r.headers.get('etag'), `"${gitBlob(files[name])}"`, name);
      assert.match(r.headers.get('x-repo-commit'), /^[0-9a-f]{40}$/);
      assert.match(r.headers.get('content-type'), /^application\/json/);
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
      for (const h of ['content-length', 'etag', 'x-error-code']) assert.ok(exposed(r).includes(h), `exposes ${h}`);
      assert.equal(r.headers.get('cross-origin-resource-policy'), 'cross-origin');
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    }
  });

  test('*.safetensors and *.bin: 302 to a second path on the same server (the LFS CDN), X-Linked-Size/Etag; the CDN path serves the bytes', async () => {
    for (const name of ['model.safetensors', 'pytorch_model.bin']) {
      const r = await fetch(resolveUrl(hub, name), { redirect: 'manual' });
      assert.equal(r.status, 302, name);
      const location = new URL(r.headers.get('location'));
      assert.equal(location.origin, hub.url, 'same server');
      assert.notEqual(location.pathname, new URL(resolveUrl(hub, name)).pathname, 'a second path');
      assert.equal(r.headers.get('x-linked-size'), String(files[name].length));
      assert.equal(r.headers.get('x-linked-etag'), `"${sha256(files[name])}"`);
      assert.match(r.headers.get('x-repo-commit'), /^[0-9a-f]{40}$/);
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
      assert.equal(r.headers.get('cross-origin-resource-policy'), 'cross-origin');
      const cdn = await fetch(location);
      assert.equal(cdn.status, 200);
      assert.equal(Number(cdn.headers.get('content-length')), files[name].length);
      assert.equal(cdn.headers.get('etag'), `"${sha256(files[name])}"`);
      assert.equal(cdn.headers.get('access-control-allow-origin'), '*');
      assert.equal(cdn.headers.get('cross-origin-resource-policy'), 'cross-origin');
      assert.deepEqual(Buffer.from(await cdn.arrayBuffer()), files[name]);
      // fetch follows it by itself, as the loader will
      const n = hub.requests.length;
      const followed = await fetch(resolveUrl(hub, name));
      assert.equal(followed.status, 200);
      assert.deepEqual(Buffer.from(await followed.arrayBuffer()), files[name]);
      assert.deepEqual(
        hub.requests.slice(n).map((q) => q.status),
        [302, 200],
      );
    }
  });

  test('the file list: /api/models/{id}/revision/{revision} is {id, sha, siblings: [{rfilename}]} of the files served (a symlink out of the folder left out); 401 / 404 as resolve', async () => {
    const r = await fetch(`${hub.url}/api/models/${ID}/revision/main`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    const info = await r.json();
    assert.equal(info.id, ID);
    assert.equal(info.sha, (await fetch(resolveUrl(hub, 'config.json'))).headers.get('x-repo-commit'));
    const listed = info.siblings.map((e) => e.rfilename);
    assert.deepEqual(listed, [...Object.keys(files), 'alias.json'].sort());
    for (const name of listed) assert.ok([200, 302].includes((await fetch(resolveUrl(hub, name), { redirect: 'manual' })).status), `${name} is served`);
    assert.equal((await fetch(`${hub.url}/api/models/${ID}/revision/${COMMIT}`).then((x) => x.json())).sha, COMMIT);
    assert.equal((await fetch(`${hub.url}/api/models/acme/missing/revision/main`)).status, 401);
    const rev = await fetch(`${hub.url}/api/models/${ID}/revision/dev`);
    assert.equal(rev.status, 404);
    assert.equal(rev.headers.get('x-error-code'), 'RevisionNotFound');
  });

  test('the file list of a repository with history: each commit lists its own folder, main the commit it is at (and follows a push); another commit is RevisionNotFound', async () => {
    const later = path.join(TMP, 'hub-later');
    mkdirSync(later, { recursive: true });
    writeFileSync(path.join(later, 'config.json'), '{"hidden_size": 16}\n');
    writeFileSync(path.join(later, 'modules.json'), '[]\n');
    const [A, B] = ['a'.repeat(40), 'b'.repeat(40)];
    const h = await startHub({ repos: { [ID]: { commits: { [A]: HUB, [B]: later }, main: B } } });
    try {
      const list = async (rev) => {
        const r = await fetch(`${h.url}/api/models/${ID}/revision/${rev}`);
        assert.equal(r.status, 200, rev);
        const info = await r.json();
        return [info.sha, info.siblings.map((e) => e.rfilename)];
      };
      const atA = [...Object.keys(files), 'alias.json'].sort();
      assert.deepEqual(await list(A), [A, atA]);
      assert.deepEqual(await list(B), [B, ['config.json', 'modules.json']]);
      assert.deepEqual(await list('main'), [B, ['config.json', 'modules.json']]);
      h.moveMain(ID, A);
      assert.deepEqual(await list('main'), [A, atA], 'main after the push');
      const other = await fetch(`${h.url}/api/models/${ID}/revision/${'c'.repeat(40)}`);
      assert.equal(other.status, 404);
      assert.equal(other.headers.get('x-error-code'), 'RevisionNotFound');
    } finally {
      await h.close();
    }
  });

  test('a missing file or a folder: 404, x-error-code EntryNotFound, {"error":"Entry not found"}', async () => {
    for (const name of ['missing.json', '1_Pooling/missing.json', 'missing/deeper/x.safetensors', '1_Pooling', 'empty-folder', '']) {
      const r = await fetch(resolveUrl(hub, name));
      assert.equal(r.status, 404, name);
      assert.equal(r.headers.get('x-error-code'), 'EntryNotFound', name);
      assert.deepEqual(await r.json(), { error: 'Entry not found' });
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
    }
  });

  test('an unknown repository: 401 (or 404), x-error-code RepoNotFound', async () => {
    for (const id of ['acme/missing', 'nobody/tiny-model']) {
      const r = await fetch(resolveUrl(hub, 'config.json', 'main', id));
      assert.ok([401, 404].includes(r.status), `${id}: HTTP ${r.status}`);
      assert.equal(r.headers.get('x-error-code'), 'RepoNotFound');
      assert.deepEqual(await r.json(), { error: 'Repository not found' });
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
    }
    // the second repository of the same server is served
    assert.equal((await fetch(resolveUrl(hub, 'config.json', 'main', 'other/repo'))).status, 200);
  });

  test('revision: main or a 40-hex commit is served, anything else 404 RevisionNotFound', async () => {
    const byCommit = await fetch(resolveUrl(hub, 'config.json', COMMIT));
    assert.equal(byCommit.status, 200);
    assert.equal(byCommit.headers.get('x-repo-commit'), COMMIT);
    assert.equal((await fetch(resolveUrl(hub, 'model.safetensors', COMMIT), { redirect: 'manual' })).status, 302);
    for (const rev of ['dev', 'v1.0', 'refs%2Fpr%2F1', 'A'.repeat(40), 'a'.repeat(39), 'a'.repeat(41)]) {
      const r = await fetch(resolveUrl(hub, 'config.json', rev));
      assert.equal(r.status, 404, rev);
      assert.equal(r.headers.get('x-error-code'), 'RevisionNotFound', rev);
      assert.equal((await r.json()).error, `Invalid rev id: ${decodeURIComponent(rev)}`);
    }
  });

  test('HEAD: the same status and headers without a body (small file, LFS redirect, CDN path, errors)', async () => {
    const small = await fetch(resolveUrl(hub, 'config.json'), { method: 'HEAD' });
    assert.equal(small.status, 200);
    assert.equal(Number(small.headers.get('content-length')), files['config.json'].length);
    assert.equal(small.headers.get('etag'), `"${gitBlob(files['config.json'])}"`);
    assert.equal((await small.arrayBuffer()).byteLength, 0);
    const lfs = await fetch(resolveUrl(hub, 'model.safetensors'), { method: 'HEAD', redirect: 'manual' });
    assert.equal(lfs.status, 302);
    assert.equal(lfs.headers.get('x-linked-size'), String(files['model.safetensors'].length));
    const cdn = await fetch(lfs.headers.get('location'), { method: 'HEAD' });
    assert.equal(cdn.status, 200);
    assert.equal(Number(cdn.headers.get('content-length')), files['model.safetensors'].length);
    const missing = await fetch(resolveUrl(hub, 'missing.json'), { method: 'HEAD' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-error-code'), 'EntryNotFound');
    const r = await raw(hub.port, `/${ID}/resolve/main/config.json`, { method: 'HEAD' });
    assert.equal(r.body.length, 0);
  });

  test('If-None-Match on the ETag: 304 (not with cache: false, which sends no-store); a Range: 206; an unsatisfiable Range: 416', async () => {
    const etag = `"${gitBlob(files['config.json'])}"`;
    const r304 = await fetch(resolveUrl(hub, 'config.json'), { headers: { 'If-None-Match': etag } });
    assert.equal(r304.status, 304);
    assert.equal(r304.headers.get('etag'), etag);
    const cdnUrl = (await fetch(resolveUrl(hub, 'model.safetensors'), { redirect: 'manual' })).headers.get('location');
    const part = await fetch(cdnUrl, { headers: { Range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-19/${files['model.safetensors'].length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), files['model.safetensors'].subarray(10, 20));
    const tail = await fetch(cdnUrl, { headers: { Range: 'bytes=-5' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), files['model.safetensors'].subarray(-5));
    const bad = await fetch(cdnUrl, { headers: { Range: `bytes=${files['model.safetensors'].length}-` } });
    assert.equal(bad.status, 416);
    // cache: false: no-store on every answer, and no 304
    const h = await startHub({ repos: { [ID]: HUB }, cache: false });
    try {
      const r = await fetch(resolveUrl(h, 'config.json'), { headers: { 'If-None-Match': etag } });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal((await fetch(resolveUrl(h, 'model.safetensors'), { redirect: 'manual' })).headers.get('cache-control'), 'no-store');
      assert.equal((await fetch(resolveUrl(h, 'missing.json'))).headers.get('cache-control'), 'no-store');
    } finally {
      await h.close();
    }
  });

  test('CORS preflight (OPTIONS) 204; other methods 405; any other path 404', async () => {
    const pre = await fetch(resolveUrl(hub, 'config.json'), {
      method: 'OPTIONS',
      headers: { Origin: 'http://elsewhere.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'range' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-methods'), /GET/);
    assert.match(pre.headers.get('access-control-allow-headers'), /Range/i);
    assert.equal((await fetch(resolveUrl(hub, 'config.json'), { method: 'POST', body: 'x' })).status, 405);
    for (const p of ['/', `/${ID}`, `/${ID}/blob/main/config.json`, '/api/models/acme/tiny-model']) {
      assert.equal((await fetch(`${hub.url}${p}`)).status, 404, p);
    }
  });

  test('requests records {method, path, status} for every answer, in order', async () => {
    const n = hub.requests.length;
    await fetch(resolveUrl(hub, 'config.json'), { method: 'HEAD' });
    await fetch(resolveUrl(hub, '1_Pooling/config.json'));
    await fetch(resolveUrl(hub, 'missing.json'));
    await fetch(resolveUrl(hub, 'model.safetensors')).then((r) => r.arrayBuffer());
    assert.deepEqual(hub.requests.slice(n), [
      { method: 'HEAD', path: `/${ID}/resolve/main/config.json`, status: 200 },
      { method: 'GET', path: `/${ID}/resolve/main/1_Pooling/config.json`, status: 200 },
      { method: 'GET', path: `/${ID}/resolve/main/missing.json`, status: 404 },
      { method: 'GET', path: `/${ID}/resolve/main/model.safetensors`, status: 302 },
      { method: 'GET', path: `/cdn-lfs/${ID}/model.safetensors`, status: 200 },
    ]);
  });

  test('hardening: no traversal, a symlink out of the folder 403, inside 200, a bad target 400 without internals', async () => {
    for (const target of [
      `/${ID}/resolve/main/../../../../package.json`,
      `/${ID}/resolve/main/%2e%2e/%2e%2e/%2e%2e/package.json`,
      `/${ID}/resolve/main/..%2f..%2f..%2fpackage.json`,
      `/${ID}/resolve/main/..%5c..%5cpackage.json`,
      `/cdn-lfs/${ID}/..%2f..%2fpackage.json`,
      `/${ID}/resolve/main/%00`,
      `/${ID}/resolve/main/leak.json`,
      `/${ID}/resolve/main/leak.safetensors`,
      `/cdn-lfs/${ID}/leak.safetensors`,
      `/${OWNER}/..%2f${NAME}/resolve/main/config.json`,
    ]) {
      const r = await raw(hub.port, target);
      assert.ok([400, 403, 404].includes(r.status), `${target}: HTTP ${r.status}`);
      assert.ok(!r.text.includes(SECRET), target);
      assert.equal(r.headers['access-control-allow-origin'], '*', target);
    }
    assert.equal((await raw(hub.port, `/${ID}/resolve/main/leak.json`)).status, 403);
    assert.equal((await raw(hub.port, `/${ID}/resolve/main/leak.safetensors`)).status, 403);
    const alias = await raw(hub.port, `/${ID}/resolve/main/alias.json`);
    assert.equal(alias.status, 200);
    assert.deepEqual(alias.body, files['config.json']);
    for (const target of ['http://[', '*', 'http://[::1']) {
      const r = await raw(hub.port, target);
      assert.equal(r.status, 400, target);
      assert.doesNotMatch(r.text, LEAKY_TEXT, target);
    }
  });

  test('fail once: a listed path answers 500 the first time, then normally; failNext adds one at run time', async () => {
    const path1 = `/${ID}/resolve/main/config.json`;
    const h = await startHub({ repos: { [ID]: HUB }, failOnce: [path1] });
    try {
      const first = await fetch(`${h.url}${path1}`);
      assert.equal(first.status, 500);
      const text = await first.text();
      assert.deepEqual(JSON.parse(text), { error: 'Internal Error' });
      assert.equal(first.headers.get('access-control-allow-origin'), '*');
      const second = await fetch(`${h.url}${path1}`);
      assert.equal(second.status, 200);
      assert.deepEqual(Buffer.from(await second.arrayBuffer()), files['config.json']);
      // the CDN leg of a redirect can fail too
      h.failNext(`/cdn-lfs/${ID}/model.safetensors`);
      assert.equal((await fetch(resolveUrl(h, 'model.safetensors'))).status, 500);
      assert.equal((await fetch(resolveUrl(h, 'model.safetensors'))).status, 200);
      assert.deepEqual(
        h.requests.map((q) => q.status),
        [500, 200, 302, 500, 302, 200],
      );
    } finally {
      await h.close();
    }
  });

  test('slow: bodies arrive in several chunks with delays (progress can be observed); aborting one leaks nothing', async () => {
    const h = await startHub({ repos: { [ID]: HUB }, slow: { chunks: 6, delayMs: 30 } });
    try {
      for (const name of ['model.safetensors', 'tokenizer.json']) {
        const t0 = performance.now();
        const r = await fetch(resolveUrl(h, name));
        assert.equal(r.status, 200);
        const total = Number(r.headers.get('content-length'));
        const seen = [];
        let got = 0;
        const parts = [];
        for await (const chunk of r.body) {
          got += chunk.length;
          parts.push(chunk);
          seen.push(got);
        }
        const ms = performance.now() - t0;
        assert.equal(got, total);
        assert.deepEqual(Buffer.concat(parts), files[name]);
        assert.ok(seen.length >= 4, `${name}: ${seen.length} chunks (${seen.join(', ')} of ${total})`);
        assert.ok(ms >= 5 * 30 * 0.8, `${name}: ${ms.toFixed(0)} ms`);
      }
      const fds0 = fdCount();
      for (let i = 0; i < 20; i++) {
        const c = new AbortController();
        const r = await fetch(resolveUrl(h, 'model.safetensors'), { signal: c.signal });
        const reader = r.body.getReader();
        await reader.read();
        c.abort();
        await reader.read().catch(() => {});
      }
      await sleep(250); // the server notices at its next write
      const fds1 = await settleFds(fds0 + 2);
      if (fds0 !== null) assert.ok(fds1 <= fds0 + 2, `open fds: ${fds0} before, ${fds1} after 20 aborted slow downloads`);
    } finally {
      await h.close();
    }
  });
});
