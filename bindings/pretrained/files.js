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
// Downloads stream their body and report progress. In browsers and Workers, a
// Hub repository's file list (the Hub's API) is read once, at the commit the
// load reads, when an optional file is not in a cache, so that a file the
// repository lacks is not asked for: a browser logs every 404 as a console error. In browsers each downloaded
// file is kept in the Cache API (cache 'swapformer-models-v1', keyed by the
// resolved URL) and later reads are served from it. In Node a Hub download goes to
// the Hugging Face hub cache on disk (hub-cache.js: huggingface_hub's layout, shared
// with Python), and later loads of the same id and revision read it from there.
// A Hub id is read at one commit: the revision is resolved once (a commit given,
// the cache's ref, or the first answer's X-Repo-Commit) and every other file is
// asked for at that commit, so that a branch moving mid-load, or a cache holding
// part of an older commit, never mixes two commits' files.
//
// Everything read is untrusted, so every kind of source caps what it reads
// (limitOf: 64 MB for tokenizer.json, 16 MB for other JSON, 2 GB for the rest,
// counted as the bytes arrive, never taken from a header), and JSON nests at
// most MAX_JSON_DEPTH deep. A directory gives regular files only (no FIFO,
// device, socket), and a symlink must resolve inside the folder (or, in a
// Hugging Face hub cache snapshot, inside its models--owner--name folder). A
// download stops when the signal option aborts, when the read's own signal
// does (readWeights cancels the other shards after a failure), or when nothing
// arrives for stallTimeout ms.
//
// No `node:` import, static or literal dynamic: the directory branch gets
// node:fs/promises through platform.js's nodeBuiltin only when it runs, so this
// module loads unchanged in browsers and bundlers have nothing to resolve.
import { SwapformerError } from '../utils/errors.js';
import { isNode, nodeBuiltin } from '../utils/platform.js';
import { nestedTooDeep } from '../utils/json.js';
import { hubEnvironment, openRepoCache, blobName, networkError } from './hub-cache.js';

/** The Cache API cache that holds downloaded model files (browsers only). */
export const CACHE_NAME = 'swapformer-models-v1';

const HUB_ID_RE = /^[\w.-]+\/[\w.-]+$/;
const COMMIT_RE = /^[0-9a-f]{40}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const MB = 2 ** 20;

/** The most bytes read for a file: tokenizer.json 64 MB, other JSON 16 MB, anything else (weights) 2 GB. */
export function limitOf(path) {
  if (!path.endsWith('.json')) return 2048 * MB;
  return path.split('/').at(-1) === 'tokenizer.json' ? 64 * MB : 16 * MB;
}

const tooBig = (path, label, bytes, limit) =>
  new SwapformerError('BAD_FILE', `${path} (in ${label}) is ${bytes} bytes or more, past the ${limit} bytes swapformer reads for such a file`);

/** The deepest nesting of objects and arrays a JSON file may have (deeper data overflow recursive code). */
export const MAX_JSON_DEPTH = 64;

/** Throws BAD_FILE when valid JSON text nests deeper than MAX_JSON_DEPTH: a scan of its brackets outside strings. */
export function checkJSONDepth(text, name) {
  const tokens = /[[\]{}"]/g;
  let depth = 0;
  for (let m; (m = tokens.exec(text));) {
    const c = m[0];
    if (c === '"') {
      // skip to the closing quote: one not preceded by an odd run of backslashes
      let end = m.index;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return;
        let slashes = 0;
        while (text[end - 1 - slashes] === '\\') slashes++;
        if (slashes % 2 === 0) break;
      }
      tokens.lastIndex = end + 1;
    } else if (c === ']' || c === '}') depth--;
    else if (++depth > MAX_JSON_DEPTH) throw new SwapformerError('BAD_FILE', `${name} nests objects or arrays more than ${MAX_JSON_DEPTH} deep`);
  }
}

/** JSON.parse with the depth limit (the message names where the data goes too deep); BAD_FILE naming `name` for text that is not JSON. */
export function parseJSON(text, name) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SwapformerError('BAD_FILE', `${name} is not valid JSON: ${e.message}`);
  }
  try {
    checkJSONDepth(text, name);
  } catch (e) {
    const at = nestedTooDeep(value, MAX_JSON_DEPTH);
    throw at ? new SwapformerError('BAD_FILE', `${e.message} (at ${at})`) : e;
  }
  return value;
}

/** Whether v is an AbortSignal (or acts as one). */
const isSignal = (v) =>
  (typeof AbortSignal === 'function' && v instanceof AbortSignal) ||
  (v !== null && typeof v === 'object' && typeof v.aborted === 'boolean' && typeof v.addEventListener === 'function');

/** The error of a read stopped by an AbortSignal: NETWORK, the signal's reason as `cause`. */
function abortError(path, reason) {
  const e = new SwapformerError('NETWORK', `${path}: aborted (the signal option${reason instanceof Error ? `: ${reason.message}` : ''})`);
  e.cause = reason;
  return e;
}

/** Throws when a signal (an AbortSignal, or null) has aborted; `what` names the file. */
export function checkSignal(signal, what) {
  if (signal?.aborted) throw signal.reason instanceof SwapformerError ? signal.reason : abortError(what, signal.reason);
}

/**
 * Refuses a file path that is not a plain relative '/'-separated path inside
 * the source. `from` names the file the path came from (for the message).
 * Returns the path's segments.
 */
