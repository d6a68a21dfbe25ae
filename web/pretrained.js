// Section 6, "Your model": a real encoder from Hugging Face, loaded with the
// package's loadPretrained from a dropped folder (or its files, or one file
// written by `swapformer convert`), a picked folder, or the Hub by id with a
// progress bar. Shows the checkpoint's config.json mapped to swapformer's
// config (the position plugin first), its embedding recipe and tokens; embeds
// sentences (a cosine-similarity heat map, a nearest-sentence search, the
// forward time); swaps the position plugin or the RoPE scaling on the same
// weights (Pretrained.withConfig) and shows how the similarities move.
//
// Nothing leaves the page but the Hub downloads the user asks for (Load).
// A download runs outside the app's queue, so the rest of the page stays live
// while it arrives (the bindings copy every result out of wasm memory, so a
// load in between two steps of another section changes nothing for it); all
// embedding and swapping runs in the queue (app.enqueue / app.later).
// For tests and the console: app.pretrained (window.swapformerDemo.pretrained).
import { h, fill, setOptions, plotBox } from './dom.js';
import { heatmap } from './plots.js';
import { FAMILIES } from '../bindings/pretrained/families.js';

const DEFAULT_HUB = 'https://huggingface.co';
const DEFAULT_SENTENCES = [
  'A man is playing a guitar.',
  'Someone plays an acoustic guitar on stage.',
  'A chef is cooking pasta in the kitchen.',
  'The cook prepares noodles for dinner.',
  'The stock market fell sharply today.',
  'Shares dropped as investors sold off.',
];
const DEFAULT_QUERY = 'a musician performing a song';
// ids a click writes into the field (the download starts only with Load); sizes of their model.safetensors
const HUB_EXAMPLES = [
  ['sentence-transformers/all-MiniLM-L6-v2', '90 MB'],
  ['BAAI/bge-small-en-v1.5', '133 MB'],
  ['nomic-ai/nomic-embed-text-v1.5', '547 MB'],
];
const MAX_SENTENCES = 48; // the demo's limit for the matrix (the library has none)
const TYPING_MS = 300;
const SWAP_MS = 120;
const SWAP_POSITIONS = ['rope', 'alibi', 'none'];
const SCALINGS = ['none', 'linear', 'ntk', 'yarn', 'dynamic'];
const SCALING_LABELS = ['none', 'linear (position interpolation)', 'NTK-aware', 'YaRN', 'dynamic NTK'];
// the tensors a position plugin owns: dropped when the weights move to another plugin
const POSITION_TENSORS = { learned: ['embed.positions'], t5: ['embed.relative_bias'] };
const POSITION_NOTES = {
  learned: 'a trained vector per absolute position',
  rope: 'rotates q and k by their positions: scores depend on the offset j − i',
  alibi: 'adds −slope·|i − j| to the scores: a distance penalty, no vectors',
  t5: 'a learned bias per relative-distance bucket and head, added to the scores',
  none: 'no positions at all: the encoder sees a bag of tokens',
};

// ------------------------------------------------------------------ config.json -> swapformer
// Display rows [config.json key(s), swapformer field, note?] per family: which
// Hugging Face key feeds which field (bindings/pretrained/families.js decides;
// the values shown are read from config.json and from the encoder's config).
// Alternatives are tried in order; null is a choice the family makes itself.
const BERT_SIZE = [
  ['vocab_size', 'vocabSize'], ['hidden_size', 'dModel'], ['num_hidden_layers', 'layers'],
  ['num_attention_heads', 'heads'], ['intermediate_size', 'ffDim'], ['hidden_act', 'activation'],
  ['type_vocab_size', 'typeVocabSize'], ['layer_norm_eps', 'eps'],
];
const POST_NORM = [[null, 'norm'], [null, 'normPlacement', 'LayerNorm after each residual'], [null, 'finalNorm'], [null, 'embedNorm', 'LayerNorm on the embeddings']];
const CONFIG_MAP = {
  bert: [
    ['position_embedding_type', 'position', 'absolute: a learned table'], ['max_position_embeddings', 'maxLen', 'table rows'],
    ...BERT_SIZE, ...POST_NORM,
  ],
  roberta: [
    ['position_embedding_type', 'position', 'absolute: a learned table'], ['max_position_embeddings', 'maxLen', 'table rows'],
    ['pad_token_id', 'positionOptions.offset', 'positions count from pad_token_id + 1'],
    ...BERT_SIZE, ...POST_NORM,
  ],
  distilbert: [
    ['sinusoidal_pos_embds', 'position', 'the saved table holds the positions either way'], ['max_position_embeddings', 'maxLen', 'table rows'],
    ['vocab_size', 'vocabSize'], ['dim', 'dModel'], ['n_layers', 'layers'], ['n_heads', 'heads'], ['hidden_dim', 'ffDim'],
    ['activation', 'activation'], [null, 'eps', 'hard-coded in DistilBERT'], ...POST_NORM,
  ],
  'jina-bert': [
    ['position_embedding_type', 'position'],
    ['vocab_size', 'vocabSize'], ['hidden_size', 'dModel'], ['num_hidden_layers', 'layers'], ['num_attention_heads', 'heads'],
    ['intermediate_size', 'ffDim'], ['feed_forward_type', 'activation', 'gated: the first half of gated_layers is activated'],
    ['hidden_act', 'activation'], ['type_vocab_size', 'typeVocabSize'], ['layer_norm_eps', 'eps'], ...POST_NORM,
  ],
  'nomic-bert': [
    [null, 'position', 'rotary'], ['rotary_emb_base', 'positionOptions.base'], ['rotary_emb_interleaved', 'positionOptions.style'],
    ['rotary_scaling_factor', 'positionOptions.scaling', 'dynamic NTK past max_trained_positions'], ['max_trained_positions', 'positionOptions.scaling'],
    ['vocab_size', 'vocabSize'], ['n_embd', 'dModel'], ['n_layer', 'layers'], ['n_head', 'heads'],
    ['n_inner', 'ffDim', 'read from the fc11 tensor'], ['activation_function', 'activation', 'fc12 is the gate'],
    ['type_vocab_size', 'typeVocabSize'], ['layer_norm_epsilon', 'eps'], ['prenorm', 'normPlacement'],
    [null, 'norm'], [null, 'finalNorm'], [null, 'embedNorm', 'emb_ln'],
  ],
  modernbert: [
    [null, 'position', 'rotary'],
    [['rope_parameters.full_attention.rope_theta', 'global_rope_theta'], 'positionOptions.base', 'global layers'],
    [['rope_parameters.sliding_attention.rope_theta', 'local_rope_theta'], 'positionOptions.localBase', 'local layers'],
    [['layer_types', 'global_attn_every_n_layers'], 'localLayers', 'sliding-window layers'],
    ['local_attention', 'localWindow', 'half of it: |i − j| ≤ window'],
    ['vocab_size', 'vocabSize'], ['hidden_size', 'dModel'], ['num_hidden_layers', 'layers'], ['num_attention_heads', 'heads'],
    ['intermediate_size', 'ffDim'], ['hidden_activation', 'activation', 'gated: the first half of Wi is activated'], ['norm_eps', 'eps'],
    [null, 'norm', 'no biases'], [null, 'normPlacement'], [null, 'finalNorm'], [null, 'embedNorm'], [null, 'firstAttnNorm', 'layer 0 has no attention norm'],
  ],
  t5: [
    [null, 'position', 'relative buckets, shared by every layer'],
    ['relative_attention_num_buckets', 'positionOptions.buckets'], ['relative_attention_max_distance', 'positionOptions.maxDistance'],
    ['vocab_size', 'vocabSize'], ['d_model', 'dModel'], ['num_layers', 'layers'], ['num_heads', 'heads'],
    ['d_kv', 'headDim', 'attention width heads × d_kv'], ['d_ff', 'ffDim'], [['dense_act_fn', 'feed_forward_proj'], 'activation'],
    ['layer_norm_epsilon', 'eps'], [null, 'attnScale', 'no 1/√d score scale'],
    [null, 'norm'], [null, 'normPlacement'], [null, 'finalNorm'],
  ],
};

