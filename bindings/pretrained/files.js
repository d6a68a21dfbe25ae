// Where a pretrained model's files come from: a directory (Node), a URL folder,
// a Hugging Face Hub id, or dropped files (browser drag-and-drop: a map of
// names to contents, or a FileList / array of File objects).
//
//   const src = await openSource('sentence-transformers/all-MiniLM-L6-v2');
//   const config = await src.readJSON('config.json');
//   const modules = await src.readJSON('modules.json', { optional: true }); // null when absent
//
// Every kind answers the same interface, and reads are lazy: a file is fetched
// or read only when asked for. Paths given to `read` are relative and
// '/'-separated; anything that could escape the source ('..', absolute paths,
// backslashes, NUL, empty segments) is refused, because some names come from
// untrusted files (the shard names of model.safetensors.index.json, the module
// paths of modules.json).
//
// Downloads stream their body and report progress; in browsers each downloaded
// file is kept in the Cache API (cache 'swapformer-models-v1', keyed by the
// resolved URL) and later reads are served from it. Node has no Cache API and
// nothing is written to disk there.
//
// No `node:` import, static or literal dynamic: the directory branch gets
// node:fs/promises through platform.js's nodeBuiltin only when it runs, so this
// module loads unchanged in browsers and bundlers have nothing to resolve.
import { SwapformerError } from '../utils/errors.js';
import { isNode, nodeBuiltin } from '../utils/platform.js';

/** The Cache API cache that holds downloaded model files (browsers only). */
export const CACHE_NAME = 'swapformer-models-v1';

const HUB_ID_RE = /^[\w.-]+\/[\w.-]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });


/**
 * Refuses a file path that is not a plain relative '/'-separated path inside
 * the source. `from` names the file the path came from (for the message).
 * Returns the path's segments.
 */
export function checkPath(path, from) {
  const where = from ? `${from} names the file '${path}'` : `file path '${path}'`;
  const refuse = (why) => { throw new SwapformerError('BAD_FILE', `${where}: ${why}; only relative paths inside the model folder are read`); };
  if (typeof path !== 'string' || path === '') refuse('not a non-empty string');
  if (path.includes('\0')) refuse('it contains NUL');
  if (path.includes('\\')) refuse('it contains a backslash');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) refuse('it is absolute');
  const segments = path.split('/');
  if (segments.some((s) => s === '')) refuse('it has an empty segment');
  if (segments.some((s) => s === '.' || s === '..')) refuse("it has a '.' or '..' segment");
  return segments;
}

/** A source object from a kind, a label and a raw reader (path, optional) -> bytes | null. */
function makeSource(kind, label, readRaw, hasRaw) {
  const read = async (path, { optional = false, from } = {}) => {
    checkPath(path, from);
    return readRaw(path, optional);
  };
  const readText = async (path, opts = {}) => {
    const bytes = await read(path, opts);
    if (bytes === null) return null;
    try {
      return utf8.decode(bytes);
    } catch {
      throw new SwapformerError('BAD_FILE', `${path} (in ${label}) is not valid UTF-8 text`);
    }
  };
  const readJSON = async (path, opts = {}) => {
    const text = await readText(path, opts);
    if (text === null) return null;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new SwapformerError('BAD_FILE', `${path} (in ${label}) is not valid JSON: ${e.message}`);
    }
  };
  /** Whether a file exists, without downloading it (a HEAD request for URLs). */
  const has = async (path, { from } = {}) => {
    checkPath(path, from);
    return hasRaw(path);
  };
  return { kind, label, read, readText, readJSON, has };
}

/**
 * The same source seen from one of its sub-folders (e.g. an old
 * sentence-transformers save whose Transformer module lives in 0_Transformer/,
 * recipe.transformerPath): read('config.json') reads '<folder>/config.json'.
 */
export function subSource(source, folder) {
  if (!folder) return source;
  checkPath(folder);
  const inside = (path, opts) => {
    checkPath(path, opts?.from); // name the path as given, not the joined one
    return `${folder}/${path}`;
  };
  return {
    kind: source.kind,
    label: `${source.label} (folder ${folder})`,
    read: async (path, opts) => source.read(inside(path, opts), opts),
    readText: async (path, opts) => source.readText(inside(path, opts), opts),
    readJSON: async (path, opts) => source.readJSON(inside(path, opts), opts),
    has: async (path, opts) => source.has(inside(path, opts), opts),
  };
}

// ---------------------------------------------------------------------------
// Options and the kind of source

