// Section 7, "Positions on a real model": the lessons' first experiment on a
// pretrained checkpoint. One model, three variants on the same weights
// (Pretrained.withConfig): its own positions, positions removed ('none', and
// no relative bias), and another plugin swapped in (listPlugins()). For two
// sentences with the same tokens in another order ("dog bites man" / "man
// bites dog") it compares the last hidden states as sets of rows, bit for bit
// (without positions they are the same rows permuted); for a fill-mask model
// it shows the predictions at [MASK] in two texts, for a classifier its class
// scores, for a cross-encoder a ranking of passages, each variant side by side.
//
// Offline it loads the shipped masked-LM BERT (models/wordnet-bert, trained by
// tools/train_mlm.py) and shows its measured fill-mask accuracy per variant
// (models/results.json "mlm"); a dropped folder or a Hub id replaces it. Every
// pass is async (forwardAsync, fillMaskAsync, classifyAsync, rankAsync) and runs
// in the app's queue. For tests and the console: app.positionsReal.
import { h, fill, setOptions, plotBox, errorText, scrollTable, plural } from './dom.js';
import { barChart } from './plots.js';
import { dropReader, sourceFromFiles, pickedFiles, placeholderExample } from './pretrained-shared.js';

const MODELS = new URL('../models/', import.meta.url);
const SHIPPED = new URL('wordnet-bert/', MODELS);
const SHIPPED_LABEL = 'models/wordnet-bert (shipped)';
// the folder's files, fetched by name: a URL folder would also ask for the sentence-transformers
// files (modules.json), which this masked LM has not, and log their 404s
const SHIPPED_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];
const DEFAULTS = {
  a: 'dog bites man',
  b: 'man bites dog',
  maskA: 'the roman catholic [MASK]',
  maskB: 'the [MASK] catholic roman', // tools/evaluate-mlm.mjs WORD_ORDER_EXAMPLES
  query: 'who bit the man?',
  passages: ['the dog bit the man.', 'the man bit the dog.', 'a dog barked all night.', 'the man walked home.'],
};
// swapped in, these plugins start from a zero table: the same as no positions at all (disentangled's zero
// table leaves only its projections' biases, the same for every distance: no position either)
const ZERO_START = new Set(['learned', 't5', 'disentangled', 'none']);
const PREFERRED_SWAP = ['alibi', 'sinusoidal', 'rope'];
const TYPING_MS = 250;
const VARIANT_COLORS = ['#1f77b4', '#d62728', '#2ca02c'];

const panelError = (code, message) => Object.assign(new Error(message), { code });
const plainError = (e) => ({ code: e?.code ?? 'ERROR', message: e?.message ?? String(e) });
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const fmt = (x) => (x === 0 ? '0' : x < 1e-3 ? x.toExponential(1) : x.toPrecision(3));

// ------------------------------------------------------------------ the comparison

/** For each position of `to`, the first unused position of `from` with the same id (null: not a rearrangement). */
export function matchTokens(from, to) {
  if (from.length !== to.length) return null;
  const used = new Array(from.length).fill(false),
    perm = [];
  for (const id of to) {
    const s = Array.prototype.findIndex.call(from, (f, i) => !used[i] && f === id);
    if (s < 0) return null;
    used[s] = true;
    perm.push(s);
  }
  return perm;
}

/** The rows of a [1, T, C] output as strings of their float bits, sorted: equal lists = equal sets of rows. */
function rowSet(out) {
  const [, T, C] = out.shape,
    bits = new Uint32Array(out.data.buffer, out.data.byteOffset, T * C),
    rows = [];
  for (let t = 0; t < T; t++) rows.push(Array.prototype.join.call(bits.subarray(t * C, (t + 1) * C), ','));
  return rows.sort();
}

/**
 * A's and B's last hidden states: the permutation that matches B's tokens to A's,
 * the largest |Δ| per token of B against its matched row of A, and whether the
 * two sets of rows are equal bit for bit.
 */
export function compareRows(a, b) {
  const perm = matchTokens(a.ids, b.ids);
  const C = a.out.shape[2];
  const perToken =
    perm &&
    perm.map((s, t) => {
      let m = 0;
      for (let c = 0; c < C; c++) m = Math.max(m, Math.abs(a.out.data[s * C + c] - b.out.data[t * C + c]));
      return m;
    });
  const ra = rowSet(a.out),
    rb = rowSet(b.out);
  const setsEqual = ra.length === rb.length && ra.every((r, i) => r === rb[i]);
  return { perm, perToken, maxDelta: perToken ? Math.max(0, ...perToken) : null, setsEqual };
}

/** Whether two fill-mask / class lists say exactly the same (tokens and scores, bit for bit). */
const sameList = (x, y, key) => x.length === y.length && x.every((e, i) => e[key] === y[i][key] && e.score === y[i].score);

