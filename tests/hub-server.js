// A local stand-in for the Hugging Face Hub's file URLs, for the loader's tests
// (loadPretrained('owner/name', {hubUrl})). Node only, no dependencies.
//
//   const hub = await startHub({ repos: { 'owner/name': '/abs/folder' } });
//   await fetch(`${hub.url}/owner/name/resolve/main/1_Pooling/config.json`);
//   hub.requests  // [{method, path, status}, ...] in the order answered
//   await hub.close();
//
// API: startHub({repos, port = 0, host = '127.0.0.1', slow = false, failOnce = [], cache = true, lfs,
// stall = {}, hang = [], headers = {}, tokens = {}, lfsOrigin}) resolves to {url, port, requests,
// requestHeaders, received, active(), maxActive, failNext(path, status = 500), moveMain(id, commit),
// commitOf(id), close()}.
//  - repos: {'owner/name': folder}; each folder is served as that repository's
//    `main` (and as any 40-hex commit), main's commit being the sha1 of
//    'swapformer-test-hub:owner/name' (commitOf(id), and the export hubCommit(id)). Or {'owner/name':
//    {commits: {<40-hex>: folder, ...}, main: <one of them>}}: a repository
//    with history: each commit serves its own folder, main is the one named
//    (moveMain(id, commit) moves it while the server runs, as a push does),
//    any other commit is RevisionNotFound, and the LFS redirect of a commit's
//    file points to /cdn-lfs/{owner}/{name}/{commit}/{path...}.
//  - url: 'http://127.0.0.1:PORT', no trailing slash (the loader appends
//    `/${owner}/${name}/resolve/${revision}/${file}`).
//  - requests: one {method, path, status} per answer (path: the request's
//    path as sent, without the query), pushed when the status is written.
//  - requestHeaders: one {method, path, headers} per request received (the
//    headers as Node gives them: lower-case names), pushed on arrival.
//  - tokens: {'owner/name': token}: that repository is private: its resolve
//    URLs answer 401 (x-error-code RepoNotFound, as the Hub answers a client
//    without access) unless the request has `Authorization: Bearer <token>`.
//    The LFS CDN path does not ask for it (the Hub's CDN URLs are signed).
//  - lfsOrigin: the origin the LFS redirect points to (default: this server),
//    e.g. the url of a second stand-in serving the same repos: the Hub's CDN
//    is another host, where a client must not send the token.
//  - slow: true, or {chunks = 8, delayMs = 25}: every file body (200 and 206)
//    goes out in `chunks` writes `delayMs` apart, so progress events can be seen.
//  - failOnce: a path or list of paths (as in `requests`) whose next request
//    (any method but an OPTIONS preflight) gets a 500 {"error":"Internal
//    Error"}, once each; failNext(path, status = 500) adds one while the
//    server runs.
//  - cache: false sends Cache-Control: no-store on every answer and ignores
//    If-None-Match, so a browser downloads again instead of revalidating (a
//    304 brings the cached body all at once: no progress to observe).
//  - lfs: the file extensions stored in LFS (redirected), default
//    ['.safetensors', '.bin'].
//  - stall: {path: n}: that file's answer (200) sends its headers and its
//    first n bytes, then nothing more, the connection left open (a download
//    that stops dripping). hang: paths whose request is never answered at all.
//  - headers: {path: {name: value}}: headers added to (or replacing) that
//    path's answer: a lying Content-Length, Content-Encoding: gzip for a file
//    stored gzipped...
//  - active(): the answers under way (a request received, its response not
//    yet closed: a client that drops a download closes it); maxActive: the
//    most at once since the start (downloads in parallel); received: the
//    requests received so far (`requests` logs them when answered).
//
// What it mimics (GET and HEAD alike, HEAD without the body):
//  - GET /{owner}/{name}/resolve/{revision}/{path...}, path possibly in
//    sub-folders (1_Pooling/config.json). A small (non-LFS) file: 200 with
//    Content-Length, ETag "<git blob sha1>" (the Hub's ETag for a regular
//    file), X-Repo-Commit; If-None-Match on that ETag gives 304; a single
//    Range (bytes=a-b, a-, -n) gives 206 + Content-Range, an unsatisfiable one
//    416.
//  - An LFS file (*.safetensors, *.bin): 302 Found with an absolute Location to
//    /cdn-lfs/{owner}/{name}/{path...} on this same server (the Hub redirects
//    to its LFS CDN on another host), X-Linked-Size (the file's size),
//    X-Linked-Etag "<sha256>" (the LFS object id), ETag, X-Repo-Commit; the
//    CDN path answers 200 with the bytes, ETag "<sha256>", Accept-Ranges.
//  - GET /api/models/{owner}/{name}/revision/{revision}: the repository's
//    info, {id, sha, siblings: [{rfilename}]} (every regular file of the
//    folder, sub-folders as a/b, dot files left out), as the Hub's API answers
//    it; sha is the commit the revision names, and a repository with history
//    lists the folder of that commit; the same 401 / 404 as below for an
//    unknown repository or revision.
//  - Missing file or a folder: 404, x-error-code EntryNotFound,
//    x-error-message, body {"error":"Entry not found"}.
//  - Unknown repository: 401 (what the Hub answers an anonymous client, so
//    as not to reveal private repositories), x-error-code RepoNotFound, body
//    {"error":"Repository not found"}.
//  - Revision other than main or a 40-hex commit: 404, x-error-code
//    RevisionNotFound, body {"error":"Invalid rev id: <rev>"}.
//  - Any other path: 404 {"error":"Sorry, we can't find the page you are looking for."};
//    methods other than GET, HEAD, OPTIONS: 405.
//  - CORS on every answer (the 302 and the errors included, so a page on
//    another origin can follow the redirect and read x-error-code):
//    Access-Control-Allow-Origin: *, Access-Control-Expose-Headers (Content-Length,
//    ETag, x-error-code and the Hub's other headers), and
//    Cross-Origin-Resource-Policy: cross-origin so a cross-origin-isolated
//    (COEP require-corp) page can load it too; OPTIONS preflights get 204.
// Not mimicked: gated repos, the other /api/ endpoints, the Xet headers
// (X-Xet-Hash, Link rel=xet-auth), the /api/resolve-cache/ relative redirect
// the Hub now sometimes gives for small files (a loader that follows
// redirects handles both), repo types other than models.
//
// Sources for the behaviour: huggingface_hub's file_download.py
// (get_hf_file_metadata: X-Linked-Etag or ETag, X-Linked-Size or
// Content-Length, X-Repo-Commit, Location of the LFS redirect) and
// utils/_http.py (hf_raise_for_status: X-Error-Code RepoNotFound /
// RevisionNotFound / EntryNotFound, 401 handled as RepoNotFound);
// huggingface.js packages/hub/src/lib/file-download-info.ts (HEAD with
// redirect 'manual', null on 404 + X-Error-Code EntryNotFound, X-Linked-*
// headers) and the resolve URL layout `${hubUrl}/${name}/resolve/${encodeURIComponent(revision)}/${path}`;
// huggingface/huggingface_hub PR #1202 and huggingface/datasets PR #4472 (the
// Hub's 401 for unauthenticated requests to missing repos); the hub mirror
// olah's errors.py (the JSON bodies and x-error-message texts); asteroid PR
// #377 (julien-c: X-Linked-Etag is the LFS file's sha256); xet-core's
// file-id doc (resolve of an LFS file is a 302); swift-transformers PR #209
// (the resolve-cache redirect).
//
// Hardening as web/server.js, whose helpers it uses: the request target parsed
// by hand (400 when bad, no exception text in any answer), "."/".." segments
// 403, backslash/NUL 400, the file's realpath inside the realpath of its
// repository folder (a symlink out of it: 403), handles closed on abort.
import http from 'node:http';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { requestPath, pathSegments, openInside, sendFile, clientErrorAnswer } from '../web/server.js';