export function checkPath(path, from) {
  const where = from ? `${from} names the file '${path}'` : `file path '${path}'`;
  const refuse = (why) => {
    throw new SwapformerError('BAD_FILE', `${where}: ${why}; only relative paths inside the model folder are read`);
  };
  if (typeof path !== 'string' || path === '') refuse('not a non-empty string');
  if (path.includes('\0')) refuse('it contains NUL');
  if (path.includes('\\')) refuse('it contains a backslash');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) refuse('it is absolute');
  const segments = path.split('/');
  if (segments.some((s) => s === '')) refuse('it has an empty segment');
  if (segments.some((s) => s === '.' || s === '..')) refuse("it has a '.' or '..' segment");
  return segments;
}

/**
 * A source object from a kind, a label and a raw reader (path, optional,
 * {limit, signal}) -> bytes | null. read's `signal` (an AbortSignal) stops
 * that one read, as the source's signal option stops them all.
 * whyMissing(path): for a file an optional read found absent only because it
 * is not in a cache while downloads are off, the message saying so; else null.
 */
function makeSource(kind, label, readRaw, hasRaw, opts, whyMissing = () => null, openRaw = null) {
  const read = async (path, { optional = false, from, signal = null } = {}) => {
    checkPath(path, from);
    checkSignal(opts.signal, path);
    checkSignal(signal, path);
    return readRaw(path, optional, { limit: limitOf(path), signal });
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
    return text === null ? null : parseJSON(text, `${path} (in ${label})`);
  };
  /** Whether a file exists, without downloading it (a HEAD request for URLs). */
  const has = async (path, { from, signal = null } = {}) => {
    checkPath(path, from);
    checkSignal(opts.signal, path);
    return hasRaw(path, { signal });
  };
  /** A folder on disk: the file opened for reads at offsets (openedFile), null when optional and absent. */
  const open = async (path, { optional = false, from, signal = null } = {}) => {
    checkPath(path, from);
    checkSignal(opts.signal, path);
    checkSignal(signal, path);
    return openRaw(path, optional, { limit: limitOf(path), signal });
  };
  return { kind, label, read, readText, readJSON, has, whyMissing, ...(openRaw ? { open } : {}) };
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
    whyMissing: (path) => source.whyMissing(inside(path)),
    ...(source.open ? { open: async (path, opts) => source.open(inside(path, opts), opts) } : {}),
  };
}

// ---------------------------------------------------------------------------
// Options and the kind of source

function checkOptions({
  hubUrl = 'https://huggingface.co',
  revision = 'main',
  fetch = globalThis.fetch,
  cache = true,
  onProgress,
  signal = null,
  stallTimeout = 60000,
  token,
  offline = false,
  offlineFrom = 'option',
  cacheDir = null,
} = {}) {
  const bad = (name, why) => {
    throw new SwapformerError('BAD_ARGUMENT', `option ${name}: ${why}`);
  };
  let hub;
  try {
    hub = new URL(String(hubUrl));
  } catch {
    bad('hubUrl', `'${hubUrl}' is not a URL`);
  }
  if (hub.protocol !== 'http:' && hub.protocol !== 'https:') bad('hubUrl', `'${hubUrl}' is not an http(s) URL`);
  checkRevision(revision);
  if (fetch !== undefined && typeof fetch !== 'function') bad('fetch', 'must be a function like globalThis.fetch');
  if (typeof cache !== 'boolean') bad('cache', 'must be true or false');
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') bad('onProgress', 'must be a function');
  if (signal !== null && !isSignal(signal)) bad('signal', 'must be an AbortSignal');
  if (typeof stallTimeout !== 'number' || !(stallTimeout > 0)) bad('stallTimeout', 'must be a positive number of milliseconds (Infinity: no limit)');
  if (token !== undefined && (typeof token !== 'string' || token === '' || /[\r\n]/.test(token)))
    bad('token', 'must be a Hugging Face access token (a non-empty string)');
  if (typeof offline !== 'boolean') bad('offline', 'must be true or false');
  if (cacheDir !== null && (typeof cacheDir !== 'string' || cacheDir === '')) bad('cacheDir', 'must be a folder path');
  // a plain call (no `this`): window.fetch called as a method of another object throws "Illegal invocation"
  const fetchFn = fetch === globalThis.fetch && fetch ? (url, init) => globalThis.fetch(url, init) : fetch;
  return {
    hubUrl: hub.href.replace(/\/+$/, ''),
    revision,
    fetchFn,
    cache,
    onProgress: onProgress || null,
    signal,
    stallTimeout,
    token,
    offline,
    offlineFrom,
    cacheDir,
  };
}

/**
 * A revision: a branch, tag or commit name as git allows them (check-ref-format:
 * no '..', no empty or dot-first part, no backslash or control character). It
 * names a file under refs/ in the hub cache: '../' would write outside it.
 */
function checkRevision(revision, what = 'option revision') {
  if (typeof revision !== 'string' || revision === '')
    throw new SwapformerError('BAD_ARGUMENT', `${what}: must be a non-empty string (a branch, tag or commit)`);
  // eslint-disable-next-line no-control-regex -- git refuses control characters in a ref name
  if (revision.includes('..') || revision.includes('\\') || /[\0-\x1f\x7f]/.test(revision) || revision.split('/').some((p) => p === '' || p.startsWith('.'))) {
    throw new SwapformerError(
      'BAD_ARGUMENT',
      `${what}: ${JSON.stringify(revision)} is not a branch, tag or commit name (git refuses '..', empty or dot-first parts, backslashes)`,
    );
  }
}

const looksLikePath = (s) => /^(\.{1,2}([/\\]|$)|[/\\~]|[A-Za-z]:)/.test(s) || s.includes('\\');

/** Whether a Hub id is valid the way the Hub checks it (owner/name, no '..' or '--'). */
export function isHubId(s) {
  return typeof s === 'string' && HUB_ID_RE.test(s) && !s.includes('..') && !s.includes('--') && s.split('/').every((p) => p.length <= 96);
}

