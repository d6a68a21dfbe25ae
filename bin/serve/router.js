// The HTTP layer: node:http, TEI's routes and OpenAI's, the API key, the
// answers and their errors, and the drain on shutdown. It holds no model
// logic: handlers (tei.js, openai.js) read requests and shape answers,
// infer.js and batcher.js take inputs to engine.js, the one place that calls
// the library.
//
//   createServer(engine, options) -> {server, svc, drain(timeoutMs)}
//
// Limits (README "Server"): bodies past --payload-limit 413, bodies that do
// not arrive within --body-timeout 408 (and headers within it: Node's
// headersTimeout), more inputs in flight than --max-concurrent-requests 429;
// an answer to a request whose body was not read whole closes the connection
// once the rest of the body has arrived (lingerClose). HEAD answers as GET
// does, without the body (RFC 9110 9.3.2); a 405 names the methods in Allow.
// drain: no new connection, every request already received answered (with
// Connection: close), then the server closes.
import http from 'node:http';
import net from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError, errorBody, fromError } from './errors.js';
import { readJson, CLIENT_GONE } from './body.js';
import { Batcher, DROPPED } from './batcher.js';
import { Metrics } from './metrics.js';
import { Permits } from './infer.js';
import * as tei from './tei.js';
import { embeddings } from './openai.js';

/** The drain: how long a connection without a request stays open, and the ticks without a new connection before the listener closes. */
const IDLE_MS = 250,
  QUIET_TICKS = 3;

/** The most bytes of a refused body read and thrown away before its connection is cut (or --payload-limit, if more). */
const LINGER_BYTES = 64 * 2 ** 20;

const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** method path -> [handler, error style, public]; POST / and /invocations follow the model's kind, as TEI's. */
function routes(kind) {
  const main = { embedding: tei.embed, classifier: tei.predict, reranker: tei.rerank }[kind];
  const health = [tei.health, 'tei', true];
  return new Map([
    ['POST /embed', [tei.embed, 'tei']],
    ['POST /embed_sparse', [tei.embedSparse, 'tei']],
    ['POST /embed_all', [tei.embedAll, 'tei']],
    ['POST /predict', [tei.predict, 'tei']],
    ['POST /rerank', [tei.rerank, 'tei']],
    ['POST /tokenize', [tei.tokenize, 'tei']],
    ['POST /decode', [tei.decode, 'tei']],
    ['POST /v1/embeddings', [embeddings, 'openai']],
    ['POST /embeddings', [embeddings, 'openai']],
    ['POST /', [main, 'tei']],
    ['POST /invocations', [main, 'tei']],
    ['GET /info', [tei.info, 'tei']],
    ['GET /health', health],
    ['GET /', health],
    ['GET /ping', health],
    ['GET /metrics', [(svc) => ({ text: svc.metrics.render(), type: METRICS_TYPE }), 'tei', true]],
  ]);
}

const digest = (s) => createHash('sha256').update(s).digest();

/** The Authorization header is exactly "Bearer <key>" (TEI's check), compared in constant time. */
function authorized(req, expected) {
  const got = req.headers.authorization;
  return typeof got === 'string' && timingSafeEqual(digest(got), expected);
}

/**
 * An answer written before its request's body arrived whole (413, 401, 415,
 * 408...) says Connection: close, and the connection closes once the rest of
 * the body has arrived, read and thrown away: at most LINGER_BYTES (or
 * --payload-limit) within --body-timeout, else it is cut. Closed at once, the
 * connection would be reset under a client still writing its body, which then
 * reads EPIPE or ECONNRESET instead of the answer (fetch's "fetch failed").
 * Node ends a Connection: close answer with socket.destroySoon(): for this
 * socket, that waits for the body.
 */
function lingerClose(svc, req) {
  const { socket } = req;
  const most = Math.max(LINGER_BYTES, svc.options.payloadLimit);
  let read = 0,
    written = false;
  const timer = setTimeout(() => socket.destroy(), svc.options.bodyTimeout);
  socket.once('close', () => clearTimeout(timer));
  const close = () => {
    if (!written || !req.readableEnded) return;
    clearTimeout(timer);
    net.Socket.prototype.destroySoon.call(socket);
  };
  socket.destroySoon = () => {
    written = true;
    close();
  };
  req.on('data', (chunk) => {
    read += chunk.length;
    if (read > most) socket.destroy();
  });
  req.once('end', close);
  req.resume();
}

/** Whether some of the request's body has not been read (a request without Content-Length or Transfer-Encoding has none: RFC 9112 6.3). */
const unread = (req) => !req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) !== 0);

/** Writes an answer; one whose request body was not read whole closes the connection (lingerClose). */
function send(svc, req, res, status, { json, text, type, headers }) {
  const payload = json !== undefined ? JSON.stringify(json) : text;
  const head = {
    'content-type': type ?? (json !== undefined ? 'application/json' : 'text/plain; charset=utf-8'),
    'content-length': Buffer.byteLength(payload),
    ...headers,
  };
  const linger = unread(req);
  if (svc.draining || linger) head.connection = 'close';
  if (linger) lingerClose(svc, req);
  res.writeHead(status, head);
  res.end(payload);
}