// Loading Hub ids in Node fills a hub cache on disk: every stand-in started gets a fresh one
// (HF_HUB_CACHE, removed at exit), so that a test sees its own downloads, never another test's
// nor ~/.cache/huggingface's; no token from the environment either.
const cacheDirs = [];
function freshHubCache() {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-hub-cache-'));
  cacheDirs.push(dir);
  process.env.HF_HUB_CACHE = dir;
  process.env.HF_HOME = dir;
  return dir;
}
delete process.env.HF_TOKEN;
delete process.env.HUGGING_FACE_HUB_TOKEN;
delete process.env.HF_HUB_OFFLINE;
delete process.env.HF_ENDPOINT;
freshHubCache();
process.once('exit', () => {
  for (const d of cacheDirs) rmSync(d, { recursive: true, force: true });
});

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'Content-Length, Content-Range, Accept-Ranges, ETag, X-Repo-Commit, X-Linked-Size, X-Linked-Etag, x-error-code, x-error-message',
  'Cross-Origin-Resource-Policy': 'cross-origin',
  // without it Chromium holds back an application/octet-stream body to sniff
  // its type, and a slow download's progress is not seen (checked in Chromium)
  'X-Content-Type-Options': 'nosniff',
};

const PREFLIGHT = {
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Range, If-None-Match, Content-Type, User-Agent',
  'Access-Control-Max-Age': '600',
};

