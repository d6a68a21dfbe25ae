// The Hugging Face hub cache on disk (Node), shared with Python's
// huggingface_hub: files one downloaded, the other reuses.
//
//   $HF_HUB_CACHE | $HUGGINGFACE_HUB_CACHE | $HF_HOME/hub | $XDG_CACHE_HOME/huggingface/hub | ~/.cache/huggingface/hub
//     models--{owner}--{name}/
//       blobs/{etag}                      the bytes (git sha1, or sha256 for LFS files)
//       snapshots/{commit}/{path}         relative symlinks ../../blobs/{etag} (deeper paths: more ../)
//       refs/{revision}                   the commit a branch or tag resolved to
//       .no_exist/{commit}/{path}         empty: the file is known absent at that commit
//
// (huggingface_hub constants.py, file_download.py _hf_hub_download_to_cache_dir,
// _create_symlink, repo_folder_name.) A file is looked up first: a revision
// that is a commit, or a branch whose ref is cached, finds its snapshot with no
// request at all; otherwise it is downloaded into blobs/{etag}.{random}.incomplete,
// renamed (a killed download leaves nothing that loads), and linked. The caller
// (files.js) resolves the revision to one commit per load and passes it to every
// lookup, so that a load never reads two commits.
//
// The environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, HF_HOME...) is read
// in Node only; in a browser the options alone apply (and the Cache API caches).
import { SwapformerError } from '../utils/errors.js';
import { isNode, nodeBuiltin } from '../utils/platform.js';

const COMMIT_RE = /^[0-9a-f]{40}$/;
const ETAG_RE = /^[A-Za-z0-9_-]{8,128}$/; // the Hub's: 40 or 64 hex digits; anything else is not cached

const env = (name) => (isNode && typeof process.env[name] === 'string' && process.env[name] !== '' ? process.env[name] : undefined);
const truthy = (v) => typeof v === 'string' && ['1', 'ON', 'YES', 'TRUE'].includes(v.toUpperCase());

/** HF_HOME's default chain (constants.py): $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
async function hfHome() {
  if (env('HF_HOME')) return env('HF_HOME');
  const path = await nodeBuiltin('node:path');
  const os = await nodeBuiltin('node:os');
  return path.join(env('XDG_CACHE_HOME') ?? path.join(os.homedir(), '.cache'), 'huggingface');
}

/**
 * What the environment adds to the hub options (Node): the endpoint
 * (HF_ENDPOINT), the token (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, the file
 * $HF_TOKEN_PATH or $HF_HOME/token; none with HF_HUB_DISABLE_IMPLICIT_TOKEN),
 * offline mode (HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE) and the cache folder.
 * Options given win.
 */
export async function hubEnvironment({ hubUrl, token, offline, cacheDir, cache }) {
  const out = { hubUrl: hubUrl ?? env('HF_ENDPOINT') ?? 'https://huggingface.co', token, offline: offline ?? false, offlineFrom: 'option', cacheDir: null };
  if (!isNode) return out;
  // the option wins over the environment both ways (offline: false downloads under HF_HUB_OFFLINE=1)
  if (offline === undefined) {
    const by = ['HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE'].find((name) => truthy(env(name)));
    out.offline = by !== undefined;
    if (by) out.offlineFrom = by;
  }
  // an implicit token (the environment's, the saved one) unless HF_HUB_DISABLE_IMPLICIT_TOKEN; cleaned as _clean_token
  if (token === undefined && !truthy(env('HF_HUB_DISABLE_IMPLICIT_TOKEN'))) {
    const clean = (t) => (typeof t === 'string' ? t.replace(/[\r\n]/g, '').trim() || undefined : undefined);
    out.token = clean(env('HF_TOKEN') ?? env('HUGGING_FACE_HUB_TOKEN'));
    if (out.token === undefined) {
      const fs = await nodeBuiltin('node:fs/promises');
      const path = await nodeBuiltin('node:path');
      out.token = clean(await fs.readFile(env('HF_TOKEN_PATH') ?? path.join(await hfHome(), 'token'), 'utf8').catch(() => null));
    }
  }
  if (cache !== false) {
    const path = await nodeBuiltin('node:path');
    out.cacheDir = cacheDir ?? env('HF_HUB_CACHE') ?? env('HUGGINGFACE_HUB_CACHE') ?? path.join(await hfHome(), 'hub');
  }
  return out;
}