/**
 * Opens a model source. See the module header; the options:
 *  - hubUrl ('https://huggingface.co'), revision ('main'): for Hub ids;
 *  - fetch (globalThis.fetch): the function used for every download;
 *  - cache (true): keep downloads in the browser's Cache API;
 *  - onProgress({file, loaded, total}): called as a file's bytes arrive, and
 *    once at the end with loaded === total (total null while unknown). Files
 *    read from disk, from a file map or from the cache report once, whole.
 *  - signal (an AbortSignal): aborting it stops every read and download (NETWORK);
 *  - stallTimeout (60000): a download that receives nothing for this many ms
 *    fails (NETWORK naming the file); Infinity waits for ever.
 * Resolves to {kind, label, read, readText, readJSON, has}.
 */
export async function openSource(source, options = {}) {
  const given = options ?? {};
  const own = (k) => (Object.hasOwn(given, k) ? given[k] : undefined);
  const environment = await hubEnvironment({
    hubUrl: own('hubUrl'),
    token: own('token'),
    offline: own('offline'),
    cacheDir: own('cacheDir'),
    cache: own('cache'),
  });
  const opts = checkOptions({ ...given, ...environment });
  if (source instanceof URL) {
    if (source.protocol === 'file:' && isNode) {
      const { fileURLToPath } = await nodeBuiltin('node:url');
      return openDirectory(fileURLToPath(source), opts);
    }
    return openUrl(source.href, opts);
  }
  if (typeof source === 'string') {
    if (/^https?:\/\//i.test(source)) {
      const page = hubPage(source, opts.hubUrl); // https://huggingface.co/owner/name[/tree/revision]: the repository
      if (page?.revision) checkRevision(page.revision, `${source}: the revision`);
      return page ? openHub(page.id, page.revision ? { ...opts, revision: page.revision } : opts) : openUrl(source, opts);
    }
    if (source === '') throw new SwapformerError('BAD_ARGUMENT', 'source is an empty string');
    if (isNode) {
      const { stat } = await nodeBuiltin('node:fs/promises');
      const info = await stat(source).catch(() => null);
      if (info) return openDirectory(source, opts, info);
      if (looksLikePath(source) || !isHubId(source))
        throw new SwapformerError(
          looksLikePath(source) ? 'NOT_FOUND' : 'BAD_ARGUMENT',
          looksLikePath(source)
            ? `source: no directory '${source}'`
            : `source '${source}' is neither an existing directory, a URL nor a Hugging Face id 'owner/name'`,
        );
      return openHub(source, opts);
    }
    if (isHubId(source) && !looksLikePath(source)) return openHub(source, opts);
    throw new SwapformerError(
      'BAD_ARGUMENT',
      looksLikePath(source)
        ? `source '${source}': a directory path works only in Node; in a browser pass a URL, a Hugging Face id or a map of files`
        : `source '${source}' is neither a URL nor a Hugging Face id 'owner/name'`,
    );
  }
  if (Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList)) return openFiles(filesFromList(source), opts);
  if (source instanceof Map || (source && typeof source === 'object' && !ArrayBuffer.isView(source))) return openFiles(source, opts);
  throw new SwapformerError(
    'BAD_ARGUMENT',
    'source must be a directory path, a URL, a Hugging Face id (owner/name), a map of file names to contents or a list of File objects',
  );
}

/**
 * The bytes of one file named by a path (Node) or URL, such as a swapformer
 * model file, read through its folder's source (the same limits and options).
 * A local path is resolved first: a symlink the caller names is followed.
 */
export async function readFile(source, options = {}) {
  const s = source instanceof URL ? source.href : String(source);
  if (isNode && !/^https?:\/\//i.test(s)) {
    const path = await nodeBuiltin('node:path');
    const { realpath } = await nodeBuiltin('node:fs/promises');
    const local = s.startsWith('file:') ? (await nodeBuiltin('node:url')).fileURLToPath(s) : s;
    const real = await realpath(local).catch(() => path.resolve(local));
    return (await openSource(path.dirname(real), options)).read(path.basename(real));
  }
  const slash = s.lastIndexOf('/');
  return (await openSource(slash > 0 ? s.slice(0, slash + 1) : './', options)).read(s.slice(slash + 1));
}

// ---------------------------------------------------------------------------
// A directory (Node)

/**
 * The folder symlinks must stay in: the directory's real path, or, for a
 * snapshot of a Hugging Face hub cache (models--owner--name/snapshots/<commit>,
 * whose files are symlinks to ../../blobs/<hash>), the models--owner--name folder.
 */
function containmentRoot(real, path) {
  const snapshots = path.dirname(real),
    repo = path.dirname(snapshots);
  return path.basename(snapshots) === 'snapshots' && /^models--.+--.+$/.test(path.basename(repo)) ? repo : real;
}

/** The kind of a file that is not a regular one, for messages. */
const specialKind = (info) =>
  info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : 'not a regular file';

/** Reads an open file to its end, at most `limit` bytes (a file may grow after its stat); `check` runs between reads. */
async function readHandle(fh, size, limit, check, tooLarge) {
  let buf = new Uint8Array(Math.min(size, limit) + 1); // one byte more: growth past the size is seen
  let at = 0;
  for (;;) {
    if (at === buf.length) {
      if (at > limit) throw tooLarge(at);
      const bigger = new Uint8Array(Math.min(2 * buf.length, limit + 1));
      bigger.set(buf);
      buf = bigger;
    }
    check();
    const { bytesRead } = await fh.read(buf, at, Math.min(buf.length - at, 16 * MB), null);
    if (bytesRead === 0) return buf.subarray(0, at);
    at += bytesRead;
  }
}