function checkOptions({ hubUrl = 'https://huggingface.co', revision = 'main', fetch = globalThis.fetch, cache = true, onProgress } = {}) {
  const bad = (name, why) => { throw new SwapformerError('BAD_ARGUMENT', `option ${name}: ${why}`); };
  let hub;
  try {
    hub = new URL(String(hubUrl));
  } catch {
    bad('hubUrl', `'${hubUrl}' is not a URL`);
  }
  if (hub.protocol !== 'http:' && hub.protocol !== 'https:') bad('hubUrl', `'${hubUrl}' is not an http(s) URL`);
  if (typeof revision !== 'string' || revision === '' || revision.includes('\0')) bad('revision', 'must be a non-empty string (a branch, tag or commit)');
  if (fetch !== undefined && typeof fetch !== 'function') bad('fetch', 'must be a function like globalThis.fetch');
  if (typeof cache !== 'boolean') bad('cache', 'must be true or false');
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') bad('onProgress', 'must be a function');
  // a plain call (no `this`): window.fetch called as a method of another object throws "Illegal invocation"
  const fetchFn = fetch === globalThis.fetch && fetch ? (url, init) => globalThis.fetch(url, init) : fetch;
  return { hubUrl: hub.href.replace(/\/+$/, ''), revision, fetchFn, cache, onProgress: onProgress || null };
}

const looksLikePath = (s) => /^(\.{1,2}([/\\]|$)|[/\\~]|[A-Za-z]:)/.test(s) || s.includes('\\');

/** Whether a Hub id is valid the way the Hub checks it (owner/name, no '..' or '--'). */
export function isHubId(s) {
  return typeof s === 'string' && HUB_ID_RE.test(s) && !s.includes('..') && !s.includes('--')
    && s.split('/').every((p) => p.length <= 96);
}

/**
 * Opens a model source. See the module header; the options:
 *  - hubUrl ('https://huggingface.co'), revision ('main'): for Hub ids;
 *  - fetch (globalThis.fetch): the function used for every download;
 *  - cache (true): keep downloads in the browser's Cache API;
 *  - onProgress({file, loaded, total}): called as a file's bytes arrive, and
 *    once at the end with loaded === total (total null while unknown). Files
 *    read from disk, from a file map or from the cache report once, whole.
 * Resolves to {kind, label, read, readText, readJSON, has}.
 */
export async function openSource(source, options = {}) {
  const opts = checkOptions(options ?? {});
  if (source instanceof URL) {
    if (source.protocol === 'file:' && isNode) {
      const { fileURLToPath } = await nodeBuiltin('node:url');
      return openDirectory(fileURLToPath(source), opts);
    }
    return openUrl(source.href, opts);
  }
  if (typeof source === 'string') {
    if (/^https?:\/\//i.test(source)) return openUrl(source, opts);
    if (source === '') throw new SwapformerError('BAD_ARGUMENT', 'source is an empty string');
    if (isNode) {
      const { stat } = await nodeBuiltin('node:fs/promises');
      const info = await stat(source).catch(() => null);
      if (info) return openDirectory(source, opts, info);
      if (looksLikePath(source) || !isHubId(source))
        throw new SwapformerError(looksLikePath(source) ? 'NOT_FOUND' : 'BAD_ARGUMENT',
          looksLikePath(source)
            ? `source: no directory '${source}'`
            : `source '${source}' is neither an existing directory, a URL nor a Hugging Face id 'owner/name'`);
      return openHub(source, opts);
    }
    if (isHubId(source) && !looksLikePath(source)) return openHub(source, opts);
    throw new SwapformerError('BAD_ARGUMENT', looksLikePath(source)
      ? `source '${source}': a directory path works only in Node; in a browser pass a URL, a Hugging Face id or a map of files`
      : `source '${source}' is neither a URL nor a Hugging Face id 'owner/name'`);
  }
  if (Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList))
    return openFiles(filesFromList(source), opts);
  if (source instanceof Map || (source && typeof source === 'object' && !ArrayBuffer.isView(source)))
    return openFiles(source, opts);
  throw new SwapformerError('BAD_ARGUMENT', 'source must be a directory path, a URL, a Hugging Face id (owner/name), a map of file names to contents or a list of File objects');
}

// ---------------------------------------------------------------------------
// A directory (Node)

async function openDirectory(dir, opts, info) {
  const fs = await nodeBuiltin('node:fs/promises');
  info ??= await fs.stat(dir).catch(() => null);
  if (!info) throw new SwapformerError('NOT_FOUND', `source: no directory '${dir}'`);
  if (!info.isDirectory()) throw new SwapformerError('NOT_FOUND', `source '${dir}' is a file, not a model directory`);
  const base = dir.replace(/[/\\]+$/, '') || dir;
  const full = (path) => `${base}/${path}`;
  const missing = (e) => e && (e.code === 'ENOENT' || e.code === 'ENOTDIR' || e.code === 'EISDIR');
  const readRaw = async (path, optional) => {
    let buf;
    try {
      buf = await fs.readFile(full(path));
    } catch (e) {
      if (missing(e) && optional) return null;
      throw new SwapformerError('NOT_FOUND', missing(e)
        ? `no file ${path} in the directory ${dir}`
        : `cannot read ${path} in the directory ${dir}: ${e.message}`);
    }
    const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    opts.onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
    return bytes;
  };
  // symlinks are followed on purpose: the Hugging Face cache's snapshot folders are symlinks into blobs/
  const hasRaw = async (path) => (await fs.stat(full(path)).catch(() => null))?.isFile() ?? false;
  return makeSource('directory', dir, readRaw, hasRaw);
}

