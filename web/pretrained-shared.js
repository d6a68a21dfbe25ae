// What the cards of section 6 ("Your model", pretrained.js) share, and what
// section 7 (positions-real.js) takes from them: reading a dropped or picked
// folder into a source for loadPretrained, the panel's error box, and the
// number and value formats. Imports nothing of the cards (no import circle).
import { h, fill, plural } from './dom.js';

export const DEFAULT_HUB = 'https://huggingface.co';

// what each position plugin does, in a line (the info card and the swap card)
export const POSITION_NOTES = {
  learned: 'a trained vector per absolute position',
  rope: 'rotates q and k by their positions: scores depend on the offset j − i',
  alibi: 'adds −slope·|i − j| to the scores: a distance penalty, no vectors',
  t5: 'a learned bias per relative-distance bucket and head, added to the scores',
  disentangled:
    "DeBERTa's: a table of relative distances, projected by each layer's key and query weights, adds content-to-position and position-to-content terms to the scores",
  none: 'no positions at all: the encoder sees a bag of tokens',
};

/** An example as the input's placeholder: the long one where it fits, the short one on a narrow screen. */
export function placeholderExample(input, long, short) {
  const narrow = typeof matchMedia === 'function' ? matchMedia('(max-width: 560px)') : null;
  const set = () => {
    input.placeholder = narrow?.matches ? short : long;
  };
  set();
  narrow?.addEventListener('change', set);
}

export const panelError = (code, message) => Object.assign(new Error(message), { code });
export const isHidden = (path) => path.split('/').some((s) => s.startsWith('.')); // .git, .cache, .DS_Store

/** Shows e (a SwapformerError or any error) in a panel's error box: its code, then its message. */
export function showError(el, e) {
  const code = e?.code ?? 'ERROR';
  fill(el, h('span', { class: 'code' }, code), e?.message ?? String(e));
  el.dataset.code = code;
  el.hidden = false;
}

export function clearError(el) {
  el.hidden = true;
  delete el.dataset.code;
}

// ------------------------------------------------------------------ formats

/** A value as JavaScript would write it: 'alibi', [1, 2], {type: 'yarn', factor: 4}. */
export function show(v) {
  if (v === undefined) return '—';
  if (typeof v === 'string') return `'${v}'`;
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${show(x)}`)
      .join(', ')}}`;
  return String(v);
}

export function fmtBytes(n) {
  if (!Number.isFinite(n)) return '?';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} kB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

export const fmtMs = (ms) => (ms < 0.1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0));
export const shortText = (s, n = 22) => (s.length > n ? `${s.slice(0, n - 1).trimEnd()}…` : s);
export const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(4)}`;

// ------------------------------------------------------------------ numbers

/** Cosine of every row of a with every row of b ([n, d] and [m, d] embeddings): n x m, row-major. */
export function cosineMatrix(a, b = a) {
  const [n, d] = a.shape,
    m = b.shape[0];
  const norm = (e, i) => {
    let s = 0;
    for (let k = 0; k < d; k++) s += e.data[i * d + k] ** 2;
    return Math.sqrt(s);
  };
  const na = Array.from({ length: n }, (_, i) => norm(a, i)),
    nb = a === b ? na : Array.from({ length: m }, (_, j) => norm(b, j));
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += a.data[i * d + k] * b.data[j * d + k];
      out[i * m + j] = na[i] && nb[j] ? s / (na[i] * nb[j]) : 0;
    }
  }
  return out;
}

// ------------------------------------------------------------------ dropped folders

/** The files of a drop as a Map path -> File (folders walked), read from the event synchronously. */
export function dropReader(dataTransfer) {
  const items = Array.from(dataTransfer.items ?? []).filter((i) => i.kind === 'file');
  const entries = items.map((i) => (typeof i.webkitGetAsEntry === 'function' ? i.webkitGetAsEntry() : null));
  const files = Array.from(dataTransfer.files ?? []);
  return async () => {
    const map = new Map();
    if (entries.length && entries.every(Boolean)) {
      await Promise.all(entries.map((e) => walkEntry(e, '', map)));
    } else {
      // no FileSystemEntry (an older browser, or a drop made by a script): the files by name
      for (const f of files) if (!isHidden(f.name)) map.set(f.name, f);
    }
    return map;
  };
}

async function walkEntry(entry, prefix, map) {
  if (entry.name.startsWith('.')) return;
  const path = prefix + entry.name;
  if (entry.isFile) {
    map.set(path, await new Promise((resolve, reject) => entry.file(resolve, reject)));
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      // readEntries gives the folder in batches until an empty one
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      await Promise.all(batch.map((e) => walkEntry(e, `${path}/`, map)));
    }
  }
}

/** A source for loadPretrained from path -> File: one swapformer file's bytes, or the map. */
export async function sourceFromFiles(map) {
  if (!map.size) throw panelError('NOT_FOUND', 'nothing to read: the drop held no files (hidden files such as .git are skipped)');
  const names = [...map.keys()];
  if (names.length === 1 && /\.safetensors$/i.test(names[0])) {
    return { source: new Uint8Array(await map.get(names[0]).arrayBuffer()), label: names[0] };
  }
  const top = names[0].split('/')[0];
  const folder = names.every((n) => n.includes('/') && n.split('/')[0] === top) ? top : null;
  return { source: map, label: folder ? `folder ${folder} (${plural(map.size, 'file')})` : plural(map.size, 'dropped file') };
}

/** The files picked with an <input type=file> (a folder keeps webkitRelativePath), hidden ones left out; the input is emptied. */
export function pickedFiles(input) {
  const list = Array.from(input.files ?? []).filter((f) => !isHidden(f.webkitRelativePath || f.name));
  input.value = ''; // picking the same folder again fires change again
  // keyed by path, so that one file is recognised too
  return list.length ? new Map(list.map((f) => [f.webkitRelativePath || f.name, f])) : null;
}
