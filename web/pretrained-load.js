// Section 6, the "Load a checkpoint" card: a dropped folder (or its files, or
// one file written by `swapformer convert`), a picked folder, or the Hub by id
// with a progress bar per file and overall, Cancel and Clear.
//
// A download runs outside the app's queue, so the rest of the page stays live
// while it arrives; the loaded model is handed to onLoad(p, info) in the queue.
// Files dropped anywhere on the section (root) load.
import { h, fill, plural } from './dom.js';
import { DEFAULT_HUB, panelError, showError, clearError, fmtBytes, dropReader, sourceFromFiles, pickedFiles, placeholderExample } from './pretrained-shared.js';

// ids a click writes into the field and loads; sizes of their model.safetensors
const HUB_EXAMPLES = [
  ['sentence-transformers/all-MiniLM-L6-v2', '90 MB'],
  ['BAAI/bge-small-en-v1.5', '133 MB'],
  ['nomic-ai/nomic-embed-text-v1.5', '547 MB'],
];

/**
 * ctx: {app, root, state ({model}), out (progressLog, lastError), setState,
 *       onLoad(p, info) (in the queue), onClear()}.
 * Returns {el, load(source, label, {download}), cancel(), loaded(info), cleared(), pending(), busy()}.
 */
export function loadCard(ctx) {
  const { app, root, state, out, setState } = ctx;
  const { api } = app;

  const folderInput = h('input', { id: 'pretrained-folder', type: 'file', webkitdirectory: true, multiple: true, hidden: true });
  const filesInput = h('input', { id: 'pretrained-files-input', type: 'file', multiple: true, hidden: true });
  const drop = h(
    'div',
    { class: 'dropzone', id: 'pretrained-drop', role: 'group', 'aria-label': 'Drop a Hugging Face model folder here' },
    h('strong', {}, 'Drop a Hugging Face model folder here'),
    h(
      'span',
      { class: 'muted' },
      'config.json, model.safetensors, tokenizer.json and the sentence-transformers files (1_Pooling/, 2_Dense/, …), or one file written by ',
      h('code', {}, 'npx swapformer convert'),
    ),
    h(
      'span',
      { class: 'pick' },
      h('button', { type: 'button', class: 'secondary', id: 'pretrained-pick-folder', onclick: () => folderInput.click() }, 'Choose a folder…'),
      h('button', { type: 'button', class: 'secondary', id: 'pretrained-pick-files', onclick: () => filesInput.click() }, 'or files…'),
    ),
    folderInput,
    filesInput,
  );

  const idInput = h('input', {
    id: 'pretrained-id',
    type: 'text',
    class: 'mono',
    spellcheck: false,
    autocomplete: 'off',
    autocapitalize: 'off',
    'aria-describedby': 'pretrained-online',
  });
  placeholderExample(idInput, 'e.g. sentence-transformers/all-MiniLM-L6-v2', 'e.g. BAAI/bge-small-en-v1.5');
  // Load with nothing typed: what to type, in a line of its own (not an error)
  const idHint = h(
    'p',
    { class: 'caption id-hint', id: 'pretrained-id-hint', role: 'status', hidden: true },
    'Type a model id first (owner/name, e.g. sentence-transformers/all-MiniLM-L6-v2) or a folder URL, or choose one of the examples below.',
  );
  const loadButton = h('button', { id: 'pretrained-load-button', type: 'submit' }, 'Load');
  const hubInput = h('input', { id: 'pretrained-hub', type: 'url', class: 'mono', value: DEFAULT_HUB, spellcheck: false, autocomplete: 'off' });
  const revisionInput = h('input', { id: 'pretrained-revision', type: 'text', class: 'mono', value: 'main', spellcheck: false, autocomplete: 'off' });
  const cacheBox = h('input', { id: 'pretrained-cache', type: 'checkbox', checked: true });
  const onlineNote = h('p', { class: 'caption', id: 'pretrained-online' });
  const hubForm = h(
    'form',
    { class: 'hub-form', id: 'pretrained-hub-form', autocomplete: 'off' },
    h('label', { for: 'pretrained-id', class: 'hub-label' }, 'or a Hugging Face model id (or a folder URL)'),
    h('div', { class: 'hub-row' }, idInput, loadButton),
    idHint,
    h(
      'div',
      { class: 'examples', id: 'pretrained-examples' },
      h('span', { class: 'muted' }, 'For example:'),
      HUB_EXAMPLES.map(([id, size]) =>
        h(
          'button',
          {
            type: 'button',
            class: 'chip',
            title: `Loads ${id} from the Hub: about ${size} to download`,
            onclick: () => {
              idInput.value = id;
              loadId();
            },
          },
          `${id.split('/')[1]} · ${size}`,
        ),
      ),
    ),
    onlineNote,
    h(
      'details',
      { id: 'pretrained-advanced' },
      h('summary', {}, 'Hub options'),
      h(
        'div',
        { class: 'hub-options' },
        h('label', {}, 'Hub URL', hubInput),
        h('label', {}, 'Revision (branch, tag or commit)', revisionInput),
        h('label', { class: 'check' }, cacheBox, 'Keep downloads in this browser (Cache API): the next load reads them from there'),
        h('p', { class: 'caption', id: 'pretrained-hub-shared' }, 'The Hub URL and the cache choice hold for the Hub loads of section 7 too.'),
      ),
    ),
  );

  const fileName = h('span', { class: 'pname', id: 'pretrained-file-name' });
  const fileBar = h('progress', { id: 'pretrained-file-progress', max: 1, value: 0 });
  const fileBytes = h('span', { class: 'pbytes', id: 'pretrained-file-bytes' });
  const totalBar = h('progress', { id: 'pretrained-total-progress', max: 1, value: 0 });
  const totalBytes = h('span', { class: 'pbytes', id: 'pretrained-total-bytes' });
  const fileCount = h('summary', { id: 'pretrained-file-count' }, 'Files');
  const fileList = h('ul', { class: 'file-list', id: 'pretrained-file-list' });
  const cancelButton = h('button', { type: 'button', class: 'secondary', id: 'pretrained-cancel', hidden: true }, 'Cancel');
  const clearButton = h('button', { type: 'button', class: 'secondary', id: 'pretrained-clear', hidden: true }, 'Clear');
  const progress = h(
    'div',
    { class: 'pt-progress', id: 'pretrained-progress', hidden: true },
    h('div', { class: 'progress-row' }, fileName, fileBar, fileBytes),
    h('div', { class: 'progress-row total' }, h('span', { class: 'pname' }, 'All files'), totalBar, totalBytes),
    h('details', { class: 'files' }, fileCount, fileList),
  );
  const status = h('p', { class: 'pt-status', id: 'pretrained-status', role: 'status', 'aria-live': 'polite' });
  const error = h('div', { class: 'error', id: 'pretrained-error', role: 'alert', hidden: true });

  const el = h(
    'article',
    { class: 'card', id: 'pretrained-load' },
    h('h3', {}, 'Load a checkpoint'),
    drop,
    hubForm,
    progress,
    h('div', { class: 'pt-actions' }, status, cancelButton, clearButton),
    error,
  );

  /** The Hub options the page's other Hub loads take too (section 7): the Hub URL and the cache choice. */
  const hubSettings = () => ({ hubUrl: hubInput.value.trim() || DEFAULT_HUB, cache: cacheBox.checked });
  app.hubSettings = hubSettings;

  let loading = null; // {seq, controller, promise, cancelled}
  let loadSeq = 0;
  const reading = new Set(); // dropped or picked files being listed before their load starts

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
    delete progress.dataset.state;
    progress.hidden = false;
  }

  /** A load that ended without a model (an error, Cancel): no bar is left looking done; one line says what was read before. */
  function stopProgress(word) {
    progress.dataset.state = 'stopped';
    fileName.textContent = word;
    let loaded = 0;
    for (const f of files.values()) loaded += f.loaded;
    fileBytes.textContent = files.size ? `after ${plural(files.size, 'file')}, ${fmtBytes(loaded)} read` : 'before any file was read';
  }

  function onProgress(ev) {
    const { file, loaded, total } = ev;
    if (out.progressLog.length < 2000) out.progressLog.push({ file, loaded, total });
    files.set(file, { loaded, total });
    fileName.textContent = file;
    if (total) fileBar.value = Math.min(1, loaded / total);
    else fileBar.removeAttribute('value');
    fileBytes.textContent = total ? `${fmtBytes(loaded)} of ${fmtBytes(total)}` : fmtBytes(loaded);
    paintTotal();
  }

  function paintTotal(done = false) {
    let loaded = 0,
      total = 0;
    for (const f of files.values()) {
      loaded += f.loaded;
      total += f.total ?? f.loaded;
    }
    const frac = done ? 1 : total ? loaded / total : 0;
    totalBar.value = frac;
    totalBytes.textContent = `${Math.floor(100 * frac)}% · ${plural(files.size, 'file')} · ${fmtBytes(loaded)}${done ? '' : ` of ${fmtBytes(total)} so far`}`;
    fileCount.textContent = `Files read (${files.size})`;
    fill(
      fileList,
      [...files].map(([name, f]) =>
        h(
          'li',
          { class: f.total !== null && f.loaded >= f.total ? 'done' : '' },
          h('span', { class: 'mono' }, name),
          h('span', { class: 'muted' }, f.total !== null && f.loaded >= f.total ? fmtBytes(f.total) : `${fmtBytes(f.loaded)}…`),
        ),
      ),
    );
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
    stopProgress('Cancelled');
    status.textContent = state.model ? `Cancelled: still showing ${state.model.label}.` : 'Cancelled.';
    setState(state.model ? 'ready' : 'empty');
  }

  /** Loads a source (a Hub id, a URL, a Map of files, a list of Files, or bytes) and hands it to onLoad. */
  function load(source, label, { download = false } = {}) {
    if (loading) cancelLoad();
    idHint.hidden = true;
    const seq = ++loadSeq;
    const controller = new AbortController();
    resetProgress();
    clearError(error);
    setState('loading');
    status.textContent = `Loading ${label}…`;
    cancelButton.hidden = false;
    loadButton.disabled = true;
    const options = {
      onProgress: (ev) => {
        if (seq === loadSeq) onProgress(ev);
      },
    };
    if (download) {
      Object.assign(options, hubSettings());
      options.revision = revisionInput.value.trim() || 'main';
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
        stopProgress('Failed');
        showError(error, e?.code ? e : panelError('ERROR', e?.message ?? String(e)));
        status.textContent = state.model ? `${label} could not be loaded: still showing ${state.model.label}.` : `${label} could not be loaded.`;
        out.lastError = { code: e?.code ?? 'ERROR', message: e?.message ?? String(e) };
        setState(state.model ? 'ready' : 'error');
        return;
      }
      if (seq !== loadSeq) {
        p.dispose();
        return;
      }
      const loadMs = performance.now() - t0;
      paintTotal(true);
      fileName.textContent = 'Each file';
      fileBar.value = 1;
      fileBytes.textContent = `${files.size} of ${files.size} complete`;
      let bytes = 0;
      for (const f of files.values()) bytes += f.total ?? f.loaded;
      await app.enqueue(() => ctx.onLoad(p, { label: p.source && download ? p.source : label, loadMs, bytes, fileCount: files.size, download }));
      if (seq === loadSeq) loading = null;
    })();
    loading = { seq, controller, promise, cancelled: false };
    return promise;
  }

  /** The panel adopted a model (in the queue): the buttons and the status line say so. */
  function loaded(info) {
    cancelButton.hidden = true;
    clearButton.hidden = false;
    loadButton.disabled = false;
    status.textContent = `Loaded ${info.label} in ${(info.loadMs / 1000).toFixed(2)} s (${
      info.download ? `${plural(info.fileCount, 'file')}, ${fmtBytes(info.bytes)} downloaded or from the cache` : `${fmtBytes(info.bytes)} read`
    }).`;
  }

  /** The panel cleared its model. */
  function cleared() {
    progress.hidden = true;
    clearButton.hidden = true;
    clearError(error);
    status.textContent = '';
  }

  // ---------------------------------------------------------------- wiring

  /** Loads the id (or URL) in the field; an empty field gets the hint instead. */
  function loadId() {
    const id = idInput.value.trim();
    if (!id) {
      idHint.hidden = false;
      idInput.focus();
      return;
    }
    load(id, id, { download: true });
  }
  hubForm.addEventListener('submit', (e) => {
    e.preventDefault();
    loadId();
  });
  idInput.addEventListener('input', () => {
    idHint.hidden = true;
  });
  cancelButton.addEventListener('click', cancelLoad);
  clearButton.addEventListener('click', () => ctx.onClear());

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
    const map = pickedFiles(input);
    if (map) loadFiles(async () => map);
  };
  folderInput.addEventListener('change', fromInput(folderInput));
  filesInput.addEventListener('change', fromInput(filesInput));

  // files dropped anywhere on this section load (rather than the browser opening them); the zone lights up
  const isFileDrag = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
  root.addEventListener('dragenter', (e) => {
    if (isFileDrag(e)) {
      e.preventDefault();
      drop.classList.add('over');
    }
  });
  root.addEventListener('dragover', (e) => {
    if (isFileDrag(e)) {
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    }
  });
  root.addEventListener('dragleave', (e) => {
    if (!root.contains(e.relatedTarget)) drop.classList.remove('over');
  });
  root.addEventListener('drop', (e) => {
    if (!isFileDrag(e)) return;
    e.preventDefault();
    drop.classList.remove('over');
    loadFiles(dropReader(e.dataTransfer));
  });

  return {
    el,
    load,
    cancel: cancelLoad,
    loaded,
    cleared,
    /** The loads and file listings in flight. */
    pending: () => [...reading, ...(loading ? [loading.promise] : [])],
    busy: () => !!loading || reading.size > 0,
  };
}
