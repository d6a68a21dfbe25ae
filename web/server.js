// The demo's static server: Node only, no dependencies.
//
//   node web/server.js [--port 8080] [--host 127.0.0.1]
//
// Serves the repository's web/, bindings/, dist/ and models/ folders (the page
// imports /bindings/index.js, which fetches /dist/swapformer.wasm; the "Trained
// models" panel fetches /models/*.json, *.safetensors and tasks.js) and nothing else:
// `/` redirects to `/web/`, any other path is 404, and a path that escapes a
// served folder is 403. Every response carries the cross-origin isolation
// headers (COOP same-origin + COEP require-corp) so wasm threads can be added
// later, .wasm is served as application/wasm (needed by compileStreaming) and
// .safetensors as application/octet-stream. Everything is read-only (GET, HEAD).
//
// Used programmatically by tests/browser.test.js (startServer({port: 0})), by
// bench/browser.js (startServer({port: 0, roots: {bench: 'bench', ...}}): extra
// URL prefixes mapped to folders, on top of the default four) and, for its
// checks (requestPath, pathSegments, openInside, sendFile, clientErrorAnswer),
// by tests/hub-server.js.
//
// Hardening (tests/server.test.js checks each point):
//  - the request target is parsed by hand (origin-form "/..." only, or an
//    absolute-form http(s) URL that must parse; anything else is 400), never
//    with a base URL that would fold "/.//x" into "//x";
//  - a decoded path with "." or ".." segments is 403, a backslash or NUL 400;
//  - the file's realpath (after every symlink) must lie inside its served
//    folder's realpath, else 403: a symlink may point elsewhere inside the
//    folder, never out of it; the file is then opened by that real path with
//    O_NOFOLLOW and checked again with fstat;
//  - a redirect's Location is rebuilt from the checked, percent-encoded
//    segments ("/" + segments + "/"), so it is always a same-origin path that
//    cannot start with "//" or "/\";
//  - file bodies go through stream.pipeline, which destroys the read stream
//    (and closes its file handle) when the client aborts; a HEAD closes the
//    handle at once: no descriptor is left to the garbage collector (DEP0137);
//  - errors answer a fixed text ("Internal Server Error"), never an exception
//    message; a request the HTTP parser refuses gets a 400 (431, 408) with the
//    same headers as every other answer.
//
// No npm package replaces this: checked against their sources, `send` (and so
// `serve-static`) stats and streams the joined path without a realpath check,
// so a symlink inside the root is followed anywhere on disk; `sirv` does
// `createReadStream(file).pipe(res)` without destroying the stream when the
// client aborts (the descriptor waits for GC) and follows symlinks too;
// `serve-handler` either refuses every symlink (its default) or follows them
// anywhere (`symlinks: true`), with no "inside the root only" mode. None adds
// the isolation headers either, so each would need wrapping anyway.
import http from 'node:http';
import { constants as FS } from 'node:fs';
import { stat, open, realpath } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The URL prefixes served by default, each mapped to the repository folder of the same name. */
export const SERVED_ROOTS = ['web', 'bindings', 'dist', 'models'];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.safetensors': 'application/octet-stream',
  '.onnx': 'application/octet-stream',
};

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