async function openDirectory(dir, opts, info) {
  const fs = await nodeBuiltin('node:fs/promises');
  const path = await nodeBuiltin('node:path');
  info ??= await fs.stat(dir).catch(() => null);
  if (!info) throw new SwapformerError('NOT_FOUND', `source: no directory '${dir}'`);
  if (!info.isDirectory()) throw new SwapformerError('NOT_FOUND', `source '${dir}' is a file, not a model directory`);
  const base = dir.replace(/[/\\]+$/, '') || dir;
  const full = (p) => `${base}/${p}`;
  const root = containmentRoot(await fs.realpath(dir), path);
  const inside = (real) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  const missing = (e) => e && (e.code === 'ENOENT' || e.code === 'ENOTDIR' || e.code === 'EISDIR');
  const notFound = (p, e) =>
    new SwapformerError('NOT_FOUND', missing(e) ? `no file ${p} in the directory ${dir}` : `cannot read ${p} in the directory ${dir}: ${e.message}`);
  const refuse = (p, why) =>
    new SwapformerError('BAD_FILE', `${p} in the directory ${dir} ${why}; swapformer reads only regular files inside the model folder`);
  const { constants } = await nodeBuiltin('node:fs');
  const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0); // opening a FIFO must not wait for a writer

  /** The real path of a file of the folder, checked: inside, a regular file; null when absent (or a folder). */
  const resolve = async (p) => {
    let real, st;
    try {
      real = await fs.realpath(full(p));
      st = await fs.stat(real);
    } catch (e) {
      if (missing(e)) return null;
      throw notFound(p, e);
    }
    // symlinks are followed inside the folder (the hub cache's snapshots link into blobs/), never out of it
    if (!inside(real)) throw refuse(p, `is a symlink to ${real}, outside ${root}`);
    if (st.isDirectory()) return null;
    if (!st.isFile()) throw refuse(p, `is ${specialKind(st)}`);
    return real;
  };

  const readRaw = async (p, optional, { limit, signal }) => {
    const real = await resolve(p);
    if (real === null) {
      if (optional) return null;
      throw notFound(p, { code: 'ENOENT' });
    }
    let fh;
    try {
      fh = await fs.open(real, READ_FLAGS);
    } catch (e) {
      throw notFound(p, e);
    }
    let bytes;
    try {
      const st = await fh.stat(); // the file opened, which a rename may have swapped since the check
      if (!st.isFile()) throw refuse(p, `is ${specialKind(st)}`);
      const tooLarge = (n) => tooBig(p, dir, n, limit);
      if (st.size > limit) throw tooLarge(st.size);
      bytes = await readHandle(
        fh,
        st.size,
        limit,
        () => {
          checkSignal(opts.signal, p);
          checkSignal(signal, p);
        },
        tooLarge,
      );
    } finally {
      await fh.close().catch(() => {});
    }
    opts.onProgress?.({ file: p, loaded: bytes.length, total: bytes.length });
    return bytes;
  };
  const hasRaw = async (p) => (await resolve(p).catch(() => null)) !== null;
  /** A file opened for reads at offsets (the weights: read as they are loaded, never whole). */
  const openRaw = async (p, optional, { limit, signal }) => {
    const real = await resolve(p);
    if (real === null) {
      if (optional) return null;
      throw notFound(p, { code: 'ENOENT' });
    }
    const fsSync = await nodeBuiltin('node:fs');
    let fd, st;
    try {
      fd = fsSync.openSync(real, READ_FLAGS);
    } catch (e) {
      throw notFound(p, e);
    }
    try {
      st = fsSync.fstatSync(fd); // the file opened, which a rename may have swapped since the check
      if (!st.isFile()) throw refuse(p, `is ${specialKind(st)}`);
      if (st.size > limit) throw tooBig(p, dir, st.size, limit);
      opts.onProgress?.({ file: p, loaded: st.size, total: st.size }); // a callback that throws: closed all the same
    } catch (e) {
      fsSync.closeSync(fd);
      throw e;
    }
    return openedFile(fsSync, fd, st.size, `${p} in the directory ${dir}`, () => {
      checkSignal(opts.signal, p);
      checkSignal(signal, p);
    });
  };
  return makeSource('directory', dir, readRaw, hasRaw, opts, undefined, openRaw);
}

// The buffer every open file's readShared reads into (the loader takes each chunk before it asks for the next).
let shared = null;

/**
 * An open file of `size` bytes read at offsets, synchronously: read(at, n) a
 * new array, readShared(at, n) a view of a buffer the next readShared of any
 * file reuses (its bytes are to be taken at once); close() once done. A file
 * that ends early (it changed after it was opened) is BAD_FILE; `check` runs
 * before every read (the abort signals).
 */