// ---------------------------------------------------------------------------
// A map of files (drag-and-drop)

/** The file map's entries as [name, value], names checked, a shared leading folder stripped. */
function fileEntries(source) {
  const entries = source instanceof Map ? [...source.entries()] : Object.entries(source);
  if (!entries.length) throw new SwapformerError('BAD_ARGUMENT', 'source: the map of files is empty');
  for (const [name] of entries) {
    if (typeof name !== 'string') throw new SwapformerError('BAD_ARGUMENT', `source: file map key ${String(name)} is not a string`);
    try {
      checkPath(name);
    } catch (e) {
      throw new SwapformerError('BAD_ARGUMENT', `source: file map key '${name}' is refused (${e.message})`);
    }
  }
  // a dropped folder: every name starts with the same folder and config.json is not at the root
  const first = entries[0][0].split('/')[0];
  const dropped = !entries.some(([n]) => n === 'config.json')
    && entries.every(([n]) => n.includes('/') && n.split('/')[0] === first);
  return dropped ? entries.map(([n, v]) => [n.slice(first.length + 1), v]) : entries;
}

/**
 * A list of File objects (an <input webkitdirectory> FileList, or the files of
 * a drop) as a Map keyed by each file's path in the dropped folder
 * (webkitRelativePath), or its name when there is none.
 */
function filesFromList(list) {
  const map = new Map();
  for (const file of Array.from(list)) {
    if (!isBlob(file) || typeof file.name !== 'string')
      throw new SwapformerError('BAD_ARGUMENT', 'source: a list of files must hold File objects');
    const name = file.webkitRelativePath || file.name;
    if (map.has(name)) throw new SwapformerError('BAD_ARGUMENT', `source: the file ${name} is given twice`);
    map.set(name, file);
  }
  return map;
}

const isBlob = (v) => v && typeof v === 'object' && typeof v.arrayBuffer === 'function' && typeof v.size === 'number';

async function toBytes(name, value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (isBlob(value)) return new Uint8Array(await value.arrayBuffer());
  throw new SwapformerError('BAD_ARGUMENT', `source: file map entry '${name}' must be a Uint8Array, ArrayBuffer, string or Blob/File`);
}

function openFiles(source, opts) {
  const files = new Map(fileEntries(source));
  for (const [name, value] of files) {
    const ok = value instanceof ArrayBuffer || ArrayBuffer.isView(value) || typeof value === 'string' || isBlob(value);
    if (!ok) throw new SwapformerError('BAD_ARGUMENT', `source: file map entry '${name}' must be a Uint8Array, ArrayBuffer, string or Blob/File`);
  }
  const label = `the given files (${files.size})`;
  const readRaw = async (path, optional) => {
    if (!files.has(path)) {
      if (optional) return null;
      throw new SwapformerError('NOT_FOUND', `no file ${path} among ${label}: ${[...files.keys()].slice(0, 20).join(', ')}`);
    }
    const bytes = await toBytes(path, files.get(path));
    opts.onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
    return bytes;
  };
  return makeSource('files', label, readRaw, async (path) => files.has(path));
}

// ---------------------------------------------------------------------------
// Downloads: a URL folder or the Hub

const encodePath = (path) => path.split('/').map(encodeURIComponent).join('/');