const TYPES = {
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.model': 'application/octet-stream',
};

const COMMIT_RE = /^[0-9a-f]{40}$/;
/** The commit main is at in a repository served from one folder (what X-Repo-Commit names): a load asks for its later files there. */
export const hubCommit = (id) => createHash('sha1').update(`swapformer-test-hub:${id}`).digest('hex');
const REPO_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The git blob id of a file's bytes (the Hub's ETag for a regular file) and its sha256 (the LFS oid). */
async function hashes(file) {
  const sha1 = createHash('sha1');
  const sha256 = createHash('sha256');
  let size = 0;
  const chunks = [];
  for await (const chunk of createReadStream(file)) {
    chunks.push(chunk);
    sha256.update(chunk);
    size += chunk.length;
  }
  sha1.update(`blob ${size}\0`);
  for (const c of chunks) sha1.update(c);
  return { blob: sha1.digest('hex'), sha256: sha256.digest('hex'), size };
}

/** The files a repository folder serves, as the Hub lists them (a/b, sorted): regular files, and symlinks to a file inside the folder; dot files left out. */
async function listFiles(folder) {
  const root = await realpath(folder);
  const out = [];
  for (const e of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const full = path.join(e.parentPath ?? e.path, e.name);
    const rel = path.relative(folder, full).split(path.sep).join('/');
    if (rel.split('/').some((part) => part.startsWith('.'))) continue;
    if (e.isFile()) out.push(rel);
    else if (e.isSymbolicLink()) {
      const target = await realpath(full).catch(() => null);
      if (target && target.startsWith(root + path.sep) && (await stat(target)).isFile()) out.push(rel);
    }
  }
  return out.sort();
}

/** Parses a single "bytes=a-b" range against a size: {start, end}, 'unsatisfiable', or null (ignore, send all). */
function parseRange(header, size) {
  if (typeof header !== 'string') return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start, end;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return null;
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

const etagMatches = (header, etag) =>
  typeof header === 'string' && (header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag));