function send(res, status, body, headers = {}) {
  res.writeHead(status, {
    ...ISOLATION_HEADERS,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

const sendStatus = (res, status, headers) => send(res, status, `${http.STATUS_CODES[status]}\n`, headers);

/**
 * The path of a request target, undecoded and without query or fragment, or
 * null when the target is not one this server accepts (400): origin-form
 * ("/a/b?q") as is, absolute-form ("http://host/a/b") only if it parses as an
 * http(s) URL. "*" and authority-form are refused.
 */
export function requestPath(target) {
  if (typeof target !== 'string' || target === '') return null;
  if (target[0] === '/') {
    const end = target.search(/[?#]/);
    return end < 0 ? target : target.slice(0, end);
  }
  if (/^https?:\/\//i.test(target)) {
    try {
      return new URL(target).pathname;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Splits an undecoded URL path into decoded segments: {segments, trailingSlash}
 * or {status} (400 for bad percent-encoding, a backslash or NUL; 403 for a "."
 * or ".." segment, including encoded ones such as %2e%2e or ..%2f). Empty
 * segments ("//") are dropped.
 */
export function pathSegments(urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { status: 400 };
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { status: 400 };
  const segments = decoded.split('/').filter(Boolean);
  if (segments.some((s) => s === '..' || s === '.')) return { status: 403 };
  return { segments, trailingSlash: decoded.endsWith('/') };
}

/** A canonical same-origin path for checked segments: "/" + encoded segments (never "//" or "/\"). */
export function canonicalPath(segments, trailingSlash = false) {
  return `/${segments.map(encodeURIComponent).join('/')}${trailingSlash && segments.length ? '/' : ''}`;
}

/** Normalises a roots option (array of names or {prefix: folder}) to [{prefix: [segments], base}], longest prefix first. */
const NORMALISED = Symbol('normalised roots');
function normaliseRoots(roots, repo) {
  const entries = Array.isArray(roots) ? roots.map((r) => [r, r]) : Object.entries(roots);
  const list = entries
    .map(([prefix, folder]) => {
      const segs = String(prefix).split('/').filter(Boolean);
      if (!segs.length || segs.some((s) => s === '.' || s === '..' || s.includes('\\'))) throw new Error(`served root '${prefix}': not a plain URL prefix`);
      return { prefix: segs, base: path.resolve(repo, folder) };
    })
    .sort((a, b) => b.prefix.length - a.prefix.length);
  list[NORMALISED] = true;
  return list;
}

/**
 * Maps a URL path to a served folder: {base, rest, segments, trailingSlash}
 * (rest: the decoded segments below the folder) or {status}. `roots` is an
 * array of folder names or an object {urlPrefix: folder (relative to repo, or
 * absolute)}.
 */
export function resolvePath(urlPath, repo = REPO, roots = SERVED_ROOTS) {
  const p = pathSegments(urlPath);
  if (p.status) return p;
  const list = roots[NORMALISED] ? roots : normaliseRoots(roots, repo);
  const root = list.find((r) => r.prefix.length <= p.segments.length && r.prefix.every((s, i) => s === p.segments[i]));
  if (!root) return { status: 404 };
  return { base: root.base, rest: p.segments.slice(root.prefix.length), segments: p.segments, trailingSlash: p.trailingSlash };
}

const inside = (file, dir) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/**
 * Opens base/rest... for reading if its realpath lies inside base's realpath.
 * Resolves to {status} (404 missing, 403 outside the folder or unreadable),
 * {directory: true, real}, or {fh, info, real} for a regular file: the caller
 * owns fh and must close it (sendFile does).
 */
export async function openInside(base, rest) {
  const lexical = path.resolve(base, ...rest);
  if (!inside(lexical, path.resolve(base))) return { status: 403 };
  let realBase, real;
  try {
    realBase = await realpath(base);
    real = await realpath(lexical);
  } catch (e) {
    return { status: e.code === 'EACCES' || e.code === 'EPERM' ? 403 : 404 };
  }
  if (!inside(real, realBase)) return { status: 403 };
  let info;
  try {
    info = await stat(real);
  } catch {
    return { status: 404 };
  }
  if (info.isDirectory()) return { directory: true, real };
  if (!info.isFile()) return { status: 404 };
  let fh;
  try {
    fh = await open(real, FS.O_RDONLY | FS.O_NOFOLLOW);
  } catch (e) {
    return { status: e.code === 'EACCES' || e.code === 'EPERM' ? 403 : 404 };
  }
  try {
    info = await fh.stat();
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
  if (!info.isFile()) {
    await fh.close().catch(() => {});
    return { status: 404 };
  }
  return { fh, info, real };
}

/**
 * Streams an open file handle to the response (or, for HEAD, sends nothing),
 * closing the handle on every path: end, client abort, read error. `start` and
 * `end` (inclusive) select a byte range. Returns a promise that settles when
 * the handle is closed.
 */
export function sendFile(req, res, fh, { start, end } = {}) {
  if (req.method === 'HEAD' || res.destroyed) {
    res.end();
    return fh.close().catch(() => {});
  }
  const stream = fh.createReadStream({ start, end, autoClose: true });
  return new Promise((done) => {
    pipeline(stream, res, () => {
      // pipeline destroyed the stream on error or abort, and autoClose closes the
      // handle; closing again is a no-op that waits for that close
      fh.close()
        .catch(() => {})
        .finally(done);
    });
  });
}

/**
 * A 'clientError' listener (a request the HTTP parser refused: bad request
 * line, oversized headers, timeout) that answers with the given headers, no
 * error text, and closes the connection.
 */
export function clientErrorAnswer(headers) {
  const lines = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (err, socket) => {
    if (err?.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const status = err?.code === 'HPE_HEADER_OVERFLOW' ? 431 : err?.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = `${http.STATUS_CODES[status]}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${lines}Content-Type: text/plain; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

async function handle(req, res, roots) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendStatus(res, 405, { Allow: 'GET, HEAD' });
  const urlPath = requestPath(req.url);
  if (urlPath === null) return sendStatus(res, 400);
  if (urlPath === '/' || urlPath === '/index.html') return send(res, 302, 'see /web/\n', { Location: '/web/' });
  const r = resolvePath(urlPath, REPO, roots);
  if (r.status) return sendStatus(res, r.status);
  let o = await openInside(r.base, r.rest);
  if (o.directory) {
    if (!r.trailingSlash) return send(res, 301, 'moved\n', { Location: canonicalPath(r.segments, true) });
    o = await openInside(r.base, [...r.rest, 'index.html']);
    if (o.directory) return sendStatus(res, 404);
  }
  if (o.status) return sendStatus(res, o.status);
  const type = MIME[path.extname(o.real).toLowerCase()] ?? 'application/octet-stream';
  res.writeHead(200, { ...ISOLATION_HEADERS, 'Content-Type': type, 'Content-Length': o.info.size });
  await sendFile(req, res, o.fh);
}

/**
 * Starts the server; resolves to {server, port, url, close()}. port 0 picks a
 * free port. roots: extra URL prefixes to serve, {prefix: folder} (folder
 * relative to repo or absolute; a prefix may have several segments, e.g.
 * 'node_modules/onnxruntime-web/dist'), added to web/, bindings/, dist/, models/.
 */
export function startServer({ port = 8080, host = '127.0.0.1', repo = REPO, roots = {} } = {}) {
  const served = normaliseRoots({ ...Object.fromEntries(SERVED_ROOTS.map((r) => [r, r])), ...roots }, repo);
  const server = http.createServer((req, res) => {
    handle(req, res, served).catch((e) => {
      // the details go to the server's log, never into a response
      console.error(`web/server.js: ${req.method} ${JSON.stringify(String(req.url).slice(0, 200))}: ${e?.code ?? e?.name ?? 'error'}`);
      if (!res.headersSent) sendStatus(res, 500);
      else res.destroy();
    });
  });
  server.on('clientError', clientErrorAnswer(ISOLATION_HEADERS));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const actual = server.address().port;
      const shownHost = host === '127.0.0.1' || host === '::1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolve({
        server,
        port: actual,
        url: `http://${shownHost}:${actual}/`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

function parseArgs(argv) {
  const opts = { port: 8080, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? a.split(/=(.*)/s, 2) : [a, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--port' || flag === '-p') {
      const v = value();
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port: '${v}' is not a port number`);
      opts.port = n;
    } else if (flag === '--host') {
      opts.host = value();
      if (!opts.host) throw new Error('--host needs a value');
    } else if (flag === '--help' || flag === '-h') {
      opts.help = true;
    } else {
      throw new Error(`unknown option '${a}' (use --port N, --host H)`);
    }
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`web/server.js: ${e.message}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log('usage: node web/server.js [--port 8080] [--host 127.0.0.1]');
    process.exit(0);
  }
  try {
    const { url } = await startServer(opts);
    console.log(`swapformer demo: ${url}  (serving web/, bindings/, dist/, models/; Ctrl-C to stop)`);
  } catch (e) {
    console.error(`web/server.js: cannot listen on ${opts.host}:${opts.port}: ${e.code === 'EADDRINUSE' ? 'the port is in use (try --port N)' : e.message}`);
    process.exit(1);
  }
}