function openUrl(href, opts) {
  let base;
  try {
    base = new URL(href);
  } catch {
    throw new SwapformerError('BAD_ARGUMENT', `source '${href}' is not a valid URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new SwapformerError('BAD_ARGUMENT', `source '${href}' is not an http(s) URL`);
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const label = base.href;
  return makeDownloader('url', label, (path) => new URL(encodePath(path), base).href, opts);
}

function openHub(id, opts) {
  const root = `${opts.hubUrl}/${id}/resolve/${encodeURIComponent(opts.revision)}/`;
  const label = opts.revision === 'main' ? id : `${id}@${opts.revision}`;
  return makeDownloader('hub', label, (path) => root + encodePath(path), opts);
}

/** The browser's model cache, or null (Node, cache: false, or a context without the Cache API). */
function cacheOpener(opts) {
  let pending = null;
  return () => {
    if (!opts.cache || typeof globalThis.caches?.open !== 'function') return Promise.resolve(null);
    // an opaque origin or a private window may refuse: then download without caching
    pending ??= globalThis.caches.open(CACHE_NAME).catch(() => null);
    return pending;
  };
}

function makeDownloader(kind, label, urlOf, opts) {
  const openCache = cacheOpener(opts);
  const hub = kind === 'hub';

  /** Throws for an unusable answer; returns false for an absent optional file. */
  const checkStatus = (res, path, url, optional) => {
    if (res.ok) return true;
    const code = res.headers.get('x-error-code');
    const hubMessage = res.headers.get('x-error-message');
    if (res.status === 401 || code === 'RepoNotFound')
      throw new SwapformerError('NOT_FOUND', `${path}: ${hub ? `repository ${label.split('@')[0]}` : label} not found or private (HTTP ${res.status} from ${url})`);
    if (code === 'RevisionNotFound')
      throw new SwapformerError('NOT_FOUND', `${path}: revision '${opts.revision}' not found in ${label.split('@')[0]} (HTTP ${res.status} from ${url})`);
    if (res.status === 404) {
      if (optional) return false;
      throw new SwapformerError('NOT_FOUND', `no file ${path} in ${label} (HTTP 404 from ${url})`);
    }
    const extra = hubMessage ? `: ${hubMessage}` : code === 'GatedRepo' ? ': the repository is gated' : '';
    throw new SwapformerError('NETWORK', `${path}: HTTP ${res.status} from ${url}${extra}`);
  };

  const request = async (url, path, init) => {
    try {
      return await opts.fetchFn(url, init);
    } catch (e) {
      throw new SwapformerError('NETWORK', `${path}: fetching ${url} failed: ${e?.message ?? e}`);
    }
  };

  const readRaw = async (path, optional) => {
    const url = urlOf(path);
    const cache = await openCache();
    const cached = cache ? await cache.match(url).catch(() => undefined) : undefined;
    if (cached) {
      const bytes = new Uint8Array(await cached.arrayBuffer());
      opts.onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
      return bytes;
    }
    const res = await request(url, path);
    if (!checkStatus(res, path, url, optional)) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    const bytes = await readBody(res, path, url, opts.onProgress);
    if (cache) {
      // a fresh Response: the original is consumed (and may be a redirect);
      // quota errors only mean the next load downloads again
      const headers = { 'Content-Type': res.headers.get('content-type') ?? 'application/octet-stream', 'Content-Length': String(bytes.length) };
      await cache.put(url, new Response(bytes, { headers })).catch(() => {});
    }
    return bytes;
  };

  const hasRaw = async (path) => {
    const url = urlOf(path);
    const cache = await openCache();
    if (cache && await cache.match(url).catch(() => undefined)) return true;
    const res = await request(url, path, { method: 'HEAD' });
    await res.body?.cancel().catch(() => {});
    return checkStatus(res, path, url, true);
  };

  return makeSource(kind, label, readRaw, hasRaw);
}

/** Reads a response body as it arrives, reporting progress; one final event with loaded === total. */
async function readBody(res, path, url, onProgress) {
  const declared = Number(res.headers.get('content-length'));
  let total = res.headers.get('content-length') !== null && Number.isSafeInteger(declared) && declared >= 0 ? declared : null;
  if (!res.body) {
    const bytes = new Uint8Array(await res.arrayBuffer().catch((e) => { throw new SwapformerError('NETWORK', `${path}: reading ${url} failed: ${e.message}`); }));
    onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
    return bytes;
  }
  const reader = res.body.getReader();
  // preallocate when the size is known; a compressed answer may bring more bytes than declared
  let buffer = total !== null ? new Uint8Array(total) : null;
  const chunks = [];
  let loaded = 0;
  let last = null;
  try {
    for (;;) {
      let step;
      try {
        step = await reader.read();
      } catch (e) {
        throw new SwapformerError('NETWORK', `${path}: the download from ${url} failed after ${loaded} bytes: ${e?.message ?? e}`);
      }
      if (step.done) break;
      const chunk = step.value;
      if (buffer && loaded + chunk.length <= buffer.length) buffer.set(chunk, loaded);
      else {
        if (buffer) chunks.push(buffer.subarray(0, loaded)), buffer = null, total = null;
        chunks.push(chunk);
      }
      loaded += chunk.length;
      if (onProgress && chunk.length) {
        last = { file: path, loaded, total };
        onProgress(last);
      }
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  }
  let bytes;
  if (buffer) bytes = loaded === buffer.length ? buffer : buffer.slice(0, loaded);
  else {
    bytes = new Uint8Array(loaded);
    let at = 0;
    for (const c of chunks) bytes.set(c, at), at += c.length;
  }
  if (onProgress && !(last && last.loaded === loaded && last.total === loaded))
    onProgress({ file: path, loaded, total: loaded });
  return bytes;
}