// ------------------------------------------------------------------ the panel

export function mountPositionsReal(root, app) {
  const body = root.querySelector('#positions-real-body');
  const { api } = app;

  // ---------------------------------------------------------------- the model card
  const status = h('p', { class: 'pt-status', id: 'pr-status', role: 'status', 'aria-live': 'polite' }, 'The shipped model loads when the page has settled.');
  const error = h('div', { class: 'error', id: 'pr-error', role: 'alert', hidden: true });
  const summary = h('dl', { class: 'kv', id: 'pr-summary' });
  const folderInput = h('input', { id: 'pr-folder', type: 'file', webkitdirectory: true, multiple: true, hidden: true });
  const shippedButton = h('button', { type: 'button', class: 'secondary', id: 'pr-shipped' }, 'The shipped BERT');
  const folderButton = h('button', { type: 'button', class: 'secondary', id: 'pr-pick-folder', onclick: () => folderInput.click() }, 'Choose a folder…');
  const idInput = h('input', {
    id: 'pr-hub-id',
    type: 'text',
    class: 'mono',
    spellcheck: false,
    autocomplete: 'off',
    autocapitalize: 'off',
    'aria-label': 'Hugging Face model id',
  });
  placeholderExample(idInput, 'e.g. cross-encoder/ms-marco-MiniLM-L6-v2', 'e.g. owner/name');
  const hubForm = h('form', { class: 'hub-row', id: 'pr-hub-form' }, idInput, h('button', { type: 'submit', id: 'pr-hub-load' }, 'Load'));
  const hubHint = h(
    'p',
    { class: 'caption id-hint', id: 'pr-hub-hint', role: 'status', hidden: true },
    'Type a model id first (owner/name), e.g. cross-encoder/ms-marco-MiniLM-L6-v2 for the ranking card, about 90 MB.',
  );
  const swapSel = h('select', { id: 'pr-swap' });
  const swapNote = h('p', { class: 'caption', id: 'pr-swap-note' });

  // ---------------------------------------------------------------- the experiment cards
  const textA = h('input', { id: 'pr-text-a', type: 'text', value: DEFAULTS.a, spellcheck: false, autocomplete: 'off' });
  const textB = h('input', { id: 'pr-text-b', type: 'text', value: DEFAULTS.b, spellcheck: false, autocomplete: 'off' });
  const orderMsg = h('p', { class: 'input-msg', id: 'pr-order-msg', hidden: true });
  const tokensLine = h('p', { class: 'caption', id: 'pr-tokens' });
  const verdicts = h('div', { class: 'pr-variants', id: 'pr-verdicts' });
  const deltaPlot = plotBox('Largest difference per token of B against the same token of A, for each variant');
  deltaPlot.canvas.id = 'pr-delta-chart';
  const deltaCaption = h('p', { class: 'caption', id: 'pr-delta-caption' });
  const deltaTable = h('table', { class: 'numbers', id: 'pr-delta-table' });
  const classesBox = h('div', { class: 'pr-variants', id: 'pr-classes' });
  const classesBody = h('div', { class: 'pt-stack', hidden: true }, h('h4', {}, "The classifier's scores for A and B"), classesBox);

  const maskA = h('input', { id: 'pr-mask-a', type: 'text', value: DEFAULTS.maskA, spellcheck: false, autocomplete: 'off' });
  const maskB = h('input', { id: 'pr-mask-b', type: 'text', value: DEFAULTS.maskB, spellcheck: false, autocomplete: 'off' });
  const fillMsg = h('p', { class: 'input-msg', id: 'pr-fill-msg', hidden: true });
  const fillBox = h('div', { class: 'pr-variants', id: 'pr-fill' });
  const fillNote = h('p', { class: 'note', id: 'pr-fill-wait' }, 'Fill-mask needs a masked-LM checkpoint (…ForMaskedLM), such as the shipped BERT.');

  const queryInput = h('input', { id: 'pr-query', type: 'text', value: DEFAULTS.query, spellcheck: false, autocomplete: 'off' });
  const passagesBox = h('textarea', { id: 'pr-passages', rows: 4, spellcheck: false }, DEFAULTS.passages.join('\n'));
  const rankMsg = h('p', { class: 'input-msg', id: 'pr-rank-msg', hidden: true });
  const rankBox = h('div', { class: 'pr-variants', id: 'pr-rank' });
  const rankNote = h(
    'p',
    { class: 'note', id: 'pr-rank-wait' },
    'Ranking needs a cross-encoder (a …ForSequenceClassification with one output, e.g. cross-encoder/ms-marco-MiniLM-L6-v2 from the Hub, about 90 MB): load one above or drop its folder on this section. The shipped BERT is a masked LM.',
  );
  const rankInputs = h(
    'div',
    { class: 'pt-stack', hidden: true },
    h('label', { class: 'pt-label', for: 'pr-query' }, 'Query'),
    queryInput,
    h('label', { class: 'pt-label', for: 'pr-passages' }, 'Passages, one per line'),
    passagesBox,
    rankMsg,
  );

  const accPlot = plotBox('Fill-mask accuracy on held-out sentences, per variant');
  accPlot.canvas.id = 'pr-accuracy-chart';
  const accCaption = h('p', { class: 'caption', id: 'pr-accuracy-caption' });
  const accTable = h('table', { class: 'numbers', id: 'pr-accuracy-table' });
  const accNote = h('p', { class: 'note', id: 'pr-accuracy-wait' }, 'Loading the measured accuracy (models/results.json)…');
  const accNumbers = h('details', { id: 'pr-accuracy-numbers' }, h('summary', {}, 'The numbers'), scrollTable(accTable));

  const labelled = (text, input) => h('label', { class: 'pr-field' }, text, input);
  fill(
    body,
    h(
      'div',
      { class: 'pt-grid' },
      h(
        'article',
        { class: 'card', id: 'pr-model' },
        h('h3', {}, 'The model and its three variants'),
        status,
        summary,
        h('div', { class: 'pt-actions' }, shippedButton, folderButton, folderInput),
        h(
          'label',
          { class: 'pt-label', for: 'pr-hub-id' },
          "or a Hugging Face id (fill-mask, classifier or cross-encoder; downloaded when you press Load, from section 6's Hub URL)",
        ),
        hubForm,
        hubHint,
        h('label', { class: 'pr-field' }, 'Swapped scheme (the third variant)', swapSel),
        swapNote,
        error,
      ),
      h(
        'article',
        { class: 'card', id: 'pr-accuracy' },
        h('h3', {}, 'Measured: fill-mask on held-out sentences'),
        accNote,
        accPlot.box,
        accCaption,
        accNumbers,
      ),
    ),
    h(
      'article',
      { class: 'card', id: 'pr-order' },
      h('h3', {}, 'Same words, another order'),
      h(
        'p',
        { class: 'caption' },
        "The lessons' first experiment: B has A's tokens in another order. Without positions attention sees a bag of tokens, so B's last hidden states are A's rows permuted, bit for bit, and nothing downstream can tell the sentences apart.",
      ),
      h('div', { class: 'pr-inputs' }, labelled('Sentence A', textA), labelled('Sentence B', textB)),
      orderMsg,
      tokensLine,
      verdicts,
      deltaPlot.box,
      deltaCaption,
      h('details', {}, h('summary', {}, 'The numbers'), scrollTable(deltaTable)),
      classesBody,
    ),
    h(
      'article',
      { class: 'card', id: 'pr-fill-card' },
      h('h3', {}, 'Fill the mask'),
      h('div', { class: 'pr-inputs' }, labelled('Text 1', maskA), labelled('Text 2', maskB)),
      fillMsg,
      fillNote,
      fillBox,
    ),
    h('article', { class: 'card', id: 'pr-rank-card' }, h('h3', {}, 'Rerank passages, with and without positions'), rankNote, rankInputs, rankBox),
  );

  // ---------------------------------------------------------------- state
  let model = null; // {p, label, shipped, variants: [{key, label, p | null, error}]}
  const pending = new Set(); // loads in flight (promises)
  let loadSeq = 0;
  let started = false;
  let results = null; // models/results.json, or {error}
  let view = null; // the last run's numbers (info())
  const out = {};
  app.positionsReal = out;
  const setState = (s) => {
    root.dataset.state = s;
  };
  setState('empty');

  function showError(e) {
    fill(error, h('span', { class: 'code' }, e?.code ?? 'ERROR'), e?.message ?? String(e));
    error.dataset.code = e?.code ?? 'ERROR';
    error.hidden = false;
  }
  const clearError = () => {
    error.hidden = true;
    delete error.dataset.code;
  };
  const setMsg = (el, text) => {
    el.textContent = text ?? '';
    el.hidden = !text;
  };

  // ---------------------------------------------------------------- loading

  /** Loads a source (URL, Hub id, Map of files, bytes) outside the queue, then adopts it in the queue. */
  function load(source, label, options = {}) {
    const seq = ++loadSeq;
    setState('loading');
    status.textContent = `Loading ${label}…`;
    clearError();
    const onProgress = ({ file, loaded, total }) => {
      if (seq === loadSeq && total) status.textContent = `Loading ${label}: ${file}, ${(loaded / 2 ** 20).toFixed(1)} of ${(total / 2 ** 20).toFixed(1)} MB`;
    };
    return track(
      (async () => {
        let p;
        try {
          p = await api.loadPretrained(source, { onProgress, ...options });
        } catch (e) {
          if (seq !== loadSeq) return;
          showError(e?.code ? e : panelError('ERROR', e?.message ?? String(e)));
          status.textContent = model ? `${label} could not be loaded: still showing ${model.label}.` : `${label} could not be loaded.`;
          setState(model ? 'ready' : 'error');
          return;
        }
        if (seq !== loadSeq) {
          p.dispose();
          return;
        }
        await app.enqueue(() => adopt(p, label, label === SHIPPED_LABEL));
      })(),
    );
  }

  function track(promise) {
    pending.add(promise);
    promise.finally(() => pending.delete(promise));
    return promise;
  }

  /** The shipped BERT: its files fetched from models/wordnet-bert/ and loaded as a map of files. */
  const loadShipped = () =>
    track(
      (async () => {
        let files;
        try {
          files = new Map(
            await Promise.all(
              SHIPPED_FILES.map(async (name) => {
                const res = await fetch(new URL(name, SHIPPED));
                if (!res.ok) throw panelError('NOT_FOUND', `models/wordnet-bert/${name}: HTTP ${res.status}`);
                return [name, new Uint8Array(await res.arrayBuffer())];
              }),
            ),
          );
        } catch (e) {
          showError(e?.code ? e : panelError('NETWORK', e?.message ?? String(e)));
          status.textContent = model ? `The shipped BERT could not be read: still showing ${model.label}.` : 'The shipped BERT could not be read.';
          setState(model ? 'ready' : 'error');
          return;
        }
        await load(files, SHIPPED_LABEL);
      })(),
    );

  function disposeModel() {
    for (const v of model?.variants ?? []) if (v.p && v.p !== model.p) v.p.dispose();
    model?.p.dispose();
    model = null;
  }

  /** The config changes that take every position signal away: position 'none', and no relative bias. */
  function noneChanges(config) {
    return config.relativeBias && config.relativeBias !== 'none' ? { position: 'none', relativeBias: 'none' } : { position: 'none' };
  }

  /** The swap choices: every listed plugin but the checkpoint's own and those that start from zero. */
  function setupSwap(config) {
    const choices = app.plugins.position.filter((x) => x !== config.position && !ZERO_START.has(x));
    const keep = swapSel.value;
    setOptions(swapSel, choices);
    swapSel.value = choices.includes(keep) ? keep : (PREFERRED_SWAP.find((x) => choices.includes(x)) ?? choices[0]);
    swapSel.disabled = !choices.length;
  }

  async function variant(p, key, label, changes) {
    try {
      return { key, label, changes, p: await p.withConfig(changes) };
    } catch (e) {
      if (!(e instanceof api.SwapformerError)) throw e;
      return { key, label, changes, p: null, error: e };
    }
  }

  async function buildVariants(p) {
    const c = p.encoder.config;
    const own = `its own: ${c.position}${c.relativeBias && c.relativeBias !== 'none' ? ` + ${c.relativeBias} bias` : ''}`;
    const swap = swapSel.value;
    return [
      { key: 'checkpoint', label: own, changes: null, p },
      await variant(p, 'none', 'positions removed', noneChanges(c)),
      swap
        ? await variant(p, 'swapped', `${swap} swapped in`, { position: swap })
        : { key: 'swapped', label: 'no other plugin', p: null, error: panelError('UNSUPPORTED', 'no other position plugin to swap in') },
    ];
  }

  async function adopt(p, label, shipped) {
    disposeModel();
    setupSwap(p.encoder.config);
    model = { p, label, shipped, variants: await buildVariants(p) };
    // the defaults' [MASK] becomes this tokenizer's mask token (<mask> for RoBERTa)
    const mask = p.tokenizerView.maskTokenId;
    const maskToken = mask === null || mask === undefined ? null : p.tokenizer.idToToken(mask);
    for (const [el, text] of [
      [maskA, DEFAULTS.maskA],
      [maskB, DEFAULTS.maskB],
    ]) {
      if (maskToken && /\[MASK\]|<mask>/.test(el.value) && (el.value === text || el.value === text.replace('[MASK]', '<mask>')))
        el.value = text.replace('[MASK]', maskToken);
    }
    showSummary();
    describeSwap();
    status.textContent = `Loaded ${label}.`;
    await run();
    setState('ready');
  }

  function showSummary() {
    const { p } = model,
      c = p.encoder.config,
      hf = p.hfConfig ?? {};
    const params = Object.values(p.encoder.weightShapes()).reduce((s, shape) => s + shape.reduce((x, y) => x * y, 1), 0);
    const head = c.head
      ? c.head.task === 'sequence'
        ? `${c.head.labels} label${c.head.labels === 1 ? '' : 's'}${c.head.labels === 1 ? ' (a cross-encoder score)' : ''}`
        : c.head.task
      : 'none';
    fill(
      summary,
      h('dt', {}, 'Source'),
      h('dd', { id: 'pr-source' }, model.label),
      h('dt', {}, 'Task'),
      h(
        'dd',
        { id: 'pr-task', dataset: { task: p.task } },
        p.task,
        hf.architectures?.[0] ? h('span', { class: 'muted' }, ` (${hf.architectures[0]}; head: ${head})`) : null,
      ),
      h('dt', {}, 'Size'),
      h(
        'dd',
        {},
        `${plural(c.layers, 'layer')} · dModel ${c.dModel} · ${plural(c.heads, 'head')} · vocabulary ${c.vocabSize.toLocaleString('en-US')} · ${params.toLocaleString('en-US')} parameters`,
      ),
      h('dt', {}, 'Positions'),
      h(
        'dd',
        { id: 'pr-position' },
        h('code', {}, c.position),
        c.relativeBias && c.relativeBias !== 'none' ? [' + ', h('code', {}, c.relativeBias), ' relative bias'] : null,
        c.localLayers?.length
          ? h('span', { class: 'muted' }, ` (and a local-attention window on ${plural(c.localLayers.length, 'layer')}: it depends on |i − j|)`)
          : null,
      ),
    );
  }

  function describeSwap() {
    const sw = model.variants[2];
    const parts = [`Same weights, ${sw.label}: never trained this way. `];
    const own = model.p.encoder.config.position;
    parts.push(
      own === 'learned' || own === 't5' ? `Its trained '${own}' table is left out. ` : own === 'none' ? 'It had no positions. ' : `Its '${own}' is replaced. `,
    );
    parts.push('learned and t5 are not offered: swapped in, their tables start at zero, the same as no positions.');
    if (sw.error) parts.push(` ${errorText(sw.error)}`);
    swapNote.textContent = parts.join('');
  }

  async function changeSwap() {
    if (!model) return;
    const old = model.variants[2];
    const swap = swapSel.value;
    const m = model,
      fresh = await variant(m.p, 'swapped', `${swap} swapped in`, { position: swap });
    if (model !== m) {
      fresh.p?.dispose();
      return;
    }
    if (old.p) old.p.dispose();
    model.variants[2] = fresh;
    describeSwap();
    await run();
  }

  // ---------------------------------------------------------------- one run

  function readTexts() {
    return {
      a: textA.value.trim(),
      b: textB.value.trim(),
      maskA: maskA.value.trim(),
      maskB: maskB.value.trim(),
      query: queryInput.value.trim(),
      passages: passagesBox.value
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
    };
  }

  /** The last hidden states of `ids` under variant p (async: the page stays responsive). */
  async function hidden(p, enc) {
    const out = await p.encoder.forwardAsync([enc.ids], p.encoder.config.typeVocabSize > 1 ? { typeIds: [enc.typeIds] } : undefined);
    return { ids: enc.ids, out: { data: out.data, shape: out.shape } };
  }

  /** Runs a card's passes for every variant; a SwapformerError (bad input) becomes the card's message. */
  async function perVariant(fn) {
    const rows = [];
    for (const v of model.variants) {
      if (!v.p) {
        rows.push({ key: v.key, error: plainError(v.error) });
        continue;
      }
      try {
        rows.push({ key: v.key, value: await fn(v.p) });
      } catch (e) {
        if (!(e instanceof api.SwapformerError)) throw e;
        rows.push({ key: v.key, error: plainError(e) });
      }
    }
    return rows;
  }

  async function run() {
    if (!model) return;
    const m = model,
      p = m.p,
      t = readTexts();
    const next = {
      task: p.task,
      variants: m.variants.map((v) => ({ key: v.key, label: v.label, changes: v.changes ?? null, error: v.error ? errorText(v.error) : null })),
    };

    // same words, another order
    let encA = null,
      encB = null,
      orderError = null;
    if (!t.a || !t.b) orderError = 'Type two sentences.';
    else {
      const limit = Number.isFinite(p.maxLength) ? p.maxLength : undefined;
      encA = p.tokenizer.encode(t.a, { maxLength: limit });
      encB = p.tokenizer.encode(t.b, { maxLength: limit });
    }
    if (encA) {
      const rows = await perVariant(async (q) => compareRows(await hidden(q, encA), await hidden(q, encB)));
      next.order = { a: t.a, b: t.b, tokensA: encA.tokens, tokensB: encB.tokens, rows };
      if (!rows[0].value?.perm) orderError = "B's tokens are not a rearrangement of A's: the comparison needs the same tokens in another order.";
      if (p.task === 'text-classification')
        next.classes = await perVariant(async (q) => [await q.classifyAsync(t.a, { topK: null }), await q.classifyAsync(t.b, { topK: null })]);
    }
    next.orderError = orderError;
    if (p.task === 'fill-mask')
      next.fill = { texts: [t.maskA, t.maskB], rows: await perVariant(async (q) => [await q.fillMaskAsync(t.maskA), await q.fillMaskAsync(t.maskB)]) };
    if (p.task === 'text-classification' && p.encoder.config.head.labels === 1) {
      next.rank =
        t.query && t.passages.length
          ? { query: t.query, passages: t.passages, rows: await perVariant((q) => q.rankAsync(t.query, t.passages)) }
          : { error: 'Type a query and at least one passage.' };
    }
    if (model !== m) return; // replaced while the passes ran: its own run follows
    view = next;
    render();
  }

  // ---------------------------------------------------------------- drawing

  const variantLabel = (key) => view.variants.find((v) => v.key === key).label;
  const rowError = (r) => h('p', { class: 'errbox' }, h('span', { class: 'code' }, r.error.code), ' ', r.error.message);

  function render() {
    renderOrder();
    renderClasses();
    renderFill();
    renderRank();
    renderAccuracy();
  }

  function verdictOf(key, cmp) {
    // the badge: green / red where the lesson predicts the answer (no positions: the same rows), grey elsewhere
    const badge = key === 'none' ? (cmp.setsEqual ? 'pass' : 'fail') : 'wait';
    if (cmp.setsEqual) {
      const moved = cmp.perm.map((s, t) => (s === t ? null : `${t}←${s}`)).filter(Boolean);
      return {
        badge,
        text: `Exact permutation: B's ${cmp.perm.length} rows are A's rows, bit for bit, as sets${moved.length ? ` (B row ← A row: ${moved.join(', ')})` : ' (the same order)'}.`,
      };
    }
    return {
      badge,
      text: `After matching each token of B to the same token of A, the largest |Δ| is ${fmt(cmp.maxDelta)}; as sets of rows, A and B are not equal.`,
    };
  }

  function renderOrder() {
    const o = view.order;
    setMsg(orderMsg, view.orderError);
    tokensLine.textContent = o ? `A: ${o.tokensA.join(' ')} · B: ${o.tokensB.join(' ')}` : '';
    if (!o || !o.rows[0].value?.perm) {
      fill(verdicts);
      fill(deltaTable);
      deltaPlot.box.hidden = true;
      deltaCaption.textContent = '';
      return;
    }
    fill(
      verdicts,
      o.rows.map((r) => {
        if (r.error) return h('div', { class: 'pr-variant', dataset: { variant: r.key } }, h('h4', {}, variantLabel(r.key)), rowError(r));
        const v = verdictOf(r.key, r.value);
        return h(
          'div',
          {
            class: 'pr-variant',
            id: `pr-verdict-${r.key}`,
            dataset: { variant: r.key, setsEqual: String(r.value.setsEqual), maxDelta: String(r.value.maxDelta) },
          },
          h('h4', {}, variantLabel(r.key)),
          h(
            'p',
            { class: `pr-verdict ${r.value.setsEqual ? 'same' : 'differ'}` },
            h('span', { class: `badge ${v.badge}` }, r.value.setsEqual ? 'same rows' : 'differ'),
            ' ',
            v.text,
          ),
        );
      }),
    );
    const groups = o.tokensB.map((tok, t) => `${t} ${tok}`);
    const ok = o.rows.filter((r) => r.value);
    const top = Math.max(1e-6, ...ok.flatMap((r) => r.value.perToken));
    deltaPlot.box.hidden = false;
    const summaryText = ok
      .map((r) => `${variantLabel(r.key)}: ${r.value.setsEqual ? 'the same rows, bit for bit' : `largest |Δ| ${fmt(r.value.maxDelta)}`}`)
      .join('; ');
    barChart(deltaPlot.canvas, {
      groups,
      groupsShort: o.tokensB.map((_, t) => String(t)),
      series: ok.map((r) => ({ label: variantLabel(r.key), color: VARIANT_COLORS[o.rows.indexOf(r)], values: r.value.perToken })),
      yRange: [0, top * 1.08],
      yLabel: 'largest |Δ|',
      xLabel: 'token of B',
      height: 240,
      valueFormat: (x) => fmt(x),
      summary: `${summaryText}. The numbers are in the table below.`,
    });
    deltaCaption.textContent = `Bars: for each token of B, the largest |Δ| over the ${model.p.encoder.config.dModel} features of its last hidden state against the row of the same token in A. ${summaryText}.`;
    fill(
      deltaTable,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'token of B'),
          h('th', {}, 'row of A'),
          ok.map((r) => h('th', { class: 'num-cell' }, variantLabel(r.key))),
        ),
      ),
      h(
        'tbody',
        {},
        o.tokensB.map((tok, t) =>
          h(
            'tr',
            {},
            h('td', {}, `${t} ${tok}`),
            h('td', {}, String(ok[0].value.perm[t])),
            ok.map((r) => h('td', { class: 'num-cell', dataset: { variant: r.key, token: String(t) } }, fmt(r.value.perToken[t]))),
          ),
        ),
      ),
    );
  }

  function scoreList(items, key, what) {
    return h(
      'ol',
      { class: 'pr-scores' },
      items.map((x) =>
        h(
          'li',
          { dataset: { [key]: String(x[key]), score: String(x.score) } },
          h('span', { class: 'pr-token' }, String(x[what])),
          h('span', { class: 'score-bar', 'aria-hidden': 'true' }, h('span', { style: `width:${(100 * Math.max(0, Math.min(1, x.score))).toFixed(1)}%` })),
          h('span', { class: 'pr-score' }, x.score.toFixed(4)),
        ),
      ),
    );
  }

  function pairBlock(r, label1, label2, render1, same, sameText) {
    if (r.error) return h('div', { class: 'pr-variant', dataset: { variant: r.key } }, h('h4', {}, variantLabel(r.key)), rowError(r));
    return h(
      'div',
      { class: 'pr-variant', dataset: { variant: r.key, same: String(same) } },
      h('h4', {}, variantLabel(r.key), same ? h('span', { class: 'badge pass' }, 'identical') : null),
      h(
        'div',
        { class: 'pr-pair' },
        h('div', {}, h('p', { class: 'caption' }, label1), render1(r.value[0])),
        h('div', {}, h('p', { class: 'caption' }, label2), render1(r.value[1])),
      ),
      same ? h('p', { class: 'caption' }, sameText) : null,
    );
  }

  function renderClasses() {
    classesBody.hidden = !view.classes;
    if (!view.classes) return fill(classesBox);
    fill(
      classesBox,
      view.classes.map((r) =>
        pairBlock(
          r,
          'A',
          'B',
          (list) => scoreList(list, 'label', 'label'),
          !r.error && sameList(r.value[0], r.value[1], 'label'),
          'The same scores for A and B: without positions the classifier cannot tell them apart.',
        ),
      ),
    );
  }

  function renderFill() {
    const f = view.fill;
    fillNote.hidden = !!f;
    if (!f) {
      fill(fillBox);
      setMsg(fillMsg, null);
      return;
    }
    const bad = f.rows.find((r) => r.error && r.key === 'checkpoint');
    setMsg(fillMsg, bad ? errorText(bad.error) : null);
    if (bad) return fill(fillBox);
    const first = (x) => (Array.isArray(x[0]) ? x[0] : x); // several masks: the first one's
    fill(
      fillBox,
      f.rows.map((r) => {
        const v = r.error ? r : { ...r, value: [first(r.value[0]), first(r.value[1])] };
        return pairBlock(
          v,
          'Text 1',
          'Text 2',
          (list) => scoreList(list, 'token', 'tokenStr'),
          !r.error && sameList(v.value[0], v.value[1], 'token'),
          'The same predictions for both texts: without positions the mask has no place, only company.',
        );
      }),
    );
  }

  function renderRank() {
    const r = view.rank;
    rankNote.hidden = !!r;
    rankInputs.hidden = !r;
    if (!r) return fill(rankBox);
    setMsg(rankMsg, r.error ?? null);
    if (r.error) return fill(rankBox);
    fill(
      rankBox,
      r.rows.map((row) => {
        if (row.error) return h('div', { class: 'pr-variant', dataset: { variant: row.key } }, h('h4', {}, variantLabel(row.key)), rowError(row));
        const scores = row.value.map((x) => x.score);
        const ties = scores.filter((s, i) => scores.indexOf(s) !== i).length;
        return h(
          'div',
          { class: 'pr-variant', dataset: { variant: row.key, ties: String(ties) } },
          h('h4', {}, variantLabel(row.key), ties ? h('span', { class: 'badge wait' }, `${ties} exact tie${ties === 1 ? '' : 's'}`) : null),
          h(
            'ol',
            { class: 'pr-scores' },
            row.value.map((x) =>
              h(
                'li',
                { dataset: { corpusId: String(x.corpusId), score: String(x.score) } },
                h('span', { class: 'pr-token' }, r.passages[x.corpusId]),
                h('span', { class: 'pr-score' }, x.score.toFixed(4)),
              ),
            ),
          ),
        );
      }),
    );
  }

  async function fetchResults() {
    if (results) return;
    try {
      const res = await fetch(new URL('results.json', MODELS));
      if (!res.ok) throw panelError('NOT_FOUND', `models/results.json: HTTP ${res.status}`);
      results = await res.json();
    } catch (e) {
      results = { error: e };
    }
  }

  function renderAccuracy() {
    const mlm = results?.mlm;
    const shown = !!(mlm && model?.shipped);
    accPlot.box.hidden = !shown;
    accNumbers.hidden = !shown; // no table to open for a model that was not measured
    accNote.hidden = shown;
    if (!shown) {
      accNote.textContent = results?.error
        ? `models/results.json could not be read: ${errorText(results.error)}`
        : !mlm
          ? 'models/results.json has no fill-mask measurement (npm run evaluate writes it).'
          : 'Measured for the shipped BERT (npm run evaluate); load it to see the numbers.';
      fill(accTable);
      accCaption.textContent = '';
      return;
    }
    const keys = Object.keys(mlm.variants);
    const line = keys.map((k) => `${mlm.variants[k].label} ${pct(mlm.variants[k].top1)} top-1, ${pct(mlm.variants[k].top5)} top-5`).join('; ');
    barChart(accPlot.canvas, {
      groups: keys.map((k) => mlm.variants[k].label.replace(' (as trained)', '\n(as trained)').replace(' swapped in', '\nswapped in')),
      groupsShort: keys.map((k) => ({ sinusoidal: 'sin', rope: 'RoPE', alibi: 'ALiBi' })[k] ?? k),
      series: [
        { label: 'top-1', values: keys.map((k) => mlm.variants[k].top1) },
        { label: 'top-5', values: keys.map((k) => mlm.variants[k].top5) },
      ],
      yRange: [0, 1],
      yTickFormat: (v) => `${Math.round(v * 100)}%`,
      valueFormat: (v) => `${Math.round(v * 100)}%`,
      height: 250,
      hlines: [{ y: mlm.baseline.top1, label: `always '${mlm.baseline.token}'` }],
      summary: `On ${mlm.items} held-out sentences: ${line}; always '${mlm.baseline.token}': ${pct(mlm.baseline.top1)} top-1.`,
    });
    accCaption.textContent = `${mlm.items} held-out WordNet sentences, one word masked in each, through swapformer's fillMask (tools/evaluate.mjs). The same weights: ${line}. Dashed: always the most common answer, '${mlm.baseline.token}' (${pct(mlm.baseline.top1)}).`;
    fill(
      accTable,
      h('thead', {}, h('tr', {}, h('th', {}, 'variant'), h('th', { class: 'num-cell' }, 'top-1'), h('th', { class: 'num-cell' }, 'top-5'))),
      h(
        'tbody',
        {},
        keys.map((k) =>
          h(
            'tr',
            { dataset: { variant: k } },
            h('td', {}, mlm.variants[k].label),
            h('td', { class: 'num-cell' }, pct(mlm.variants[k].top1)),
            h('td', { class: 'num-cell' }, pct(mlm.variants[k].top5)),
          ),
        ),
      ),
    );
  }

  // ---------------------------------------------------------------- wiring

  const rerun = () => app.later('positions-real', TYPING_MS, run);
  for (const el of [textA, textB, maskA, maskB, queryInput, passagesBox]) el.addEventListener('input', rerun);
  swapSel.addEventListener('change', () => app.later('positions-real', 0, changeSwap));
  shippedButton.addEventListener('click', loadShipped);
  hubForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const id = idInput.value.trim();
    hubHint.hidden = !!id;
    if (!id) return idInput.focus();
    // section 6's Hub options (the Hub URL, a mirror or a local stand-in, and the cache choice) hold here too
    load(id, id, app.hubSettings?.() ?? {});
  });
  const loadFiles = async (read) => {
    let src;
    try {
      src = await sourceFromFiles(await read());
    } catch (e) {
      showError(e?.code ? e : panelError('NOT_FOUND', `the dropped files could not be read: ${e?.message ?? e}`));
      return;
    }
    await load(src.source, src.label);
  };
  folderInput.addEventListener('change', () => {
    const map = pickedFiles(folderInput);
    if (map) track(loadFiles(async () => map));
  });
  const isFileDrag = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
  root.addEventListener('dragover', (e) => {
    if (isFileDrag(e)) {
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    }
  });
  root.addEventListener('drop', (e) => {
    if (!isFileDrag(e)) return;
    e.preventDefault();
    track(loadFiles(dropReader(e.dataTransfer)));
  });

  // ---------------------------------------------------------------- for tests and the console
  Object.assign(out, {
    /** Loads a source as the page's controls do (a URL, Hub id, Map of files or bytes). */
    load: (source, label = String(source), options) => load(source, label, options),
    /** Resolves once no load or run is pending. */
    async whenIdle() {
      for (;;) {
        await Promise.all(pending);
        await app.whenIdle();
        if (!pending.size) return;
      }
    },
    /** The panel's numbers: the model, the variants and every result shown. */
    info: () =>
      JSON.parse(
        JSON.stringify({
          state: root.dataset.state,
          model: model && { label: model.label, task: model.p.task, config: model.p.encoder.config, shipped: model.shipped },
          view,
        }),
      ),
  });

  return {
    async update() {
      if (started) return;
      started = true;
      await fetchResults();
      loadShipped(); // outside the queue: the page stays live while the files arrive
    },
  };
}
