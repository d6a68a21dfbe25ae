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
// Used programmatically by tests/browser.test.js: startServer({port: 0}).
import http from 'node:http';
import { stat, open } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The URL prefixes served, each mapped to one folder of the repository. */
export const SERVED_ROOTS = ['web', 'bindings', 'dist', 'models'];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.safetensors': 'application/octet-stream',
};

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

function send(res, status, body, headers = {}) {
  res.writeHead(status, { ...ISOLATION_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

/** Maps a URL path to a file inside one of the served roots, or gives an HTTP status. */
export function resolvePath(urlPath, repo = REPO, roots = SERVED_ROOTS) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { status: 400 };
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { status: 400 };
  const segments = decoded.split('/').filter(Boolean);
  if (segments.some((s) => s === '..' || s === '.')) return { status: 403 };
  const [root, ...rest] = segments;
  if (!roots.includes(root)) return { status: 404 };
  const base = path.join(repo, root);
  const file = path.resolve(base, ...rest);
  if (file !== base && !file.startsWith(base + path.sep)) return { status: 403 };
  return { file, isDir: decoded.endsWith('/') || rest.length === 0 };
}

async function handle(req, res, repo) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
  const { pathname } = new URL(req.url, 'http://localhost');
  if (pathname === '/' || pathname === '/index.html') return send(res, 302, 'see /web/\n', { Location: '/web/' });
  const r = resolvePath(pathname, repo);
  if (r.status) return send(res, r.status, `${http.STATUS_CODES[r.status]}\n`);
  let file = r.file;
  let info = await stat(file).catch(() => null);
  if (info?.isDirectory()) {
    if (!pathname.endsWith('/')) return send(res, 301, 'moved\n', { Location: `${pathname}/` });
    file = path.join(file, 'index.html');
    info = await stat(file).catch(() => null);
  }
  if (!info?.isFile()) return send(res, 404, 'Not Found\n');
  const type = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  res.writeHead(200, { ...ISOLATION_HEADERS, 'Content-Type': type, 'Content-Length': info.size });
  if (req.method === 'HEAD') return res.end();
  const fh = await open(file, 'r');
  const stream = fh.createReadStream();
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** Starts the server; resolves to {server, port, url, close()}. port 0 picks a free port. */
export function startServer({ port = 8080, host = '127.0.0.1', repo = REPO } = {}) {
  const server = http.createServer((req, res) => {
    handle(req, res, repo).catch((e) => {
      if (!res.headersSent) send(res, 500, `internal error: ${e.message}\n`);
      else res.destroy();
    });
  });
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
        close: () => new Promise((done) => { server.closeAllConnections?.(); server.close(() => done()); }),
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
