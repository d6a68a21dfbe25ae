// Files for the command line: atomic writes, download progress, sizes, which
// paths name the same file, counts in words.
import { readFileSync, fstatSync } from 'node:fs';
import { writeFile, rename, rm, stat, realpath } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** A temporary name beside `file` (same folder: the rename stays on one file system). */
export const tempBeside = (file) => path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);

/** swapformer's version (package.json). */
export const version = () => JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** What runs the core here, in a line: the backend, its kernels, the threads, and why the wasm if it runs under 'auto'. */
export function backendLine(r) {
  const threads = count(r.threads, 'thread');
  if (r.backend === 'native') return `native ${r.isa} (${threads}; q8 ${r.q8Kernel}), ${r.nativePath}`;
  return `wasm ${r.build} (${threads}; q8 ${r.q8Kernel})${r.backendFallback ? `: ${r.backendFallback}` : ''}`;
}

/** --revision and --hub-url, for a model given as a Hub id (convert, embed, info). */
export const HUB_OPTIONS = [
  { name: 'revision', value: 'R', help: 'for a Hub id: the branch, tag or commit to read (default: main)' },
  {
    name: 'hub-url',
    value: 'URL',
    help: 'for a Hub id: the Hub to read from (default: $HF_ENDPOINT, else https://huggingface.co);\nfiles come from <URL>/<owner>/<name>/resolve/<revision>/<file>',
  },
];

/** Writes bytes to a temporary file in out's folder, then renames it over out. */
export async function writeAtomically(out, bytes) {
  const tmp = tempBeside(out);
  try {
    await writeFile(tmp, bytes, { flag: 'wx' });
    await rename(tmp, out);
  } catch (e) {
    await rm(tmp, { force: true });
    if (e.path === tmp) e.path = out; // name the file the user asked for
    throw e;
  }
}

/** n and a noun, singular for 1: count(1, 'text') is '1 text', count(2, 'text') '2 texts'. */
export const count = (n, noun, plural = `${noun}s`) => `${n} ${n === 1 ? noun : plural}`;

/**
 * What an existing path is, links followed: {dev, ino, real} (real: its real
 * path), or null when nothing is there. Two paths name the same file when
 * sameFile says so: the same device and inode (hard links, symlinks, bind
 * mounts) or the same real path (where a file system reports no inodes).
 */
export async function fileId(p) {
  const info = await stat(p, { bigint: true }).catch(() => null); // inodes past 2^53 exist (XFS, btrfs)
  return info && { dev: info.dev, ino: info.ino, real: await realpath(p).catch(() => path.resolve(p)) };
}

/** The file standard input reads when it is redirected from one (< file), else null (a terminal, a pipe). */
export function stdinId() {
  try {
    const info = fstatSync(0, { bigint: true });
    return info.isFile() ? { dev: info.dev, ino: info.ino, real: null } : null;
  } catch {
    return null;
  }
}

export const sameFile = (a, b) => Boolean(a && b && ((a.ino !== 0n && a.dev === b.dev && a.ino === b.ino) || (a.real !== null && a.real === b.real)));

/** Whether p names an existing regular file (not a folder). */
export async function isLocalFile(p) {
  const info = await stat(p).catch(() => null);
  return Boolean(info?.isFile());
}

/** onProgress for downloads: a line per large file (rewritten in place on a TTY). */
export function downloadProgress(stream = process.stderr) {
  let last = '',
    shown = false;
  return {
    update: ({ file, loaded, total }) => {
      if ((total ?? loaded) < 2 ** 20) return; // small files: nothing worth a line
      const line = `  ${file} ${(loaded / 2 ** 20).toFixed(1)}${total ? ` / ${(total / 2 ** 20).toFixed(1)}` : ''} MB`;
      if (stream.isTTY) stream.write(`\r${line}`);
      else if (loaded === total && line !== last) stream.write(`${line}\n`);
      else return; // not written: a line rounded like the last one (3.05 of 3.1 MB) must not hide it
      last = line;
      shown = true;
    },
    done: () => {
      if (shown && stream.isTTY) stream.write('\n');
    },
  };
}

/** Bytes as a short figure: 1.5 MB, 22.7 MB, 890 KB. */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 2 ** 20) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 2 ** 30) return `${(n / 2 ** 20).toFixed(1)} MB`;
  return `${(n / 2 ** 30).toFixed(2)} GB`;
}