const pathGet = (o, path) => path.split('.').reduce((v, k) => (v !== null && typeof v === 'object' ? v[k] : undefined), o);

/** A value as JavaScript would write it: 'alibi', [1, 2], {type: 'yarn', factor: 4}. */
function show(v) {
  if (v === undefined) return '—';
  if (typeof v === 'string') return `'${v}'`;
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}: ${show(x)}`).join(', ')}}`;
  return String(v);
}

/** A dotted or snake_case name that may wrap after its dots and underscores (phone width). */
const ident = (name) => name.split(/(?<=[._])/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));

/** JSON-style, for config.json values. */
const showJson = (v) => (v === undefined ? '—' : JSON.stringify(v).replace(/,(?=["\d[{tfn-])/g, ', '));

// ------------------------------------------------------------------ numbers

function cosineMatrix(a, b = a) {
  const [n, d] = a.shape, m = b.shape[0];
  const norm = (e, i) => { let s = 0; for (let k = 0; k < d; k++) s += e.data[i * d + k] ** 2; return Math.sqrt(s); };
  const na = Array.from({ length: n }, (_, i) => norm(a, i)), nb = a === b ? na : Array.from({ length: m }, (_, j) => norm(b, j));
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

function fmtBytes(n) {
  if (!Number.isFinite(n)) return '?';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} kB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

const fmtMs = (ms) => (ms < 0.1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0));
const shortText = (s, n = 22) => (s.length > n ? `${s.slice(0, n - 1).trimEnd()}…` : s);
const panelError = (code, message) => Object.assign(new Error(message), { code });
const isHidden = (path) => path.split('/').some((s) => s.startsWith('.')); // .git, .cache, .DS_Store

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
    for (;;) { // readEntries gives the folder in batches until an empty one
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
  return { source: map, label: folder ? `folder ${folder} (${map.size} files)` : `${map.size} dropped files` };
}

// ------------------------------------------------------------------ the panel

export function mountPretrained(root, app) {
  const body = root.querySelector('#pretrained-body');
  const { api } = app;

  // ---------------------------------------------------------------- load card
  const folderInput = h('input', { id: 'pretrained-folder', type: 'file', webkitdirectory: true, multiple: true, hidden: true });
  const filesInput = h('input', { id: 'pretrained-files-input', type: 'file', multiple: true, hidden: true });
  const drop = h('div', { class: 'dropzone', id: 'pretrained-drop', role: 'group', 'aria-label': 'Drop a Hugging Face model folder here' },
    h('strong', {}, 'Drop a Hugging Face model folder here'),
    h('span', { class: 'muted' }, 'config.json, model.safetensors, tokenizer.json and the sentence-transformers files (1_Pooling/, 2_Dense/, …), or one file written by ', h('code', {}, 'npx swapformer convert')),
    h('span', { class: 'pick' },
      h('button', { type: 'button', class: 'secondary', id: 'pretrained-pick-folder', onclick: () => folderInput.click() }, 'Choose a folder…'),
      h('button', { type: 'button', class: 'secondary', id: 'pretrained-pick-files', onclick: () => filesInput.click() }, 'or files…')),
    folderInput, filesInput);

  const idInput = h('input', {
    id: 'pretrained-id', type: 'text', class: 'mono', spellcheck: false, autocomplete: 'off', autocapitalize: 'off',
    placeholder: 'sentence-transformers/all-MiniLM-L6-v2', 'aria-describedby': 'pretrained-online',
  });
  const loadButton = h('button', { id: 'pretrained-load-button', type: 'submit' }, 'Load');
  const hubInput = h('input', { id: 'pretrained-hub', type: 'url', class: 'mono', value: DEFAULT_HUB, spellcheck: false, autocomplete: 'off' });
  const revisionInput = h('input', { id: 'pretrained-revision', type: 'text', class: 'mono', value: 'main', spellcheck: false, autocomplete: 'off' });
  const cacheBox = h('input', { id: 'pretrained-cache', type: 'checkbox', checked: true });
  const onlineNote = h('p', { class: 'caption', id: 'pretrained-online' });
  const hubForm = h('form', { class: 'hub-form', id: 'pretrained-hub-form', autocomplete: 'off' },
    h('label', { for: 'pretrained-id', class: 'hub-label' }, 'or a Hugging Face model id (or a folder URL)'),
    h('div', { class: 'hub-row' }, idInput, loadButton),
    h('div', { class: 'examples', id: 'pretrained-examples' }, h('span', { class: 'muted' }, 'For example:'),
      HUB_EXAMPLES.map(([id, size]) => h('button', {
        type: 'button', class: 'chip', title: `${id}: about ${size} to download (press Load)`,
        onclick: () => { idInput.value = id; idInput.focus(); },
      }, `${id.split('/')[1]} · ${size}`))),
    onlineNote,
    h('details', { id: 'pretrained-advanced' },
      h('summary', {}, 'Hub options'),
      h('div', { class: 'hub-options' },
        h('label', {}, 'Hub URL', hubInput),
        h('label', {}, 'Revision (branch, tag or commit)', revisionInput),
        h('label', { class: 'check' }, cacheBox, 'Keep downloads in this browser (Cache API): the next load reads them from there'))));

  const fileName = h('span', { class: 'pname', id: 'pretrained-file-name' });
  const fileBar = h('progress', { id: 'pretrained-file-progress', max: 1, value: 0 });
  const fileBytes = h('span', { class: 'pbytes', id: 'pretrained-file-bytes' });
  const totalBar = h('progress', { id: 'pretrained-total-progress', max: 1, value: 0 });
  const totalBytes = h('span', { class: 'pbytes', id: 'pretrained-total-bytes' });
  const fileList = h('ul', { class: 'file-list', id: 'pretrained-file-list' });
  const cancelButton = h('button', { type: 'button', class: 'secondary', id: 'pretrained-cancel', hidden: true }, 'Cancel');
  const clearButton = h('button', { type: 'button', class: 'secondary', id: 'pretrained-clear', hidden: true }, 'Clear');
  const progress = h('div', { class: 'pt-progress', id: 'pretrained-progress', hidden: true },
    h('div', { class: 'progress-row' }, fileName, fileBar, fileBytes),
    h('div', { class: 'progress-row' }, h('span', { class: 'pname' }, 'All files'), totalBar, totalBytes),
    h('details', { class: 'files' }, h('summary', { id: 'pretrained-file-count' }, 'Files'), fileList));
  const status = h('p', { class: 'pt-status', id: 'pretrained-status', role: 'status', 'aria-live': 'polite' });
  const error = h('div', { class: 'error', id: 'pretrained-error', role: 'alert', hidden: true });

  // ---------------------------------------------------------------- info card
  const infoWaiting = () => [
    h('p', { class: 'note' }, 'Its family, its config.json mapped field by field to swapformer\'s config (the position plugin first) and its embedding recipe appear here.'),
    h('p', { class: 'caption' }, 'Families read: ', FAMILIES.map((f) => f.description).join('; '), '.')];
  const infoBody = h('div', { id: 'pretrained-info-body' }, infoWaiting());

  // ---------------------------------------------------------------- sentences and search
  const sentencesBox = h('textarea', { id: 'pretrained-sentences', rows: 7, spellcheck: false }, DEFAULT_SENTENCES.join('\n'));
  const embedButton = h('button', { id: 'pretrained-embed', type: 'button', disabled: true }, 'Embed');
  const timing = h('span', { class: 'pt-timing', id: 'pretrained-timing' });
  const sentencesMsg = h('p', { class: 'input-msg', id: 'pretrained-sentences-msg', hidden: true });
  const tokenCount = h('span', { class: 'muted', id: 'pretrained-token-count' });
  const tokens = h('div', { class: 'tokens', id: 'pretrained-tokens', 'aria-label': 'Tokens of the first sentence' });
  const queryInput = h('input', { id: 'pretrained-query', type: 'text', value: DEFAULT_QUERY, spellcheck: false, autocomplete: 'off' });
  const ranking = h('ol', { class: 'ranking', id: 'pretrained-ranking' });
  const rankingNote = h('p', { class: 'caption', id: 'pretrained-ranking-note' });

  // ---------------------------------------------------------------- similarity and swap
  const posSel = h('select', { id: 'pretrained-position' });
  const scalingSel = h('select', { id: 'pretrained-scaling' });
  const factorInput = h('input', { id: 'pretrained-factor', type: 'number', min: '1', step: 'any', value: '4' });
  const origLenInput = h('input', { id: 'pretrained-original-len', type: 'number', min: '1', step: '1', value: '2048' });
  const scalingLabel = h('label', { id: 'pretrained-scaling-label' }, 'RoPE scaling', scalingSel);
  const factorLabel = h('label', {}, 'factor', factorInput);
  const origLenLabel = h('label', {}, 'originalMaxLen', origLenInput);
  const swapNote = h('p', { class: 'caption', id: 'pretrained-swap-note' });
  const swapError = h('div', { class: 'error', id: 'pretrained-swap-error', role: 'alert', hidden: true });
  const origMap = plotBox('Cosine similarity of the sentences, the checkpoint as it is');
  origMap.canvas.id = 'pretrained-matrix';
  const swapMap = plotBox('Cosine similarity of the sentences, the same weights with the swapped positions');
  swapMap.canvas.id = 'pretrained-swapped-matrix';
  const origTitle = h('h4', { id: 'pretrained-matrix-title' }, 'The checkpoint');
  const swapTitle = h('h4', { id: 'pretrained-swapped-title' }, 'Swapped');
  const swapEmpty = h('p', { class: 'note', id: 'pretrained-swapped-empty' }, 'Choose another position plugin or a RoPE scaling above: the same weights run again and their matrix appears here.');
  const change = h('p', { class: 'lesson', id: 'pretrained-change', hidden: true });
  const simTable = h('table', { class: 'numbers sim', id: 'pretrained-sim-table' });
  const simCaption = h('p', { class: 'caption', id: 'pretrained-matrix-caption' });

  const placeholder = (id, text) => h('p', { class: 'note', id }, text);
  const sentencesBody = h('div', { class: 'pt-stack', hidden: true },
    h('label', { for: 'pretrained-sentences', class: 'pt-label' }, 'One sentence per line'),
    sentencesBox,
    h('div', { class: 'pt-actions' }, embedButton, timing),
    sentencesMsg,
    h('div', { class: 'tokens-line' }, tokenCount, tokens));
  const searchBody = h('div', { class: 'pt-stack', hidden: true },
    h('label', { for: 'pretrained-query', class: 'pt-label' }, 'Nearest sentence to'),
    queryInput, ranking, rankingNote);
  const simBody = h('div', { class: 'pt-stack', hidden: true },
    h('div', { class: 'pt-swap-controls' }, h('label', {}, 'Position plugin', posSel), scalingLabel, factorLabel, origLenLabel),
    swapNote, swapError,
    h('div', { class: 'pt-maps' },
      h('figure', { class: 'view' }, origTitle, origMap.box),
      h('figure', { class: 'view' }, swapTitle, swapEmpty, swapMap.box)),
    simCaption, change,
    h('details', { id: 'pretrained-numbers' }, h('summary', {}, 'The numbers'), h('div', { class: 'table-wrap' }, simTable)));
  const waiting = 'Load a model above (drop a folder or type an id).';
  const sentencesWait = placeholder('pretrained-sentences-wait', waiting);
  const searchWait = placeholder('pretrained-search-wait', waiting);
  const simWait = placeholder('pretrained-sim-wait', `${waiting} Its sentence similarities appear here, and the same weights with other positions next to them.`);

  fill(body,
    h('div', { class: 'pt-grid' },
      h('article', { class: 'card', id: 'pretrained-load' },
        h('h3', {}, 'Load a checkpoint'),
        drop, hubForm, progress,
        h('div', { class: 'pt-actions' }, status, cancelButton, clearButton),
        error),
      h('article', { class: 'card', id: 'pretrained-info' },
        h('h3', { id: 'pretrained-info-title' }, 'The checkpoint, mapped to swapformer'),
        infoBody)),
    h('div', { class: 'pt-grid' },
      h('article', { class: 'card', id: 'pretrained-sentences-card' }, h('h3', {}, 'Embed sentences'), sentencesWait, sentencesBody),
      h('article', { class: 'card', id: 'pretrained-search' }, h('h3', {}, 'Nearest-sentence search'), searchWait, searchBody)),
    h('article', { class: 'card', id: 'pretrained-similarity' },
      h('h3', {}, 'Cosine similarity, and the same weights with other positions'), simWait, simBody));

  // ---------------------------------------------------------------- state
  let model = null; // {p, label, loadMs, bytes, files}
  let swapped = null; // {p, key, label, changes}
  let loading = null; // {seq, controller, promise, cancelled}
  let loadSeq = 0;
  const reading = new Set(); // dropped or picked files being listed before their load starts
  let view = null; // the last embedding: {key, sentences, orig, swap, query, ranking, change}
  const out = { progressLog: [] };
  app.pretrained = out;

  const setState = (s) => { root.dataset.state = s; };
  setState('empty');

  function showError(el, e) {
    const code = e?.code ?? 'ERROR';
    fill(el, h('span', { class: 'code' }, code), e?.message ?? String(e));
    el.dataset.code = code;
    el.hidden = false;
  }
  function clearError(el) {
    el.hidden = true;
    delete el.dataset.code;
  }

  function showOnline() {
    const offline = typeof navigator !== 'undefined' && navigator.onLine === false;
    onlineNote.textContent = offline
      ? 'This browser says it is offline: a download from the Hub will fail. Drop a folder instead.'
      : 'Downloaded only when you press Load, from the Hub URL below.';
    onlineNote.classList.toggle('bad', offline);
  }
  showOnline();
  addEventListener('online', showOnline);
  addEventListener('offline', showOnline);

  // ---------------------------------------------------------------- progress

  const files = new Map(); // file -> {loaded, total}
  function resetProgress() {
    files.clear();
    out.progressLog = [];
    fileName.textContent = 'Starting…';
    fileBar.value = 0;
    fileBytes.textContent = '';
    totalBar.value = 0;
    totalBytes.textContent = '';
    fileList.replaceChildren();
    progress.hidden = false;
  }

  function onProgress(ev) {
    const { file, loaded, total } = ev;
    if (out.progressLog.length < 2000) out.progressLog.push({ file, loaded, total });
    files.set(file, { loaded, total });
    fileName.textContent = file;
    if (total) fileBar.value = Math.min(1, loaded / total); else fileBar.removeAttribute('value');
    fileBytes.textContent = total ? `${fmtBytes(loaded)} of ${fmtBytes(total)}` : fmtBytes(loaded);
    paintTotal();
  }

  function paintTotal(done = false) {
    let loaded = 0, total = 0;
    for (const f of files.values()) { loaded += f.loaded; total += f.total ?? f.loaded; }
    const frac = done ? 1 : total ? loaded / total : 0;
    totalBar.value = frac;
    totalBytes.textContent = `${Math.floor(100 * frac)}% · ${files.size} file${files.size === 1 ? '' : 's'} · ${fmtBytes(loaded)}${done ? '' : ` of ${fmtBytes(total)} so far`}`;
    document.getElementById('pretrained-file-count').textContent = `Files read (${files.size})`;
    fill(fileList, [...files].map(([name, f]) => h('li', { class: f.total !== null && f.loaded >= f.total ? 'done' : '' },
      h('span', { class: 'mono' }, name), h('span', { class: 'muted' }, f.total !== null && f.loaded >= f.total ? fmtBytes(f.total) : `${fmtBytes(f.loaded)}…`))));
  }

  // ---------------------------------------------------------------- loading

  function cancelLoad() {
    if (!loading) return;
    loading.cancelled = true;
    loading.controller.abort();
    loadSeq++;
    loading = null;
    cancelButton.hidden = true;
    loadButton.disabled = false;
    fileName.textContent = 'Cancelled';
    status.textContent = model ? `Cancelled: still showing ${model.label}.` : 'Cancelled.';
    setState(model ? 'ready' : 'empty');
  }

  /** Loads a source (a Hub id, a URL, a Map of files, a list of Files, or bytes) and shows it. */
  function load(source, label, { download = false } = {}) {
    if (loading) cancelLoad();
    const seq = ++loadSeq;
    const controller = new AbortController();
    resetProgress();
    clearError(error);
    setState('loading');
    status.textContent = `Loading ${label}…`;
    cancelButton.hidden = false;
    loadButton.disabled = true;
    const options = { onProgress: (ev) => { if (seq === loadSeq) onProgress(ev); } };
    if (download) {
      options.hubUrl = hubInput.value.trim() || DEFAULT_HUB;
      options.revision = revisionInput.value.trim() || 'main';
      options.cache = cacheBox.checked;
      // the same fetch, cancellable
      options.fetch = (url, init) => fetch(url, { ...init, signal: controller.signal });
    }
    // one file already read (a swapformer model file): nothing more to report while it loads
    if (source instanceof Uint8Array) onProgress({ file: label, loaded: source.length, total: source.length });
    const t0 = performance.now();
    const promise = (async () => {
      let p;
      try {
        p = await api.loadPretrained(source, options);
      } catch (e) {
        if (seq !== loadSeq) return; // cancelled or replaced: nothing to say
        loading = null;
        cancelButton.hidden = true;
        loadButton.disabled = false;
        fileName.textContent = 'Failed';
        showError(error, e?.code ? e : panelError('ERROR', e?.message ?? String(e)));
        status.textContent = model ? `${label} could not be loaded: still showing ${model.label}.` : `${label} could not be loaded.`;
        out.lastError = { code: e?.code ?? 'ERROR', message: e?.message ?? String(e) };
        setState(model ? 'ready' : 'error');
        return;
      }
      if (seq !== loadSeq) { p.dispose(); return; }
      const loadMs = performance.now() - t0;
      paintTotal(true);
      fileName.textContent = 'Each file';
      fileBar.value = 1;
      fileBytes.textContent = `${files.size} of ${files.size} complete`;
      let bytes = 0;
      for (const f of files.values()) bytes += f.total ?? f.loaded;
      await app.enqueue(() => adopt(p, { label: p.source && download ? p.source : label, loadMs, bytes, fileCount: files.size, download }));
      if (seq === loadSeq) loading = null;
    })();
    loading = { seq, controller, promise, cancelled: false };
    return promise;
  }

  /** Makes p the panel's model (in the queue): disposes the previous one, shows it, embeds. */
  async function adopt(p, info) {
    swapped?.p.dispose();
    swapped = null;
    model?.p.dispose();
    model = { p, ...info };
    app.setPretrained?.({ p, label: info.label }); // the page's other sections (the layer-removal card) follow
    view = null;
    out.lastError = null;
    cancelButton.hidden = true;
    clearButton.hidden = false;
    loadButton.disabled = false;
    status.textContent = `Loaded ${info.label} in ${(info.loadMs / 1000).toFixed(2)} s (${info.download
      ? `${info.fileCount} file${info.fileCount === 1 ? '' : 's'}, ${fmtBytes(info.bytes)} downloaded or from the cache` : `${fmtBytes(info.bytes)} read`}).`;
    showInfo();
    setupSwapControls();
    for (const [wait, el] of [[sentencesWait, sentencesBody], [searchWait, searchBody], [simWait, simBody]]) { wait.hidden = true; el.hidden = false; }
    embedButton.disabled = false;
    await refresh();
    setState('ready');
  }

  function clearModel() {
    if (loading) cancelLoad();
    app.enqueue(() => {
      swapped?.p.dispose();
      swapped = null;
      model?.p.dispose();
      model = null;
      app.setPretrained?.(null);
      view = null;
      progress.hidden = true;
      clearButton.hidden = true;
      clearError(error);
      clearError(swapError);
      status.textContent = '';
      fill(infoBody, infoWaiting());
      document.getElementById('pretrained-info-title').textContent = 'The checkpoint, mapped to swapformer';
      for (const [wait, el] of [[sentencesWait, sentencesBody], [searchWait, searchBody], [simWait, simBody]]) { wait.hidden = false; el.hidden = true; }
      embedButton.disabled = true;
      setState('empty');
    });
  }

  // ---------------------------------------------------------------- what it is

  function showInfo() {
    const { p } = model;
    const c = p.encoder.config, hf = p.hfConfig ?? {};
    const family = FAMILIES.find((f) => f.name === p.family);
    const params = Object.values(p.encoder.weightShapes()).reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    document.getElementById('pretrained-info-title').textContent = `${family?.description ?? p.family}: mapped to swapformer`;

    const rows = CONFIG_MAP[p.family] ?? [];
    const used = new Set();
    const tableRows = rows.map(([keys, field, note]) => {
      const list = keys === null ? [] : Array.isArray(keys) ? keys : [keys];
      const key = list.find((k) => pathGet(hf, k) !== undefined) ?? list[0];
      const hfValue = key ? pathGet(hf, key) : undefined;
      const sfValue = pathGet(c, field);
      used.add(field.split('.')[0]);
      const position = /^(position|local)/.test(field);
      return h('tr', { class: position ? 'pos' : '', dataset: { hf: key ?? '', field } },
        h('td', {}, key
          ? [h('code', {}, ident(key), ': '), hfValue === undefined ? h('span', { class: 'muted' }, 'absent (default)') : h('code', { class: 'v' }, showJson(hfValue))]
          : h('span', { class: 'muted' }, '(the family)')),
        h('td', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
        h('td', {}, h('code', {}, ident(field), ': '), h('code', { class: 'v' }, sfValue === undefined ? '— (not set)' : show(sfValue)),
          note ? h('span', { class: 'row-note' }, note) : null));
    });
    const rest = Object.entries(c).filter(([k]) => !used.has(k) && k !== 'positionOptions');
    const limits = [];
    if (p.recipe.maxSeqLength) limits.push(`max_seq_length ${p.recipe.maxSeqLength}`);
    if (Number.isFinite(p.tokenizer.modelMaxLength) && p.tokenizer.modelMaxLength < 1e9) limits.push(`model_max_length ${p.tokenizer.modelMaxLength}`);
    if (Number.isFinite(p.encoder.maxSequenceLength)) limits.push(`position limit ${p.encoder.maxSequenceLength}`);
    const dense = p.recipe.dense.map((d) => `${d.inFeatures} → ${d.outFeatures}${d.bias ? ' + bias' : ''}, ${d.activation}`).join('; ');
    const prompts = p.recipe.prompts && Object.keys(p.recipe.prompts).length
      ? Object.entries(p.recipe.prompts).map(([k, v]) => `${k}: “${v}”`).join(', ') : null;

    fill(infoBody,
      h('dl', { class: 'kv', id: 'pretrained-summary' },
        h('dt', {}, 'Source'), h('dd', { id: 'pretrained-source' }, model.label),
        h('dt', {}, 'Family'), h('dd', { id: 'pretrained-family', dataset: { family: p.family } }, h('code', {}, p.family),
          hf.model_type ? h('span', { class: 'muted' }, ` (model_type ${JSON.stringify(hf.model_type)}${hf.architectures?.[0] ? `, ${hf.architectures[0]}` : ''})`) : null),
        h('dt', {}, 'Size'), h('dd', {}, `${c.layers} layers · dModel ${c.dModel} · ${c.heads} heads${c.headDim ? ` of ${c.headDim}` : ''} · ffDim ${c.ffDim} · vocabulary ${c.vocabSize.toLocaleString('en-US')} · ${params.toLocaleString('en-US')} parameters`),
        h('dt', {}, 'Positions'), h('dd', {}, h('code', {}, c.position), ` ${POSITION_NOTES[c.position] ?? ''}`)),
      h('h4', {}, 'config.json → swapformer config'),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'numbers config', id: 'pretrained-config' },
          h('thead', {}, h('tr', {}, h('th', {}, 'config.json'), h('th', {}), h('th', {}, 'swapformer config'))),
          h('tbody', {}, tableRows))),
      rest.length ? h('p', { class: 'caption' }, 'Other fields: ', rest.map(([k, v]) => `${k} ${show(v)}`).join(' · ')) : null,
      h('h4', {}, 'Embedding recipe'),
      h('dl', { class: 'kv', id: 'pretrained-recipe' },
        h('dt', {}, 'From'), h('dd', {}, p.recipe.source === 'modules.json' ? 'the sentence-transformers files (modules.json)' : (p.recipe.note ?? 'the model card defaults')),
        h('dt', {}, 'Pooling'), h('dd', { id: 'pretrained-pooling' }, p.recipe.pooling.join(' + '), p.recipe.pooling.length > 1 ? ' (concatenated)' : ''),
        h('dt', {}, 'Dense'), h('dd', {}, dense || 'none'),
        h('dt', {}, 'Normalize'), h('dd', {}, p.recipe.normalize ? 'yes (unit length)' : 'no'),
        h('dt', {}, 'Max length'), h('dd', { id: 'pretrained-max-length' }, Number.isFinite(p.maxLength) ? `${p.maxLength.toLocaleString('en-US')} tokens` : 'no limit',
          limits.length ? h('span', { class: 'muted' }, ` (the smallest of ${limits.join(', ')})`) : null),
        p.recipe.doLowerCase ? [h('dt', {}, 'Lowercase'), h('dd', {}, 'yes (do_lower_case)')] : null,
        prompts ? [h('dt', {}, 'Prompts'), h('dd', {}, prompts, h('span', { class: 'muted' }, ' (type them in front of a sentence)'))] : null));
  }

  // ---------------------------------------------------------------- swap controls

  function originalScaling() {
    return model?.p.encoder.config.positionOptions?.scaling ?? null;
  }

  function setupSwapControls() {
    const c = model.p.encoder.config;
    const positions = [c.position, ...SWAP_POSITIONS.filter((p) => p !== c.position)];
    setOptions(posSel, positions, positions.map((p) => (p === c.position ? `${p} (as trained)` : p)));
    posSel.value = c.position;
    setOptions(scalingSel, SCALINGS, SCALING_LABELS);
    const s = originalScaling();
    const hf = model.p.hfConfig ?? {};
    scalingSel.value = s?.type ?? 'none';
    factorInput.value = String(s?.factor ?? 4);
    origLenInput.value = String(s?.originalMaxLen ?? hf.max_trained_positions ?? hf.max_position_embeddings ?? 2048);
    clearError(swapError);
    showSwapFields();
    describeSwap(readSwap());
  }

  function showSwapFields() {
    const rope = posSel.value === 'rope';
    scalingLabel.hidden = !rope;
    factorLabel.hidden = !rope || scalingSel.value === 'none';
    origLenLabel.hidden = !rope || !['yarn', 'dynamic'].includes(scalingSel.value);
  }

  /** What the swap controls ask for: {key: 'original'} or {key, changes, weights?, label}. */
  function readSwap() {
    const c = model.p.encoder.config;
    const position = posSel.value;
    let positionOptions;
    if (position === c.position) positionOptions = { ...c.positionOptions };
    else positionOptions = position === 'rope' ? { base: 10000, style: 'half' } : {};
    let scaling = null;
    if (position === 'rope') {
      delete positionOptions.scaling;
      const type = scalingSel.value;
      if (type !== 'none') {
        // the checkpoint's own scaling keeps its other fields (YaRN's betas)
        const own = originalScaling();
        scaling = { ...(own?.type === type && position === c.position ? own : {}), type, factor: Number(factorInput.value) };
        if (type === 'yarn' || type === 'dynamic') scaling.originalMaxLen = Number(origLenInput.value);
        positionOptions.scaling = scaling;
      }
    }
    const changes = { position, positionOptions };
    const key = JSON.stringify(changes);
    if (key === JSON.stringify({ position: c.position, positionOptions: c.positionOptions })) return { key: 'original' };
    const drop = position !== c.position ? POSITION_TENSORS[c.position] ?? [] : [];
    const scaleText = scaling ? ` + ${scalingSel.selectedOptions[0]?.textContent ?? scaling.type} ×${scaling.factor}${scaling.originalMaxLen ? ` (originalMaxLen ${scaling.originalMaxLen})` : ''}` : '';
    const label = position === c.position
      ? `${position}${scaleText || ' without scaling'}`
      : `${position}${scaleText} (was ${c.position})`;
    return { key, changes, drop, label };
  }

  function describeSwap(want) {
    const c = model.p.encoder.config;
    if (want.key === 'original') {
      swapNote.textContent = `The checkpoint's own positions: ${c.position}${c.positionOptions?.scaling ? ` with ${show(c.positionOptions.scaling)}` : ''}. Choose another plugin${c.position === 'rope' || posSel.value === 'rope' ? ' or a RoPE scaling' : ''} to run the same weights with it.`;
      return;
    }
    const parts = [`Same weights, ${want.label}: ${POSITION_NOTES[want.changes.position] ?? ''}.`];
    if (want.drop.length) parts.push(`The ${want.drop.join(', ')} tensor of '${c.position}' is left out.`);
    if (want.changes.position !== c.position) parts.push('The model was never trained this way: expect its similarities to move.');
    else parts.push('RoPE scaling stretches the rotations for longer inputs; on short sentences it shows what it costs.');
    swapNote.textContent = parts.join(' ');
  }

  /** Builds the swapped model the controls describe (or none) and redraws. */
  async function applySwap() {
    if (!model) return;
    showSwapFields();
    const want = readSwap();
    describeSwap(want);
    if (want.key === (swapped?.key ?? 'original')) { await refresh(); return; }
    swapped?.p.dispose();
    swapped = null;
    clearError(swapError);
    if (want.key !== 'original') {
      try { // withConfig drops the tensors of the plugin swapped out and keeps the rest
        swapped = { p: await model.p.withConfig(want.changes), key: want.key, label: want.label, changes: want.changes };
      } catch (e) {
        if (!(e instanceof api.SwapformerError)) throw e;
        showError(swapError, e);
      }
    }
    await refresh();
  }

  // ---------------------------------------------------------------- embedding

  function readSentences() {
    const list = sentencesBox.value.split('\n').map((s) => s.trim()).filter(Boolean);
    if (!list.length) return { error: 'Type at least one sentence (one per line).' };
    if (list.length > MAX_SENTENCES) return { error: `${list.length} sentences is more than this demo compares (${MAX_SENTENCES}); the library has no such limit.` };
    return { list };
  }

  /** Tokens each text gets in embed() (stripped, lowercased when the folder says so, truncated). */
  function tokenLengths(p, list) {
    return list.map((t) => p.tokenizer.encode(p.recipe.doLowerCase ? t.trim().toLowerCase() : t.trim(), { maxLength: p.maxLength }).ids.length);
  }

  /** Embeds the sentences with p: {p, emb, sims} (+ timing for the checkpoint). embedAsync:
   * where the page has threads the passes run in a worker and the page stays responsive. */
  async function embedSet(p, list, timed) {
    const t0 = performance.now();
    const emb = await p.embedAsync(list);
    const first = performance.now() - t0;
    const set = { p, emb, sims: cosineMatrix(emb) };
    if (timed) {
      const tokensIn = tokenLengths(p, list).reduce((a, b) => a + b, 0);
      // repeated when one run is quick; a large model's single run is its time
      set.timing = first < 250 // the first run includes the browser's compiling of the wasm
        ? app.timeRuns(() => p.embed(list), tokensIn, { warmup: 1 })
        : { ms: first, runs: 1, tokensPerSecond: (tokensIn * 1000) / first };
      set.tokens = tokensIn;
    }
    return set;
  }

  async function refresh() {
    if (!model) return;
    const parsed = readSentences();
    if (parsed.error) {
      sentencesMsg.textContent = `${parsed.error}${view ? ' The results below are for the last sentences.' : ''}`;
      sentencesMsg.hidden = false;
      return;
    }
    sentencesMsg.hidden = true;
    const list = parsed.list;
    const key = list.join('\n');
    const p = model.p;
    let orig = view?.key === key && view.orig.p === p ? view.orig : null;
    let swap = swapped && view?.key === key && view.swap?.p === swapped.p ? view.swap : null;
    const swappedP = swapped?.p;
    try {
      orig ??= await embedSet(p, list, true);
      if (swapped) swap ??= await embedSet(swapped.p, list, false);
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      sentencesMsg.textContent = `${e.code}: ${e.message}`;
      sentencesMsg.hidden = false;
      return;
    }
    if (model?.p !== p || swapped?.p !== swappedP) return; // replaced while the passes ran: its own refresh follows
    view = { key, list, orig, swap: swapped ? swap : null };
    showTokens(list[0]);
    showTiming(list);
    drawMatrices();
    rank();
  }

  function showTokens(text) {
    const p = model.p;
    const enc = p.tokenizer.encode(p.recipe.doLowerCase ? text.trim().toLowerCase() : text.trim(), { maxLength: p.maxLength });
    const shown = enc.tokens.slice(0, 200);
    tokenCount.textContent = `Sentence 1, ${enc.tokens.length} token${enc.tokens.length === 1 ? '' : 's'}:`;
    fill(tokens, shown.map((t, i) => h('span', { class: 'tok', title: `id ${enc.ids[i]}` }, t, h('span', { class: 'id' }, enc.ids[i]))),
      enc.tokens.length > shown.length ? h('span', { class: 'muted' }, `… ${enc.tokens.length - shown.length} more`) : null);
  }

  function showTiming(list) {
    const { timing: t, tokens: n } = view.orig;
    const cut = tokenLengths(model.p, list).filter((len) => len >= model.p.maxLength).length;
    fill(timing, 'Forward ', h('strong', { id: 'pretrained-forward-ms' }, `${fmtMs(t.ms)} ms`), ' · ',
      h('strong', { id: 'pretrained-tokens-per-second' }, `${Math.round(t.tokensPerSecond).toLocaleString('en-US')} tokens/s`),
      h('span', { class: 'muted' }, ` (${list.length} sentence${list.length === 1 ? '' : 's'}, ${n} tokens, ${t.runs === 1 ? 'one run' : `median of ${t.runs} runs`}${cut ? `; ${cut} cut at ${model.p.maxLength} tokens` : ''})`));
  }

  function drawMatrices() {
    const { list, orig, swap } = view;
    const n = list.length;
    const all = swap ? [...orig.sims, ...swap.sims] : [...orig.sims];
    let lo = Math.min(...all);
    lo = Math.max(-1, Math.floor(lo * 10) / 10);
    if (lo > 0.9) lo = 0.9;
    const range = [lo, 1];
    // the sentences' starts as row labels, shorter at phone width so that the cells keep their size
    const narrow = origMap.box.clientWidth > 0 && origMap.box.clientWidth < 480;
    const ylabels = list.map((s, i) => `${i + 1} ${shortText(s, narrow ? 11 : 22)}`);
    const xlabels = list.map((_, i) => String(i + 1));
    const spec = (sims, other, what) => ({
      data: Float32Array.from(sims), rows: n, cols: n, scale: 'sequential', range, square: true,
      xLabel: 'sentence', yLabel: 'sentence', colorLabel: 'cosine similarity', xTickLabels: xlabels, yTickLabels: ylabels, maxHeight: 380,
      valueLabel: (r, c) => `${what}: ${r + 1} · ${c + 1}: cos ${sims[r * n + c].toFixed(4)}${other ? ` (the checkpoint ${other[r * n + c].toFixed(4)}, Δ ${signed(sims[r * n + c] - other[r * n + c])})` : ''}`,
    });
    const c = model.p.encoder.config;
    origTitle.textContent = `The checkpoint (${c.position}${c.positionOptions?.scaling ? ` + ${c.positionOptions.scaling.type}` : ''})`;
    heatmap(origMap.canvas, spec(orig.sims, null, 'the checkpoint'));
    simCaption.textContent = `Cosine of the ${model.p.recipe.pooling.join('+')}-pooled embeddings${model.p.recipe.dense.length ? ' after Dense' : ''}; colours from ${lo.toFixed(1)} to 1 (shared by both maps); hover a cell for its value.`;
    swapMap.box.hidden = !swap;
    swapEmpty.hidden = !!swap;
    if (swap) {
      swapTitle.textContent = `Swapped: ${swapped.label}`;
      heatmap(swapMap.canvas, spec(swap.sims, orig.sims, 'swapped'));
      let sumAbs = 0, sum = 0, pairs = 0, worst = { d: -1 };
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const d = swap.sims[i * n + j] - orig.sims[i * n + j];
          sumAbs += Math.abs(d); sum += d; pairs++;
          if (Math.abs(d) > worst.d) worst = { d: Math.abs(d), i, j, signed: d };
        }
      }
      const meanAbs = pairs ? sumAbs / pairs : 0, mean = pairs ? sum / pairs : 0;
      view.change = { meanAbs, mean, pairs, worst };
      change.hidden = false;
      change.dataset.meanAbs = String(meanAbs);
      change.dataset.mean = String(mean);
      fill(change, 'Mean change in cosine similarity over the ', String(pairs), ` pair${pairs === 1 ? '' : 's'}: `,
        h('strong', { id: 'pretrained-change-value' }, `|Δ cos| = ${meanAbs.toFixed(4)}`),
        ` (mean Δ ${signed(mean)})`,
        pairs ? `; the largest, ${signed(worst.signed)}, between sentences ${worst.i + 1} and ${worst.j + 1}.` : '.',
        meanAbs < 1e-6 ? ' These weights barely notice this change on these sentences.' : '');
    } else {
      view.change = null;
      change.hidden = true;
      delete change.dataset.meanAbs;
    }
    // the numbers: the checkpoint's, and the swapped model's under them
    fill(simTable,
      h('thead', {}, h('tr', {}, h('th', {}), xlabels.map((x) => h('th', { class: 'num-cell' }, x)))),
      h('tbody', {}, list.map((s, i) => h('tr', {},
        h('th', { title: s }, ylabels[i]),
        list.map((_, j) => {
          const v = orig.sims[i * n + j], w = swap?.sims[i * n + j];
          return h('td', { class: 'num-cell', dataset: { row: String(i), col: String(j), value: String(v), ...(swap ? { swapped: String(w) } : {}) } },
            v.toFixed(2), swap ? h('span', { class: 'swapped-value' }, ` → ${w.toFixed(2)}`) : null);
        })))));
  }

  /** Ranks the sentences by cosine with the query (the checkpoint, and the swapped model). */
  function rank() {
    if (!view) return;
    const query = queryInput.value.trim();
    if (!query) {
      fill(ranking);
      rankingNote.textContent = 'Type a query to rank the sentences by similarity.';
      view.ranking = null;
      return;
    }
    let q, q2;
    try {
      q = cosineMatrix(model.p.embed(query), view.orig.emb);
      if (view.swap) q2 = cosineMatrix(swapped.p.embed(query), view.swap.emb);
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      rankingNote.textContent = `${e.code}: ${e.message}`;
      return;
    }
    const order = (scores) => Array.from(scores, (s, i) => ({ i, s })).sort((a, b) => b.s - a.s || a.i - b.i);
    const ranked = order(q);
    const swapRank = q2 ? new Map(order(q2).map((r, k) => [r.i, k])) : null;
    view.ranking = { query, order: ranked.map((r) => r.i), scores: Array.from(q), swappedScores: q2 ? Array.from(q2) : null };
    fill(ranking, ranked.map((r, k) => h('li', { dataset: { index: String(r.i), score: String(r.s), ...(q2 ? { swappedScore: String(q2[r.i]) } : {}) } },
      h('span', { class: 'score-bar', 'aria-hidden': 'true' }, h('span', { style: `width:${Math.max(0, Math.min(1, r.s)) * 100}%` })),
      h('span', { class: 'rtext' }, view.list[r.i]),
      h('span', { class: 'rscore' }, r.s.toFixed(4)),
      q2 ? h('span', { class: 'rswap', title: `the swapped model (${swapped.label})` },
        `${q2[r.i].toFixed(4)} #${swapRank.get(r.i) + 1}${swapRank.get(r.i) === k ? '' : swapRank.get(r.i) < k ? ' ↑' : ' ↓'}`) : null)));
    const moved = q2 ? ranked.filter((r, k) => swapRank.get(r.i) !== k).length : 0;
    rankingNote.textContent = `Cosine with “${shortText(query, 40)}”, highest first${q2 ? `; right: the swapped model's score and rank (${moved ? `${moved} sentence${moved === 1 ? '' : 's'} change place` : 'the same order'})` : ''}.`;
  }

  const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(4)}`;

  // ---------------------------------------------------------------- wiring

  hubForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const id = idInput.value.trim();
    if (!id) {
      showError(error, panelError('BAD_ARGUMENT', 'type a model id such as sentence-transformers/all-MiniLM-L6-v2 (owner/name), or a folder URL'));
      return;
    }
    load(id, id, { download: true });
  });
  cancelButton.addEventListener('click', cancelLoad);
  clearButton.addEventListener('click', clearModel);

  const loadFiles = (read) => {
    const p = (async () => {
      let src;
      try {
        src = await sourceFromFiles(await read());
      } catch (e) {
        showError(error, e?.code ? e : panelError('NOT_FOUND', `the dropped files could not be read: ${e?.message ?? e}`));
        return;
      }
      load(src.source, src.label);
    })();
    reading.add(p);
    p.finally(() => reading.delete(p));
  };
  const fromInput = (input) => () => {
    const list = Array.from(input.files ?? []).filter((f) => !isHidden(f.webkitRelativePath || f.name));
    input.value = ''; // picking the same folder again fires change again
    if (!list.length) return;
    // a File list keeps webkitRelativePath; keyed here so that one file is recognised too
    loadFiles(async () => new Map(list.map((f) => [f.webkitRelativePath || f.name, f])));
  };
  folderInput.addEventListener('change', fromInput(folderInput));
  filesInput.addEventListener('change', fromInput(filesInput));

  // files dropped anywhere on this section load (rather than the browser opening them); the zone lights up
  const isFileDrag = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
  root.addEventListener('dragenter', (e) => { if (isFileDrag(e)) { e.preventDefault(); drop.classList.add('over'); } });
  root.addEventListener('dragover', (e) => { if (isFileDrag(e)) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; } });
  root.addEventListener('dragleave', (e) => { if (!root.contains(e.relatedTarget)) drop.classList.remove('over'); });
  root.addEventListener('drop', (e) => {
    if (!isFileDrag(e)) return;
    e.preventDefault();
    drop.classList.remove('over');
    loadFiles(dropReader(e.dataTransfer));
  });

  embedButton.addEventListener('click', () => app.enqueue(() => { view = null; return refresh(); }));
  sentencesBox.addEventListener('input', () => app.later('pretrained-embed', TYPING_MS, refresh));
  queryInput.addEventListener('input', () => app.later('pretrained-query', TYPING_MS / 2, rank));
  for (const el of [posSel, scalingSel]) el.addEventListener('change', () => { showSwapFields(); app.later('pretrained-swap', 0, applySwap); });
  for (const el of [factorInput, origLenInput]) el.addEventListener('input', () => app.later('pretrained-swap', SWAP_MS, applySwap));

  // ---------------------------------------------------------------- for tests and the console
  Object.assign(out, {
    /** Loads a Hub id, URL, Map of files, list of Files or bytes (the page's controls do the same). */
    load: (source, label = String(source)) => load(source, label, { download: typeof source === 'string' }),
    /** Resolves once no load, embedding or swap is pending. */
    async whenIdle() {
      for (;;) {
        await Promise.all(reading);
        if (loading) await loading.promise;
        await app.whenIdle();
        if (!loading && !reading.size) return;
      }
    },
    /** The panel's data: what it loaded and what it shows. */
    info: () => JSON.parse(JSON.stringify({
      state: root.dataset.state,
      model: model && { label: model.label, family: model.p.family, config: model.p.encoder.config, recipe: { ...model.p.recipe, dense: model.p.recipe.dense.map((d) => ({ inFeatures: d.inFeatures, outFeatures: d.outFeatures })) }, maxLength: model.p.maxLength },
      swapped: swapped && { label: swapped.label, config: swapped.p.encoder.config },
      sentences: view?.list ?? null,
      sims: view ? Array.from(view.orig.sims) : null,
      swappedSims: view?.swap ? Array.from(view.swap.sims) : null,
      ranking: view?.ranking ?? null,
      change: view?.change ?? null,
      timing: view?.orig.timing ?? null,
      error: out.lastError ?? null,
    })),
  });

  return {
    async update() {}, // self-contained: it takes nothing from the page's current model
  };
}