/** An ETag header's value as the blob name: W/ and quotes stripped; null when it is not one the Hub sends. */
export function blobName(etag) {
  if (typeof etag !== 'string') return null;
  const e = etag.replace(/^W\//, '').replace(/^"|"$/g, '');
  return ETAG_RE.test(e) ? e : null;
}

/**
 * The cache folder of one repository: lookups and atomic stores. `id` is a
 * checked Hub id (owner/name), `revision` a branch, tag or commit.
 */
export async function openRepoCache(cacheDir, id, revision) {
  const fs = await nodeBuiltin('node:fs/promises');
  const path = await nodeBuiltin('node:path');
  const crypto = globalThis.crypto;
  const repo = path.join(cacheDir, `models--${id.replace('/', '--')}`);
  const rand = () => (crypto?.randomUUID ? crypto.randomUUID().slice(0, 8) : Math.random().toString(16).slice(2, 10));
  const revFile = path.join(repo, 'refs', ...revision.split('/'));
  let commit = COMMIT_RE.test(revision) ? revision : undefined;

  /** The commit the revision points at in the cache, or null. */
  const commitOf = async () => {
    if (commit !== undefined) return commit;
    const text = await fs.readFile(revFile, 'utf8').catch(() => null);
    commit = text !== null && COMMIT_RE.test(text.trim()) ? text.trim() : null;
    return commit;
  };

  /** Writes `data` to `file` atomically: a temporary file beside it, renamed over it. */
  const writeAtomic = async (file, data) => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${rand()}.incomplete`;
    try {
      await fs.writeFile(tmp, data);
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true }).catch(() => {});
      throw e;
    }
  };

  return {
    repo,
    commitOf,
    /** The snapshot folder of `commit` (null without one), whose `path` exists. */
    async snapshotWith(p, c) {
      if (!COMMIT_RE.test(c ?? '')) return null;
      const dir = path.join(repo, 'snapshots', c);
      const st = await fs.stat(path.join(dir, ...p.split('/'))).catch(() => null);
      return st?.isFile() ? dir : null;
    },
    /** Whether `commit` has a snapshot folder. */
    async hasSnapshot(c) {
      return COMMIT_RE.test(c ?? '') && !!(await fs.stat(path.join(repo, 'snapshots', c)).catch(() => null))?.isDirectory();
    },
    /** Whether `path` is known absent at `commit`. */
    async knownAbsent(p, c) {
      return COMMIT_RE.test(c ?? '') && (await fs.stat(path.join(repo, '.no_exist', c, ...p.split('/'))).catch(() => null)) !== null;
    },
    /** Stores a downloaded file: blobs/{etag}, snapshots/{commit}/{path} linked to it, refs/{revision}. */
    async store(p, fileCommit, etag, bytes) {
      if (!COMMIT_RE.test(fileCommit ?? '') || !etag) return false; // without the Hub's headers: not cached
      const blob = path.join(repo, 'blobs', etag);
      if (!(await fs.stat(blob).catch(() => null))?.isFile()) await writeAtomic(blob, bytes);
      const link = path.join(repo, 'snapshots', fileCommit, ...p.split('/'));
      await fs.mkdir(path.dirname(link), { recursive: true });
      const target = path.relative(path.dirname(link), blob);
      const tmp = `${link}.${rand()}.incomplete`;
      try {
        await fs.symlink(target, tmp);
      } catch {
        // no symlinks (Windows without the privilege): a copy, as huggingface_hub falls back to
        await fs.writeFile(tmp, bytes);
      }
      await fs.rename(tmp, link);
      if (!COMMIT_RE.test(revision) && (await commitOf()) !== fileCommit) {
        await writeAtomic(revFile, fileCommit);
        commit = fileCommit;
      }
      return true;
    },
    /** Records that `path` does not exist at `fileCommit` (an empty .no_exist file). */
    async storeAbsent(p, fileCommit) {
      if (!COMMIT_RE.test(fileCommit ?? '')) return;
      await writeAtomic(path.join(repo, '.no_exist', fileCommit, ...p.split('/')), new Uint8Array(0)).catch(() => {});
      if (!COMMIT_RE.test(revision) && (await commitOf()) === null) {
        await writeAtomic(revFile, fileCommit).catch(() => {});
        commit = fileCommit;
      }
    },
  };
}

/** The NETWORK error of a failed fetch, naming the cause Node gives (ENOTFOUND, ECONNREFUSED, a TLS failure...). */
export function networkError(path, url, e) {
  const cause = e?.cause ?? e;
  const code = cause?.code ?? cause?.errno;
  const detail = code ? `${code}${cause?.message && !String(cause.message).includes(code) ? `: ${cause.message}` : ''}` : (cause?.message ?? String(e));
  const err = new SwapformerError('NETWORK', `${path}: fetching ${url} failed (${detail})`);
  err.cause = cause;
  return err;
}