async function handle(svc, req, res) {
  const call = { start: performance.now(), gone: () => gone };
  let gone = false;
  res.once('close', () => {
    gone = !res.writableFinished;
  });
  const path = (req.url ?? '/').split('?')[0];
  const route = svc.routes.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${path}`); // Node sends no body to a HEAD
  const style = path.endsWith('embeddings') ? 'openai' : 'tei';
  try {
    if (!route) {
      const allowed = ['GET', 'HEAD', 'POST'].filter((m) => svc.routes.has(`${m === 'HEAD' ? 'GET' : m} ${path}`));
      if (allowed.length)
        throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not allowed on ${path}`, {
          code: 'method_not_allowed',
          headers: { allow: allowed.join(', ') },
        });
      throw new HttpError(404, 'NotFound', `no route ${req.method} ${path}`, { code: 'not_found' });
    }
    const [handler, , isPublic] = route;
    if (!isPublic && svc.apiKey && !authorized(req, svc.apiKey)) {
      throw new HttpError(401, 'Unauthorized', 'a valid API key is needed: Authorization: Bearer <key>', {
        code: 'invalid_api_key',
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    const body = req.method === 'POST' ? await readJson(req, svc.bodyOptions) : null;
    const out = await handler(svc, body, call);
    if (!gone) send(svc, req, res, 200, out);
  } catch (e) {
    if (e === CLIENT_GONE || e === DROPPED || gone) return; // no one to answer
    const err = fromError(e);
    if (err.status === 500) console.error('swapformer serve: internal error:', e);
    send(svc, req, res, err.status, { json: errorBody(err, style), headers: err.headers });
  }
}

/**
 * The server over an engine (engine.js), not yet listening. options:
 * maxConcurrentRequests, maxBatchTokens, maxBatchRequests, maxClientBatchSize,
 * autoTruncate, payloadLimit, bodyTimeout (ms), apiKey (null or undefined for none), modelId,
 * servedModelName, version.
 */
export function createServer(engine, options) {
  // an empty key would turn the check off (bin/serve.js refuses one as a usage error)
  if (options.apiKey != null && (typeof options.apiKey !== 'string' || options.apiKey.trim() === ''))
    throw new TypeError('apiKey must be a non-empty string, or null for none');
  const metrics = new Metrics({ maxInputLength: engine.maxInputLength });
  const svc = {
    engine,
    metrics,
    options,
    routes: routes(engine.kind),
    permits: new Permits(options.maxConcurrentRequests),
    batcher: new Batcher({
      run: (key, items) => engine.run(key, items),
      metrics,
      maxBatchTokens: options.maxBatchTokens,
      maxBatchRequests: options.maxBatchRequests,
    }),
    apiKey: options.apiKey ? digest(`Bearer ${options.apiKey}`) : null,
    bodyOptions: { limit: options.payloadLimit, timeout: options.bodyTimeout },
    draining: false,
    inFlight: 0,
  };
  const server = http.createServer({
    headersTimeout: options.bodyTimeout,
    requestTimeout: 2 * options.bodyTimeout,
    connectionsCheckingInterval: Math.min(1000, options.bodyTimeout),
  });
  // connections and the requests each carries, for the drain
  const sockets = new Set();
  let accepted = 0;
  server.on('connection', (socket) => {
    accepted++;
    socket.requests = 0;
    socket.idleSince = performance.now();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    svc.inFlight++;
    req.socket.requests++;
    res.once('close', () => {
      svc.inFlight--;
      req.socket.requests--;
      req.socket.idleSince = performance.now();
    });
    handle(svc, req, res);
  });

  /**
   * Stops accepting, answers every request received, closes; false if
   * timeoutMs passed first (the connections left are cut). Node accepts one
   * connection per turn of its event loop, so while a batch keeps the loop
   * busy, clients that have connected and sent their request wait in the
   * listen backlog; the listener stays open until QUIET_TICKS ticks (each
   * after a poll phase) have brought no new connection, and closing it
   * resets nothing that was sent before the drain. A connection without a
   * request is closed once idle IDLE_MS. Not http.Server.close: since Node 19
   * it also closes idle connections at once, a request still unread with them.
   */
  async function drain(timeoutMs) {
    svc.draining = true;
    const deadline = performance.now() + timeoutMs;
    let closed = null,
      seen = accepted,
      quiet = 0;
    while (!closed || sockets.size) {
      await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setImmediate(r)); // after a poll phase: accepted, and read
      const now = performance.now();
      if (now > deadline) {
        for (const socket of sockets) socket.destroy();
        closed ??= new Promise((resolve) => net.Server.prototype.close.call(server, resolve));
        await closed;
        return false;
      }
      quiet = accepted === seen ? quiet + 1 : 0;
      seen = accepted;
      if (!closed && quiet >= QUIET_TICKS) closed = new Promise((resolve) => net.Server.prototype.close.call(server, resolve));
      for (const socket of sockets) if (socket.requests === 0 && now - socket.idleSince >= IDLE_MS) socket.destroy();
    }
    await closed;
    return true;
  }

  return { server, svc, drain };
}