function openedFile(fs, fd, size, label, check) {
  let closed = false;
  const readInto = (at, n, into) => {
    if (closed) throw new SwapformerError('BAD_ARGUMENT', `${label}: read after the model was loaded (the file is closed)`);
    check();
    for (let done = 0; done < n;) {
      const got = fs.readSync(fd, into, done, n - done, at + done);
      if (got === 0) throw new SwapformerError('BAD_FILE', `${label} changed while it was read: it ends before byte ${at + n} of its ${size}`);
      done += got;
    }
    return into.subarray(0, n);
  };
  return {
    size,
    read: (at, n) => readInto(at, n, new Uint8Array(n)),
    readShared: (at, n) => {
      if (!shared || shared.length < n) shared = new Uint8Array(Math.max(n, 2 << 20));
      return readInto(at, n, shared);
    },
    close: () => {
      if (closed) return;
      closed = true;
      fs.closeSync(fd);
    },
  };
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
  const dropped = !entries.some(([n]) => n === 'config.json') && entries.every(([n]) => n.includes('/') && n.split('/')[0] === first);
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
    if (!isBlob(file) || typeof file.name !== 'string') throw new SwapformerError('BAD_ARGUMENT', 'source: a list of files must hold File objects');
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
  const readRaw = async (path, optional, { limit }) => {
    if (!files.has(path)) {
      if (optional) return null;
      throw new SwapformerError('NOT_FOUND', `no file ${path} among ${label}: ${[...files.keys()].slice(0, 20).join(', ')}`);
    }
    const value = files.get(path);
    if (isBlob(value) && value.size > limit) throw tooBig(path, label, value.size, limit); // before reading it
    const bytes = await toBytes(path, value);
    if (bytes.length > limit) throw tooBig(path, label, bytes.length, limit);
    opts.onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
    return bytes;
  };
  return makeSource('files', label, readRaw, async (path) => files.has(path), opts);
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

/** A model page's URL (the hub's origin, /owner/name or /owner/name/tree/revision) as {id, revision}, or null. */
function hubPage(href, hubUrl) {
  let url;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if (url.origin !== new URL(hubUrl).origin) return null;
  const m = /^\/([\w.-]+\/[\w.-]+)(?:\/tree\/([^/]+))?\/?$/.exec(url.pathname);
  if (!m || !isHubId(m[1])) return null;
  let revision = null;
  try {
    if (m[2]) revision = decodeURIComponent(m[2]);
  } catch {
    throw new SwapformerError('BAD_ARGUMENT', `${href}: the revision after /tree/ is not valid percent-encoding`);
  }
  return { id: m[1], revision };
}

async function openHub(id, opts) {
  const base = `${opts.hubUrl}/${id}/resolve/`;
  const label = opts.revision === 'main' ? id : `${id}@${opts.revision}`;
  // Node: the hub cache on disk, shared with huggingface_hub (hub-cache.js)
  const disk = isNode && opts.cache && opts.cacheDir ? await openRepoCache(opts.cacheDir, id, opts.revision) : null;
  // a file at the commit the load resolved (once known), else at the revision asked for
  const urlOf = (path, commit) => `${base}${encodeURIComponent(commit ?? opts.revision)}/${encodePath(path)}`;
  // elsewhere (a browser): the Hub's list of the files at that commit (or revision), so that an
  // optional file the repository lacks is not asked for (a browser logs every 404 as a console error)
  const listUrlOf = isNode ? null : (at) => `${opts.hubUrl}/api/models/${id}/revision/${encodeURIComponent(at)}`;
  return makeDownloader('hub', label, urlOf, opts, disk, listUrlOf);
}

/** The most bytes of a Hub file list read (a repository of many thousand files). */
const LIST_LIMIT = 16 * MB;

/**
 * Whether a fetch failure in this context may be the browser hiding an answer without CORS
 * headers: a page or worker (not Node, Deno, Bun) fetching another origin, and fetch's TypeError.
 */
function mayBeCors(url, e) {
  if (isNode || !(e instanceof TypeError)) return false;
  const here = globalThis.location?.origin;
  try {
    return typeof here === 'string' && new URL(url).origin !== here;
  } catch {
    return false;
  }
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

function makeDownloader(kind, label, urlOf, opts, disk = null, listUrlOf = null) {
  const openCache = cacheOpener(opts);
  const hub = kind === 'hub';
  const auth = hub && opts.token ? { authorization: `Bearer ${opts.token}` } : {};

  // One load reads one commit of a Hub repository. The revision is resolved
  // once: a commit given as the revision, else the hub cache's refs/<revision>,
  // else the X-Repo-Commit of the first answer (the requests wait for it);
  // every later file is asked for at that commit (/resolve/<commit>/...), and
  // an answer naming another commit is refused. A server that never names its
  // commit (a plain mirror) gets every file at the revision.
  let commit = hub && COMMIT_RE.test(opts.revision) ? opts.revision : null;
  let unnamed = !hub; // a 200 came without X-Repo-Commit: nothing to resolve to
  let firstOut = null; // the first request at the revision, until its answer's headers
  let refRead = null;

  /** Resolves the revision from the hub cache's ref (once), then waits for the first answer or takes its place; the turn's end, or null. */
  const resolveTurn = async () => {
    if (!commit && disk) {
      refRead ??= disk.commitOf();
      const ref = await refRead;
      if (ref && !commit) commit = ref;
    }
    for (;;) {
      if (commit || unnamed) return null;
      if (!firstOut) {
        let done;
        const mine = (firstOut = new Promise((go) => (done = go)));
        return () => {
          if (firstOut === mine) firstOut = null;
          done();
        };
      }
      await firstOut;
    }
  };

  /** What an answer says of its commit: learnt when none is known yet, refused when it is another. */
  const learn = (named, ok, path, url) => {
    if (!hub) return;
    if (!COMMIT_RE.test(named ?? '')) {
      if (ok && !commit) unnamed = true;
      return;
    }
    if (commit === null) commit = named;
    else if (named !== commit)
      throw new SwapformerError(
        'NETWORK',
        `${path}: ${url} answered for commit ${named} (X-Repo-Commit), but this load reads ${label} at commit ${commit}: one load reads one commit`,
      );
  };

  /**
   * The repository's paths from the Hub's file list (GET {hubUrl}/api/models/{id}/revision/{at}:
   * its siblings' rfilename, and its sha), asked for once, when an optional file is not in a
   * cache: at the commit this load reads once that is known; before, at the revision, and then
   * the commit the list names (its sha) is the one the load reads, as an answer's X-Repo-Commit
   * would be. Kept in the Cache API with the files (a load served from the cache makes no
   * request). Null when the list cannot be had (a mirror without the API, an error, a body that
   * is not the list) or is of another commit: then optional files are asked for and a 404 says
   * they are absent, as before.
   */
  const lists = new Map(); // by the revision or commit asked at: a promise of {names, sha} or null
  const namesOf = (bytes) => {
    const info = parseJSON(utf8.decode(bytes), 'the file list');
    if (!Array.isArray(info?.siblings)) return null;
    const names = info.siblings.map((e) => (e && typeof e === 'object' && Object.hasOwn(e, 'rfilename') ? e.rfilename : null));
    if (!names.every((n) => typeof n === 'string')) return null;
    return { names: new Set(names), sha: typeof info.sha === 'string' && COMMIT_RE.test(info.sha) ? info.sha : null };
  };
  const readList = async (listUrl) => {
    const cache = await openCache();
    const cached = cache ? await cache.match(listUrl).catch(() => undefined) : undefined;
    if (cached) {
      const bytes = new Uint8Array(await cached.arrayBuffer());
      return bytes.length <= LIST_LIMIT ? namesOf(bytes) : null;
    }
    const guard = downloadGuard('the file list', listUrl, [opts.signal], opts.stallTimeout);
    try {
      const res = await guard.step((async () => opts.fetchFn(listUrl, { headers: auth, signal: guard.signal }))());
      if (!isResponse(res) || !res.ok) {
        res?.body?.cancel?.()?.catch(() => {});
        return null;
      }
      const bytes = await readBody(res, 'the file list', listUrl, { limit: LIST_LIMIT, guard, label });
      const list = namesOf(bytes);
      if (list && cache) await cache.put(listUrl, new Response(bytes, { headers: { 'Content-Type': 'application/json' } })).catch(() => {});
      return list;
    } catch {
      return null; // an abort reaches the file's own request next, which reports it
    } finally {
      guard.close();
    }
  };
  const listed = async () => {
    if (!listUrlOf) return null;
    const at = commit ?? opts.revision;
    const reading = lists.get(at) ?? readList(listUrlOf(at)).catch(() => null);
    lists.set(at, reading);
    const list = await reading;
    if (!list) return null;
    if (list.sha && list.sha !== at) {
      // read at the revision: the commit it names is the one this load reads (unless the server names none)
      if (commit === null && !unnamed) commit = list.sha;
      if (!lists.has(list.sha)) lists.set(list.sha, reading);
    }
    return commit && list.sha && list.sha !== commit ? null : list.names;
  };
  /** True when the Hub's file list says the repository has no such file. */
  const listedAbsent = async (path) => {
    const names = await listed();
    return names !== null && !names.has(path);
  };

  /** Throws for an unusable answer; returns false for an absent optional file. */
  const checkStatus = (res, path, url, optional, asked) => {
    if (res.ok) return true;
    const code = res.headers.get('x-error-code');
    const hubMessage = res.headers.get('x-error-message');
    if (res.status === 401 || code === 'RepoNotFound')
      throw new SwapformerError(
        'NOT_FOUND',
        `${path}: ${hub ? `repository ${label.split('@')[0]}` : label} not found or private (HTTP ${res.status} from ${url})`,
      );
    if (code === 'RevisionNotFound') {
      const what = asked && asked !== opts.revision ? `commit ${asked} (what '${opts.revision}' resolved to)` : `revision '${opts.revision}'`;
      throw new SwapformerError('NOT_FOUND', `${path}: ${what} not found in ${label.split('@')[0]} (HTTP ${res.status} from ${url})`);
    }
    if (res.status === 404) {
      if (optional) return false;
      throw new SwapformerError('NOT_FOUND', `no file ${path} in ${label} (HTTP 404 from ${url})`);
    }
    const extra = hubMessage ? `: ${hubMessage}` : code === 'GatedRepo' ? ': the repository is gated' : '';
    throw new SwapformerError('NETWORK', `${path}: HTTP ${res.status} from ${url}${extra}`);
  };

  /** One answer through the fetch option, under the guard (signals, stall timeout); checked to be a Response. */
  const request = async (guard, url, path, init = {}) => {
    let res;
    try {
      res = await guard.step((async () => opts.fetchFn(url, { ...init, signal: guard.signal }))());
    } catch (e) {
      if (e === guard.failure) throw e;
      const err = networkError(path, url, e);
      if (!mayBeCors(url, e)) throw err;
      // a browser gives no reason: an answer without CORS headers (a 404 too) reads as no answer at all
      const cors = new SwapformerError(
        'NETWORK',
        `${err.message}. A browser does not say why a request to another origin failed: if ${new URL(url).origin} is up, check that it sends CORS headers (Access-Control-Allow-Origin) on every answer, 404s and errors included (the loader asks for optional files a folder may lack)`,
      );
      cors.cause = err.cause;
      throw cors;
    }
    if (!isResponse(res)) throw new SwapformerError('NETWORK', `${path}: the fetch option resolved to ${describe(res)} for ${url}, not a Response`);
    return res;
  };

  /**
   * A hub request with the token. With the disk cache, redirects are followed
   * here (manual), so that the Hub's own headers are read from its first answer
   * (X-Repo-Commit, X-Linked-Etag or ETag: what huggingface_hub keys the cache
   * by) and the token never goes to another origin (the LFS CDN). Without it,
   * fetch follows them, and an answer that came through a redirect names no
   * commit (the CDN's headers are not the Hub's).
   */
  const fetchHub = async (guard, url, path, init = {}) => {
    if (!disk) {
      const res = await request(guard, url, path, { ...init, headers: auth });
      return { res, meta: { commit: res.redirected ? null : res.headers.get('x-repo-commit'), etag: null, redirected: res.redirected } };
    }
    let current = url,
      headers = auth,
      first = null;
    for (let hop = 0; hop <= 5; hop++) {
      const res = await request(guard, current, path, { ...init, headers: { ...headers, 'accept-encoding': 'identity' }, redirect: 'manual' });
      first ??= res;
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (location === null) {
        const etag = first.headers.get('x-linked-etag') ?? first.headers.get('etag');
        return { res, meta: { commit: first.headers.get('x-repo-commit'), etag: blobName(etag), redirected: false } };
      }
      res.body?.cancel().catch(() => {});
      const next = new URL(location, current);
      if (next.origin !== new URL(current).origin) headers = {};
      current = next.href;
    }
    throw new SwapformerError('NETWORK', `${path}: more than 5 redirects from ${url}`);
  };

  // Offline: a file not in a cache is absent (optional) or NOT_FOUND saying
  // why; with no snapshot of the revision at all, any file is NOT_FOUND (else
  // an empty cache reads as a repository without config.json). The optional
  // files taken as absent only because they are not cached are remembered:
  // whyMissing(path) says so, for the loader's messages.
  const uncached = new Set();
  const turnOn =
    opts.offlineFrom === 'option'
      ? 'the offline option; pass offline: false to download it'
      : `${opts.offlineFrom} is set in the environment; unset it, or pass offline: false, to download it`;
  const notCached = (snapshot) =>
    `is not in the ${disk ? `hub cache (${disk.repo}${!snapshot ? `: no snapshot of '${opts.revision}'` : commit ? ` at commit ${commit}` : ''})` : 'cache'}, and downloads are off (${turnOn})`;
  const offlineMiss = async (path, optional) => {
    const snapshot = !disk || (await disk.hasSnapshot(commit));
    if (optional && snapshot) {
      uncached.add(path);
      return null;
    }
    throw new SwapformerError('NOT_FOUND', `${path} of ${label} ${notCached(snapshot)}`);
  };
  const whyMissing = (path) => (uncached.has(path) ? `${path} ${notCached(true)}` : null);

  const readRaw = async (path, optional, { limit, signal }) => {
    const end = await resolveTurn();
    let bytes, res, url, asked;
    try {
      if (optional && !commit) await listed(); // a file list read at the revision names the commit
      if (disk && commit) {
        // a snapshot on disk: read as a folder is (regular files, symlinks inside the repository's folder, caps)
        const dir = await disk.snapshotWith(path, commit);
        if (dir) return (await openDirectory(dir, opts)).read(path, { optional, signal });
        if (await disk.knownAbsent(path, commit)) {
          if (optional) return null;
          throw new SwapformerError('NOT_FOUND', `no file ${path} in ${label} (the hub cache ${disk.repo} records it absent at commit ${commit})`);
        }
      }
      asked = commit ?? undefined;
      url = urlOf(path, asked);
      const cache = await openCache();
      const cached = cache ? await cache.match(url).catch(() => undefined) : undefined;
      if (cached) {
        learn(cached.headers.get('x-repo-commit'), false, path, url);
        bytes = new Uint8Array(await cached.arrayBuffer());
        if (bytes.length > limit) throw tooBig(path, label, bytes.length, limit);
        opts.onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
        return bytes;
      }
      if (opts.offline) return await offlineMiss(path, optional);
      if (optional && (await listedAbsent(path))) return null;
      const guard = downloadGuard(path, url, [opts.signal, signal], opts.stallTimeout);
      let meta;
      try {
        ({ res, meta } = await fetchHubOrUrl(guard, url, path));
        learn(meta?.commit, res.ok && !meta?.redirected, path, url);
        end?.(); // the commit is known (or the server names none): the other reads go on
        if (!checkStatus(res, path, url, optional, asked)) {
          res.body?.cancel().catch(() => {});
          if (disk && res.status === 404) await disk.storeAbsent(path, meta?.commit ?? res.headers.get('x-repo-commit') ?? asked);
          return null;
        }
        bytes = await readBody(res, path, url, { onProgress: opts.onProgress, limit, guard, label });
        // into the hub cache: written aside and renamed, so a killed download leaves nothing that loads;
        // a cache folder we cannot write only means the next load downloads again
        if (disk) await disk.store(path, meta?.commit ?? asked, meta?.etag, bytes).catch(() => {});
      } catch (e) {
        guard.stop(e); // an answer or a body still open is dropped
        throw e;
      } finally {
        guard.close();
      }
      if (cache) {
        // a fresh Response: the original is consumed (and may be a redirect); it keeps the commit,
        // so that a later load that finds it resolves to that commit; quota errors only mean the
        // next load downloads again
        const headers = { 'Content-Type': res.headers.get('content-type') ?? 'application/octet-stream', 'Content-Length': String(bytes.length) };
        if (commit) headers['X-Repo-Commit'] = commit;
        await cache.put(url, new Response(bytes, { headers })).catch(() => {});
      }
      return bytes;
    } finally {
      end?.();
    }
  };

  const fetchHubOrUrl = (guard, url, path, init) =>
    hub ? fetchHub(guard, url, path, init) : request(guard, url, path, init).then((res) => ({ res, meta: null }));

  const hasRaw = async (path, { signal }) => {
    const end = await resolveTurn();
    try {
      if (!commit) await listed(); // a file list read at the revision names the commit
      if (disk && commit) {
        if (await disk.snapshotWith(path, commit)) return true;
        if (await disk.knownAbsent(path, commit)) return false;
      }
      const asked = commit ?? undefined;
      const url = urlOf(path, asked);
      const cache = await openCache();
      if (cache && (await cache.match(url).catch(() => undefined))) return true;
      if (opts.offline) {
        await offlineMiss(path, true); // throws when nothing of the revision is cached
        return false;
      }
      if (await listedAbsent(path)) return false;
      const guard = downloadGuard(path, url, [opts.signal, signal], opts.stallTimeout);
      try {
        const { res, meta } = await fetchHubOrUrl(guard, url, path, { method: 'HEAD' });
        res.body?.cancel().catch(() => {});
        learn(meta?.commit, res.ok && !meta?.redirected, path, url);
        const found = checkStatus(res, path, url, true, asked);
        // known absent at that commit, as a download's 404: the next load asks nothing
        if (!found && disk) await disk.storeAbsent(path, meta?.commit ?? res.headers.get('x-repo-commit') ?? asked);
        return found;
      } finally {
        guard.close();
      }
    } finally {
      end?.();
    }
  };

  return makeSource(kind, label, readRaw, hasRaw, opts, whyMissing);
}

/** Whether a fetch option's answer can be read as a Response (status, headers, a body or arrayBuffer). */
function isResponse(res) {
  try {
    return (
      res !== null &&
      typeof res === 'object' &&
      typeof res.status === 'number' &&
      typeof res.ok === 'boolean' &&
      typeof res.headers?.get === 'function' &&
      (res.body ? typeof res.body.getReader === 'function' : typeof res.arrayBuffer === 'function')
    );
  } catch {
    return false;
  }
}
const describe = (v) =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? `an object (${Object.prototype.toString.call(v)})` : typeof v;

/**
 * What stops one download: the signals (the signal option, the read's own)
 * and the stall timeout, re-armed at every step (the answer, each chunk of the
 * body). step(promise) races a step against them; the fetch gets `signal`, so
 * aborting also ends the connection, and a fetch that ignores it is left behind.
 */
function downloadGuard(path, url, signals, stallTimeout) {
  const controller = new AbortController();
  let failure = null,
    timer = null;
  const stopped = new Promise((_, reject) => controller.signal.addEventListener('abort', () => reject(failure), { once: true }));
  stopped.catch(() => {});
  const stop = (e) => {
    if (failure) return;
    failure = e;
    clearTimeout(timer);
    controller.abort(e);
  };
  const unlink = [];
  for (const s of signals) {
    if (!s) continue;
    const onAbort = () => stop(s.reason instanceof SwapformerError ? s.reason : abortError(path, s.reason));
    if (s.aborted) onAbort();
    else {
      s.addEventListener('abort', onAbort, { once: true });
      unlink.push(() => s.removeEventListener('abort', onAbort));
    }
  }
  const stall = () => stop(new SwapformerError('NETWORK', `${path}: nothing arrived from ${url} for ${stallTimeout} ms (the stallTimeout option)`));
  return {
    signal: controller.signal,
    get failure() {
      return failure;
    },
    stop,
    async step(promise) {
      if (failure) {
        // the request may have started already (with the aborted signal): its rejection is ours to drop
        promise?.catch?.(() => {});
        throw failure;
      }
      clearTimeout(timer);
      if (stallTimeout < 2 ** 31) timer = setTimeout(stall, stallTimeout); // setTimeout takes 32-bit delays: longer is no limit
      try {
        return await Promise.race([promise, stopped]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      clearTimeout(timer);
      for (const u of unlink) u();
    },
  };
}

/**
 * Reads a response body as it arrives, reporting progress (one final event
 * with loaded === total), at most `limit` bytes: a declared length past it is
 * refused before reading, and the count is kept as bytes arrive (a compressed
 * answer brings more than its Content-Length). Preallocates the declared length.
 */
async function readBody(res, path, url, { onProgress, limit, guard, label }) {
  const header = res.headers.get('content-length');
  const declared = Number(header);
  let total = header !== null && Number.isSafeInteger(declared) && declared >= 0 ? declared : null;
  if (total !== null && total > limit) throw tooBig(path, label, total, limit);
  const failed = (e, loaded) =>
    e === guard.failure ? e : new SwapformerError('NETWORK', `${path}: the download from ${url} failed after ${loaded} bytes: ${e?.message ?? e}`);
  if (!res.body) {
    let buffer;
    try {
      buffer = await guard.step(res.arrayBuffer());
    } catch (e) {
      throw failed(e, 0);
    }
    const bytes = new Uint8Array(buffer);
    if (bytes.length > limit) throw tooBig(path, label, bytes.length, limit);
    onProgress?.({ file: path, loaded: bytes.length, total: bytes.length });
    return bytes;
  }
  const reader = res.body.getReader();
  let buffer = null;
  try {
    if (total !== null) buffer = new Uint8Array(total);
  } catch {
    // an engine that cannot reserve the declared size: gather the chunks instead
    total = null;
  }
  const chunks = [];
  let loaded = 0;
  let last = null;
  try {
    for (;;) {
      let step;
      try {
        step = await guard.step(reader.read());
      } catch (e) {
        throw failed(e, loaded);
      }
      if (step.done) break;
      const chunk = step.value;
      if (!(chunk instanceof Uint8Array)) throw new SwapformerError('NETWORK', `${path}: the body from ${url} gave a chunk that is not bytes`);
      if (loaded + chunk.length > limit) throw tooBig(path, label, loaded + chunk.length, limit);
      if (buffer && loaded + chunk.length <= buffer.length) buffer.set(chunk, loaded);
      else {
        if (buffer) (chunks.push(buffer.subarray(0, loaded)), (buffer = null), (total = null));
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
    for (const c of chunks) (bytes.set(c, at), (at += c.length));
  }
  if (onProgress && !(last && last.loaded === loaded && last.total === loaded)) onProgress({ file: path, loaded, total: loaded });
  return bytes;
}