/** Writes a file's bytes [start, end] in `chunks` writes `delayMs` apart; closes the handle on every path. */
async function sendSlowly(res, fh, start, end, { chunks, delayMs }) {
  try {
    const step = Math.max(1, Math.ceil((end - start + 1) / chunks));
    for (let pos = start; pos <= end; pos += step) {
      if (res.destroyed) return;
      const buf = Buffer.alloc(Math.min(step, end - pos + 1));
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      if (!res.write(buf.subarray(0, bytesRead))) {
        await new Promise((go) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            go();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
      if (pos + step <= end) await sleep(delayMs);
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * Starts the stand-in Hub. See the header for the options and what it answers.
 * Resolves to {url, port, requests, failNext(path, status), close()}.
 */
export async function startHub({
  repos = {},
  port = 0,
  host = '127.0.0.1',
  slow = false,
  failOnce = [],
  cache = true,
  lfs = ['.safetensors', '.bin'],
  stall = {},
  hang = [],
  headers: extraHeaders = {},
  tokens = {},
  lfsOrigin,
} = {}) {
  const hubCache = freshHubCache();
  const folders = new Map();
  for (const [id, spec] of Object.entries(repos)) {
    if (!REPO_RE.test(id)) throw new Error(`startHub: repo id '${id}' is not 'owner/name'`);
    if (typeof spec === 'string') {
      folders.set(id, { folder: path.resolve(spec), commit: hubCommit(id), commits: null });
      continue;
    }
    const commits = new Map(Object.entries(spec.commits ?? {}).map(([c, f]) => [c, path.resolve(f)]));
    if (![...commits.keys()].every((c) => COMMIT_RE.test(c)) || !commits.has(spec.main))
      throw new Error(`startHub: ${id}: commits must be 40-hex names and main one of them`);
    folders.set(id, { folder: commits.get(spec.main), commit: spec.main, commits });
  }
  /** The folder a repository serves at a commit (null: no such commit). */
  const folderAt = (repo, commit) => (repo.commits ? (repo.commits.get(commit) ?? null) : repo.folder);
  const slowOpts = slow ? { chunks: 8, delayMs: 25, ...(typeof slow === 'object' ? slow : {}) } : null;
  const lfsExt = new Set(lfs.map((e) => e.toLowerCase()));
  const failing = new Map([].concat(failOnce).map((p) => [p, 500]));
  const requests = [],
    requestHeaders = [];
  const hashCache = new Map();
  const hanging = new Set(hang);
  let active = 0,
    maxActive = 0,
    received = 0;
  let base = '';

  const fileHashes = async (real, info) => {
    const key = `${real}\0${info.size}\0${info.mtimeMs}`;
    if (!hashCache.has(key))
      hashCache.set(
        key,
        hashes(real).catch((e) => {
          hashCache.delete(key);
          throw e;
        }),
      );
    return hashCache.get(key);
  };

  function head(req, res, status, headers, logPath) {
    requests.push({ method: req.method, path: logPath, status });
    res.writeHead(status, {
      ...CORS,
      ...(cache ? {} : { 'Cache-Control': 'no-store' }),
      ...headers,
      ...(Object.hasOwn(extraHeaders, logPath) ? extraHeaders[logPath] : {}),
    });
  }

  function json(req, res, logPath, status, error, code, extra = {}) {
    const body = JSON.stringify({ error });
    head(
      req,
      res,
      status,
      {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        ...(code ? { 'x-error-code': code, 'x-error-message': error } : {}),
        ...extra,
      },
      logPath,
    );
    res.end(body);
  }

  /** Sends an open file: 304 / 416 / 206 / 200, slowly if asked. */
  async function sendOpen(req, res, logPath, o, headers, etag) {
    const size = o.info.size;
    if (cache && etagMatches(req.headers['if-none-match'], etag)) {
      await o.fh.close().catch(() => {});
      head(req, res, 304, { ETag: etag, ...headers }, logPath);
      return res.end();
    }
    const range = req.method === 'GET' ? parseRange(req.headers.range, size) : null;
    if (range === 'unsatisfiable') {
      await o.fh.close().catch(() => {});
      return json(req, res, logPath, 416, 'Requested Range Not Satisfiable', null, { 'Content-Range': `bytes */${size}` });
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    const common = { ...headers, ETag: etag, 'Accept-Ranges': 'bytes', 'Content-Length': Math.max(0, end - start + 1) };
    if (range) head(req, res, 206, { ...common, 'Content-Range': `bytes ${start}-${end}/${size}` }, logPath);
    else head(req, res, 200, common, logPath);
    if (req.method === 'GET' && Object.hasOwn(stall, logPath)) {
      // the first bytes, then silence until the client leaves
      const first = Buffer.alloc(Math.min(stall[logPath], size));
      await o.fh.read(first, 0, first.length, 0);
      await o.fh.close().catch(() => {});
      return res.write(first);
    }
    if (req.method === 'HEAD' || !slowOpts || size === 0) return sendFile(req, res, o.fh, size === 0 ? {} : { start, end });
    return sendSlowly(res, o.fh, start, end, slowOpts);
  }

  async function handle(req, res) {
    const raw = requestPath(req.url);
    const logPath = raw ?? String(req.url).slice(0, 200);
    requestHeaders.push({ method: req.method, path: logPath, headers: { ...req.headers } });
    if (raw === null) return json(req, res, logPath, 400, 'Bad request');
    if (hanging.has(raw)) return requests.push({ method: req.method, path: logPath, status: null }); // never answered
    if (req.method === 'OPTIONS') {
      head(req, res, 204, PREFLIGHT, logPath);
      return res.end();
    }
    if (failing.has(raw)) {
      const status = failing.get(raw);
      failing.delete(raw);
      return json(req, res, logPath, status, 'Internal Error');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(req, res, logPath, 405, 'Method not allowed', null, { Allow: 'GET, HEAD, OPTIONS' });
    const refuse = (status) => json(req, res, logPath, status, status === 403 ? 'Forbidden' : 'Bad request');
    // the revision is one segment, percent-encoded (refs%2Fpr%2F1): split before decoding
    const parts = raw.split('/').filter(Boolean);
    const isResolve = parts.length >= 4 && parts[2] === 'resolve';
    const p = pathSegments(isResolve ? `/${[...parts.slice(0, 2), ...parts.slice(4)].join('/')}` : raw);
    if (p.status) return refuse(p.status);
    let s = p.segments;
    if (isResolve) {
      let revision;
      try {
        revision = decodeURIComponent(parts[3]);
      } catch {
        return refuse(400);
      }
      if (revision.includes('\0') || revision.includes('\\')) return refuse(400);
      const owner = pathSegments(`/${parts[0]}`).segments ?? [];
      const name = pathSegments(`/${parts[1]}`).segments ?? [];
      if (owner.length !== 1 || name.length !== 1) return json(req, res, logPath, 401, 'Repository not found', 'RepoNotFound');
      s = [owner[0], name[0], 'resolve', revision, ...s.slice(2)];
    }

    // the file list: /api/models/{owner}/{name}/revision/{revision}
    if (!isResolve && s[0] === 'api' && s[1] === 'models' && s[4] === 'revision' && s.length === 6) {
      const id = `${s[2]}/${s[3]}`;
      const repo = folders.get(id);
      if (!repo || (Object.hasOwn(tokens, id) && req.headers.authorization !== `Bearer ${tokens[id]}`))
        return json(req, res, logPath, 401, 'Repository not found', 'RepoNotFound');
      const revision = s[5];
      if (revision !== 'main' && !COMMIT_RE.test(revision)) return json(req, res, logPath, 404, `Invalid rev id: ${revision}`, 'RevisionNotFound');
      const commit = revision === 'main' ? repo.commit : revision;
      const folder = folderAt(repo, commit);
      if (!folder) return json(req, res, logPath, 404, `Invalid rev id: ${revision}`, 'RevisionNotFound');
      const files = await listFiles(folder);
      const body = JSON.stringify({ id, sha: commit, siblings: files.map((rfilename) => ({ rfilename })) });
      head(req, res, 200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }, logPath);
      return res.end(req.method === 'HEAD' ? undefined : body);
    }

    // the LFS "CDN": /cdn-lfs/{owner}/{name}/{path...} (a repository with history: /{commit}/{path...})
    if (!isResolve && s[0] === 'cdn-lfs' && s.length >= 4) {
      const repo = folders.get(`${s[1]}/${s[2]}`);
      if (!repo) return json(req, res, logPath, 404, 'Not Found');
      const folder = repo.commits ? folderAt(repo, s[3]) : repo.folder;
      if (!folder || (repo.commits && s.length < 5)) return json(req, res, logPath, 404, 'Not Found');
      const o = await openInside(folder, s.slice(repo.commits ? 4 : 3));
      if (o.status === 403) return json(req, res, logPath, 403, 'Forbidden');
      if (o.status || o.directory) return json(req, res, logPath, 404, 'Not Found');
      const h = await fileHashes(o.real, o.info);
      return sendOpen(req, res, logPath, o, { 'Content-Type': 'application/octet-stream' }, `"${h.sha256}"`);
    }

    // /{owner}/{name}/resolve/{revision}/{path...}
    if (isResolve) {
      const id = `${s[0]}/${s[1]}`;
      const repo = folders.get(id);
      if (!repo) return json(req, res, logPath, 401, 'Repository not found', 'RepoNotFound');
      if (Object.hasOwn(tokens, id) && req.headers.authorization !== `Bearer ${tokens[id]}`)
        return json(req, res, logPath, 401, 'Repository not found', 'RepoNotFound');
      const revision = s[3];
      if (revision !== 'main' && !COMMIT_RE.test(revision)) return json(req, res, logPath, 404, `Invalid rev id: ${revision}`, 'RevisionNotFound');
      const commit = revision === 'main' ? repo.commit : revision;
      const folder = folderAt(repo, commit);
      if (!folder) return json(req, res, logPath, 404, `Invalid rev id: ${revision}`, 'RevisionNotFound');
      const file = s.slice(4);
      if (!file.length) return json(req, res, logPath, 404, 'Entry not found', 'EntryNotFound', { 'X-Repo-Commit': commit });
      const o = await openInside(folder, file);
      if (o.status === 403) return json(req, res, logPath, 403, 'Forbidden');
      if (o.status || o.directory) return json(req, res, logPath, 404, 'Entry not found', 'EntryNotFound', { 'X-Repo-Commit': commit });
      const h = await fileHashes(o.real, o.info);
      if (lfsExt.has(path.extname(file.at(-1)).toLowerCase())) {
        await o.fh.close().catch(() => {});
        const location = `${lfsOrigin ?? base}/cdn-lfs/${[s[0], s[1], ...(repo.commits ? [commit] : []), ...file].map(encodeURIComponent).join('/')}`;
        const body = `Found. Redirecting to ${location}`;
        head(
          req,
          res,
          302,
          {
            Location: location,
            'Content-Type': 'text/plain; charset=utf-8',
            'Content-Length': Buffer.byteLength(body),
            ETag: `"${h.sha256}"`,
            'X-Linked-Etag': `"${h.sha256}"`,
            'X-Linked-Size': String(o.info.size),
            'X-Repo-Commit': commit,
          },
          logPath,
        );
        return res.end(body);
      }
      const type = TYPES[path.extname(file.at(-1)).toLowerCase()] ?? 'application/octet-stream';
      return sendOpen(req, res, logPath, o, { 'Content-Type': type, 'X-Repo-Commit': commit }, `"${h.blob}"`);
    }

    return json(req, res, logPath, 404, "Sorry, we can't find the page you are looking for.");
  }

  const server = http.createServer((req, res) => {
    received++;
    active++;
    maxActive = Math.max(maxActive, active);
    res.on('close', () => {
      active--;
    });
    handle(req, res).catch(() => {
      // never an exception's text in an answer
      if (!res.headersSent) json(req, res, requestPath(req.url) ?? '?', 500, 'Internal Error');
      else res.destroy();
    });
  });
  server.on('clientError', clientErrorAnswer({ ...CORS, ...(cache ? {} : { 'Cache-Control': 'no-store' }) }));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = server.address().port;
  base = `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
  return {
    url: base,
    port: actual,
    requests,
    requestHeaders,
    active: () => active,
    get maxActive() {
      return maxActive;
    },
    get received() {
      return received;
    },
    failNext(p, status = 500) {
      failing.set(p, status);
    },
    /** The commit a repository's main is at. */
    commitOf: (id) => folders.get(id).commit,
    /** Moves a repository's main to another of its commits (a push). */
    moveMain(id, commit) {
      const repo = folders.get(id);
      if (!repo?.commits?.has(commit)) throw new Error(`moveMain: ${id} has no commit ${commit}`);
      repo.commit = commit;
      repo.folder = repo.commits.get(commit);
    },
    /** The hub cache this stand-in's downloads go to (HF_HUB_CACHE while it is the last one started). */
    cacheDir: hubCache,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections?.();
        server.close(() => done());
      }),
  };
}
